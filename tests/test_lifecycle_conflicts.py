"""Conflicts: negation parity (English and Japanese), numbers, changed preferences,
opposite policies; supersession with its bitemporal fields; human resolution; forget."""

from __future__ import annotations

import pytest

from memstore.config import load_config
from memstore.conflicts import (
    conflict_id,
    contradiction,
    negated,
    numbers,
    records,
    resolve_event,
)
from memstore.consolidate import consolidate
from memstore.distill import distill
from memstore.embed import HashingEmbedder
from memstore.memlog import MemLog

CONFIG = load_config(None)
WAIT = load_config("[conflicts]\nauto_supersede = false\n")
HASH = HashingEmbedder(256)


@pytest.mark.parametrize(("text", "neg"), [
    ("We deploy on Fridays", False),
    ("We never deploy on Fridays", True),
    ("I don't take sugar", True),
    ("She doesn't use Vim and isn't on call", True),  # parity is counted per clause
    ("Black, no sugar, no milk", True),
    ("Black coffee, zero sugar", True),
    ("アリスさんのコーヒーは砂糖なしで。ミルクもいらないそうです。", True),
    ("It is not never going to happen", False),  # two negations in one clause
    ("We no longer use feature flags", True),
    ("The job won't retry", True),
    ("He stopped drinking coffee", True),
    ("I quit smoking", True),
    ("Notion is the wiki", False),  # "no" inside a word is not a negation
    ("コーヒーに砂糖を入れる", False),
    ("コーヒーに砂糖は入れない", True),
    ("会議には出ません", True),
    ("タバコはやめた", True),
    ("金曜日にはデプロイしない", True),
    ("昨日は雨が降らなかった", True),
    ("何も言わず帰った", True),
    ("まず最初にテストを書く", False),  # まず is "first", not a negation
    ("必ずレビューする", False),
    ("在庫が少ない", False),  # an adjective that ends in ない
    ("テストを書かなければならない", False),  # "must": a double negative
])
def test_negation_parity(text, neg):
    assert negated(text) is neg


def test_numbers_and_dates_fold_full_width_digits():
    assert numbers("予算は１２０万円、締切は2026-06-30") == {"120", "2026-06-30"}
    assert contradiction("Standup is at 9:30", "Standup is at 10:00") == "number"
    assert contradiction("Standup is at 9:30", "Standup is in room B") is None  # one side has no number
    assert contradiction("We deploy on Fridays", "We never deploy on Fridays") == "negation"


PREFERENCES = """
{"at": "2026-01-05T09:00:00Z", "text": "I prefer tea in the morning.", "subject": "morning-drink", "domain": "personal"}
{"at": "2026-04-30T09:00:00Z", "text": "I prefer coffee in the morning.", "subject": "morning-drink", "domain": "personal"}
"""


def test_a_changed_preference_supersedes_the_older_one_bitemporally():
    log = MemLog().replay(PREFERENCES, CONFIG)
    tea, coffee = log.state.ordered()
    events = log.run(consolidate, "2026-05-01T03:00:00Z", CONFIG, embedder=HASH)
    assert [(e["op"], e.get("rule")) for e in events] == [("conflict", "value"), ("supersede", None)]
    assert events[0]["id"] == conflict_id(tea.id, coffee.id)
    old = log.state.memories[tea.id]
    assert (old.status, old.invalid_at, old.superseded_by) == ("superseded", "2026-05-01T03:00:00Z", coffee.id)
    assert old.valid_from == "2026-01-05T09:00:00Z" and old.text == "I prefer tea in the morning."  # history kept
    assert old.conflicts_with == () and log.state.memories[coffee.id].conflicts_with == ()
    (rec,) = records(log.events, log.state)
    assert (rec["state"], rec["rule"], rec["old"], rec["new"]) == ("superseded", "value", tea.id, coffee.id)


def test_without_auto_supersede_the_conflict_waits_for_a_person():
    log = MemLog().replay(PREFERENCES, WAIT)
    tea, coffee = log.state.ordered()
    events = log.run(consolidate, "2026-05-01T03:00:00Z", WAIT, embedder=HASH)
    assert [e["op"] for e in events] == ["conflict"]
    assert log.state.memories[tea.id].conflicts_with == (coffee.id,)
    assert log.state.memories[tea.id].status == "active"
    assert consolidate(log.state, now="2026-05-01T03:00:00Z", config=WAIT, embedder=HASH) == []
    (rec,) = records(log.events, log.state)
    assert rec["state"] == "open"


@pytest.mark.parametrize(("keep", "tea_status", "coffee_status"), [
    ("new", "superseded", "active"),
    ("old", "active", "superseded"),
    ("both", "active", "active"),
    ("dismiss", "active", "active"),
])
def test_resolve_records_the_decision(keep, tea_status, coffee_status):
    log = MemLog().replay(PREFERENCES, WAIT)
    tea, coffee = log.state.ordered()
    log.run(consolidate, "2026-05-01T03:00:00Z", WAIT, embedder=HASH)
    (rec,) = records(log.events, log.state)
    log.append([resolve_event(rec, keep, "2026-05-02T10:00:00Z", "checked with the user")], "2026-05-02T10:00:00Z")
    t, c = log.state.memories[tea.id], log.state.memories[coffee.id]
    assert (t.status, c.status) == (tea_status, coffee_status)
    assert t.conflicts_with == c.conflicts_with == ()
    if keep in ("both", "dismiss"):
        assert t.reconciled_with == (coffee.id,) and c.reconciled_with == (tea.id,)
    loser = {"new": t, "old": c}.get(keep)
    if loser is not None:
        assert loser.invalid_at == "2026-05-02T10:00:00Z"
        assert loser.reason == f"conflict {rec['id']} resolved: keep {keep}"
    (after,) = records(log.events, log.state)
    assert (after["state"], after["resolution"]) == ("resolved", keep)
    assert consolidate(log.state, now="2026-05-03T03:00:00Z", config=WAIT, embedder=HASH) == []  # never re-flagged


