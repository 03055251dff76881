"""Recall ranks an update above what it updates before the nightly consolidate (issue [3/6]):
once the belief rules pair two candidates (``engine._stale``), diversification never puts the
older one first (MMR would: the two are near-paraphrases, and the newer one may be the nearer
to what was picked already)."""

from __future__ import annotations

import numpy as np

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
