"""Daily consolidation as a pure function: ``consolidate(state, now=, config=) -> events``.

Three stages, repeated until none has anything left to say (so a second run at
the same ``now`` appends nothing):

1. expire: short-term records past ``expires_at``;
2. updates (memstore.beliefs): each record recorded within ``lookback_days`` that says in
   everyday words that an older belief changed (a new value, a negation, a stop, a
   cancellation, a replacement) supersedes it, or opens a conflict when the rules are unsure;
   any kind, with or without a subject;
3. near-duplicates (memstore(7), CONSOLIDATION): each record recorded within ``lookback_days`` is compared
   with the older active records of its subject and domain (records without a
   subject are only merged when their text is identical, which remember does;
   episodes of different days are different events, see ``comparable``);
   the most similar one (embedder cosine) decides the four-state write:
   reinforce (merge) / add (nothing) / update (supersede) / conflict;
4. promote: short-term records grouped by subject (else the first 60 characters of
   the text) become one long-term record when (mentions >= min_occurrences or
   max composite salience >= salience_floor) and mean confidence >= min_confidence;
   a member in open conflict with a newer member is not a repetition and does not count.

Policy-direction conflicts are checked too (distill creates the policies), and
abstractions whose every source was superseded or forgotten are retired with them.
"""

from __future__ import annotations

from .beliefs import later, relation
from .beliefs.candidates import Postings
from .conflicts import (
    between_agents,
    conflict_events,
    conflict_id,
    contradiction,
    policy_conflicts,
    settled,
    single_valued,
    value_swap,
)
from .fold import RETIRED, apply_stage
from .model import AXES, EPISODIC_KINDS, Memory, normalize_text
from .remember import reinforce_step
from .salience import composite
from .timeutil import ts_after

REINFORCE, ADD, UPDATE, CONFLICT = "reinforce", "add", "update", "conflict"
# Only beliefs can be contradicted or updated. Notes are observations: two notes on one
# subject that differ in a number ("build 1234 is flaky", "build 1240 is flaky") are two
# facts about the world, not a changed mind; they merge when near-identical, else both stay.
BELIEF_KINDS = ("fact", "preference", "definition", "plan", "decision", "procedure", "policy",
                "disambiguation")


def comparable(old: Memory, new: Memory) -> bool:
    """Whether the four-state decision applies to the pair at all: two episodes (or outcomes)
    are one event only when reported on the same day."""
    episodic = any(m.kind in EPISODIC_KINDS or m.outcome is not None for m in (old, new))
    return not episodic or old.occurred_at[:10] == new.occurred_at[:10]


def thresholds(config, embedder) -> tuple[float, float]:
    """(lower, upper) for this embedder: cosine scales differ by model."""
    c = config["consolidate"]
    if embedder.name.startswith("hashing"):
        return c["hashing_dup_lower"], c["hashing_dup_upper"]
    return c["dup_lower"], c["dup_upper"]


def decide(old: Memory, new: Memory, cosine: float, lower: float, upper: float, config) -> tuple[str, str]:
    """The four-state decision for a newer record against its nearest older one.

    Returns (verdict, rule): one of REINFORCE, ADD, UPDATE, CONFLICT and the rule that
    decided it. A contradiction (negation parity, numbers) is checked before the upper
    threshold, not only between the thresholds: "we deploy on Fridays" and "we never
    deploy on Fridays" are near-identical to any embedder, yet must not be merged.
    """
    if normalize_text(old.text) == normalize_text(new.text):
        return REINFORCE, "same text"
    if old.outcome is not None or new.outcome is not None:  # evidence for policies: never replaced
        return (REINFORCE, "near-duplicate") if cosine >= upper else (ADD, "outcomes are evidence")
    rule = contradiction(old.text, new.text)
    if old.kind not in BELIEF_KINDS or new.kind not in BELIEF_KINDS:
        if rule:  # a contradiction is never a repetition, however close the wording
            return ADD, f"observations that differ ({rule})"
        return (REINFORCE, "near-duplicate") if cosine >= upper else (ADD, "observations, not beliefs")
    if cosine >= lower and rule:
        return CONFLICT, rule
    if cosine >= upper and not (single_valued(old, new, config) and value_swap(old.text, new.text)):
        return REINFORCE, "near-duplicate"
    if single_valued(old, new, config):
        return CONFLICT, "value"  # a second preference on one subject replaces the first
    if cosine >= lower:
        return UPDATE, "same topic, newer wording"
    return ADD, "different"


_VECTORS: dict[tuple[str, str], object] = {}  # (embedder, text) -> vector; a cache, not state


def _vectors(embedder, texts: list[str]):
    missing = sorted({t for t in texts if (embedder.name, t) not in _VECTORS})
    if missing:
        if len(_VECTORS) > 100_000:
            _VECTORS.clear()
        for t, v in zip(missing, embedder.embed(missing, "passage"), strict=True):
            _VECTORS[(embedder.name, t)] = v
    return [_VECTORS[(embedder.name, t)] for t in texts]


def _order(m: Memory) -> tuple:
    """Newer means later in event time, then in record order (a backfilled note is old news).
    Event times of any precision are ISO prefixes, so their text sorts in time order."""
    return (m.occurred_at, m.seq, m.id)


