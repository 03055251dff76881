"""Harnesses shared by the reliability tests and ``bench/reliability.py``.

- ``crash_trials``: a driver process does bulk and single ``remember``, ``consolidate``
  and ``index`` on one store until it is SIGKILLed at a seeded random delay; after each
  kill every id it had printed must be in the log, ``verify --repair`` then ``verify``
  must be clean, and ``recall`` must work with the indexes caught up.
- ``concurrency_run``: W writer processes of N memories each, plus a process running
  ``consolidate`` and one running ``recall`` in loops, all on one store.

Everything uses the hashing embedder (no model) and explicit --now values.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import re
import stat
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memstore_cli.main import main

HASHING = '[embedder]\nname = "hashing"\n'
T0 = "2026-06-07T09:00:00Z"
ID_LINE = re.compile(r"^m[0-9a-f]{15}$")
ROOT = Path(__file__).resolve().parent.parent
MEMSTORE_SCRIPT = str(Path(sys.executable).with_name("memstore"))  # the installed console script


def make_store(path: Path, config: str = HASHING) -> Path:
    """A store directory (0700) with a private memstore.toml (0600) choosing the hashing embedder."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    fd = os.open(path / "memstore.toml", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(config)
    return path


def digest(root: Path) -> str:
    """Every path, mode and byte under a store except index/ (a rebuildable cache)."""
    if not root.exists():
        return "absent"
    if root.is_file():
        return hashlib.sha256(b"file\0" + root.read_bytes()).hexdigest()
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == "index":
            continue
        st = path.lstat()
        h.update(str(rel).encode() + b"\0" + oct(stat.S_IMODE(st.st_mode)).encode() + b"\0")
        if path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


class _Out(io.TextIOWrapper):
    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")

    def isatty(self) -> bool:
        return False


