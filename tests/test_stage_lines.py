"""The lines `consolidate` and `distill` print name records by text, including a record
the same run creates (the CLI does not fold the run into a copy of the state to find it)."""

from __future__ import annotations

from types import SimpleNamespace

from cli.stage import Texts, describe


def _state(**texts: str):
    return SimpleNamespace(memories={mid: SimpleNamespace(text=t) for mid, t in texts.items()})


def test_a_record_made_in_the_same_run_is_named_by_its_text():
    state = _state(mold="Deploys freeze on Fridays", mraw="Friday deploy broke billing")
    policy = {"op": "policy", "memory": {"id": "mpol", "level": "policy", "confidence": 0.8,
                                         "text": "Do not deploy on Fridays", "derived_from": ["mraw"]}}
    events = [policy, {"op": "supersede", "old": "mold", "new": "mpol", "reason": "newer policy"},
              {"op": "conflict", "id": "c1", "rule": "negation", "old": "mraw", "new": "mgone"}]
    texts = Texts(state, events)
    assert [describe(ev, texts) for ev in events] == [
        "mpol policy confidence 0.8 'Do not deploy on Fridays' <- 1 source(s)",
        "mold by mpol 'Do not deploy on Fridays' (newer policy)",
        "c1 negation: mraw 'Friday deploy broke billing' vs mgone",  # an unknown id stays an id
    ]


def test_a_later_event_of_the_run_wins_and_long_texts_are_cut():
    state = _state(m1="x" * 80)
    events = [{"op": "distill", "memory": {"id": "s1", "level": "summary", "text": "first", "derived_from": []}},
              {"op": "distill", "memory": {"id": "s1", "level": "summary", "text": "second", "derived_from": []}}]
    texts = Texts(state, events)
    assert texts.get("s1") == "second"
    assert describe({"op": "archive", "id": "m1"}, texts) == f"m1 {'x' * 59 + '…'!r}"
