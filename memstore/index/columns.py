"""The records index's aggregate columns as one flat file, ``index/columns.bin``: what
``stats`` and ``brief`` read for every record, without asking Tantivy for a million values
through Python (this file: one read and a hash).

A derived file like the indexes, and believed only after the same checks: its format, the
sha256 of its rows, and the anchor of the log line at its watermark (another store's file,
or one of a log since truncated or replaced, is not used). It may lag the records index:
the records the log changed after its watermark are read as records and scored in Python,
as the index's own tail is. It is rewritten after a catch-up that leaves it more than
``REWRITE`` events behind, only for stores of ``MIN_ROWS`` records or more. Deleting it
changes no answer.

Layout: one line of canonical JSON (format, watermark, anchor, rows, fields, sha256 of the
rest), then each field's column in turn, the rows in seq order, little-endian. A float
column with at most 65,535 distinct values (salience axes and confidence take a few dozen)
is its sorted distinct values (8 bytes each) then one 2-byte index a row: a million rows take
~60 MB, not 112, and every value reads back as the same number. ``fields`` gives each column's
name, type and table length (0: 8 bytes a row).
"""

from __future__ import annotations

import hashlib
from itertools import islice
from pathlib import Path

from ..codec import JSONDecodeError, dumps, loads
from ..store.anchor import anchor_for, anchor_problem
from ..store.fs import read_headed, write_atomic
from ..store.layout import Layout
from ..store.log import LogReader
from .records import AXIS_FIELDS

FORMAT = "memstore-columns/2"  # /2: a float column as a table of its distinct values and indexes
FIELDS = (("seq", "<i8"), *((a, "<f8") for a in AXIS_FIELDS), ("confidence", "<f8"), ("recalls", "<i8"),
          ("used", "<i8"), ("recorded", "<i8"), ("codes", "<i8"))
MIN_ROWS = 10_000  # below it Tantivy gives the columns quickly
# events a catch-up may leave after the file's watermark before it is rewritten: a read folds
# them: each slows every read a little, and a rewrite costs several reads
REWRITE = 500
MAX_TAIL = 20_000  # events after the watermark a read folds; beyond it, the index's columns


def path_of(layout: Layout) -> Path:
    return layout.index_dir / "columns.bin"


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
    parts, fields = [], []
    for name, kind in FIELDS:
        column = np.ascontiguousarray(cols[name][order], dtype=kind) if n else np.zeros(0, dtype=kind)
        if kind == "<f8":
            values, at = np.unique(column, return_inverse=True)
            if len(values) <= 0xFFFF:
                parts += [values.astype("<f8").tobytes(), at.astype("<u2").tobytes()]
                fields.append([name, kind, len(values)])
                continue
        parts.append(column.tobytes())
        fields.append([name, kind, 0])
    body = b"".join(parts)
    head = {"format": FORMAT, "watermark": mark, "anchor": anchor, "rows": n,
            "fields": fields, "sha256": hashlib.sha256(body).hexdigest()}
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
    found = read_headed(path_of(layout))
    if not isinstance(found, tuple):
        return found
    head, body = found
    mark, n, fields = head.get("watermark"), head.get("rows"), head.get("fields")
    if head.get("format") != FORMAT or not _fields_ok(fields):
        return f"is of format {head.get('format')!r}, not {FORMAT!r}"
    if type(mark) is not int or not 0 < mark <= index_mark:
        return f"watermark {mark!r} is not a log seq at or before the records index's ({index_mark})"
    size = sum(8 * t + 2 * n if t else 8 * n for _name, _kind, t in fields) if type(n) is int and n >= 0 else -1
    if len(body) != size or hashlib.sha256(body).hexdigest() != head.get("sha256"):
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
    cols, at = {}, 0
    for name, kind, table in head["fields"]:
        if table:  # distinct values, then an index a row
            values = np.frombuffer(body, dtype="<f8", count=table, offset=at)
            index = np.frombuffer(body, dtype="<u2", count=n, offset=at + 8 * table)
            if n and int(index.max()) >= table:
                return None  # (a hash that matches damage: an index past the table)
            cols[name] = values[index]
            at += 8 * table + 2 * n
        else:
            cols[name] = np.frombuffer(body, dtype=kind, count=n, offset=at)
            at += 8 * n
    return cols, between


def _fields_ok(fields) -> bool:
    """The header's fields are FIELDS in order, each with a table length (an int, 0 to 65,535;
    only a float column may have one)."""
    return (isinstance(fields, list) and len(fields) == len(FIELDS)
            and all(isinstance(f, list) and len(f) == 3 and [f[0], f[1]] == [name, kind]
                    and type(f[2]) is int and 0 <= f[2] <= 0xFFFF and (kind == "<f8" or f[2] == 0)
                    for f, (name, kind) in zip(fields, FIELDS, strict=False)))
