"""The nightly keeps what it was told: different statements on one subject are not
repetitions, contradictions and outcomes are never merged, a supersession needs the same
thing, and expiry never drops a durable or protected memory. Each case runs through the
engine (memstore.consolidate) and the reference (memstore.lifecycle.reference); the
properties hold on random histories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore import consolidate as engine
from memstore.beliefs import one_thing
from memstore.config import load_config
from memstore.conflicts import contradiction
from memstore.lifecycle import reference
from memstore.lifecycle.rules import says_all
from memstore.memlog import MemLog
from memstore.model import DURABLE_KINDS
from memstore.salience import is_protected
from memstore.timeutil import ts_after

sys.path.insert(0, str(Path(__file__).parent))
from test_consolidate_incremental import HASH, _history, request  # noqa: E402

CONFIG = load_config(None)
ENGINES = pytest.mark.parametrize("night", [engine.consolidate, reference.consolidate], ids=["engine", "reference"])
DAY = "2026-03-02T09:00:00Z"


def _lived(night, requests: list[dict], *nights: str) -> tuple[MemLog, list[dict]]:
    """The requests remembered a minute apart from DAY, then a night at each of ``nights``."""
    log = MemLog()
    for i, r in enumerate(requests):
        log.remember([r], ts_after(DAY, i / 1440), CONFIG)
    events = []
    for now in nights:
        events += log.run(night, now, CONFIG, embedder=HASH)
    return log, events


def _statuses(log: MemLog) -> dict[str, str]:
    return {m.text: m.status for m in log.state.ordered()}


BILLING = ["Billing uses Stripe for card payments", "Invoices are sent on the 1st of each month",
           "Maria is the billing team lead", "Refunds over 500 EUR need a second approval",
           "The billing service is written in Go", "Billing reconciliation runs nightly at 2am"]


@ENGINES
def test_six_different_facts_on_one_subject_stay_six(night):
    log, events = _lived(night, [{"text": t, "subject": "billing"} for t in BILLING], "2026-03-03T03:00:00Z")
    assert _statuses(log) == dict.fromkeys(BILLING, "active")
    assert not [e for e in events if e["op"] in ("merge", "supersede") or e.get("members")]


@ENGINES
@pytest.mark.parametrize("pair", [
    ({"text": "The team deploys on Fridays", "subject": "deploys"},
     {"text": "The team does not deploy on Fridays", "subject": "deploys"}),
    ({"text": "The API rate limit is 100 requests per minute", "subject": "rate-limit"},
     {"text": "The API rate limit is 200 requests per minute", "subject": "rate-limit"}),
    ({"text": "定例会議は10時から", "subject": "定例会議"}, {"text": "定例会議は11時から", "subject": "定例会議"}),
    ({"text": "The budget for the autumn marketing campaign across all regions is 10000"},
     {"text": "The budget for the autumn marketing campaign across all regions is 25000"}),
    ({"text": "Deployed the search tweak on Friday, no issues", "subject": "friday-deploys", "kind": "incident",
      "outcome": "positive"},
     {"text": "Deployed the search tweak on Friday, checkout broke", "subject": "friday-deploys",
      "kind": "incident", "outcome": "negative"}),
], ids=["negation", "number", "ja-time", "no-subject", "outcomes"])
def test_a_contradiction_or_an_opposite_outcome_is_never_a_repetition(night, pair):
    log, events = _lived(night, list(pair), "2026-03-03T03:00:00Z", "2026-03-20T03:00:00Z")
    assert not [e for e in events if e["op"] == "merge" or e.get("members")]
    assert all(m.merged_into is None and m.status != "archived" for m in log.state.ordered())


@ENGINES
def test_a_repetition_in_other_words_is_merged_and_promoted(night):
    log, events = _lived(night, [{"text": "Checkout test flaked on CI", "subject": "ci"},
                                 {"text": "Checkout test flaked on CI again", "subject": "ci"}],
                         "2026-03-03T03:00:00Z")
    assert [e["op"] for e in events] == ["merge", "promote"]
    assert _statuses(log) == {"Checkout test flaked on CI": "active", "Checkout test flaked on CI again": "archived"}


@ENGINES
def test_a_repetition_that_says_more_is_kept_beside_the_first(night):
    log, _events = _lived(night, [{"text": "Billing uses Stripe", "subject": "billing", "kind": "fact"},
                                  {"text": "Billing uses Stripe and Adyen", "subject": "billing", "kind": "fact"}],
                          "2026-03-03T03:00:00Z")
    assert set(_statuses(log).values()) == {"active"}
    assert not says_all("Billing uses Stripe", "Billing uses Stripe and Adyen since 2024")
    assert says_all("Billing uses Stripe and Adyen since 2024", "Billing uses Stripe since 2024")


@ENGINES
def test_a_cancellation_of_another_thing_supersedes_nothing(night):
    log, events = _lived(night, [{"text": "Decided on latency for billing"},
                                 {"text": "Postponed latency for deploys"},
                                 {"text": "Decided on pricing for search", "subject": "search"},
                                 {"text": "Cancelled pricing for search", "subject": "mobile"},
                                 {"text": "The offsite is on June 12"},
                                 {"text": "The offsite is cancelled"}], "2026-03-03T03:00:00Z")
    superseded = {e["old"] for e in events if e["op"] == "supersede"}
    assert [m.text for m in log.state.ordered() if m.id in superseded] == ["The offsite is on June 12"]


@ENGINES
def test_expiry_never_drops_a_durable_or_protected_memory(night):
    told = [{"text": "Lunch was late today"},
            {"text": "The staging DB listens on port 5433", "kind": "fact", "tier": "short"},
            {"text": "Call the plumber about the leak", "importance": 0.9},
            {"text": "Never store card numbers in logs"}]
    log, events = _lived(night, told, "2026-03-03T03:00:00Z", "2026-03-17T03:00:00Z")
    assert _statuses(log) == {"Lunch was late today": "expired", "The staging DB listens on port 5433": "active",
                              "Call the plumber about the leak": "active", "Never store card numbers in logs": "active"}
    assert [m.tier for m in log.state.ordered()][1:] == ["long"] * 3
    assert [e["op"] for e in events].count("expire") == 1


# random nightly histories: the three properties hold on every event any night appends
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=2, max_size=24), st.lists(st.integers(min_value=0, max_value=30), min_size=1,
                                                             max_size=3))
def test_no_night_merges_a_contradiction_drops_what_lasts_or_replaces_another_thing(requests, gaps):
    log = MemLog()
    for at, req in _history(requests):
        log.remember([req], at, CONFIG)
    now = log.state.at
    for gap in gaps:
        now = ts_after(now, gap)
        before = dict(log.state.memories)  # (what the rules read of a record no night changes, but
        # salience: a merge only raises it, so a record protected before the night stays so)
        for e in log.run(engine.consolidate, now, CONFIG, embedder=HASH):
            if e["op"] == "promote":
                assert e["members"] == []  # promotion joins nothing
            elif e["op"] == "merge":
                old, new = before[e["old"]], before[e["new"]]
                assert contradiction(old.text, new.text) is None and says_all(old.text, new.text)
                assert old.outcome is None and new.outcome is None or old.text == new.text
            elif e["op"] == "expire":
                m = before[e["id"]]
                assert m.kind not in DURABLE_KINDS
                assert not is_protected(m.salience, CONFIG["salience"]["protect_threshold"])
            elif e["op"] == "supersede":
                assert one_thing(before[e["old"]], before[e["new"]])
