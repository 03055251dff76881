"""Files whose mtime changed while their bytes did not: a copy of the store that did not
keep mtimes (``cp -r``, ``scp -r``, ``rsync`` without ``-t``, a git checkout, a restore).

A snapshot's anchor and each index manifest record every file they depend on as (size,
mtime, digest), so that a read trusts a file for one stat. A copy with new mtimes failed
that stat for every file: each read folded the whole log instead of opening the snapshot,
and the first catch-up deleted the indexes and embedded every text again. So when only the
mtime differs, the file is hashed and compared with the recorded digest (what verify does
for every file), and the answer is kept in ``STORE/.stat-cache.json`` under the size, mtime
and ctime seen: the next read trusts the file for one stat again.

The cache is a hint a reader checks, never the truth: an entry is used only while the
file's size, mtime and ctime are those it was hashed with (writing a file, or putting its
mtime back with ``touch``/``utime``, changes its ctime), and it only says which digest the
bytes had, which is still compared with the anchor's or manifest's. A damaged, foreign or
hostile cache is read as empty. Writing it is best effort (a read-only store, another
user's store: the file is hashed again next time) and needs no lock: each entry stands on
its own, and two readers writing at once lose at most each other's entries.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from .layout import Layout

FORMAT = "memstore-stat-cache/1"
_MAX_BYTES = 1 << 22  # a cache bigger than this is not one memstore wrote: read as empty
_MAX_ENTRIES = 4096  # a store holds a few hundred files; more are from files since removed
_RACY_NS = 2 * 10**9  # (``_save``)

_lock = threading.Lock()  # (``serve`` checks files from several threads)
# what this process hashed, by (device, inode): (size, mtime_ns, ctime_ns, digest)
_seen: dict[tuple[int, int], tuple[int, int, int, str]] = {}


def same_bytes(layout: Layout, path: Path, st: os.stat_result, recorded: str,
               digest_of: Callable[[Path], str]) -> bool:
    """Whether the file at ``path``, whose stat ``st`` shows the recorded size but another
    mtime, still holds the bytes whose digest was recorded (``digest_of`` computes it).
    From this process's or the store's cache when the file is unchanged since it was last
    hashed, else by hashing it; an unreadable file is not the same."""
    key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    where = (st.st_dev, st.st_ino)  # (not the path: a relative one names another file elsewhere)
    with _lock:
        known = _seen.get(where)
    if known is None or known[:3] != key:
        rel = _relative(layout, path)
        entry = _load(layout).get(rel) if rel is not None else None
        if entry is not None and tuple(entry[:3]) == key:
            known = (*key, entry[3])
        else:
            try:
                known = (*key, digest_of(path))
                after = os.stat(path)
            except OSError:
                return False
            if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) != key:  # written meanwhile
                return False
            if rel is not None and known[3] == recorded:  # (a changed file is not worth a write:
                _save(layout, rel, known)  # the read folds or rebuilds instead)
        with _lock:
            if len(_seen) >= _MAX_ENTRIES:
                _seen.clear()
            _seen[where] = known
    return known[3] == recorded


def _relative(layout: Layout, path: Path) -> str | None:
    try:
        return Path(path).relative_to(layout.root).as_posix()
    except ValueError:
        return None  # (not under the store: only this process's memo holds it)


def _load(layout: Layout) -> dict[str, list]:
    """The store's cache, its entries' shapes checked; {} when missing or not one."""
    import orjson

    from .fs import read_regular

    path = layout.stat_cache_path
    try:
        got = orjson.loads(read_regular(path)) if os.stat(path).st_size <= _MAX_BYTES else None
    except (OSError, orjson.JSONDecodeError):
        return {}
    files = got.get("files") if isinstance(got, dict) and got.get("format") == FORMAT else None
    if not isinstance(files, dict):
        return {}
    return {rel: entry for rel, entry in files.items()
            if isinstance(entry, list) and len(entry) == 4 and all(type(v) is int for v in entry[:3])
            and isinstance(entry[3], str) and len(entry[3]) <= 256 and _inside(rel)}


def _inside(rel: str) -> bool:
    """Whether a name the cache holds is a path under the store (a hostile one may name any)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and "\x00" not in rel and ".." not in parts and "" not in parts


def _save(layout: Layout, rel: str, entry: tuple[int, int, int, str]) -> None:
    """Add one entry, keeping those whose files are still as they were hashed; best effort.
    No entry is kept whose ctime is within ``_RACY_NS`` of the write (the file system's own
    clock, read off the new file): bytes written again in the same tick of a coarse clock
    after they were hashed could leave the ctime as it was (git's "racy" entries). They are
    hashed again by a later read."""
    import orjson

    from .fs import FILE_MODE, temp_path, write_all

    files = {}
    for name, old in _load(layout).items():
        try:
            st = os.stat(layout.root / name)
        except (OSError, ValueError):
            continue
        if [st.st_size, st.st_mtime_ns, st.st_ctime_ns] == old[:3]:
            files[name] = old
    files[rel] = list(entry)
    if len(files) > _MAX_ENTRIES:
        return
    path = layout.stat_cache_path
    tmp = temp_path(path)  # (not write_atomic: the racy test reads the new file's mtime first)
    with _lock:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            try:
                now = os.fstat(fd).st_mtime_ns
                kept = {n: e for n, e in files.items() if e[2] <= now - _RACY_NS}
                write_all(fd, orjson.dumps({"files": kept, "format": FORMAT}, option=orjson.OPT_SORT_KEYS) + b"\n")
            finally:
                os.close(fd)
            os.replace(tmp, path)  # (no fsync: a cache lost in a crash is hashed again)
        except OSError:  # a read-only or another user's store: hashed again next time
            try:
                tmp.unlink()
            except OSError:
                pass