def test_keep_old_reinstates_an_automatically_superseded_memory():
    log = MemLog().replay(PREFERENCES, CONFIG)
    tea, coffee = log.state.ordered()
    log.run(consolidate, "2026-05-01T03:00:00Z", CONFIG, embedder=HASH)
    (rec,) = records(log.events, log.state)
    log.append([resolve_event(rec, "old", "2026-05-02T10:00:00Z")], "2026-05-02T10:00:00Z")
    t, c = log.state.memories[tea.id], log.state.memories[coffee.id]
    assert (t.status, t.invalid_at, t.superseded_by) == ("active", None, None)
    assert (c.status, c.superseded_by) == ("superseded", tea.id)


def test_a_reinstated_record_keeps_each_spell_it_did_not_hold():
    """The fold keeps a record's whole validity: a reinstatement moves invalid_at into
    invalid_periods; a record that stopped holding keeps that time when it is superseded or
    forgotten again later (it was not believed in between)."""
    log = MemLog().replay(PREFERENCES, CONFIG)
    tea, coffee = log.state.ordered()
    times = ["2026-05-01T00:00:00Z", "2026-05-02T00:00:00Z", "2026-05-03T00:00:00Z", "2026-05-04T00:00:00Z",
             "2026-05-05T00:00:00Z"]
    log.append([{"op": "supersede", "at": times[0], "old": tea.id, "new": coffee.id}], times[0])
    log.append([{"op": "reinstate", "at": times[1], "id": tea.id, "reason": "back"}], times[1])
    t = log.state.memories[tea.id]
    assert (t.status, t.invalid_at, t.invalid_periods) == ("active", None, (f"{times[0]}/{times[1]}",))
    log.append([{"op": "supersede", "at": times[2], "old": tea.id, "new": coffee.id}], times[2])
    log.append([{"op": "forget", "at": times[3], "id": tea.id, "retired": False}], times[3])
    t = log.state.memories[tea.id]
    assert (t.status, t.invalid_at, t.invalid_periods) == ("invalidated", times[2], (f"{times[0]}/{times[1]}",))
    log.append([{"op": "reinstate", "at": times[4], "id": tea.id}], times[4])  # a forgotten record stays so
    assert log.state.memories[tea.id] == t


def test_opposite_policies_on_one_cause_stand_together_when_the_evidence_is_balanced():
    log = MemLog().replay("""
{"at": "2026-02-01T10:00:00Z", "text": "Hackathon shipped a demo", "subject": "hackathon", "kind": "meeting", "outcome": "positive"}
{"at": "2026-03-01T10:00:00Z", "text": "Hackathon shipped two demos", "subject": "hackathon", "kind": "meeting", "outcome": "positive"}
""", CONFIG)
    (reinforce,) = log.run(distill, "2026-03-02T04:00:00Z", CONFIG)
    log.replay("""
{"at": "2026-06-01T10:00:00Z", "text": "Hackathon burned the team out", "subject": "hackathon", "kind": "meeting", "outcome": "negative"}
{"at": "2026-07-01T10:00:00Z", "text": "Hackathon week slipped the release", "subject": "hackathon", "kind": "meeting", "outcome": "negative"}
""", CONFIG)
    events = log.run(distill, "2026-07-05T04:00:00Z", CONFIG)
    # two against two: neither policy wins; a person is asked (the newest does not win)
    assert [e["op"] for e in events] == ["policy", "policy", "conflict"]
    mitigate = events[0]["memory"]
    assert events[1]["memory"]["id"] == reinforce["memory"]["id"]
    assert (events[2]["rule"], events[2]["old"], events[2]["new"]) == ("evidence", reinforce["memory"]["id"], mitigate["id"])
    assert events[2]["detail"] == "evidence: 2 negative vs 2 positive outcomes"
    for pid in (reinforce["memory"]["id"], mitigate["id"]):
        assert log.state.memories[pid].status == "active"
    assert distill(log.state, now="2026-07-05T04:00:00Z", config=CONFIG) == []


def test_forget_invalidates_without_deleting_and_closes_open_conflicts():
    log = MemLog().replay(PREFERENCES, WAIT)
    tea, coffee = log.state.ordered()
    log.run(consolidate, "2026-05-01T03:00:00Z", WAIT, embedder=HASH)
    before = len(log.events)
    log.append([{"op": "forget", "id": coffee.id, "reason": "wrong person"}], "2026-05-03T10:00:00Z")
    c = log.state.memories[coffee.id]
    assert (c.status, c.invalid_at, c.reason, c.text) == ("invalidated", "2026-05-03T10:00:00Z", "wrong person",
                                                         "I prefer coffee in the morning.")
    assert log.state.memories[tea.id].conflicts_with == ()
    assert len(log.events) == before + 1
    (rec,) = records(log.events, log.state)
    assert rec["state"] == "closed"


