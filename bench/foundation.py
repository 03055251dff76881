"""Foundation benchmark: start-up cost of `memstore remember` and bulk --jsonl throughput.

    python bench/foundation.py [--lines 100000] [--runs 15] [--bulk-runs 3] [--profile]
                               [--other SRC]

Prints, for this machine, in one run:
  (a) the median wall time of `python -c "import typer, orjson"` (the import floor)
      and of `memstore --store TMP remember "..." --now ...`, measured interleaved,
      and their ratio (goal: <= 1.5x);
  (b) `memstore remember --jsonl FILE` of N generated lines (mixed English and
      Japanese, some with subjects and actors) into a fresh store: median wall time
      and lines/s (goal: >= 20,000 lines/s).
With --profile, (b) is also run in-process under cProfile and the top functions
are printed. With --other SRC (another checkout, e.g. `git worktree add /tmp/old REV`),
(a) also times that checkout's `remember`, interleaved with this one's; both then run
as `python -c "from memstore_cli.main import entry; entry()"` from a directory that
holds only links to their memstore/ and cli/ (PYTHONPATH), so each pays the same
import path and neither reads the other's modules. Everything happens in a temporary directory that is removed after.
Not a test: pytest never collects it (it lives outside tests/).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOW = "2026-06-07T09:30:00Z"
FLOOR_GOAL = 1.5
BULK_GOAL = 20_000

EN_SUBJECTS = ["billing-db", "deploy", "oncall", "hiring", "roadmap", "pricing", "auth", "search"]
JA_SUBJECTS = ["請求", "デプロイ", "採用", "ロードマップ", "検索"]
ACTORS = ["alice", "bob", "carol", "dave", "たなか", "すずき"]
EN_TEMPLATES = [
    "We decided to move {s} to Postgres after incident {n}",
    "I prefer short stand-ups on {s}; ticket {n}",
    "{S} is a service that handles request batch {n}",
    "Meeting notes {n}: discussed {s} latency and next steps",
    "Reminder {n}: follow up with the vendor about {s}",
    "Here {s} means the staging cluster, not production (case {n})",
]
JA_TEMPLATES = [
    "{s}の移行はPostgresにすることに決めた（第{n}回）",
    "私は{s}の朝会が短い方が好き。メモ{n}",
    "{s}とは社内の検索基盤のことである。番号{n}",
    "{s}について打ち合わせ、課題{n}を確認した",
    "ここでの{s}はステージング環境を指す（{n}）",
]


def python_bin() -> str:
    return sys.executable


def memstore_bin() -> list[str]:
    exe = Path(sys.executable).with_name("memstore")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("memstore")
    if found:
        return [found]
    return [sys.executable, "-m", "memstore_cli.main"]


def timed(cmd: list[str], env: dict, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    # cwd: `python -c` puts the working directory first on sys.path; a checkout's would win
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - start


def generate(lines: int, seed: int = 7) -> bytes:
    """Deterministic mixed EN/JA JSONL; about a third with subjects, a quarter with actors."""
    import orjson

    rnd = random.Random(seed)
    out = []
    for n in range(lines):
        if rnd.random() < 0.35:
            s = rnd.choice(JA_SUBJECTS)
            text = rnd.choice(JA_TEMPLATES).format(s=s, n=n)
        else:
            s = rnd.choice(EN_SUBJECTS)
            text = rnd.choice(EN_TEMPLATES).format(s=s, S=s.capitalize(), n=n)
        obj: dict = {"text": text}
        if rnd.random() < 0.33:
            obj["subject"] = s
        if rnd.random() < 0.25:
            obj["actors"] = rnd.sample(ACTORS, rnd.randint(1, 2))
        if rnd.random() < 0.1:
            obj["importance"] = round(rnd.random(), 2)
        if rnd.random() < 0.05:
            obj["key"] = f"ext-{n}"
        out.append(orjson.dumps(obj))
    return b"\n".join(out) + b"\n"


def bench_startup(tmp: Path, runs: int, env: dict, other: Path | None = None) -> dict[str, float]:
    """Median start-up of the floor, of this checkout's remember and (with ``other``) of
    another checkout's, interleaved."""
    floor_cmd = [python_bin(), "-c", "import typer, orjson"]
    variants: dict[str, tuple[list[str], dict]] = {"floor": (floor_cmd, env)}
    if other is None:
        variants["remember"] = (memstore_bin(), env)
    else:
        entry = [python_bin(), "-c", "from memstore_cli.main import entry; entry()"]
        for name, src in (("remember", Path(__file__).resolve().parent.parent), ("other", other)):
            linked = tmp / f"src-{name}"
            linked.mkdir()
            (linked / "memstore").symlink_to(src.resolve() / "memstore")
            (linked / "memstore_cli").symlink_to(src.resolve() / "cli")
            variants[name] = (entry, {**env, "PYTHONPATH": str(linked)})
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(runs + 1):  # the first round warms the page cache and .pyc files, untimed
        for name, (cmd, cmd_env) in variants.items():
            if name != "floor":
                cmd = [*cmd, "--store", str(tmp / f"startup-{name}"), "remember",
                       f"benchmark note number {i} about deploys", "--now", NOW]
            took = timed(cmd, cmd_env, cwd=tmp)
            if i:
                times[name].append(took)
    return {name: statistics.median(t) for name, t in times.items()}


