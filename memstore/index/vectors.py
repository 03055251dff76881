"""The semantic voice: a USearch cosine index over memory embeddings, keyed by seq.

Search is exact (brute force inside USearch) up to EXACT_LIMIT vectors, so small
stores give the same answers as a cosine oracle; above it, HNSW. Beside the
USearch file lie the same vectors as a flat float32 matrix (``.rows``) and their
seqs in ascending order (``.keys``): restricted searches (cue-filtered
candidates) and MMR read rows from that memory map directly, which is ~10x
faster than fetching thousands of vectors one by one from USearch.
"""

from __future__ import annotations

import os
from pathlib import Path

FORMAT = "memstore-vectors/3"  # /3: a long text is embedded from its first 512-token window
EXACT_LIMIT = 50_000
# HNSW build effort: half USearch's default of 128. `python bench/usearch_params.py`
# (50k hashing vectors): 440 vs 725 us per insert for recall@30 0.983 vs 0.986 against exact.
EXPANSION_ADD = 64


def sidecars(path: Path) -> tuple[Path, Path]:
    """The flat matrix and its seqs, named after the USearch file."""
    return path.with_name(path.name + ".rows"), path.with_name(path.name + ".keys")


class VectorIndex:
    """The flat rows are memory-mapped on open; the USearch file is viewed (memory-mapped,
    O(n) to open) only when an HNSW search needs it, and loaded into memory only to add."""

    def __init__(self, path: Path, dim: int):
        self.path = path
        self.dim = dim
        self._index = None  # the USearch index, opened on first use
        self._writable = not path.exists()
        self._pending: list[tuple[object, object]] = []  # (keys, vectors) added, not yet saved
        self._dirty = not path.exists()  # a new index is written even when empty
        self._map_rows()
        if path.exists() and path.stat().st_size < len(self.keys) * dim * 4:
            raise ValueError(f"{path.name} is shorter than the {len(self.keys)} vectors it should hold")

    @property
    def index(self):
        """The USearch index: viewed from its file, or a new one for a new file."""
        if self._index is None:
            from usearch.index import Index

            self._index = Index(ndim=self.dim, metric="cos", dtype="f32", expansion_add=EXPANSION_ADD)
            if self.path.exists():
                self._index.view(str(self.path))
                if len(self._index) != len(self.keys):
                    raise ValueError(f"{sidecars(self.path)[1].name} holds {len(self.keys)} seqs, "
                                     f"{self.path.name} {len(self._index)}")
        return self._index

    def _map_rows(self) -> None:
        """Map the flat matrix and read its seqs (nothing when the index is new)."""
        import numpy as np

        rows_path, keys_path = sidecars(self.path)
        self.keys = np.zeros(0, dtype="<u8")
        self.rows = np.zeros((0, self.dim), dtype="<f4")
        if not self.path.exists():
            return
        try:
            self.keys = np.fromfile(keys_path, dtype="<u8")
            nbytes = rows_path.stat().st_size
        except FileNotFoundError:
            raise ValueError(f"{rows_path.name} or {keys_path.name} is missing") from None
        if nbytes != len(self.keys) * self.dim * 4:
            raise ValueError(f"{rows_path.name} holds {nbytes} bytes for {len(self.keys)} vectors")
        if len(self.keys):
            self.rows = np.memmap(rows_path, dtype="<f4", mode="r", shape=(len(self.keys), self.dim))

    def __len__(self) -> int:
        return len(self.keys) + sum(len(k) for k, _v in self._pending)

    def max_seq(self) -> int:
        """The newest seq held (0 when empty)."""
        last = [int(k[-1]) for k, _v in self._pending[-1:]] or [int(self.keys[-1]) if len(self.keys) else 0]
        return last[0]

    def check_rows(self, rows) -> None:
        """Stored vectors are unit length (or zero, for a text with no features): anything else,
        or a value that is not finite, is damage (ValueError), never a ranking."""
        import numpy as np

        if not len(rows):
            return
        with np.errstate(all="ignore"):
            rows = np.asarray(rows, dtype=np.float64)
            norms = np.einsum("ij,ij->i", rows, rows)
        ok = np.isfinite(norms) & ((norms == 0) | (np.abs(norms - 1.0) < 2e-3))
        if not ok.all():
            raise ValueError(f"{sidecars(self.path)[0].name} holds vectors that are not unit length "
                             "(damaged)")

    def add(self, seqs: list[int], vectors) -> None:
        import numpy as np

        if not seqs:
            return
        if not self._writable:  # a viewed index is read-only: load it to extend it
            from usearch.index import Index

            self._index = Index(ndim=self.dim, metric="cos", dtype="f32", expansion_add=EXPANSION_ADD)
            self._index.load(str(self.path))
            if len(self._index) != len(self.keys):
                raise ValueError(f"{self.path.name} holds {len(self._index)} vectors, "
                                 f"{sidecars(self.path)[1].name} {len(self.keys)}")
            self._writable = True
        keys = np.asarray(seqs, dtype=np.uint64)
        present = self.index.contains(keys)
        if present.any():  # idempotent catch-up: never add a key twice
            keys, vectors = keys[~present], vectors[~present]
        if not len(keys):
            return
        last = self._pending[-1][0][-1] if self._pending else (self.keys[-1] if len(self.keys) else 0)
        if keys[0] <= last or np.any(keys[1:] <= keys[:-1]):
            raise ValueError("vectors must be added in ascending seq order")
        self.index.add(keys, vectors, threads=1)  # one thread: the same graph every build
        self._dirty = True
        self._pending.append((keys, np.ascontiguousarray(vectors, dtype="<f4")))

    def save(self) -> None:
        """Append the new rows and keys, then replace the USearch file.

        A crash in between leaves counts that disagree with the manifest (or a torn
        row, which the next open reports as a ValueError), so the indexes are rebuilt
        from the log.
        """
        if not self._dirty:  # nothing added: the files on disk are current (and may be large)
            return
        from ..store.fs import FILE_MODE, write_all

        rows_path, keys_path = sidecars(self.path)
        for target, part in ((rows_path, 1), (keys_path, 0)):
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
            try:
                for item in self._pending:
                    write_all(fd, item[part])
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

        have, rows = self.keys, self.rows
        if self._pending:  # added but not saved yet: searchable all the same (a copy, rarely needed)
            have = np.concatenate([have, *(k for k, _v in self._pending)])
            rows = np.concatenate([np.asarray(rows), *(v for _k, v in self._pending)])
        keys = np.sort(np.asarray(list(seqs), dtype=np.uint64))
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys  # np.unique
        # would import numpy.ma, 11 ms of every CLI recall
        at = np.searchsorted(have, keys)
        ok = at < len(have)
        ok[ok] = have[at[ok]] == keys[ok]
        found = np.asarray(rows[at[ok]], dtype=np.float32)
        self.check_rows(found)
        return keys[ok], found

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
            sims = np.round((rows @ query.astype(np.float32)).astype(np.float64), 5)
            top = np.lexsort((keys, -sims))[:limit]  # best similarity, then lowest seq
            return [(int(keys[i]), float(sims[i])) for i in top]
        # over-fetch so that ties at the cut are broken by seq, not by the search's internals
        count = min(limit + 32, n)
        if n <= EXACT_LIMIT and not self._pending:
            # USearch's exact search over the mapped rows: the same distances as the index's
            # exact search, without opening the USearch file
            from usearch.index import search as exact_search

            m = exact_search(self.rows, query, count, "cos", exact=True, threads=1)
            self.check_rows(self.rows[m.keys])  # damaged rows would rank: refuse them
            found = self.keys[m.keys]
        else:
            m = self.index.search(query, count, exact=n <= EXACT_LIMIT, threads=1)
            found = m.keys
            self._lookup(found)  # checks the rows of the hits
        if not np.isfinite(np.asarray(m.distances, dtype=np.float64)).all():
            raise ValueError(f"{self.path.name} gives distances that are not finite (damaged)")
        pairs = [(int(k), round(1.0 - float(d), 5)) for k, d in zip(found, m.distances, strict=True)]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:limit]
