"""The update pool's keys beside a snapshot (memstore.nightcache.poolkeys).

`snapshot` writes ``state-<seq>.keys``; a night's consolidate opened from that snapshot reads
the postings of its new records' keys from it, and takes the keys of the pool records the
log after the snapshot touched (or that joined the pool since) as before. Held here: the
postings gathered equal those gathered without the file, over random pools, records built
or not and joined or left since (hypothesis); a night's events equal the file's absence and
the whole state's; the bytes are the same whatever order sets iterate in; and a file that
cannot be believed (damaged, of another snapshot or keys rule, out of bounds with a sha256
that holds) is not read, is reported by `verify` and deleted by `verify --repair`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore import consolidate as consolidate_module
from memstore import writes
from memstore.beliefs import candidates
from memstore.beliefs.candidates import Postings
from memstore.beliefs.frame import KEYS_VERSION, keys_of
from memstore.codec import dumps
from memstore.config import load_config
from memstore.nightcache import poolkeys
from memstore.rowscan import Pool, pooled_rows
from memstore.store.layout import Layout
from memstore.store.snapshot import read_header, snapshot_files

sys.path.insert(0, str(Path(__file__).parent))
from test_consolidate_partial import NEW  # noqa: E402
from test_distill_partial import snapshotted  # noqa: E402
from test_reads_scale import _day, _run  # noqa: E402

WORDS = ("billing", "postgres", "deploy", "friday", "office", "berlin", "lead", "alice", "bob", "tea",
         "coffee", "plan", "rollback", "ticket")
STATUSES = ("active", "expired", "superseded", "invalidated")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store snapshotted on day 70 (its keys beside it), lived on to day 120, with a day's
    records waiting (tests/test_consolidate_partial.py's)."""
    path = snapshotted(tmp_path_factory.mktemp("poolkeys") / "s")
    code, _out, err = _run(path, "remember", "--jsonl", "-", "--now", _day(121),
                           stdin="\n".join(json.dumps(r) for r in NEW).encode())
    assert code == 0, err
    return path


def _latest(path: Path) -> tuple[Path, str]:
    _seq, snap = snapshot_files(Layout(path))[-1]
    return snap, read_header(snap)[1]["checksum"]


# --- postings equal, however the pool came to be ------------------------------------------

row = st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.sampled_from(STATUSES),
                st.sampled_from(("raw", "summary")), st.sampled_from((None, "fact", "episode")))


