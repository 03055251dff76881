"""consolidate's column scans over a snapshot's table (memstore.rowscan), held to the record
tests they stand for, on any records: the rows a night opens with hold every record a stage
scans for (but the update pool and the near-duplicate groups, read apart) or the watermark
and the fold look for; the group rows are those of the groups' test; the pool's column test
is ``_pooled`` itself, and the pool read from columns is the pool the records give, in order,
with the records the run has built judged as they are now."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.consolidate import _UPDATABLE, _pooled, rows
from memstore.model import AXES, KINDS, Memory, Salience, evolve
from memstore.rowscan import group_rows, members, open_rows, pool_of, pooled_rows, shorts
from memstore.state import State
from memstore.store.snapshot import parquet_bytes, read_snapshot
from memstore.working import Working

record = st.fixed_dictionaries({
    "status": st.sampled_from(["active", "expired", "archived", "superseded", "invalidated", None]),
    "retired": st.booleans(),
    "seq": st.integers(min_value=1, max_value=60),
    "tier": st.sampled_from(["short", "long", None]),
    "level": st.sampled_from(["raw", "raw", "summary", "policy", None]),  # (None: a hand-made snapshot's null)
    "kind": st.sampled_from([*KINDS, None]),
    "outcome": st.sampled_from([None, None, "positive", "pending"]),
    "subject": st.sampled_from([None, "deploys", "billing", "Deploys", ""]),
    "domain": st.sampled_from([None, "", "eng"]),
    "text": st.sampled_from(["we deploy on fridays", "ünïcode tëxt", "", "billing is monthly"]),
    "recorded": st.sampled_from(["2026-01-01T00:00:00Z", "2027-03-01T00:00:00Z", "2027-03-01T00:00:00.5Z",
                                 "2027-03-01T00:00:00Zé"]),
    "expires": st.sampled_from([None, "", "2026-06-01T00:00:00Z", "2027-06-01T00:00:00Z"]),
    "confidence": st.sampled_from([0.0, 0.5, 0.7, 1.0]),
    "mentions": st.integers(min_value=1, max_value=3),
    "salience": st.lists(st.sampled_from([0.0, -0.0, 0.25, 0.9]), min_size=7, max_size=7),
    "conflicts": st.lists(st.integers(min_value=0, max_value=39), max_size=2),
})


def _state(records: list[dict], mark: int = 0) -> State:
    memories = {}
    for i, r in enumerate(records):
        m = Memory(id=f"m{i:015x}", text=r["text"], recorded_at=r["recorded"], occurred_at="2026",
                   precision="year", status=r["status"], retired=r["retired"], seq=r["seq"], tier=r["tier"],
                   level=r["level"], kind=r["kind"], outcome=r["outcome"], subject=r["subject"], domain=r.get("domain"),
                   expires_at=r["expires"], confidence=r["confidence"], mention_count=r["mentions"],
                   salience=Salience(*r["salience"]),
                   conflicts_with=tuple(f"m{j:015x}" for j in r["conflicts"] if j < len(records)))
        memories[m.id] = m
    return State(memories=memories, seq=60, at="2027-01-01T00:00:00Z", marks={"consolidate": mark} if mark else {})


def _opened(state: State, now: str) -> State:
    """``state`` written as a snapshot and opened as a night at ``now`` opens it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(state))
        return read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))[0]


def _table(state: State):
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.read_table(pa.BufferReader(parquet_bytes(state)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.integers(min_value=0, max_value=60))
def test_the_rows_a_night_opens_with_hold_what_its_scans_and_the_watermark_find(records, mark):
    state = _state(records, mark)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(state))
        part, _meta = read_snapshot(path, keep=rows)
    built = set(dict.keys(part.memories))
    for m in state.memories.values():
        active = m.status == "active"
        scanned = active and (m.tier == "short" or m.level != "raw")  # expire, promote; policies, retire
        assert (m.id in built) == (scanned or m.seq > mark or m.retired), m
        assert part.memories[m.id] == m  # (any other is built when asked for)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.sets(st.sampled_from(["deploys", "billing", "Deploys", "", "x"])))
