"""Fuzz memstore's inputs: `import` files, log lines, memstore.toml and command lines.

    python bench/fuzz.py [--budget-seconds 600] [--seed 1] [--target import|log|config|argv]
    python bench/fuzz.py --target log --seed 1 --case 17     # replay one case, step by step

Cases are seeded (each depends only on target, seed and number) and run the CLI in-process
with an explicit --now; every command is OK (exit 0), REFUSED (one `Error:` line, no
traceback, log unchanged), CRASH or HANG. Prints cases tried and crashes per target, then
each distinct crash signature (exception type + innermost memstore frame) with the smallest
case that showed it and the command that replays it. Exits 1 if anything crashed or hung.
The same harness runs a short fixed number of cases in tests/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_support import CASE_TIMEOUT, TARGETS, fuzz  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--budget-seconds", type=float, default=600.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--target", choices=TARGETS, action="append", help="repeatable; default: all four")
    p.add_argument("--case", type=int, help="run only this case number (with its steps printed)")
    p.add_argument("--timeout", type=float, default=CASE_TIMEOUT, help="seconds per command before HANG")
    a = p.parse_args()
    targets = tuple(a.target or TARGETS)
    start = time.monotonic()

    def progress(n, report):
        if n % 25 == 0:
            print(f"  {n + 1} round(s), {sum(report.cases.values())} cases, "
                  f"{len(report.signatures)} signature(s), {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)

    def show(r):
        print(f"== {r.case.target} case {r.case.number}: {'; '.join(r.case.what)}")
        print("\n".join(r.trace))

    with tempfile.TemporaryDirectory(prefix="memstore-fuzz-") as tmp:
        report = fuzz(Path(tmp), seed=a.seed, targets=targets, budget=a.budget_seconds, only=a.case,
                      timeout=a.timeout, progress=None if a.case is not None else progress,
                      keep=show if a.case is not None else None)
    print(f"\nseed {a.seed}, {time.monotonic() - start:.0f} s, "
          f"{sum(report.cases.values())} cases, {len(report.signatures)} distinct crash signature(s)")
    print(report.table())
    if report.signatures:
        print("\ncrash signatures (smallest case for each):")
        print(report.details())
    return 1 if report.signatures else 0


if __name__ == "__main__":
    sys.exit(main())