def cli(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """memstore's main() in this process, with stdin/stdout/stderr swapped for buffers."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = _Out(), _Out()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        rc = main([str(a) for a in argv])
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return rc, out.text(), err.text()


@contextmanager
def cache_env(path=None):
    """$MEMSTORE_CACHE_DIR set to ``path`` in the block (left as it is when None; code inside may
    set it again), then as it was before."""
    saved = os.environ.get("MEMSTORE_CACHE_DIR")
    if path is not None:
        os.environ["MEMSTORE_CACHE_DIR"] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("MEMSTORE_CACHE_DIR", None)
        else:
            os.environ["MEMSTORE_CACHE_DIR"] = saved


def subprocess_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def log_events(store: Path) -> tuple[list[dict], int]:
    """(every complete, parseable event, number of complete lines that did not parse)."""
    import json

    events, bad = [], 0
    for path in sorted((store / "log").glob("*.jsonl")):
        data = path.read_bytes()
        for line in data.split(b"\n")[:-1]:
            try:
                events.append(json.loads(line))
            except ValueError:
                bad += 1
    return events, bad


def head_at(store: Path) -> str:
    from memstore.store.layout import Layout
    from memstore.store.log import read_head

    return read_head(Layout(store)).at or T0


# --- crash trials ---------------------------------------------------------------------------

DRIVER = r'''
import json, os, random, sys
from datetime import datetime, timedelta, timezone
sys.stdout.reconfigure(line_buffering=True)
from memstore_cli.main import main
store, seed, start, work, bulk_max = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
rng = random.Random(seed)
t = datetime.fromisoformat(start.replace("Z", "+00:00"))
SUBJECTS = ["billing", "deploys", "coffee", "oncall", "hiring", None, None, None]
LONG = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " * 40
n = 0
def text():
    global n
    n += 1
    if n > 3 and rng.random() < 0.05:
        return "repeated memory about the deploy checklist"  # a reinforce prints the same id
    body = f"crash {seed} item {n} token{rng.getrandbits(40):010x}"
    return body + (" " + LONG[: rng.randint(0, len(LONG))] if rng.random() < 0.5 else "")
base = ["--store", store]  # not --quiet: the ids remember prints are what the trial checks
def run(action, argv):
    sys.stderr.write(f"# {action}\n")
    sys.stderr.flush()
    rc = main(base + argv)
    if rc != 0:
        sys.stderr.write(f"# FAILED rc={rc}: {argv[:2]}\n")
        sys.exit(3)
# time-weighted mix: single writes come in bursts (each is ~5 ms), consolidate and index
# (which grow with the store) are rarer, so kills land in every kind of command
while True:
    t += timedelta(minutes=rng.randint(1, 600))
    now = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    r = rng.random()
    if r < 0.45:
        for _ in range(rng.randint(10, 60)):
            argv = ["remember", text(), "--now", now]
            s = rng.choice(SUBJECTS)
            if s:
                argv += ["--subject", s]
            run("remember", argv)
    elif r < 0.85:
        path = os.path.join(work, f"bulk-{seed}-{n}.jsonl")
        with open(path, "w") as fh:
            for _ in range(rng.randint(5, bulk_max)):
                obj = {"text": text()}
                s = rng.choice(SUBJECTS)
                if s:
                    obj["subject"] = s
                fh.write(json.dumps(obj) + "\n")
        run("bulk", ["remember", "--jsonl", path, "--now", now])
    elif r < 0.93:
        run("consolidate", ["consolidate", "--now", now])
    else:
        run("index", ["index", "--now", now])
'''


@dataclass
class CrashStats:
    trials: int = 0
    acknowledged: int = 0  # id lines printed (a reinforce counts again: it was acknowledged again)
    distinct_ids: int = 0
    lost: int = 0
    corrupt_lines: int = 0  # complete log lines that did not parse or verify flagged
    torn_tails: int = 0  # torn fragments quarantined by verify --repair
    index_rebuilds: int = 0
    killed_during: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)  # what verify --repair found, one line each
    events: int = 0

    def figures(self) -> dict:
        return {"trials": self.trials, "writes_acknowledged": self.acknowledged,
                "distinct_ids": self.distinct_ids, "writes_lost": self.lost,
                "corrupt_lines": self.corrupt_lines, "torn_tails_quarantined": self.torn_tails,
                "index_rebuilds": self.index_rebuilds, "log_events": self.events,
                "killed_during": dict(sorted(self.killed_during.items())), "failures": len(self.failures)}


def crash_trials(store: Path, work: Path, *, trials: int, seed: int, min_delay: float = 0.25,
                 max_delay: float = 1.6, bulk_max: int = 600, progress=None) -> CrashStats:
    """Run ``trials`` kill-and-check rounds on one store (it keeps growing across rounds)."""
    make_store(store) if not store.exists() else None
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    stats = CrashStats()
    seen: set[str] = set()
    for trial in range(trials):
        start = head_at(store)
        proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(store), str(seed * 1000 + trial), start,
                                 str(work), str(bulk_max)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=subprocess_env())
        time.sleep(rng.uniform(min_delay, max_delay))
        proc.kill()
        out, err = proc.communicate(timeout=60)
        stats.trials += 1
        errtext = err.decode("utf-8", "replace")
        actions = [line[2:] for line in errtext.splitlines() if line.startswith("# ")]
        what = actions[-1] if actions else "start-up"
        stats.killed_during[what] = stats.killed_during.get(what, 0) + 1
        if proc.returncode != -9 or "Traceback" in errtext or "Error:" in errtext:
            stats.failures.append(f"trial {trial}: driver rc {proc.returncode}: {errtext[-500:]}")
            continue
        _after_kill(store, out, trial, stats, seen)
        if progress:
            progress(trial, stats)
    events, bad = log_events(store)
    stats.events = len(events)
    stats.corrupt_lines += bad
    stats.distinct_ids = len(seen)
    return stats


def _after_kill(store: Path, out: bytes, trial: int, stats: CrashStats, seen: set[str]) -> None:
    """The checks after a kill: printed ids present, verify --repair then verify clean, recall."""
    import json

    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    # an id counts once its whole line arrived (a line cut by the kill was never seen)
    printed = [line for line in out.decode("utf-8", "replace").split("\n")[:-1] if ID_LINE.match(line)]
    stats.acknowledged += len(printed)
    seen.update(printed)
    state, _ = load_state(Layout(store))
    lost = [i for i in printed if i not in state.memories]
    if lost:
        stats.lost += len(lost)
        stats.failures.append(f"trial {trial}: {len(lost)} acknowledged id(s) missing: {lost[:3]}")
    rc, vout, verr = cli("--store", store, "verify", "--repair", "--json")
    report = json.loads(vout) if vout.strip() else {}
    for f in report.get("findings", []):
        stats.repairs.append(f"trial {trial}: {f['path']}:{f['line']}: {f['message']} -> {f.get('repaired')}")
        if f["check"] == "log" and f["fix"] != "quarantine":
            stats.corrupt_lines += 1
        if f["fix"] == "quarantine" and f.get("repaired"):
            stats.torn_tails += 1
    if any(f["fix"] == "rebuild" for f in report.get("findings", [])):
        stats.index_rebuilds += 1
    if rc != 0:
        stats.failures.append(f"trial {trial}: verify --repair rc {rc}: {vout[-800:]} {verr[-300:]}")
        return
    rc, vout, verr = cli("--store", store, "verify")
    if rc != 0 or vout:
        stats.failures.append(f"trial {trial}: verify after repair rc {rc}: {vout[-800:]}")
        return
    _check_recall(store, state, [i for i in printed if i in state.memories], trial, stats)


def _check_recall(store: Path, state, printed: list[str], trial: int, stats: CrashStats) -> None:
    import json

    from memstore.store.layout import Layout
    from memstore.store.log import read_head

    probe = next((state.memories[i] for i in reversed(printed) if state.memories[i].status == "active"),
                 None)
    query = probe.text[:200] if probe else "crash item token"
    rc, out, err = cli("--store", store, "recall", query, "--json", "--no-touch", "--k", "10",
                       "--now", head_at(store))
    if rc != 0:
        stats.failures.append(f"trial {trial}: recall rc {rc}: {err[-300:]}")
        return
    ids = [r["id"] for r in json.loads(out)["results"]]
    if probe is not None and probe.id not in ids:
        stats.failures.append(f"trial {trial}: recall of {probe.id}'s own text did not find it: {ids}")
    head = read_head(Layout(store)).seq
    marks = [json.loads((store / "index" / p).read_bytes())["watermark"]
             for p in ("records/manifest.json", "lexical/manifest.json", "vectors.json")]
    if marks != [head] * 3:
        stats.failures.append(f"trial {trial}: indexes at {marks} after recall, log head {head}")


# --- kills at chosen points -----------------------------------------------------------------

# One memstore command with a hook that SIGKILLs the process at a chosen point.
KILLER = r'''
import os, signal, sys
from memstore_cli.main import main
point, frac, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
die = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
def patched_os(**attrs):
    return type("os", (), {**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")},
                           **{k: staticmethod(v) for k, v in attrs.items()}})
if point == "mid-write":  # part of the append's bytes reach the file, then death
    import memstore.store.log as log
    real = os.write
    def part(fd, data):
        real(fd, bytes(data[: max(1, int(len(data) * frac))]))
        die()
    log.os = patched_os(write=part)
elif point == "after-append":  # the append is durable, the id was never printed
    import memstore.store.log as log
    real_append = log.append
    def append(*a, **k):
        real_append(*a, **k)
        die()
    log.append = append
elif point == "before-replace":  # a whole-file write (snapshot, manifest) dies before its rename
    import memstore.store.fs as fs
    fs.os = patched_os(replace=die)
elif point == "before-manifest":  # index documents committed, manifests not written
    import memstore.index.sync as sync
    sync.write_manifest = die
sys.exit(main(argv))
'''
KILL_POINTS = ("mid-write", "after-append", "before-replace", "before-manifest")


def kill_at(point: str, store: Path, *argv: str, frac: float = 0.5) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KILLER, point, str(frac), "--store", str(store), *argv],
                          capture_output=True, env=subprocess_env(), timeout=120)


def injected_crash_trials(store: Path, work: Path, *, trials: int, seed: int) -> CrashStats:
    """Kills at the worst points on purpose, cycling through KILL_POINTS: inside the log
    append's write() after a seeded random share of its bytes, right after a durable append,
    before a snapshot's rename, between an index commit and its manifests."""
    import json

    make_store(store) if not store.exists() else None
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    stats = CrashStats()
    seen: set[str] = set()
    for trial in range(trials):
        point = KILL_POINTS[trial % len(KILL_POINTS)]
        now = head_at(store)
        lines = [{"text": f"injected {seed} trial {trial} line {i} token{rng.getrandbits(40):010x} "
                          + "z" * rng.randint(0, 2000)} for i in range(rng.randint(1, 300))]
        bulk = work / f"bulk{trial}.jsonl"
        bulk.write_text("".join(json.dumps(o) + "\n" for o in lines))
        if point in ("mid-write", "after-append"):
            argv = ["remember", "--jsonl", str(bulk), "--now", now]
        elif point == "before-replace":
            argv = ["snapshot", "--now", now]
        else:
            assert cli("--store", store, "remember", "--jsonl", bulk, "--now", now)[0] == 0
            argv = ["index", "--now", now]
        p = kill_at(point, store, *argv, frac=rng.random())
        stats.trials += 1
        stats.killed_during[point] = stats.killed_during.get(point, 0) + 1
        if p.returncode != -9:
            stats.failures.append(f"trial {trial} ({point}): rc {p.returncode}: {p.stderr[-500:]!r}")
            continue
        _after_kill(store, p.stdout, trial, stats, seen)
    events, bad = log_events(store)
    stats.events = len(events)
    stats.corrupt_lines += bad
    stats.distinct_ids = len(seen)
    return stats


# --- concurrency ----------------------------------------------------------------------------

WRITER = r'''
import sys
sys.stdout.reconfigure(line_buffering=True)
from memstore_cli.main import main
store, w, n, now = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
subjects = ["billing", "deploys", "coffee", None]
for i in range(n):
    argv = ["--store", store, "remember", f"writer {w} memory {i} unique w{w}i{i}", "--now", now]
    if subjects[i % 4]:
        argv += ["--subject", subjects[i % 4]]
    rc = main(argv)
    if rc != 0:
        sys.exit(10 + rc)
'''

LOOP = r'''
import os, sys
from memstore_cli.main import main
store, stop, now, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
runs = 0
while not os.path.exists(stop) or runs == 0:
    rc = main(["--store", store, "--quiet", *command, "--now", now])
    if rc not in (0,):
        sys.stderr.write(f"# FAILED rc={rc}\n")
        sys.exit(3)
    runs += 1
print(runs)
'''


@dataclass
class ConcurrencyStats:
    writers: int
    per_writer: int
    acknowledged: int = 0
    present_once: int = 0
    duplicates: int = 0
    missing: int = 0
    corrupt_lines: int = 0
    seq_problems: int = 0
    consolidate_runs: int = 0
    recall_runs: int = 0
    seconds: float = 0.0
    deadlock: bool = False
    failures: list[str] = field(default_factory=list)

    def figures(self) -> dict:
        return {"writers": self.writers, "per_writer": self.per_writer,
                "writes_acknowledged": self.acknowledged, "present_exactly_once": self.present_once,
                "duplicates": self.duplicates, "writes_lost": self.missing,
                "corrupt_lines": self.corrupt_lines, "seq_problems": self.seq_problems,
                "consolidate_runs": self.consolidate_runs, "recall_runs": self.recall_runs,
                "seconds": round(self.seconds, 1), "deadlock": self.deadlock, "failures": len(self.failures)}


def concurrency_run(store: Path, *, writers: int, per_writer: int, timeout: float) -> ConcurrencyStats:
    make_store(store)
    stop = store.parent / f"{store.name}.stop"
    stop.unlink(missing_ok=True)
    now = T0
    env = subprocess_env()
    stats = ConcurrencyStats(writers, per_writer)
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(w), str(per_writer), now],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for w in range(writers)]
    loops = {name: subprocess.Popen([sys.executable, "-c", LOOP, str(store), str(stop), now, *cmd],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for name, cmd in (("consolidate", ["consolidate"]),
                               ("recall", ["recall", "writer memory unique", "--k", "5"]))}
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, timeout - (time.monotonic() - start)))
            outs.append(out)
            if p.returncode != 0:
                stats.failures.append(f"writer rc {p.returncode}: {err.decode(errors='replace')[-500:]}")
        stop.touch()
        for name, p in loops.items():
            out, err = p.communicate(timeout=max(1.0, timeout - (time.monotonic() - start)))
            if p.returncode != 0:
                stats.failures.append(f"{name} loop rc {p.returncode}: {err.decode(errors='replace')[-500:]}")
            elif name == "consolidate":
                stats.consolidate_runs = int(out.split()[-1])
            else:
                stats.recall_runs = int(out.split()[-1])
    except subprocess.TimeoutExpired:
        stats.deadlock = True
        stats.failures.append(f"no progress within {timeout} s (deadlock?)")
        for p in [*procs, *loops.values()]:
            p.kill()
            p.communicate()
        return stats
    finally:
        stop.unlink(missing_ok=True)
    stats.seconds = time.monotonic() - start
    printed = [line for out in outs for line in out.decode().split("\n") if ID_LINE.match(line)]
    stats.acknowledged = len(printed)
    events, bad = log_events(store)
    stats.corrupt_lines = bad
    seqs = [e.get("seq") for e in events]
    stats.seq_problems = sum(1 for a, b in zip([0, *seqs], seqs, strict=False) if b != a + 1)
    adds: dict[str, int] = {}
    for e in events:
        if e.get("op") == "remember":
            adds[e["memory"]["id"]] = adds.get(e["memory"]["id"], 0) + 1
    stats.present_once = sum(1 for i in set(printed) if adds.get(i) == 1)
    stats.duplicates = sum(n - 1 for n in adds.values() if n > 1) + (len(printed) - len(set(printed)))
    stats.missing = sum(1 for i in set(printed) if i not in adds)
    expected = writers * per_writer
    if stats.acknowledged != expected or stats.present_once != expected or len(adds) != expected:
        stats.failures.append(f"{stats.acknowledged} acknowledged, {stats.present_once} present once, "
                              f"{len(adds)} remember events; expected {expected}")
    return stats


