"""How a recall reads the vector index at scale (issue [6/6]: a read's peak RSS <= 300 MB).

- Many rows (a restricted search's candidates) are read with pread, not through the
  mapping, whose fault-around brought 64 KB of the file around each row into the process
  (20,000 rows at 1M: 470 MB); the rows must be the mapping's, bit for bit, in runs or
  scattered, and the mapping answers when the file was replaced after it was mapped.
- The USearch file is viewed without its key lookup table and through a mapping of our
  own whose pages are handed back once viewing is done: the HNSW answers
  must be those of viewing the file by path.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import memstore.index.vectors as vectors
from memstore.embed import HashingEmbedder
from memstore.index.vectors import VectorIndex

EMB = HashingEmbedder(64)
N = 1200


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("vectors") / "v.usearch"
    texts = [f"memory {i} about topic {i % 17} and detail {i * 13 % 29} of {i % 5}" for i in range(N)]
    index = VectorIndex(path, 64)
    index.add([2 * i + 1 for i in range(N)], EMB.embed(texts, "passage"))  # odd seqs
    index.save()
    return path


@pytest.mark.parametrize("pick", ["all", "runs", "scattered", "ends", "few"])
def test_rows_read_with_pread_are_the_mappings(saved, pick, monkeypatch):
    rng = np.random.default_rng(7)
    seqs = {"all": range(1, 2 * N, 2), "runs": [s for s in range(1, 2 * N, 2) if s // 50 % 3 == 0],
            "scattered": rng.choice(np.arange(1, 2 * N, 2), 400, replace=False),
            "ends": [1, 3, 5, 2 * N - 3, 2 * N - 1, *range(601, 1401, 2)], "few": [7, 9, 4000]}[pick]
    index = VectorIndex(saved, 64)
    read = index.vectors(list(seqs) + [2, 10_000])  # (even seqs and beyond: none)
    monkeypatch.setattr(vectors, "_PREAD_FROM", 10**9)
    mapped = VectorIndex(saved, 64).vectors(list(seqs))
    assert list(read) == list(mapped) == sorted(int(s) for s in seqs if s < 2 * N)
    assert all(np.array_equal(read[s], mapped[s]) and read[s].dtype == np.float32 for s in read)


def test_a_file_replaced_after_it_was_mapped_is_read_through_the_mapping(saved, tmp_path):
    import shutil

    path = tmp_path / "v.usearch"
    for p in (saved, saved.with_name(saved.name + ".keys")):
        shutil.copy(p, tmp_path / p.name)
    index = VectorIndex(path, 64)
    want = {s: v.copy() for s, v in index.vectors(range(1, 2 * N, 2)).items()}
    other = tmp_path / "other.usearch"
    shutil.copy(path, other)
    data = bytearray(other.read_bytes())
    data[8:8 + 64 * 2 * 600] = bytes(64 * 2 * 600)  # its first 600 rows zeroed
    other.write_bytes(bytes(data))
    os.replace(other, path)  # (as save() replaces it)
    got = index.vectors(range(1, 2 * N, 2))
    assert all(np.array_equal(got[s], want[s]) for s in want)  # the mapped file's rows, not the new file's
    assert not np.any(VectorIndex(path, 64).vectors([1])[1])  # (a new open reads the new file)


def test_a_damaged_row_among_many_is_refused(saved, tmp_path):
    import shutil

    path = tmp_path / "v.usearch"
    for p in (saved, saved.with_name(saved.name + ".keys")):
        shutil.copy(p, tmp_path / p.name)
    data = bytearray(path.read_bytes())
    data[8 + 64 * 2 * 700:8 + 64 * 2 * 700 + 2] = b"\x00\x7c"  # row 700's first value: +inf
    path.write_bytes(bytes(data))
    index = VectorIndex(path, 64)
    qv = EMB.embed(["topic 3"], "query")[0]
    with pytest.raises(ValueError, match="not unit length"):
        index.search(qv, 5, restrict=list(range(1, 2 * N, 2)))


def test_hnsw_answers_are_those_of_viewing_by_path(saved, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 100)  # (HNSW above it: this index's 1,200)
    queries = EMB.embed(["topic 3 detail 5", "memory 42", "nothing alike", "detail 7 of 2"], "query")
    ours = VectorIndex(saved, 64)
    got = [ours.search(q, 20) for q in queries]
    assert ours._mapped is not None and not ours.index.multi

    def by_path(self):
        self._index.view(str(self.path))

    monkeypatch.setattr(VectorIndex, "_view", by_path)
    theirs = VectorIndex(saved, 64)
    assert got == [theirs.search(q, 20) for q in queries]
    assert all(len(g) == 20 for g in got)
