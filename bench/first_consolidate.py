"""The first consolidate after a bulk import, in-process, against another checkout's code.

    python bench/recall.py --sizes 100000 --keep DIR          # the store (once, ~5 min)
    python bench/first_consolidate.py --store DIR/s100000 --cache DIR/cache --other OLD_CHECKOUT

Each run copies the store, then runs the library's ``writes.consolidate`` (a dry run: the
copy is not written) with the CLI's worker pool, key cache and embedding cache, as
`memstore consolidate` does, in a fresh process whose imports come from this checkout or
from --other (a ``git worktree add`` of an older commit; the same virtual environment).
Runs alternate (other, this, this, other, ...: --pairs pairs), since this machine's speed
drifts by more than the differences measured. Prints each run's wall time, CPU of the
process and of its workers, peak RSS and a digest of the events (the two versions must
agree), then the ratios of the sums; --stages adds the open's seconds, each stage's seconds
a round (updates, near-duplicates, promote) and how many texts and pairs the update checks
saw. Not a test (outside tests/).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# run in the child: SRC first on sys.path, then the measurement; one JSON line on stdout
CHILD = r"""
import hashlib, json, os, resource, sys, time
sys.path.insert(0, os.environ["SRC"])
from pathlib import Path

def main():
    import orjson

    import memstore
    if not Path(memstore.__file__).resolve().is_relative_to(Path(os.environ["SRC"]).resolve()):
        raise SystemExit(f"memstore came from {memstore.__file__}, not from {os.environ['SRC']}")
    from memstore import writes
    from memstore.config import load_config
    from memstore.embed import make_embedder
    from memstore.index.embcache import CachedEmbedder, EmbeddingCache
    from memstore.nightcache.keycache import KeyCache
    from memstore.index.workers import EmbedPool
    from memstore.store.layout import Layout

    stages = _instrument() if os.environ.get("STAGES") else None
    if os.environ.get("COLLECTOR"):  # the cycle collector on during the run, as before 0.12.4
        import gc

        import memstore.consolidate as c
        inner_run = c.consolidate
        def collected(*a, **k):
            gc.enable()
            return inner_run(*a, **k)
        c.consolidate = collected
    layout, cache = Layout(Path(sys.argv[1])), Path(sys.argv[2])
    config = load_config(layout.read_config_text())
    inner = make_embedder(config)
    pool = EmbedPool(inner, int(sys.argv[4]))
    embedder = CachedEmbedder(pool, EmbeddingCache(cache, inner.name, inner.dim))
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        done = writes.consolidate(layout, now=sys.argv[3], config=config, embedder=embedder, dry_run=True,
                                  mapper=pool if hasattr(pool, "warm") else pool.map, keyer=KeyCache(cache).keys)
    finally:
        pool.close()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    digest = hashlib.sha256(b"".join(orjson.dumps(e, option=orjson.OPT_SORT_KEYS) for e in done.events))
    print(json.dumps({"wall": round(wall, 1), "cpu": round(cpu, 1),
                      "workers_cpu": round(workers.ru_utime + workers.ru_stime, 1), "events": len(done.events),
                      "digest": digest.hexdigest()[:16],
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                      **({"stages": {k: round(v, 2) if isinstance(v, float) else v for k, v in stages.items()}}
                         if stages is not None else {})}))

