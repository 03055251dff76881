"""Anchors bind a derived file (snapshot, index) to THIS log: the seq it reflects, where the
line with that seq lies, and the sha256 of that line's bytes.

Another store's snapshot or index with the same seq, or a watermark set back, names a line
whose bytes differ (or whose seq differs), so a reader can tell in O(1) that the cache
disagrees with the log and fold or rebuild from the log instead. Complete log lines are
never edited or moved, so an anchor stays valid for as long as the log exists.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..codec import JSONDecodeError, loads
from .layout import LOG_NAME, Layout
from .log import log_files

_CHUNK = 1 << 16


def _lines_backward(path: Path) -> Iterator[tuple[int, bytes]]:
    """(start offset, line without newline) of the complete lines of a file, last first."""
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        buf = b""  # the file's bytes from pos up to the end of what is not yet yielded
        end = None  # where the current line ends (its newline) within buf
        while True:
            if end is None:
                end = buf.rfind(b"\n")  # everything after the final newline is a torn fragment
                if end < 0:
                    end = None
            if end is not None:
                start = buf.rfind(b"\n", 0, end) + 1
                if start > 0 or pos == 0:
                    yield pos + start, buf[start:end]
                    if start == 0:
                        return
                    buf, end = buf[:start], start - 1
                    continue
            if pos == 0:
                return
            step = min(_CHUNK, pos)
            pos -= step
            fh.seek(pos)
            chunk = fh.read(step)
            buf = chunk + buf
            if end is not None:
                end += len(chunk)


def anchor_for(layout: Layout, seq: int) -> dict | None:
    """The anchor of the log line holding ``seq`` (searched from the end: anchors are taken at
    or near the head); None when no line has it."""
    if seq <= 0:
        return None
    for path in reversed(log_files(layout)):
        try:
            for start, line in _lines_backward(path):
                got = _seq(line)
                if got == seq:
                    return {"seq": seq, "file": path.name, "start": start, "length": len(line),
                            "sha256": hashlib.sha256(line).hexdigest()}
                if got is not None and got < seq:
                    return None  # passed it: the log does not hold this seq
        except OSError:
            return None
    return None


def anchor_holds(layout: Layout, anchor, seq: int) -> bool:
    """Whether ``anchor`` names a line of this log with ``seq`` and the recorded bytes."""
    return locate(layout, anchor, seq) is not None or (seq == 0 and anchor is None)


def locate(layout: Layout, anchor, seq: int) -> dict | None:
    """The anchor as this log holds it: where recorded (O(1)), else the line with ``seq``
    found again with the same bytes (a line inserted or removed before it moved it);
    None when the log has no such line."""
    if seq <= 0 or not isinstance(anchor, dict) or anchor.get("seq") != seq:
        return None
    if _at(layout, anchor, seq):
        return anchor
    found = anchor_for(layout, seq)
    return found if found and found["sha256"] == anchor.get("sha256") else None


def _at(layout: Layout, anchor: dict, seq: int) -> bool:
    name, start, length = anchor.get("file"), anchor.get("start"), anchor.get("length")
    if (not isinstance(name, str) or not LOG_NAME.match(name) or type(start) is not int
            or type(length) is not int or start < 0 or length < 0):
        return False
    try:
        with open(layout.log_dir / name, "rb") as fh:
            if start:
                fh.seek(start - 1)
                if fh.read(1) != b"\n":
                    return False
            line = fh.read(length + 1)
    except OSError:
        return False
    return (line[-1:] == b"\n" and hashlib.sha256(line[:-1]).hexdigest() == anchor.get("sha256")
            and _seq(line[:-1]) == seq)


def _seq(line: bytes) -> int | None:
    try:
        event = loads(line)
    except JSONDecodeError:
        return None
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if type(seq) is int else None
