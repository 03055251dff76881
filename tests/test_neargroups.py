"""The near-duplicate groups beside a snapshot, with their vectors (memstore.nightcache.neargroups).

`snapshot` writes ``state-<seq>.near``; a night's consolidate opened from that snapshot reads
its groups' older members and their vectors from it, and takes the members the log after
the snapshot touched (and the day's records) as before, with their vectors from the cache.
Held here: the file lists the snapshot's groups with their rows in consolidate's order and
the cache's vectors, groups the cache lacks a member of listed without (hypothesis); a
night's events, and every group's members and vectors as decided, equal those of the same
night without the file and of the whole state, over random nightly histories snapshotted at
any night with the cache holding any part of the vectors (hypothesis) and over a night whose
groups hold members built since and are decided in more than one round; and a file that
cannot be believed (damaged, of another snapshot or embedder, out of bounds with a sha256
that holds) is not read, or not for the groups it damages, is reported by `verify` and
deleted by `verify --repair`.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore import consolidate as c
from memstore import writes
from memstore.codec import dumps, loads
from memstore.config import load_config
from memstore.index.embcache import CachedEmbedder, EmbeddingCache
from memstore.memlog import MemLog
from memstore.nightcache import neargroups
from memstore.store.layout import Layout
from memstore.store.open import _fold_partial
from memstore.store.snapshot import parquet_bytes, read_header, read_snapshot, snapshot_files
from memstore.timeutil import ts_after

sys.path.insert(0, str(Path(__file__).parent))
from test_consolidate_incremental import HASH, _history, request  # noqa: E402
from test_consolidate_partial import _snapshot_after_a_night, nights  # noqa: E402
from test_poolkeys import (  # noqa: E402
    companion_goes_with_its_snapshot,
    damaged_copy,
    verify_reports_and_repair_deletes,
)
from test_reads_scale import _day, _run  # noqa: E402

CONFIG = load_config(None)


@pytest.fixture(autouse=True, scope="module")
def _every_group():
    """Vectors for groups of any size (a snapshot writes them for groups of ``LEAST`` members
    or more: these stores' groups are smaller); ``test_the_file_lists_every_group...`` draws it."""
    was, neargroups.LEAST = neargroups.LEAST, 1
    yield
    neargroups.LEAST = was


def _cached(texts=(), directory: Path | None = None) -> CachedEmbedder:
    """The hashing embedder behind a cache holding the vectors of ``texts`` (in memory, or in
    ``directory``)."""
    embedder = CachedEmbedder(HASH, EmbeddingCache(directory, HASH.name, HASH.dim))
    if texts:
        embedder.embed(sorted(set(texts)))
    return embedder


# --- the file's groups -----------------------------------------------------------------------

member = st.tuples(st.sampled_from(("active", "superseded", "merged")), st.sampled_from(("raw", "summary")),
                   st.sampled_from((None, "", "eng", "ops")), st.sampled_from((None, "deploys", "billing", "b\x00", "é")),
                   st.sampled_from(("2026-01-01", "2026-01-02T10:00:00Z", "2026-01-02")), st.integers(0, 5),
                   st.sampled_from(("deploy friday", "billing", "tea", "deploy monday", "x")))


@settings(max_examples=150, deadline=None)
@given(st.lists(member, max_size=40), st.sets(st.sampled_from(("deploy friday", "billing", "tea", "deploy monday", "x"))),
       st.integers(min_value=1, max_value=4))
def test_the_file_lists_every_group_in_consolidates_order_with_the_caches_vectors(rows, cached, least):
    """Every group listed, its rows in compare order; its vectors there when the cache holds
    every member's and it has ``LEAST`` members or more."""
    neargroups.LEAST = least
    try:
        _lists_every_group(rows, cached, least)
    finally:
        neargroups.LEAST = 1


def _lists_every_group(rows, cached, least):
    ids = [f"m{j:015x}" for j in range(len(rows))]
    table = pa.table({"id": ids, "status": [r[0] for r in rows], "level": [r[1] for r in rows],
                      "domain": pa.array([r[2] for r in rows], type=pa.string()),
                      "subject": pa.array([r[3] for r in rows], type=pa.string()),
                      "occurred_at": [r[4] for r in rows], "seq": pa.array([r[5] for r in rows], type=pa.int64()),
                      "text": [r[6] for r in rows]})
    embedder = _cached(cached)
    data = neargroups.build(table, "c" * 64, embedder)
    want: dict[tuple, list[int]] = {}
    for j, r in enumerate(rows):
        if r[0] == "active" and r[1] == "raw" and r[3] is not None:
            want.setdefault((r[2] or "", r[3]), []).append(j)
    if not want:
        assert data is None
        return
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "state-000000000001.parquet"
        neargroups.path_of(snap).write_bytes(data)
        near = neargroups.read(snap, "c" * 64, embedder)
        assert near is not None and sorted(near.index) == list(near.index) == sorted(want)
        for key, members in want.items():
            members.sort(key=lambda j: (rows[j][4], rows[j][5], ids[j]))
            assert near.holds(key)
            block = near.block(key)
            if all(rows[j][6] in cached for j in members) and len(members) >= least:
                assert block[0].tolist() == members
                assert np.array_equal(block[1], HASH.embed([rows[j][6] for j in members]))
            else:
                assert block is None
        assert not near.holds(("nowhere", "nothing")) and near.block(("nowhere", "nothing")) is None
        assert neargroups.read(snap, "d" * 64, embedder) is None  # (another snapshot's)
        other = CachedEmbedder(type(HASH)(64), EmbeddingCache(None, "hashing-64", 64))
        assert neargroups.read(snap, "c" * 64, other) is None and neargroups.problem(snap, "c" * 64) is None


def test_vectors_copied_from_the_last_file_are_those_of_the_same_rows_and_texts():
    """A table that begins with the last one's rows: the rows with the same text (and a
    group whose digest holds) have their vectors copied, the others (a text changed, rows
    added, a damaged group) looked up: the bytes of a build from the cache alone."""
    texts = ["deploy friday", "deploy monday", "billing", "tea", "coffee"]
    old = pa.table({"id": ["m1", "m2", "m3", "m4"], "status": ["active"] * 4, "level": ["raw"] * 4,
                    "domain": pa.nulls(4, pa.string()), "subject": ["a", "a", "b", "c"],
                    "occurred_at": ["2026-01-01"] * 4, "seq": [1, 2, 3, 4], "text": texts[:4]})
    new = pa.table({"id": ["m1", "m2", "m3", "m4", "m5"], "status": ["active"] * 5, "level": ["raw"] * 5,
                    "domain": pa.nulls(5, pa.string()), "subject": ["a", "a", "b", "c", "a"],
                    "occurred_at": ["2026-01-01"] * 5, "seq": [1, 2, 3, 4, 5],
                    "text": ["deploy friday", "deploy on monday", "billing", "tea", "coffee"]})
    embedder = _cached([*texts, "deploy on monday"])
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "state-000000000004.parquet"
        data = bytearray(neargroups.build(old, "c" * 64, embedder))
        data[-4 * HASH.dim + 1] ^= 0x01  # (group c's vector: its digest no longer holds)
        neargroups.path_of(snap).write_bytes(bytes(data))
        last = neargroups.read(snap, "c" * 64, embedder)
        _old, at = neargroups._from_prior(new, neargroups.grouped(new)[2], embedder, (last, old))
        assert at.tolist() == [0, -1, -1, 2, -1]  # (rows m1, m2, m5 of a; m3 of b; m4 of c)
        assert neargroups.build(new, "d" * 64, embedder, (last, old)) == neargroups.build(new, "d" * 64, embedder)
        assert neargroups.build(new, "d" * 64, embedder, (last, old.slice(0, 3))) == \
            neargroups.build(new, "d" * 64, embedder)  # (tables that do not line up: nothing copied)


def test_groups_checked_ahead_on_a_thread_are_believed_only_when_their_digest_holds():
    """``check_ahead`` (a night checks its groups while it ranks updates): a group whose
    vectors were damaged is then not read; the others are, as ``block`` alone reads them."""
    table = pa.table({"id": ["m1", "m2", "m3", "m4"], "status": ["active"] * 4, "level": ["raw"] * 4,
                      "domain": pa.nulls(4, pa.string()), "subject": ["a", "a", "b", "b"],
                      "occurred_at": ["2026-01-01"] * 4, "seq": [1, 2, 3, 4], "text": ["w", "x", "y", "z"]})
    embedder = _cached(["w", "x", "y", "z"])
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "state-000000000004.parquet"
        data = bytearray(neargroups.build(table, "c" * 64, embedder))
        data[-1] ^= 0x40  # (group b's last vector, its last float's sign and exponent)
        neargroups.path_of(snap).write_bytes(bytes(data))
        ahead = neargroups.read(snap, "c" * 64, embedder)
        ahead.check_ahead({("", "a"), ("", "b"), ("", "nowhere")})
        alone = neargroups.read(snap, "c" * 64, embedder)
        assert ahead.block(("", "b")) is None is alone.block(("", "b"))
        assert np.array_equal(ahead.block(("", "a"))[1], alone.block(("", "a"))[1])
        assert ahead.block(("", "a"))[0].tolist() == [0, 1] and ahead.damaged() == [("", "b")]


def test_the_bytes_do_not_depend_on_the_order_of_the_rows_or_the_vectors_alignment():
    """The same groups from rows in another order: the same bytes; the vectors start on a
    64-byte boundary of the file whatever the header's length."""
    table = pa.table({"id": ["m1", "m2", "m3"], "status": ["active"] * 3, "level": ["raw"] * 3,
                      "domain": pa.array([None, "eng", None], type=pa.string()), "subject": ["a", "a", "a"],
                      "occurred_at": ["2026-01-02", "2026-01-01", "2026-01-01"], "seq": [3, 2, 1],
                      "text": ["x", "y", "z"]})
    embedder = _cached(["x", "y", "z"])
    data = neargroups.build(table, "c" * 64, embedder)
    shuffled = neargroups.build(table.take([2, 0, 1]), "c" * 64, embedder)
    head = loads(data[:data.index(b"\n")])
    assert head["groups"] == 2 and head["rows"] == head["vectors"] == 3
    assert len(data) % 64 == 0 and (len(data) - 3 * 4 * HASH.dim) % 64 == 0
    # (rows differ by position, so only the layout is compared: groups and their sizes)
    assert loads(shuffled[:shuffled.index(b"\n")])["groups"] == 2 and len(shuffled) == len(data)
    for key in range(70, 90):  # headers of other lengths
        padded = neargroups.build(table, "c" * key, embedder)
        assert (len(padded) - 3 * 4 * HASH.dim) % 64 == 0


# --- a night with the file ------------------------------------------------------------------

def _with_file(log: MemLog, cut_state_bytes: bytes, cut: int, now: str, cached: list[str], tmp: Path):
    """The snapshot (``cut_state_bytes``, of the log up to event ``cut``) opened as a night at
    ``now`` opens it, its groups file written from a cache holding ``cached``: (the partial
    state, the file as read, the embedder)."""
    path = tmp / "state-000000000001.parquet"
    path.write_bytes(cut_state_bytes)
    base, meta = read_snapshot(path, keep=lambda table, marks: c.rows(table, marks, now))
    embedder = _cached(cached)
    neargroups.write(path, base.memories.source.table, meta["checksum"], embedder)
    near = neargroups.read(path, meta["checksum"], embedder)
    return _fold_partial(iter(log.events[cut:]), base), near, embedder


def _decided(monkeypatch) -> list:
    """Every group decided from now on: its members' ids and its vectors' bytes (those active
    as it is decided: a later round may keep a group whole with the others masked out)."""
    seen = []
    inner = c._group_duplicates

    def spy(s, members, matrix, *a):
        plan = a[-1] if a and isinstance(a[-1], c._Plan) else None
        whole = c._whole(members)
        keep = np.ones(len(whole), dtype=bool) if plan is None else plan.active
        seen.append(([m.id for m, k in zip(whole, keep.tolist(), strict=True) if k],
                     np.asarray(matrix, dtype=np.float32)[keep].tobytes()))
        return inner(s, members, matrix, *a)

    monkeypatch.setattr(c, "_group_duplicates", spy)
    return seen


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=1, max_value=5), st.booleans()), min_size=1, max_size=12),
       st.booleans())
