"""Consolidate from a snapshot builds only the records it reads (issue [6/6], items 2-3).

`writes.consolidate` opens the state with ``consolidate.rows`` at its ``now``: the rows
created after the last mark, the retired abstractions, the active abstractions and the
short-term records due to expire are built, with the records the log after the snapshot
touches. The update pool, the near-duplicate groups' older members and promote's short-term
records are read from columns (memstore.rowscan), and any other record is built when a run
asks for it by id (``state.Partial``). Its events must be those of the whole state: held on
a lived store with new records waiting, on random nightly histories snapshotted at any
night (before or after that night's run, with forgets in the tail), and on nights against
groups read from columns; tests/test_rowscan.py holds the column tests to the records'.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import make_store
from test_distill_partial import snapshotted, two_copies
from test_reads_scale import _day, _run

from memstore import writes
from memstore.config import load_config
from memstore.consolidate import rows
from memstore.memlog import MemLog
from memstore.state import Partial, State
from memstore.store.layout import Layout
from memstore.store.open import _fold_partial
from memstore.store.snapshot import parquet_bytes, read_snapshot
from memstore.timeutil import ts_after

sys.path.insert(0, str(Path(__file__).parent))
from test_consolidate_incremental import HASH, _history, _marked, request  # noqa: E402

CONFIG = load_config(None)

NEW = [  # the day's records: a repeat, an update, a contradiction, chatter that expires
    {"text": "We deploy on Fridays", "subject": "deploys", "kind": "decision"},
    {"text": "We now deploy on Mondays", "subject": "deploys", "kind": "decision"},
    {"text": "Ticket 3 is open", "key": "ticket-new"},
    {"text": "Lunch was pizza today", "tier": "short"},
    {"text": "Lunch was pizza today", "tier": "short"},
    {"text": "The rate limit is 900 per minute", "subject": "limits", "kind": "fact"},
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store snapshotted on day 70, lived on to day 120, with a day's records waiting."""
    path = snapshotted(tmp_path_factory.mktemp("partial") / "s")
    code, _out, err = _run(path, "remember", "--jsonl", "-", "--now", _day(121),
                           stdin="\n".join(json.dumps(r) for r in NEW).encode())
    assert code == 0, err
    return path


@pytest.mark.parametrize("later", [0, 10, 90, 400])
def test_a_partial_state_consolidates_as_the_whole_one(store, later):
    layout = Layout(store)
    config = load_config(layout.read_config_text())
    now = _day(121 + later)
    part = writes.consolidate(layout, now=now, config=config, dry_run=True)
    whole = writes.run_stage(layout, writes.consolidation, now=now, config=config, dry_run=True)
    assert isinstance(part.state.memories, Partial) and not isinstance(whole.state.memories, Partial)
    assert part.events == whole.events
    assert part.mark is not None and len(part.events) >= 3  # (new records merge, update, promote)
    assert len(part.state.memories) < len(whole.state.memories)  # (what it is for)


def test_consolidate_writes_as_the_whole_state_would(store, tmp_path):
    """The events appended, the next nights' (another day's records between), and the state."""
    copies, layout, config = two_copies(store, tmp_path)
    for day in (121, 122, 123):
        if day == 122:
            for c in copies:
                assert _run(c, "remember", "--jsonl", "-", "--now", _day(122),
                            stdin=b'{"text": "We deploy on Fridays again", "subject": "deploys"}')[0] == 0
        part = writes.consolidate(layout[0], now=_day(day), config=config)
        whole = writes.run_stage(layout[1], writes.consolidation, now=_day(day), config=config)
        assert part.events == whole.events
    assert _run(copies[0], "stats", "--json", "--now", _day(123)) == \
        _run(copies[1], "stats", "--json", "--now", _day(123))
    assert _run(copies[0], "export", "--now", _day(123)) == _run(copies[1], "export", "--now", _day(123))


# --- random nightly histories, snapshotted at any night ----------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=24), st.integers(min_value=1, max_value=3),
       st.integers(min_value=0, max_value=12), st.booleans(),
       st.lists(st.tuples(st.integers(0, 14), st.integers(0, 40)), max_size=4),
       st.integers(min_value=0, max_value=60))