@settings(max_examples=150, deadline=None)
@given(st.lists(row, min_size=1, max_size=40), st.data())
def test_postings_from_the_file_equal_those_from_the_keys(rows, data):
    """A table's rows (some not in the pool), some of them built since (judged as they are
    now: left the pool, or still in it), records created since: the postings of any keys, the
    keys of any pool record and the ranking read through the file equal those read without it."""
    texts = [" ".join(w) for w, *_ in rows]
    table = pa.table({"text": texts, "status": [r[1] for r in rows], "level": [r[2] for r in rows],
                      "kind": pa.array([r[3] for r in rows], type=pa.string()),
                      "outcome": pa.nulls(len(rows), pa.string())})
    filed = poolkeys.PoolKeys(*_parsed(poolkeys.build(table, "c")))
    pooled = pooled_rows(table, ("active", "expired")).tolist()
    built = data.draw(st.sets(st.integers(0, len(rows) - 1)))  # rows the log after it touched
    stays = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    born = data.draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), max_size=6))
    # the pool now: untouched pool rows, touched rows still pooled, then the new records (seq order)
    members = [(i, texts[i], -1 if i in built else i) for i in range(len(rows))
               if (pooled[i] if i not in built else stays[i])]
    members += [(len(rows) + j, " ".join(w), -1) for j, w in enumerate(born)]
    ids = [f"m{i:015x}" for i, _t, _r in members]
    pool_texts = [t for _i, t, _r in members]
    recorded = ["2026-01-01T00:00:00Z"] * len(members)
    at = [r for _i, _t, r in members]
    import numpy as np

    plain = Pool(ids, pool_texts, recorded, None)
    fromfile = Pool(ids, pool_texts, recorded, None, np.array(at, dtype=np.int64), len(rows))
    wanted = ids[len(ids) // 2:][: max(0, len(ids) // 2)]  # (few: the file is read)
    a = Postings(plain, wanted=wanted)
    b = Postings(fromfile, wanted=wanted, filed=filed)
    assert b._filed is not None
    every = frozenset(w for t in pool_texts for w in keys_of([t])[0]) | {"absent-key"}
    assert _lists(a._gather(every)) == _lists(b._gather(every))
    assert [a.keys_at(i) for i in range(len(ids))] == [b.keys_at(i) for i in range(len(ids))]
    assert a._lists.keys() == b._lists.keys() and _lists(a._lists) == _lists(b._lists)


def _parsed(data: bytes) -> tuple[dict, memoryview]:
    end = data.index(b"\n")
    return json.loads(data[:end]), memoryview(data)[end + 1:]


def _lists(found: dict) -> dict:
    return {k: [int(x) for x in v] for k, v in found.items()}


def test_the_bytes_are_the_same_with_the_key_cache_cold_warm_or_without(tmp_path, monkeypatch):
    """Keys looked up in the key cache (its ``Keys.words``: every text's keys decoded in
    blocks), derived because it lacks them, or derived without one: the same file."""
    from memstore.nightcache.keycache import KeyCache

    monkeypatch.setattr(candidates, "DERIVE_FEW", 0)  # (the cache is asked whatever the number)
    rows = [([WORDS[i % 14], WORDS[i * 5 % 14], WORDS[i * 3 % 14]], STATUSES[i % 3], "raw", "fact")
            for i in range(200)]
    table = pa.table({"text": [" ".join(w) for w, *_ in rows], "status": [r[1] for r in rows],
                      "level": [r[2] for r in rows], "kind": [r[3] for r in rows],
                      "outcome": pa.nulls(len(rows), pa.string())})
    alone = poolkeys.build(table, "c")
    assert poolkeys.build(table, "c", KeyCache(tmp_path).keys) == alone  # (cold: derived, then kept)
    assert poolkeys.build(table, "c", KeyCache(tmp_path).keys) == alone  # (warm: read back)


def test_a_snapshot_leaves_the_file_out_rather_than_derive_too_many_keys(tmp_path, monkeypatch):
    """More pool texts than ``DERIVE_MOST`` that the key cache lacks (a store not consolidated
    since a bulk import): no file, and the key cache is left as it was; with them in the key
    cache, the file; `verify` derives every key whatever the bound."""
    from memstore.nightcache.keycache import KeyCache

    monkeypatch.setattr(poolkeys, "DERIVE_MOST", 50)
    monkeypatch.setattr(candidates, "DERIVE_FEW", 0)
    rows = [([WORDS[i % 14], WORDS[i * 5 % 14], f"n{i}"], "active", "raw", "fact") for i in range(120)]
    table = pa.table({"text": [" ".join(w) for w, *_ in rows], "status": [r[1] for r in rows],
                      "level": [r[2] for r in rows], "kind": [r[3] for r in rows],
                      "outcome": pa.nulls(len(rows), pa.string())})
    assert poolkeys.build(table, "c") is None and poolkeys.build(table, "c", KeyCache(tmp_path).keys) is None
    assert not list(tmp_path.iterdir())  # (nothing derived was kept either)
    whole = poolkeys.build(table, "c", bounded=False)
    KeyCache(tmp_path).keys(table.column("text").to_pylist(), keys_of)  # (a night would put them there)
    assert poolkeys.build(table, "c", KeyCache(tmp_path).keys) == whole
    snap = tmp_path / "state-000000000001.parquet"
    poolkeys.path_of(snap).write_bytes(b"stale")
    assert poolkeys.write(snap, table, "c") is False and not poolkeys.path_of(snap).exists()


def test_the_bytes_do_not_depend_on_the_order_sets_iterate_in(tmp_path):
    """Keys are sets, iterated in an order that changes with the process's hash seed."""
    script = ("import sys, pyarrow as pa; from memstore.nightcache.poolkeys import build; "
              "t = pa.table({'text': ['deploy friday billing lead', 'alice bob tea coffee plan', 'rollback ticket'], "
              "'status': ['active'] * 3, 'level': ['raw'] * 3, 'kind': ['fact'] * 3, "
              "'outcome': pa.nulls(3, pa.string())}); sys.stdout.buffer.write(build(t, 'c'))")
    out = {subprocess.run([sys.executable, "-c", script], capture_output=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(out) == 1 and next(iter(out)).startswith(b'{"format":"memstore-poolkeys/1"')


# --- a night with the file ------------------------------------------------------------------

def test_snapshot_writes_the_keys_of_its_pool_rows(store):
    snap, checksum = _latest(store)
    filed = poolkeys.read(snap, checksum)
    assert filed is not None and len(filed.rows) > 20
    import pyarrow.parquet as pq

    table = pq.read_table(snap)
    texts = table.column("text").to_pylist()
    want: dict[str, list[int]] = {}
    for j, r in enumerate(filed.rows.tolist()):
        for w in keys_of([texts[r]])[0]:
            want.setdefault(w, []).append(j)
    assert filed.rows.tolist() == [i for i, ok in enumerate(pooled_rows(table, ("active", "expired"))) if ok]
    assert _lists(filed.postings(set(want) | {"nothing-holds-this"})) == want


def test_a_night_reads_the_file_and_decides_as_without_it(store, tmp_path, monkeypatch):
    """The day's records against a pool read through the file: the events of the same night
    without the file, and of the whole state (no snapshot)."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    layout = Layout(copy)
    config = load_config(layout.read_config_text())
    read = []
    real = candidates.Postings._gather_filed
    monkeypatch.setattr(candidates.Postings, "_gather_filed",
                        lambda self, wanted: read.append(len(wanted)) or real(self, wanted))
    now = _day(122)
    filed = writes.consolidate(layout, now=now, config=config, dry_run=True)
    assert read and sum(read) > 0  # (the file was read)
    snap, _checksum = _latest(copy)
    poolkeys.path_of(snap).unlink()
    without = writes.consolidate(layout, now=now, config=config, dry_run=True)
    whole = writes.run_stage(layout, writes.consolidation, now=now, config=config, dry_run=True)
    assert filed.events == without.events == whole.events
    assert any(e["op"] in ("supersede", "conflict") for e in filed.events)  # (the update stage decided)


# --- a file that cannot be believed --------------------------------------------------------

def _rewritten(data: bytes, **head) -> bytes:
    """The file with its header changed, its sha256 made to hold again."""
    import hashlib

    top, body = _parsed(data)
    top.update(head)
    top["sha256"] = hashlib.sha256(body).hexdigest()
    return dumps(top) + b"\n" + bytes(body)


def _past_bounds(data: bytes) -> bytes:
    """A posting past the covered rows, with a sha256 that holds (made so on purpose)."""
    import hashlib

    top, body = _parsed(data)
    body = bytearray(body)
    at = 4 * top["records"] + 8 * top["keys"] + 16 * (top["keys"] + 1)
    body[at:at + 4] = (10 ** 6).to_bytes(4, "little")
    top["sha256"] = hashlib.sha256(body).hexdigest()
    return dumps(top) + b"\n" + bytes(body)


def _rows_swapped(data: bytes) -> bytes:
    """The first two covered rows swapped, with a sha256 that holds."""
    import hashlib

    top, body = _parsed(data)
    body = bytearray(body)
    body[0:4], body[4:8] = body[4:8], body[0:4]
    top["sha256"] = hashlib.sha256(body).hexdigest()
    return dumps(top) + b"\n" + bytes(body)


DAMAGE = {
    "a byte flipped": lambda d: d[:-5] + bytes([d[-5] ^ 0xFF]) + d[-4:],
    "cut short": lambda d: d[: len(d) // 2],
    "no header": lambda d: b"\x00" * 64,
    "another snapshot's": lambda d: _rewritten(d, snapshot="0" * 64),
    "another keys rule's": lambda d: _rewritten(d, keys_version=KEYS_VERSION + 1),
    "counts that are not counts": lambda d: _rewritten(d, keys=-1),
    "a posting out of bounds": _past_bounds,
    "rows out of order": _rows_swapped,
}


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_file_that_cannot_be_believed_is_not_read_and_verify_repairs_it(store, tmp_path, how, monkeypatch):
    copy, snap, checksum, keys = damaged_copy(store, tmp_path, poolkeys.path_of, DAMAGE[how])
    assert poolkeys.read(snap, checksum) is None and poolkeys.problem(snap, checksum)
    layout = Layout(copy)
    config = load_config(layout.read_config_text())
    seen = []
    real = consolidate_module.consolidate
    monkeypatch.setattr(consolidate_module, "consolidate", lambda *a, **k: seen.append(k.get("filed")) or real(*a, **k))
    night = writes.consolidate(layout, now=_day(122), config=config, dry_run=True)
    whole = writes.run_stage(layout, writes.consolidation, now=_day(122), config=config, dry_run=True)
    assert seen[0] is None and night.events == whole.events
    verify_reports_and_repair_deletes(copy, snap, keys, "snapshot keys file")


def damaged_copy(store: Path, tmp_path: Path, path_of, damage) -> tuple[Path, Path, str, Path]:
    """A copy of ``store`` whose newest snapshot's file ``path_of`` is damaged by ``damage``:
    (the copy, its snapshot, the snapshot's checksum, the file)."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    snap, checksum = _latest(copy)
    path = path_of(snap)
    path.write_bytes(damage(path.read_bytes()))
    return copy, snap, checksum, path


def verify_reports_and_repair_deletes(copy: Path, snap: Path, path: Path, said: str) -> None:
    """`verify` reports the file at ``path`` beside ``snap`` (``said``), `--repair` deletes it
    and keeps the snapshot, and `verify` is then clean."""
    code, out, _err = _run(copy, "verify")
    assert code == 1 and str(path) in out and said in out and "--repair deletes it" in out
    assert _run(copy, "verify", "--repair")[0] == 0
    assert not path.exists() and snap.exists()
    assert _run(copy, "verify")[:2] == (0, "")


def test_verify_finds_keys_that_differ_from_the_snapshots_rows(store, tmp_path):
    """Sound, of this snapshot, but not its rows' keys (built from other rows): reported."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    snap, checksum = _latest(copy)
    other = pa.table({"text": ["deploy friday"], "status": ["active"], "level": ["raw"], "kind": ["fact"],
                      "outcome": pa.nulls(1, pa.string())})
    poolkeys.path_of(snap).write_bytes(poolkeys.build(other, checksum))
    code, out, _err = _run(copy, "verify")
    assert code == 1 and "holds other keys than the snapshot's rows have" in out


def test_the_keys_of_a_snapshot_that_is_gone_are_reported_and_go_with_it(store, tmp_path):
    companion_goes_with_its_snapshot(store, tmp_path, poolkeys.path_of, "the keys of a snapshot that is gone")


def companion_goes_with_its_snapshot(store: Path, tmp_path: Path, path_of, said: str) -> None:
    """A file beside the newest snapshot (``path_of``) copied beside a snapshot that is gone is
    reported (``said``) and deleted by `verify --repair`; the snapshot damaged, it is deleted
    with the snapshot."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    snap, _checksum = _latest(copy)
    orphan = path_of(snap.with_name("state-000000000001.parquet"))
    shutil.copy(path_of(snap), orphan)
    code, out, _err = _run(copy, "verify")
    assert code == 1 and said in out
    assert _run(copy, "verify", "--repair")[0] == 0 and not orphan.exists()
    snap.write_bytes(snap.read_bytes()[:100])  # a damaged snapshot: deleted with its companions
    assert _run(copy, "verify", "--repair")[0] == 0
    assert not snap.exists() and not path_of(snap).exists()
    assert _run(copy, "verify")[:2] == (0, "")


def test_snapshots_keep_the_keys_of_those_kept_grown_from_the_last(store, tmp_path, monkeypatch):
    """Two snapshots are kept: the keys of one removed are removed with it. Each snapshot's
    keys are grown from the last one's (a record superseded, new ones): the bytes built from
    its table alone, and `verify` finds them so."""
    import pyarrow.parquet as pq

    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    grown = []
    real = poolkeys._grown
    monkeypatch.setattr(poolkeys, "_grown", lambda *a, **k: grown.append(real(*a, **k)) or grown[-1])
    for day in (122, 123, 124):
        assert _run(copy, "remember", f"The build on day {day} is green", "--now", _day(day))[0] == 0
        assert _run(copy, "consolidate", "--now", _day(day))[0] == 0
        assert _run(copy, "snapshot", "--now", _day(day))[0] == 0
        snap, checksum = _latest(copy)
        assert poolkeys.path_of(snap).read_bytes() == poolkeys.build(pq.read_table(snap), checksum)
    assert len(grown) == 3 and all(g is not None for g in grown)
    names = sorted(p.name for p in (copy / "snapshots").iterdir())
    kept = [n for n in names if n.endswith(".parquet")]
    assert len(kept) == 2 and names == sorted(kept + [n.replace(".parquet", e) for n in kept for e in (".keys", ".near", ".order")])
    assert _run(copy, "verify")[:2] == (0, "")


def test_the_file_covers_the_pool_consolidate_reads():
    """The rows it covers are consolidate's pool's (its updatable statuses)."""
    assert poolkeys._UPDATABLE == consolidate_module._UPDATABLE


# --- a snapshot's keys grown from the last one's --------------------------------------------

def _table(rows: list) -> pa.Table:
    def strings(values):
        return pa.array(values, type=pa.string())

    return pa.table({"id": strings([f"m{i:015x}" for i in range(len(rows))]),
                     "text": strings([" ".join(w) for w, *_ in rows]), "status": strings([r[1] for r in rows]),
                     "level": strings([r[2] for r in rows]), "kind": strings([r[3] for r in rows]),
                     "outcome": pa.nulls(len(rows), pa.string())})


def _weak(name: bytes) -> int:
    """A hash that many names share (ties broken by name must hold)."""
    return len(name) % 3


@settings(max_examples=150, deadline=None)
@given(st.lists(row, max_size=30), st.lists(row, max_size=30), st.data(), st.booleans())
def test_keys_grown_from_the_last_snapshots_are_the_keys_built_whole(before, added, data, weak):
    """The next snapshot: the same rows in place (some now out of the pool, some back in),
    then the records created since; its keys grown from the last file are the bytes built
    from its table alone. With a weak hash too (names that share one)."""
    from contextlib import nullcontext
    from unittest import mock

    import numpy as np

    with mock.patch.object(poolkeys, "_hash", _weak) if weak else nullcontext():
        old_table = _table(before)
        old = poolkeys.PoolKeys(*_parsed(poolkeys.build(old_table, "a")))
        now = [(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5)) if data.draw(st.booleans())
                else r[0], data.draw(st.sampled_from(STATUSES)) if data.draw(st.booleans()) else r[1], *r[2:])
               for r in before] + added
        table = _table(now)
        whole = poolkeys.build(table, "b")
        assert poolkeys.build(table, "b", prior=(old, old_table)) == whole
        pooled = pooled_rows(table, ("active", "expired"))
        assert poolkeys._grown(table, pooled, np.flatnonzero(pooled), None, old, old_table) is not None


def test_keys_are_built_whole_when_the_tables_do_not_line_up():
    """A table whose first rows are not the last snapshot's (other ids, fewer rows): the last
    file is not used. A row whose text changed has its keys looked up again."""
    import numpy as np

    rows = [(["deploy", "friday"], "active", "raw", "fact"), (["billing", "lead"], "active", "raw", "fact")]
    old_table = _table(rows)
    old = poolkeys.PoolKeys(*_parsed(poolkeys.build(old_table, "a")))
    for changed in (_table(rows[:1]), old_table.set_column(0, "id", pa.array(["x" * 16, "y" * 16]))):
        pooled = pooled_rows(changed, ("active", "expired"))
        assert poolkeys._grown(changed, pooled, np.flatnonzero(pooled), None, old, old_table) is None
    reworded = _table(rows[::-1])  # (the same ids, the texts swapped)
    assert poolkeys.build(reworded, "b", prior=(old, old_table)) == poolkeys.build(reworded, "b")
    pooled = pooled_rows(reworded, ("active", "expired"))
    assert poolkeys._grown(reworded, pooled, np.flatnonzero(pooled), None, old, old_table) is not None
