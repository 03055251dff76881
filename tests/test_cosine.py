"""Similarities that do not depend on the processor (memstore.cosine).

Another machine's SIMD kernels sum the same products in another order; a result that does
not change when the order of the components changes, and a search whose answer does not
change when USearch's distances move by a kernel's error, is the same on every machine.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.cosine import Gram, dot, half_cosines
from memstore.index.vectors import VectorIndex


def _unit_half(seed: int, n: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.astype("<f2").astype(np.float32)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.sampled_from([3, 16, 384]))
def test_half_cosines_are_exact_and_ignore_the_order_of_components(seed, dim):
    rows = _unit_half(seed, 6, dim)
    query = rows[0]
    got = half_cosines(rows, query)
    perm = np.random.default_rng(seed + 1).permutation(dim)
    assert got.tobytes() == half_cosines(rows[:, perm], query[perm]).tobytes()  # any summation order
    assert got.tobytes() == half_cosines(rows[::-1], query)[::-1].tobytes()  # any row order
    for row, cos in zip(rows, got, strict=True):
        exact = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, query, strict=True)), Fraction(0))
        na = sum((Fraction(float(a)) ** 2 for a in row), Fraction(0))
        nb = sum((Fraction(float(b)) ** 2 for b in query), Fraction(0))
        assert cos == pytest.approx(float(exact) / math.sqrt(float(na) * float(nb)), abs=1e-15)


def test_a_zero_vector_is_zero_to_everything():
    rows = np.array([[0.0, 0.0], [0.75, 1.0]], dtype=np.float32)
    assert half_cosines(rows, np.array([0.75, 1.0], dtype=np.float32)).tolist() == [0.0, 1.0]
    assert half_cosines(rows, np.zeros(2, dtype=np.float32)).tolist() == [0.0, 0.0]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_gram_and_dot_ignore_the_order_of_components(seed):
    rows = _unit_half(seed, 5, 384)
    perm = np.random.default_rng(seed + 7).permutation(384)
    gram = Gram(dict(enumerate(rows)))
    turned = Gram(dict(enumerate(rows[:, perm])))
    full = np.random.default_rng(seed).standard_normal((2, 384)).astype(np.float32)
    for a in range(5):
        for b in range(5):
            assert gram.dot(a, b) == turned.dot(a, b)
            exact = sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(rows[a], rows[b], strict=True)),
                        Fraction(0))
            assert gram.dot(a, b) == float(exact)  # every product and sum is exact: rounded once
    assert dot(full[0], full[1]) == dot(full[0][perm], full[1][perm])
    assert dot(full[0], full[1]) == float(sum((Fraction(float(x)) * Fraction(float(y))
                                              for x, y in zip(full[0], full[1], strict=True)), Fraction(0)))


def test_a_search_does_not_move_when_the_kernel_does(tmp_path, monkeypatch):
    """USearch's distances on another processor differ by ~1e-7: the hits' order and
    cosines are recomputed exactly, so a search answers the same bits whatever they are."""
    import usearch.index

    rows = _unit_half(5, 400, 64)  # cosines spread as a model's are (hashed texts' are few values)
    index = VectorIndex(tmp_path / "v.usearch", 64)
    index.add(list(range(1, 401)), rows)
    index.save()
    queries = list(_unit_half(6, 20, 64))
    first = [index.search(q, 10) for q in queries]
    restricted = [index.search(q, 10, restrict=list(range(1, 401, 3))) for q in queries]
    real = usearch.index.search
    rng = np.random.default_rng(3)

    def another_kernel(*args, **kw):
        m = real(*args, **kw)
        m.distances[:] = m.distances + rng.uniform(-1e-6, 1e-6, m.distances.shape).astype(m.distances.dtype)
        return m

    monkeypatch.setattr(usearch.index, "search", another_kernel)
    reopened = VectorIndex(tmp_path / "v.usearch", 64)
    assert [reopened.search(q, 10) for q in queries] == first
    assert [reopened.search(q, 10, restrict=list(range(1, 401, 3))) for q in queries] == restricted
