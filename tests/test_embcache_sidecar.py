"""The embedding cache's sidecar (``NAME.hashes``, memstore.index.embcache._Sidecar): what a
process learnt of the cache file's first entries (their hashes, sorted, and where each is),
so the next one reads 24 bytes an entry instead of every entry of a shared cache (a
gigabyte at a million). It must give the lookups that reading the file gives, and be passed
over whenever it does not describe the file it sits beside.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_jobs import texts

from memstore.embed import HashingEmbedder
from memstore.index import embcache
from memstore.index.embcache import _LOADED, EmbeddingCache, _Found, _Sidecar, text_hash

EMB = HashingEmbedder(32)
RECORD = 16 + 32 * 4


@pytest.fixture(autouse=True)
def small(monkeypatch):
    monkeypatch.setattr(embcache, "_SIDECAR_AFTER", 50)
    _LOADED.clear()
    yield
    _LOADED.clear()


def _filled(tmp_path, n: int = 300):
    many = texts(n)
    EmbeddingCache(tmp_path, EMB.name, EMB.dim).embed(EMB, many, "passage")
    _LOADED.clear()
    return many


def _rows(tmp_path, asked: list[str]):
    _LOADED.clear()  # as a new process
    return EmbeddingCache(tmp_path, EMB.name, EMB.dim)._where([text_hash(f"passage\0{t}") for t in asked])


def _read_whole(tmp_path, asked):
    """The lookups from the file alone (no sidecar read)."""
    side = tmp_path / f"{EMB.name}.hashes"
    held = side.read_bytes() if side.exists() else None
    side.unlink(missing_ok=True)
    try:
        return _rows(tmp_path, asked)
    finally:
        if held is not None:
            side.write_bytes(held)


def test_a_process_that_read_the_file_writes_it_and_the_next_reads_it(tmp_path, monkeypatch):
    many = _filled(tmp_path)
    side = tmp_path / f"{EMB.name}.hashes"
    asked = many[::7] + ["never embedded"]
    want = _rows(tmp_path, asked)  # reads the file whole, writes the sidecar
    assert side.exists() and side.stat().st_size == _Sidecar.HEAD + 24 * 300
    assert list(want[:-1]) == [many.index(t) for t in asked[:-1]] and want[-1] == -1
    loaded = []
    real = _Sidecar.load

    def spy(self, found, itemsize, size):
        real(self, found, itemsize, size)
        loaded.append(found.read)

    monkeypatch.setattr(_Sidecar, "load", spy)
    assert np.array_equal(_rows(tmp_path, asked), want)
    assert loaded == [300 * RECORD]  # every entry came from the sidecar


def test_entries_appended_after_it_and_repeated_hashes(tmp_path):
    """The file grew after the sidecar was written (read as its tail), a text whose damaged
    entry was embedded again (its later entry is the one found), and a sidecar rewritten
    once enough was read."""
    many = _filled(tmp_path)
    _rows(tmp_path, many[:1])  # the sidecar, of 300 entries
    more = texts(340)[300:]
    EmbeddingCache(tmp_path, EMB.name, EMB.dim).embed(EMB, more, "passage")
    path = tmp_path / f"{EMB.name}.bin"
    raw = bytearray(path.read_bytes())
    raw[7 * RECORD + 16: 7 * RECORD + 20] = np.float32(7.5).tobytes()
    path.write_bytes(bytes(raw))
    _LOADED.clear()
    EmbeddingCache(tmp_path, EMB.name, EMB.dim).embed(EMB, [many[7]], "passage")  # appended again
    asked = many + more
    got = _rows(tmp_path, asked)
    assert np.array_equal(got, _read_whole(tmp_path, asked))
    assert got[7] == 340  # the later entry
    _LOADED.clear()
    vecs = EmbeddingCache(tmp_path, EMB.name, EMB.dim).embed(EMB, asked, "passage")
    assert np.array_equal(vecs, EMB.embed(asked, "passage"))


@pytest.mark.parametrize("damage", ["flip body", "flip head", "truncate", "another file", "short file",
                                    "wrong size", "empty", "directory"])
def test_a_sidecar_that_does_not_describe_the_file_is_passed_over(tmp_path, damage):
    many = _filled(tmp_path)
    side = tmp_path / f"{EMB.name}.hashes"
    _rows(tmp_path, many[:1])
    raw = bytearray(side.read_bytes())
    path = tmp_path / f"{EMB.name}.bin"
    if damage == "flip body":
        raw[_Sidecar.HEAD + 100] ^= 0xFF
        side.write_bytes(bytes(raw))
    elif damage == "flip head":
        raw[9] ^= 0x01
        side.write_bytes(bytes(raw))
    elif damage == "truncate":
        side.write_bytes(bytes(raw[:-5]))
    elif damage == "another file":  # the same size, other texts: the sidecar's hashes are not its
        other = tmp_path / "other"
        other.mkdir()
        EmbeddingCache(other, EMB.name, EMB.dim).embed(EMB, [f"other {i}" for i in range(300)], "passage")
        path.write_bytes((other / path.name).read_bytes())
        many = [f"other {i}" for i in range(300)]
    elif damage == "short file":
        path.write_bytes(path.read_bytes()[: 100 * RECORD])
        many = many[:100]
    elif damage == "wrong size":
        raw[16:24] = (RECORD + 4).to_bytes(8, "little")
        side.write_bytes(bytes(raw))
    elif damage == "empty":
        side.write_bytes(b"")
    else:
        side.unlink()
        side.mkdir()
    asked = many + ["never embedded"]
    got = _rows(tmp_path, asked)
    assert list(got[:-1]) == [many.index(t) for t in asked[:-1]] and got[-1] == -1  # as the file says


def test_a_cache_too_small_writes_none_and_an_unwritable_one_still_answers(tmp_path, monkeypatch):
    many = _filled(tmp_path, 20)  # fewer than _SIDECAR_AFTER (50 here)
    _rows(tmp_path, many)
    assert not (tmp_path / f"{EMB.name}.hashes").exists()
    many = _filled(tmp_path, 300)

    def refuse(*a, **k):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(embcache.os, "replace", refuse)  # (write_atomic's last step)
    got = _rows(tmp_path, many)
    assert list(got) == list(range(300))
    assert not (tmp_path / f"{EMB.name}.hashes").exists()


def test_found_from_a_sidecar_merges_what_is_read_after_it(tmp_path):
    """A _Found loaded from the sidecar is the one reading the file builds, array for array."""
    many = _filled(tmp_path)
    _rows(tmp_path, many[:1])
    itemsize = EmbeddingCache(tmp_path, EMB.name, EMB.dim)._rec().itemsize
    size = (tmp_path / f"{EMB.name}.bin").stat().st_size
    loaded = _Found()
    _Sidecar(tmp_path / f"{EMB.name}.bin").load(loaded, itemsize, size)
    _LOADED.clear()
    (tmp_path / f"{EMB.name}.hashes").unlink()
    EmbeddingCache(tmp_path, EMB.name, EMB.dim)._where([b"x" * 16])
    read = _LOADED[tmp_path / f"{EMB.name}.bin"]
    assert loaded.read == read.read and np.array_equal(loaded.hashes, read.hashes)
    assert np.array_equal(loaded.at, read.at)