def test_the_column_tests_are_the_record_tests(records, subjects):
    state = _state(records)
    table = _table(state)
    ordered = state.ordered()  # (the table's rows are in this order)
    assert pooled_rows(table, _UPDATABLE).tolist() == [_pooled(m) for m in ordered]
    assert group_rows(table, subjects).tolist() == [
        m.status == "active" and m.level == "raw" and m.subject in subjects for m in ordered]
    assert open_rows(table, 30).tolist() == [
        m.status == "active" and (m.tier == "short" or m.level != "raw") or m.retired or m.seq > 30 for m in ordered]
    now = "2027-01-01T00:00:00Z"  # (expire's test: ``due``)
    assert open_rows(table, 30, now).tolist() == [
        m.status == "active" and (m.tier == "short" and m.expires_at is not None and m.expires_at <= now
                                  or m.level != "raw") or m.retired or m.seq > 30 for m in ordered]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.lists(st.tuples(st.integers(0, 39), st.sampled_from(
    ["active", "expired", "superseded"])), max_size=8), st.integers(min_value=0, max_value=60))
def test_the_pool_read_from_columns_is_the_pool_of_the_records(records, changes, mark):
    """Some records built (the night's, those the tail changed: here with another status),
    the rest read from the table: the pool's ids, texts and record times, in canonical order,
    are those of scanning the records as the run has them."""
    state = _state(records, mark)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(state))
        part, _meta = read_snapshot(path, keep=rows)
    whole = dict(state.memories)
    for i, status in changes:
        if i < len(records):
            changed = evolve(whole[f"m{i:015x}"], status=status)
            whole[changed.id] = changed
            dict.__setitem__(part.memories, changed.id, changed)  # (as the log after the snapshot made it)
    work = Working.of(part)
    assert work.source is not None
    built = set(dict.keys(work.memories))
    pool = pool_of(work, _pooled, _UPDATABLE)
    assert set(dict.keys(work.memories)) == built  # (read from columns: no record built)
    expected = [m for m in sorted(whole.values(), key=lambda m: (m.seq, m.id)) if _pooled(m)]
    assert pool.ids == [m.id for m in expected]
    texts = [pool.texts[i] for i in range(len(pool))]  # (read one by one: a table row's, or a built record's)
    assert texts == list(pool.texts) == pool.texts[:] == [m.text for m in expected]
    assert [pool.texts[-k] for k in range(1, len(pool) + 1)] == texts[::-1]
    assert pool.recorded == [m.recorded_at for m in expected]
    times = [m.recorded_at for m in expected]
    assert pool.regular is all(a <= b for a, b in zip(times, times[1:], strict=False))  # (compared over columns)
    place = {m.id: p for p, m in enumerate(expected)}  # (any record's id, built or not, and a stranger's)
    asked = [*whole, "m" + "f" * 15, "short"]
    assert pool.positions(asked).tolist() == [place.get(i, -1) for i in asked]
    assert list(pool) == expected  # (a record is built when asked for)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.sets(st.sampled_from(["deploys", "billing", "Deploys", "", "x"])),
       st.integers(min_value=0, max_value=60), st.sets(st.sampled_from(["", "eng", "ops"])))
