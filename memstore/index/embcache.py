"""Embedding cache keyed by (embedder, text hash): append-only, shared by stores.

One file per embedder, a sequence of fixed-size records (16-byte text hash +
dim float32). A torn final record (a crash mid-append) is ignored. Replays and
reindexing look texts up here first, so no text is embedded twice.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import StoreError
from ..store.fs import FILE_MODE, ensure_dir, write_all

_LOADED: dict[Path, _Found] = {}  # path -> what this process has read of it: one read per process


# Texts longer than this may hold more than the model's 512-token window, which embeddings
# since memstore 0.2 read alone (embed.head); entries an older memstore wrote for them
# embedded the whole text, so they get keys of their own and are embedded again, once.
# (A token spans at least one character: shorter texts always fit and keep their keys.)
_WHOLE = 500


def text_hash(text: str) -> bytes:
    key = text if len(text) <= _WHOLE else "head512\x1f" + text
    return hashlib.sha256(key.encode()).digest()[:16]


class EmbeddingCache:
    """Texts' vectors by hash. What a process holds is the file's hashes, sorted, and where
    each lies (24 bytes an entry); vectors are read from the file for the
    texts asked for, so a build's memory does not grow with the cache (it held every vector)."""

    def __init__(self, directory: Path | None, embedder_name: str, dim: int):
        self.path = directory / f"{embedder_name}.bin" if directory else None
        self.dim = dim
        self._mem: dict[bytes, object] = {}  # no directory: the cache lives in memory

    def _rec(self):
        import numpy as np

        return np.dtype([("h", "S16"), ("v", "<f4", (self.dim,))])

    def _where(self, hashes: list[bytes]):
        """For each hash, the record holding its vector (-1: none); the file is read once per
        process, then only what was appended since, block by block. Only the hashes are taken
        in: a vector is checked when it is read (``embed``), not every vector of the cache at
        every start (most of opening a large cache was checking vectors never asked for)."""
        import numpy as np

        found = _Found.of(self.path)
        try:
            size = self.path.stat().st_size
        except OSError:  # none yet, or no directory to hold one: nothing cached
            size = 0
        if size < found.read:  # deleted or replaced since: read it afresh
            found = _LOADED[self.path] = _Found()
        rec = self._rec()
        if found.read == 0 and size:
            _Sidecar(self.path).load(found, rec.itemsize, size)
        if size > found.read:
            first, parts = found.read // rec.itemsize, []
            with open(self.path, "rb") as fh:
                fh.seek(found.read)
                while len(raw := fh.read(min(size - found.read, _BLOCK * rec.itemsize))) >= rec.itemsize:
                    arr = np.frombuffer(raw[: len(raw) - len(raw) % rec.itemsize], dtype=rec)
                    found.read += arr.nbytes
                    parts.append(arr["h"].copy())  # (the block's vectors are let go)
                    if len(raw) < _BLOCK * rec.itemsize:
                        break
            if parts:  # merged in once: a merge per block copied the whole index each time
                new = np.concatenate(parts)
                found.add(new, first + np.arange(len(new), dtype=np.int64))
                if len(new) >= _SIDECAR_AFTER:
                    _Sidecar(self.path).save(found, rec.itemsize)
        return found.rows(hashes)

    def _vectors(self, rows):
        """The vectors of these records, read through a map that is dropped at once (pages
        left mapped would count in the process's memory), 2,048 records a map: the kernel
        maps the cached pages around each one touched (64 KB), so a few thousand records
        scattered over a large cache put most of the file in the process's memory."""
        import numpy as np

        out = np.empty((len(rows), self.dim), dtype=np.float32)
        # read in file order, whatever the order asked: the rows of a map lie together and
        # each page is touched once
        order = np.argsort(rows, kind="stable")
        rows, rec = rows[order], self._rec()
        for i in range(0, len(rows), _MAPPED):
            part = rows[i:i + _MAPPED]
            first = int(part[0])
            mm = np.memmap(self.path, dtype=rec, mode="r", offset=first * rec.itemsize,
                           shape=(int(part[-1]) - first + 1,))
            try:
                out[order[i:i + _MAPPED]] = mm["v"][part - first]
            finally:
                del mm
        return out

    def _cached(self, texts: list[str], role: str):
        """(the vectors of ``texts`` the cache holds, zeros for the others; each one's record,
        -1 where none or a damaged one; their hashes)."""
        import numpy as np

        hashes = [text_hash(f"{role}\0{t}") for t in texts]
        if self.path is None:
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            where = np.array([0 if h in self._mem else -1 for h in hashes], dtype=np.int64)
            for i in np.flatnonzero(where >= 0):
                out[i] = self._mem[hashes[i]]
        else:
            where = self._where(hashes)
            have = np.flatnonzero(where >= 0)
            if len(have) == len(texts):  # (every one cached, a night's groups: read straight into
                out = self._vectors(where)  # the answer, not into a copy of it)
                bad = np.flatnonzero(~_unit(out))
            else:
                out = np.zeros((len(texts), self.dim), dtype=np.float32)
                if len(have):
                    out[have] = self._vectors(where[have])
                bad = have[~_unit(out[have])]
            out[bad] = 0  # a damaged entry: its text is embedded again and appended, and the
            where[bad] = -1  # later entry of a hash is the one read
        return out, where, hashes

    def cached(self, texts: list[str], role: str = "passage"):
        """(the vectors of ``texts`` the cache holds as the rows of one matrix, in order, zeros
        for the others; a boolean array: which it holds). Nothing is embedded or appended."""
        out, where, _hashes = self._cached(texts, role)
        return out, where >= 0

    def embed(self, embedder, texts: list[str], role: str = "passage", batch: int = 64, progress=None):
        """Vectors for texts: cached ones read back, the rest embedded in batches of ``batch``
        (each batch whole, in order: on worker processes when ``embedder`` has
        ``embed_batches``, see workers.py) and appended."""
        import numpy as np

        out, where, hashes = self._cached(texts, role)
        first: dict[bytes, int] = {}  # a text asked for twice is embedded once
        for i in np.flatnonzero(where < 0):
            first.setdefault(hashes[i], int(i))
        todo = list(first.values())
        chunks = [todo[s : s + batch] for s in range(0, len(todo), batch)]
        many = getattr(embedder, "embed_batches", None)
        texts_of = [[texts[i] for i in chunk] for chunk in chunks]
        vecs_of = many(texts_of, role) if many else (embedder.embed(c, role) for c in texts_of)
        unwritable = False
        for chunk, vecs in zip(chunks, vecs_of, strict=True):
            if not unwritable:
                try:
                    self._append([hashes[i] for i in chunk], vecs)
                except (OSError, StoreError):  # a full disk, an unwritable cache: the vectors
                    unwritable = True  # are still returned, and embedded again next time
            out[chunk] = vecs
            if progress:
                progress(len(chunk))
        for i in np.flatnonzero(where < 0):
            out[i] = out[first[hashes[i]]]
        return out

    def _append(self, hashes: list[bytes], vecs) -> None:
        if self.path is None:
            for h, v in zip(hashes, vecs, strict=True):
                self._mem[h] = v
            return
        import numpy as np

        ensure_dir(self.path.parent)
        rec = self._rec()
        arr = np.zeros(len(hashes), dtype=rec)
        arr["h"] = hashes
        arr["v"] = vecs
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size % rec.itemsize:  # a torn record from a crash: cut it before appending
                os.ftruncate(fd, size - size % rec.itemsize)
            write_all(fd, arr)
        finally:
            os.close(fd)