def test_nightly_runs_from_any_snapshot_equal_the_whole_state(requests, every, snap, before, forgets, later):
    """Nights of records and marked consolidations; a snapshot at night ``snap``, taken
    before that night's run (its rows then hold records created after the last mark, some
    forgotten) or after it; forgets before and after it; then a run from the partial state
    and from the whole."""
    log = MemLog()
    history = _history(requests)

    def forget(when: int, night: str) -> None:
        ids = [m.id for m in log.state.ordered()]
        for _n, i in (f for f in forgets if f[0] == when):
            log.append([{"op": "forget", "id": ids[i % len(ids)], "reason": "test"}], night)

    night, taken = nights(log, history, ts_after(history[0][0], 0.125), every, snap, before, forget)
    forget(14, night)
    if taken is None:
        taken = (parquet_bytes(log.state), len(log.events))
    now = ts_after(night, later)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(taken[0])
        base, _meta = read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))
    assert isinstance(base.memories, Partial)
    part = _fold_partial(iter(log.events[taken[1]:]), base)
    assert _marked(part, now=now, config=CONFIG, embedder=HASH) == \
        _marked(log.state, now=now, config=CONFIG, embedder=HASH)


def nights(log: MemLog, history: list, night: str, every: int, snap: int, before: bool, forget=None):
    """Live ``history`` into ``log`` night after night from ``night`` (every ``every`` days):
    its records, ``forget(n, night)`` when the log has records, then the marked run; the
    snapshot's bytes and the log's length at night ``snap``, taken before that night's run or
    after it. (the night after the last, (those bytes, that length) or None)."""
    n, taken = 0, None
    while history:
        for at, req in (h for h in history if h[0] <= night):
            log.remember([req], at, CONFIG)
        history = [h for h in history if h[0] > night]
        if forget is not None and log.state.memories:
            forget(n, night)
        if n == snap and before:
            taken = (parquet_bytes(log.state), len(log.events))
        log.run(_marked, night, CONFIG, embedder=HASH)
        if n == snap and not before:
            taken = (parquet_bytes(log.state), len(log.events))
        night, n = ts_after(night, every), n + 1
    return night, taken


def test_a_snapshot_whose_only_new_record_is_forgotten_still_gets_its_mark():
    """Records created since the last mark are what ``watermark`` looks for, whatever their
    status: one remembered and forgotten before the snapshot is built (a mark follows)."""
    log = MemLog()
    log.remember([{"text": "We deploy on Fridays", "subject": "deploys"}], "2026-01-01T10:00:00Z", CONFIG)
    log.run(_marked, "2026-01-02T00:00:00Z", CONFIG, embedder=HASH)
    (late,) = log.remember([{"text": "Lunch was pizza"}], "2026-01-02T10:00:00Z", CONFIG)
    log.append([{"op": "forget", "id": late, "reason": "test"}], "2026-01-02T11:00:00Z")
    now = "2026-01-03T00:00:00Z"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(log.state))
        part, _meta = read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))
    whole = _marked(log.state, now=now, config=CONFIG, embedder=HASH)
    assert whole == [{"op": "mark", "at": now, "stage": "consolidate", "through": log.state.seq}]
    assert _marked(part, now=now, config=CONFIG, embedder=HASH) == whole


def test_an_expired_belief_in_the_snapshot_is_still_updated():
    """Expired records stay in the update pool (an update supersedes a short-lived belief
    too): the snapshot's expired rows are built."""
    log = MemLog()
    log.remember([{"text": "The rate limit is 100 per minute.", "subject": "limits", "tier": "short",
                   "kind": "note"}], "2026-01-01T10:00:00Z", CONFIG)  # (a fact would not expire)
    assert log.run(_marked, "2026-03-01T00:00:00Z", CONFIG, embedder=HASH)[0]["op"] == "expire"
    now = "2026-03-02T00:00:00Z"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(log.state))
        base, _meta = read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))
    cut = len(log.events)
    log.remember([{"text": "The rate limit is now 300.", "subject": "limits", "kind": "fact"}],
                 "2026-03-01T10:00:00Z", CONFIG)
    whole = _marked(log.state, now=now, config=CONFIG, embedder=HASH)
    assert [e["op"] for e in whole] == ["conflict", "supersede", "mark"]
    assert _marked(_fold_partial(iter(log.events[cut:]), base), now=now, config=CONFIG, embedder=HASH) == whole


