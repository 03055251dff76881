"""The consolidation's search as it was before a run reused work (commit 1859e83's parent):
every stage recomputed from scratch each round, a group compared member by member,
candidates ranked again each round. A test oracle only: tests/test_consolidate_incremental.py
holds memstore.consolidate to it event for event. The stages that did not change, and what
a decision appends, are imported."""

from __future__ import annotations

from memstore.beliefs import relation
from memstore.beliefs.candidates import Postings
from memstore.conflicts import settled
from memstore.consolidate import (
    _MAX_CANDIDATES,
    _UPDATABLE,
    _expire,
    _order,
    _policy_conflicts,
    _promote,
    _retire,
    comparable,
    duplicate_events,
    thresholds,
    update_events,
)
from memstore.cosine import dot
from memstore.fold import apply_stage
from memstore.model import EPISODIC_KINDS, Memory
from memstore.timeutil import ts_after


def _near_duplicates(s, now: str, config, embedder) -> list[dict]:
    lower, upper = thresholds(config, embedder)
    since = ts_after(now, -config["consolidate"]["lookback_days"])
    groups: dict[tuple, list[Memory]] = {}
    for m in s.ordered():
        if m.status == "active" and m.level == "raw" and m.subject is not None:
            groups.setdefault((m.domain or "", m.subject), []).append(m)
    events: list[dict] = []
    for members in groups.values():
        if len(members) < 2 or all(m.recorded_at < since for m in members):
            continue
        members.sort(key=_order)
        vecs = dict(zip((m.id for m in members), embedder.embed([m.text for m in members], "passage"), strict=True))
        for j, new in enumerate(members):
            new = s.memories[new.id]
            if new.recorded_at < since or new.status != "active":
                continue
            older = [o for o in (s.memories[o.id] for o in members[:j])
                     if o.status == "active" and comparable(o, new)]
            if not older:
                continue
            sims = [dot(vecs[o.id], vecs[new.id]) for o in older]
            best = max(range(len(older)), key=lambda i: (sims[i], -i))
            old, cosine = older[best], round(sims[best], 4)
            if settled(old, new):
                continue  # a person (or an open conflict) already holds this pair
            batch = duplicate_events(old, new, cosine, lower, upper, now, config)
            if not batch:
                continue
            apply_stage(s, batch)
            events += batch
    return events


def _updates(s, now: str, config) -> list[dict]:
    """Newer records that update older beliefs in everyday words (memstore.beliefs)."""
    since = ts_after(now, -config["consolidate"]["lookback_days"])
    pool = [m for m in s.ordered() if m.level == "raw" and m.outcome is None and m.status in _UPDATABLE
            and m.kind not in EPISODIC_KINDS]  # a meeting is an event: the next one does not update it
    new = sorted((m for m in pool if m.status == "active" and m.recorded_at >= since),
                 key=lambda m: (m.recorded_at, m.seq, m.id))
    if not new:
        return []
    postings = Postings(pool)
    events: list[dict] = []
    for n in new:
        n = s.memories[n.id]
        if n.status != "active":
            continue
        for oid in (o.id for o in postings.ranked(n, _MAX_CANDIDATES)):
            o = s.memories[oid]
            if o.status not in _UPDATABLE or settled(o, n) or o.domain != n.domain:
                continue  # a domain is a scope: a fact in one does not update another's
            verdict = relation(o.text, n.text)
            if verdict is None:
                continue
            batch = update_events(o, n, verdict, now, config)
            apply_stage(s, batch)
            events += batch
    return events


def consolidate(state, *, now: str, config, embedder=None) -> list[dict]:
    """The events one consolidation at ``now`` appends (without seq), in order.

    ``embedder`` defaults to the hashing embedder (no model) with its thresholds.
    """
    if embedder is None:
        from memstore.embed import HashingEmbedder

        embedder = HashingEmbedder(config["embedder"]["hashing_dim"])
    work = state.copy()
    events: list[dict] = []
    while True:
        batch: list[dict] = []
        for stage in (_expire, _updates, _near_duplicates, _promote, _policy_conflicts, _retire):
            found = stage(work, now, config, embedder) if stage is _near_duplicates else stage(work, now, config)
            if stage is not _near_duplicates:
                apply_stage(work, found)
            batch += found
        if not batch:
            return events
        events += batch