_BLOCK = 16_384  # records read at a time
_MAPPED = 2_048  # records read through one map


def _unit(vecs):
    """Which stored vectors are sound: finite and unit length (or zero, for a text with no
    features); damaged bytes are neither."""
    import numpy as np

    with np.errstate(all="ignore"):
        # in float32 first (a float64 copy of every vector was a large part of a night); a
        # sum of float32 squares is within ~1e-5 of the float64 one unless it overflows or
        # underflows, so the rows near a bound, zero or not finite are summed again in float64
        norms = np.einsum("ij,ij->i", vecs, vecs, dtype=np.float32).astype(np.float64)
        doubt = np.flatnonzero(~np.isfinite(norms) | (norms < 1e-30) | (np.abs(np.abs(norms - 1.0) - 2e-3) < 1e-4))
        for i in range(0, len(doubt), _BLOCK):  # (a float64 copy of a block at a time)
            v = vecs[doubt[i:i + _BLOCK]].astype(np.float64)
            norms[doubt[i:i + _BLOCK]] = np.einsum("ij,ij->i", v, v)
    return np.isfinite(norms) & ((norms == 0) | (np.abs(norms - 1.0) < 2e-3))


class _Found:
    """One cache file's sorted hashes and their record numbers, kept per process (and
    per file: stores share it): entries read later are merged in after their equals (a
    stable merge of two sorted runs is linear), so of a hash's entries the last in the file
    is found: the one appended after a damaged one was embedded again."""

    def __init__(self):
        import numpy as np

        self.read = 0  # bytes of the file taken in (whole records)
        self.hashes = np.zeros(0, dtype="S16")
        self.at = np.zeros(0, dtype=np.int64)

    @staticmethod
    def of(path: Path) -> _Found:
        return _LOADED.setdefault(path, _Found())

    def add(self, hashes, rows) -> None:
        import numpy as np

        if not len(hashes):
            return
        order = np.argsort(hashes, kind="stable")
        # inserted after their equals already held (a stable merge): a few appended
        # entries cost one copy of the arrays, not a sort of all of them
        at = np.searchsorted(self.hashes, hashes[order], side="right")
        self.hashes = np.insert(self.hashes, at, hashes[order])
        self.at = np.insert(self.at, at, rows[order])

    def rows(self, hashes: list[bytes]):
        import numpy as np

        if not hashes or not len(self.hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        want = np.array(hashes, dtype="S16")
        pos = np.maximum(np.searchsorted(self.hashes, want, side="right") - 1, 0)
        return np.where(self.hashes[pos] == want, self.at[pos], -1)


_SIDECAR_AFTER = 65_536  # entries read from the file that make a process write the sidecar


class _Sidecar:
    """``NAME.hashes`` beside a cache file ``NAME.bin``: what ``_Found`` holds of its first N
    entries (their hashes, sorted, and the entry each is at), so that a process reads 24
    bytes an entry instead of the file's every entry (1,040 bytes each at 256 dimensions: a
    gigabyte at a million, read by every night's `consolidate` and `index`). A cache of a
    cache: checked as it is read (its own sha256, the entry size, the file at least as long
    as it says, and 64 of its entries spread over the file read back from the file itself)
    and passed over when anything disagrees (the file is then read as before); written
    whole (atomically) by a process that read ``_SIDECAR_AFTER`` entries or more from the
    file, never required. The file is append-only: an entry the sidecar names stays where
    it was, and one whose bytes were damaged since is caught when its vector is read
    (``embed``), as before."""

    MAGIC = b"MSHASH1\n"
    HEAD = 8 + 8 + 8 + 32  # magic, entries, entry size, sha256 of the rest
    CHECKS = 64

    def __init__(self, path: Path):
        self.path = path.with_name(path.stem + ".hashes")
        self.data = path

    def load(self, found: _Found, itemsize: int, size: int) -> None:
        import numpy as np

        from ..store.fs import read_regular

        try:
            raw = read_regular(self.path)
        except OSError:  # none, unreadable, or not a regular file
            return
        if len(raw) < self.HEAD or raw[:8] != self.MAGIC:
            return
        n, width = int.from_bytes(raw[8:16], "little"), int.from_bytes(raw[16:24], "little")
        body = memoryview(raw)[self.HEAD:]
        if (width != itemsize or len(body) != 24 * n or n * itemsize > size
                or hashlib.sha256(body).digest() != raw[24:56]):
            return
        hashes = np.frombuffer(body, dtype="S16", count=n)
        rows = np.frombuffer(body, dtype="<i8", count=n, offset=16 * n)
        if n and (not (0 <= rows.min() and rows.max() < n) or not self._agrees(body, rows, itemsize)):
            return
        found.hashes, found.at, found.read = hashes, rows.astype(np.int64), n * itemsize

    def _agrees(self, body, rows, itemsize: int) -> bool:
        """Whether the file holds, at the entries of 64 places spread over the sorted hashes,
        the hashes the sidecar gives them (their bytes compared as stored)."""
        n = len(rows)
        try:
            with open(self.data, "rb") as fh:
                for k in sorted({(j * (n - 1)) // (self.CHECKS - 1) for j in range(self.CHECKS)}):
                    fh.seek(int(rows[k]) * itemsize)
                    if fh.read(16) != bytes(body[16 * k:16 * k + 16]):
                        return False
        except OSError:
            return False
        return True

    def save(self, found: _Found, itemsize: int) -> None:
        import numpy as np

        from ..store.fs import write_atomic

        n = found.read // itemsize
        if len(found.hashes) != n:
            return
        body = np.ascontiguousarray(found.hashes, dtype="S16").tobytes() + found.at.astype("<i8").tobytes()
        head = self.MAGIC + n.to_bytes(8, "little") + itemsize.to_bytes(8, "little") + hashlib.sha256(body).digest()
        try:
            write_atomic(self.path, head + body)
        except (OSError, StoreError):  # an unwritable cache: the file is read whole next time too
            pass


class CachedEmbedder:
    """An embedder that looks texts up in an EmbeddingCache first (same protocol)."""

    def __init__(self, embedder, cache: EmbeddingCache):
        self.inner = embedder
        self.cache = cache
        self.name = embedder.name
        self.dim = embedder.dim

    def embed(self, texts: list[str], role: str = "passage"):
        return self.cache.embed(self.inner, texts, role)

    def cached(self, texts: list[str], role: str = "passage"):
        """``EmbeddingCache.cached``: what the cache holds of ``texts``, nothing embedded."""
        return self.cache.cached(texts, role)
