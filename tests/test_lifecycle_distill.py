"""distill: the ladder with provenance, quality gates, independent sources, and
policies from outcomes with the confidence formula written out."""

from __future__ import annotations

import json

import pytest

from memstore.config import load_config
from memstore.distill import derived_id, distill, passes_gates
from memstore.memlog import MemLog
from memstore.policies import active_policies, policy_confidence

CONFIG = load_config(None)


def replay(jsonl: str) -> MemLog:
    return MemLog().replay(jsonl, CONFIG)


def run(log: MemLog, now: str) -> list[dict]:
    return log.run(distill, now, CONFIG)


def by_text(log: MemLog, text: str):
    return next(m for m in log.state.ordered() if m.text == text)


FADED = """
{"at": "2026-01-02T10:00:00Z", "text": "Friday deploys are risky. The deploy on 2 January broke checkout for an hour.", "subject": "friday-deploy", "domain": "eng", "kind": "incident", "tier": "long", "outcome": "negative", "importance": 0.3, "urgency": 0.3, "risk": 0.3, "novelty": 0.3, "emotion": 0.3, "recurrence": 0.3, "actionability": 0.3}
{"at": "2026-01-16T10:00:00Z", "text": "Rolled back the Friday release after login errors spiked.", "subject": "friday-deploy", "domain": "eng", "kind": "incident", "tier": "long", "outcome": "negative", "confidence": 0.5, "importance": 0.3, "urgency": 0.3, "risk": 0.3, "novelty": 0.3, "emotion": 0.3, "recurrence": 0.3, "actionability": 0.3}
{"at": "2026-01-30T10:00:00Z", "text": "Search went down after the Friday deploy; nobody was on call.", "subject": "friday-deploy", "domain": "eng", "kind": "incident", "tier": "long", "outcome": "negative", "confidence": 0.7, "importance": 0.3, "urgency": 0.3, "risk": 0.3, "novelty": 0.3, "emotion": 0.3, "recurrence": 0.3, "actionability": 0.3}
"""


def test_policy_confidence_is_the_seed_formula():
    log = replay(FADED)
    (event,) = [e for e in run(log, "2026-02-01T04:00:00Z") if e["op"] == "policy"]
    policy = event["memory"]
    # composite = 0.3 * (0.6 + 0.4 * confidence) for confidences 1.0, 0.5, 0.7
    salience_sum = 0.3 * 1.0 + 0.3 * 0.8 + 0.3 * 0.88
    assert policy["confidence"] == round(3 / (3 + 1) + salience_sum / (3 * 4), 6) == 0.817
    assert policy["direction"] == "mitigate" and policy["level"] == "policy"
    assert policy["text"] == ("[eng] Avoid: friday-deploy: Search went down after the Friday deploy; nobody was "
                              "on call. (3 negative outcomes)")
    assert policy["derived_from"] == [m.id for m in log.state.ordered() if m.level == "raw"]


def test_policy_confidence_clamps_to_one():
    log = replay("\n".join(
        f'{{"at": "2026-01-{d:02d}T10:00:00Z", "text": "Outage number {d}", "subject": "outages", '
        f'"outcome": "negative", "kind": "incident", "importance": 1, "urgency": 1, "risk": 1, "novelty": 1, '
        f'"emotion": 1, "recurrence": 1, "actionability": 1}}' for d in range(1, 5)))
    evidence = [m for m in log.state.ordered()]
    assert policy_confidence(evidence, CONFIG["salience"]["weights"]) == 1.0  # 4/5 + 4/16 = 1.05


def test_one_outcome_is_not_a_policy_and_support_growth_updates_the_same_policy():
    log = replay("""
{"at": "2026-03-01T10:00:00Z", "text": "Deal with acme closed after a pilot", "domain": "sales", "kind": "deal", "actor": "acme", "outcome": "positive"}
""")
    assert run(log, "2026-03-08T04:00:00Z") == []
    log.replay('{"at": "2026-03-20T10:00:00Z", "text": "Acme renewed after the pilot", "domain": "sales", '
               '"kind": "deal", "actor": "acme", "outcome": "positive"}', CONFIG)
    (created,) = run(log, "2026-03-22T04:00:00Z")
    assert created["memory"]["text"] == "[sales] Repeat: deal with acme: Deal with acme closed after a pilot (2 positive outcomes)"
    assert created["memory"]["confidence"] == round(2 / 3 + 2 * 0.5 / 8, 6)
    assert run(log, "2026-03-22T04:00:00Z") == []  # nothing new: nothing appended
    log.replay('{"at": "2026-04-02T10:00:00Z", "text": "Acme bought the add-on after the pilot", "domain": "sales", '
               '"kind": "deal", "actor": "acme", "outcome": "positive"}', CONFIG)
    (grown,) = run(log, "2026-04-05T04:00:00Z")
    assert grown["memory"]["id"] == created["memory"]["id"]
    assert grown["memory"]["confidence"] == round(3 / 4 + 3 * 0.5 / 12, 6)
    (view,) = active_policies(log.state)
    assert (view.direction, view.confidence, len(view.evidence)) == ("reinforce", 0.875, 3)
    assert view.policy.recorded_at == "2026-03-22T04:00:00Z"  # created then, updated since


