"""judge: which learned policies apply to a new situation, with their evidence [000].

"Not what can be remembered, but what changes the next decision." A policy
applies when the situation matches it lexically (BM25 among the policies) or
semantically (cosine above the embedder's floor); applicable policies are
ranked by match x confidence. Pure: the caller supplies the policies, the
per-policy similarities and the evidence records.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Memory


@dataclass(frozen=True)
class Match:
    policy: Memory
    match: float
    semantic: float
    lexical: float
    score: float


def semantic_relevance(cosine: float, floor: float) -> float:
    return max(0.0, min(1.0, (cosine - floor) / (1.0 - floor))) if floor < 1 else 0.0


def lexical_relevance(bm25: float) -> float:
    """Saturating: a shared stop word (BM25 well under 1) counts for little, a shared topic for ~0.5."""
    return bm25 / (bm25 + 3.0) if bm25 > 0 else 0.0


def rank(policies: list[Memory], cosines: dict[str, float], bm25: dict[str, float], *, floor: float,
         min_match: float) -> list[Match]:
    out = []
    for p in policies:
        sem = semantic_relevance(cosines.get(p.id, 0.0), floor)
        lex = lexical_relevance(bm25.get(p.id, 0.0))
        match = max(sem, lex)
        if match >= min_match:
            out.append(Match(p, round(match, 4), round(sem, 4), round(lex, 4), round(match * p.confidence, 4)))
    out.sort(key=lambda m: (-m.score, m.policy.seq, m.policy.id))
    return out


def render(situation: str, now: str, matches: list[Match], evidence: dict[str, Memory]) -> dict:
    """The judge result object (`judge --json`)."""
    return {
        "situation": situation,
        "now": now,
        "applies": bool(matches),
        "policies": [
            {
                "id": m.policy.id,
                "rule": m.policy.text,
                "direction": m.policy.direction,
                "domain": m.policy.domain,
                "subject": m.policy.subject,
                "confidence": round(m.policy.confidence, 4),
                "match": m.match,
                "score": m.score,
                "evidence": [
                    {"id": e.id, "key": e.key, "text": e.text, "outcome": e.outcome,
                     "occurred_at": e.occurred_at, "status": e.status}
                    for i in m.policy.derived_from if (e := evidence.get(i)) is not None
                ],
            }
            for m in matches
        ],
    }
