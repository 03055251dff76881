"""Time the year-long lifecycle scenario of tests/test_lifecycle_year.py, in process.

A few hundred memories, 365 daily consolidations and 52 weekly distillations, all
pure functions over an in-memory log (memstore.memlog): the seeds' claim is that
a year of memory runs in about a second. Prints the best and median of N runs and
where the time goes. Run: .venv/bin/python bench/lifecycle_year.py [N]
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import memstore.consolidate
import memstore.distill
import memstore.extractive

SCENARIO = Path(__file__).resolve().parent.parent / "tests" / "test_lifecycle_year.py"


def load_scenario():
    spec = importlib.util.spec_from_file_location("lifecycle_year", SCENARIO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, bucket: list[float]):
    def wrapper(*args, **kw):
        start = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            bucket.append(time.perf_counter() - start)
    return wrapper


def main(runs: int) -> None:
    year = load_scenario()
    walls, stages = [], {"consolidate": [], "distill": []}
    for _ in range(runs):
        # cold caches: every run parses its texts (each consolidate holds its own vectors)
        for cached in (memstore.extractive.tokens, memstore.extractive.informative_sentence, memstore.extractive._central):
            cached.cache_clear()
        c, d = [], []
        year.consolidate, year.distill = timed(memstore.consolidate.consolidate, c), timed(memstore.distill.distill, d)
        start = time.perf_counter()
        log, counts = year.run_year()
        walls.append(time.perf_counter() - start)
        stages["consolidate"].append(sum(c))
        stages["distill"].append(sum(d))
    print(f"year scenario: {len(log.state.memories)} records, {len(log.events)} events "
          f"({counts['consolidations']} consolidations, {counts['distillations']} distillations)")
    print(f"wall: best {min(walls):.3f} s, median {statistics.median(walls):.3f} s over {runs} runs")
    for name, values in stages.items():
        print(f"  {name:<12} median {statistics.median(values):.3f} s")
    print("  the rest (remember planning, folds, the scenario itself) "
          f"{statistics.median(walls) - sum(statistics.median(v) for v in stages.values()):.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
