"""One memstore command through this checkout and another, interleaved: wall time, peak RSS,
and whether they print the same bytes.

    git worktree add /tmp/old REV
    python bench/ab.py --store DIR --other /tmp/old -- distill --dry-run --json --now 2027-01-02T00:00:00Z
    python bench/ab.py --store DIR --other /tmp/old --runs 3 -- log --since 2026-12-31

Each run is a fresh process that imports memstore and its CLI from one checkout (the other
first on sys.path, checked), in the order other, this, this, other, ... (--runs pairs), so
a machine whose speed drifts weighs on both alike. The store is only read: give a command
that writes nothing (a read, or a stage with --dry-run). Prints each run, then the ratios of
the sums. Not a test (outside tests/).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CHILD = ("import sys, memstore\n"
         "src = sys.argv[1]\n"
         "if not memstore.__file__.startswith(src):\n"
         "    raise SystemExit(f'memstore came from {memstore.__file__}, not from {src}')\n"
         "from cli.main import entry\n"
         "sys.argv = ['memstore', *sys.argv[2:]]\n"
         "entry()  # (as the console script: its exit too)\n")


def run(src: Path, argv: list[str]) -> dict:
    # (without .pyc files, as this sandbox runs, every run would compile memstore again: users have them)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(src)}
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(src) + os.sep, *argv], stdout=out,
                             stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
        _pid, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        err = p.stderr.read().decode(errors="replace")
        out.seek(0)
        digest = hashlib.sha256(out.read()).hexdigest()[:16]
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):
        raise SystemExit(f"ab: {' '.join(argv)} from {src} exited {code}:\n{err[-2000:]}")
    return {"wall": wall, "rss_mb": usage.ru_maxrss / 1024, "rc": code, "out": digest}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--other", type=Path, required=True, help="another checkout (a git worktree)")
    p.add_argument("--runs", type=int, default=2, help="pairs of runs")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its options")
    a = p.parse_args()
    argv = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not argv:
        p.error("give the command after --")
    if not (a.other / "memstore" / "__init__.py").is_file() or not (a.other / "cli" / "main.py").is_file():
        raise SystemExit(f"ab: --other {a.other} is not a memstore checkout")
    full = ["--store", str(a.store.resolve()), *argv]
    sums = {"this": [0.0, 0.0], "other": [0.0, 0.0]}
    outs = set()
    for i in range(a.runs):
        for who in (("other", "this") if i % 2 == 0 else ("this", "other")):
            got = run(HERE if who == "this" else a.other.resolve(), full)
            sums[who][0] += got["wall"]
            sums[who][1] += got["rss_mb"]
            outs.add(got["out"])
            print(f"{who:5}  {got['wall']:8.2f} s  {got['rss_mb']:8.0f} MB  rc {got['rc']}  out {got['out']}", flush=True)
    print("the same output" if len(outs) == 1 else f"OUTPUTS DIFFER: {sorted(outs)}")
    for k, name in ((0, "wall"), (1, "peak RSS")):
        print(f"{name}: this {sums['this'][k]:.2f} / other {sums['other'][k]:.2f} = "
              f"{sums['this'][k] / sums['other'][k]:.2f}x")


if __name__ == "__main__":
    main()
