"""Properties (hypothesis): salience bounds and monotone decay, protected memories,
idempotent lifecycle stages, and a log that only ever grows at its end."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.config import load_config
from memstore.conflicts import records, resolve_event
from memstore.consolidate import consolidate
from memstore.distill import distill
from memstore.embed import HashingEmbedder
from memstore.memlog import MemLog
from memstore.model import AXES, Memory, Salience
from memstore.salience import effective, explain, is_protected
from memstore.store.layout import Layout
from memstore.store.log import append, log_files
from memstore.store.open import load_state
from memstore.timeutil import ts_after

CONFIG = load_config(None)
HASH = HashingEmbedder(256)
T0 = "2026-01-01T00:00:00Z"

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
saliences = st.builds(Salience, **{a: unit for a in AXES})
days = st.floats(min_value=0.0, max_value=3650.0, allow_nan=False)


def memory(sal: Salience, confidence: float, recalls: int = 0) -> Memory:
    return Memory(id="m0", text="x", recorded_at=T0, occurred_at="2026-01-01", precision="day",
                  salience=sal, confidence=confidence, recall_count=recalls, last_reinforced_at=T0)


@given(saliences, unit, st.integers(min_value=0, max_value=10_000), days)
def test_effective_salience_stays_in_the_unit_interval(sal, confidence, recalls, age):
    now = ts_after(T0, age)
    value = effective(memory(sal, confidence, recalls), now, CONFIG)
    assert 0.0 <= value <= 1.0
    assert explain(memory(sal, confidence, recalls), now, CONFIG)["effective"] == value


@given(saliences, unit, st.integers(min_value=0, max_value=50), days, days)
def test_effective_salience_never_rises_without_reinforcement(sal, confidence, recalls, a, b):
    m = memory(sal, confidence, recalls)
    early, late = ts_after(T0, min(a, b)), ts_after(T0, max(a, b))
    assert effective(m, late, CONFIG) <= effective(m, early, CONFIG)


@given(saliences, unit, days)
def test_protected_memories_never_decay(sal, confidence, age):
    sal = replace(sal, risk=max(sal.risk, CONFIG["salience"]["protect_threshold"]))
    m = memory(sal, confidence)
    assert is_protected(m.salience, CONFIG["salience"]["protect_threshold"])
    assert effective(m, ts_after(T0, age), CONFIG) == effective(m, T0, CONFIG)


TEXTS = ("We deploy on Fridays.", "We never deploy on Fridays.", "I prefer tea in the morning.",
         "I prefer coffee in the morning.", "The rate limit is 100 per minute.", "The rate limit is 250 per minute.",
         "Checkout broke after the deploy.", "Billing runs on Postgres.", "Billing now runs on Postgres.",
         "Standup notes for the team.", "コーヒーに砂糖は入れない", "コーヒーに砂糖を入れる")
request = st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "day": st.integers(min_value=0, max_value=120)},
    optional={
        "subject": st.sampled_from(("deploys", "drink", "limits", None)),
        "outcome": st.sampled_from(("positive", "negative")),
        "tier": st.sampled_from(("short", "long")),
        "kind": st.sampled_from(("note", "fact", "incident", "preference")),
        "actors": st.lists(st.sampled_from(("ann", "bo")), max_size=2, unique=True),
        "importance": unit, "risk": st.floats(min_value=0.0, max_value=0.6), "urgency": unit,
        "confidence": unit,
    },
)


def _store(requests: list[dict], config) -> MemLog:
    log = MemLog()
    for n, req in enumerate(sorted(requests, key=lambda r: r["day"])):
        at = ts_after(T0, req["day"] + n / 10_000)  # distinct, increasing record times
        log.remember([{k: v for k, v in req.items() if k != "day" and v is not None}], at, config)
    return log


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=14), st.integers(min_value=1, max_value=400), st.booleans())
def test_consolidate_and_distill_are_idempotent_at_a_fixed_now(requests, later, auto):
    config = CONFIG if auto else load_config("[conflicts]\nauto_supersede = false\n")
    log = _store(requests, config)
    now = ts_after(log.state.at, later)
    log.run(consolidate, now, config, embedder=HASH)
    assert consolidate(log.state, now=now, config=config, embedder=HASH) == []
    log.run(distill, now, config)
    assert distill(log.state, now=now, config=config) == []
    assert consolidate(log.state, now=now, config=config, embedder=HASH) == []  # distill left it settled


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=10),
       st.lists(st.sampled_from(("consolidate", "distill", "forget", "resolve")), min_size=1, max_size=8))
def test_no_event_deletes_or_rewrites_a_log_line(requests, actions):
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp) / "store")
        log = _store(requests, CONFIG)
        now = log.state.at
        append(layout, [{k: v for k, v in e.items() if k != "seq"} for e in log.events], now)
        before = b"".join(p.read_bytes() for p in log_files(layout))
        for i, action in enumerate(actions):
            now = ts_after(now, 1 + i)
            state, reader = load_state(layout, use_snapshots=False)
            if action == "consolidate":
                events = consolidate(state, now=now, config=CONFIG, embedder=HASH)
            elif action == "distill":
                events = distill(state, now=now, config=CONFIG)
            elif action == "forget":
                events = [{"op": "forget", "at": now, "id": m.id, "reason": "test"} for m in state.ordered()[:1]]
            else:
                events = [resolve_event(r, "old", now) for r in records(reader.events(), state)[:1]]
                reader = None
            append(layout, events, now)
            after = b"".join(p.read_bytes() for p in log_files(layout))
            assert after.startswith(before)
            before = after
