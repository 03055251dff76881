"""Damaged, swapped and stale derived files (snapshots, indexes) never crash a read and never
make it answer from a file that disagrees with the log.

For each damage: every read command answers exactly as the undamaged store does (or fails
with one clear Error line and no traceback), ``verify`` reports it, and ``verify --repair``
makes the answers exact and ``verify`` clean. Real Tantivy and USearch indexes, the hashing
embedder, --now everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from reliability_support import cli, digest, make_store, mount, umount

NOW = "2026-06-08T09:00:00Z"
TOPICS = ["database", "deploy", "billing", "coffee", "release", "incident"]


def run(store: Path, *argv: str) -> tuple[int, str, str]:
    return cli("--store", str(store), *argv, "--now", NOW)


def remember(store: Path, i: int, text: str) -> str:
    rc, out, err = cli("--store", str(store), "remember", text, "--subject", TOPICS[i % len(TOPICS)],
                       "--actor", ["alice", "bob", "carol"][i % 3], "--now", f"2026-06-07T09:{i:02d}:00Z")
    assert rc == 0, err
    return out.strip()


def build(path: Path, words: str, n: int = 24) -> tuple[Path, list[str]]:
    """A store with a snapshot part way, current indexes and a log tail after the snapshot."""
    store = make_store(path)
    ids = [remember(store, i, f"{words} {TOPICS[i % len(TOPICS)]} note number {i}") for i in range(n - 4)]
    assert run(store, "snapshot")[0] == 0
    ids += [remember(store, i, f"{words} {TOPICS[i % len(TOPICS)]} note number {i}") for i in range(n - 4, n)]
    assert run(store, "index")[0] == 0
    return store, ids


READS = [("recall", "database choice", "--no-touch", "--json"), ("recall", "coffee", "--no-touch", "--k", "3"),
         ("recall", "deploy", "--no-touch", "--actor", "bob", "--json"), ("stats",), ("export",),
         ("judge", "pick the database")]


def answers(store: Path, ids: list[str]) -> list[tuple[int, str]]:
    got = []
    for argv in [*READS, ("show", ids[0]), ("show", ids[-1]), ("show", ids[len(ids) // 2])]:
        rc, out, err = run(store, *argv)
        assert "Traceback" not in err and "PanicException" not in err, err
        if rc not in (0, 3):  # 3: judge found no policy, an answer too
            errors = [line for line in err.splitlines() if line.startswith("Error:")]
            assert len(errors) == 1, err
        got.append((rc, out))
    return got


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("damaged")
    saved = os.environ.get("MEMSTORE_CACHE_DIR")
    os.environ["MEMSTORE_CACHE_DIR"] = str(root / "cache")
    try:
        base, ids = build(root / "base", "we chose postgres for the")
        other, _ = build(root / "other", "another store talks about cats and the")
        build(root / "early", "we chose postgres for the", n=12)  # the base store earlier in its life
        yield {"base": base, "other": other, "ids": ids, "golden": answers(base, ids), "root": root}
    finally:
        if saved is None:
            os.environ.pop("MEMSTORE_CACHE_DIR", None)
        else:
            os.environ["MEMSTORE_CACHE_DIR"] = saved


def xor16(path: Path, where: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    at = max(0, min(len(data) - 16, int(len(data) * where) - 8))
    for i in range(16):
        data[at + i] ^= 0xA5
    path.write_bytes(bytes(data))


def one(store: Path, pattern: str) -> Path:
    (path,) = sorted(store.glob(pattern))
    return path


def _snapshot(store: Path) -> Path:
    return one(store, "snapshots/state-*.parquet")


def edit_snapshot_text(store: Path, other: Path) -> None:
    """An edited text inside the snapshot, its metadata (checksums, anchor) kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = _snapshot(store)
    table = pq.read_table(path)
    texts = table.column("text").to_pylist()
    texts[0] = "Always deploy on Friday"
    table = table.set_column(table.schema.get_field_index("text"), "text", pa.array(texts, pa.string()))
    pq.write_table(table.replace_schema_metadata(table.schema.metadata), path)


