"""A whole state opened from a snapshot builds its records when they are read (issue [6/6]:
snapshots that make opening fast, a 1M state from its snapshot plus tail in <= 2 s and
bounded memory).

``store.open.load_state`` without ``keep`` gives a ``state.Lazy``: the retired abstractions
and the records the log after the snapshot touches are built, any other row when its id is
asked for, and the first listing builds the rest. Held here to the state built whole from
the same snapshot, operation for operation and in dict order, and to the fold of the log on
a lived store.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reads_scale import _snapshotted
from test_snapshot_incremental import RECORDS, _state, resolved_after_a_snapshot
from test_structured_facts import SUMMARY_ID

from memstore import state as state_module
from memstore.conflicts import records as conflict_records
from memstore.state import Lazy, Partial, digest
from memstore.store.layout import Layout
from memstore.store.log import LogReader
from memstore.store.open import _fold_partial, load_state
from memstore.store.snapshot import parquet_bytes, read_snapshot, state_table

IDS = [m.id for m in RECORDS]
ABSENT = ["m" + "f" * 15, "nope", ""]

op = st.one_of(
    st.tuples(st.just("get"), st.sampled_from(IDS + ABSENT)),
    st.tuples(st.just("in"), st.sampled_from(IDS + ABSENT)),
    st.tuples(st.just("len"), st.none()),
    st.tuples(st.just("change"), st.sampled_from(IDS)),
    st.tuples(st.just("new"), st.integers(0, 2 ** 40)),
    st.tuples(st.just("copy"), st.none()),
    st.tuples(st.just("build"), st.lists(st.sampled_from(IDS + ABSENT), max_size=5)),
)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "state.parquet"
    path.write_bytes(parquet_bytes(_state({m.id: m for m in RECORDS})))
    return path


def _apply(mem: dict, what: str, arg, k: int):
    """One operation on a state's records; what it answers."""
    if what == "get":
        return mem.get(arg)
    if what == "in":
        return arg in mem
    if what == "len":
        return len(mem)
    if what == "change":
        m = replace(mem[arg], text=mem[arg].text + " (changed)", recall_count=mem[arg].recall_count + 1)
        mem[arg] = m
        return m
    if what == "new":
        m = replace(RECORDS[k % len(RECORDS)], id=f"m{arg:015x}", seq=len(RECORDS) + 1 + k, text=f"new {k}")
        if m.id not in mem:
            mem[m.id] = m
        return m.id
    if what == "build":
        getattr(mem, "build", lambda ids: None)(arg)
        return None
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(op, max_size=40), st.sampled_from(["items", "iter", "values", "eq", "ordered", "dict", "len"]))
def test_a_lazy_state_answers_as_the_state_built_whole(snapshot, ops, listing):
    """Every answer, then the listing and its order, are those of the records built whole;
    a copy taken half way is a state of its own, as a dict's is."""
    lazy, _ = read_snapshot(snapshot, lazy=True)
    whole, _ = read_snapshot(snapshot)
    assert isinstance(lazy.memories, Lazy) and not isinstance(lazy.memories, Partial)
    assert type(whole.memories) is dict
    copies = []
    for k, (what, arg) in enumerate(ops):
        if what == "copy":
            copies.append((lazy.copy(), whole.copy()))
            continue
        assert _apply(lazy.memories, what, arg, k) == _apply(whole.memories, what, arg, k), (what, arg)
    assert len(dict.keys(lazy.memories)) <= 5 * len(ops)  # (what was read or written built, no more)
    for a, b in [(lazy, whole), *copies]:
        got = {"items": lambda s: list(s.memories.items()), "iter": lambda s: list(s.memories),
               "values": lambda s: list(s.memories.values()), "eq": lambda s: s.memories,
               "ordered": lambda s: s.ordered(), "dict": lambda s: list(dict(s.memories).items()),
               "len": lambda s: len(s.memories)}[listing]
        assert got(a) == got(b)
        assert list(a.memories.items()) == list(b.memories.items())  # (in dict order too)
        assert a.memories.source is None  # listed: every record built, an ordinary dict from now on
    assert digest(lazy) == digest(whole)