def _instrument():
    # counters and timers around the stages this checkout has: seconds in each round of
    # _updates and _near_duplicates, in _candidates (ranking) and relation; the texts whose
    # gists and frames were computed ahead (seeded); the pairs the gists settled
    import memstore.consolidate as c
    import memstore.store.open as o
    got = {"open_s": 0.0, "updates_rounds_s": [], "near_duplicates_rounds_s": [], "promote_rounds_s": [],
           "candidates_s": 0.0, "relation_s": 0.0, "gisted_texts": 0, "framed_texts": 0,
           "pairs_settled_by_gists": 0, "pairs_left_to_frames": 0}

    def timed(name, key, rounds, module=c):
        inner = getattr(module, name)
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                d = time.perf_counter() - t
                if rounds:
                    got[key].append(round(d, 2))
                else:
                    got[key] += d  # (summed unrounded: a call takes well under 5 ms)
        setattr(module, name, wrapper)

    def counted(name, key):
        inner = getattr(c, name)
        def wrapper(texts, found):
            got[key] += len(texts)
            return inner(texts, found)
        setattr(c, name, wrapper)

    timed("load_state", "open_s", False, o)  # (the run's state from the snapshot and the log after it)
    timed("_updates", "updates_rounds_s", True)
    timed("_near_duplicates", "near_duplicates_rounds_s", True)
    timed("_promote", "promote_rounds_s", True)
    timed("_candidates", "candidates_s", False)
    timed("relation", "relation_s", False)
    counted("seed", "framed_texts")
    if hasattr(c, "seed_gists"):
        counted("seed_gists", "gisted_texts")
    if hasattr(c, "may_relate_each"):
        inner = c.may_relate_each
        def each(olds, new):
            found = inner(olds, new)
            got["pairs_left_to_frames"] += sum(found)
            got["pairs_settled_by_gists"] += len(found) - sum(found)
            return found
        c.may_relate_each = each
    if hasattr(c, "_Prefetch"):  # the prefetch thread's CPU (in this process: the GIL's share), and
        # how long the update stage waited for it after ranking
        got["prefetch_thread_cpu_s"], got["prefetch_wait_s"] = 0.0, 0.0
        run, leave = c._Prefetch._run, c._Prefetch.__exit__
        def thread(self):
            t = time.thread_time()
            try:
                return run(self)
            finally:
                got["prefetch_thread_cpu_s"] += time.thread_time() - t
        def exit_(self, *exc):
            t = time.perf_counter()
            try:
                return leave(self, *exc)
            finally:
                got["prefetch_wait_s"] += time.perf_counter() - t
        c._Prefetch._run, c._Prefetch.__exit__ = thread, exit_
    return got

if __name__ == "__main__":  # (the workers are spawned: they import this module again)
    main()