def set_back(store: Path, other: Path) -> None:
    for rel in ("index/records/manifest.json", "index/lexical/manifest.json", "index/vectors.json"):
        m = json.loads((store / rel).read_text())
        m["watermark"] -= 3
        (store / rel).write_text(json.dumps(m))


def set_back_without_anchor(store: Path, other: Path) -> None:
    for rel in ("index/records/manifest.json", "index/lexical/manifest.json", "index/vectors.json"):
        m = json.loads((store / rel).read_text())
        m["watermark"] -= 3
        m["count"] -= 3
        m.pop("anchor")
        (store / rel).write_text(json.dumps(m))


def swap_index(store: Path, other: Path) -> None:
    shutil.rmtree(store / "index")
    shutil.copytree(other / "index", store / "index")


def other_snapshot(store: Path, other: Path) -> None:
    shutil.copyfile(_snapshot(other), _snapshot(store))  # the same seq, another store's rows


def snapshot_fifo(store: Path, other: Path) -> None:
    path = _snapshot(store)
    path.unlink()
    os.mkfifo(path, 0o600)


def copy_over(pattern: str, source: str):
    """Write a file of the same kind from another index over ours, keeping our name: each
    Tantivy file is internally valid (its CRC footer passes), so only the manifest's file
    list can tell (a setback or swap of single segment files)."""
    def damage(store: Path, other: Path) -> None:
        src = other if source == "other" else other.parent / "early"
        ours = one(store, pattern)
        theirs = max(src.glob(pattern), key=lambda p: p.stat().st_size)
        assert theirs.read_bytes() != ours.read_bytes()
        ours.write_bytes(theirs.read_bytes())
    return damage


