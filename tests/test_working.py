"""A lifecycle run's working state (memstore.working): whatever its events write (records
replaced, records that leave or join a selection, records created after the others or out
of order), ``ordered`` and ``select`` give what a fresh sort and scan would, and the state
it was made from is never changed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.model import Memory
from memstore.state import State
from memstore.working import Working

STATUSES = ("active", "expired", "archived")


def record(i: int, seq: int, status: str = "active") -> Memory:
    return Memory(id=f"m{i:04d}", text=f"t{i}", recorded_at="2026-01-01T00:00:00Z",
                  occurred_at="2026-01-01", precision="day", seq=seq, status=status)


def active(m: Memory) -> bool:
    return m.status == "active"


def not_archived(m: Memory) -> bool:
    return m.status != "archived"


steps = st.lists(st.one_of(
    st.tuples(st.just("set"), st.integers(0, 40), st.sampled_from(STATUSES)),
    st.tuples(st.just("create"), st.integers(0, 3), st.sampled_from(STATUSES)),  # 0: out of order
    st.tuples(st.just("look"), st.sampled_from([active, not_archived]), st.just(None)),
), max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(STATUSES), min_size=0, max_size=30), steps)
def test_listings_are_those_of_a_fresh_sort_and_scan(statuses, ops):
    base = State(memories={r.id: r for r in (record(i, 2 * i + 2, s) for i, s in enumerate(statuses))},
                 seq=2 * len(statuses) + 2)
    before = dict(base.memories)
    work = Working.of(base)
    made = len(statuses)
    for op, a, b in ops:
        if op == "set" and base.memories:
            rid = sorted(work.memories)[a % len(work.memories)]
            work.memories[rid] = replace(work.memories[rid], status=b)
        elif op == "create":
            # a stand-in seq after every other, or (a == 0) one between two older records
            seq = work.seq + 1 if a else 2 * (made % max(len(statuses), 1)) + 1
            work.seq = max(work.seq, seq)
            work.memories[f"m{made:04d}"] = record(made, seq, b)
            made += 1
        elif op == "look":
            scan = [m for m in sorted(work.memories.values(), key=lambda m: (m.seq, m.id)) if a(m)]
            assert work.select(a.__name__, a) == scan
        assert work.ordered() == sorted(work.memories.values(), key=lambda m: (m.seq, m.id))
    assert base.memories == before


def test_a_record_can_only_be_replaced_or_added():
    work = Working.of(State(memories={"m1": record(1, 1)}, seq=1))
    for remove in (lambda d: d.pop("m1"), lambda d: d.__delitem__("m1"), lambda d: d.clear(),
                   lambda d: d.update({}), lambda d: d.setdefault("m2", None), lambda d: d.popitem()):
        with pytest.raises(TypeError, match="never removes one"):
            remove(work.memories)
    assert list(work.memories) == ["m1"]
