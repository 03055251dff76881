"""Weighted reciprocal-rank fusion and MMR diversification (memstore(7), RECALL)."""

from __future__ import annotations


def rrf(voices: dict[str, list[int]], weights: dict[str, float], k: int,
        scale: dict[str, dict[int, float]] | None = None) -> dict[int, float]:
    """score(d) = sum over voices of weight * scale(d) / (k + rank), rank from 1.

    ``scale`` optionally weighs a voice's items one by one (default 1).
    """
    scores: dict[int, float] = {}
    for name, ranked in voices.items():
        w = weights.get(name, 0.0)
        item = (scale or {}).get(name, {})
        for rank, seq in enumerate(ranked, start=1):
            scores[seq] = scores.get(seq, 0.0) + w * item.get(seq, 1.0) / (k + rank)
    return scores


def mmr(order: list[int], scores: dict[int, float], vectors: dict[int, object], k: int,
        lam: float, floor: float = 0.0, newer: dict[int, int] | None = None) -> list[int]:
    """Pick k items maximising lam*relevance - (1-lam)*redundancy with those picked.

    Relevance is the score scaled to [0, 1]. Redundancy is the cosine rescaled so
    that ``floor`` (a similarity the embedder gives texts about different facts)
    counts as 0 and identity as 1: retrieval models put most pairs of related texts
    above 0.8, where raw cosine cannot tell a paraphrase from a neighbour. Items
    without a vector count as dissimilar to everything. Ties keep the input order,
    so the result is stable. ``newer``: {item: the item that updates it}; an item is never
    picked while what updates it is still there to pick (that one is picked in its place:
    the two are near-paraphrases, and redundancy would otherwise push the newer one down).
    """
    if not order:
        return []
    import numpy as np

    from ..cosine import Gram

    # arrays over ``order``: each pick costs numpy work, not a Python loop over the rest
    # (a --k 1000 over 3,000 candidates took seconds); the arithmetic is the scalar one's
    gram = Gram({s: vectors[s] for s in order if s in vectors})  # exact: the same picks on every machine
    top = max(scores[s] for s in order) or 1.0
    at = {s: i for i, s in enumerate(order)}
    relevance = lam * np.array([scores[s] for s in order], dtype=np.float64) / top
    redundancy = np.zeros(len(order), dtype=np.float64)
    alive = np.ones(len(order), dtype=bool)
    where = np.array([at[s] for s in order if s in gram], dtype=np.int64)  # the gram's rows' places
    picked: list[int] = []
    while alive.any() and len(picked) < k:
        value = relevance - (1 - lam) * redundancy
        i = int(np.argmax(alive))  # the first left; a later one wins only by more than 1e-12
        while (later := np.flatnonzero(alive[i + 1:] & (value[i + 1:] > value[i] + 1e-12))).size:
            i += 1 + int(later[0])
        best = order[i]
        seen = {best}
        while newer and (n := newer.get(best)) in at and alive[at[n]] and n not in seen:
            best = n
            seen.add(best)
        picked.append(best)
        alive[at[best]] = False
        if best in gram:
            r = np.maximum(0.0, (gram.row(best) - floor) / (1.0 - floor))
            redundancy[where] = np.maximum(redundancy[where], r)
    return picked
