"""Concurrency: writers, consolidate and recall at once; readers never wait on writers;
concurrent decide-then-append commands (consolidate, remember --key) behave like one,
through the CLI and through the library API (memstore.api.Store) alike.

The full counts (4 writers x 500, 40 library race runs) run in `python bench/reliability.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_support import (
    MEMSTORE_SCRIPT,
    api_races,
    cli,
    concurrency_run,
    log_events,
    make_store,
    subprocess_env,
)

from memstore.store.fs import exclusive_lock
from memstore.store.layout import Layout

T = "2026-06-07T09:00:00Z"


def test_writers_consolidate_and_recall_at_once(tmp_path):
    store = tmp_path / "store"
    stats = concurrency_run(store, writers=4, per_writer=100, timeout=150)
    assert stats.failures == [] and not stats.deadlock
    assert stats.acknowledged == stats.present_once == 400
    assert stats.duplicates == stats.missing == stats.corrupt_lines == stats.seq_problems == 0
    assert stats.consolidate_runs >= 1 and stats.recall_runs >= 1
    rc, out, err = cli("--store", store, "verify")
    assert (rc, out) == (0, ""), err


def test_library_api_races_same_key_and_first_writes(tmp_path):
    """4 processes calling Store.remember at once: the same key gives exactly one record (and
    every caller its id), and first writes into a missing store directory all succeed."""
    races = api_races(tmp_path, runs=4, writers=4, seed=20261130)
    for name, stats in races.items():
        assert stats.failures == [], (name, stats.failures)
        assert (stats.runs, stats.calls_failed, stats.wrong_count, stats.ids_disagree) == (4, 0, 0, 0), name


def test_threads_creating_one_directory_at_once_all_succeed(tmp_path):
    """ensure_dir under contention. The check-then-create it replaced (memstore 0.1.0's
    store/fs.py) failed in 45 and 79 of 300 rounds of this loop in two runs: another thread's
    mkdir landed between its is_dir() and exists() ("... is a file, not a directory").
    A tiny switch interval makes the interleaving likely."""
    import threading

    from memstore.errors import StoreError
    from memstore.store.fs import ensure_dir

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    failed = []
    try:
        for n in range(150):
            path, gate = tmp_path / f"s{n}" / "log", threading.Barrier(8)

            def create(path=path, gate=gate):
                gate.wait()
                try:
                    ensure_dir(path)
                except StoreError as exc:
                    failed.append(str(exc))

            threads = [threading.Thread(target=create) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert path.is_dir() and (path.stat().st_mode & 0o777) == 0o700
    finally:
        sys.setswitchinterval(old)
    assert failed == []


def memstore(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, MEMSTORE_SCRIPT, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=subprocess_env())


def waiters(lock: Path) -> int | None:
    """How many processes wait for this flock (from /proc/locks); None where unknown."""
    try:
        text = Path("/proc/locks").read_text()
    except OSError:
        return None
    ino = os.stat(lock).st_ino
    return sum(1 for line in text.splitlines()
               if "->" in line and "FLOCK" in line and line.split()[-3].split(":")[-1] == str(ino))


def wait_for_waiters(lock: Path, n: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = waiters(lock)
        if got is None:
            time.sleep(3.0)  # no /proc/locks: give them time to reach the lock
            return
        if got >= n:
            return
        time.sleep(0.05)
    pytest.fail(f"{n} processes did not reach the store lock within {timeout} s")


@pytest.fixture
def store(tmp_path) -> Path:
    s = make_store(tmp_path / "store")
    assert cli("--store", s, "remember", "a first memory", "--now", T)[0] == 0
    return s


def test_readers_do_not_wait_for_a_writer_holding_the_lock(store):
    assert cli("--store", store, "recall", "memory", "--no-touch", "--now", T)[0] == 0
    before = log_events(store)
    with exclusive_lock(Layout(store).lock_path):
        for argv in (["recall", "first memory", "--no-touch"], ["show", "a first memory"], ["stats"],
                     ["export"], ["log"], ["verify"]):
            if argv[0] == "show":
                argv = ["show", json.loads(cli("--store", store, "export", "--now", T)[1].splitlines()[0])["id"]]
            start = time.monotonic()
            p = subprocess.run([sys.executable, MEMSTORE_SCRIPT, "--store", str(store), *argv, "--now", T],
                               capture_output=True, env=subprocess_env(), timeout=20)
            assert p.returncode == 0, (argv, p.stderr)
            assert time.monotonic() - start < 10
        # a recall that would record its usage gives up on that after about a second
        start = time.monotonic()
        p = subprocess.run([sys.executable, MEMSTORE_SCRIPT, "--store", str(store), "recall", "first memory",
                            "--now", T], capture_output=True, env=subprocess_env(), timeout=20)
        assert p.returncode == 0 and b"a first memory" in p.stdout
        assert p.stderr.decode().startswith("usage not recorded: another writer held the store lock")
        assert time.monotonic() - start < 10
    assert log_events(store) == before


def events_without_seq(store: Path) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "seq"} for e in log_events(store)[0]]


def test_two_concurrent_consolidates_append_what_one_would(store, tmp_path):
    """Both decide on the same state; the second to get the lock sees the log moved, decides
    again, and appends nothing: the log equals one consolidate's."""
    for i in range(3):
        assert cli("--store", store, "remember", f"billing moved to postgres, note {i}", "--subject", "billing",
                   "--now", T)[0] == 0
        assert cli("--store", store, "remember", f"expiring short note {i}", "--now", T)[0] == 0
    later = "2026-06-25T03:00:00Z"
    ref = tmp_path / "ref"
    shutil.copytree(store, ref)
    assert cli("--store", ref, "consolidate", "--now", later)[0] == 0
    one = events_without_seq(ref)
    assert len(one) > len(events_without_seq(store))  # consolidate has something to do
    lock = Layout(store).lock_path
    with exclusive_lock(lock):
        procs = [memstore("--store", str(store), "consolidate", "--now", later) for _ in range(2)]
        wait_for_waiters(lock, 2)
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert events_without_seq(store) == one
    assert sorted(b"nothing to do" in err for _out, err in outs) == [False, True]
    assert cli("--store", store, "verify")[0] == 0


def test_concurrent_writes_of_the_same_key_or_text_add_once(store):
    lock = Layout(store).lock_path
    with exclusive_lock(lock):
        procs = [memstore("--store", str(store), "remember", text, "--key", "ext-1", "--now", T)
                 for text in ("the first text for ext-1", "another text for ext-1")]
        procs += [memstore("--store", str(store), "remember", "the same text twice", "--now", T) for _ in range(2)]
        wait_for_waiters(lock, 4)
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    ids = [out.decode().strip() for out, _err in outs]
    assert ids[0] == ids[1] and ids[2] == ids[3]
    events = log_events(store)[0]
    adds = [e for e in events if e["op"] == "remember"]
    assert sum(1 for e in adds if e["memory"].get("key") == "ext-1") == 1
    assert sum(1 for e in adds if e["memory"]["text"] == "the same text twice") == 1
    assert sum(1 for e in events if e["op"] == "reinforce") == 1