def test_group_members_read_from_columns_are_the_records_fields(records, subjects, mark, domains):
    """Every active raw record on the subjects that the run does not list (it opened with
    it, or wrote it), with the fields its record has; of the groups asked for only, when
    they are named (a domain, "" for none, and a subject)."""
    # (every other one a long-term active raw record from before the mark: read from columns)
    records = [r if i % 2 else {**r, "status": "active", "level": "raw", "tier": "long", "retired": False,
                                "seq": min(r["seq"], max(mark, 1))} for i, r in enumerate(records)]
    state = _state(records, mark)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(state))
        part, _meta = read_snapshot(path, keep=rows)
    work = Working.of(part)
    listed = work.listed()
    got = members(work, subjects)
    expected = [m for m in state.ordered() if m.status == "active" and m.level == "raw"
                and m.subject in subjects and m.id not in listed]
    assert [m.id for m in got] == [m.id for m in expected]
    for light, m in zip(got, expected, strict=True):
        assert all(getattr(light, name) == getattr(m, name) for name in light._fields)
    keys = {(d, x) for d in domains for x in subjects}
    assert [m.id for m in members(work, subjects, keys)] == [m.id for m in expected if (m.domain or "", m.subject) in keys]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.integers(min_value=0, max_value=60))
def test_short_term_records_read_from_columns_are_the_records_fields(records, mark):
    """Every active short-term raw record the run does not list, in canonical order, with
    the fields its record has (its salience's axes, its conflicts as a tuple)."""
    state = _state(records, mark)
    now = "2027-01-01T00:00:00Z"
    part = _opened(state, now)
    work = Working.of(part)
    listed = work.listed()
    got = shorts(work)
    expected = [m for m in state.ordered() if m.status == "active" and m.tier == "short" and m.level == "raw"
                and m.id not in listed]
    assert [m.id for m in got] == [m.id for m in expected]
    for light, m in zip(got, expected, strict=True):
        for name in light._fields:
            if name == "salience":
                assert [repr(getattr(light.salience, a)) for a in AXES] == [repr(getattr(m.salience, a)) for a in AXES]
            else:
                assert getattr(light, name) == getattr(m, name), name


unit = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(record, st.lists(unit, min_size=7, max_size=7), unit), min_size=1, max_size=40),
       st.sampled_from([0.0, 0.5, 0.7, 1.0]), st.integers(1, 3), st.lists(unit, min_size=7, max_size=7),
       st.sampled_from([0.5, 0.7, 1.0]))
def test_the_short_term_records_promotable_over_columns_are_those_promotion_keeps(drawn, least, fewest, weights,
                                                                                  protect):
    """``promotable`` over the columns against ``lifecycle.rules.promotion`` on each record
    (``salience.composite`` among its tests), the floor at each record's own composite too,
    where only the same floating-point operations in the same order give the same answer."""
    from memstore.lifecycle.rules import promotion
    from memstore.rowscan import promotable
    from memstore.salience import composite

    now = "2027-01-01T00:00:00Z"
    weights = dict(zip(AXES, weights, strict=True))
    # (short-term records, most of them, with any floats: where the order of operations shows;
    # none created after the mark: the night opens only those due to expire, the others are
    # read from columns)
    state = _state([{**r, "salience": axes, "confidence": c,
                     **({"status": "active", "tier": "short", "level": "raw", "retired": False} if i % 4 else {})}
                    for i, (r, axes, c) in enumerate(drawn)], mark=60)
    work = Working.of(state)
    light = [m for m in state.ordered() if m.status == "active" and m.tier == "short" and m.level == "raw"]

    def config_at(floor: float) -> dict:  # (what promotion reads; any weights, not only those summing to 1)
        return {"consolidate": {"min_confidence": least, "min_occurrences": fewest, "salience_floor": floor},
                "salience": {"protect_threshold": protect, "weights": weights}}
    scores = [composite(m.salience, m.confidence, weights) for m in light]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.parquet"
        path.write_bytes(parquet_bytes(state))
        work = Working.of(read_snapshot(path, keep=lambda table, marks: rows(table, marks, now))[0])
    ids = work.source.table.column("id")
    for floor in sorted({*scores, 0.0, 0.3}):  # (each record's own composite: a rounding either way shows)
        config = config_at(floor)
        kept = {m.id for m in light if promotion(m, now, config) is not None}
        assert {ids[int(r)].as_py() for r in promotable(work, now, config)} == kept, floor


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.sampled_from("abcdef")), unique=True, max_size=30),
       st.lists(st.tuples(st.integers(1, 9), st.sampled_from("ghijk")), unique=True, max_size=6), st.booleans())