DAMAGES = {
    "lexical .store xor": lambda s, o: xor16(one(s, "index/lexical/*.store")),
    "lexical .store xor near its end": lambda s, o: xor16(one(s, "index/lexical/*.store"), 0.9),
    "records .store xor": lambda s, o: xor16(one(s, "index/records/*.store")),
    "lexical .fast xor (a panic on open)": lambda s, o: xor16(one(s, "index/lexical/*.fast")),
    "records .term xor": lambda s, o: xor16(one(s, "index/records/*.term")),
    "vector rows xor": lambda s, o: xor16(s / "index" / "vectors.usearch", 0.3),
    "vector rows xor at the start": lambda s, o: xor16(s / "index" / "vectors.usearch", 0.0),
    "usearch file xor": lambda s, o: xor16(s / "index" / "vectors.usearch", 0.7),
    "another store's snapshot, same seq": other_snapshot,
    "an edited text inside the snapshot": edit_snapshot_text,
    "a FIFO named like the snapshot": snapshot_fifo,
    "another store's index/": swap_index,
    "watermarks set back": set_back,
    "watermarks and counts set back, no anchor": set_back_without_anchor,
    "records .term of another store": copy_over("index/records/*.term", "other"),
    "records .fast set back": copy_over("index/records/*.fast", "early"),
    "records .store set back": copy_over("index/records/*.store", "early"),
    "records .idx of another store": copy_over("index/records/*.idx", "other"),
    "lexical .term of another store": copy_over("index/lexical/*.term", "other"),
    "lexical .fast set back": copy_over("index/lexical/*.fast", "early"),
    "vector rows of another store (the same size)": copy_over("index/vectors.usearch", "other"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_derived_files_never_crash_or_lie(stores, damage, tmp_path):
    golden, ids = stores["golden"], stores["ids"]
    # (i) every read answers as the undamaged store does
    store = tmp_path / "reads"
    shutil.copytree(stores["base"], store)
    DAMAGES[damage](store, stores["other"])
    log_before = digest(store / "log")
    assert answers(store, ids) == golden
    assert digest(store / "log") == log_before
    # (ii) verify reports it; (iii) --repair makes it clean and the answers exact
    store = tmp_path / "verify"
    shutil.copytree(stores["base"], store)
    DAMAGES[damage](store, stores["other"])
    rc, out, err = run(store, "verify")
    assert rc == 1 and out.strip() and "Traceback" not in err, (out, err)
    rc, out, err = run(store, "verify", "--repair")
    assert rc == 0 and "Traceback" not in err, (out, err)
    assert run(store, "verify")[0] == 0
    assert answers(store, ids) == golden
    assert run(store, "verify")[:2] == (0, "")


def test_a_damaged_index_is_noted_once_and_rebuilt(stores, tmp_path):
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    path = one(store, "index/records/*.store")
    xor16(path)
    rc, out, err = run(store, "recall", "database choice", "--no-touch", "--json")
    assert rc == 0 and (rc, out) == stores["golden"][0]
    assert err == (f"memstore: index/records/{path.name} was written over since the index was built "
                   "(damaged or replaced); index/ rebuilt from the log\n")
    assert run(store, "verify")[0] == 0  # the read rebuilt it


def test_damage_that_keeps_size_and_mtime_is_found_by_the_query(stores, tmp_path):
    """Bytes changed in place with the mtime put back: the open cannot see it, the query that
    reads them panics, and the indexes are rebuilt once, with one note."""
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    path = one(store, "index/records/*.store")
    st = path.stat()
    xor16(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    rc, out, err = run(store, "recall", "database choice", "--no-touch", "--json")
    assert rc == 0 and (rc, out) == stores["golden"][0]
    assert err.count("memstore: index/records was damaged; rebuilt from the log") == 1
    assert run(store, "verify")[0] == 0


def test_a_foreign_index_is_noted_and_rebuilt(stores, tmp_path):
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    swap_index(store, stores["other"])
    rc, out, err = run(store, "recall", "database choice", "--no-touch", "--json")
    assert (rc, out) == stores["golden"][0]
    assert err.count("memstore: index/ did not match this store's log") == 1


def test_a_directory_named_like_a_snapshot(stores, tmp_path):
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    path = _snapshot(store)
    path.unlink()
    path.mkdir(mode=0o700)
    shutil.copyfile(_snapshot(stores["other"]), path / "part.parquet")  # a dataset pyarrow would read
    assert answers(store, stores["ids"]) == stores["golden"]
    rc, out, err = run(store, "verify", "--repair")
    assert rc == 1 and "a directory named like a snapshot" in out and "Traceback" not in err
    assert run(store, "snapshot")[0] == 0  # rotation skips it
    assert path.is_dir() and answers(store, stores["ids"]) == stores["golden"]


def test_a_catch_up_after_a_set_back_watermark_adds_no_duplicates(stores, tmp_path):
    from memstore.config import load_config
    from memstore.index.sync import open_indexes
    from memstore.store.layout import Layout

    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    set_back_without_anchor(store, stores["other"])
    layout = Layout(store)
    ix = open_indexes(layout, load_config(layout.read_config_text()), None)
    n = len(stores["ids"])
    assert (ix.records.count(), ix.lexical.count(), len(ix.vectors)) == (n, n, n)


# --- a log partition before the snapshot's anchor truncated, replaced or removed -----------------

def build_months(path: Path, words: str) -> tuple[Path, list[str]]:
    """May and June partitions; a snapshot (and the indexes) anchored in June, a tail after it."""
    store = make_store(path)

    def remember_at(text: str, now: str) -> str:
        rc, out, err = cli("--store", str(store), "remember", text, "--now", now)
        assert rc == 0, err
        return out.strip()

    ids = [remember_at(f"{words} may note {i}", f"2026-05-{i + 1:02d}T09:00:00Z") for i in range(8)]
    ids += [remember_at(f"{words} june note {i}", f"2026-06-0{i + 1}T09:00:00Z") for i in range(6)]
    assert run(store, "snapshot")[0] == 0
    ids += [remember_at(f"{words} june late note {i}", f"2026-06-07T1{i}:00:00Z") for i in range(2)]
    assert run(store, "index")[0] == 0
    return store, ids


@pytest.fixture(scope="module")
def months(stores, tmp_path_factory):  # (stores: its embedding cache is set for the module)
    root = tmp_path_factory.mktemp("months")
    base, ids = build_months(root / "base", "we chose postgres for the")
    other, _ = build_months(root / "other", "another store talks about cats and the")
    show = [ids[0], ids[5], ids[9], ids[-1]]  # early and late May, June, the tail
    return {"base": base, "other": other, "ids": show, "golden": answers(base, show)}


def from_log(store: Path, where: Path) -> Path:
    """A store rebuilt from ``store``'s log and config alone: what every read must answer."""
    where.mkdir(mode=0o700)
    shutil.copytree(store / "log", where / "log")
    shutil.copy2(store / "memstore.toml", where / "memstore.toml")
    return where


MONTH_DAMAGES = {
    "truncated to half": lambda p, o: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "another store's": lambda p, o: p.write_bytes(o.read_bytes()),
    "removed": lambda p, o: p.unlink(),
}


@pytest.mark.parametrize("damage", list(MONTH_DAMAGES))
def test_a_partition_before_the_snapshot_anchor_is_not_answered_from_the_snapshot(months, damage, tmp_path):
    """Issue 12: with log/2026-05.jsonl truncated or swapped, `show` answered from the June
    snapshot the events that the log no longer holds. The log is the truth: every read
    answers as a store rebuilt from the damaged log; verify names the snapshot; --repair
    restores exact answers."""
    store = tmp_path / "s"
    shutil.copytree(months["base"], store)
    (snap,) = store.glob("snapshots/state-*.parquet")
    MONTH_DAMAGES[damage](store / "log" / "2026-05.jsonl", months["other"] / "log" / "2026-05.jsonl")
    fresh = from_log(store, tmp_path / "fresh")
    want = answers(fresh, months["ids"])
    assert want != months["golden"]  # the snapshot and the indexes would answer otherwise
    log_before = digest(store / "log")
    assert answers(store, months["ids"]) == want
    assert digest(store / "log") == log_before
    rc, out, err = run(store, "verify")
    assert rc == 1 and "Traceback" not in err
    assert f"snapshots/{snap.name}" in out and "log/2026-05.jsonl" in out, out
    assert run(store, "verify", "--repair")[0] in (0, 1)
    run(fresh, "verify", "--repair")
    assert answers(store, months["ids"]) == answers(fresh, months["ids"])


def test_a_partition_edited_in_place_is_found_by_verify(months, tmp_path):
    """The same size and mtime: a read cannot see it for one stat (the snapshot still answers,
    as the undamaged store did); verify compares the partition's sha256 and --repair deletes
    the snapshot and rebuilds the indexes, so the answers become the log's."""
    store = tmp_path / "s"
    shutil.copytree(months["base"], store)
    part = store / "log" / "2026-05.jsonl"
    st = part.stat()
    part.write_bytes(part.read_bytes().replace(b"may note 3", b"MAY note 3"))
    os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))
    rc, out, err = run(store, "verify")
    assert rc == 1 and "log/2026-05.jsonl is not the partition it was written from (its sha256 differs)" \
        in out, out
    assert run(store, "verify", "--repair")[0] in (0, 1)
    fresh = from_log(store, tmp_path / "fresh")
    run(fresh, "verify", "--repair")
    assert answers(store, months["ids"]) == answers(fresh, months["ids"])


# --- a copy of the store that did not keep mtimes (cp -r, scp -r, a git checkout) ----------------

def copy_without_mtimes(src: Path, dst: Path) -> Path:
    """The store copied file by file as ``cp -r`` does (bytes and modes), with new mtimes, each
    a minute after its original's."""
    def copy(a, b):
        shutil.copyfile(a, b)
        shutil.copymode(a, b)

    shutil.copytree(src, dst, copy_function=copy)
    for path in dst.rglob("*"):
        if path.is_file():
            was = (src / path.relative_to(dst)).stat().st_mtime_ns
            os.utime(path, ns=(was + 60 * 10**9, was + 60 * 10**9))
    return dst


def _trusted(store: Path) -> list[str]:
    """Why the snapshot or an index is not trusted by a read ([]: all are), in-process."""
    from memstore.index.filecheck import files_changed
    from memstore.index.sync import read_manifest
    from memstore.store.anchor import anchor_problem
    from memstore.store.layout import Layout
    from memstore.store.snapshot import read_header

    layout = Layout(store)
    _state, meta = read_header(_snapshot(store))
    found = [anchor_problem(layout, meta["anchor"], meta["seq"])]
    for name in ("records", "lexical", "vectors"):
        m = read_manifest(layout.manifest_path(name))
        found += [anchor_problem(layout, m["anchor"], m["watermark"]), files_changed(layout, name, m)]
    return [why for why in found if why is not None]


def test_a_copy_that_did_not_keep_mtimes_reads_its_snapshot_and_indexes(months, tmp_path, monkeypatch):
    """Every file's mtime changed, no byte did: each read folded the whole log instead of
    opening the snapshot (60 s for `stats` at 1M), and the first catch-up deleted the
    indexes to embed every text again. The files are hashed once, compared with what the
    snapshot and manifests recorded, and the answer is kept in .stat-cache.json."""
    import memstore.index.filecheck as filecheck
    import memstore.store.anchor as anchor
    from memstore.store import statcache

    monkeypatch.setattr(statcache, "_RACY_NS", 0)  # (the copy's ctimes are seconds old)
    store = copy_without_mtimes(months["base"], tmp_path / "s")
    manifests = {p: p.read_bytes() for p in store.glob("index/**/*.json")}
    assert answers(store, months["ids"]) == months["golden"]
    rc, out, err = run(store, "recall", "database choice", "--no-touch", "--json")
    assert (rc, out, err) == (*months["golden"][0], "")  # no note: nothing was rebuilt
    assert {p: p.read_bytes() for p in store.glob("index/**/*.json")} == manifests
    cached = json.loads((store / ".stat-cache.json").read_text())["files"]
    assert "log/2026-05.jsonl" in cached and any(rel.startswith("index/records/") for rel in cached)
    assert (store / ".stat-cache.json").stat().st_mode & 0o777 == 0o600
    # the next process trusts them for one stat each: nothing is hashed again
    monkeypatch.setattr(statcache, "_seen", {})
    boom = lambda path, *a: pytest.fail(f"{path} hashed again")  # noqa: E731
    monkeypatch.setattr(anchor, "sha256_file", boom)
    monkeypatch.setattr(filecheck, "_digest", boom)
    assert _trusted(store) == []
    monkeypatch.undo()
    rc, out, err = run(store, "verify")  # (it compares every hash, and finds them right)
    assert (rc, out) == (0, "") and "is clean" in err, (out, err)


def test_a_copied_partition_edited_after_its_check_is_not_trusted(months, tmp_path, monkeypatch):
    """The cache is keyed by size, mtime and ctime: bytes written over a file checked before
    and its mtime put back (ctime cannot be) are hashed again, and the read answers as the
    log does, not from the snapshot."""
    from memstore.store import statcache

    monkeypatch.setattr(statcache, "_RACY_NS", 0)  # (the copy's ctimes are seconds old)
    store = copy_without_mtimes(months["base"], tmp_path / "s")
    assert _trusted(store) == []  # (checked and cached)
    assert "log/2026-05.jsonl" in json.loads((store / ".stat-cache.json").read_text())["files"]
    part = store / "log" / "2026-05.jsonl"
    st = part.stat()
    part.write_bytes(part.read_bytes().replace(b"may note 3", b"MAY note 3"))
    os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert part.stat().st_size == st.st_size and part.stat().st_ctime_ns != st.st_ctime_ns
    monkeypatch.setattr(statcache, "_seen", {})  # (what this process hashed: another starts without it)
    assert any("log/2026-05.jsonl was written over" in why for why in _trusted(store))
    fresh = from_log(store, tmp_path / "fresh")
    want = answers(fresh, months["ids"])
    assert want != months["golden"] and answers(store, months["ids"]) == want


def test_a_file_changed_moments_before_its_check_is_not_cached(months, tmp_path):
    """An entry is kept only once its file's ctime is 2 s older than the cache's write (the
    file system's clock): bytes written again within a coarse clock's tick after the check
    could leave the ctime as it was. Such a file is hashed again by the next read."""
    from memstore.store import statcache

    store = copy_without_mtimes(months["base"], tmp_path / "s")  # (every ctime: just now)
    assert _trusted(store) == []
    assert json.loads((store / ".stat-cache.json").read_text())["files"] == {}
    statcache._seen.clear()
    assert _trusted(store) == []  # (hashed again, and still the same bytes)


@pytest.mark.parametrize("cache", [b"not json", b'{"format": "memstore-stat-cache/1", "files": []}',
                                   b'{"format": "memstore-stat-cache/1", "files": {"log/2026-05.jsonl": [1, "2"]}}',
                                   b'{"format": "other", "files": {}}', b"[" * 100_000, b" " * (5 << 20),
                                   b'{"format": "memstore-stat-cache/1", "files": {"../../etc/passwd": [1, 2, 3, "x"]}}'],
                         ids=["not JSON", "files a list", "an entry of the wrong shape", "another format",
                              "nested too deep", "too big", "a name outside the store"])
def test_a_damaged_stat_cache_is_read_as_empty(months, tmp_path, monkeypatch, cache):
    from memstore.store import statcache

    monkeypatch.setattr(statcache, "_RACY_NS", 0)
    store = copy_without_mtimes(months["base"], tmp_path / "s")
    (store / ".stat-cache.json").write_bytes(cache)
    assert answers(store, months["ids"]) == months["golden"]
    files = json.loads((store / ".stat-cache.json").read_text())["files"]
    assert "log/2026-05.jsonl" in files and not any(".." in name for name in files)


# --- read-only stores and empty stores ------------------------------------------------------------

@pytest.fixture
def read_only(stores, tmp_path):
    """A read-only bind mount of a copy of the base store (and the copy, to change it first)."""
    if os.geteuid() != 0:
        pytest.skip("needs a bind mount (root)")
    src, ro = tmp_path / "src", tmp_path / "ro"
    shutil.copytree(stores["base"], src)
    ro.mkdir()

    def mount_read_only():
        if not (mount("--bind", str(src), str(ro)) and mount("-o", "remount,ro,bind", str(ro))):
            umount(ro)
            pytest.skip("cannot make a read-only bind mount here")
        return ro

    yield src, mount_read_only
    umount(ro)


def test_a_read_only_store_with_current_indexes_can_be_read(stores, read_only):
    src, mount_read_only = read_only
    ro = mount_read_only()
    before = digest(ro)
    assert answers(ro, stores["ids"]) == stores["golden"]
    rc, out, err = run(ro, "recall", "database choice", "--no-touch", "--json")
    assert (rc, out, err) == (*stores["golden"][0], "")
    assert digest(ro) == before


def test_a_read_only_store_named_by_a_relative_path_is_read(stores, read_only, monkeypatch):
    """Its indexes are opened through a directory of links (Tantivy takes lock files beside
    what it opens): links to a relative path dangled, and an empty index answered."""
    _src, mount_read_only = read_only
    ro = mount_read_only()
    monkeypatch.chdir(ro.parent)
    assert answers(Path(ro.name), stores["ids"]) == stores["golden"]
    rc, out, err = run(Path(ro.name), "recall", "database choice", "--no-touch", "--json")
    assert (rc, out, err) == (*stores["golden"][0], "")


def test_verify_of_a_store_named_by_a_relative_path_finds_its_indexes_whole(stores, tmp_path, monkeypatch):
    """verify opens the indexes through links too: a relative --store made it report every
    index empty (and --repair rebuild them)."""
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(Path("s"), "verify")
    assert (rc, out) == (0, "") and err.startswith("verify: s is clean ("), err


def test_a_read_only_copy_that_did_not_keep_mtimes_is_read(stores, read_only):
    """Its files are hashed on every read (the cache cannot be written there) and trusted:
    before, its indexes looked written over and could not be rebuilt, so recall failed."""
    src, mount_read_only = read_only
    for path in src.rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60 * 10**9))
    ro = mount_read_only()
    assert answers(ro, stores["ids"]) == stores["golden"]
    rc, out, err = run(ro, "recall", "database choice", "--no-touch", "--json")
    assert (rc, out, err) == (*stores["golden"][0], "")
    assert not (ro / ".stat-cache.json").exists()