def test_a_group_kept_whole_is_ordered_counted_and_decided_as_its_active_members(members, episodic):
    """A later round's group kept whole with its members no longer active masked out
    (``_Masked``) is ordered among the groups, counted, and planned as the group of the
    others: its first member in canonical order (seq, then id: seqs may tie here), its
    length, and the members its decision starts from."""
    ids = [f"m{i:015x}" for i in reversed(range(len(members)))]  # (ids against seq order)
    seqs = np.array([q for q, _ in members], dtype=np.int64)
    mask = np.array([a for _, a in members], dtype=bool)
    whole = c._Members(ids, seqs, np.full(len(ids), episodic), ["2027-01-01"] * len(ids), [None] * len(ids),
                       np.arange(len(ids)), None)
    masked, alive = c._Masked(whole, mask), np.flatnonzero(mask).tolist()
    assert len(masked) == len(alive) and bool(masked) == bool(alive)
    if alive:
        assert c._first(masked) == c._first(whole.subset(alive))
    plan = c._plan(None, masked, np.zeros((len(ids), 4), dtype=np.float32), "2027", mark=10)
    assert plan.active.tolist() == mask.tolist() and plan.ids == ids and plan.nearest is None  # (no snapshot)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=2, max_size=24), st.integers(min_value=1, max_value=3),
       st.integers(min_value=0, max_value=12), st.booleans(), st.integers(min_value=1, max_value=4),
       st.integers(min_value=0, max_value=3), st.data())
