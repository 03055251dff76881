"""Consolidation that does only the work that can have changed.

- Within a run, the stages repeat until nothing is left to say; later rounds reuse the
  update rankings, relations and near-duplicate decisions that cannot have changed. The
  events must be those of recomputing everything each round: the reference
  (``memstore.lifecycle.reference``, imported here as ``oracle``) does so, and random
  histories are held to it event for event.
- Across runs, the write path appends a ``mark`` after each run's events, and the next run
  compares only records created after it. Random nightly histories are held to nightly
  runs without marks (each run comparing the whole ``lookback_days`` window again).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstore.config import load_config
from memstore.consolidate import consolidate
from memstore.embed import HashingEmbedder
from memstore.lifecycle import reference as oracle
from memstore.lifecycle import rules
from memstore.lifecycle.rules import watermark
from memstore.memlog import MemLog
from memstore.timeutil import ts_after

sys.path.insert(0, str(Path(__file__).parent))

CONFIG = load_config(None)
MANUAL = load_config("[conflicts]\nauto_supersede = false\n")
HASH = HashingEmbedder(256)
T0 = "2026-01-01T00:00:00Z"

# Texts that update, contradict, repeat and resemble each other, in two languages, so that
# random histories supersede, conflict, merge and promote, and rounds find more to do.
TEXTS = (
    "We deploy on Fridays.", "We never deploy on Fridays.", "We deploy on Fridays again.",
    "I prefer tea in the morning.", "I prefer coffee in the morning.", "I don't drink coffee anymore.",
    "The rate limit is 100 per minute.", "The rate limit is 250 per minute.", "The rate limit is now 300.",
    "Billing runs on Postgres.", "Billing now runs on MySQL.", "Billing moved from Postgres to MySQL.",
    "Ken lives in Osaka.", "Ken moved to Tokyo.", "Ken lives in Osaka now.",
    "The offsite is on June 12.", "The offsite is cancelled.", "The offsite moved to June 15.",
    "Checkout broke after the deploy.", "Standup notes for the team.",
    "コーヒーに砂糖は入れない", "コーヒーに砂糖を入れる", "ケンは大阪に住んでいる", "ケンは東京に引っ越した",
)
request = st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "day": st.integers(min_value=0, max_value=40)},
    optional={
        "subject": st.sampled_from(("deploys", "drink", "limits", "billing", "ken", None)),
        "domain": st.sampled_from(("eng", "personal")),
        "outcome": st.sampled_from(("positive", "negative")),
        "tier": st.sampled_from(("short", "long")),
        "kind": st.sampled_from(("note", "fact", "incident", "preference", "decision")),
        "importance": st.floats(min_value=0.0, max_value=1.0),
        "confidence": st.floats(min_value=0.0, max_value=1.0),
    },
)


def _history(requests: list[dict]) -> list[tuple[str, dict]]:
    """(record time, request) in time order, distinct increasing times."""
    return [(ts_after(T0, r["day"] + n / 10_000), {k: v for k, v in r.items() if k != "day"})
            for n, r in enumerate(sorted(requests, key=lambda r: r["day"]))]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=24), st.integers(min_value=0, max_value=30), st.booleans())
def test_one_run_gives_the_events_of_recomputing_every_round(requests, later, auto):
    config = CONFIG if auto else MANUAL
    log = MemLog()
    for at, req in _history(requests):
        log.remember([req], at, config)
    now = ts_after(log.state.at, later)
    assert consolidate(log.state, now=now, config=config, embedder=HASH) == \
        oracle.consolidate(log.state, now=now, config=config, embedder=HASH)


# one domain and a few days: most records are each other's update candidates
crowded = st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "day": st.integers(min_value=0, max_value=10)},
    optional={"subject": st.sampled_from(("deploys", "drink", "limits", "billing", "ken")),
              "kind": st.sampled_from(("note", "fact", "preference", "decision"))},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(crowded, min_size=14, max_size=30), st.integers(min_value=0, max_value=5),
       st.sampled_from((1, 1, 2)))
# a new record's first candidates all leave, its ranking is taken again, and what an earlier
# check learnt of the old ranking's places must not be read into the new one's (_Memo.quiet)
@example([*[{"text": "We deploy on Fridays.", "day": 0}] * 8, {"text": "Ken lives in Osaka.", "day": 0},
          {"text": "ケンは大阪に住んでいる", "day": 0}, {"text": "ケンは東京に引っ越した", "day": 1},
          {"text": "ケンは大阪に住んでいる", "day": 0, "subject": "deploys"},
          {"text": "ケンは東京に引っ越した", "day": 0, "subject": "deploys"},
          {"text": "We deploy on Fridays.", "day": 0, "subject": "deploys"}], 0, 1)
def test_a_short_candidate_list_gives_the_events_of_recomputing_every_round(requests, later, limit):
    """With a few candidates per new record, records leave a new record's best candidates
    within a run (superseded, in conflict) and others take their place: a later round must
    compare it again, and a check none of whose records was written since is skipped."""
    import memstore.consolidate as c

    log = MemLog()
    for at, req in _history(requests):
        log.remember([req], at, CONFIG)
    now = ts_after(log.state.at, later)
    saved = c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES
    c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES = limit, 3 * limit, limit
    try:
        assert consolidate(log.state, now=now, config=CONFIG, embedder=HASH) == \
            oracle.consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
    finally:
        c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES = saved


# many subjects, a few days: near-duplicate groups whose first records leave in one round
grouped = st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "day": st.integers(min_value=0, max_value=6),
     "subject": st.sampled_from(("deploys", "drink", "limits", "billing", "ken", "s6", "s7", "s8"))},
    optional={"kind": st.sampled_from(("note", "fact", "preference", "decision")),
              "domain": st.sampled_from(("eng", "personal"))},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(grouped, min_size=8, max_size=40))
def test_each_round_decides_its_groups_in_the_order_a_scan_meets_them(requests):
    """A later round takes its near-duplicate groups from the first round's members still
    active (``_Memo.groups``), not from a scan of every record; their events must still come
    in the scan's order: the groups by the first of their records in canonical order, each
    group's members in ``_order``, whatever the hash seed of the process."""
    import memstore.consolidate as c

    log = MemLog()
    for at, req in _history(requests):
        log.remember([req], at, CONFIG)
    rounds: list[list] = []
    near, decide = c._near_duplicates, c._group_duplicates

    def stage(s, *a):
        rounds.append([])
        return near(s, *a)

    def group(s, members, *a):
        assert all(s.memories[m.id] is m and m.status == "active" for m in members)
        assert members == sorted(members, key=c._order)
        rounds[-1].append(min((m.seq, m.id) for m in members))
        return decide(s, members, *a)

    c._near_duplicates, c._group_duplicates = stage, group
    try:
        consolidate(log.state, now=ts_after(log.state.at, 1), config=CONFIG, embedder=HASH)
    finally:
        c._near_duplicates, c._group_duplicates = near, decide
    assert all(r == sorted(r) for r in rounds)


