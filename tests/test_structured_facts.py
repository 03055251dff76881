"""Facts readers act on are fields of events, never words of a reason: the conflict a
supersede settled, and whether a forget was consolidation's retirement of an abstraction.
Logs written before those fields existed are read as they were written (memstore(5))."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memstore import writes
from memstore.config import load_config
from memstore.conflicts import records, resolve_event
from memstore.consolidate import consolidate
from memstore.embed import HashingEmbedder
from memstore.fold import RETIRED
from memstore.memlog import MemLog
from memstore.model import memory_to_dict
from memstore.remember import validate
from memstore.state import digest
from memstore.store.layout import Layout

CONFIG = load_config(None)
HASH = HashingEmbedder(256)
PREFERENCES = """
{"at": "2026-01-05T09:00:00Z", "text": "I prefer tea in the morning.", "subject": "morning-drink", "domain": "personal"}
{"at": "2026-04-30T09:00:00Z", "text": "I prefer coffee in the morning.", "subject": "morning-drink", "domain": "personal"}
"""
SUMMARY_ID = "m0000000000abcde"


def with_summary() -> tuple[MemLog, str, str]:
    """Tea (older) and coffee (newer) on one single-valued subject, and a summary of tea."""
    log = MemLog().replay(PREFERENCES, CONFIG)
    tea, coffee = log.state.ordered()
    summary = memory_to_dict(replace(tea, id=SUMMARY_ID, level="summary", tier="long",
                                     text="Mornings start with tea.", derived_from=(tea.id,)))
    del summary["seq"]
    log.append([{"op": "distill", "memory": summary, "abstracts": [tea.id]}], "2026-04-30T10:00:00Z")
    return log, tea.id, coffee.id


def test_conflict_supersede_names_its_conflict_and_retirement_is_a_field():
    log, tea, coffee = with_summary()
    events = log.run(consolidate, "2026-05-01T03:00:00Z", CONFIG, embedder=HASH)
    by_op = {e["op"]: e for e in events}
    (rec,) = records(log.events, log.state)
    assert by_op["supersede"]["conflict"] == rec["id"] and rec["state"] == "superseded"
    assert by_op["forget"]["id"] == SUMMARY_ID and by_op["forget"]["retired"] is True
    assert log.state.memories[SUMMARY_ID].retired is True
    log.append([resolve_event(rec, "old", "2026-05-02T10:00:00Z")], "2026-05-02T10:00:00Z")
    s = log.state.memories[SUMMARY_ID]
    assert (s.status, s.retired, s.reason, log.state.memories[tea].status) == ("active", False, None, "active")


@pytest.mark.parametrize(("retired_field", "comes_back"), [
    ({"retired": False}, False),  # written by this memstore's forget: a person's word, whatever it says
    ({}, True),  # an old log's retirement, recognised by its reason as that version did
])
def test_a_forget_whose_reason_reads_like_a_retirement(retired_field, comes_back):
    log, tea, _coffee = with_summary()
    log.append([{"op": "forget", "id": SUMMARY_ID, "reason": f"{RETIRED}: {tea}", **retired_field}],
               "2026-04-30T11:00:00Z")
    log.run(consolidate, "2026-05-01T03:00:00Z", CONFIG, embedder=HASH)
    (rec,) = records(log.events, log.state)
    log.append([resolve_event(rec, "old", "2026-05-02T10:00:00Z")], "2026-05-02T10:00:00Z")
    assert log.state.memories[SUMMARY_ID].status == ("active" if comes_back else "invalidated")


def test_the_conflict_of_a_supersede_comes_from_its_field_not_its_reason():
    log, tea, coffee = with_summary()
    cid = "c0123456789abcd"
    log.append([{"op": "conflict", "id": cid, "old": tea, "new": coffee, "rule": "value", "detail": ""},
                {"op": "supersede", "old": tea, "new": coffee, "conflict": cid,
                 "reason": "conflict cfffffffffffffff (text for people)"}], "2026-05-01T03:00:00Z")
    assert [(r["id"], r["state"]) for r in records(log.events, log.state)] == [(cid, "superseded")]
    legacy = MemLog().replay(PREFERENCES, CONFIG)  # an old log: the id only in the reason
    legacy.append([{"op": "conflict", "id": cid, "old": tea, "new": coffee, "rule": "value", "detail": ""},
                   {"op": "supersede", "old": tea, "new": coffee, "reason": f"conflict {cid} (value)"}],
                  "2026-05-01T03:00:00Z")
    assert [(r["id"], r["state"]) for r in records(legacy.events, legacy.state)] == [(cid, "superseded")]


def test_the_library_forget_writes_retired_false(tmp_path):
    layout = Layout(tmp_path / "store")
    draft = validate({"text": "The office is in Berlin"}, max_chars=1000)
    (decision,) = writes.remember(layout, [draft], now="2026-06-01T09:00:00Z", config=CONFIG)
    done = writes.forget(layout, decision.id, now="2026-06-02T09:00:00Z", reason=f"{RETIRED}: x")
    assert done.changed
    from memstore.store.transaction import LogView

    event = list(LogView(layout).events())[-1]
    assert (event["op"], event["retired"], event["reason"]) == ("forget", False, f"{RETIRED}: x")


def test_the_digest_leaves_out_retired_at_its_default():
    """States that never retire anything digest as they did before the field existed."""
    log, _tea, _coffee = with_summary()
    before = digest(log.state)
    m = log.state.memories[SUMMARY_ID]
    log.state.memories[SUMMARY_ID] = replace(m, retired=True)
    assert digest(log.state) != before
    log.state.memories[SUMMARY_ID] = m
    assert digest(log.state) == before