def test_nights_from_any_snapshot_with_its_groups_file_equal_the_whole_state(requests, every, snap, before, day,
                                                                             later, data):
    """Nights of records and marked consolidations, a snapshot at night ``snap`` (taken before
    that night's run: its rows then hold records the night lists, or after it) whose groups
    file holds what the cache held of their vectors (any part of them), the nights after,
    then the last ``day`` records; then a run from the snapshot with the file, one without,
    and one from the whole state: the same events, and the same groups decided with the same
    members and vectors."""
    log = MemLog()
    history = _history(requests)
    last = history[-day:] if day < len(history) else history[-1:]
    history = history[:len(history) - len(last)]
    night = ts_after(history[0][0] if history else last[0][0], 0.125)
    night, taken = nights(log, history, night, every, snap, before)
    if taken is None:
        taken = (parquet_bytes(log.state), len(log.events))
    # the day's records, after every night, most in groups the snapshot has members of
    groups = sorted({(m.domain or "", m.subject) for m in log.state.memories.values()
                     if m.status == "active" and m.level == "raw" and m.subject is not None})
    for k, (_at, req) in enumerate(last):
        domain, subject = data.draw(st.sampled_from(groups)) if groups else ("", "deploys")
        req = {key: v for key, v in req.items() if key != "domain"} | {"subject": subject} | \
            ({"domain": domain} if domain else {})
        log.remember([req], ts_after(night, k / 10_000), CONFIG)
    now = ts_after(night, 0.5 + later)
    texts = sorted({m.text for m in log.state.memories.values()})
    cached = texts if data.draw(st.booleans()) else data.draw(st.lists(st.sampled_from(texts), unique=True))
    with tempfile.TemporaryDirectory() as tmp:
        part, near, embedder = _with_file(log, *taken, now, cached, Path(tmp))
        with pytest.MonkeyPatch.context() as mp:
            decided = _decided(mp)
            filed = c.consolidate(part, now=now, config=CONFIG, embedder=embedder, near=near)
            seen = [list(decided)]
            decided.clear()
            part2, _near, _e = _with_file(log, *taken, now, cached, Path(tmp))
            without = c.consolidate(part2, now=now, config=CONFIG, embedder=embedder)
            seen.append(list(decided))
            decided.clear()
            whole = c.consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
            seen.append(list(decided))
    assert filed == without == whole
    assert seen[0] == seen[1] == seen[2]