def _elsewhere(fn, chunks):
    """A mapper other than ``map`` (as the CLI's worker pool is): consolidate then computes
    gists and frames ahead, on a thread while it ranks candidates."""
    return [fn(c) for c in chunks]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=24), st.integers(min_value=0, max_value=30),
       st.sampled_from([None, (2, 1, 3), (3, 4, 5)]))
def test_frames_computed_ahead_change_no_event(requests, later, small):
    """Also with blocks of a few new records, frames sent a few at a time and short candidate
    lists (``small``: block, frames, candidates), so that several blocks, flushes and rounds run."""
    import memstore.consolidate as c
    from memstore.beliefs.frame import frame

    log = MemLog()
    for at, req in _history(requests):
        log.remember([req], at, CONFIG)
    now = ts_after(log.state.at, later)
    frame.cache_clear()  # (so the frames are computed ahead, not found)
    saved = c._BLOCK, c._FRAMES, c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES
    if small is not None:
        c._BLOCK, c._FRAMES, limit = small
        c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES = limit, 3 * limit, limit
    try:
        assert consolidate(log.state, now=now, config=CONFIG, embedder=HASH, mapper=_elsewhere) == \
            oracle.consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
    finally:
        c._BLOCK, c._FRAMES, c._MAX_CANDIDATES, c._LONG, rules.MAX_CANDIDATES = saved


def test_silent_records_are_passed_over_and_change_no_event(monkeypatch):
    """A bulk import: the records no candidate can make say anything (no update word, and no
    older record sharing a key has another negation) are not ranked, and the events are those
    of checking them all; the update among them is still found."""
    import memstore.consolidate as c

    log = MemLog()
    chatter = [f"Standup notes for the {team} team, week {w}." for team in ("web", "data", "infra")
               for w in range(1, 9)]
    history = [{"text": t, "subject": "standup"} for t in chatter] + [
        {"text": "Billing runs on Postgres.", "subject": "billing", "kind": "fact"},
        {"text": "Billing moved from Postgres to MySQL.", "subject": "billing", "kind": "fact"},
        {"text": "We deploy on Fridays.", "subject": "deploys", "kind": "decision"},
        {"text": "We never deploy on Fridays.", "subject": "deploys", "kind": "decision"}]
    for n, req in enumerate(history):
        log.remember([req], ts_after(T0, n / 100), CONFIG)
    now = ts_after(log.state.at, 1)
    found = []
    silent = c._silent
    monkeypatch.setattr(c, "_silent", lambda *a: found.append(silent(*a)) or found[-1])
    events = consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
    by_id = {m.id: m.text for m in log.state.memories.values()}
    # (not the billing move, which says an update word, nor the deploys, whose keys a negated
    # record shares)
    assert found and {by_id[i] for i in found[0]} == {*chatter, "Billing runs on Postgres."}
    assert events == oracle.consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
    monkeypatch.setattr(c, "_silent", lambda *a: frozenset())
    assert consolidate(log.state, now=now, config=CONFIG, embedder=HASH) == events
    assert {e["op"] for e in events} & {"supersede", "conflict"}


