"""Existence checks for the write path without loading state (no pyarrow, no fold).

The log is scanned as bytes: canonical JSON makes ``"id":"<id>"`` an exact token. A hit
counts only when its line is a well-formed event that creates the record (or, for a key,
that carries it): a damaged line readers skip must not make a write a "reinforce" of a
record no reader has, or the write would be acknowledged and then be nowhere.
"""

from __future__ import annotations

import mmap
import re

from ..codec import dumps
from ..schema import CREATING
from .layout import Layout
from .log import line_seq, log_files, well_formed

_ID = re.compile(rb'"id":"(m[0-9a-f]{15})"')


def _mapped(path):
    with open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            return None
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _line_at(buf, pos: int) -> bytes:
    start = buf.rfind(b"\n", 0, pos) + 1
    end = buf.find(b"\n", pos)
    return buf[start:end] if end >= 0 else b""  # no newline after it: a torn tail, not an event


def _creates(line: bytes, mid: str) -> bool:
    event = well_formed(line)
    return (event is not None and event["op"] in CREATING and event["memory"]["id"] == mid)


def _keyed(line: bytes, key: str) -> str | None:
    """The id a well-formed event binds ``key`` to, or None."""
    event = well_formed(line)
    if event is None:
        return None
    memory = event.get("memory")
    if event.get("key") == key:
        return event.get("id") or (memory or {}).get("id")
    if isinstance(memory, dict) and memory.get("key") == key:
        return memory["id"]
    return None


def _find(buf, token: bytes, accept) -> object:
    """The first accepted value among the lines holding ``token`` (None: none), searched a
    window at a time (``_windows``)."""
    for at, end in _windows(buf):
        for pos in _hits(buf, token, at, end):
            value = accept(_line_at(buf, pos))
            if value:
                return value
    return None


def _windows(buf):
    """(start, end) of each _WINDOW bytes of ``buf`` in order, the pages of each handed back
    once the caller asks for the next (a remember searched its log
    with every page left mapped: the whole log in its RSS)."""
    size, at, kept = len(buf), 0, 0
    while at < size:
        end = min(size, at + _WINDOW)
        yield at, end
        kept = _release(buf, kept, end)
        at = end


def _hits(buf, token: bytes, at: int, end: int):
    """Where ``token`` starts in ``buf[at:end]``, in order (one that runs past ``end`` too)."""
    reach = min(len(buf), end + len(token) - 1)
    pos = buf.find(token, at, reach)
    while pos >= 0:
        yield pos
        pos = buf.find(token, pos + 1, reach)


class Known:
    """Which ids and keys the log already holds. ``candidates``: ids seen as tokens, each
    with where it was first seen, confirmed (by parsing that line) only when asked."""

    def __init__(self, ids: set[str], keys: dict[str, str], candidates: dict | None = None,
                 layout: Layout | None = None):
        self.ids = ids
        self.keys = keys
        self._candidates = candidates or {}
        self._layout = layout

    def has_id(self, mid: str) -> bool:
        if mid in self.ids:
            return True
        where = self._candidates.pop(mid, None)
        if where is None:
            return False
        path, start, end = where
        with open(path, "rb") as fh:
            fh.seek(start)
            line = fh.read(end - start)
        if _creates(line, mid) or known_for(self._layout, [mid], []).has_id(mid):  # rare: damage
            self.ids.add(mid)
            return True
        return False

    def key_id(self, key: str) -> str | None:
        return self.keys.get(key)


def known_for(layout: Layout, ids: list[str], keys: list[str]) -> Known:
    """Which of these ids and keys the log holds: for a few (a single write), a substring
    search per token; for more (a bulk write), one pass (``_known_many``)."""
    if len(ids) + len(keys) > _FEW:
        return _known_many(layout, ids, keys)
    found_ids: set[str] = set()
    found_keys: dict[str, str] = {}
    id_tokens = {mid: b'"id":"' + mid.encode() + b'"' for mid in ids}
    key_tokens = {k: b'"key":' + dumps(k) for k in keys}
    for path in log_files(layout):
        buf = _mapped(path)
        if buf is None:
            continue
        with buf:
            for mid, token in id_tokens.items():
                if mid not in found_ids and _find(buf, token, lambda line, m=mid: _creates(line, m)):
                    found_ids.add(mid)
            for key, token in key_tokens.items():
                if key not in found_keys:
                    mid = _find(buf, token, lambda line, k=key: _keyed(line, k))
                    if mid:
                        found_keys[key] = mid
    return Known(found_ids, found_keys)


