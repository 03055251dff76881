"""The log read from its end: the newest events first, costing what they return.

``memstore log --limit 10`` on a million-event log folded nothing and still read all of
it. This reader walks the partitions newest first in blocks from their end. It is
exact only for a regular log: every line a well-formed event and the seqs falling by one
from the head. Anything else (a damaged, torn-in-the-middle, edited or reordered line)
raises ``Irregular``, and the caller reads the whole log forwards, whose rules
(``log.in_order``) decide what such a log says.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import StoreError
from .layout import Layout
from .log import log_files, read_head, well_formed

BLOCK = 1 << 20


class Irregular(Exception):
    """The log is not regular where it was read backwards: read it forwards instead."""


def _lines_backwards(path: Path, skip_fragment: bool) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) of the complete lines of one partition, last first. A fragment
    after the final newline is a torn write (newest partition) or damage (an older one:
    ``Irregular``)."""
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        rest = b""
        tail = True  # until the final newline is found, what is read is the fragment after it
        while pos > 0:
            step = min(BLOCK, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + rest
            parts = buf.split(b"\n")
            end = pos + len(buf)  # where the last part ends (a newline follows it)
            if tail:
                if len(parts) == 1 and pos > 0:
                    rest = buf  # no newline yet: a fragment longer than a block
                    continue
                tail = False
                fragment = parts.pop()
                if fragment and not skip_fragment:
                    raise Irregular(f"{path.name} ends without a newline")
                end -= len(fragment) + 1
                if not parts:  # no newline at all: the whole file is the fragment
                    rest = b""
                    break
            rest = parts[0]  # may continue in the block before
            for part in reversed(parts[1:]):
                end -= len(part)
                yield end, part
                end -= 1
        if rest:
            yield 0, rest


def newest_first(layout: Layout, *, stop_month: str | None = None, where: list | None = None) -> Iterator[dict]:
    """Events from the head backwards. ``stop_month`` (YYYY-MM): partitions named before it
    are not read (no event recorded at or after that month is in them: a partition holds
    events appended while it was the newest, and appends never go to an older one).
    ``where``: set to [partition, byte offset, length] of each event's line as it is yielded."""
    head = read_head(layout)
    if head.damaged:
        raise Irregular(head.damaged)
    expect = head.seq
    files = log_files(layout)
    for index in range(len(files) - 1, -1, -1):
        path = files[index]
        if stop_month is not None and path.stem < stop_month:
            return
        for offset, line in _lines_backwards(path, skip_fragment=index == len(files) - 1):
            event = well_formed(line)
            if event is None or event["seq"] != expect:
                raise Irregular(f"a line of {path.name} is not the event seq {expect}")
            expect -= 1
            if where is not None:
                where[:] = [path, offset, len(line)]
            yield event
    if expect != 0:
        raise Irregular(f"the log starts at seq {expect + 1}, not 1")


class Changed(StoreError):
    """The log's lines between two seqs are no longer those ``newest_first`` read."""


def oldest_first(layout: Layout, start: tuple, first: int, last: int) -> Iterator[dict]:
    """The events ``first`` to ``last`` again, oldest first, from ``start`` (the partition and
    byte offset of ``first``'s line, as ``newest_first``'s ``where`` gave it): a window that
    read found regular, read forwards one block at a time (its events are not held).
    The lines are checked as that read checked them; one that
    is no longer the event its seq should be (the log changed in between) raises
    ``Changed``, and events appended since are not read."""
    expect = first
    begin, offset = start[0].name, start[1]
    for path in [p for p in log_files(layout) if p.name >= begin]:
        with open(path, "rb") as fh:
            if path.name == begin:
                fh.seek(offset)
            rest = b""
            while block := fh.read(BLOCK):
                lines = (rest + block).split(b"\n")
                rest = lines.pop()  # (a line continued in the next block, or a torn tail)
                for line in lines:
                    event = well_formed(line)
                    if event is None or event["seq"] != expect:
                        raise Changed(f"log line seq {expect} in {path.name} changed while it was read; "
                                      "run the command again")
                    yield event
                    if expect == last:
                        return
                    expect += 1
    raise Changed(f"the log ended before seq {expect} while it was read; run the command again")