def bench_bulk(tmp: Path, lines: int, runs: int, env: dict) -> list[float]:
    """Wall times of `remember --jsonl` of the same generated file, each into a fresh store."""
    path = tmp / "bulk.jsonl"
    path.write_bytes(generate(lines))
    walls = []
    for run in range(runs):
        store = tmp / f"bulk-store-{run}"
        cmd = [*memstore_bin(), "--store", str(store), "remember", "--jsonl", str(path), "--now", NOW]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"bulk remember failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
        ids = proc.stdout.count(b"\n")
        if ids != lines:
            sys.exit(f"bulk remember printed {ids} ids for {lines} lines")
        shutil.rmtree(store)
    return walls


def profile_bulk(tmp: Path, lines: int) -> None:
    import cProfile
    import io
    import pstats
    from contextlib import redirect_stdout

    path = tmp / "profile.jsonl"
    path.write_bytes(generate(lines, seed=11))
    store = tmp / "profile-store"
    from memstore_cli.main import main

    prof = cProfile.Profile()
    sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with redirect_stdout(sink):
        prof.enable()
        main(["--quiet", "--store", str(store), "remember", "--jsonl", str(path), "--now", NOW])
        prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=15, help="start-up runs of each command")
    ap.add_argument("--bulk-runs", type=int, default=3, help="bulk runs (median reported)")
    ap.add_argument("--profile", action="store_true", help="also profile the bulk path (cProfile)")
    ap.add_argument("--other", type=Path, metavar="SRC",
                    help="another checkout whose remember start-up is timed interleaved with this one's")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    # an installed package has its .pyc files; without them every run recompiles memstore
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"machine: {platform.machine()}, nproc {os.cpu_count()}, "
          f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.system()} {platform.release()}")
    tmp = Path(tempfile.mkdtemp(prefix="memstore-bench-"))
    try:
        if args.other is not None and not (args.other / "memstore").is_dir():
            sys.exit(f"--other {args.other}: no memstore/ there (give a checkout of this repository)")
        medians = bench_startup(tmp, args.runs, env, args.other)
        floor, remember = medians["floor"], medians["remember"]
        ratio = remember / floor
        print(f"(a) start-up, median of {args.runs} interleaved runs")
        print(f"    import floor  python -c 'import typer, orjson'  {floor * 1000:7.1f} ms")
        print(f"    memstore remember TEXT --now ...               {remember * 1000:7.1f} ms")
        print(f"    ratio {ratio:.2f}x  (goal <= {FLOOR_GOAL}x: {'met' if ratio <= FLOOR_GOAL else 'MISSED'})")
        if "other" in medians:
            print(f"    --other {args.other}: remember {medians['other'] * 1000:7.1f} ms, "
                  f"ratio {medians['other'] / floor:.2f}x")
        walls = bench_bulk(tmp, args.lines, args.bulk_runs, env)
        wall = statistics.median(walls)
        rate = args.lines / wall
        print(f"(b) bulk remember --jsonl, {args.lines:,} lines into a fresh store, "
              f"median of {len(walls)} ({', '.join(f'{w:.2f}' for w in walls)} s)")
        print(f"    wall {wall:.2f} s, {rate:,.0f} lines/s  "
              f"(goal >= {BULK_GOAL:,}: {'met' if rate >= BULK_GOAL else 'MISSED'})")
        if args.profile:
            profile_bulk(tmp, args.lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