_FEW = 4  # ids and keys looked up token by token; more, in one pass over the log
_ID_SPAN = 23  # bytes of an id token: "id":"m + 15 hex digits + "
_KEY = b'"key":"'


def _known_many(layout: Layout, ids: list[str], keys: list[str]) -> Known:
    """The ids and keys of a bulk write that the log holds: one pass over each partition, a
    window at a time, its pages handed back once read, keeping only what the write names
    (every id and key of the log were kept, the log read whole). An
    id is a candidate where its token is first seen, confirmed when asked (``Known``); a
    key is read from the first well-formed event that binds it."""
    wanted_ids, wanted_keys = set(ids), set(keys)
    candidates: dict[str, tuple] = {}
    found_keys: dict[str, str] = {}
    for path in log_files(layout):
        buf = _mapped(path)
        if buf is None:
            continue
        with buf:
            for at, end in _windows(buf):
                for m in _ID.finditer(buf, at, min(len(buf), end + _ID_SPAN - 1)) if wanted_ids else ():
                    if m.start() >= end:
                        break  # (the next window's)
                    mid = m.group(1).decode()
                    if mid in wanted_ids and mid not in candidates:
                        start = buf.rfind(b"\n", 0, m.start()) + 1
                        stop = buf.find(b"\n", m.end())
                        candidates[mid] = (path, start, stop if stop >= 0 else start)
                parsed = -1  # (the start of the last line parsed: a line holding two keys is parsed once)
                for pos in _hits(buf, _KEY, at, end) if wanted_keys else ():
                    start = buf.rfind(b"\n", 0, pos) + 1
                    if start != parsed:
                        parsed = start
                        key, mid = _binding(_line_at(buf, pos))
                        if key in wanted_keys and mid:
                            found_keys.setdefault(key, mid)
    return Known(set(), found_keys, candidates, layout)


def _binding(line: bytes) -> tuple[str | None, str | None]:
    """(the key, the id) a well-formed event binds, or Nones."""
    event = well_formed(line)
    if event is None:
        return None, None
    key = event.get("key") if "key" in event else (event.get("memory") or {}).get("key")
    return key, event.get("id") or (event.get("memory") or {}).get("id")


_BLOCK = 1 << 22


def lines_with(layout: Layout, pattern: bytes) -> list[bytes]:
    """Every complete log line matching the regular expression ``pattern``, in log order,
    read in blocks (memory stays at a block whatever the log's size; for
    a literal, re's search beats bytes.find here)."""
    import re

    find = re.compile(pattern).search
    found: list[bytes] = []
    for path in log_files(layout):
        with open(path, "rb") as fh:
            rest = b""
            while block := fh.read(_BLOCK):
                buf = rest + block
                end = buf.rfind(b"\n") + 1  # whole lines only; the rest joins the next block
                rest = buf[end:]
                pos = 0
                while (m := find(buf, pos, end)) is not None:
                    start = buf.rfind(b"\n", 0, m.start()) + 1
                    stop = buf.find(b"\n", m.end())
                    found.append(buf[start:stop])
                    pos = stop + 1
    return found


def log_size(layout: Layout) -> int:
    """The partitions' total size in bytes (one stat each; one gone meanwhile counts 0)."""
    total = 0
    for path in log_files(layout):
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


def scanned_events(layout: Layout, pattern: bytes, keep) -> list[dict] | None:
    """The well-formed events on the log lines matching ``pattern`` that ``keep(event)``
    accepts, in log order, without reading the log into events. None
    when their seqs do not rise (a duplicated or edited line): then only the forward read's
    rules (``log.in_order``) say what the log holds."""
    events, last = [], 0
    for line in lines_with(layout, pattern):
        event = well_formed(line)
        if event is None or not keep(event):
            continue
        if event["seq"] <= last:
            return None
        events.append(event)
        last = event["seq"]
    return events


def _start(buf, pos: int) -> int:
    """Where the first line starting at or after ``pos`` starts (len(buf): none)."""
    if pos == 0 or buf[pos - 1] == 0x0A:
        return pos
    j = buf.find(b"\n", pos)
    return j + 1 if j >= 0 else len(buf)


