"""`index/columns.bin` (issue [6/6]): the records index's aggregate columns as one flat file,
read by `stats` and `brief` instead of a million values through Tantivy. It lags the index
(rewritten only every REWRITE events) and the index lags the log; every answer through it
must be the fold's, and a file that is damaged, of another store or of another format is
not believed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_support import make_store
from test_reads_scale import _day, _live, _run

from memstore.index import columns
from memstore.index.current import open_current
from memstore.store.layout import Layout

NOWS = ("2026-03-15T00:00:00Z", "2026-04-11T00:00:00Z", "2027-06-01T00:00:00Z")


@pytest.fixture(scope="module")
def lagging(tmp_path_factory) -> tuple[Path, Path]:
    """(a store whose columns file lags its records index, which lags its log; the same
    store without index/)."""
    base = tmp_path_factory.mktemp("cols")
    store = make_store(base / "s")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns, "MIN_ROWS", 0)
        mp.setattr(columns, "REWRITE", 0)  # rewritten on every catch-up: last at day 60
        _live(store, range(0, 60))
        assert _run(store, "index", "--now", _day(60))[0] == 0
        assert columns.path_of(Layout(store)).is_file()
        mp.setattr(columns, "REWRITE", 10**9)  # never again: the file stays at day 60
        _live(store, range(60, 90))
        assert _run(store, "index", "--now", _day(90))[0] == 0
    _live(store, range(90, 100))  # the index's own tail
    bare = base / "bare"
    shutil.copytree(store, bare, ignore=shutil.ignore_patterns("index", "snapshots"))
    return store, bare


def test_the_file_lags_the_index_and_is_read(lagging):
    store, _bare = lagging
    layout = Layout(store)
    current = open_current(layout)
    assert current is not None and current.overlay
    side = columns.read(layout, current.mark)
    assert side is not None
    cols, between = side
    assert between and between[0]["seq"] == columns.watermark(layout) + 1 and between[-1]["seq"] <= current.mark
    assert list(cols["seq"]) == sorted(cols["seq"])
    got, overlay = current.columns()
    assert list(got["seq"]) == list(cols["seq"]) and len(cols["seq"]) > 50
    assert len(overlay) > len(current.overlay)


@pytest.mark.parametrize("now", NOWS)
def test_stats_and_brief_through_the_file_equal_the_fold(lagging, now):
    store, bare = lagging
    for argv in (("stats", "--json"), ("stats",), ("brief", "--json", "--no-write")):
        assert _run(store, *argv, "--now", now) == _run(bare, *argv, "--now", now), argv


def test_salience_scored_in_small_blocks_is_the_same(lagging, monkeypatch):
    """Columns.effective scores BLOCK rows at a time (bounded memory at a million): blocks
    of a few rows, with unsure rows in several of them, give the fold's answers."""
    from memstore import tally

    store, bare = lagging
    monkeypatch.setattr(tally, "BLOCK", 5)
    for now in NOWS:
        for argv in (("stats", "--json"), ("brief", "--json", "--no-write")):
            assert _run(store, *argv, "--now", now) == _run(bare, *argv, "--now", now), argv


def _damaged(tmp_path: Path, store: Path, edit) -> Path:
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    path = columns.path_of(Layout(copy))
    path.write_bytes(edit(path.read_bytes()))
    return copy


def _flip_body(data: bytes) -> bytes:
    cut = data.index(b"\n") + 1 + 8 * 3  # the third seq
    return data[:cut] + bytes([data[cut] ^ 1]) + data[cut + 1:]


def _rehashed(data: bytes) -> bytes:
    """A header set back a line, its hash recomputed: the anchor no longer names that line."""
    import hashlib

    head, body = data.split(b"\n", 1)
    meta = json.loads(head)
    meta["watermark"] -= 1
    meta["sha256"] = hashlib.sha256(body).hexdigest()
    return json.dumps(meta).encode() + b"\n" + body


def _index_past_its_table(data: bytes) -> bytes:
    """A float column's first index set past its table of values, the hash recomputed: a
    hash that matches does not make an index that points nowhere a value."""
    import hashlib

    head, body = data.split(b"\n", 1)
    meta = json.loads(head)
    n, at = meta["rows"], 0
    for _name, _kind, table in meta["fields"]:
        if table:
            at += 8 * table  # the first index of this column
            body = body[:at] + (table + 7).to_bytes(2, "little") + body[at + 2:]
            break
        at += 8 * n
    meta["sha256"] = hashlib.sha256(body).hexdigest()
    return json.dumps(meta).encode() + b"\n" + body


@pytest.mark.parametrize("edit", [
    _flip_body,
    _rehashed,
    _index_past_its_table,
    lambda d: d[:-8],  # truncated
    lambda d: d.replace(columns.FORMAT.encode(), b"memstore-columns/0", 1),
    lambda d: b"not a header",
    lambda d: b"",
])
def test_a_damaged_or_foreign_file_is_not_believed(tmp_path, lagging, edit):
    store, bare = lagging
    copy = _damaged(tmp_path, store, edit)
    current = open_current(Layout(copy))
    assert columns.read(Layout(copy), current.mark) is None
    for now in NOWS[1:]:
        assert _run(copy, "stats", "--json", "--now", now) == _run(bare, "stats", "--json", "--now", now)


def test_another_stores_file_is_not_believed(tmp_path, lagging):
    store, _bare = lagging
    other = make_store(tmp_path / "o")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns, "MIN_ROWS", 0)
        _live(other, range(1, 40))  # (the same days would write the same log)
        assert _run(other, "index", "--now", _day(40))[0] == 0
    theirs = columns.path_of(Layout(other)).read_bytes()
    copy = _damaged(tmp_path, store, lambda _d: theirs)
    assert columns.read(Layout(copy), open_current(Layout(copy)).mark) is None


def test_a_small_store_has_no_file_and_a_rebuild_writes_a_fresh_one(tmp_path, lagging):
    store, _bare = lagging
    copy = tmp_path / "c"
    shutil.copytree(store, copy)
    layout = Layout(copy)
    old = columns.watermark(layout)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns, "MIN_ROWS", 0)
        assert _run(copy, "reindex", "--now", _day(100))[0] == 0
    assert columns.watermark(layout) == open_current(layout).mark > old
    assert _run(copy, "reindex", "--now", _day(100))[0] == 0  # a small store: no file
    assert not columns.path_of(layout).exists()


def test_verify_reports_a_damaged_file_and_repair_rewrites_it(tmp_path, lagging):
    store, bare = lagging
    copy = _damaged(tmp_path, store, _flip_body)
    code, out, err = _run(copy, "verify")
    assert code != 0 and "columns file rows do not match their length or sha256 (damaged)" in out + err
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns, "MIN_ROWS", 0)
        code, out, err = _run(copy, "verify", "--repair")
    assert code == 0, out + err
    assert _run(copy, "verify")[0] == 0
    layout = Layout(copy)
    assert columns.read(layout, open_current(layout).mark) is not None
    assert _run(copy, "stats", "--json", "--now", NOWS[1]) == _run(bare, "stats", "--json", "--now", NOWS[1])
