"""Reads that cost what they return (issue [6/6]): `show`, `stats` and `log --limit/--since`
answer from the records index plus the log after its watermark, or from the log's end,
and must say exactly what the fold of the whole log says.

The store holds every kind of event (reinforcements with keys, merges, supersessions,
conflicts, a person's resolution, expiry, promotion, distillation, recall usage, forget),
part of it indexed and part of it only in the log (the index's tail). Each answer is
compared with the same command on a copy without its index, which must fold.
"""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability_support import cli, make_store
from test_lifecycle_year import requests

START = date(2026, 1, 1)


def _day(d: int) -> str:
    return (START + timedelta(days=d)).isoformat() + "T18:00:00Z"


def _run(store: Path, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    return cli("--store", str(store), *argv, stdin=stdin)


BELIEFS = {  # conflicts, some settled automatically, before and after the index's watermark
    10: {"text": "We deploy on Fridays", "subject": "deploys", "kind": "decision"},
    12: {"text": "We never deploy on Fridays", "subject": "deploys", "kind": "decision"},
    75: {"text": "Alice is the billing lead"},
    80: {"text": "Bob is the billing lead now"},
    85: {"text": "The office is in Berlin", "subject": "office", "kind": "fact"},
    90: {"text": "The office is not in Berlin anymore", "subject": "office", "kind": "fact"},
    95: {"text": "We ship on Mondays", "subject": "shipping", "kind": "decision"},
    97: {"text": "We never ship on Mondays", "subject": "shipping", "kind": "decision"},
}


def _live(store: Path, days: range) -> None:
    reqs = requests()
    for d in days:
        rows = reqs.get(d, []) + ([BELIEFS[d]] if d in BELIEFS else [])
        if d % 3 == 0:  # keys, and a repeat that reinforces under another key
            rows = [*rows, {"text": f"Ticket {d % 7} is open", "key": f"ticket-{d}"}]
        if rows:
            code, out, err = _run(store, "remember", "--jsonl", "-", "--now", _day(d),
                                  stdin="\n".join(json.dumps(r) for r in rows).encode())
            assert code == 0, err
        assert _run(store, "consolidate", "--now", _day(d))[0] == 0
        if d % 7 == 6:
            assert _run(store, "distill", "--now", _day(d))[0] == 0
        if d % 10 == 5:
            assert _run(store, "recall", "friday deploy", "--now", _day(d))[0] == 0


def _snapshotted(path: Path, snapshot: int, until: int) -> Path:
    """A store lived through days 0 to ``until`` (``_live``), snapshotted on day ``snapshot``."""
    store = make_store(path)
    _live(store, range(0, snapshot))
    assert _run(store, "snapshot", "--now", _day(snapshot))[0] == 0
    _live(store, range(snapshot, until))
    return store


def indexed(path: Path, live, day: int, until: int) -> Path:
    """A store ``live`` lived through days 0 to ``until``, its indexes built on ``day``: the
    days after it are the records index's tail."""
    store = make_store(path)
    live(store, range(0, day))
    assert _run(store, "index", "--now", _day(day))[0] == 0
    live(store, range(day, until))
    return store


def without_indexes(store: Path, path: Path) -> Path:
    """A copy of ``store`` without its indexes and snapshots: every read folds the log."""
    shutil.copytree(store, path, ignore=shutil.ignore_patterns("index", "snapshots"))
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    """(an indexed store with a tail after its index, the same store without an index)."""
    base = tmp_path_factory.mktemp("reads")
    # (the records index's tail: consolidations, merges, new keys)
    store = indexed(base / "s", _live, 70, 100)
    code, out, _ = _run(store, "conflicts", "--json", "--now", _day(100))
    conflicts = json.loads(out)["conflicts"] if code == 0 and out.strip() else []
    if conflicts:
        first = conflicts[0]
        assert _run(store, "conflicts", "resolve", first["id"], "--keep", "new", "--now", _day(100))[0] == 0
    ids = _ids(store)
    assert _run(store, "forget", ids[3], "--now", _day(100))[0] == 0
    return store, without_indexes(store, base / "bare")


def _ids(store: Path) -> list[str]:
    code, out, err = _run(store, "export", "--now", _day(100))
    assert code == 0, err
    return [json.loads(line)["id"] for line in out.splitlines() if line.strip()]


def test_the_index_has_a_tail_and_is_used(stores):
    store, _bare = stores
    from memstore.index.current import open_current
    from memstore.store.layout import Layout

    current = open_current(Layout(store))
    assert current is not None
    assert current.overlay  # the log moved on after the index: the tail is folded per read


@pytest.mark.parametrize("now", ["2026-04-11T00:00:00Z", "2026-07-01T00:00:00Z", "2027-06-01T00:00:00Z"])
def test_stats_equals_the_fold(stores, now):
    store, bare = stores
    fast, slow = _run(store, "stats", "--json", "--now", now), _run(bare, "stats", "--json", "--now", now)
    assert fast == slow
    assert json.loads(fast[1])["memories"] > 50
    assert _run(store, "stats", "--now", now) == _run(bare, "stats", "--now", now)


def test_show_equals_the_fold_for_every_record(stores):
    store, bare = stores
    ids = _ids(bare)
    assert len(ids) > 50
    for mid in ids:
        assert _run(store, "show", mid, "--json", "--now", _day(101)) == _run(bare, "show", mid, "--json", "--now", _day(101))
    assert _run(store, "show", ids[5], "--explain", "--now", _day(101)) == \
        _run(bare, "show", ids[5], "--explain", "--now", _day(101))


def test_show_reads_only_the_lines_its_record_names(stores, monkeypatch):
    """The records index names each record's events by seq; `show` reads those lines (found by
    bisecting the log) and the tail after the watermark, never a scan of the log."""
    from memstore.store import lookup

    store, bare = stores
    ids = _ids(bare)
    want = {mid: _run(bare, "show", mid, "--json", "--now", _day(101)) for mid in ids[::4]}

    def no_scan(*_a, **_k):
        raise AssertionError("show scanned the log")

    monkeypatch.setattr(lookup, "lines_with", no_scan)
    monkeypatch.setattr(lookup, "scanned_events", no_scan)
    for mid, expected in want.items():
        assert _run(store, "show", mid, "--json", "--now", _day(101)) == expected, mid
    assert any(len(json.loads(out)["events"]) > 2 for _code, out, _err in want.values())


def test_show_after_the_index_applied_what_changes_records_it_does_not_name(tmp_path, stores):
    """Once the index has applied the whole log (its tail's merges, resolve and forget
    included), `show` answers from the index's event lists alone and equals the fold for every
    record. (A record changed by an event that does not name it: the next test.)"""
    store, bare = stores
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    assert _run(copy, "index", "--now", _day(101))[0] == 0
    from memstore.index.current import open_current
    from memstore.store.layout import Layout

    assert not open_current(Layout(copy)).overlay  # all applied
    for mid in _ids(bare):
        assert _run(copy, "show", mid, "--json", "--now", _day(101)) == _run(bare, "show", mid, "--json", "--now", _day(101)), mid


def test_a_record_a_forget_changes_without_naming_it_keeps_its_events(tmp_path):
    """Forgetting one side of an open conflict closes it on the other side, which the forget
    event does not name: once indexed, the other side still lists its own events."""
    store = make_store(tmp_path / "s")
    for day, text in ((1, "We deploy on Fridays"), (2, "We never deploy on Fridays")):
        row = {"text": text, "subject": "deploys", "kind": "decision"}
        assert _run(store, "remember", "--jsonl", "-", "--now", _day(day), stdin=json.dumps(row).encode())[0] == 0
    assert _run(store, "consolidate", "--now", _day(3))[0] == 0
    code, out, err = _run(store, "conflicts", "--json")
    conflict = json.loads(out)["conflicts"][0]
    assert _run(store, "index", "--now", _day(3))[0] == 0
    assert _run(store, "forget", conflict["old"], "--now", _day(4))[0] == 0
    assert _run(store, "index", "--now", _day(4))[0] == 0
    bare = tmp_path / "bare"
    shutil.copytree(store, bare, ignore=shutil.ignore_patterns("index"))
    fast = _run(store, "show", conflict["new"], "--json", "--now", _day(5))
    assert fast == _run(bare, "show", conflict["new"], "--json", "--now", _day(5))
    assert [e["op"] for e in json.loads(fast[1])["events"]][:2] == ["remember", "conflict"]


def test_show_falls_back_when_a_line_it_names_is_damaged(tmp_path, stores):
    """A line the index names that is no longer that event (edited, garbled): the index
    holds the record as the log no longer tells it, so the fold answers, as without the
    index (it says what it skipped)."""
    store, bare = stores
    ids = _ids(bare)
    shown = {mid: json.loads(_run(store, "show", mid, "--json")[1])["events"] for mid in ids[:40]}
    mid = next(m for m, events in shown.items() if len(events) > 2)
    seq = shown[mid][1]["seq"]  # a later event of the record, not the one that created it
    copies = []
    for name, src in (("c", store), ("b", bare)):
        copy = tmp_path / name
        shutil.copytree(src, copy)
        part = sorted((copy / "log").glob("*.jsonl"))[0]
        lines = part.read_bytes().split(b"\n")
        at = next(i for i, line in enumerate(lines) if line and json.loads(line)["seq"] == seq)
        lines[at] = b'{"garbled": ' + b"x" * max(0, len(lines[at]) - 13) + b"}"
        part.write_bytes(b"\n".join(lines))
        copies.append(copy)
    for ref in (mid, ids[9], ids[-1]):
        got = _run(copies[0], "show", ref, "--json", "--now", _day(101))
        assert got == _run(copies[1], "show", ref, "--json", "--now", _day(101)), ref
        assert got[0] == 0 and "Traceback" not in got[2]
        assert "skipped 1 damaged log line" in got[2]
    left = [e["seq"] for e in json.loads(_run(copies[0], "show", mid, "--json")[1])["events"]]
    assert left == [e["seq"] for e in shown[mid] if e["seq"] != seq]


def test_show_by_key_equals_the_fold(stores):
    store, bare = stores
    for key in ("ticket-0", "ticket-3", "ticket-72", "ticket-99", "ticket-1"):  # ticket-1 was never written
        assert _run(store, "show", key, "--json") == _run(bare, "show", key, "--json")
    code, _out, err = _run(store, "show", "ticket-1")
    assert code != 0 and "no memory with id or key 'ticket-1'" in err


@pytest.mark.parametrize("args", [
    ("--limit", "1"), ("--limit", "7"), ("--limit", "100000"), ("--op", "expire", "--limit", "3"), ("--op", "promote", "--limit", "2"),
    ("--since", "2026-03-20"), ("--since", "2026-04-01", "--op", "remember"),
    ("--since", "2026-02-01", "--until", "2026-02-10", "--limit", "4"),
])
@pytest.mark.parametrize("keep", [None, 2])  # 2 bytes: every answer is read again forwards
def test_log_read_from_the_end_equals_the_forward_read(stores, args, keep, monkeypatch):
    from memstore_cli.commands import log

    if keep is not None:
        monkeypatch.setattr(log, "KEEP", keep)
    store, _bare = stores
    code, out, err = _run(store, "log", "--json")
    assert code == 0, err
    every = [json.loads(line) for line in out.splitlines()]
    ops = {args[i + 1] for i, a in enumerate(args) if a == "--op"}
    since = next((args[i + 1] for i, a in enumerate(args) if a == "--since"), None)
    until = next((args[i + 1] for i, a in enumerate(args) if a == "--until"), None)
    limit = next((int(args[i + 1]) for i, a in enumerate(args) if a == "--limit"), None)
    want = [e for e in every if (not ops or e["op"] in ops) and (since is None or e["at"] >= since + "T00:00:00Z")
            and (until is None or e["at"] < until + "T00:00:00Z")]
    if limit:
        want = want[-limit:]
    code, out, err = _run(store, "log", "--json", *args)
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == want
    assert want  # each case shows something


def test_log_from_the_end_falls_back_on_a_damaged_line(tmp_path, stores):
    store, _bare = stores
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    part = sorted((copy / "log").glob("*.jsonl"))[-1]
    lines = part.read_bytes().split(b"\n")
    lines[-5] = b'{"damaged": true'
    part.write_bytes(b"\n".join(lines))
    code, out, err = _run(copy, "log", "--json")
    forward = [json.loads(line) for line in out.splitlines()]
    code, out, err = _run(copy, "log", "--json", "--limit", "6")
    assert [json.loads(line) for line in out.splitlines()] == forward[-6:]


def test_a_stale_or_foreign_index_is_not_believed(tmp_path, stores):
    store, bare = stores
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    manifest = copy / "index" / "records" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["watermark"] -= 1  # set back: its anchor no longer names that line
    manifest.write_text(json.dumps(data))
    from memstore.index.current import open_current
    from memstore.store.layout import Layout

    assert open_current(Layout(copy)) is None
    assert _run(copy, "stats", "--json", "--now", _day(101)) == _run(bare, "stats", "--json", "--now", _day(101))


@pytest.mark.parametrize("args", [(), ("--all",)])
def test_conflicts_equal_the_fold(stores, args):
    store, bare = stores
    # (at one --now: the output says when it was asked, and two runs may straddle a second)
    fast = _run(store, "conflicts", "--json", "--now", _day(101), *args)
    slow = _run(bare, "conflicts", "--json", "--now", _day(101), *args)
    assert fast == slow
    assert len(json.loads(fast[1])["conflicts"]) >= (4 if args else 1)


@pytest.mark.parametrize("scan", [False, True])
def test_open_conflicts_are_read_from_their_records_events_or_a_scan(stores, monkeypatch, scan):
    """`conflicts` (open ones) reads the events of the records in an open conflict (the
    records index names them) while they are few for the log's size, never a scan of the
    log; when they are many, a scan for the conflict ops (--all always scans). Either way
    the output is the fold's."""
    from memstore import conflict_list
    from memstore.store import lookup

    store, bare = stores
    want = _run(bare, "conflicts", "--json", "--now", _day(101))
    scan_lines, scanned = lookup.lines_with, []

    def watched(layout, pattern):
        if b"conflict|resolve" in pattern:
            if not scan:
                raise AssertionError("conflicts scanned the log")
            scanned.append(pattern)
        return scan_lines(layout, pattern)

    monkeypatch.setattr(lookup, "lines_with", watched)
    monkeypatch.setattr(conflict_list, "_SCAN_PER_RECORD", 1 << 40 if scan else 0)
    assert _run(store, "conflicts", "--json", "--now", _day(101)) == want
    assert json.loads(want[1])["conflicts"]
    assert bool(scanned) == scan


def test_the_log_size_is_its_partitions_sizes(stores):
    from memstore.store.layout import Layout
    from memstore.store.lookup import log_size

    store, _bare = stores
    sizes = [p.stat().st_size for p in (store / "log").glob("*.jsonl")]
    assert log_size(Layout(store)) == sum(sizes) > 0 and len(sizes) >= 2


@pytest.mark.parametrize("block", [1, 2, 5])
def test_reads_a_block_at_a_time_equal_the_fold(stores, monkeypatch, block):
    """`conflicts` and `brief` read the records they show a block at a time (a pair's sides
    in two blocks, a side asked for again after its block is gone): the output is the
    fold's, in both forms."""
    from memstore import brief, conflict_list
    from memstore.index import records

    store, bare = stores
    monkeypatch.setattr(conflict_list, "_BLOCK", block)
    monkeypatch.setattr(brief, "_BLOCK", block)
    monkeypatch.setattr(records, "_BULK", block)  # (the mapped pages handed back after each block)
    for args in ((), ("--all",), ("--json",), ("--all", "--json")):
        want = _run(bare, "conflicts", *args, "--now", _day(101))
        assert _run(store, "conflicts", *args, "--now", _day(101)) == want, args
    assert want[1].count('"old":') >= 8  # (four conflicts at least, each naming its old side twice)
    for day in (40, 95, 101, 130):
        for form in ((), ("--json",)):
            want = _run(bare, "brief", "--no-write", *form, "--now", _day(day))
            assert _run(store, "brief", "--no-write", *form, "--now", _day(day)) == want, (day, form)


def test_export_of_named_records_equals_the_whole_export(stores):
    store, bare = stores
    code, out, err = _run(bare, "export")
    rows = {json.loads(line)["id"]: line for line in out.splitlines()}
    ids = sorted(rows)[::17]
    code, out, err = _run(store, "export", *(a for i in ids for a in ("--id", i)))
    assert code == 0, err
    assert out.splitlines() == [rows[i] for i in ids]
    assert _run(store, "export", "--id", "ticket-3") == _run(bare, "export", "--id", "ticket-3")
    code, _out, err = _run(store, "export", "--id", "nope")
    assert code != 0 and "no memory with id or key 'nope'" in err
    code, _out, err = _run(store, "export", "--id", ids[0], "--history")
    assert code == 2 and "--id exports records as jsonl" in err


def test_brief_equals_the_fold(stores):
    store, bare = stores
    seen: dict[str, int] = {}
    for day in (*range(20, 140, 6), 101):
        now = _day(day)
        fast = _run(store, "brief", "--json", "--no-write", "--now", now)
        assert fast == _run(bare, "brief", "--json", "--no-write", "--now", now), now
        for section, items in json.loads(fast[1]).items():
            if isinstance(items, list):
                seen[section] = seen.get(section, 0) + len(items)
    assert all(seen[s] for s in ("salient", "policies", "conflicts", "faded")), seen


def test_every_record_the_index_gives_is_the_fold_s(stores):
    """Including what a person's resolve brings back and what a forget closes: events that
    change records they do not name."""
    store, _bare = stores
    from memstore.index.current import open_current
    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    state, _ = load_state(Layout(store))
    current = open_current(Layout(store))
    got = current.get(sorted(state.memories))
    assert got == state.memories


def test_a_resolve_brings_back_abstractions_in_the_index(tmp_path):
    """A retired summary comes back when a person keeps its source: the index must say so."""
    store = make_store(tmp_path / "s")
    rows = [{"text": "The billing service runs on Postgres 14", "subject": "billing db", "kind": "fact"}]
    assert _run(store, "remember", "--jsonl", "-", "--now", "2026-01-01T10:00:00Z",
                stdin="\n".join(json.dumps(r) for r in rows).encode())[0] == 0
    assert _run(store, "consolidate", "--now", "2026-01-02T00:00:00Z")[0] == 0
    assert _run(store, "distill", "--now", "2027-06-01T00:00:00Z")[0] == 0  # decayed: a summary
    assert _run(store, "index", "--now", "2027-06-01T00:00:00Z")[0] == 0
    new = {"text": "The billing service does not run on Postgres 14 anymore", "subject": "billing db",
           "kind": "fact"}
    assert _run(store, "remember", "--jsonl", "-", "--now", "2027-06-02T10:00:00Z",
                stdin=json.dumps(new).encode())[0] == 0
    assert _run(store, "consolidate", "--now", "2027-06-03T00:00:00Z")[0] == 0
    assert _run(store, "index", "--now", "2027-06-03T00:00:00Z")[0] == 0
    code, out, _ = _run(store, "conflicts", "--all", "--json")
    settled = [c for c in json.loads(out)["conflicts"] if c["state"] in ("superseded", "open")]
    if not settled:
        pytest.skip("the rules did not link the two texts")
    assert _run(store, "conflicts", "resolve", settled[0]["id"], "--keep", "old", "--now", "2027-06-04T00:00:00Z")[0] == 0
    assert _run(store, "index", "--now", "2027-06-04T00:00:00Z")[0] == 0
    from memstore.index.current import open_current
    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    state, _ = load_state(Layout(store))
    assert open_current(Layout(store)).get(sorted(state.memories)) == state.memories
    assert any(m.level == "summary" and m.status == "active" for m in state.memories.values())


def test_an_index_damaged_where_only_a_read_sees_it_is_read_past(tmp_path, stores):
    """Bytes of the records index flipped with its sizes and times kept: the manifest's
    checks pass; whatever Tantivy makes of the bytes, the answer is the fold's, never a
    traceback."""
    import os

    store, bare = stores
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    for path in sorted((copy / "index" / "records").iterdir()):
        if path.suffix in (".fast", ".store"):
            st = path.stat()
            data = bytearray(path.read_bytes())
            for i in range(len(data) // 3, min(len(data), len(data) // 3 + 64)):
                data[i] ^= 0xFF
            path.write_bytes(bytes(data))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = _day(101)
    ids = _ids(bare)
    for argv in (("stats", "--json"), ("brief", "--json", "--no-write"), ("show", ids[7], "--json"),
                 ("conflicts", "--all", "--json"), ("export", "--id", ids[9])):
        got = _run(copy, *argv, "--now", now)
        assert got[0] == 0 and "Traceback" not in got[2], (argv, got[2])
        assert got[1] == _run(bare, *argv, "--now", now)[1], argv


@pytest.mark.parametrize("error", [RuntimeError("simulated Tantivy error"), OSError(5, "Input/output error")])
def test_damage_found_while_reading_the_index_falls_back_to_the_fold(stores, monkeypatch, error):
    """An index that passes every check on open and fails as it is read (a panic, an I/O
    error): each read through it answers from the fold instead (read_or_fold)."""
    from memstore.index import records

    store, bare = stores
    now = _day(101)
    ids = _ids(bare)
    want = {argv: _run(bare, *argv, "--now", now) for argv in (
        ("stats", "--json"), ("brief", "--json", "--no-write"), ("show", ids[7], "--json"),
        ("conflicts", "--all", "--json"), ("export", "--id", ids[9]))}

    from memstore.index import current as current_module

    opened = current_module.open_current
    broken = []  # set once the index has been opened and believed: every later read fails

    def open_then_break(layout):
        found = opened(layout)
        broken.append(True)
        return found

    def failing(name):
        real = getattr(records.RecordIndex, name)

        def call(self, *a, **k):
            if broken:
                raise error
            return real(self, *a, **k)
        return call

    monkeypatch.setattr(current_module, "open_current", open_then_break)
    for name in ("columns", "get", "posting", "count", "by_seqs", "events_of"):
        monkeypatch.setattr(records.RecordIndex, name, failing(name))
    for argv, expected in want.items():
        broken.clear()
        assert _run(store, *argv, "--now", now) == expected, argv
        assert broken  # the index was opened, then failed as it was read


def test_a_window_read_again_forwards_is_the_one_read_backwards(tmp_path, stores):
    """A long answer is found from the log's end, then read forwards from where its oldest
    line begins: the same events, never one appended since, and a line changed in between
    is an error, not another answer."""
    from memstore.store.backwards import Changed, newest_first, oldest_first
    from memstore.store.layout import Layout

    store, _bare = stores
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    layout = Layout(copy)
    where: list = []
    back, places = [], []
    for event in newest_first(layout, stop_month="2026-03", where=where):
        back.append(event)
        places.append(tuple(where))
    first, last = back[-1]["seq"], back[0]["seq"]
    assert places[-1][0].stem == "2026-03" and len({p[0] for p in places}) > 1 and len(back) > 100
    for (path, offset, length), event in zip(places, back, strict=True):  # where each line is
        with open(path, "rb") as fh:
            fh.seek(offset)
            line = fh.readline()
            assert len(line) == length + 1 and json.loads(line) == event
    assert list(oldest_first(layout, places[-1], first, last)) == back[::-1]
    assert list(oldest_first(layout, places[-6], first + 5, first + 9)) == back[::-1][5:10]
    assert _run(copy, "remember", "appended after the window", "--now", _day(120))[0] == 0
    assert list(oldest_first(layout, places[-1], first, last)) == back[::-1]  # (not the new line)
    part = places[0][0]
    lines = part.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"seq":%d' % (last - 3) in line)
    lines[at] = lines[at].replace(b'"op":', b'"opx":', 1)
    part.write_bytes(b"\n".join(lines))
    with pytest.raises(Changed, match=f"log line seq {last - 3} in {part.name} changed while it was read"):
        list(oldest_first(layout, places[-1], first, last))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.binary(max_size=5).map(lambda b: b.replace(b"\n", b"")), st.integers(min_value=1, max_value=9))
def test_lines_read_backwards_say_where_they_begin(tmp_path_factory, lines, fragment, block):
    """Whatever the block size, each line comes with the offset it begins at, last first, and a
    torn fragment after the final newline is left out, however long."""
    from memstore.store import backwards

    data = b"".join(line + b"\n" for line in lines) + fragment
    path = tmp_path_factory.mktemp("lines") / "p.jsonl"
    path.write_bytes(data)
    saved, backwards.BLOCK = backwards.BLOCK, block
    try:
        got = list(backwards._lines_backwards(path, skip_fragment=True))
    finally:
        backwards.BLOCK = saved
    want = lines[1:] if lines[:1] == [b""] else lines  # (an empty first line is not a line there)
    assert [line for _, line in got] == want[::-1]
    for offset, line in got:
        assert data[offset:offset + len(line) + 1] == line + b"\n"


@pytest.mark.parametrize("all_", [False, True])
def test_the_mcp_conflict_listing_reads_the_index_as_the_cli_does(stores, monkeypatch, all_):
    """The list_conflicts tool answers from the records index and the log's conflict events
    (``memstore.conflict_list``), opening no state, with the fold's answer."""
    from memstore import tools
    from memstore.resident import Resident
    from memstore.store import open as store_open

    store, bare = stores
    want = tools.call(Resident(bare), "list_conflicts", {"all": all_}, now=_day(101))
    assert want["conflicts"] and all(r["old_text"] and r["new_text"] for r in want["conflicts"])
    monkeypatch.setattr(store_open, "load_state", lambda *a, **k: pytest.fail("the tool opened the state"))
    assert tools.call(Resident(store), "list_conflicts", {"all": all_}, now=_day(101)) == want