def _bisect(buf, target: int, lo: int = 0) -> tuple[bytes, int] | None:
    """The line of ``buf`` with seq ``target`` and the offset after it, found by bisecting on
    the lines' seqs (they rise through the log) from ``lo`` (every line starting before it
    holds a smaller seq); None when it is not where the order says, or a line probed is not
    an event. The upper bound is found by galloping from ``lo`` first: a listing's next seq
    is usually a few lines on."""
    hi, step = len(buf), _GALLOP
    while lo + step < hi:  # (a line starting at or after lo + step with a seq not smaller: hi)
        s = _start(buf, lo + step)
        e = buf.find(b"\n", s)
        if s >= hi or e < 0:
            break
        seq = _probe(buf, s, e)
        if seq is None:
            return None
        if seq >= target:
            hi = s
            break
        lo, step = e + 1, 2 * step
    while lo < hi:  # lines starting before lo hold smaller seqs; those from hi on, not smaller
        s = _start(buf, (lo + hi) // 2)
        if s >= hi:
            s = _start(buf, lo)
            if s >= hi:
                break
        e = buf.find(b"\n", s)
        if e < 0:  # a torn final fragment: not a line
            hi = s
            continue
        seq = _probe(buf, s, e)
        if seq is None:
            return None
        if seq < target:
            lo = e + 1
        else:
            hi = s
    e = buf.find(b"\n", hi)
    if hi >= len(buf) or e < 0:
        return None
    line = buf[hi:e]
    return (line, e + 1) if line_seq(line) == target else None


_SEQ = re.compile(rb'"seq":(0|[1-9][0-9]{0,18})[,}]')


def _probe(buf, s: int, e: int) -> int | None:
    """The seq of the line ``buf[s:e]`` for steering a search, read without parsing the line
    when those bytes are in it once (every event holds its own ``"seq":``; a second one, in
    a nested object, sends the line to ``line_seq``). Only the line a search ends on must be
    the event, and that one is parsed (and its reader checks it), so a probe of a damaged
    line only steers the search."""
    at = buf.find(b'"seq":', s, e)
    if at >= 0 and buf.find(b'"seq":', at + 6, e) < 0:
        found = _SEQ.match(buf, at, min(e, at + 26))
        if found is not None:
            return int(found[1])
    return line_seq(buf[s:e])


_GALLOP = 4096  # bytes: the first step past the last line found (a few lines)
_RELEASE = 32 << 20  # bytes of a partition behind the searches kept mapped at most
_WINDOW = 64 << 20  # bytes of a partition searched before its pages are handed back (``_windows``)


def _release(buf, start: int, end: int) -> int:
    """Hand back the mapped pages of ``buf`` from ``start`` (a page boundary) to the page that
    holds ``end``; returns where the pages still mapped begin. (Where madvise is missing, kept.)"""
    import mmap

    stop = end - end % mmap.PAGESIZE
    if stop > start and hasattr(buf, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        buf.madvise(mmap.MADV_DONTNEED, start, stop - start)
        return stop
    return start


def lines_at(layout: Layout, seqs: list[int]) -> list[bytes] | None:
    """The log lines holding these seqs, in the order given: each found by bisecting its
    partition (a few reads, whatever the log's size), in seq order, each search starting
    after the line the last one found. None when one is not found where the order of seqs
    says (a damaged or edited line): the caller scans instead."""
    files = []
    try:
        for path in log_files(layout):
            buf = _mapped(path)
            if buf is None:
                continue
            end = buf.find(b"\n")
            first = line_seq(buf[:end]) if end >= 0 else None
            if first is None:
                buf.close()
                return None
            files.append((first, buf))
        found: dict[int, bytes] = {}
        after: dict[int, int] = {}  # partition -> where the last line found in it ends
        kept: dict[int, int] = {}  # partition -> the pages from which on this process still maps
        for q in sorted(set(seqs)):  # (in seq order: each search starts after the last found)
            inside = [i for i, (first, _buf) in enumerate(files) if first <= q]
            got = _bisect(files[inside[-1]][1], q, after.get(inside[-1], 0)) if inside else None
            if got is None:
                return None
            i = inside[-1]
            found[q], after[i] = got
            if after[i] - kept.get(i, 0) > _RELEASE:  # the pages behind every later search: handed
                kept[i] = _release(files[i][1], kept.get(i, 0), after[i])  # back (fault-around
                # maps 64 KB around each line read: a listing's lines across a large log, all of it)
        return [found[q] for q in seqs]
    finally:
        for _first, buf in files:
            buf.close()
