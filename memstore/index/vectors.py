"""The semantic voice: a USearch cosine index over memory embeddings, keyed by seq.

Search is exact (brute force inside USearch) up to EXACT_LIMIT vectors, so small
stores give the same answers as a cosine oracle; above it, HNSW. Restricted
searches (cue-filtered candidates) score the candidates' vectors directly.
"""

from __future__ import annotations

from pathlib import Path

FORMAT = "memstore-vectors/1"
EXACT_LIMIT = 50_000


class VectorIndex:
    """Opened as a read-only memory map (fast at any size); loaded into memory only to add."""

    def __init__(self, path: Path, dim: int):
        from usearch.index import Index

        self.path = path
        self.dim = dim
        self.index = Index(ndim=dim, metric="cos", dtype="f32")
        self._writable = not path.exists()
        if path.exists():
            self.index.view(str(path))

    def __len__(self) -> int:
        return len(self.index)

    def add(self, seqs: list[int], vectors) -> None:
        import numpy as np

        if not seqs:
            return
        if not self._writable:  # a viewed index is read-only: load it to extend it
            from usearch.index import Index

            self.index = Index(ndim=self.dim, metric="cos", dtype="f32")
            self.index.load(str(self.path))
            self._writable = True
        keys = np.asarray(seqs, dtype=np.uint64)
        present = self.index.contains(keys)
        if present.any():  # idempotent catch-up: never add a key twice
            keys, vectors = keys[~present], vectors[~present]
        if len(keys):
            self.index.add(keys, vectors, threads=1)  # one thread: the same graph every build

    def save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        self.index.save(str(tmp))
        tmp.replace(self.path)  # readers holding a map of the old file keep a consistent view

    def search(self, query, limit: int, restrict: list[int] | None = None) -> list[tuple[int, float]]:
        """[(seq, cosine similarity)] best first; ties broken by seq."""
        import numpy as np

        n = len(self.index)
        if n == 0 or limit <= 0:
            return []
        if restrict is not None:
            keys = np.asarray(sorted(restrict), dtype=np.uint64)
            keys = keys[self.index.contains(keys)] if len(keys) else keys
            if not len(keys):
                return []
            vecs = np.vstack(self.index.get(keys)).astype(np.float32)
            sims = vecs @ query.astype(np.float32)
            pairs = [(int(k), round(float(s), 5)) for k, s in zip(keys, sims, strict=True)]
        else:
            # over-fetch so that ties at the cut are broken by seq, not by the search's internals
            m = self.index.search(query, min(limit + 32, n), exact=n <= EXACT_LIMIT, threads=1)
            pairs = [(int(k), round(1.0 - float(d), 5)) for k, d in zip(m.keys, m.distances, strict=True)]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:limit]
