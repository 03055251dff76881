"""A snapshot gives back exactly the records it was written from: the column reader's shared
values (a column's repeats as one object, empty lists as one tuple) and the descriptor-built
records change no field, whatever mix of nulls, repeats and distinct values a column holds
(columns past the reader's 4,096-row sample, and columns whose repeats start late)."""

from __future__ import annotations

import random

import pytest

from memstore.model import MEMORY_FIELDS, Memory, Salience, evolve, memories_from_columns
from memstore.state import State, digest
from memstore.store.snapshot import parquet_bytes, read_snapshot


def _records(n: int, seed: int) -> list[Memory]:
    rng = random.Random(seed)
    subjects = [None, *(f"topic-{i}" for i in range(40))]
    out = []
    for i in range(n):
        late = i > 5000  # a column distinct in the sample, then repeating
        m = Memory(
            id=f"m{i:015x}", text=f"memory number {i} " + "x" * rng.randrange(3),
            recorded_at=f"2026-0{1 + i % 9}-1{i % 10}T00:00:00Z", occurred_at=rng.choice(["2026", "2026-03", "2020-01-02"]),
            precision=rng.choice(["year", "month", "day"]), kind=rng.choice(["note", "fact", "meeting"]),
            key=None if i % 7 else f"k{i}", subject=rng.choice(subjects), domain=rng.choice([None, "eng", "ops"]),
            actors=rng.choice([(), ("alice",), ("alice", "bob")]),
            outcome=rng.choice([None, None, "positive", "negative"]),
            time_buckets=rng.choice([(), ("2026",), ("2026", "2026-03")]),
            tier=rng.choice(["short", "long"]), status=rng.choice(["active", "archived", "superseded"]),
            salience=Salience.uniform(rng.choice([0.2, 0.5, 0.8]), risk=rng.random()) if i % 13 else
            Salience.uniform(0.5, urgency=rng.choice([0.0, -0.0])),  # equal, yet not the same text
            confidence=rng.choice([1.0, 0.7, 0.763]), source=rng.choice(["human", "agent"]),
            superseded_by=f"m{rng.randrange(n):015x}" if i % 3 == 0 else None,
            derived_from=tuple(f"m{j:015x}" for j in range(i % 4)),
            conflicts_with=("mb",) if i % 11 == 0 else (), recall_count=i % 5,
            mention_count=1 + i % 3, expires_at=None if i % 2 else "2026-12-01T00:00:00Z", seq=i + 1,
            reason=(f"why {i}" if not late else rng.choice(["a", "b"])) if i % 5 == 0 else None,
            turn=None if i % 4 else i)
        out.append(m)
    return out


def test_a_snapshot_reads_back_the_records_it_was_written_from(tmp_path):
    records = _records(9000, seed=15)
    state = State(memories={m.id: m for m in records}, keys={"k7": records[7].id}, seq=len(records),
                  at="2026-09-01T00:00:00Z")
    path = tmp_path / "state.parquet"
    path.write_bytes(parquet_bytes(state))
    back, meta = read_snapshot(path)
    assert list(back.memories) == list(state.memories)  # the canonical order, id for id
    assert all(back.memories[m.id] == m for m in records)
    assert digest(back) == digest(state) and meta["rows"] == len(records)


def test_records_built_from_columns_equal_the_constructors():
    records = _records(300, seed=3)
    columns = [[getattr(m, f) for m in records] for f in MEMORY_FIELDS]
    built = memories_from_columns(columns)
    assert built == records and all(type(b) is Memory for b in built)
    assert hash(built[5]) == hash(records[5])


def test_a_record_evolved_equals_dataclasses_replace():
    """The fold's ``evolve`` gives the record ``dataclasses.replace`` gives, for any set of
    fields changed (every field is a slot: nothing is left unset or shared with the old)."""
    from dataclasses import replace

    records = _records(200, seed=9)
    rng = random.Random(4)
    for m in records:
        names = rng.sample(MEMORY_FIELDS, rng.randrange(0, 6))
        changes = {f: getattr(records[rng.randrange(len(records))], f) for f in names}
        got, want = evolve(m, **changes), replace(m, **changes)
        assert type(got) is Memory and got == want and hash(got) == hash(want)
        assert all(getattr(got, f) is getattr(want, f) for f in MEMORY_FIELDS)
        assert got is not m and m == replace(m)  # (the old record unchanged)
    with pytest.raises(TypeError, match="no field 'colour'"):
        evolve(records[0], status="archived", colour="red")


def test_columns_that_do_not_match_the_fields_are_refused():
    import pytest

    with pytest.raises(ValueError, match="columns for"):
        memories_from_columns([[]] * (len(MEMORY_FIELDS) - 1))
    with pytest.raises(ValueError):
        memories_from_columns([[1]] * (len(MEMORY_FIELDS) - 1) + [[1, 2]])


def test_list_columns_read_back_as_tuples_whatever_they_hold():
    """``_tuples``: lists packed by their items' codes (up to four items), longer ones read
    one by one, null lists and null items, a sliced column in several chunks, and a column
    of too many distinct items to pack."""
    import pyarrow as pa
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from memstore.store.snapshot import _tuples

    def check(rows, cut: int = 0) -> None:
        arr = pa.array(rows, type=pa.list_(pa.string()))
        column = pa.chunked_array([arr[:cut], arr[cut:]], type=arr.type)
        got = _tuples(column)
        assert got == [tuple(r) if r else () for r in rows]
        assert all(type(t) is tuple for t in got)
        same = {}
        assert all(same.setdefault(t, t) is t for t in got)  # a repeated list is one object

    item = st.one_of(st.none(), st.sampled_from(["a", "b", "é", "", "2026-03"]))
    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.one_of(st.none(), st.lists(item, max_size=7)), max_size=40), st.integers(0, 40))
    def prop(rows, cut):
        check(rows, min(cut, len(rows)))

    prop()
    many = [[f"m{i:015x}"] for i in range(40_000)] + [[f"m{i:015x}", "x"] for i in range(5)] + [None, []]
    check(many, 7)
