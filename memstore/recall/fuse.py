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
    from ..cosine import Gram

    gram = Gram(vectors)  # exact dot products: the same picks on every machine
    top = max(scores[s] for s in order) or 1.0
    picked: list[int] = []
    remaining = list(order)
    redundancy: dict[int, float] = dict.fromkeys(order, 0.0)
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
                    r = max(0.0, (gram.dot(s, best) - floor) / (1.0 - floor))
                    redundancy[s] = max(redundancy[s], r)
    return picked
