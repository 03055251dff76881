"""A snapshot taken from a snapshot is the fold's, byte for byte (issue [6/6]: snapshots
that make opening fast; the nightly `snapshot` at a million records).

`take_snapshot` opens the state from the last usable snapshot with no row built up front
but the retired abstractions (``store.snapshot.by_id``), folds the log after it, and writes the
old table's rows for every record it did not build and new rows for those it did
(``snapshot.state_table``). Held here to the whole state's file: random changes to a table
of varied records, a resolution in the tail that brings a retired abstraction back, and the
CLI on a lived store against the same store without its snapshot. Format /7's checksum is
of the file's bytes before its footer; /6 files (the checksum of the columns) are still read.
"""

from __future__ import annotations

import io
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_reads_scale import _day, _live, _run, _snapshotted
from test_snapshot_read import _records
from test_structured_facts import SUMMARY_ID, with_summary

from memstore.codec import dumps
from memstore.config import load_config
from memstore.conflicts import records as conflict_records
from memstore.conflicts import resolve_event
from memstore.consolidate import consolidate
from memstore.embed import HashingEmbedder
from memstore.state import Partial, State
from memstore.store.open import _fold_partial
from memstore.store.snapshot import (
    _schema,
    _table,
    by_id,
    data_checksum,
    parquet_bytes,
    read_snapshot,
)

CONFIG = load_config(None)
HASH = HashingEmbedder(256)
RECORDS = _records(700, seed=8)


def _state(memories: dict) -> State:
    return State(memories=memories, keys={"k7": RECORDS[7].id}, notes={"coder": {"text": "half done", "at": _day(1)}},
                 marks={"consolidate": 300}, seq=len(RECORDS) + 50, at="2026-09-01T00:00:00Z")