def test_a_night_against_a_bigger_pool_checks_every_new_record():
    import memstore.consolidate as c
    from memstore.beliefs.candidates import Postings

    log = MemLog()
    for n in range(6):
        log.remember([{"text": f"Standup notes, week {n}."}], ts_after(T0, n), CONFIG)
    pool = log.state.ordered()
    assert c._silent(pool[-2:], Postings(pool), map) == frozenset()
    assert len(c._silent(pool[-4:], Postings(pool), map)) == 4


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=24), st.integers(min_value=1, max_value=6))
def test_nightly_runs_equal_the_oracle_night_by_night(requests, every):
    """Several nights in a row on the same history: the same log, night after night."""
    mine, theirs = MemLog(), MemLog()
    history = _history(requests)
    end = ts_after(history[-1][0], 1)
    night = ts_after(T0, 0.125)
    while night <= end or history:
        for log in (mine, theirs):
            for at, req in (h for h in history if h[0] <= night):
                log.remember([req], at, CONFIG)
        history = [h for h in history if h[0] > night]
        a = mine.run(consolidate, night, CONFIG, embedder=HASH)
        b = theirs.run(oracle.consolidate, night, CONFIG, embedder=HASH)
        assert a == b
        night = ts_after(night, every)
    assert mine.events == theirs.events


def _marked(state, *, now, config, embedder):
    """What the write path (memstore.writes.consolidate) appends: the run's events, then its mark."""
    mark = watermark(state, now)
    return consolidate(state, now=now, config=config, embedder=embedder) + ([mark] if mark else [])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=24), st.integers(min_value=1, max_value=3))
def test_marked_nightly_runs_equal_runs_that_compare_the_whole_window(requests, every):
    """With marks, a record is compared when it is new; without, on every run for
    lookback_days. The lifecycle events are the same, night after night."""
    marked, full = MemLog(), MemLog()
    history = _history(requests)
    night = ts_after(T0, 0.125)
    while history:
        for log in (marked, full):
            for at, req in (h for h in history if h[0] <= night):
                log.remember([req], at, CONFIG)
        history = [h for h in history if h[0] > night]
        a = [e for e in marked.run(_marked, night, CONFIG, embedder=HASH) if e["op"] != "mark"]
        b = full.run(consolidate, night, CONFIG, embedder=HASH)
        assert _plain(a) == _plain(b)
        night = ts_after(night, every)
    assert marked.state.marks["consolidate"] <= marked.state.seq
    assert watermark(marked.state, night) is None  # nothing created since the last run: no mark


def _plain(events: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "seq"} for e in events]


def test_a_mark_is_appended_only_when_records_were_created_since_the_last():
    log = MemLog()
    log.remember([{"text": "We deploy on Fridays.", "subject": "deploys"}], T0, CONFIG)
    night = ts_after(T0, 0.5)
    first = log.run(_marked, night, CONFIG, embedder=HASH)
    assert first[-1] == {"op": "mark", "at": night, "stage": "consolidate", "through": 1, "seq": len(first) + 1}
    assert log.run(_marked, night, CONFIG, embedder=HASH) == []
    assert log.run(_marked, ts_after(night, 1), CONFIG, embedder=HASH) == []  # a later night, nothing new
    log.remember([{"text": "We never deploy on Fridays.", "subject": "deploys"}], ts_after(night, 1.5), CONFIG)
    seq = log.state.seq
    events = log.run(_marked, ts_after(night, 2), CONFIG, embedder=HASH)
    assert [e["op"] for e in events] == ["conflict", "mark"] and events[-1]["through"] == seq


def _fails_on_frames(fn, chunks):
    """A mapper whose workers fail on frames: the prefetch's last flush (after the last block)."""
    if fn.__name__ == "frames_of":
        raise RuntimeError("a worker failed")
    return [fn(c) for c in chunks]


@pytest.mark.parametrize("frames", [1, 10_000])  # a flush between blocks, or only the last one
def test_a_failure_on_the_workers_is_raised_not_a_hang(frames, monkeypatch):
    import memstore.consolidate as c
    from memstore.beliefs.frame import frame

    log = MemLog()
    texts = ["We deploy on Fridays.", "We never deploy on Fridays anymore.", "Ken lives in Osaka.",
             "Ken moved to Tokyo."]
    for i, text in enumerate(texts * 3):
        log.remember([{"text": f"{text} ({i})"}], ts_after("2026-01-01T00:00:00Z", i), CONFIG)
    monkeypatch.setattr(c, "_BLOCK", 2)
    monkeypatch.setattr(c, "_FRAMES", frames)
    frame.cache_clear()
    with pytest.raises(RuntimeError, match="a worker failed"):
        consolidate(log.state, now=ts_after(log.state.at, 1), config=CONFIG, embedder=HASH,
                    mapper=_fails_on_frames)
