"""Reliability benchmark: the full-count crash, concurrency and bad-input harnesses.

    python bench/reliability.py [--trials 120] [--injected 40] [--per-store 20]
                                [--seed 20260607] [--writers 4] [--per-writer 500] [--json]

Runs, in a temporary directory removed afterwards:
  1. crash safety: --trials rounds (>= 100) of a driver doing single and bulk
     `remember`, `consolidate` and `index` on one store, SIGKILLed at a seeded random
     delay; after each kill every printed id must be in the log, `verify --repair`
     then `verify` must be clean and `recall` must find the newest memory with the
     indexes caught up. A fresh store every --per-store trials keeps rounds short.
     Then --injected more rounds that kill at the worst points on purpose (inside the
     log append's write() after a seeded random share of its bytes, right after a
     durable append, before a snapshot's rename, between an index commit and its
     manifests), with the same checks: random kills seldom land inside a write().
  2. concurrency: --writers processes of --per-writer memories each (one append per
     memory), plus one process looping `consolidate` and one looping `recall`;
     every memory present exactly once, every line parses, seqs contiguous, no deadlock.
     Also: recall latency while another process holds the store lock.
  3. library races: --races runs each of two races through memstore.api.Store from
     --writers processes at once: the same --key with different texts (exactly one record,
     every caller told its id) and first writes into a missing store directory (all succeed).
  4. bad input: the whole corpus of tests/test_bad_input.py; each must fail with one
     error line and leave the store's digest unchanged.
Prints the figures and exits 1 if any must-be-zero figure is not zero.
The same harnesses run with smaller counts in the default test suite (tests/test_crash.py,
tests/test_concurrency.py, tests/test_bad_input.py).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from reliability_support import (  # noqa: E402
    MEMSTORE_SCRIPT,
    T0,
    CrashStats,
    api_races,
    concurrency_run,
    crash_trials,
    injected_crash_trials,
    make_store,
    subprocess_env,
)


def crash_section(work: Path, trials: int, per_store: int, seed: int) -> CrashStats:
    total = CrashStats()
    done = 0
    block = 0
    while done < trials:
        n = min(per_store, trials - done)
        t = time.monotonic()
        s = crash_trials(work / f"store{block}", work / f"bulk{block}", trials=n, seed=seed + block)
        for name in ("trials", "acknowledged", "distinct_ids", "lost", "corrupt_lines", "torn_tails",
                     "index_rebuilds", "events"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        for k, v in s.killed_during.items():
            total.killed_during[k] = total.killed_during.get(k, 0) + v
        total.failures += s.failures
        total.repairs += s.repairs
        print(f"  crash block {block}: {n} trials, {s.acknowledged} acknowledged, {s.lost} lost, "
              f"{s.corrupt_lines} corrupt, {s.torn_tails} torn tails, {len(s.failures)} failures "
              f"({time.monotonic() - t:.0f} s)", file=sys.stderr, flush=True)
        shutil.rmtree(work / f"store{block}", ignore_errors=True)
        shutil.rmtree(work / f"bulk{block}", ignore_errors=True)
        done += n
        block += 1
    return total


def reader_latency(work: Path) -> dict:
    """recall (with and without usage recording) while another process holds the store lock."""
    from memstore.store.fs import exclusive_lock
    from memstore.store.layout import Layout

    store = make_store(work / "latency")
    from reliability_support import cli

    for i in range(50):
        cli("--store", store, "remember", f"latency probe memory {i}", "--now", T0)
    cli("--store", store, "index", "--now", T0)
    out = {}
    with exclusive_lock(Layout(store).lock_path):
        for name, extra in (("recall_no_touch_s", ["--no-touch"]), ("recall_touch_s", [])):
            t = time.monotonic()
            p = subprocess.run([sys.executable, MEMSTORE_SCRIPT, "--store", str(store), "recall", "probe memory",
                                *extra, "--now", T0], capture_output=True, env=subprocess_env(), timeout=60)
            out[name] = round(time.monotonic() - t, 2)
            out[name.replace("_s", "_rc")] = p.returncode
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=120)
    ap.add_argument("--injected", type=int, default=40)
    ap.add_argument("--per-store", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20260607)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--per-writer", type=int, default=500)
    ap.add_argument("--races", type=int, default=40, help="Runs of each library-API race.")
    ap.add_argument("--json", action="store_true", help="Print the figures as one JSON object only.")
    args = ap.parse_args()
    import test_bad_input

    work = Path(tempfile.mkdtemp(prefix="memstore-reliability-"))
    started = time.monotonic()
    try:
        print(f"memstore reliability bench on {platform.platform()}, Python {platform.python_version()}",
              file=sys.stderr, flush=True)
        crash = crash_section(work / "crash", args.trials, args.per_store, args.seed)
        t = time.monotonic()
        injected = injected_crash_trials(work / "injected" / "store", work / "injected" / "bulk",
                                         trials=args.injected, seed=args.seed)
        print(f"  injected kills: {injected.trials} trials, {injected.torn_tails} torn tails, "
              f"{len(injected.failures)} failures ({time.monotonic() - t:.0f} s)", file=sys.stderr, flush=True)
        t = time.monotonic()
        conc = concurrency_run(work / "conc" / "store", writers=args.writers, per_writer=args.per_writer,
                               timeout=900)
        print(f"  concurrency: {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
        latency = reader_latency(work)
        t = time.monotonic()
        races = api_races(work / "races", runs=args.races, writers=args.writers, seed=args.seed)
        print(f"  library races: {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
        t = time.monotonic()
        bad = test_bad_input.run_corpus(work / "bad")
        print(f"  bad input: {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "crash": crash.figures(),
        "injected_kills": injected.figures(),
        "concurrency": conc.figures(),
        "reader_latency_with_lock_held": latency,
        "library_races": {name: r.figures() for name, r in races.items()},
        "bad_input": {"tried": bad["tried"], "store_changes": bad["store_changes"],
                      "failures": len(bad["failures"])},
        "seconds": round(time.monotonic() - started),
    }
    must_be_zero = {
        "writes lost (crash)": crash.lost + injected.lost,
        "corrupt lines (crash)": crash.corrupt_lines + injected.corrupt_lines,
        "crash trial failures": len(crash.failures) + len(injected.failures), "writes lost (concurrency)": conc.missing,
        "duplicates (concurrency)": conc.duplicates, "corrupt lines (concurrency)": conc.corrupt_lines,
        "seq problems (concurrency)": conc.seq_problems, "concurrency failures": len(conc.failures),
        "library race failures": sum(len(r.failures) + r.calls_failed for r in races.values()),
        "store changes after bad input": bad["store_changes"], "bad input failures": len(bad["failures"]),
    }
    ok = all(v == 0 for v in must_be_zero.values()) and crash.trials >= 100 and not conc.deadlock
    if not ok:
        why = [k for k, v in must_be_zero.items() if v]
        why += ["fewer than 100 random-kill trials"] if crash.trials < 100 else []
        why += ["deadlock"] if conc.deadlock else []
        print("FAILED: " + ", ".join(why), file=sys.stderr)
    if args.json:
        print(json.dumps({**figures, "ok": ok}, indent=2))
        return 0 if ok else 1
    c, i = crash, injected
    print(f"""