change = st.tuples(st.integers(0, len(RECORDS) - 1),
                   st.sampled_from(["status", "text", "conflict", "asked", "retired", "turn"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(change, max_size=30), st.lists(st.integers(0, 2 ** 40), max_size=8, unique=True))
def test_the_rows_it_did_not_build_are_taken_as_they_are(tmp_path_factory, changes, new):
    """Records changed, asked for unchanged, and created (new ids sort anywhere among the
    old, their seqs after them): the partial state's file is the whole state's."""
    path = tmp_path_factory.mktemp("inc") / "state.parquet"
    path.write_bytes(parquet_bytes(_state({m.id: m for m in RECORDS})))
    part, _meta = read_snapshot(path, keep=by_id)
    assert isinstance(part.memories, Partial)
    whole = {m.id: m for m in RECORDS}
    for i, how in changes:
        m = part.memories[RECORDS[i].id]  # (built from its row)
        if how == "asked":
            continue
        m = {"status": lambda m: replace(m, status="superseded", invalid_at="2026-09-01T00:00:00Z"),
             "text": lambda m: replace(m, text=m.text + " — éditée"),
             "conflict": lambda m: replace(m, conflicts_with=(*m.conflicts_with, RECORDS[0].id)),
             "retired": lambda m: replace(m, status="invalidated", retired=True),
             "turn": lambda m: replace(m, turn=None if m.turn else 7)}[how](m)
        part.memories[m.id] = whole[m.id] = m
    for k, n in enumerate(new):
        m = replace(RECORDS[k], id=f"m{n:015x}", seq=len(RECORDS) + 1 + k, text=f"new {k}")
        part.memories[m.id] = whole[m.id] = m
    part.keys, part.notes, part.marks, part.seq, part.at = (_state({}).keys, _state({}).notes, _state({}).marks,
                                                             _state({}).seq, _state({}).at)
    assert parquet_bytes(part) == parquet_bytes(_state(whole))


def resolved_after_a_snapshot(tmp_path: Path):
    """A summary retired when its source was superseded, snapshotted, then a person's
    resolution that brings the source back (and so the summary): (the log, the snapshot's
    path, where the log after it starts)."""
    log, _tea, _coffee = with_summary()
    log.run(consolidate, "2026-05-01T03:00:00Z", CONFIG, embedder=HASH)
    assert log.state.memories[SUMMARY_ID].retired
    path = tmp_path / "state.parquet"
    path.write_bytes(parquet_bytes(log.state))
    cut = len(log.events)
    (rec,) = conflict_records(log.events, log.state)
    log.append([resolve_event(rec, "old", "2026-05-02T10:00:00Z")], "2026-05-02T10:00:00Z")
    return log, path, cut


def test_a_resolution_after_the_snapshot_brings_back_its_retired_abstraction(tmp_path):
    """``fold._reinstate`` finds the abstraction by scanning: ``by_id`` builds the retired rows
    up front, or the partial state (a snapshot's, a forget's) would keep it retired."""
    log, path, cut = resolved_after_a_snapshot(tmp_path)
    base, _meta = read_snapshot(path, keep=by_id)
    assert SUMMARY_ID in dict.keys(base.memories)  # built up front
    part = _fold_partial(iter(log.events[cut:]), base)
    assert part.resolve(SUMMARY_ID).status == log.state.memories[SUMMARY_ID].status == "active"
    assert parquet_bytes(part) == parquet_bytes(log.state)


@pytest.fixture(scope="module")
def lived(tmp_path_factory) -> Path:
    """A lived store snapshotted on day 40 and lived on (consolidated nightly) to day 70."""
    return _snapshotted(tmp_path_factory.mktemp("lived") / "s", 40, 70)


def test_the_cli_snapshot_from_a_snapshot_is_the_folds(lived, tmp_path):
    store, bare = tmp_path / "store", tmp_path / "bare"
    shutil.copytree(lived, store)
    shutil.copytree(lived, bare, ignore=shutil.ignore_patterns("snapshots"))
    code, out, err = _run(store, "snapshot", "--json", "--now", _day(70))
    assert code == 0, err
    assert _run(bare, "snapshot", "--json", "--now", _day(70)) == (code, out.replace(str(store), str(bare)), err)
    new = sorted((store / "snapshots").iterdir())[-1]
    assert new.read_bytes() == (bare / "snapshots" / new.name).read_bytes()
    # and the next one, from this one, after a day more
    shutil.rmtree(bare / "snapshots")  # (the bare copy folds the whole log again)
    for s in (store, bare):
        _live(s, range(70, 71))
        assert _run(s, "snapshot", "--now", _day(71))[0] == 0
    new = sorted((store / "snapshots").iterdir())[-1]
    assert new.read_bytes() == (bare / "snapshots" / new.name).read_bytes()


# --- the checksum ----------------------------------------------------------------------

def _file(table, meta: dict) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata({b"memstore": dumps(meta)}), buf, compression="zstd",
                   write_page_checksum=True)
    return buf.getvalue()


def test_rows_written_under_another_files_footer_are_refused(tmp_path):
    """Pages with good CRCs and the metadata of a snapshot that holds other rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    state = _state({m.id: m for m in RECORDS})
    meta = __import__("orjson").loads(pq.read_metadata(pa.BufferReader(parquet_bytes(state))).metadata[b"memstore"])
    path = tmp_path / "state.parquet"
    forged = dict(state.memories, **{RECORDS[3].id: replace(RECORDS[3], text="a forged text")})
    path.write_bytes(_file(_table(sorted(forged.values(), key=lambda m: (m.seq, m.id))), meta))
    with pytest.raises(ValueError, match="bytes do not match the checksum"):
        read_snapshot(path)
    path.write_bytes(_file(_table(RECORDS), meta))  # the same rows, written by another writer call
    assert read_snapshot(path)[0].memories == state.memories  # (pq.write_table's bytes are the same)


def test_a_snapshot_of_an_older_format_is_refused(tmp_path):
    """A /7 snapshot's records lack invalid_periods: read, they would say a record that
    lapsed and was reinstated had always held. It is refused; the state comes from the log."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    state = _state({m.id: m for m in RECORDS})
    data = parquet_bytes(state)
    meta = __import__("orjson").loads(pq.read_metadata(pa.BufferReader(data)).metadata[b"memstore"])
    meta["format"] = "memstore-snapshot/7"
    path = tmp_path / "state.parquet"
    path.write_bytes(_file(_table(RECORDS).drop_columns(["invalid_periods"]), meta))
    with pytest.raises(ValueError, match="snapshot format 'memstore-snapshot/7' is not this memstore's"):
        read_snapshot(path)


def test_columns_of_another_schema_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    state = _state({m.id: m for m in RECORDS})
    data = parquet_bytes(state)
    meta = __import__("orjson").loads(pq.read_metadata(pa.BufferReader(data)).metadata[b"memstore"])
    table = _table(RECORDS).drop_columns(["turn"])
    assert not table.schema.equals(_schema())
    meta["checksum"] = data_checksum(_file(table, {}))  # (the footer, where the metadata is, is not under it)
    path = tmp_path / "state.parquet"
    path.write_bytes(_file(table, meta))
    with pytest.raises(ValueError, match="columns are not a snapshot's"):
        read_snapshot(path)


# --- the whole export, from the snapshot's rows ------------------------------------------

@pytest.mark.parametrize("size", [1, 7, 65_536])
def test_state_blocks_are_the_records_in_canonical_order(tmp_path, size):
    path = tmp_path / "state.parquet"
    path.write_bytes(parquet_bytes(_state({m.id: m for m in RECORDS})))
    part, _meta = read_snapshot(path, keep=by_id)
    changed = replace(RECORDS[5], text="changed")
    part.memories[changed.id] = changed
    new = replace(RECORDS[0], id="m" + "f" * 15, seq=len(RECORDS) + 1)
    part.memories[new.id] = new
    whole = _state({**{m.id: m for m in RECORDS}, changed.id: changed, new.id: new})
    from memstore.store.snapshot import state_blocks

    got = [m for block in state_blocks(part, size) for m in block]
    assert got == whole.ordered() and got[5].text == "changed" and got[-1] == new
    assert [m for block in state_blocks(whole, size) for m in block] == whole.ordered()


def test_the_owners_whole_export_is_the_folds(lived, tmp_path):
    store, bare = tmp_path / "store", tmp_path / "bare"
    shutil.copytree(lived, store)
    shutil.copytree(lived, bare, ignore=shutil.ignore_patterns("snapshots"))
    for argv in ((), ("--format", "parquet")):
        a, b = (_run(s, "export", *argv, "--now", _day(70)) for s in (store, bare))
        assert a == b and a[0] == 0 and a[1], argv
    for s in (store, bare):
        assert _run(s, "export", "--output", str(s.parent / f"{s.name}.jsonl"), "--now", _day(70))[0] == 0
    assert (tmp_path / "store.jsonl").read_bytes() == (tmp_path / "bare.jsonl").read_bytes() != b""
    code, _out, err = _run(store, "export", "--output", str(tmp_path), "--now", _day(70))
    assert code == 2 and err.startswith("Error: cannot write --output")