def test_verify_reads_a_read_only_store(stores, read_only):
    _src, mount_read_only = read_only
    ro = mount_read_only()
    rc, out, err = run(ro, "verify")
    assert "Traceback" not in err and ".lock" not in out + err, (out, err)
    assert "read-only" not in err


def test_a_read_only_store_that_needs_a_catch_up_says_so(stores, read_only):
    src, mount_read_only = read_only
    remember(src, 40, "a memory the indexes have not seen")
    ro = mount_read_only()
    rc, out, err = run(ro, "recall", "database choice", "--no-touch")
    assert rc == 1 and out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"Error: cannot read the indexes in {ro / 'index'}: they are behind the log")
    assert "read-only" in line and "memstore index" in line
    assert run(ro, "show", stores["ids"][0])[0] == 0  # reads that need no index still work


def test_reads_on_a_store_with_an_empty_log_create_nothing(tmp_path):
    from memstore.config import load_config
    from memstore.index.sync import open_indexes
    from memstore.store.layout import Layout

    store = make_store(tmp_path / "s")
    (store / "log").mkdir(mode=0o700)
    layout = Layout(store)
    before = sorted(p.name for p in store.rglob("*"))
    ix = open_indexes(layout, load_config(layout.read_config_text()), None)
    assert ix.records.count() == 0 and ix.lexical.search("anything", 5) == [] and len(ix.vectors) == 0
    assert sorted(p.name for p in store.rglob("*")) == before


