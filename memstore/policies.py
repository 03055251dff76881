"""Policies: normative rules distilled from outcome-bearing memories (memstore(7), POLICIES).

Outcome-bearing raw memories are grouped by their shared cause (``cause_key``:
the subject, else the kind and actors); at least ``policy_min_support`` negative
outcomes yield a *mitigate* policy, positive ones a *reinforce* policy:

    confidence = (count/(count+1) + salienceSum/(count*4), clamped to [0, 1])
                 * count / (count + against)

with salienceSum the sum of the evidence's composite salience and ``against`` the
outcomes on the same cause that point the other way. A policy's id comes from its
cause and direction, so more support later updates the same record (a new ``policy``
event) instead of adding a second one. Which of the two stands follows the balance of
evidence (``standing``; memstore.distill applies it): the side holding at least
``distill.policy_majority`` of the outcomes stands and the other is superseded (or
brought back); nearer the middle, both stand in an open conflict for a person.
Policies can also be written directly (``written_policy``): they have no evidence and
an author, and only a person retires them.
``active_policies`` lists the policies a state holds in force (the daily brief reads
it); judge and the recall preamble read theirs from the indexes
(``memstore.recall.preamble.active_policies``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .extractive import central_sentence
from .model import AXES, SOURCES, Memory, Salience, log_record, normalize_text
from .salience import composite
from .timeutil import format_minute, parse_ts, time_buckets

DIRECTION = {"negative": "mitigate", "positive": "reinforce"}
OPPOSITE = {"mitigate": "reinforce", "reinforce": "mitigate"}
VERB = {"mitigate": "Avoid", "reinforce": "Repeat"}
# What still counts as evidence: everything that was not replaced or withdrawn. Archived
# near-duplicates count, because a repeated report of an outcome is repeated support.
EVIDENCE_STATUSES = ("active", "expired", "archived")


def cause_key(m: Memory) -> tuple | None:
    """The shared cause a memory is grouped under: its subject, else its kind and actors.

    Without a subject and without actors a memory has no cause to share (None).
    """
    if m.subject:
        return ("subject", m.domain or "", m.subject)
    if m.actors:
        return ("cues", m.domain or "", m.kind, *sorted(m.actors))
    return None


def cause_label(m: Memory) -> str:
    return m.subject or f"{m.kind} with {', '.join(sorted(m.actors))}"


def policy_id(key: tuple, direction: str) -> str:
    raw = "\x1f".join(("policy", direction, *key))
    return "m" + hashlib.sha256(raw.encode()).hexdigest()[:15]


def policy_confidence(evidence: list[Memory], weights) -> float:
    """count/(count+1) + salienceSum/(count*4), clamped to [0, 1] (memstore(7), POLICIES)."""
    count = len(evidence)
    if count == 0:
        return 0.0
    total = sum(composite(m.salience, m.confidence, weights) for m in evidence)
    return round(min(1.0, max(0.0, count / (count + 1) + total / (count * 4))), 6)


def outcome_groups(state) -> dict[tuple, dict[str, list[Memory]]]:
    """cause -> direction -> its evidence in creation order, for every cause with outcomes."""
    groups: dict[tuple, dict[str, list[Memory]]] = {}
    for m in state.ordered():
        if (m.level == "raw" and m.outcome in DIRECTION and m.status in EVIDENCE_STATUSES
                and (key := cause_key(m)) is not None):
            groups.setdefault(key, {}).setdefault(DIRECTION[m.outcome], []).append(m)
    return groups


def standing(supporting: int, against: int, majority: float) -> str:
    """Where a policy stands on the balance of its cause's outcomes: "stands" (it holds at
    least ``majority`` of them), "falls" (the other side does) or "contested" (neither)."""
    total = supporting + against
    if total == 0:
        return "contested"
    if supporting / total >= majority and supporting > against:
        return "stands"
    if against / total >= majority and against > supporting:
        return "falls"
    return "contested"


def policy_record(key: tuple, direction: str, evidence: list[Memory], now: str, config,
                  against: list[Memory] = ()) -> dict:
    """The policy record (a dict ready for a ``policy`` event) for one evidence group;
    ``against``: the outcomes on the same cause pointing the other way."""
    first = evidence[0]
    n = len(evidence)
    outcome = "negative" if direction == "mitigate" else "positive"
    where = f"[{first.domain}] " if first.domain else ""
    pattern = central_sentence([m.text for m in evidence])
    counts = f"{n} {outcome} outcomes"
    if against:
        counts += f", {len(against)} {'positive' if direction == 'mitigate' else 'negative'}"
    text = f"{where}{VERB[direction]}: {cause_label(first)}: {pattern} ({counts})"
    salience = evidence[0].salience
    for m in evidence[1:]:
        salience = salience.merge_max(m.salience)
    actors = sorted({a for m in evidence for a in m.actors}) if first.subject else sorted(first.actors)
    record = Memory(
        id=policy_id(key, direction), text=text, recorded_at=now,
        occurred_at=now[:16] + "Z", precision="minute", kind=first.kind, subject=first.subject,
        domain=first.domain, actors=tuple(actors), outcome=outcome,
        time_buckets=tuple(sorted({b for m in evidence for b in m.time_buckets})),
        tier="long", level="policy", salience=Salience(**{a: getattr(salience, a) for a in AXES}),
        confidence=round(policy_confidence(evidence, config["salience"]["weights"]) * n / (n + len(against)), 6),
        source="tool", valid_from=now, derived_from=tuple(m.id for m in evidence), mention_count=n,
        last_reinforced_at=now, direction=direction, against=tuple(m.id for m in against),
    )
    d = log_record(record)
    return d


DIRECTION_WORDS = {"mitigate": "mitigate", "avoid": "mitigate", "reinforce": "reinforce", "repeat": "reinforce"}


def written_id(rule: str, direction: str, subject: str | None, domain: str | None) -> str:
    """A written policy's id: from its words, direction and scope (never a raw memory's id)."""
    raw = "\x1f".join(("policy", "written", direction, domain or "", subject or "", normalize_text(rule)))
    return "m" + hashlib.sha256(raw.encode()).hexdigest()[:15]


def written_policy(rule: str, *, direction: str, author: str, now: str, subject: str | None = None,
                   domain: str | None = None, source: str = "human") -> dict:
    """The record of a policy a person or an agent writes directly (``memstore policy add``):
    no evidence, an author, the source's confidence; judge, the preamble and stats use it
    like a learned one, and only a person retires it (memstore(7), POLICIES)."""
    occurred = format_minute(parse_ts(now))
    record = Memory(
        id=written_id(rule, direction, subject, domain), text=rule, recorded_at=now, occurred_at=occurred,
        precision="minute", kind="policy", subject=subject, domain=domain,
        time_buckets=tuple(time_buckets(occurred, "minute")), tier="long", level="policy",
        salience=Salience.uniform(0.8), confidence=SOURCES[source], source=source, valid_from=now,
        last_reinforced_at=now, direction=direction, author=author,
    )
    d = log_record(record)
    return d


@dataclass(frozen=True)
class PolicyView:
    """An active policy with its evidence, as judge and the preamble present it."""

    policy: Memory
    direction: str
    confidence: float
    evidence: tuple[Memory, ...]


def active_policies(state) -> list[PolicyView]:
    """Active policies, highest confidence first (then creation order), with their evidence."""
    views = [
        PolicyView(m, m.direction or "", m.confidence,
                   tuple(e for i in m.derived_from if (e := state.memories.get(i)) is not None))
        for m in state.ordered() if m.level == "policy" and m.status == "active"
    ]
    return sorted(views, key=lambda v: (-v.confidence, v.policy.seq, v.policy.id))


def rows(table, _marks):
    """The rows of a snapshot's table (memstore.store.snapshot) that are policies, as a
    boolean mask: what `memstore policy list` scans for (``store.open.load_state(keep=)``)."""
    import numpy as np
    import pyarrow.compute as pc

    found = pc.fill_null(pc.equal(table.column("level"), "policy"), False)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