Crash safety: {c.trials + i.trials} trials in all (seed {args.seed})
  trials run ..................... {c.trials + i.trials} ({c.trials} SIGKILL at random delays, {i.trials} at chosen points)
  writes acknowledged ............ {c.acknowledged + i.acknowledged} ({c.distinct_ids + i.distinct_ids} distinct ids)
  writes lost .................... {c.lost + i.lost}
  corrupt lines .................. {c.corrupt_lines + i.corrupt_lines}
  torn tails quarantined ......... {c.torn_tails + i.torn_tails} ({c.torn_tails} random, {i.torn_tails} injected)
  index rebuilds by verify ....... {c.index_rebuilds + i.index_rebuilds}
  random kills landed during ..... {', '.join(f'{k} {v}' for k, v in sorted(c.killed_during.items()))}
  injected kill points ........... {', '.join(f'{k} {v}' for k, v in sorted(i.killed_during.items()))}
  log events written ............. {c.events + i.events}
  trial failures ................. {len(c.failures) + len(i.failures)}
Concurrency ({conc.writers} writers x {conc.per_writer}, consolidate and recall looping)
  writes acknowledged ............ {conc.acknowledged}
  present exactly once ........... {conc.present_once}
  duplicates / lost .............. {conc.duplicates} / {conc.missing}
  corrupt lines / seq problems ... {conc.corrupt_lines} / {conc.seq_problems}
  consolidate / recall runs ...... {conc.consolidate_runs} / {conc.recall_runs}
  wall time / deadlock ........... {conc.seconds:.1f} s / {'YES' if conc.deadlock else 'no'}
  recall with the lock held ...... {latency['recall_no_touch_s']} s (--no-touch), {latency['recall_touch_s']} s (usage skipped)
Library API races ({args.races} runs each, {args.writers} processes at once)
  same key: wrong record count ... {races['same_key'].wrong_count} of {races['same_key'].runs} runs (ids disagree: {races['same_key'].ids_disagree})
  first writes: calls failed ..... {races['first_writes'].calls_failed} of {races['first_writes'].runs * args.writers} (wrong count: {races['first_writes'].wrong_count})
Bad input
  bad inputs tried ............... {bad['tried']}
  store changes after bad input .. {bad['store_changes']}
  cases failing .................. {len(bad['failures'])}
Total {figures['seconds']} s: {'OK' if ok else 'FAILED'}""")
    race_failures = [f for r in races.values() for f in r.failures]
    for line in (c.failures + i.failures + conc.failures + race_failures)[:20]:
        print("  failure:", line)
    for case_id, problems in bad["failures"][:20]:
        print(f"  bad input {case_id}: {problems}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
