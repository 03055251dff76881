"""Recall ranks an update above what it updates before the nightly consolidate (issue [3/6]):
once the belief rules pair two candidates (``engine._stale``), diversification never puts the
older one first (MMR would: the two are near-paraphrases, and the newer one may be the nearer
to what was picked already)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.recall import fuse


def test_diversity_never_puts_the_older_of_a_pair_first():
    """Two near-paraphrases, the newer scoring a hair above the older (as recall leaves a
    pair it swapped): redundancy with the first pick alone would put the older one first."""
    vecs = {1: np.array([1.0, 0.0]), 2: np.array([0.0, 1.0]), 3: np.array([0.5, 0.866]),
            4: np.array([0.6, 0.8])}  # 3 is older, 4 newer and nearer to 1
    scores = {1: 1.0, 2: 0.5, 3: 0.899, 4: 0.9}
    order = [1, 4, 3, 2]
    assert fuse.mmr(order, scores, vecs, 4, 0.7) == [1, 3, 4, 2]
    assert fuse.mmr(order, scores, vecs, 4, 0.7, newer={3: 4}) == [1, 4, 3, 2]
    assert fuse.mmr(order, scores, vecs, 4, 0.7, newer={3: 4, 4: 3}) == [1, 4, 3, 2]  # a loop ends


def _scalar_mmr(order, scores, vectors, k, lam, floor=0.0, newer=None):
    """MMR as 0.12 first wrote it, pick by pick in Python (the oracle of the numpy one)."""
    from memstore.cosine import Gram

    gram = Gram({s: vectors[s] for s in order if s in vectors})
    top = max(scores[s] for s in order) or 1.0
    picked, remaining = [], list(order)
    redundancy = dict.fromkeys(order, 0.0)
    while remaining and len(picked) < k:
        best, best_value = None, None
        for s in remaining:
            value = lam * scores[s] / top - (1 - lam) * redundancy[s]
            if best_value is None or value > best_value + 1e-12:
                best, best_value = s, value
        seen = {best}
        while newer and newer.get(best) in remaining and newer[best] not in seen:
            best = newer[best]
            seen.add(best)
        picked.append(best)
        remaining.remove(best)
        if best in gram:
            for s in remaining:
                if s in gram:
                    redundancy[s] = max(redundancy[s], max(0.0, (gram.dot(s, best) - floor) / (1.0 - floor)))
    return picked


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mmr_picks_as_the_scalar_loop_does(data):
    """Ties in score (and so in value), items without a vector, chains and loops of updates,
    every k: the numpy picks are the pick-by-pick ones."""
    n = data.draw(st.integers(1, 14))
    order = data.draw(st.permutations(list(range(1, n + 1))))
    scores = {s: data.draw(st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.7, 1.0, 1.3])) for s in order}
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    raw = rng.standard_normal((n, 4))
    raw[rng.random(n) < 0.3] = raw[0]  # near-duplicates tie in redundancy too
    vecs = {s: (v / np.linalg.norm(v)).astype("<f2").astype(np.float32)
            for s, v in zip(order, raw, strict=True) if data.draw(st.booleans()) or s == order[0]}
    newer = {a: b for a, b in data.draw(st.lists(st.tuples(st.sampled_from(order), st.sampled_from(order)),
                                                 max_size=4))}
    k = data.draw(st.integers(1, n + 1))
    lam = data.draw(st.sampled_from([0.5, 0.65, 0.7, 1.0]))
    floor = data.draw(st.sampled_from([0.0, 0.82]))
    assert fuse.mmr(order, scores, vecs, k, lam, floor, newer) == _scalar_mmr(order, scores, vecs, k, lam, floor, newer)
