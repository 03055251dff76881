"""The embedding cache's check of the vectors it reads back (``embcache._unit``): a stored
vector is used only when it is finite and of unit length (or zero). The norms are summed in
float32 and only the doubtful ones again in float64; the verdicts must be those of summing
every vector in float64, on sound vectors, vectors near the bounds and damaged bytes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.index.embcache import _unit


def _reference(vecs) -> np.ndarray:
    with np.errstate(all="ignore"):
        v = np.asarray(vecs, dtype=np.float64)
        norms = np.einsum("ij,ij->i", v, v)
    return np.isfinite(norms) & ((norms == 0) | (np.abs(norms - 1.0) < 2e-3))


def _scaled(rng, n: int, dim: int, squared_norms) -> np.ndarray:
    v = rng.standard_normal((n, dim))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return (v * np.sqrt(np.asarray(squared_norms))[:, None]).astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from((8, 256, 384)))
def test_the_float32_check_gives_the_float64_verdicts(seed, dim):
    rng = np.random.default_rng(seed)
    # squared norms on both sides of each bound, and well inside and outside them
    near = [1 + s * (2e-3 + d) for s in (-1, 1) for d in (-1e-4, -2e-5, -1e-6, 0.0, 1e-6, 2e-5, 1e-4)]
    sound = _scaled(rng, 40, dim, np.ones(40))
    bounds = _scaled(rng, len(near), dim, near)
    tiny = _scaled(rng, 6, dim, [1e-30, 1e-38, 1e-44, 1e-60, 1e-80, 0.0])
    huge = _scaled(rng, 3, dim, [1e30, 1e38, 1e70])
    damaged = rng.integers(0, 2**32, size=(40, dim), dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.zeros((4, dim), dtype=np.float32)
    special[1, 0], special[2, 0], special[3, 0] = np.nan, np.inf, np.float32(1e-45)  # (a denormal)
    vecs = np.concatenate([sound, bounds, tiny, huge, damaged, special])
    got = _unit(vecs)
    assert got.tolist() == _reference(vecs).tolist()
    assert got[:40].all() and got[len(vecs) - 4] and not got[len(vecs) - 3:].any()


def test_blocks_of_doubtful_rows_are_checked_whole(monkeypatch):
    """More doubtful rows than one float64 block: every one is summed again."""
    from memstore.index import embcache

    monkeypatch.setattr(embcache, "_BLOCK", 3)
    rng = np.random.default_rng(1)
    vecs = _scaled(rng, 10, 16, [1e-40, 1.0, 1.002, 0.998, 1e-31, 1.0021, 0.9979, 2.0, 1e-50, 0.0])
    assert _unit(vecs).tolist() == _reference(vecs).tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=39), max_size=60), st.sampled_from([1, 3, 2048]))
def test_vectors_read_in_file_order_come_back_in_the_order_asked(asked, mapped):
    """``EmbeddingCache._vectors`` reads the rows sorted, a map over the span of each few
    (``_MAPPED``), and gives them back in the order asked, repeats and all."""
    import tempfile
    from pathlib import Path

    import memstore.index.embcache as ec
    from memstore.embed import HashingEmbedder

    embedder = HashingEmbedder(16)
    texts = [f"memory number {i}" for i in range(40)]
    with tempfile.TemporaryDirectory() as tmp:
        cache = ec.EmbeddingCache(Path(tmp), embedder.name, embedder.dim)
        cache.embed(embedder, texts)  # (written in this order: row i holds texts[i])
        saved, ec._MAPPED = ec._MAPPED, mapped
        try:
            got = cache._vectors(np.array(asked, dtype=np.int64))
        finally:
            ec._MAPPED = saved
    expected = np.asarray(embedder.embed(texts, "passage"), dtype=np.float32)
    assert got.shape == (len(asked), embedder.dim)
    assert np.array_equal(got, expected[asked].reshape(len(asked), embedder.dim))
