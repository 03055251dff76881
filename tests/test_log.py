"""The append-only log: appends, seq, partitions, torn tails, quarantine, locking, permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import MEMSTORE, NOW, log_lines, store_digest, write_jsonl

from memstore.codec import dumps, dumps_line
from memstore.errors import NonMonotonicTime, StoreError
from memstore.fold import fold
from memstore.model import memory_id
from memstore.state import digest
from memstore.store.fs import exclusive_lock
from memstore.store.layout import Layout
from memstore.store.log import LogReader, append, log_files, read_head
from memstore.store.open import load_state


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def ev(n: int, at: str = NOW) -> dict:
    return {"op": "recall", "at": at, "ids": [f"m{n:015x}"]}


# --- append ---------------------------------------------------------------------------------

def test_append_assigns_consecutive_seqs_and_writes_canonical_lines(store):
    layout = Layout(store)
    assert append(layout, [ev(1), ev(2)], NOW) == [1, 2]
    assert append(layout, [ev(3)], NOW) == [3]
    assert append(layout, [], NOW) == []
    raw = (store / "log" / "2026-06.jsonl").read_bytes()
    assert raw.splitlines()[0] == b'{"at":"2026-06-07T09:30:00Z","ids":["m000000000000001"],"op":"recall","seq":1}'
    assert [e["seq"] for e in LogReader(layout).events()] == [1, 2, 3]
    assert read_head(layout).seq == 3 and read_head(layout).at == NOW


def test_append_rejects_an_earlier_now(store):
    layout = Layout(store)
    append(layout, [ev(1)], NOW)
    before = store_digest(store)
    with pytest.raises(NonMonotonicTime, match="earlier than the store's latest record time"):
        append(layout, [ev(2)], "2026-06-07T09:29:59Z")
    assert store_digest(store) == before
    assert append(layout, [ev(2)], "2026-06-07T09:29:59Z", allow_past=True) == [2]


def test_an_unserialisable_event_writes_nothing(store):
    layout = Layout(store)
    append(layout, [ev(1)], NOW)
    before = store_digest(store)
    with pytest.raises(TypeError):
        append(layout, [ev(2), {"op": "recall", "at": NOW, "ids": {1, 2}}], NOW)
    assert store_digest(store) == before


def test_seq_strictly_increases_across_month_partitions(ms, store):
    times = ["2026-06-30T23:59:59Z", "2026-07-01T00:00:00Z", "2026-07-31T12:00:00Z", "2026-08-15T00:00:00Z"]
    for n, now in enumerate(times):
        assert ms("remember", f"note number {n}", now=now).rc == 0
    assert [p.name for p in log_files(Layout(store))] == ["2026-06.jsonl", "2026-07.jsonl", "2026-08.jsonl"]
    # a permitted backdated write goes to the newest partition, never an older one
    assert ms("remember", "a late July note", "--allow-past", now="2026-07-10T00:00:00Z").rc == 0
    per_file = {p.name: [json.loads(x)["seq"] for x in p.read_bytes().splitlines()]
                for p in log_files(Layout(store))}
    assert per_file == {"2026-06.jsonl": [1], "2026-07.jsonl": [2, 3], "2026-08.jsonl": [4, 5]}
    seqs = [e["seq"] for e in log_lines(store)]
    assert seqs == sorted(set(seqs)) == [1, 2, 3, 4, 5]
    assert read_head(Layout(store)).seq == 5


def test_concurrent_writers_never_share_a_seq(store, tmp_path):
    procs = []
    for w in range(4):
        bulk = write_jsonl(tmp_path / f"w{w}.jsonl", *({"text": f"writer {w} line {i}"} for i in range(25)))
        procs.append(subprocess.Popen([str(MEMSTORE), "--store", str(store), "-q", "remember", "--jsonl",
                                       str(bulk), "--now", NOW], stdout=subprocess.DEVNULL))
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    events = log_lines(store)
    assert [e["seq"] for e in events] == list(range(1, 101))
    for w in range(4):  # each writer's lines are contiguous: one locked append each
        seqs = [e["seq"] for e in events if e["memory"]["text"].startswith(f"writer {w} ")]
        assert seqs == list(range(seqs[0], seqs[0] + 25))


# --- readers and torn tails -----------------------------------------------------------------

TORN = b'{"at":"2026-06-07T09:31:00Z","memory":{"id":"m1'


def test_a_torn_final_line_is_ignored_by_readers_and_quarantined_by_the_next_writer(ms, store):
    ms("remember", "first note")
    ms("remember", "second note")
    log = store / "log" / "2026-06.jsonl"
    good = log.read_bytes()
    with open(log, "ab") as fh:
        fh.write(TORN)
    reader = LogReader(Layout(store))
    assert [e["seq"] for e in reader.events()] == [1, 2]
    assert [(p.path, p.line, p.message) for p in reader.problems] == [(log, 3, "torn final line (ignored)")]
    before = store_digest(store)
    export = ms("export")
    assert export.rc == 0 and len(export.lines) == 2
    assert ms("log").rc == 0 and ms("show", memory_id("first note", None, None)).rc == 0
    assert store_digest(store) == before  # readers change nothing
    head = read_head(Layout(store))
    assert head.seq == 2 and head.torn == (log, len(good), len(TORN))

    r = ms("remember", "third note")
    assert r.rc == 0
    quarantined = store / "log" / "quarantine" / f"2026-06.{len(good)}.torn"
    assert quarantined.read_bytes() == TORN
    assert mode(store / "log" / "quarantine") == 0o700 and mode(quarantined) == 0o600
    raw = log.read_bytes()
    assert raw.startswith(good) and raw.endswith(b"\n")
    assert [json.loads(line)["seq"] for line in raw.splitlines()] == [1, 2, 3]
    reader = LogReader(Layout(store))
    assert len(list(reader.events())) == 3 and reader.problems == []


def test_a_log_file_holding_only_a_fragment(ms, store):
    (store / "log").mkdir(parents=True)
    (store / "log" / "2026-06.jsonl").write_bytes(b'{"partial')
    assert ms("export").out == ""
    assert ms("remember", "first note").rc == 0
    assert (store / "log" / "quarantine" / "2026-06.0.torn").read_bytes() == b'{"partial'
    assert [e["seq"] for e in log_lines(store)] == [1]


def test_a_torn_tail_before_a_snapshot_and_a_write(ms, store):
    ms("remember", "first note")
    with open(store / "log" / "2026-06.jsonl", "ab") as fh:
        fh.write(TORN)
    assert ms("snapshot").rc == 0
    ms("remember", "second note", now="2026-07-01T00:00:00Z")
    ms("remember", "third note", now="2026-07-01T00:00:00Z")
    layout = Layout(store)
    assert digest(load_state(layout)[0]) == digest(load_state(layout, use_snapshots=False)[0])
    assert len(ms("export").lines) == 3


def test_a_malformed_complete_line_is_skipped_and_reported(store):
    layout = Layout(store)
    append(layout, [ev(1)], NOW)
    log = store / "log" / "2026-06.jsonl"
    with open(log, "ab") as fh:
        fh.write(b"this is not json\n")
    before = log.read_bytes()
    with pytest.raises(StoreError, match=r"log/2026-06.jsonl:2\) is not a well-formed event; nothing was written"):
        append(layout, [ev(2)], NOW)  # a writer never continues after a line it cannot read
    assert log.read_bytes() == before
    with open(log, "ab") as fh:  # damage in the middle of the log: readers skip it and say so
        fh.write(dumps_line({**ev(2), "seq": 2}) + b"[1, 2]\n" + dumps_line({**ev(3), "seq": 3}))
    reader = LogReader(layout)
    assert [e["seq"] for e in reader.events()] == [1, 2, 3]
    assert [(p.line, p.message) for p in reader.problems] == [
        (2, "line is not valid JSON"), (4, "line is not a JSON object")]


def test_a_tail_whose_seq_does_not_follow_is_refused(store):
    layout = Layout(store)
    append(layout, [ev(1), ev(2), ev(3)], NOW)
    log = store / "log" / "2026-06.jsonl"
    lines = log.read_bytes().split(b"\n")[:-1]
    for bad in (0, 2, -5, True, None, "4"):
        log.write_bytes(b"\n".join(lines[:-1] + [lines[-1].replace(b'"seq":3', dumps({"seq": bad})[1:-1])]) + b"\n")
        before = log.read_bytes()
        with pytest.raises(StoreError, match=r"2026-06.jsonl:3\)"):
            append(layout, [ev(4)], NOW)
        assert log.read_bytes() == before
        assert [e["seq"] for e in LogReader(layout).events()] == [1, 2]


def test_state_is_a_fold_of_the_log(ms, store):
    ms("remember", "hello world note")
    ms("remember", "hello world note", now="2026-06-08T00:00:00Z")
    ms("remember", "another memory", "--key", "k", now="2026-06-08T00:00:00Z")
    state, reader = load_state(Layout(store), use_snapshots=False)
    assert digest(state) == digest(fold(log_lines(store)))
    assert state.seq == 3 and state.at == "2026-06-08T00:00:00Z" and reader.problems == []
    assert state.resolve("k").text == "another memory"


# --- locking and permissions ----------------------------------------------------------------

def test_readers_do_not_take_the_lock(ms, store):
    ms("remember", "hello world note")
    layout = Layout(store)
    with exclusive_lock(layout.lock_path) as held:
        assert held
        with exclusive_lock(layout.lock_path, blocking=False) as second:
            assert second is False  # a second writer would wait
        assert len(load_state(layout)[0].memories) == 1
        assert [e["seq"] for e in LogReader(layout).events()] == [1]


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_files_are_0600_and_directories_0700(ms, store, umask):
    old = os.umask(umask)
    try:
        ms("remember", "hello world note")
        with open(store / "log" / "2026-06.jsonl", "ab") as fh:
            fh.write(TORN)
        ms("remember", "a July note", now="2026-07-01T00:00:00Z")
        ms("snapshot", now="2026-07-01T00:00:00Z")
    finally:
        os.umask(old)
    paths = [store, *store.rglob("*")]
    assert {p.name for p in paths} >= {".lock", "log", "quarantine", "snapshots", "2026-06.jsonl", "2026-07.jsonl"}
    for path in paths:
        expected = 0o700 if path.is_dir() else 0o600
        assert mode(path) == expected, (path, oct(mode(path)))


def test_log_files_ignore_foreign_names(store):
    layout = Layout(store)
    append(layout, [ev(1)], NOW)
    (store / "log" / "notes.txt").write_text("not a log")
    (store / "log" / "2026-06.jsonl.bak").write_text("not a log")
    assert [p.name for p in log_files(layout)] == ["2026-06.jsonl"]
    assert isinstance(log_files(Layout(Path(store) / "missing")), list)