# --- races through the library API (memstore.api.Store, not the CLI) -------------------------

API_WRITER = r'''
import sys, time
from memstore.api import Store
root, text, key, start, now = sys.argv[1:6]
store = Store(root)  # reads the config (none yet for a missing store) before the race
while time.time() < float(start):  # all writers leave the barrier together
    pass
print(store.remember(text, key=key or None, now=now))
'''


@dataclass
class RaceStats:
    runs: int = 0
    writers: int = 0
    calls_failed: int = 0
    wrong_count: int = 0  # runs whose store did not end with the expected number of records
    ids_disagree: int = 0  # same-key runs whose callers were told different ids
    failures: list[str] = field(default_factory=list)

    def figures(self) -> dict:
        return {"runs": self.runs, "writers_per_run": self.writers, "calls_failed": self.calls_failed,
                "runs_with_wrong_record_count": self.wrong_count, "same_key_ids_disagree": self.ids_disagree,
                "failures": len(self.failures)}


def _api_writers(root: Path, texts: list[str], key: str, seed: int, env: dict) -> list[tuple[int, str, str]]:
    rng = random.Random(seed)
    start = time.time() + 1.5  # past every writer's interpreter start-up (2 cores, 4 processes)
    procs = [subprocess.Popen([sys.executable, "-c", API_WRITER, str(root), t, key,
                               repr(start + rng.random() * 0.002), T0],  # jitter: vary interleavings
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for t in texts]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        results.append((p.returncode, out.decode().strip(), err.decode(errors="replace")[-300:]))
    return results


def api_races(work: Path, *, runs: int, writers: int = 4, seed: int = 20260607) -> dict[str, RaceStats]:
    """Two races through ``memstore.api.Store`` from ``writers`` processes at once, ``runs`` times each:

    - same_key: each process remembers a different text with the same key on a new store (half
      the runs: a missing directory; half: one holding a memory already) -> exactly one record
      for the key, and every caller told its id;
    - first_writes: each process remembers its own text into a missing store directory ->
      every call succeeds and the store holds one record per process."""
    from memstore.api import Store

    env = subprocess_env()
    same, first = RaceStats(writers=writers), RaceStats(writers=writers)
    for run in range(runs):
        root = work / f"key{run}"
        if run % 2:
            make_store(root)
            Store(root).remember("an older memory on the store", now=T0)
        texts = [f"writer {w} of run {run} claims the key" for w in range(writers)]
        results = _api_writers(root, texts, "k1", seed + run, env)
        same.runs += 1
        failed = [r for r in results if r[0] != 0]
        same.calls_failed += len(failed)
        same.failures += [f"same_key run {run}: rc {rc}: {err}" for rc, _o, err in failed]
        state = Store(root).state()
        holders = [m for m in state.memories.values() if m.key == "k1"]
        if len(holders) != 1:
            same.wrong_count += 1
            same.failures.append(f"same_key run {run}: {len(holders)} records carry key k1")
        if len({out for rc, out, _e in results if rc == 0}) > 1 or (holders and any(
                out != holders[0].id for rc, out, _e in results if rc == 0)):
            same.ids_disagree += 1
            same.failures.append(f"same_key run {run}: callers were told {sorted({r[1] for r in results})}")

        root = work / f"first{run}" / "nested" / "store"  # neither it nor its parent exists yet
        texts = [f"first write {w} of run {run}" for w in range(writers)]
        results = _api_writers(root, texts, "", seed + 7919 * (run + 1), env)
        first.runs += 1
        failed = [r for r in results if r[0] != 0]
        first.calls_failed += len(failed)
        first.failures += [f"first_writes run {run}: rc {rc}: {err}" for rc, _o, err in failed]
        if not failed and len(Store(root).state().memories) != writers:
            first.wrong_count += 1
            first.failures.append(f"first_writes run {run}: {len(Store(root).state().memories)} records")
    return {"same_key": same, "first_writes": first}


def mount(*args: str) -> bool:
    """``mount ARGS`` where the machine allows it (tests run as root here); False otherwise."""
    try:
        return subprocess.run(["mount", *args], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=20)