def test_a_damaged_embedding_cache_is_not_trusted(stores, tmp_path, monkeypatch):
    """The cache is shared by stores and lives outside them: a damaged entry is embedded again."""
    store = tmp_path / "s"
    shutil.copytree(stores["base"], store)
    cache = tmp_path / "cache"
    shutil.copytree(stores["root"] / "cache", cache)
    for path in cache.iterdir():
        data = bytearray(path.read_bytes())
        size = 16 + 4 * 256  # hash, then hashing-256's float32 vector
        for at in range(0, len(data) - size + 1, 3 * size):
            data[at + 16: at + 32] = b"\xff" * 16  # NaNs: never a vector to index
        path.write_bytes(bytes(data))
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(cache))
    shutil.rmtree(store / "index")
    assert answers(store, stores["ids"]) == stores["golden"]
    assert run(store, "verify")[0] == 0


def test_a_fifo_where_a_manifest_goes_never_hangs_verify(tmp_path):
    import subprocess
    import sys

    from reliability_support import MEMSTORE_SCRIPT, subprocess_env

    store = make_store(tmp_path / "store")
    for i in range(3):
        assert cli("--store", str(store), "remember", f"memory {i} about fifos", "--now", f"2026-06-0{i + 1}T09:00:00Z")[0] == 0
    assert cli("--store", str(store), "index", "--now", "2026-06-05T09:00:00Z")[0] == 0
    manifest = store / "index" / "records" / "manifest.json"
    manifest.unlink()
    os.mkfifo(manifest)
    p = subprocess.run([sys.executable, MEMSTORE_SCRIPT, "--store", str(store), "verify", "--now",
                        "2026-06-05T09:00:00Z"], capture_output=True, env=subprocess_env(), timeout=60)
    assert p.returncode == 1 and b"manifest is unreadable" in p.stdout and b"Traceback" not in p.stderr


def test_the_open_time_checksum_accepts_every_kind_of_record(tmp_path):
    """Opening a snapshot hashes the rows as Parquet returns them against the checksum of the
    state's canonical rows: over a year of lifecycle (every status, level and link) they
    must agree, or every open would silently fall back to folding the whole log."""
    from test_lifecycle_year import run_year

    from memstore.state import digest as state_digest
    from memstore.store.snapshot import parquet_bytes, read_snapshot

    log, _ = run_year()
    state = log.state() if callable(log.state) else log.state
    path = tmp_path / "state-000000000001.parquet"
    path.write_bytes(parquet_bytes(state))
    back, _meta = read_snapshot(path)
    assert len(back.memories) > 250 and state_digest(back) == state_digest(state)
