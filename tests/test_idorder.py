"""The order of a snapshot's ids beside it (memstore.store.idorder).

`snapshot` writes ``state-<seq>.order``, the row numbers in id order, so an open that finds
records by id does not sort a million ids again. Whatever the file holds is believed only
when it sorts the table's ids: held here for damaged, short, foreign and wrong orders (the
ids are then sorted, the same state), the order merged from the last snapshot's against
sorting (hypothesis), a lived store's opens with and without it, and `verify` reporting a
file that does not sort its snapshot's ids or outlived its snapshot, which `--repair` deletes.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.store import idorder
from memstore.store.layout import Layout
from memstore.store.open import load_state
from memstore.store.snapshot import _Rows, by_id, id_array, read_snapshot, snapshot_files

sys.path.insert(0, str(Path(__file__).parent))
from test_distill_partial import snapshotted  # noqa: E402
from test_reads_scale import _day, _run  # noqa: E402


def _ids(numbers) -> np.ndarray:
    return np.array([f"m{n:015x}".encode() for n in numbers], dtype="S16")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=40), st.data())
def test_an_order_is_believed_only_when_it_sorts_the_ids(numbers, data):
    ids = _ids(numbers)
    right = np.argsort(ids, kind="stable")
    assert np.array_equal(idorder.decode(idorder.encode(right), ids), right)
    if len(ids) >= 2:  # any other permutation, a repeat, a row past the end
        other = np.array(data.draw(st.permutations(range(len(ids)))))
        if not np.array_equal(other, right):
            assert idorder.decode(idorder.encode(other), ids) is None
        repeat = right.copy()
        repeat[1] = repeat[0]
        assert idorder.decode(idorder.encode(repeat), ids) is None
    past = np.append(right[:-1], len(ids)) if len(ids) else np.array([0])
    assert idorder.decode(idorder.encode(past), ids) is None
    good = idorder.encode(right)
    for bad in (good[:-1], good + b"\0\0\0\0", b"MSORDER2" + good[8:], good[:8] + (len(ids) + 1).to_bytes(8, "little")
                + good[16:]):
        assert idorder.decode(bad, ids) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=40), st.integers(0, 20))
def test_the_order_grown_from_the_last_snapshots_is_the_sorted_order(numbers, added):
    """A table of the last snapshot's rows in place, then rows added: the last order with
    the added ids merged in is the order that sorts them all; a table not so is refused."""
    old = _ids(numbers[: len(numbers) - min(added, len(numbers))])
    ids = _ids(numbers)
    old_order = np.argsort(old, kind="stable")
    got = idorder.grown(old[old_order], old_order, ids)
    assert np.array_equal(got, np.argsort(ids, kind="stable"))
    if len(old) >= 2:  # (its rows not in place: reversed, distinct ids never are)
        assert idorder.grown(old[old_order], old_order, ids[::-1]) is None


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return snapshotted(tmp_path_factory.mktemp("idorder") / "s")


def _latest(path: Path) -> Path:
    return snapshot_files(Layout(path))[-1][1]


def test_snapshot_writes_the_order_and_opens_read_it(store, monkeypatch):
    snap = _latest(store)
    table_ids = _Rows.of(read_snapshot(snap, keep=by_id)[0].memories.source.table)
    assert idorder.path_of(snap).is_file()
    sorted_ = []
    real = np.argsort
    monkeypatch.setattr(np, "argsort", lambda *a, **k: sorted_.append(1) or real(*a, **k))
    rows = read_snapshot(snap, keep=by_id)[0].memories.source
    assert not sorted_ and np.array_equal(rows.order, table_ids.order) and np.array_equal(rows.ids, table_ids.ids)


@pytest.mark.parametrize("how", ["reversed", "cut short", "another store's", "a directory"])
def test_an_order_that_does_not_sort_the_ids_is_not_used_and_verify_repairs_it(store, tmp_path, how):
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    snap = _latest(copy)
    path = idorder.path_of(snap)
    whole = load_state(Layout(copy), use_snapshots=False)[0]
    data = path.read_bytes()
    order = np.frombuffer(data, dtype="<u4", offset=16)
    if how == "reversed":
        path.write_bytes(idorder.encode(order[::-1]))
    elif how == "cut short":
        path.write_bytes(data[:-4])
    elif how == "another store's":
        path.write_bytes(idorder.encode(np.arange(len(order))))
    else:
        path.unlink()
        path.mkdir()
    assert load_state(Layout(copy))[0] == whole
    source = load_state(Layout(copy), keep=by_id)[0].memories.source  # (every row found by its id)
    assert source.missing([i.decode() for i in id_array(source.table)]) == 0
    code, out, _err = _run(copy, "verify")
    assert code == 1 and str(path) in out and "snapshot id order" in out
    if how == "a directory":
        return  # (reported; --repair cannot delete a directory)
    assert _run(copy, "verify", "--repair")[0] == 0 and not path.exists()
    assert _run(copy, "verify")[:2] == (0, "")


def test_the_next_snapshot_grows_the_order_and_an_order_alone_is_reported(store, tmp_path, monkeypatch):
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    grown = []
    real = idorder.grown
    monkeypatch.setattr(idorder, "grown", lambda *a: grown.append(real(*a)) or grown[-1])
    assert _run(copy, "remember", "The build is green again", "--now", _day(121))[0] == 0
    assert _run(copy, "snapshot", "--now", _day(121))[0] == 0
    assert len(grown) == 1 and grown[0] is not None
    snap = _latest(copy)
    ids = _Rows.of(read_snapshot(snap, keep=by_id)[0].memories.source.table)
    assert np.array_equal(np.frombuffer(idorder.path_of(snap).read_bytes(), dtype="<u4", offset=16), ids.order)
    alone = snap.with_name("state-000000000001.order")
    shutil.copy(idorder.path_of(snap), alone)
    code, out, _err = _run(copy, "verify")
    assert code == 1 and "the id order of a snapshot that is gone" in out
    assert _run(copy, "verify", "--repair")[0] == 0 and not alone.exists()