def test_the_ladder_climbs_one_rung_per_run_with_provenance():
    log = replay(FADED)
    raws = [m for m in log.state.ordered() if m.level == "raw"]
    first = run(log, "2026-02-01T04:00:00Z")
    summaries = [e["memory"] for e in first if e["op"] == "distill"]
    assert [s["level"] for s in summaries] == ["summary"] * 3
    assert summaries[0]["text"] == ("The deploy on 2 January broke checkout for an hour. "
                                    "[incident; friday-deploy; 2026-01; negative]")
    assert [s["derived_from"] for s in summaries] == [[m.id] for m in raws]
    for m in raws:
        after = log.state.memories[m.id]
        assert after.status == "active"  # the original stays: it is the evidence
        assert after.abstracted_by == derived_id("summary", [m.id])

    (pattern_event,) = [e for e in run(log, "2026-02-08T04:00:00Z") if e["op"] == "distill"]
    pattern = pattern_event["memory"]
    assert pattern["level"] == "pattern"
    assert pattern["derived_from"] == [s["id"] for s in summaries]
    assert pattern["text"].startswith("[eng] friday-deploy: ")
    assert pattern["text"].endswith("[pattern across 3 independent sources, 2026-01]")

    (principle_event,) = run(log, "2026-02-15T04:00:00Z")
    principle = principle_event["memory"]
    assert (principle["level"], principle["derived_from"]) == ("principle", [pattern["id"]])

    (climb,) = run(log, "2026-02-22T04:00:00Z")  # its originals carry outcomes: it joins the policy
    assert climb["op"] == "policy" and climb["abstracts"] == [principle["id"]]
    assert log.state.memories[principle["id"]].abstracted_by == climb["memory"]["id"]
    assert run(log, "2026-03-01T04:00:00Z") == []  # the top of the ladder


def test_a_pattern_needs_three_independent_sources():
    faint = dict.fromkeys(("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability"), 0.2)
    lines = [
        json.dumps({"at": f"2026-01-{d:02d}T10:00:00Z", "text": text, "subject": "checkout", "tier": "long", **faint})
        for d, text in ((2, "Checkout broke after the Friday deploy."), (3, "Checkout broke after the Friday deploy!"),
                        (4, "Payments timed out during checkout on mobile."))
    ]
    log = replay("\n".join(lines))
    run(log, "2026-01-11T04:00:00Z")  # three summaries
    assert [e["memory"]["level"] for e in run(log, "2026-01-18T04:00:00Z")] == []  # two distinct + a repeat
    log.replay(lines[2].replace("2026-01-04", "2026-01-19").replace("Payments timed out during checkout on mobile.",
                                                                      "The checkout button froze in Safari."), CONFIG)
    run(log, "2026-01-25T04:00:00Z")  # the fourth one's summary
    (pattern,) = run(log, "2026-02-01T04:00:00Z")
    assert pattern["memory"]["level"] == "pattern"
    assert len(pattern["memory"]["derived_from"]) == 4  # the repeat is a source, but not an independent one
    assert pattern["memory"]["text"].endswith("[pattern across 3 independent sources, 2026-01]")


def test_protected_memories_never_climb():
    log = replay("""
{"at": "2020-01-02T10:00:00Z", "text": "The root CA key lives in the hardware token in the safe.", "tier": "long", "risk": 0.7, "importance": 0.1, "urgency": 0.1, "novelty": 0.1, "emotion": 0.1, "recurrence": 0.1, "actionability": 0.1}
""")
    assert run(log, "2026-01-01T04:00:00Z") == []


@pytest.mark.parametrize(("core", "text", "sources", "ok"), [
    ("", "   [note; 2026-01] padding to make it long", ["m1"], False),  # empty
    ("A real sentence about checkout", "A real sentence about checkout [note]", [], False),  # ungrounded
    ("Tea, black.", "Tea, black. [note; 2026-03]", ["m1"], False),  # under 30 characters
    ("Tea, black, no sugar, in the morning.", "Tea, black, no sugar, in the morning. [note]", ["m1"], True),
])
def test_quality_gates(core, text, sources, ok):
    assert passes_gates(core, text, sources, CONFIG) is ok


def test_short_abstractions_are_not_shipped():
    log = replay("""
{"at": "2026-01-02T10:00:00Z", "text": "Tea, black.", "tier": "long", "importance": 0.2, "urgency": 0.2, "risk": 0.2, "novelty": 0.2, "emotion": 0.2, "recurrence": 0.2, "actionability": 0.2}
""")
    assert run(log, "2026-02-01T04:00:00Z") == []


def test_distill_twice_at_the_same_now_appends_nothing():
    log = replay(FADED)
    assert run(log, "2026-02-01T04:00:00Z")
    assert distill(log.state, now="2026-02-01T04:00:00Z", config=CONFIG) == []
