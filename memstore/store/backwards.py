"""The log read from its end: the newest events first, costing what they return.

``memstore log --limit 10`` on a million-event log folded nothing and still read all of
it (46 s). This reader walks the partitions newest first in blocks from their end. It is
exact only for a regular log: every line a well-formed event and the seqs falling by one
from the head. Anything else (a damaged, torn-in-the-middle, edited or reordered line)
raises ``Irregular``, and the caller reads the whole log forwards, whose rules
(``log.in_order``) decide what such a log says.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .layout import Layout
from .log import log_files, read_head, well_formed

BLOCK = 1 << 20


class Irregular(Exception):
    """The log is not regular where it was read backwards: read it forwards instead."""


def _lines_backwards(path: Path, skip_fragment: bool) -> Iterator[bytes]:
    """Complete lines of one partition, last first. A fragment after the final newline is
    a torn write (newest partition) or damage (an older one: ``Irregular``)."""
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        rest = b""
        first = True
        while pos > 0:
            step = min(BLOCK, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + rest
            parts = buf.split(b"\n")
            rest = parts[0]  # may continue in the block before
            if first:
                first = False
                fragment = parts.pop()
                if fragment and not skip_fragment:
                    raise Irregular(f"{path.name} ends without a newline")
            yield from reversed(parts[1:])
        if rest:
            yield rest


def newest_first(layout: Layout, *, stop_month: str | None = None) -> Iterator[dict]:
    """Events from the head backwards. ``stop_month`` (YYYY-MM): partitions named before it
    are not read (no event recorded at or after that month is in them: a partition holds
    events appended while it was the newest, and appends never go to an older one)."""
    head = read_head(layout)
    if head.damaged:
        raise Irregular(head.damaged)
    expect = head.seq
    files = log_files(layout)
    for index in range(len(files) - 1, -1, -1):
        path = files[index]
        if stop_month is not None and path.stem < stop_month:
            return
        for line in _lines_backwards(path, skip_fragment=index == len(files) - 1):
            event = well_formed(line)
            if event is None or event["seq"] != expect:
                raise Irregular(f"a line of {path.name} is not the event seq {expect}")
            expect -= 1
            yield event
    if expect != 0:
        raise Irregular(f"the log starts at seq {expect + 1}, not 1")