def _expire(s, now: str, config) -> list[dict]:
    return [{"op": "expire", "at": now, "id": m.id} for m in s.ordered()
            if m.status == "active" and m.tier == "short" and m.expires_at and m.expires_at <= now]


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
        vecs = dict(zip((m.id for m in members), _vectors(embedder, [m.text for m in members]), strict=True))
        for j, new in enumerate(members):
            new = s.memories[new.id]
            if new.recorded_at < since or new.status != "active":
                continue
            older = [o for o in (s.memories[o.id] for o in members[:j])
                     if o.status == "active" and comparable(o, new)]
            if not older:
                continue
            sims = [float(vecs[o.id] @ vecs[new.id]) for o in older]
            best = max(range(len(older)), key=lambda i: (sims[i], -i))
            old, cosine = older[best], round(sims[best], 4)
            if settled(old, new):
                continue  # a person (or an open conflict) already holds this pair
            verdict, rule = decide(old, new, cosine, lower, upper, config)
            if verdict == REINFORCE:
                batch = [{"op": "merge", "at": now, "old": old.id, "new": new.id, "cosine": cosine,
                          "seen_at": max(t for t in (new.recorded_at, new.last_reinforced_at) if t),
                          "step": reinforce_step(new.source, config)}]
            elif verdict in (UPDATE, CONFLICT) and not later(old, new):
                continue  # a backfilled memory is old news: it updates nothing said since
            elif verdict == UPDATE and between_agents(old, new):  # two agents: theirs to harmonize
                batch = conflict_events(old, new, "update", now, config, f"cosine {cosine}")
            elif verdict == UPDATE:
                batch = [{"op": "supersede", "at": now, "old": old.id, "new": new.id,
                          "reason": f"update (cosine {cosine})"}]
            elif verdict == CONFLICT:
                batch = conflict_events(old, new, rule, now, config, f"cosine {cosine}")
            else:
                continue
            apply_stage(s, batch)
            events += batch
    return events


# Records an update may replace, and records that may update: outcomes are evidence that
# policies count, never beliefs to correct; abstractions follow their sources (``_retire``).
_UPDATABLE = ("active", "expired")
_MAX_CANDIDATES = 20  # older records examined per new one, most shared words first


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
            if verdict.certain:  # recorded as a conflict settled by the newer side (conflicts --all)
                batch = conflict_events(o, n, verdict.rule, now, config, verdict.detail)
            else:  # unsure: a person decides (conflicts resolve)
                batch = [{"op": "conflict", "at": now, "id": conflict_id(o.id, n.id), "old": o.id,
                          "new": n.id, "rule": verdict.rule,
                          "detail": f"unsure: {verdict.detail}"}]
            apply_stage(s, batch)
            events += batch
    return events


def _retire(s, now: str, config) -> list[dict]:
    """Abstractions whose every source was superseded or forgotten no longer hold either:
    recall prefers abstractions, so a stale one would keep asserting a replaced fact."""
    gone = ("superseded", "invalidated")
    events = []
    for m in s.ordered():
        if m.level != "raw" and m.status == "active" and m.derived_from:
            sources = [s.memories.get(i) for i in m.derived_from]
            if all(src is not None and src.status in gone for src in sources):
                events.append({"op": "forget", "at": now, "id": m.id, "retired": True,
                               "reason": f"{RETIRED}: " + ", ".join(m.derived_from)})
    return events


def _group_key(m: Memory) -> tuple:
    if m.subject:
        return (m.domain or "", "subject", m.subject)
    return (m.domain or "", "text", normalize_text(m.text)[:60])


def _promote(s, now: str, config) -> list[dict]:
    c, weights = config["consolidate"], config["salience"]["weights"]
    groups: dict[tuple, list[Memory]] = {}
    for m in s.ordered():
        if m.status == "active" and m.tier == "short" and m.level == "raw":
            groups.setdefault(_group_key(m), []).append(m)
    events = []
    for members in groups.values():
        ids = {m.id for m in members}
        members = [m for m in members  # the older side of an open conflict is not a repetition
                   if not any(o in ids and _order(s.memories[o]) > _order(m) for o in m.conflicts_with)]
        mentions = sum(m.mention_count for m in members)
        peak = max(composite(m.salience, m.confidence, weights) for m in members)
        belief = sum(m.confidence for m in members) / len(members)
        if (mentions < c["min_occurrences"] and peak < c["salience_floor"]) or belief < c["min_confidence"]:
            continue
        members.sort(key=_order)
        rep = members[-1]
        salience = {a: max(getattr(m.salience, a) for m in members) for a in AXES}
        events.append({"op": "promote", "at": now, "id": rep.id, "members": [m.id for m in members[:-1]],
                       "salience": salience, "confidence": round(belief, 4), "mention_count": mentions})
    return events


def consolidate(state, *, now: str, config, embedder=None) -> list[dict]:
    """The events one consolidation at ``now`` appends (without seq), in order.

    ``embedder`` defaults to the hashing embedder (no model) with its thresholds.
    """
    if embedder is None:
        from .embed import HashingEmbedder

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


def _policy_conflicts(s, now: str, config) -> list[dict]:
    return policy_conflicts(s, now, config)
