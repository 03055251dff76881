"""The semantic voice: a USearch cosine index over memory embeddings, keyed by seq.

Search is exact (brute force inside USearch) up to EXACT_LIMIT vectors, so small
stores give the same answers as a cosine oracle; above it, HNSW. Restricted
searches (cue-filtered candidates) and MMR read vectors as rows of a flat matrix,
memory-mapped, which is ~10x faster than fetching thousands of vectors one by one from
USearch. That matrix is the USearch file's own: USearch writes the vectors first, in the
order they were added (ascending seq, one thread), as one block after two uint32s (rows,
bytes a row). Beside the file lie the seqs in that order (``.keys``). (Up to format /3 a
copy of the matrix lay beside it too, ``.rows``: the index on disk held every vector twice.)

The vectors are stored in half precision (IEEE binary16, rounded by numpy to nearest even,
so the same bits whatever the machine): half the file, the memory of a build and the pages
a search maps. Scores move by about 1e-3; the relevance set keeps its recall@5 (measured in
docs/perf.md); the embedding cache, which consolidate's near-duplicate cosines read, stays
float32.
"""

from __future__ import annotations

import os
from pathlib import Path

FORMAT = "memstore-vectors/5"  # /3: a long text is embedded from its first 512-token window;
# /4: the rows are read from the USearch file (no .rows copy); /5: half-precision rows
DTYPE, ROW = "f16", "<f2"  # USearch's scalar kind, and numpy's for the rows it writes
EXACT_LIMIT = 50_000
# HNSW build effort: half USearch's default of 128: far cheaper inserts for almost the
# same recall against exact (`python bench/usearch_params.py`).
EXPANSION_ADD = 64


def sidecars(path: Path) -> tuple[Path]:
    """The seqs of the rows, named after the USearch file."""
    return (path.with_name(path.name + ".keys"),)


def stale(path: Path) -> tuple[Path]:
    """Files an older format kept beside the USearch file (removed with the index)."""
    return (path.with_name(path.name + ".rows"),)


_HEAD = 8  # two uint32 before the vectors: their count and the bytes of each
_PREAD_FROM = 256  # rows gathered with pread rather than through the mapping (``_gather``)