"""


def measure(src: Path, store: Path, cache: Path, now: str, jobs: int, scratch: Path, stages: bool,
            collector: bool = False, files: list[Path] = ()) -> dict:
    copy = scratch / "store"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy)
    for made in files:  # (--pool-keys, --near-groups: as `memstore snapshot` leaves them)
        shutil.copyfile(made, copy / "snapshots" / made.name)
    script = scratch / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "SRC": str(src), "MEMSTORE_CACHE_DIR": str(cache), "STAGES": "1" if stages else "",
           "COLLECTOR": "1" if collector else ""}
    out = subprocess.run([sys.executable, str(script), str(copy), str(cache), now, str(jobs)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"first_consolidate: the run from {src} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", type=Path, required=True, help="a store bench/recall.py kept (DIR/s100000)")
    p.add_argument("--cache", type=Path, required=True, help="its embedding cache (DIR/cache)")
    p.add_argument("--other", type=Path, help="another checkout to compare with (a git worktree)")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--now", default="2027-01-01T00:00:00Z")
    p.add_argument("--stages", action="store_true",
                   help="also time the stages and count the texts and pairs seen (the timers add a little)")
    p.add_argument("--collector", action="store_true",
                   help="keep Python's cycle collector on during this checkout's runs (as before 0.12.4)")
    p.add_argument("--pool-keys", action="store_true",
                   help="give the store's newest snapshot its keys file (memstore.nightcache.poolkeys, as `memstore "
                        "snapshot` writes it) in each copy, when it has none: a store snapshotted before 0.12.14")
    p.add_argument("--near-groups", action="store_true",
                   help="likewise its near-duplicate groups file (memstore.nightcache.neargroups), from the embedding "
                        "cache: a store snapshotted before 0.12.15")
    a = p.parse_args()
    if a.other is not None and not (a.other / "memstore" / "__init__.py").is_file():
        raise SystemExit(f"first_consolidate: --other {a.other} is not a memstore checkout (no memstore/__init__.py)")
    order = ["this"] * a.pairs if a.other is None else \
        [w for i in range(a.pairs) for w in (("other", "this") if i % 2 == 0 else ("this", "other"))]
    runs: dict[str, list[dict]] = {"this": [], "other": []}
    with tempfile.TemporaryDirectory(prefix="first-consolidate-") as tmp:
        # (made in a child process: this one stays small, and so do the runs it starts)
        files = _made(a.store, a.cache, Path(tmp) / "made", [n for n, on in (("_pool_keys", a.pool_keys),
                                                                             ("_near_groups", a.near_groups)) if on])
        for who in order:
            got = measure(HERE if who == "this" else a.other.resolve(), a.store, a.cache, a.now, a.jobs, Path(tmp),
                          a.stages, a.collector and who == "this", files)
            runs[who].append(got)
            print(who, json.dumps(got), flush=True)
    if runs["other"]:
        digests = {r["digest"] for rs in runs.values() for r in rs}
        print("events identical" if len(digests) == 1 else f"EVENTS DIFFER: {sorted(digests)}")
        for field in ("wall", "cpu", "workers_cpu", "rss_mb"):
            this, other = (sum(r[field] for r in runs[w]) for w in ("this", "other"))
            ratio = f"{this / other:.2f}x" if other else "-"  # (a night's run may not use the workers)
            print(f"{field}: this {this:.1f} / other {other:.1f} = {ratio}")


def _made(store: Path, cache: Path, into: Path, makers: list[str]) -> list[Path]:
    """The files ``makers`` (functions of this module) write into ``into`` for the store's
    newest snapshot, made in a child process."""
    if not makers:
        return []
    into.mkdir()
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); sys.path.insert(0, {str(HERE / 'bench')!r}); "
            "import first_consolidate as f; from pathlib import Path; "
            + "; ".join(f"f.{m}(Path({str(store)!r}), Path({str(cache)!r}), Path({str(into)!r}))" for m in makers))
    subprocess.run([sys.executable, "-c", code], check=True)
    return sorted(into.iterdir())


def _pool_keys(store: Path, cache: Path, into: Path) -> None:
    """Write into ``into`` the keys file of the store's newest snapshot, built from it with
    the key cache, when it has none (and a snapshot)."""
    import pyarrow.parquet as pq

    from memstore.nightcache import poolkeys
    from memstore.nightcache.keycache import KeyCache
    from memstore.store.layout import Layout
    from memstore.store.snapshot import read_header, snapshot_files

    found = snapshot_files(Layout(store))
    if not found or poolkeys.path_of(found[-1][1]).exists():
        return
    path = found[-1][1]
    data = poolkeys.build(pq.read_table(path), read_header(path)[1]["checksum"], KeyCache(cache).keys)
    (into / poolkeys.path_of(path).name).write_bytes(data)
    print(f"pool keys: {poolkeys.path_of(path).name}, {len(data):,} bytes, written into each copy", flush=True)


def _near_groups(store: Path, cache: Path, into: Path) -> None:
    """Write into ``into`` the near-duplicate groups file of the store's newest snapshot,
    built from it with the embedding cache, when it has none (and a snapshot, and a group)."""
    import pyarrow.parquet as pq

    from memstore.config import load_config
    from memstore.embed import make_embedder
    from memstore.index.embcache import CachedEmbedder, EmbeddingCache
    from memstore.nightcache import neargroups
    from memstore.store.layout import Layout
    from memstore.store.snapshot import read_header, snapshot_files

    layout = Layout(store)
    found = snapshot_files(layout)
    if not found or neargroups.path_of(found[-1][1]).exists():
        return
    path = found[-1][1]
    inner = make_embedder(load_config(layout.read_config_text()))
    data = neargroups.build(pq.read_table(path), read_header(path)[1]["checksum"],
                            CachedEmbedder(inner, EmbeddingCache(cache, inner.name, inner.dim)))
    if data is None:
        return
    (into / neargroups.path_of(path).name).write_bytes(data)
    print(f"near groups: {neargroups.path_of(path).name}, {len(data):,} bytes, written into each copy", flush=True)


if __name__ == "__main__":
    main()