def test_the_pool_merges_its_built_records_into_the_tables_order(table, built, shuffled):
    """``_merged``: the table's rows (in canonical order, or not: then sorted whole) with the
    built records merged in, in (seq, id) order, as sorting every one gives."""
    from types import SimpleNamespace

    from memstore.rowscan import _merged

    rows = table if shuffled else sorted(table)
    records = sorted((SimpleNamespace(seq=q, id=i) for q, i in built), key=lambda m: (m.seq, m.id))
    import pyarrow as pa

    got = _merged([i for _q, i in rows], [q for q, _i in rows], records).tolist()
    every = [(q, i) for q, i in rows] + [(m.seq, m.id) for m in records]
    assert [every[k] for k in got] == sorted(every)
    # (the table's ids as its column: read only where seqs tie)
    assert _merged(pa.array([i for _q, i in rows], type=pa.string()), [q for q, _i in rows], records).tolist() == got


def test_a_pool_whose_record_times_tie_or_fall_is_regular_or_not_as_its_records_say():
    """``regular`` compared over the columns: equal times keep it, a fall breaks it."""
    base = {"status": "active", "retired": False, "tier": "long", "level": "raw", "kind": None, "outcome": None,
            "subject": None, "text": "t", "expires": None, "confidence": 1.0, "mentions": 1,
            "salience": [0.5] * 7, "conflicts": []}
    for times, regular in ((["2026-01-01T00:00:00Z"] * 3, True), (["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z",
                                                                    "2025-12-31T00:00:00Z"], False)):
        state = _state([{**base, "seq": i + 1, "recorded": t} for i, t in enumerate(times)], mark=60)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "state.parquet"
            path.write_bytes(parquet_bytes(state))
            part, _meta = read_snapshot(path, keep=rows)
        assert pool_of(Working.of(part), _pooled, _UPDATABLE).regular is regular


def test_the_pools_texts_are_read_by_position_from_the_table_or_the_built_records():
    """``rowscan.Column`` (the pool's texts, ids, record times): a table row's value or a
    built record's, by any index, some positions at once, or all; equal to the list of them."""
    import pyarrow as pa

    from memstore.rowscan import Column

    def column():
        return Column(pa.chunked_array([["a", "b"], ["c"]]), np.array([2, -1, 0, -1]), {1: "built", 3: "last"})

    texts, want = column(), ["c", "built", "a", "last"]
    assert [texts[i] for i in range(4)] == want and [texts[-k] for k in range(1, 5)] == want[::-1]
    assert texts.take([3, 0, 1, 0]) == ["last", "c", "built", "c"] and texts.take([]) == []
    assert texts.take(np.array([2], dtype=np.int32)) == ["a"]
    assert list(texts) == want and texts[1:3] == want[1:3] and texts[3] == "last"
    assert texts.take([3, 2]) == ["last", "a"]  # (from the list, once read whole)
    assert column() == want and column() == tuple(want) and column() != want[:3] and column() == column()
    domains = Column(pa.chunked_array([["eng", None, "ops"]]), np.array([1, -1, 0]), {1: None})  # (a held None)
    assert [domains[i] for i in range(3)] == [None, None, "eng"] == domains.take([0, 1, 2]) == list(domains)

# promote's short-term records: texts that normalize alike (case, spaces, width) or differ;
# subjects empty or not; any domain
short = st.fixed_dictionaries({
    "text": st.sampled_from(["Lunch was pizza", "lunch  was PIZZA ", "Ｌｕｎｃｈ\u3000was pizza", "Lunch was pasta",
                             "x" * 61 + "a", "X" * 61 + "b", "", " \x0b\x1c", "ünïcode\ttëxt", "ÜNÏCODE TËXT"]),
    "subject": st.sampled_from([None, "", "food", "Food"]),
    "domain": st.sampled_from([None, "", "eng"]),
    "seq": st.integers(min_value=1, max_value=60),
    "confidence": st.sampled_from([0.3, 0.8, 1.0]),
    "mentions": st.integers(min_value=1, max_value=3),
    "salience": st.lists(st.sampled_from([0.0, 0.5, 0.95]), min_size=7, max_size=7),
    "tier": st.sampled_from(["short", "short", "short", "long"]),
    "kind": st.sampled_from(["note", "note", "fact", "meeting"]),
    "expires": st.sampled_from([None, "2026-12-15T00:00:00Z", "2027-06-01T00:00:00Z"]),
})


