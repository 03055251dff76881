"""HNSW build effort against search quality, on the recall bench's synthetic texts.

    python bench/usearch_params.py [--n 50000]

Embeds N synthetic memories with the hashing embedder and builds a USearch index
at several expansion_add settings (one thread, as memstore builds). For each it
prints the insert cost per vector and recall@30 of the HNSW search against exact
cosine for 200 questions (the bench's 8 and 192 memory texts). memstore uses
expansion_add 64 (memstore/index/vectors.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50_000)
    args = ap.parse_args()
    import numpy as np
    from usearch.index import Index

    sys.path.insert(0, str(Path(__file__).parent))
    from recall import QUERIES, synth

    from memstore.embed import HashingEmbedder

    emb = HashingEmbedder(256)
    texts = [r["text"] for r in synth(args.n)]
    vectors = emb.embed(texts, "passage")
    questions = emb.embed([q["query"] for q in QUERIES] + [t.rsplit(" #", 1)[0] for t in texts[:192]], "query")
    keys = np.arange(args.n, dtype=np.uint64)
    truth = [set(np.argsort(-(vectors @ q), kind="stable")[:30].tolist()) for q in questions]
    for expansion in (128, 64, 32):
        index = Index(ndim=256, metric="cos", dtype="f32", expansion_add=expansion)
        t = time.perf_counter()
        index.add(keys, vectors, threads=1)
        per = (time.perf_counter() - t) / args.n * 1e6
        found = [index.search(q, 30, threads=1) for q in questions]
        recall = np.mean([len(set(m.keys.tolist()) & want) / 30 for m, want in zip(found, truth, strict=True)])
        print(f"expansion_add {expansion:>3}: insert {per:5.0f} us/vector, recall@30 {recall:.3f}", flush=True)


if __name__ == "__main__":
    main()
