"""The nightly as a reader would write it: every record, every round, nothing reused.

``consolidate(state, now=, config=, embedder=)`` appends what ``memstore.consolidate`` (the
engine) appends, event for event; it shares no code with the engine but the rules
(``memstore.lifecycle.rules``) and what they stand on (beliefs, conflicts, the fold). It is
slow on purpose: the tests hold the engine to it over random histories with the engine's
size thresholds lowered, and ``memstore consolidate --engine reference`` runs a store's
night with it.

Stages run in order and repeat until none has anything left to say: expire, updates,
near-duplicates, promote, policy conflicts, retire. Each stage reads the state as the
stages before it left it; the near-duplicate stage applies each group's events before the
next group, the others apply theirs when they end.
"""

from __future__ import annotations

from ..beliefs import relation
from ..beliefs.frame import keys
from ..config import thresholds
from ..conflicts import policy_conflicts, settled
from ..cosine import dot
from ..fold import apply_stage
from ..timeutil import ts_after
from . import rules


def consolidate(state, *, now: str, config, embedder=None) -> list[dict]:
    """The events one consolidation at ``now`` appends (without seq, without its mark), in
    order. ``embedder`` defaults to the hashing embedder (no model)."""
    if embedder is None:
        from ..embed import HashingEmbedder

        embedder = HashingEmbedder(config["embedder"]["hashing_dim"])
    s = state.copy()
    events: list[dict] = []
    while True:
        batch: list[dict] = []
        for stage in (_expire, _updates, _near_duplicates, _promote, _policy_conflicts, _retire):
            found = stage(s, now, config, embedder)
            if stage is not _near_duplicates:  # (that stage applies its groups' events as it goes)
                apply_stage(s, found)
            batch += found
        if not batch:
            return events
        events += batch


def _window(s, now: str, config) -> tuple[str, int]:
    return ts_after(now, -config["consolidate"]["lookback_days"]), s.marks.get("consolidate", 0)


def _expire(s, now: str, config, _embedder) -> list[dict]:
    return [{"op": "expire", "at": now, "id": m.id} for m in s.ordered() if rules.expiring(m, now, config)]


def _updates(s, now: str, config, _embedder) -> list[dict]:
    since, mark = _window(s, now, config)
    pool = [m for m in s.ordered() if rules.pooled(m)]
    new = sorted((m for m in pool if rules.updating(m, since, mark)), key=lambda m: (m.recorded_at, m.seq, m.id))
    lookup = {m.id: keys(m.text) for m in pool}
    events: list[dict] = []
    for n in new:
        n = s.memories[n.id]
        if n.status != "active":
            continue
        for o in rules.ranked(n, pool, lookup, rules.MAX_CANDIDATES):
            o = s.memories[o.id]
            if o.status not in rules.UPDATABLE or settled(o, n) or not rules.may_update(o, n):
                continue
            verdict = relation(o.text, n.text)
            if verdict is None:
                continue
            batch = rules.update_events(o, n, verdict, now, config)
            apply_stage(s, batch)
            events += batch
    return events


def _near_duplicates(s, now: str, config, embedder) -> list[dict]:
    lower, upper = thresholds(config, embedder)
    since, mark = _window(s, now, config)
    groups: dict[tuple, list] = {}
    for m in s.ordered():
        key = rules.duplicate_group(m)
        if key is not None:
            groups.setdefault(key, []).append(m)
    events: list[dict] = []
    for members in groups.values():
        if len(members) < 2 or not any(rules.fresh(m, since, mark) for m in members):
            continue
        members.sort(key=rules.order)
        vecs = dict(zip((m.id for m in members), embedder.embed([m.text for m in members], "passage"), strict=True))
        for j, new in enumerate(members):
            new = s.memories[new.id]
            if not rules.fresh(new, since, mark) or new.status != "active":
                continue
            older = [o for o in (s.memories[o.id] for o in members[:j]) if o.status == "active" and rules.comparable(o, new)]
            if not older:
                continue
            sims = [dot(vecs[o.id], vecs[new.id]) for o in older]
            best = rules.nearest(sims)
            old, cosine = older[best], round(sims[best], 4)
            if settled(old, new):
                continue  # a person (or an open conflict) already holds this pair
            batch = rules.duplicate_events(old, new, cosine, lower, upper, now, config)
            apply_stage(s, batch)
            events += batch
    return events


def _promote(s, now: str, config, _embedder) -> list[dict]:
    found = (rules.promotion(m, now, config) for m in s.ordered() if rules.short(m))
    return [e for e in found if e is not None]


def _policy_conflicts(s, now: str, config, _embedder) -> list[dict]:
    return policy_conflicts(s, now, config, [m for m in s.ordered() if rules.active_policy(m)])


def _retire(s, now: str, config, _embedder) -> list[dict]:
    return [rules.retire_event(m, now) for m in s.ordered()
            if rules.abstraction(m) and rules.retiring(m, [s.memories.get(i) for i in m.derived_from])]