def _shorts_state(drawn: list[dict], mark: int) -> State:
    memories = {}
    for i, r in enumerate(drawn):
        m = Memory(id=f"m{i:015x}", text=r["text"], recorded_at="2026-12-01T00:00:00Z", occurred_at="2026",
                   precision="year", seq=r["seq"], tier=r["tier"], subject=r["subject"], domain=r["domain"],
                   confidence=r["confidence"], mention_count=r["mentions"], salience=Salience(*r["salience"]),
                   kind=r["kind"], expires_at=r["expires"] if r["tier"] == "short" else None)
        memories[m.id] = m
    return State(memories=memories, seq=60, at="2027-01-01T00:00:00Z", marks={"consolidate": mark} if mark else {})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(short, min_size=1, max_size=40), st.integers(min_value=0, max_value=60))
def test_promote_over_the_rows_its_groups_need_decides_as_over_every_record(drawn, mark):
    """A night's promote reads from columns only the short-term rows it promotes
    (``promotable``), the others are listed (created after the mark, or due): the events of
    promote over every record."""
    import memstore.consolidate as c
    from memstore.config import load_config

    config = load_config(None)
    state = _shorts_state(drawn, mark)
    now = "2027-01-01T00:00:00Z"
    part = _opened(state, now)
    assert c._promote(Working.of(part), now, config, c._Memo()) == c._promote(state, now, config)


def test_a_rounds_pool_follows_what_left_it_and_is_read_again_when_one_joins():
    """consolidate's ``_pool`` over a snapshot: the records a round's writes take out of the
    pool leave it (named, not a set of every id); were a write to put one in that was not,
    the pool is read again, and postings made over the old one do not cover it."""
    import memstore.consolidate as c
    from memstore.beliefs.candidates import Postings

    base = {"retired": False, "tier": "long", "level": "raw", "kind": None, "outcome": None, "subject": None,
            "recorded": "2026-01-01T00:00:00Z", "expires": None, "confidence": 1.0, "mentions": 1,
            "salience": [0.5] * 7, "conflicts": []}
    state = _state([{**base, "seq": i + 1, "text": f"text {i}", "status": "active" if i < 4 else "archived"}
                    for i in range(6)], mark=60)
    work = Working.of(_opened(state, "2027-01-01T00:00:00Z"))
    memo = c._Memo()
    pool, in_pool = c._pool(work, memo)
    assert pool.ids == [f"m{i:015x}" for i in range(4)] and len(in_pool) == 4
    postings = Postings(pool, wanted=[])
    assert postings.covers(in_pool) and postings.alive(in_pool).all()
    work.memories[f"m{1:015x}"] = evolve(work.memories[f"m{1:015x}"], status="superseded")  # (leaves it)
    work.memories[f"m{5:015x}"] = evolve(work.memories[f"m{5:015x}"], status="archived")  # (was never in it)
    again, in_pool = c._pool(work, memo)
    assert again is pool and in_pool.gone == {f"m{1:015x}"} and len(in_pool) == 3
    assert postings.covers(in_pool) and postings.alive(in_pool).tolist() == [True, False, True, True]
    work.memories[f"m{4:015x}"] = evolve(work.memories[f"m{4:015x}"], status="active")  # (joins it)
    fresh, in_pool = c._pool(work, memo)
    assert fresh is not pool and fresh.ids == [f"m{i:015x}" for i in (0, 2, 3, 4)] and not postings.covers(in_pool)
