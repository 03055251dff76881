"""Recall: cues -> four voices -> weighted RRF -> salience and status -> MMR.

``recall(request, indexes, now=..., config=...)`` returns the result object that
the CLI prints as JSON (schema in memstore-recall(1)); it reads the indexes and
changes nothing. Scores are rounded so output is byte-stable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..index.records import time_order
from ..model import Memory
from ..salience import effective, explain
from . import fuse, intent, timecues
from .cues import prune

HIDDEN = ("superseded", "invalidated")  # excluded unless --as-of asks for the past
DEMOTED = {"expired": 0.8, "archived": 0.8}  # still reachable, ranked lower
RESULT_FIELDS = ("id", "key", "text", "kind", "subject", "actors", "occurred_at", "recorded_at",
                 "tier", "level", "status", "confidence")


@dataclass(frozen=True)
class Request:
    query: str
    k: int = 10
    actors: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    during: tuple[str, ...] = ()  # time buckets, already resolved against now
    levels: tuple[str, ...] = ()
    as_of: str | None = None
    explain: bool = False
    voices: tuple[str, ...] = ("lexical", "semantic", "temporal", "graph")
    extra: dict = field(default_factory=dict)


def _cues(req: Request) -> dict[str, list[str]]:
    return {"actor": list(req.actors), "kind": list(req.kinds), "outcome": list(req.outcomes),
            "domain": list(req.domains), "subject": list(req.subjects), "bucket": list(req.during),
            "level": list(req.levels)}


def _visible(m: Memory, now: str, as_of: str | None) -> bool:
    """Current beliefs at now; with as_of, what was believed then (bitemporal) [003]."""
    if as_of is None:
        return m.recorded_at <= now and m.status not in HIDDEN
    return m.recorded_at <= as_of and (m.invalid_at is None or m.invalid_at > as_of)


def _graph(ix, seeds: list[Memory], allowed: set[int] | None, limit: int) -> list[int]:
    """Two hops from the seeds along subject, provenance, supersede and actor edges [002]."""
    seed_ids = {m.id for m in seeds}
    order: list[tuple[int, int, int, int]] = []  # (hop, edge strength, seed rank, -seq)
    seen: set[str] = set(seed_ids)
    frontier = [(m, i) for i, m in enumerate(seeds)]
    for hop in (1, 2):
        nxt = []
        for m, rank in frontier:
            linked: list[tuple[int, Memory]] = []
            if m.subject:
                linked += [(0, n) for n in ix.records.neighbours("subject", m.subject.casefold(), 10)]
            refs = [*m.derived_from, *(x for x in (m.superseded_by,) if x)]
            linked += [(1, n) for n in ix.records.get(refs).values()]
            if hop == 1:
                for actor in m.actors[:2]:
                    linked += [(2, n) for n in ix.records.neighbours("actor", actor.casefold(), 5)]
            for strength, n in linked:
                if n.id in seen or (allowed is not None and n.seq not in allowed):
                    continue
                seen.add(n.id)
                order.append((hop, strength, rank, -n.seq))
                nxt.append((n, rank))
        frontier = nxt[:10]
    order.sort()
    return [-o[3] for o in order[:limit]]


def recall(req: Request, ix, *, now: str, config) -> dict:
    rc = config["recall"]
    depth = max(50, req.k * 5)
    pruned = prune(ix.records, _cues(req))
    allowed = None if pruned.candidates is None else {m.seq for m in pruned.candidates}
    restrict = None if allowed is None else sorted(allowed)
    text_cues = timecues.find_cues(req.query, now)
    query_intent = intent.classify(req.query, text_cues or list(req.during))
    voices: dict[str, list[int]] = {}
    qvec = None
    if "lexical" in req.voices:
        voices["lexical"] = [s for s, _ in ix.lexical.search(req.query, depth, restrict)]
    if "semantic" in req.voices or "temporal" in req.voices:
        qvec = ix.cache.embed(ix.embedder, [req.query], "query")[0]
    if "semantic" in req.voices:
        voices["semantic"] = [s for s, _ in ix.vectors.search(qvec, depth, restrict)]
    if "temporal" in req.voices:
        voices["temporal"] = _temporal(ix, qvec, text_cues, allowed, depth)
    if "graph" in req.voices:
        seeds_seqs = list(dict.fromkeys(
            s for pair in zip(voices.get("lexical", [])[:3], voices.get("semantic", [])[:3], strict=False)
            for s in pair))[:4]
        seeds = sorted(ix.records.by_seqs(seeds_seqs).values(), key=lambda m: seeds_seqs.index(m.seq))
        voices["graph"] = _graph(ix, seeds, allowed, depth)
    weights = intent.WEIGHTS[query_intent]
    fused = fuse.rrf(voices, weights, rc["rrf_k"])
    records = ix.records.by_seqs(list(fused))
    scored: dict[int, float] = {}
    why: dict[int, dict] = {}
    for seq, base in fused.items():
        m = records.get(seq)
        if m is None or not _visible(m, now, req.as_of):
            continue
        eff = effective(m, now, config)
        sal_factor = 1.0 - rc["salience_weight"] + rc["salience_weight"] * eff
        status_factor = DEMOTED.get(m.status, 1.0) if req.as_of is None else 1.0
        scored[seq] = base * sal_factor * status_factor
        if req.explain:
            why[seq] = {"rrf": round(base, 6), "salience": round(eff, 4),
                        "salience_factor": round(sal_factor, 4), "status_factor": status_factor}
    order = sorted(scored, key=lambda s: (-scored[s], s))[: req.k * 3]
    vecs = _vectors(ix, order)
    picked = fuse.mmr(order, scored, vecs, req.k, rc["mmr_lambda"])
    results = []
    for seq in picked:
        m = records[seq]
        row = {f: getattr(m, f) for f in RESULT_FIELDS}
        row["actors"] = list(m.actors)
        row["score"] = round(scored[seq] * 1000, 4)
        if req.explain:
            ex = explain(m, now, config)
            row["explain"] = {
                **why[seq],
                "ranks": {v: voices[v].index(seq) + 1 for v in voices if seq in voices[v]},
                "decay": round(ex["decayed_composite"] / ex["composite"], 4) if ex["composite"] else 1.0,
                "protected": ex["protected"],
                "demoted": _demotion(m, why[seq]),
            }
        results.append(row)
    return {
        "query": req.query,
        "now": now,
        "results": results,
        "stats": {
            "examined": pruned.examined,
            "full_scan": pruned.full_scan,
            "candidates": None if allowed is None else len(allowed),
            "intent": query_intent,
            "time_cues": text_cues,
            "voices": {v: len(r) for v, r in voices.items()},
        },
    }


def _demotion(m: Memory, why: dict) -> str | None:
    reasons = []
    if why["status_factor"] < 1.0:
        reasons.append(f"status {m.status}")
    if why["salience"] < 0.35:
        reasons.append(f"faded (salience {why['salience']})")
    return "; ".join(reasons) or None


def _temporal(ix, qvec, buckets: list[str], allowed: set[int] | None, depth: int) -> list[int]:
    """Memories in the query's time window ranked by similarity; else the newest active ones."""
    if buckets:
        in_window = {m.seq for m in ix.records.posting("bucket", buckets)}
        if allowed is not None:
            in_window &= allowed
        if not in_window:
            return []
        return [s for s, _ in ix.vectors.search(qvec, depth, sorted(in_window))]
    if allowed is not None:
        recent = sorted(ix.records.by_seqs(sorted(allowed)).values(), key=time_order, reverse=True)
        return [m.seq for m in recent if m.status == "active"][:depth]
    return [m.seq for m in ix.records.recent(depth)]


def _vectors(ix, seqs: list[int]) -> dict[int, object]:
    import numpy as np

    if not seqs:
        return {}
    keys = np.asarray(seqs, dtype=np.uint64)
    present = ix.vectors.index.contains(keys)
    got = ix.vectors.index.get(keys[present]) if present.any() else []
    return {int(k): np.asarray(v, dtype=np.float32) for k, v in zip(keys[present], got, strict=True)}
