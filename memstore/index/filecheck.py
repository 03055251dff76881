"""Each index manifest lists the files of its index as they were written: name, byte size,
mtime (ns) and sha256 (for the append-only vector rows and keys, a hash chain over their
blocks, which a catch-up extends instead of reading the whole file again).

A Tantivy segment file or a vector file set back to an older copy or swapped with another
store's is internally valid (its CRC footer passes) yet answers wrongly; the list catches
it. A read compares names, sizes and mtimes (one stat per file: a copy written over a file
changes its mtime; a file whose mtime alone changed, as in a copy of the store that did not
keep mtimes, is hashed once and compared with the list, store/statcache.py); verify also
compares the hashes. Tantivy's own bookkeeping (dotfiles) and the manifest are not listed;
files Tantivy leaves beside the listed ones are not read through meta.json, which is listed.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..store.fs import sha256_file
from ..store.layout import Layout
from ..store.statcache import same_bytes
from .vectors import sidecars

_SEGMENT = re.compile(r"^[0-9a-f]{32}\.")  # Tantivy segment files: written once, never changed


def index_files(layout: Layout, name: str) -> list[Path]:
    """The files of one index that its manifest lists."""
    path = layout.index_path(name)
    if name == "vectors":
        return [p for p in (path, *sidecars(path)) if p.is_file()]
    return sorted(p for p in path.iterdir()
                  if not p.name.startswith(".") and p.name != "manifest.json" and p.is_file())


_BLOCK = 1 << 20
_CHAINED = re.compile(r"^b(\d+):([0-9a-f]{64}|):[0-9a-f]{64}$")


def chained_of(path: Path, previous: str | None = None) -> str:
    """The digest of an append-only file (the vector rows and keys): a hash chain over its
    1 MiB blocks plus the hash of the partial block after them, "b<blocks>:<chain>:<tail>".
    ``previous``, the digest of the same file before an append, lets a catch-up hash only
    the blocks it appended to (reads already checked the file was as recorded)."""
    blocks, chain = 0, ""
    m = _CHAINED.match(previous or "")
    if m:
        blocks, chain = int(m.group(1)), m.group(2)
    with open(path, "rb") as fh:
        fh.seek(blocks * _BLOCK)
        while len(block := fh.read(_BLOCK)) == _BLOCK:
            chain = hashlib.sha256((chain + hashlib.sha256(block).hexdigest()).encode()).hexdigest()
            blocks += 1
    return f"b{blocks}:{chain}:{hashlib.sha256(block).hexdigest()}"


def _digest(path: Path, previous: str | None = None) -> str:
    return chained_of(path, previous) if path.suffix in (".rows", ".keys") else sha256_file(path)


def file_list(layout: Layout, name: str, previous) -> dict[str, list]:
    """{file name: [size, mtime_ns, sha256]} for a manifest; segment files unchanged since the
    previous manifest keep their hash (a catch-up hashes only what it wrote)."""
    old = previous.get("files") if isinstance(previous, dict) else None
    old = old if isinstance(old, dict) else {}
    out = {}
    for p in index_files(layout, name):
        st = p.stat()
        was = old.get(p.name)
        known = isinstance(was, list) and len(was) == 3 and isinstance(was[2], str)
        # an unchanged segment keeps its hash, and so does any big file unchanged since (the
        # USearch file: hashing it again slowed every catch-up); small
        # files that are rewritten in place (meta.json) are cheap to hash again
        unchanged = known and was[:2] == [st.st_size, st.st_mtime_ns]
        if unchanged and (_SEGMENT.match(p.name) or st.st_size > _BLOCK):
            sha = was[2]
        else:  # an append-only file extends its previous digest: a catch-up hashes what it added
            sha = _digest(p, was[2] if known and type(was[0]) is int and was[0] <= st.st_size else None)
        out[p.name] = [st.st_size, st.st_mtime_ns, sha]
    return out


def _listed(layout: Layout, name: str, manifest) -> dict[str, list] | str:
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        return "its manifest lists no files (written by an older memstore)"
    for n, rec in files.items():
        if (not isinstance(n, str) or n != os.path.basename(n) or n in ("", ".", "..")
                or not (isinstance(rec, list) and len(rec) == 3 and type(rec[0]) is int
                        and type(rec[1]) is int and isinstance(rec[2], str))):
            return "its manifest's file list is damaged"
    return files


def _where(layout: Layout, name: str) -> Path:
    path = layout.index_path(name)
    return path.parent if name == "vectors" else path


def files_changed(layout: Layout, name: str, manifest, *, hashes: bool = False) -> str | None:
    """Why the index's files are not those its manifest lists (None: they are). Cheap: one
    stat per listed file; ``hashes`` (verify) also reads and hashes each one."""
    files = _listed(layout, name, manifest)
    if isinstance(files, str):
        return files
    base = _where(layout, name)
    shown = base.relative_to(layout.root).as_posix()
    for n, (size, mtime, sha) in sorted(files.items()):
        try:
            st = os.stat(base / n)
        except OSError:
            return f"{shown}/{n} is missing"
        if st.st_size != size:
            return f"{shown}/{n} holds {st.st_size} bytes, {size} when it was written"
        if st.st_mtime_ns != mtime and not hashes and not same_bytes(layout, base / n, st, sha, _digest):
            return f"{shown}/{n} was written over since the index was built"
        if hashes:
            try:
                same = _digest(base / n) == sha
            except OSError as exc:
                return f"{shown}/{n} cannot be read ({exc.strerror})"
            if not same:
                return f"{shown}/{n} is not the file the index was built with (its sha256 differs)"
    return None
