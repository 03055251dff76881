"""How far USearch's processor-chosen kernel is from the exact cosines memstore ranks by.

    python bench/kernels.py --store DIR [--every 7] [--hits 60]

Opens DIR's vector index (index/vectors.usearch), and for every EVERY-th stored vector
as the query asks USearch's exact search for its best HITS rows (the candidates
memstore.index.vectors takes), then compares USearch's cosines with memstore.cosine's exact
ones: the largest difference, and the share that rounds apart at the five decimals a search
reports. Another processor's kernel sums in another order and rounds apart elsewhere; the
share is how often a machine could disagree with another before 0.12 (memstore/cosine.py).
Also times the exact re-ranking of one search's hits. Prints the kernel USearch chose here.
The year fixture's store: `memstore --store DIR replay fixtures/year-2026/script.ms`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from usearch.index import Index
from usearch.index import search as exact_search

from memstore.cosine import half_cosines
from memstore.index.vectors import VectorIndex


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--every", type=int, default=7, help="query with every N-th stored vector")
    ap.add_argument("--hits", type=int, default=60)
    args = ap.parse_args(argv)
    path = args.store / "index" / "vectors.usearch"
    width = int(np.fromfile(path, dtype="<u4", count=2)[1])  # bytes a row (half precision)
    index = VectorIndex(path, width // 2)
    rows = np.asarray(index.rows, dtype=np.float32)
    apart = total = 0
    worst = 0.0
    costs = []
    for q in rows[:: args.every]:
        m = exact_search(index.rows, q.astype("<f2"), args.hits, "cos", exact=True, threads=1)
        theirs = 1.0 - np.asarray(m.distances, dtype=np.float64)
        start = time.perf_counter()
        ours = half_cosines(rows[m.keys], q)
        costs.append(time.perf_counter() - start)
        worst = max(worst, float(np.abs(ours - theirs).max()))
        apart += int((np.round(ours, 5) != np.round(theirs, 5)).sum())
        total += len(ours)
    kernel = Index(ndim=index.dim, metric="cos", dtype="f16").hardware_acceleration
    print(f"{len(rows)} vectors of {index.dim}, {len(costs)} queries x {args.hits} hits; USearch kernel: {kernel}")
    print(f"largest |USearch - exact| cosine: {worst:.3g}")
    print(f"rounded apart at 5 decimals: {apart} of {total} ({100 * apart / total:.2f}%)")
    print(f"exact re-ranking of {args.hits} hits: p50 {statistics.median(costs) * 1e6:.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
