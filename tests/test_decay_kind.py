"""Decay by kind of memory (memstore(7), SALIENCE): a per-kind half-life caps every axis's,
and only memories marked important or risky (flags or cue words) are protected."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reliability_support import cli, make_store

from memstore.config import SETTINGS, load_config
from memstore.errors import UsageError
from memstore.model import AXES, KINDS, Memory, Salience
from memstore.salience import effective, explain, half_lives
from memstore.timeutil import ts_after

CONFIG = load_config(None)
T0 = "2026-01-01T00:00:00Z"
LONGEST = SETTINGS["salience"]["kind_half_life_days"].hi


def memory(kind: str, sal: Salience = Salience.uniform(0.5), confidence: float = 1.0,
           recalls: int = 0) -> Memory:
    return Memory(id="m0", kind=kind, text="x", recorded_at=T0, occurred_at="2026-01-01",
                  precision="day", salience=sal, confidence=confidence, recall_count=recalls,
                  last_reinforced_at=T0)


def at(kind: str, days: float, config=CONFIG, **kw) -> float:
    return effective(memory(kind, **kw), ts_after(T0, days), config)


# uniform 0.5 (no importance floor), confidence 1, no recalls: effective at 0/1/7/30/180 days
EXPECTED = {
    "note": [0.5, 0.39685, 0.099213, 0.000488, 0.0],
    "meeting": [0.5, 0.39685, 0.099213, 0.000488, 0.0],
    "disambiguation": [0.5, 0.39685, 0.099213, 0.000488, 0.0],
    "incident": [0.5, 0.473549, 0.343198, 0.104457, 6.1e-05],
    "plan": [0.5, 0.473549, 0.343198, 0.104457, 6.1e-05],
    "deal": [0.5, 0.483013, 0.39635, 0.204247, 0.005282],
    "decision": [0.5, 0.486898, 0.421093, 0.278521, 0.06036],
    "procedure": [0.5, 0.487377, 0.424329, 0.29067, 0.09161],
    "fact": [0.5, 0.487377, 0.424329, 0.29067, 0.09161],
    "definition": [0.5, 0.487377, 0.424329, 0.29067, 0.09161],
    "preference": [0.5, 0.487377, 0.424329, 0.29067, 0.09161],
    "policy": [0.5, 0.487377, 0.424329, 0.29067, 0.09161],
}


@pytest.mark.parametrize("kind", KINDS)
def test_effective_salience_by_kind(kind):
    assert [at(kind, d) for d in (0, 1, 7, 30, 180)] == EXPECTED[kind]


def test_a_note_decays_with_a_three_day_half_life():
    # every axis capped at 3 days: 0.5 * 0.5 ** (1/3) after a day, a quarter after 6 days
    assert at("note", 1) == round(0.5 * 0.5 ** (1 / 3), 6) == 0.39685
    assert at("note", 6) == 0.125


def test_the_half_life_used_is_the_shorter_of_the_axis_and_the_kind():
    assert half_lives("note", CONFIG["salience"]) == (3.0,) * 7
    # importance 180, urgency 7, risk 90, novelty 14, emotion 30, recurrence 60, actionability 21
    assert half_lives("decision", CONFIG["salience"]) == (90.0, 7.0, 90.0, 14.0, 30.0, 60.0, 21.0)
    assert half_lives("fact", CONFIG["salience"]) == (180.0, 7.0, 90.0, 14.0, 30.0, 60.0, 21.0)
    assert half_lives("a-kind-from-a-newer-version", CONFIG["salience"]) == (
        180.0, 7.0, 90.0, 14.0, 30.0, 60.0, 21.0)


def test_a_note_fades_faster_than_a_fact_of_the_same_salience():
    for days in (1, 3, 7, 30):
        assert at("note", days) < at("fact", days)
    assert at("note", 0) == at("fact", 0)


def test_urgency_fades_for_a_decision():
    sal = Salience(importance=0.65, urgency=0.9, risk=0.5, novelty=0.6, emotion=0.4,
                   recurrence=0.5, actionability=0.85)
    ex = explain(memory("decision", sal), ts_after(T0, 28), CONFIG)
    assert ex["kind"] == "decision" and ex["kind_half_life_days"] == 90.0
    assert not ex["protected"]
    urgency = ex["axes"]["urgency"]
    assert (urgency["half_life_days"], urgency["axis_half_life_days"]) == (7.0, 7.0)
    assert urgency["decay"] == 0.0625  # four half-lives
    assert urgency["decayed"] == 0.05625
    importance = ex["axes"]["importance"]
    assert (importance["half_life_days"], importance["axis_half_life_days"]) == (90.0, 180.0)
    assert importance["decay"] == round(0.5 ** (28 / 90), 6)


def test_explain_names_the_half_life_of_every_axis():
    ex = explain(memory("note"), ts_after(T0, 3), CONFIG)
    assert ex["kind_half_life_days"] == 3.0
    assert {a: v["half_life_days"] for a, v in ex["axes"].items()} == dict.fromkeys(AXES, 3.0)
    assert {a: v["decay"] for a, v in ex["axes"].items()} == dict.fromkeys(AXES, 0.5)
    assert ex["effective"] == 0.25 == at("note", 3)


# --- protection: only what is marked important or risky ------------------------------------

def _explain(store, ref: str, now: str) -> dict:
    rc, out, err = cli("--store", store, "show", ref, "--explain", "--json", "--now", now)
    assert (rc, err) == (0, "")
    return json.loads(out)["explain"]


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path / "s")


def _remember(store, *argv: str) -> str:
    rc, out, err = cli("--store", store, "remember", *argv, "--now", T0)
    assert rc == 0, err
    return out.strip()


def test_a_classified_decision_decays_and_a_cued_rule_does_not(store):
    decision = _remember(store, "We decided to ship the billing change this week")
    rule = _remember(store, "We must never deploy on Fridays")
    later = ts_after(T0, 365)
    d = _explain(store, decision, later)
    assert (d["kind"], d["protected"]) == ("decision", False)
    assert d["axes"]["urgency"]["decay"] < 0.001
    # importance 0.65 keeps the floor: a year-old decision weighs 0.2, not its first 0.6
    assert (d["composite"], d["effective"]) == (0.6, 0.2)
    r = _explain(store, rule, later)
    assert r["protected"] is True
    # a recurring rule ("on Fridays") is classified a fact: its prior with importance 0.8
    assert r["effective"] == r["composite"] == 0.56


def test_an_explicit_importance_protects(store):
    plain = _remember(store, "Quarterly numbers are due", "--kind", "plan")
    flagged = _remember(store, "Board deck is due", "--kind", "plan", "--importance", "0.8")
    risky = _remember(store, "Check the backup", "--risk", "0.8")
    later = ts_after(T0, 100)
    assert _explain(store, plain, later)["protected"] is False
    assert _explain(store, flagged, later)["protected"] is True
    assert _explain(store, risky, later)["protected"] is True


def test_an_explicit_kind_gets_the_kinds_prior_and_its_cue_words(store):
    rc, out, _ = cli("--store", store, "remember", "Never run migrations by hand", "--kind",
                     "procedure", "--now", T0, "--json")
    record = json.loads(out)["memory"]
    assert record["salience"] == {"importance": 0.8, "urgency": 0.3, "risk": 0.5, "novelty": 0.4,
                                  "emotion": 0.2, "recurrence": 0.8, "actionability": 0.9}
    rc, out, _ = cli("--store", store, "remember", "We ship on Tuesdays", "--kind", "decision",
                     "--now", T0, "--json")
    assert json.loads(out)["memory"]["salience"]["importance"] == 0.65


# --- configuration -------------------------------------------------------------------------

def test_every_kind_has_a_default_half_life():
    assert set(CONFIG["salience"]["kind_half_life_days"]) == set(KINDS)


def test_a_kind_left_out_keeps_its_default():
    cfg = load_config("[salience.kind_half_life_days]\nnote = 1\n")
    assert cfg["salience"]["kind_half_life_days"]["note"] == 1.0
    assert cfg["salience"]["kind_half_life_days"]["fact"] == 365.0
    assert at("note", 1, cfg) == 0.25


@pytest.mark.parametrize("toml,message", [
    ("[salience.kind_half_life_days]\nnotes = 3",
     "memstore.toml: unknown setting 'salience.kind_half_life_days.notes'; "
     "see `memstore config` for the valid ones"),
    ("[salience.kind_half_life_days]\nfact = 0",
     "memstore.toml: salience.kind_half_life_days.fact 0 is out of range; "
     "use a number from 0.01 to 36500"),
    ("[salience.kind_half_life_days]\nfact = 1e9",
     "memstore.toml: salience.kind_half_life_days.fact 1000000000.0 is out of range; "
     "use a number from 0.01 to 36500"),
    ("[salience.kind_half_life_days]\nfact = nan",
     "memstore.toml: salience.kind_half_life_days.fact nan is out of range; "
     "use a number from 0.01 to 36500"),
    ('[salience.kind_half_life_days]\nfact = "long"',
     "memstore.toml: salience.kind_half_life_days.fact must be a number, not 'long'"),
    ("[salience]\nkind_half_life_days = 30",
     "memstore.toml: salience.kind_half_life_days must be a table"),
])
def test_the_kind_table_is_validated(toml, message):
    with pytest.raises(UsageError) as exc:
        load_config(toml)
    assert str(exc.value) == message


def test_a_bad_kind_table_is_one_error_line(store):
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n'
                                         "[salience.kind_half_life_days]\nnotes = 3\n")
    assert cli("--store", store, "stats", "--now", T0) == (
        2, "", "Error: memstore.toml: unknown setting 'salience.kind_half_life_days.notes'; "
               "see `memstore config` for the valid ones\n")


# --- properties ----------------------------------------------------------------------------

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
saliences = st.builds(Salience, **{a: unit for a in AXES})
ages = st.floats(min_value=0.0, max_value=3650.0, allow_nan=False)
half = st.floats(min_value=0.01, max_value=LONGEST, allow_nan=False)
tables = st.fixed_dictionaries({k: half for k in KINDS})
LONGEST_TABLE = load_config(
    "[salience.kind_half_life_days]\n" + "".join(f"{k} = {LONGEST}\n" for k in KINDS))


def _config(table: dict):
    return load_config("[salience.kind_half_life_days]\n"
                       + "".join(f"{k} = {v!r}\n" for k, v in table.items()))


@given(st.sampled_from(KINDS), saliences, unit, ages, ages, tables)
def test_decay_by_kind_never_raises_effective_salience_with_time(kind, sal, confidence, a, b, table):
    config = _config(table)
    m = memory(kind, sal, confidence)
    early, late = ts_after(T0, min(a, b)), ts_after(T0, max(a, b))
    assert effective(m, late, config) <= effective(m, early, config)


@given(st.sampled_from(KINDS), saliences, unit, st.integers(min_value=0, max_value=20), ages)
def test_a_shorter_kind_half_life_never_raises_salience(kind, sal, confidence, recalls, age):
    m = memory(kind, sal, confidence, recalls)
    now = ts_after(T0, age)
    assert effective(m, now, CONFIG) <= effective(m, now, LONGEST_TABLE)


# rounding halves and clamps are where numpy and Python could part: values on a coarse grid
# hit them often (0.5 ** 1, weights of tenths), and ages in whole and half days
grid = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.75, 1.0]) | unit
records = st.lists(st.tuples(st.sampled_from(KINDS + ("a-kind-of-a-newer-log",)),
                             st.builds(Salience, **{a: grid for a in AXES}), grid,
                             st.integers(min_value=0, max_value=30),
                             st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.0, 30.0, 365.0, -2.0]) | ages),
                   min_size=1, max_size=40)


@given(records, tables)
def test_effective_by_numpy_is_effective_record_for_record(rows, table):
    from memstore.tally import effective_of

    config = _config(table)
    now = ts_after(T0, 400)
    memories = [replace(memory(kind, sal, confidence, recalls), id=f"m{i}",
                        last_reinforced_at=ts_after(now, -age))
                for i, (kind, sal, confidence, recalls, age) in enumerate(rows)]
    assert effective_of(memories, now, config) == [effective(m, now, config) for m in memories]
