#!/usr/bin/env python3
"""How many stores per hour `memstore fleet` maintains on this machine.

    python bench/fleet.py                              # 200 stores of 500 memories, in a temp dir
    python bench/fleet.py --keep /tmp/fleet            # keep the built stores
    python bench/fleet.py --keep /tmp/fleet --reuse    # time again on the kept stores (no build)

Builds N stores of M memories each (hashing embedder: the engine is measured, not the model;
five days of bulk remembers with repeats, so consolidate has work: promotions, reinforcements,
expiries), then for each engine — the local pool at each --jobs, and a Dask LocalCluster of
--dask-workers processes — copies the pristine stores and times, through the CLI as a user
runs it, `fleet consolidate` and then `fleet index` over all of them (the index then embeds and
indexes every memory of every store: the heaviest night). Prints stores/s and stores/hour.
Every run must end with every store ok.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HASHING = '[embedder]\nname = "hashing"\n'
DAYS = ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05"]
NOW = "2026-06-06T03:00:00Z"  # the night after the last day: promotions, merges, conflicts to decide
MEMSTORE = str(Path(sys.executable).with_name("memstore"))

SUBJECTS = ["billing", "deploys", "oncall", "hiring", "coffee", "security", "search", "payments", "mobile",
            "docs", "budget", "offsite", "latency", "backups", "pricing"]
VERBS = ["We decided to", "Alice prefers to", "The team agreed to", "Remember to", "Bob said we should",
         "Note: we will", "It turned out we must", "Carol wants to"]
ACTIONS = ["move {s} to Postgres", "review {s} every Monday", "page the {s} owner after 10 minutes",
           "keep {s} notes in the wiki", "cut the {s} budget by a tenth", "ship {s} changes on Tuesdays",
           "write a runbook for {s}", "measure {s} latency weekly", "retire the old {s} service",
           "pair on {s} reviews"]


def texts_for(seed: int, n: int) -> list[list[dict]]:
    """n memories in len(DAYS) daily batches; about one in eight repeats an earlier one."""
    rng = random.Random(seed)
    made: list[dict] = []
    for i in range(n):
        if made and rng.random() < 0.125:
            made.append(dict(rng.choice(made)))
            continue
        s = rng.choice(SUBJECTS)
        text = f"{rng.choice(VERBS)} {rng.choice(ACTIONS).format(s=s)} (item {seed}-{i}, {rng.getrandbits(24):06x})"
        made.append({"text": text, "subject": s} if rng.random() < 0.5 else {"text": text})
    per = -(-n // len(DAYS))
    return [made[d * per:(d + 1) * per] for d in range(len(DAYS))]


def build(root: Path, stores: int, memories: int) -> None:
    from memstore_cli.main import main

    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(stores):
            store = root / f"agent-{i:05d}"
            store.mkdir(mode=0o700)
            (store / "memstore.toml").write_text(HASHING)
            os.chmod(store / "memstore.toml", 0o600)
            for day, batch in zip(DAYS, texts_for(i, memories), strict=True):
                path = Path(tmp) / "batch.jsonl"
                path.write_text("".join(json.dumps(m) + "\n" for m in batch))
                rc = main(["--quiet", "--store", str(store), "remember", "--jsonl", str(path),
                           "--now", f"{day}T09:00:00Z"])
                if rc != 0:
                    raise SystemExit(f"building {store} failed ({rc})")
    print(f"built {stores} stores of {memories} memories in {time.perf_counter() - started:.1f} s", flush=True)


def fleet(stage: str, root: Path, cache: Path, extra: list[str]) -> tuple[float, dict]:
    env = {**os.environ, "MEMSTORE_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    proc = subprocess.run([MEMSTORE, "fleet", stage, "--root", str(root), "--now", NOW, "--json", *extra],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"fleet {stage} {' '.join(extra)} failed ({proc.returncode}): {proc.stderr[-2000:]}"
                         f"{proc.stdout[-2000:]}")
    return wall, json.loads(proc.stdout)


def one_engine(name: str, pristine: Path, work: Path, extra: list[str], stages: list[str]) -> list[dict]:
    root = work / "root"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    rows = []
    for stage in stages:
        wall, report = fleet(stage, root, cache, extra)
        n = report["stores"]
        assert report["ok"] == n, report
        work_s = sum(e["seconds"] for e in report["results"])
        cpu_s = sum(e["cpu_seconds"] for e in report["results"])
        row = {"engine": name, "stage": stage, "stores": n, "wall_s": round(wall, 2), "stores_per_s": round(n / wall, 2),
               "stores_per_hour": round(n / wall * 3600), "run_s_per_store": round(work_s / n, 3),
               "cpu_s_per_store": round(cpu_s / n, 3), "load_average": round(os.getloadavg()[0], 2)}
        print(f"{name:<16} {stage:<12} {n} stores in {wall:6.1f} s: {n / wall:6.2f} stores/s, "
              f"{n / wall * 3600:8,.0f} stores/h (a store's run {work_s / n:.3f} s, {cpu_s / n:.3f} s CPU; "
              f"load average {os.getloadavg()[0]:.1f})", flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stores", type=int, default=200)
    ap.add_argument("--memories", type=int, default=500)
    ap.add_argument("--keep", type=Path, help="build the stores in DIR/pristine and keep them")
    ap.add_argument("--reuse", action="store_true", help="time on the stores --keep DIR already holds")
    ap.add_argument("--jobs", default="1,2", help="local pool sizes to time (comma-separated)")
    ap.add_argument("--dask-workers", type=int, default=2, help="LocalCluster worker processes (0: no Dask run)")
    ap.add_argument("--stages", default="consolidate,index")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON at the end")
    args = ap.parse_args()
    if args.reuse and not args.keep:
        ap.error("--reuse needs --keep DIR")
    base = args.keep or Path(tempfile.mkdtemp(prefix="memstore-fleet-"))
    pristine = base / "pristine"
    if args.reuse:
        if not pristine.is_dir():
            ap.error(f"--reuse: nothing kept in {pristine}")
    else:
        if pristine.exists():
            shutil.rmtree(pristine)
        build(pristine, args.stores, args.memories)
    stages = args.stages.split(",")
    rows = []
    work = base / "work"
    work.mkdir(exist_ok=True)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)  # others' work counts
    for jobs in [int(j) for j in args.jobs.split(",") if j]:
        rows += one_engine(f"local --jobs {jobs}", pristine, work, ["--jobs", str(jobs)], stages)
    if args.dask_workers:
        from distributed import LocalCluster

        with LocalCluster(n_workers=args.dask_workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            rows += one_engine(f"dask {args.dask_workers} workers", pristine, work,
                               ["--address", cluster.scheduler_address], stages)
    shutil.rmtree(work, ignore_errors=True)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