def test_a_night_reads_its_groups_from_the_file_over_rounds_with_members_built_since(monkeypatch, tmp_path):
    """Long-term beliefs in the snapshot, one of them repeated after it (built, and in its
    group) beside a new one, then a night that repeats two and contradicts one, its update stage left out (it
    builds the older records it ranks, which then are listed: this night reads them from the
    file), with an episode on either side of a repeat (compared only within its day) and the
    groups' first and last members in opposite orders (decided by the first). The groups come
    from the file, with the cache's vectors for the built and the new records only; a second
    round decides them again from what the first kept; and every group is decided with the
    members and vectors of the night without the file and of the whole state."""
    services = ["auth", "search", "mail", "chat", "video", "maps", "news", "shop", "docs", "wiki"]
    clients = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell"]
    older = [{"text": f"The {name} service deploys from the {branch} branch", "subject": "deploys", "kind": "note",
              "tier": "long"} for name, branch in zip(services, ["main", "release", "stable", "trunk", "prod"] * 2,
                                                      strict=True)]
    older += [{"text": f"The {name} account is billed {when}", "subject": "billing", "kind": "note", "tier": "long",
               "domain": "finance"} for name, when in zip(clients, ["monthly", "weekly"] * 4, strict=True)]
    older.append({"text": "We deploy on Fridays", "subject": "deploys", "kind": "decision", "tier": "long"})
    # (an episode, and a note an episode repeats: compared only with what happened on their day)
    older += [{"text": "The deploy pipeline broke on Friday", "subject": "deploys", "kind": "incident", "tier": "long"},
              {"text": "The billing export failed at night", "subject": "billing", "kind": "note", "tier": "long",
               "domain": "finance"}]
    now = "2026-01-06T00:00:00Z"
    log, _base, cut = _snapshot_after_a_night(older, now)
    snapshot = parquet_bytes(log.state)
    log.remember([{"text": "The maps service deploys from the trunk branch", "subject": "deploys", "kind": "note",
                   "tier": "long"}, {"text": "The chat service deploys from the trunk branch", "subject": "deploys",
                                     "kind": "note", "tier": "long"}], "2026-01-03T10:00:00Z", CONFIG)
    # (the billing group's records first: its last member is then older than the deploys
    # group's, whose first member is older than its own)
    log.remember([{"text": "The billing export failed at night!", "subject": "billing", "kind": "incident",
                   "domain": "finance"},
                  {"text": "The acme account is billed monthly.", "subject": "billing", "kind": "note",
                   "domain": "finance"},
                  {"text": "The chat service deploys from the trunk branch!", "subject": "deploys", "kind": "note"},
                  {"text": "We never deploy on Fridays", "subject": "deploys", "kind": "decision"},
                  {"text": "The deploy pipeline broke on Friday!", "subject": "deploys", "kind": "note"}],
                 "2026-01-05T10:00:00Z", CONFIG)
    monkeypatch.setattr(c, "_updates", lambda *a: [])
    merged = []
    inner = c._merge_filed
    monkeypatch.setattr(c, "_merge_filed", lambda filed, *a: merged.append(
        {k: len(v[0]) for k, v in filed.items()}) or inner(filed, *a))
    looked = []
    vectors = c._vectors
    monkeypatch.setattr(c, "_vectors", lambda e, texts, memo: looked.extend(texts) or vectors(e, texts, memo))
    decided = _decided(monkeypatch)
    texts = [r["text"] for r in older]
    part, near, embedder = _with_file(log, snapshot, cut, now, texts, tmp_path)
    assert near is not None and sorted(near.index) == [("", "deploys"), ("finance", "billing")]
    filed = c.consolidate(part, now=now, config=CONFIG, embedder=embedder, near=near)
    with_file = list(decided)
    assert len(merged) == 1 and all(merged[0].values())  # (each group's older members read from the file)
    assert set(looked) == {"The maps service deploys from the trunk branch", "The chat service deploys from the trunk "
                           "branch", "The chat service deploys from the trunk branch!", "We never deploy on Fridays",
                           "The acme account is billed monthly.", "The billing export failed at night!",
                           "The deploy pipeline broke on Friday!"}
    decided.clear()
    part, _near, _e = _with_file(log, snapshot, cut, now, texts, tmp_path)
    without = c.consolidate(part, now=now, config=CONFIG, embedder=embedder)
    assert without == filed == c.consolidate(log.state, now=now, config=CONFIG, embedder=HASH)
    assert with_file == decided[:len(decided) // 2] == decided[len(decided) // 2:]
    assert [e["op"] for e in filed] == ["merge", "merge", "conflict", "supersede", "merge"]
    assert len(with_file) > 2  # (a group decided again in a second round, from what the first kept)


# --- the CLI's snapshot, and a file that cannot be believed ---------------------------------

@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store lived through 40 days (tests/test_reads_scale.py's), snapshotted, with the cache
    the CLI used."""
    from test_reads_scale import _snapshotted

    return _snapshotted(tmp_path_factory.mktemp("near") / "s", 40, 46)


def _latest(path: Path) -> tuple[Path, str]:
    _seq, snap = snapshot_files(Layout(path))[-1]
    return snap, read_header(snap)[1]["checksum"]


def _cli_embedder() -> CachedEmbedder:
    from memstore_cli.indexing import cache_dir

    return _cached(directory=cache_dir())


def test_snapshot_writes_the_groups_and_a_night_through_the_cli_reads_them(store, tmp_path, monkeypatch):
    snap, checksum = _latest(store)
    near = neargroups.read(snap, checksum, _cli_embedder())
    assert near is not None and len(near.index) >= 3 and near.covered.all()
    groups, starts, rows = neargroups.grouped(pq.read_table(snap))
    assert list(near.index) == groups and near.starts.tolist() == starts.tolist()
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    assert _run(copy, "remember", "We deploy on Fridays at noon", "--subject", "deploys", "--now", _day(47))[0] == 0
    read = []
    inner = c._filed
    monkeypatch.setattr(c, "_filed", lambda *a: read.append(inner(*a)) or read[-1])
    code, filed, _err = _run(copy, "consolidate", "--dry-run", "--json", "--now", _day(48))
    assert code == 0 and read and read[0][0]  # (a group came from the file)
    neargroups.path_of(_latest(copy)[0]).unlink()
    assert _run(copy, "consolidate", "--dry-run", "--json", "--now", _day(48))[1] == filed
    assert _run(copy, "verify")[:2] == (0, "")


def _rewritten(data: bytes, change=None, **head) -> bytes:
    """The file with its header changed (and the body before the vectors, by ``change``),
    its sha256 made to hold again: a file made so on purpose."""
    end = data.index(b"\n")
    top = loads(data[:end])
    g = top["groups"]
    size = 8 * (g + 1) + 8 * (2 * g + 1) + 4 * top["rows"] + 33 * g + top["names"]
    table = bytearray(data[end + 1:end + 1 + size])
    vectors = data[len(data) - 4 * top["dim"] * top["vectors"]:]
    if change is not None:
        change(table, top)
    top.update(head)
    top["sha256"] = hashlib.sha256(table).hexdigest()
    line = dumps(top)
    return line + b"\n" + bytes(table) + bytes(-(len(line) + 1 + len(table)) % 64) + vectors


def _first_row(value: int):
    """A change that sets the first row listed to ``value``."""
    def change(table: bytearray, top: dict) -> None:
        at = 8 * (top["groups"] + 1) + 8 * (2 * top["groups"] + 1)
        table[at:at + 4] = value.to_bytes(4, "little")
    return change


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


DAMAGE = {
    "a vector's byte flipped": lambda d: _flipped(d, len(d) - 5),
    "a row's byte flipped": lambda d: _flipped(d, d.index(b"\n") + 1),
    "cut short": lambda d: d[: len(d) // 2],
    "no header": lambda d: b"\x00" * 64,
    "another snapshot's": lambda d: _rewritten(d, snapshot="0" * 64),
    "counts that are not counts": lambda d: _rewritten(d, groups=-1),
    "a row out of bounds": lambda d: _rewritten(d, _first_row(10 ** 6)),
    "other groups than the snapshot's": lambda d: _rewritten(d, _first_row(0)),
}


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_file_that_cannot_be_believed_is_not_read_and_verify_repairs_it(store, tmp_path, how, monkeypatch):
    copy, snap, checksum, path = damaged_copy(store, tmp_path, neargroups.path_of, DAMAGE[how])
    near = neargroups.read(snap, checksum, _cli_embedder())
    if how == "a vector's byte flipped":  # (read: the group it damages is not)
        assert near is not None and len(near.damaged()) == 1
    elif how == "other groups than the snapshot's":  # (sound: only verify, which groups the rows, sees it)
        assert near is not None
    else:
        assert near is None and neargroups.problem(snap, checksum)
    assert _run(copy, "remember", "We deploy on Fridays at noon", "--subject", "deploys", "--now", _day(47))[0] == 0
    layout = Layout(copy)
    config = load_config(layout.read_config_text())
    night = writes.consolidate(layout, now=_day(48), config=config, embedder=_cli_embedder(), dry_run=True)
    whole = writes.run_stage(layout, writes.consolidation, now=_day(48), config=config, embedder=_cli_embedder(),
                             dry_run=True)
    if how != "other groups than the snapshot's":  # (a file made so on purpose, sha256 and all)
        assert night.events == whole.events
    verify_reports_and_repair_deletes(copy, snap, path, "snapshot near-duplicate groups")


def test_the_groups_of_a_snapshot_that_is_gone_are_reported_and_go_with_it(store, tmp_path):
    companion_goes_with_its_snapshot(store, tmp_path, neargroups.path_of,
                                     "the near-duplicate groups of a snapshot that is gone")


def test_a_snapshot_without_the_vectors_in_the_cache_lists_its_groups_without_them(store, tmp_path, monkeypatch):
    """An empty cache (another machine's, or cleared) and no last file to copy from: every
    group listed, none with its vectors; the night takes them from the cache as without the
    file."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    neargroups.path_of(_latest(copy)[0]).unlink()  # (else its vectors are copied from the last one's)
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "empty"))
    assert _run(copy, "snapshot", "--now", _day(47))[0] == 0
    snap, checksum = _latest(copy)
    near = neargroups.read(snap, checksum, _cached(directory=tmp_path / "empty"))
    assert near is not None and len(near.index) >= 3 and not near.covered.any()
    assert all(near.block(key) is None for key in near.index)
    assert _run(copy, "verify")[:2] == (0, "")


def test_each_snapshot_copies_the_vectors_of_the_last_ones_groups(store, tmp_path, monkeypatch):
    """Snapshot after snapshot (records merged, new ones, a group new and one grown): the
    vectors are copied from the last snapshot's file, those of the rows added looked up; the
    bytes are those built from the table and the cache alone, and `verify` finds them so. A
    last file whose group is damaged gives nothing for that group (looked up instead)."""
    copy = tmp_path / "s"
    shutil.copytree(store, copy)
    grown = []
    real = neargroups._from_prior
    monkeypatch.setattr(neargroups, "_from_prior", lambda *a: grown.append(real(*a)) or grown[-1] if a[3] is not None
                        else real(*a))  # (the snapshot's, not the whole builds below)
    for day, damage in ((47, False), (48, True), (49, False)):
        if damage:  # (a vector of the last file's first group flipped: that group is looked up)
            last = neargroups.path_of(_latest(copy)[0])
            data = bytearray(last.read_bytes())
            data[-4 * HASH.dim * loads(data[:data.index(b"\n")])["vectors"] + 3] ^= 0x01
            last.write_bytes(bytes(data))
        for text, subject in ((f"The build on day {day} is green", "builds"), ("We deploy on Fridays at noon", "deploys"),
                              (f"Release {day} ships", f"release-{day}")):
            assert _run(copy, "remember", text, "--subject", subject, "--now", _day(day))[0] == 0
        assert _run(copy, "consolidate", "--now", _day(day))[0] == 0
        assert _run(copy, "snapshot", "--now", _day(day))[0] == 0
        snap, checksum = _latest(copy)
        assert neargroups.path_of(snap).read_bytes() == neargroups.build(pq.read_table(snap), checksum, _cli_embedder())
        used = grown[-1][1]
        assert (used >= 0).sum() > 0 and (used < 0).sum() > 0  # (copied, and looked up)
    assert len(grown) == 3 and all(g[0] is not None for g in grown)
    assert _run(copy, "verify")[:2] == (0, "")