def test_a_few_reads_by_id_build_those_records_only(snapshot):
    lazy, _ = read_snapshot(snapshot, lazy=True)
    mem = lazy.memories
    before = len(dict.keys(mem))  # (the retired abstractions only: none in this table)
    assert before == sum(m.retired for m in RECORDS) == 0
    assert len(mem) == len(RECORDS) and len(dict.keys(mem)) == before  # counted, not built
    assert lazy.resolve("k7") == RECORDS[7] and mem.get(IDS[300]) == RECORDS[300] and IDS[9] in mem
    assert mem.get("m" + "0" * 14 + "z") is None and "nope" not in mem
    assert sorted(dict.keys(mem)) == sorted([IDS[7], IDS[300], IDS[9]])
    assert mem.source is not None
    copy = mem.copy()
    copy.clear()  # (as a dict's: nothing left, not even the rows not built)
    assert len(copy) == 0 and list(copy) == [] and copy.get(IDS[5]) is None and len(mem) == len(RECORDS)


def test_reading_record_after_record_builds_the_rest_at_once(snapshot, monkeypatch):
    """A caller reading one record after another by id pays for a bounded number of single
    builds, then for the rest in one pass, as a listing does."""
    monkeypatch.setattr(state_module, "_FILL_AFTER", 5)
    lazy, _ = read_snapshot(snapshot, lazy=True)
    mem = lazy.memories
    for i in range(4):
        assert mem[IDS[i * 10]] == RECORDS[i * 10]
    assert mem.source is not None and len(dict.keys(mem)) == 4
    assert mem[IDS[99]] == RECORDS[99]
    assert mem.source is None and dict.__len__(mem) == len(RECORDS)
    assert list(mem.values()) == RECORDS


def test_a_resolution_in_the_tail_brings_back_the_retired_abstraction_without_a_listing(tmp_path):
    """``fold._reinstate`` scans the records built (the retired abstractions, built up front),
    so a person's resolution after the snapshot neither misses one nor builds every row."""
    log, path, cut = resolved_after_a_snapshot(tmp_path)
    base, _meta = read_snapshot(path, lazy=True)
    assert SUMMARY_ID in dict.keys(base.memories)  # built up front
    lazy = _fold_partial(iter(log.events[cut:]), base)
    assert lazy.memories.source is not None  # (no listing was made)
    assert state_table(lazy).equals(state_table(log.state))  # (the table's rows, the built ones merged)
    assert lazy.resolve(SUMMARY_ID).status == log.state.memories[SUMMARY_ID].status == "active"
    assert parquet_bytes(lazy) == parquet_bytes(log.state)
    assert list(lazy.memories.items()) == list(log.state.memories.items())


@pytest.fixture(scope="module")
def lived(tmp_path_factory) -> tuple[Path, Path]:
    """(a lived store snapshotted on day 40 and lived on to day 70; the same without its snapshot)."""
    store = _snapshotted(tmp_path_factory.mktemp("lazylived") / "s", 40, 70)
    bare = store.parent / "bare"
    shutil.copytree(store, bare, ignore=shutil.ignore_patterns("snapshots"))
    return store, bare


def test_a_lived_store_opens_lazily_as_the_fold(lived):
    store, bare = lived
    lazy, _ = load_state(Layout(store))
    fold, _ = load_state(Layout(bare))
    assert isinstance(lazy.memories, Lazy) and type(fold.memories) is dict
    assert (lazy.seq, lazy.at, lazy.keys, lazy.notes, lazy.marks) == (fold.seq, fold.at, fold.keys, fold.notes,
                                                                        fold.marks)
    assert len(lazy.memories) == len(fold.memories) > dict.__len__(lazy.memories)
    for key, mid in list(fold.keys.items())[:20]:
        assert lazy.resolve(key) == fold.memories[mid]
    events = list(LogReader(Layout(bare)).events())
    misses = lazy.memories.misses
    found = conflict_records(events, lazy)  # (its sides built in one pass, no listing)
    assert found == conflict_records(events, fold) and found
    assert lazy.memories.misses == misses  # (none built one by one)
    assert lazy.memories.source is not None
    assert digest(lazy) == digest(fold)
    assert lazy.ordered() == fold.ordered()
