"""The records index's aggregate columns as one flat file, ``index/columns.bin``: what
``stats`` and ``brief`` read for every record, without asking Tantivy for a million values
through Python (0.73 s and ~250 MB at a million records; this file: one read and a hash).

A derived file like the indexes, and believed only after the same checks: its format, the
sha256 of its rows, and the anchor of the log line at its watermark (another store's file,
or one of a log since truncated or replaced, is not used). It may lag the records index:
the records the log changed after its watermark are read as records and scored in Python,
as the index's own tail is. It is rewritten after a catch-up that leaves it more than
``REWRITE`` events behind, only for stores of ``MIN_ROWS`` records or more. Deleting it
changes no answer.

Layout: one line of canonical JSON (format, watermark, anchor, rows, fields, sha256 of the
rest), then each field's column in turn, the rows in seq order, 8 little-endian bytes a
value (a reader's arrays are views of the bytes it read: no copy).
"""

from __future__ import annotations

import hashlib
from itertools import islice
from pathlib import Path

from ..codec import JSONDecodeError, dumps, loads
from ..store.anchor import anchor_for, anchor_problem
from ..store.fs import read_regular, write_atomic
from ..store.layout import Layout
from ..store.log import LogReader
from .records import AXIS_FIELDS

FORMAT = "memstore-columns/1"
FIELDS = (("seq", "<i8"), *((a, "<f8") for a in AXIS_FIELDS), ("confidence", "<f8"), ("recalls", "<i8"),
          ("used", "<i8"), ("recorded", "<i8"), ("codes", "<i8"))
MIN_ROWS = 10_000  # below it Tantivy gives the columns in a few milliseconds
REWRITE = 2_000  # events a catch-up may leave after the file's watermark before it is rewritten
MAX_TAIL = 20_000  # events after the watermark a read folds; beyond it, the index's columns


def path_of(layout: Layout) -> Path:
    return layout.index_dir / "columns.bin"


def _header(data: bytes) -> tuple[dict, memoryview] | None:
    end = data.find(b"\n")
    if end < 0:
        return None
    try:
        head = loads(data[:end])
    except JSONDecodeError:
        return None
    return (head, memoryview(data)[end + 1:]) if isinstance(head, dict) else None


def watermark(layout: Layout) -> int | None:
    """The watermark of a usable file (its header and anchor only; None: none)."""
    try:
        with open(path_of(layout), "rb") as fh:
            line = fh.readline(1 << 20)
        head = loads(line)
    except (OSError, JSONDecodeError, ValueError):
        return None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        return None
    mark = head.get("watermark")
    if type(mark) is not int or anchor_problem(layout, head.get("anchor"), mark):
        return None
    return mark


def write(layout: Layout, index, mark: int, known_anchors=()) -> bool:
    """Write the file from the records index at watermark ``mark`` (False: the log has no
    line to anchor it to)."""
    import numpy as np

    anchor = anchor_for(layout, mark, known_anchors)
    if anchor is None:
        return False
    cols = index.columns()
    n = len(cols.get("seq", ()))
    order = np.argsort(cols["seq"], kind="stable") if n else None
    body = b"".join(np.ascontiguousarray(cols[name][order], dtype=kind).tobytes() for name, kind in FIELDS) if n else b""
    head = {"format": FORMAT, "watermark": mark, "anchor": anchor, "rows": n,
            "fields": [list(f) for f in FIELDS], "sha256": hashlib.sha256(body).hexdigest()}
    write_atomic(path_of(layout), dumps(head) + b"\n" + body)
    return True


def refresh(layout: Layout, index, mark: int, known_anchors=()) -> None:
    """After a catch-up to ``mark``: rewrite the file when it is missing or lags by more than
    ``REWRITE`` events, for a store of ``MIN_ROWS`` records or more."""
    if index.count() < MIN_ROWS:
        return
    old = watermark(layout)
    if old is None or not old <= mark or mark - old > REWRITE:
        write(layout, index, mark, known_anchors)


def remove(layout: Layout) -> None:
    path_of(layout).unlink(missing_ok=True)


def problem(layout: Layout, index_mark: int) -> str | None:
    """Why the file cannot be believed at the records index's watermark (None: it can, or
    there is none); for verify."""
    found = _checked(layout, index_mark)
    return found if isinstance(found, str) else None


def _checked(layout: Layout, index_mark: int) -> tuple[dict, memoryview] | str | None:
    try:
        data = read_regular(path_of(layout))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc})"
    found = _header(data)
    if found is None:
        return "has no header"
    head, body = found
    mark, n = head.get("watermark"), head.get("rows")
    if head.get("format") != FORMAT or head.get("fields") != [list(f) for f in FIELDS]:
        return f"is of format {head.get('format')!r}, not {FORMAT!r}"
    if type(mark) is not int or not 0 < mark <= index_mark:
        return f"watermark {mark!r} is not a log seq at or before the records index's ({index_mark})"
    if type(n) is not int or len(body) != n * 8 * len(FIELDS) or hashlib.sha256(body).hexdigest() != head.get("sha256"):
        return "rows do not match their length or sha256 (damaged)"
    if (why := anchor_problem(layout, head.get("anchor"), mark)) is not None:
        return f"is not of this log ({why})"
    return head, body


def read(layout: Layout, index_mark: int) -> tuple[dict, list[dict]] | None:
    """(every column as a numpy array in seq order, the events after the file's watermark up
    to ``index_mark``), or None when there is no usable file: missing, damaged, of another
    format or log, ahead of the records index, or more than ``MAX_TAIL`` events behind it."""
    import numpy as np

    found = _checked(layout, index_mark)
    if not isinstance(found, tuple):
        return None
    head, body = found
    mark, n = head["watermark"], head["rows"]
    between = []
    if mark < index_mark:
        anchor = head["anchor"]
        events = LogReader(layout).events(after_seq=mark, start=(anchor["file"], anchor["start"] + anchor["length"] + 1))
        between = [e for e in islice(events, MAX_TAIL + 1) if e["seq"] <= index_mark]
        if len(between) > MAX_TAIL or not between or between[0]["seq"] != mark + 1:
            return None
    return {name: np.frombuffer(body, dtype=kind, count=n, offset=i * n * 8)
            for i, (name, kind) in enumerate(FIELDS)}, between
