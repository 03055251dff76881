"""A reader checks every remembered record (``schema.check_record``), a million at 1M; most
pass through ``schema._record_ok``, the same checks as one test each of the plain JSON types
a line decodes to. It may send a sound record on to the full checker, never pass one the
full checker refuses: held here over records a store writes, with any field replaced by
values of the wrong type, out of range, with control characters, lone surrogates, bools for
numbers, nulls and missing keys.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.codec import dumps, loads
from memstore.config import load_config
from memstore.memlog import MemLog
from memstore.model import MEMORY_FIELDS, memory_to_dict
from memstore.schema import MAX_LABEL, Bad, _record_ok, check_record_fully

CONFIG = load_config(None)


def _written() -> list[dict]:
    """Records as a log holds them (JSON decoded): remembered ones, with subjects, actors,
    outcomes and Japanese text, and whole records after consolidate's events (a state
    export's rows: tiers, statuses, links, mention counts set)."""
    from memstore.consolidate import consolidate

    log = MemLog()
    reqs = [{"text": "We deploy on Fridays.", "subject": "deploys", "actors": ["alice"]},
            {"text": "We never deploy on Fridays.", "subject": "deploys", "kind": "decision"},
            {"text": "We deploy on Fridays.", "subject": "deploys"},
            {"text": "コーヒーに砂糖は入れない", "domain": "personal", "outcome": "positive"},
            {"text": "Checkout broke after the deploy.", "kind": "incident", "outcome": "negative",
             "occurred_at": "2026-01-02"}]
    for n, r in enumerate(reqs):
        log.remember([r], f"2026-01-0{n + 1}T00:00:00Z", CONFIG)
    log.append(consolidate(log.state, now="2026-01-09T00:00:00Z", config=CONFIG), "2026-01-09T00:00:00Z")
    logged = [e["memory"] for e in log.events if isinstance(e.get("memory"), dict)]
    return [loads(dumps(d)) for d in [*logged, *map(memory_to_dict, log.state.ordered())]]


RECORDS = _written()
# invalid_periods: spells from/until, oldest first (the last three are refused)
PERIODS = [["2026-01-02T03:04:05Z/2026-01-03T00:00:00Z"],
           ["2026-01-02T03:04:05Z/2026-01-03T00:00:00Z", "2026-02-01T00:00:00Z/2026-02-02T00:00:00Z"],
           ["2026-01-03T00:00:00Z/2026-01-02T03:04:05Z"], ["2026-01-02T03:04:05Z"],
           ["2026-02-01T00:00:00Z/2026-02-02T00:00:00Z", "2026-01-02T03:04:05Z/2026-01-03T00:00:00Z"]]
VALUES = [None, True, False, -3, -1, 0, 1, 2, 2**70, 0.5, 1.0, 0.0, -0.0, 1.5, -0.1, math.nan, math.inf, -math.inf,
          "", " ", "note", "fact", "meeting", "short", "long", "active", "archived", "raw", "policy", "human",
          "agent", "positive", "mitigate", "year", "day", "week", "month", "minute", "2026", "2026-13",
          "2026-02-30", "2026-01-05", "2026-01-06",
          "0000-01-01", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05+09:00", "2026-01-02T24:00:00Z",
          "m0123456789abcde", "m0123456789ABCDE", "m0123456789abcde\n", "a\nb", "a\x00b", "tab\there", "\x85",
          "\u2028", "\ud800", "ok", "x" * (MAX_LABEL + 1), "2026-06", [], ["m0123456789abcde"], ["alice"], [""],
          [None], [1], ["a\nb"], ["\ud800"], ["x" * 11], {}, {"importance": 0.5}, {"importance": True},
          {"importance": 1}, {"importance": math.nan}, {"importance": 1.2}, {"nope": 0.5}, {"risk": "0.5"},
          *PERIODS]
BAD = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-3, max_value=3), st.just(2**70),
    st.sampled_from([0.5, 1.0, 0.0, -0.0, 1.5, -0.1, math.nan, math.inf, -math.inf]),
    st.sampled_from(["", " ", "note", "fact", "meeting", "short", "long", "active", "archived", "raw",
                     "policy", "human", "agent", "positive", "mitigate", "year", "day", "week", "month", "minute",
                     "2026-01-05", "2026-01-06",
                     "2026", "2026-13", "2026-02-30", "0000-01-01", "2026-01-02T03:04:05Z",
                     "2026-01-02T03:04:05+09:00", "2026-01-02T24:00:00Z", "m0123456789abcde",
                     "m0123456789ABCDE", "m0123456789abcde\n", "a\nb", "a\x00b", "tab\there", "\x85",
                     "\u2028", "\ud800", "ok", "x" * (MAX_LABEL + 1), "2026-06"]),
    st.text(max_size=12),
    st.lists(st.sampled_from(["m0123456789abcde", "alice", "", "2026", None, 1, "a\nb"]), max_size=3),
    st.dictionaries(st.sampled_from(["importance", "risk", "urgency", "nope"]),
                    st.sampled_from([0.5, 1, 0, True, None, 1.2, math.nan, "0.5"]), max_size=3),
)


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(range(len(RECORDS))),
       st.lists(st.tuples(st.sampled_from(MEMORY_FIELDS), st.one_of(st.just("<missing>"), BAD)), max_size=3),
       st.sampled_from([1_000_000, 20]))
def test_a_record_passed_quickly_is_one_the_full_check_passes(which, changes, max_chars):
    d = dict(RECORDS[which])
    for name, value in changes:
        if value == "<missing>":
            d.pop(name, None)
        else:
            d[name] = value
    if _record_ok(d, max_chars):
        assert _problem(d, max_chars) is None, d


def _problem(d, max_chars: int = 1_000_000) -> str | None:
    try:
        check_record_fully(d, max_chars=max_chars)
    except Bad as exc:
        return str(exc)
    return None


def test_no_single_field_changed_passes_quickly_where_the_full_check_refuses():
    """Every field of every record, each value of ``VALUES`` or left out, one at a time."""
    tried = refused = 0
    for record in RECORDS:
        for name in MEMORY_FIELDS:
            for value in [*VALUES, "<missing>"]:
                d = dict(record)
                if value == "<missing>":
                    d.pop(name, None)
                else:
                    d[name] = value
                for max_chars in (1_000_000, 20):
                    tried += 1
                    if _problem(d, max_chars) is not None:
                        refused += 1
                        assert not _record_ok(d, max_chars), (name, value, max_chars)
    assert refused > tried // 4  # (the values are mostly wrong somewhere)


def test_invalid_periods_are_spells_in_order():
    d = dict(RECORDS[0])
    for periods, ok in zip(PERIODS, (True, True, False, False, False), strict=True):
        d["invalid_periods"] = periods
        assert (_problem(d) is None, _record_ok(d, 1_000_000)) == (ok, ok), periods
    assert _problem({**d, "invalid_periods": PERIODS[2]}).startswith("invalid_periods must be a list")


def test_records_a_store_writes_pass_quickly():
    assert RECORDS and all(_record_ok(d, 1_000_000) for d in RECORDS)
    assert all(_problem(d) is None for d in RECORDS)
