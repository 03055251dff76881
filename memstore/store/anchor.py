"""Anchors bind a derived file (snapshot, index) to THIS log: the seq it reflects, where the
line with that seq lies, and the sha256 of that line's bytes.

Another store's snapshot or index with the same seq, or a watermark set back, names a line
whose bytes differ (or whose seq differs), so a reader can tell in O(1) that the cache
disagrees with the log and fold or rebuild from the log instead. Complete log lines are
never edited or moved, so an anchor stays valid for as long as the log exists.

Partitions before the anchor's are never appended to again (appends go to the newest one),
so the anchor also records each one's name, byte size, mtime and sha256 (``log``): a reader
compares the names, sizes and mtimes (one stat each), so a partition truncated, removed,
written over or replaced by another store's is seen without reading it; verify compares the
hashes too. A partition whose mtime alone changed (a copy of the store that did not keep
mtimes) is hashed once and compared with the recorded sha256 (store/statcache.py).
The anchor's own partition is checked by the anchored line itself (its offset and bytes).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from .fs import sha256_file
from .layout import LOG_NAME, Layout
from .log import line_seq, log_files
from .statcache import same_bytes

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


def anchor_for(layout: Layout, seq: int, known=()) -> dict | None:
    """The anchor of the log line holding ``seq`` (searched from the end: anchors are taken at
    or near the head), with the partitions before its own; None when no line has it.
    ``known``: earlier anchors of this store, whose partition hashes are reused where the
    name and size are unchanged (an older partition is hashed once, not on every write)."""
    found = _find(layout, seq)
    if found is not None:
        reuse = {(n, size, mtime): sha for a in known for n, size, mtime, sha in _recorded(a) or ()}
        try:
            found["log"] = [[p.name, st.st_size, st.st_mtime_ns,
                             reuse.get((p.name, st.st_size, st.st_mtime_ns)) or sha256_file(p)]
                            for p, st in _before(layout, found["file"])]
        except OSError:
            return None  # no anchor: the derived file is not trusted by the next read
    return found


def _before(layout: Layout, name: str) -> list[tuple[Path, os.stat_result]]:
    """(path, stat) of the partitions older than ``name``."""
    return [(p, p.stat()) for p in log_files(layout) if p.name < name]


def _recorded(anchor) -> list[tuple[str, int, int, str]] | None:
    """The partitions an anchor records, or None when it records none (an older memstore)."""
    items = anchor.get("log") if isinstance(anchor, dict) else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not (isinstance(item, list) and len(item) == 4 and isinstance(item[0], str)
                and type(item[1]) is int and type(item[2]) is int and isinstance(item[3], str)):
            return None
        out.append(tuple(item))
    return out


def _find(layout: Layout, seq: int) -> dict | None:
    if seq <= 0:
        return None
    for path in reversed(log_files(layout)):
        try:
            for start, line in _lines_backward(path):
                got = line_seq(line)
                if got == seq:
                    return {"seq": seq, "file": path.name, "start": start, "length": len(line),
                            "sha256": hashlib.sha256(line).hexdigest()}
                if got is not None and got < seq:
                    return None  # passed it: the log does not hold this seq
        except OSError:
            return None
    return None


def anchor_holds(layout: Layout, anchor, seq: int) -> bool:
    """Whether ``anchor`` names a line of this log with ``seq`` and the recorded bytes, after
    partitions of the recorded names and sizes."""
    return (seq == 0 and anchor is None) or anchor_problem(layout, anchor, seq) is None


def locate(layout: Layout, anchor, seq: int) -> dict | None:
    """The anchor when this log holds it (``anchor_problem`` finds none), else None."""
    return anchor if seq > 0 and anchor_problem(layout, anchor, seq) is None else None


def anchor_problem(layout: Layout, anchor, seq: int, *, hashes: bool = False,
                   moved: bool = False) -> str | None:
    """Why ``anchor`` is not this log's line at ``seq`` after the same earlier partitions
    (None: it is). Cheap: one read of the line and one stat per partition; ``hashes`` (verify)
    also compares each earlier partition's sha256. A reader does not look for a line that
    moved (bytes before it changed, and the log is the truth: it folds or rebuilds); verify
    may (``moved``), since it checks the contents against the folded log anyway."""
    if seq <= 0 or not isinstance(anchor, dict) or anchor.get("seq") != seq:
        return f"the log line it records for seq {seq} is not this log's"
    where = anchor
    if not _at(layout, anchor, seq):
        found = _find(layout, seq) if moved else None
        if found is None or found["sha256"] != anchor.get("sha256"):
            return f"the log line it records for seq {seq} is not this log's"
        where = found
    recorded = _recorded(anchor)
    if recorded is None:
        return "it records no log partition sizes (written by an older memstore)"
    try:
        have = _before(layout, where["file"])
    except OSError as exc:
        return f"a log partition cannot be read ({exc.strerror})"
    names = [p.name for p, _st in have]
    if names != [item[0] for item in recorded]:
        gone = sorted(set(item[0] for item in recorded) - set(names))
        new = sorted(set(names) - set(item[0] for item in recorded))
        if gone:
            return f"log/{gone[0]} is missing"
        return f"log/{new[0]} was added before seq {seq}" if new else "the log partitions differ"
    for (path, st), (name, want, mtime, sha) in zip(have, recorded, strict=True):
        if st.st_size != want:
            return f"log/{name} holds {st.st_size} bytes, {want} when this was written (truncated or replaced)"
        if st.st_mtime_ns != mtime and not hashes and not same_bytes(layout, path, st, sha, sha256_file):
            return f"log/{name} was written over since this was written (its mtime and sha256 changed)"
        if hashes:
            try:
                same = sha256_file(path) == sha
            except OSError as exc:
                return f"log/{name} cannot be read ({exc.strerror})"
            if not same:
                return f"log/{name} is not the partition it was written from (its sha256 differs)"
    return None


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
            and line_seq(line[:-1]) == seq)