def test_an_agents_report_from_a_snapshot_leaves_out_what_it_may_not_read(tmp_path):
    """The run's state is partial, so the records an agent may not read are looked up by the
    ids its events name (``access.hidden_in``), not listed from the records built. (Every
    record a consolidate event names is one it scanned, so built: this holds the report to
    the owner's less the hidden domain; it passes with a listing of the built records too.)"""
    from reliability_support import HASHING

    path = make_store(tmp_path / "s", HASHING + '[agents]\nbob = "intern"\n\n[grants.intern]\nhr = "none"\n'
                                                '"*" = "write"\n')
    for text, domain in (("Payroll runs on the last Friday", "hr"), ("Deploys run on Tuesday", "eng")):
        assert _run(path, "remember", text, "--subject", "schedule", "--domain", domain,
                    "--now", "2026-06-01T10:00:00Z")[0] == 0
    assert _run(path, "consolidate", "--now", "2026-06-02T00:00:00Z")[0] == 0
    assert _run(path, "snapshot", "--now", "2026-06-02T00:00:00Z")[0] == 0
    for text, domain in (("Payroll runs on the last Friday of the month", "hr"),
                         ("Deploys run on Tuesday mornings", "eng")):
        assert _run(path, "remember", text, "--subject", "schedule", "--domain", domain,
                    "--now", "2026-06-02T10:00:00Z")[0] == 0
    owner = _run(path, "consolidate", "--dry-run", "--json", "--now", "2026-06-03T00:00:00Z")
    bob = _run(path, "--agent", "bob", "consolidate", "--dry-run", "--json", "--now", "2026-06-03T00:00:00Z")
    assert owner[0] == bob[0] == 0
    hr = {r["id"] for r in map(json.loads, _run(path, "export")[1].splitlines()) if r["domain"] == "hr"}
    seen = json.loads(owner[1])["events"]

    def names(e):
        return {v for v in e.values() if isinstance(v, str)}

    assert any(hr & names(e) for e in seen)  # (the owner hears of the hr merge)
    assert [e for e in seen if not hr & names(e)] == json.loads(bob[1])["events"] != []


def test_a_night_against_older_groups_read_from_columns_decides_as_the_whole_state(monkeypatch):
    """A snapshot of long-term beliefs (neither opened with nor built: read from columns,
    ``rowscan.members`` and ``rowscan.pool_of``), then a night that repeats one, updates one
    and contradicts one: the nearest older records are among those read from columns, a
    second round decides the groups again, and the events are the whole state's."""
    import memstore.consolidate as c
    from memstore.rowscan import Member

    services = ["auth", "search", "mail", "chat", "video", "maps", "news", "shop", "docs", "wiki"]
    clients = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne", "soylent"]
    older = [{"text": f"The {name} service deploys from the {branch} branch", "subject": "deploys", "kind": "note",
              "tier": "long"} for name, branch in zip(services, ["main", "release", "stable", "trunk", "prod"] * 2,
                                                      strict=True)]
    older += [{"text": f"The {name} account is billed {when}", "subject": "billing", "kind": "note", "tier": "long"}
              for name, when in zip(clients, ["monthly", "weekly"] * 5, strict=True)]
    older.append({"text": "We deploy on Fridays", "subject": "deploys", "kind": "decision", "tier": "long"})
    older += [{"text": f"{who} holds the pager {when}", "subject": "deploys", "kind": "note", "tier": "long"}
              for who, when in zip(["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"],
                                   ["at weekends", "overnight", "in August", "on holidays", "at Easter", "in May"],
                                   strict=True)]
    now = "2026-01-06T00:00:00Z"
    log, base, cut = _snapshot_after_a_night(older, now)
    log.remember([{"text": "The chat service deploys from the trunk branch!", "subject": "deploys", "kind": "note"},
                  {"text": "We never deploy on Fridays", "subject": "deploys", "kind": "decision"},
                  {"text": "The hooli account is now billed yearly", "subject": "billing", "kind": "fact"},
                  {"text": "The acme account is billed monthly.", "subject": "billing", "kind": "note"}],
                 "2026-01-05T10:00:00Z", CONFIG)
    seen = []
    inner = c._now
    monkeypatch.setattr(c, "_now", lambda s, m: seen.append(type(inner(s, m))) or inner(s, m))
    part = _fold_partial(iter(log.events[cut:]), base)
    assert len(dict.keys(part.memories)) < 10  # (the day's records, not the snapshot's 27)
    events = _marked(part, now=now, config=CONFIG, embedder=HASH)
    assert events == _marked(log.state, now=now, config=CONFIG, embedder=HASH)
    assert [e["op"] for e in events] == ["conflict", "merge", "merge", "mark"]
    assert Member in seen  # (a later round read a group member from columns)