class VectorIndex:
    """The rows are memory-mapped on open; the USearch index is viewed (memory-mapped, O(n)
    to open) only when an HNSW search needs it, and loaded into memory only to add."""

    def __init__(self, path: Path, dim: int):
        self.path = path
        self.dim = dim
        self._index = None  # the USearch index, opened on first use
        self._mapped = None  # the mapping the index is viewed through (``_view``)
        self._writable = not path.exists()
        self._pending: list = []  # keys added, not yet saved (their vectors: in the index)
        self._dirty = not path.exists()  # a new index is written even when empty
        self._map_rows()

    @property
    def index(self):
        """The USearch index: viewed from its file, or a new one for a new file."""
        if self._index is None:
            from usearch.index import Index

            viewed = self.path.exists()
            # a viewed index only searches (``add`` loads one to extend it): without its key
            # lookup table, which viewing builds by reading every node's key (a cost to
            # each recall's start)
            self._index = Index(ndim=self.dim, metric="cos", dtype=DTYPE, expansion_add=EXPANSION_ADD,
                                enable_key_lookups=not viewed)
            if viewed:
                self._view()
                if len(self._index) != len(self.keys):
                    raise ValueError(f"{sidecars(self.path)[0].name} holds {len(self.keys)} seqs, "
                                     f"{self.path.name} {len(self._index)}")
        return self._index

    def _view(self) -> None:
        """View the USearch file through a mapping of our own, then hand back the pages viewing
        read: USearch reads every node's header to find the nodes (much of the file
        resident in this process before the first search), and a search needs only the few
        nodes it visits, which it maps again from the page cache. The pages stay cached; this
        process's resident set is what it uses. (Not after each search too: a long-lived
        process's next search reuses them, and faulting them in again made in-process recall
        about twice as slow.)"""
        import mmap

        with open(self.path, "rb") as fh:
            self._mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._index.view(self._mapped)
        if hasattr(self._mapped, "madvise") and hasattr(mmap, "MADV_DONTNEED"):  # (Linux; else kept)
            self._mapped.madvise(mmap.MADV_DONTNEED)

    def _map_rows(self) -> None:
        """Map the USearch file's matrix and read its seqs (nothing when the index is new)."""
        import numpy as np

        (keys_path,) = sidecars(self.path)
        self.keys = np.zeros(0, dtype="<u8")
        self.rows = np.zeros((0, self.dim), dtype=ROW)
        self._identity = None  # (device, inode, size, mtime) of the file mapped (``_gather``)
        if not self.path.exists():
            return
        try:
            self.keys = np.fromfile(keys_path, dtype="<u8")
        except FileNotFoundError:
            raise ValueError(f"{keys_path.name} is missing") from None
        n, width = len(self.keys), self.dim * np.dtype(ROW).itemsize
        with open(self.path, "rb") as fh:
            head = fh.read(_HEAD)
            st = os.fstat(fh.fileno())
            size = st.st_size
            self._identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            if size >= _HEAD + n * width + 7:
                fh.seek(_HEAD + n * width)
                magic = fh.read(7)
            else:
                magic = b""
        if size < _HEAD + n * width:
            raise ValueError(f"{self.path.name} is shorter than the {n} vectors it should hold")
        if len(head) < _HEAD or tuple(np.frombuffer(head, dtype="<u4")) != (n, width) or magic != b"usearch":
            raise ValueError(f"{self.path.name} does not begin with the {n} vectors of "
                             f"{keys_path.name} (damaged, or not written by this memstore)")
        if n:
            self.rows = np.memmap(self.path, dtype=ROW, mode="r", offset=_HEAD, shape=(n, self.dim))

    def __len__(self) -> int:
        return len(self.keys) + sum(len(k) for k in self._pending)

    def max_seq(self) -> int:
        """The newest seq held (0 when empty)."""
        last = [int(k[-1]) for k in self._pending[-1:]] or [int(self.keys[-1]) if len(self.keys) else 0]
        return last[0]

    def check_rows(self, rows) -> None:
        """Stored vectors are unit length (or zero, for a text with no features): anything else,
        or a value that is not finite, is damage (ValueError), never a ranking."""
        import numpy as np

        if not len(rows):
            return
        for start in range(0, len(rows), 4096):  # (float64 copies of a block, not of 20,000 rows)
            with np.errstate(all="ignore"):
                block = np.asarray(rows[start:start + 4096], dtype=np.float64)
                norms = np.einsum("ij,ij->i", block, block)
            ok = np.isfinite(norms) & ((norms == 0) | (np.abs(norms - 1.0) < 2e-3))
            if not ok.all():
                raise ValueError(f"{self.path.name} holds vectors that are not unit length (damaged)")

    def add(self, seqs: list[int], vectors) -> None:
        import numpy as np

        if not seqs:
            return
        if not self._writable:  # a viewed index is read-only: load it to extend it
            from usearch.index import Index

            self._index = Index(ndim=self.dim, metric="cos", dtype=DTYPE, expansion_add=EXPANSION_ADD)
            self._index.load(str(self.path))
            self._mapped = None  # (the view's mapping: the loaded index is its own copy)
            if len(self._index) != len(self.keys):
                raise ValueError(f"{self.path.name} holds {len(self._index)} vectors, "
                                 f"{sidecars(self.path)[0].name} {len(self.keys)}")
            self._writable = True
        keys = np.asarray(seqs, dtype=np.uint64)
        present = self.index.contains(keys)
        if present.any():  # idempotent catch-up: never add a key twice
            keys, vectors = keys[~present], vectors[~present]
        if not len(keys):
            return
        last = self._pending[-1][-1] if self._pending else (self.keys[-1] if len(self.keys) else 0)
        if keys[0] <= last or np.any(keys[1:] <= keys[:-1]):
            raise ValueError("vectors must be added in ascending seq order")
        # one thread: the same graph every build, and slots in the order added (the rows' order)
        self.index.add(keys, _half(vectors), threads=1)
        self._dirty = True
        self._pending.append(keys)

    def save(self) -> None:
        """Append the new keys, then replace the USearch file.

        A crash in between leaves counts that disagree with the manifest (and with the
        USearch file's), so the indexes are rebuilt from the log.
        """
        if not self._dirty:  # nothing added: the files on disk are current (and may be large)
            return
        from ..store.fs import FILE_MODE, write_all

        (keys_path,) = sidecars(self.path)
        fd = os.open(keys_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            for keys in self._pending:
                write_all(fd, keys)
        finally:
            os.close(fd)
        self._pending = []
        tmp = self.path.with_name(self.path.name + ".tmp")
        self.index.save(str(tmp))
        tmp.replace(self.path)  # readers holding a map of the old file keep a consistent view
        self._map_rows()
        self._dirty = False

    def _lookup(self, seqs):
        """(seqs that have a vector, ascending; their rows as a float32 matrix)."""
        import numpy as np

        keys = np.sort(np.asarray(list(seqs), dtype=np.uint64))
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys  # np.unique
        # would import numpy.ma, a cost to every CLI recall
        at = np.searchsorted(self.keys, keys)
        ok = at < len(self.keys)
        ok[ok] = self.keys[at[ok]] == keys[ok]
        found = self._gather(at[ok])
        if self._pending:  # added but not saved yet: searchable all the same (from the index, rarely)
            new = np.concatenate(self._pending)
            mine = np.isin(keys, new) & ~ok
            if mine.any():
                more = np.asarray(self.index.get(keys[mine]), dtype=np.float32).reshape(-1, self.dim)
                both = np.concatenate([keys[ok], keys[mine]])
                order = np.argsort(both, kind="stable")
                found = np.concatenate([found, more])[order]
                keys, ok = both[order], np.ones(len(both), dtype=bool)
        self.check_rows(found)
        return keys[ok], found

    def stored(self, keys):
        """The vectors USearch holds for ``keys`` (seqs), looked up by key in a view of the file
        that builds the key table a search needs not (``index``): what verify compares with
        the rows."""
        import numpy as np
        from usearch.index import Index

        if not self._writable:
            index = Index(ndim=self.dim, metric="cos", dtype=DTYPE, expansion_add=EXPANSION_ADD)
            index.view(str(self.path))
        else:
            index = self.index
        return np.asarray(index.get(np.asarray(keys, dtype=np.uint64)), dtype=np.float32).reshape(len(keys), -1)

    def _gather(self, at):
        """The rows at positions ``at`` (ascending) as float32. Many are read with pread: rows
        read through the mapping bring the 64 KB of the file around each into this process
        (the kernel's fault-around, which no madvise turns off), and a restricted search's
        scattered rows mapped much of it. Through the mapping when few, or when
        the file was replaced since it was mapped (the positions are the mapped file's)."""
        import numpy as np

        if len(at) < _PREAD_FROM:
            return np.asarray(self.rows[at], dtype=np.float32)
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return np.asarray(self.rows[at], dtype=np.float32)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != self._identity:
                return np.asarray(self.rows[at], dtype=np.float32)
            width = self.dim * np.dtype(ROW).itemsize
            out = np.empty((len(at), self.dim), dtype=ROW)
            into = memoryview(out).cast("B")
            starts = np.flatnonzero(np.diff(at, prepend=-2) != 1).tolist() + [len(at)]  # runs of rows
            for a, b in zip(starts, starts[1:], strict=False):
                want = (b - a) * width
                if os.preadv(fd, [into[a * width:b * width]], _HEAD + int(at[a]) * width) != want:
                    raise ValueError(f"{self.path.name} is shorter than the rows it should hold")
        finally:
            os.close(fd)
        return out.astype(np.float32)

    def vectors(self, seqs) -> dict[int, object]:
        """{seq: vector} for the seqs that have one (copies read from the flat matrix)."""
        keys, rows = self._lookup(seqs)
        return {int(k): v for k, v in zip(keys, rows, strict=True)}

    def search(self, query, limit: int, restrict: list[int] | None = None) -> list[tuple[int, float]]:
        """[(seq, cosine similarity)] best first; ties broken by seq."""
        import numpy as np

        n = len(self)
        if n == 0 or limit <= 0:
            return []
        if restrict is not None:
            keys, rows = self._lookup(restrict)
            if not len(keys):
                return []
            # the query rounded as the other searches round it: a record scores the same either
            # way; BLAS's rough cosines choose the candidates, exact ones rank them (memstore.cosine)
            rough = rows @ _half(query).astype(np.float32)
            near = np.lexsort((keys, -rough))[: limit + 32]
            return _ranked(keys[near], rows[near], query, limit)
        # over-fetch so that ties at the cut are broken by seq, not by the search's internals
        count = min(limit + 32, n)
        if n <= EXACT_LIMIT and not self._pending:
            # USearch's exact search over the mapped rows: the same distances as the index's
            # exact search, without opening the USearch file
            from usearch.index import search as exact_search

            m = exact_search(self.rows, _half(query), count, "cos", exact=True, threads=1)
            rows = np.asarray(self.rows[m.keys], dtype=np.float32)
            self.check_rows(rows)  # damaged rows would rank: refuse them
            found = self.keys[m.keys]
        else:
            m = self.index.search(_half(query), count, exact=n <= EXACT_LIMIT, threads=1)
            found, rows = self._lookup(m.keys)  # checks the rows of the hits
        if not np.isfinite(np.asarray(m.distances, dtype=np.float64)).all():
            raise ValueError(f"{self.path.name} gives distances that are not finite (damaged)")
        # USearch's kernel (chosen by processor) picks the hits; their order and cosines are
        # computed exactly, the same on every machine
        return _ranked(np.asarray(found, dtype=np.uint64), rows, query, limit)


def _ranked(keys, rows, query, limit: int) -> list[tuple[int, float]]:
    """[(seq, cosine rounded to 5 decimals)] of these rows, best first, ties by seq."""
    import numpy as np

    from ..cosine import half_cosines

    sims = np.round(half_cosines(rows, _half(query)), 5)
    top = np.lexsort((keys, -sims))[:limit]
    return [(int(keys[i]), float(sims[i])) for i in top]


def _half(vectors):
    """float32 (or any) vectors as the index's half-precision rows, rounded by numpy (IEEE
    round to nearest even: the same bits on every machine, not USearch's own conversion)."""
    import numpy as np

    return np.ascontiguousarray(np.asarray(vectors, dtype=np.float32).astype(ROW))
