"""Embedding cache keyed by (embedder, text hash): append-only, shared by stores.

One file per embedder, a sequence of fixed-size records (16-byte text hash +
dim float32). A torn final record (a crash mid-append) is ignored. Replays and
reindexing look texts up here first, so no text is embedded twice.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..store.fs import FILE_MODE, ensure_dir, write_all

_LOADED: dict[Path, tuple[int, dict]] = {}  # path -> (bytes read, entries): one read per process


# Texts longer than this may hold more than the model's 512-token window, which embeddings
# since memstore 0.2 read alone (embed.head); entries an older memstore wrote for them
# embedded the whole text, so they get keys of their own and are embedded again, once.
# (A token spans at least one character: shorter texts always fit and keep their keys.)
_WHOLE = 500


def text_hash(text: str) -> bytes:
    key = text if len(text) <= _WHOLE else "head512\x1f" + text
    return hashlib.sha256(key.encode()).digest()[:16]


class EmbeddingCache:
    def __init__(self, directory: Path | None, embedder_name: str, dim: int):
        self.path = directory / f"{embedder_name}.bin" if directory else None
        self.dim = dim
        self._map: dict[bytes, object] | None = None

    def _load(self) -> dict:
        """The cache's entries; the file is read once per process and then only its new tail."""
        import numpy as np

        if self._map is not None and self.path is None:
            return self._map
        if self.path is None:
            self._map = {}
            return self._map
        offset, entries = _LOADED.get(self.path, (0, {}))
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        rec = np.dtype([("h", "S16"), ("v", "<f4", (self.dim,))])
        if size > offset:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                raw = fh.read(size - offset)
            usable = len(raw) - len(raw) % rec.itemsize
            arr = np.frombuffer(raw[:usable], dtype=rec)
            with np.errstate(all="ignore"):  # damaged bytes: not finite or not unit length
                norms = np.einsum("ij,ij->i", arr["v"].astype(np.float64), arr["v"].astype(np.float64))
            sound = np.isfinite(norms) & ((norms == 0) | (np.abs(norms - 1.0) < 2e-3))
            for h, v, ok in zip(arr["h"], arr["v"], sound, strict=True):
                if ok:  # a damaged entry is left out: its text is embedded again
                    entries[bytes(h).ljust(16, b"\0")] = v
            offset += usable
        _LOADED[self.path] = (offset, entries)
        self._map = entries
        return entries

    def embed(self, embedder, texts: list[str], role: str = "passage", batch: int = 64, progress=None):
        """Vectors for texts (cached ones looked up, the rest embedded in batches and appended)."""
        import numpy as np

        cache = self._load()
        hashes = [text_hash(f"{role}\0{t}") for t in texts]
        missing = list(dict.fromkeys(i for i, h in enumerate(hashes) if h not in cache))
        todo = list({hashes[i]: i for i in missing}.values())
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vecs = embedder.embed([texts[i] for i in chunk], role)
            self._append([hashes[i] for i in chunk], vecs)
            for i, v in zip(chunk, vecs, strict=True):
                cache[hashes[i]] = v
            if progress:
                progress(len(chunk))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, h in enumerate(hashes):
            out[row] = cache[h]
        return out

    def _append(self, hashes: list[bytes], vecs) -> None:
        if self.path is None:
            return
        import numpy as np

        ensure_dir(self.path.parent)
        rec = np.dtype([("h", "S16"), ("v", "<f4", (self.dim,))])
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


class CachedEmbedder:
    """An embedder that looks texts up in an EmbeddingCache first (same protocol)."""

    def __init__(self, embedder, cache: EmbeddingCache):
        self.inner = embedder
        self.cache = cache
        self.name = embedder.name
        self.dim = embedder.dim

    def embed(self, texts: list[str], role: str = "passage"):
        return self.cache.embed(self.inner, texts, role)