def test_short_term_groups_read_from_columns_are_promoted_as_the_whole_states():
    """Short-term records in the snapshot (not opened with: read from columns,
    ``rowscan.shorts``), repeated by the day's records and reinforced in the tail: the
    groups they reach are promoted, with the members and the mean confidence of the whole
    state's run, over more than one round."""
    chatter = [{"text": f"Standup moved to room {room}", "subject": f"standup-{room}", "tier": "short"}
               for room in ("A", "B", "C", "D")]
    chatter += [{"text": f"Lunch at the {place} today", "tier": "short"} for place in ("cafe", "canteen", "park")]
    chatter.append({"text": "The VPN drops every hour", "subject": "vpn", "tier": "short", "kind": "incident"})
    now = "2026-01-06T00:00:00Z"
    log, base, cut = _snapshot_after_a_night(chatter, now)
    assert not any(m.tier == "short" for m in dict.values(base.memories))  # (none opened with)
    log.remember([{"text": "Standup moved to room B", "subject": "standup-B", "tier": "short"},
                  {"text": "Standup moved to room C!", "subject": "standup-C", "tier": "short"},
                  {"text": "Lunch at the park today", "tier": "short"},
                  {"text": "The VPN drops every hour again", "subject": "vpn", "tier": "short", "kind": "incident"}],
                 "2026-01-05T10:00:00Z", CONFIG)
    log.remember([{"text": "Standup moved to room C!", "subject": "standup-C", "tier": "short"}],
                 "2026-01-05T11:00:00Z", CONFIG)
    whole = _marked(log.state, now=now, config=CONFIG, embedder=HASH)
    assert [e["op"] for e in whole].count("promote") >= 2
    assert _marked(_fold_partial(iter(log.events[cut:]), base), now=now, config=CONFIG, embedder=HASH) == whole


def _snapshot_after_a_night(records: list[dict], now: str) -> tuple[MemLog, State, int]:
    """A log with ``records`` remembered on 2026-01-01 and consolidated that night, and its
    snapshot opened as a night at ``now`` opens it: (the log, that state, where its tail starts)."""
    log = MemLog()
    log.remember(records, "2026-01-01T10:00:00Z", CONFIG)
    log.run(_marked, "2026-01-02T00:00:00Z", CONFIG, embedder=HASH)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(log.state))
        base, _meta = read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))
    return log, base, len(log.events)


def test_a_night_builds_no_candidate_of_another_domain(monkeypatch):
    """Update candidates are ranked over every domain's pool records, but a domain is a scope:
    a night from a snapshot reads each candidate's domain from the pool's column and builds
    the records of its own domain's candidates only; the events are the whole state's."""
    from memstore.working import Working

    log = MemLog()
    old = [{"text": f"The {w} service runs on host {i} in the main region", "domain": d, "kind": "fact"}
           for i, w in enumerate(["billing", "search", "payments", "ledger", "gateway", "auth"]) for d in ("eng", "ops")]
    log.remember(old, "2026-03-01T00:00:00Z", CONFIG)
    log.append(_marked(log.state, now="2026-03-01T00:00:00Z", config=CONFIG, embedder=HASH), "2026-03-01T00:00:00Z")
    taken = (parquet_bytes(log.state), len(log.events))
    log.remember([{"text": f"The {w} service now runs on host {i + 9} in the main region", "domain": "eng",
                   "kind": "fact"} for i, w in enumerate(["billing", "search", "payments"])],
                 "2026-03-02T00:00:00Z", CONFIG)
    now = "2026-03-02T00:00:00Z"
    built: list[str] = []
    inner = Working.build
    monkeypatch.setattr(Working, "build", lambda self, ids: (built.extend(ids := list(ids)), inner(self, ids))[1])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(taken[0])
        base, _meta = read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))
    part = _fold_partial(iter(log.events[taken[1]:]), base)
    got = _marked(part, now=now, config=CONFIG, embedder=HASH)
    assert got == _marked(log.state, now=now, config=CONFIG, embedder=HASH)
    domains = {m.id: m.domain for m in log.state.memories.values()}
    assert any(e["op"] in ("supersede", "conflict") for e in got)  # (candidates were compared)
    assert built and all(domains.get(i) != "ops" for i in built)
