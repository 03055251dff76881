"""The nightly's rules: what one consolidation decides, as pure functions over records.

Everything a consolidation can append is decided here, and both implementations read it:
``memstore.lifecycle.reference`` (every record, every round, plainly) and the engine,
``memstore.consolidate`` (columns, memos, batches, workers), which must append the same
events. A reader checks memstore(7) against this module alone.

- a record is *new* once: recorded within ``lookback_days`` and created after the last
  run's ``mark`` (``fresh``);
- *expire*: an active short-term record past ``expires_at`` (``expiring``);
- *expire*: never a durable belief or a protected record (``lasting``): those leave the
  short-term tier by promotion instead, and stay;
- *update*: a new belief that says in everyday words that an older one changed
  (``memstore.beliefs.relation``) supersedes it, or opens a conflict a person settles
  (``update_events``), when both may speak of one thing (``may_update``: one domain, one
  key, one subject); the older ones examined are the update pool's (``pooled``) that
  share the most lookup keys with it (``ranked``);
- *near-duplicate*: a new record against its nearest older active one of the same domain
  and subject (``duplicate_group``, ``comparable``) is a repetition, an update, a
  conflict or nothing (``decide``, ``duplicate_events``). A repetition says nothing the
  kept record does not (``says_all``); a contradiction is never one; outcomes are
  evidence and never merged; an update must read as one (``beliefs.update_signal``) or
  swap one value of the same statement (``conflicts.one_slot``);
- *promote*: a short-term record becomes long-term alone, by repetition (its mentions: a
  repetition was merged into it), intensity or protection, or at its expiry when it is a
  durable belief (``promotion``). Records are never joined at promotion: two records of
  one subject are two statements unless the near-duplicate stage merged them;
- *retire*: an abstraction whose every source was superseded or forgotten (``retiring``).
"""

from __future__ import annotations

import re
from operator import attrgetter

from ..beliefs import later, one_thing, same_holder, update_signal
from ..conflicts import (
    between_agents,
    conflict_events,
    conflict_id,
    contradiction,
    numbers,
    one_slot,
    one_statement,
    single_valued,
)
from ..fold import RETIRED
from ..model import AXES, DURABLE_KINDS, EPISODIC_KINDS, Memory, normalize_text
from ..remember import reinforce_step
from ..salience import composite, is_protected

REINFORCE, ADD, UPDATE, CONFLICT = "reinforce", "add", "update", "conflict"
# Only beliefs can be contradicted or updated. Notes are observations: two notes on one
# subject that differ in a number ("build 1234 is flaky", "build 1240 is flaky") are two
# facts about the world, not a changed mind; they merge when near-identical, else both stay.
BELIEF_KINDS = ("fact", "preference", "definition", "plan", "decision", "procedure", "policy",
                "disambiguation")
# Records an update may replace, and records that may update: outcomes are evidence that
# policies count, never beliefs to correct; abstractions follow their sources (``retiring``).
UPDATABLE = ("active", "expired")
MAX_CANDIDATES = 20  # older records examined per new one, most shared keys first

# Newer means later in event time, then in record order (a backfilled note is old news).
# Event times of any precision are ISO prefixes, so their text sorts in time order.
order = attrgetter("occurred_at", "seq", "id")  # (m.occurred_at, m.seq, m.id)


def fresh(m: Memory, since: str, mark: int) -> bool:
    """Whether ``m`` is compared with older records in this run: recorded within
    ``lookback_days`` (``since``), and created after the last run's watermark ``mark`` (each
    record is compared once, when it is new; a store never marked compares the window)."""
    return m.recorded_at >= since and m.seq > mark


def due(m: Memory, now: str) -> bool:
    """An active short-term record whose time in the short-term tier is up."""
    at = m.expires_at
    return m.status == "active" and m.tier == "short" and at is not None and at != "" and at <= now


def lasting(m: Memory, config) -> bool:
    """A record expiry never drops: a durable belief (a fact, a preference, a procedure, ...:
    ``model.DURABLE_KINDS``), or one whose importance or risk reaches
    ``salience.protect_threshold`` (marked, or a rule's cue word such as "never")."""
    return m.kind in DURABLE_KINDS or is_protected(m.salience, config["salience"]["protect_threshold"])


def expiring(m: Memory, now: str, config) -> bool:
    """A short-term record whose time is up and that does not last (``lasting``): it expires."""
    return due(m, now) and not lasting(m, config)


def pooled(m: Memory) -> bool:
    """Whether ``m`` is in the update pool: a raw belief or note, active or expired. A meeting
    is an event: the next one does not update it; an outcome is evidence, never replaced."""
    return m.level == "raw" and m.outcome is None and m.status in UPDATABLE and m.kind not in EPISODIC_KINDS


def updating(m: Memory, since: str, mark: int) -> bool:
    """Whether ``m`` is checked as an update of older records this run."""
    return pooled(m) and m.status == "active" and fresh(m, since, mark)


def ranked(n: Memory, pool: list[Memory], keys: dict[str, frozenset], limit: int) -> list[Memory]:
    """The older records ``n`` is checked against, best first: those of ``pool`` (in log
    order) said before it (``beliefs.later``) that share a lookup key with it, most shared
    keys first, then the later in the log; ``limit`` of them at most. ``keys``: id -> keys."""
    mine = keys[n.id]
    scored = []
    for place, o in enumerate(pool):
        shared = len(mine & keys[o.id]) if o.id != n.id else 0
        if shared and later(o, n):
            scored.append((-shared, -place, o))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [o for _s, _p, o in scored[:limit]]


# Whether a newer record may replace an older one at all: one domain (a fact in one does not
# update another's), and when both name a key, or both a subject, the same one.
may_update = one_thing


def duplicate_group(m: Memory) -> tuple | None:
    """The near-duplicate group ``m`` is compared in: (domain, subject) for an active raw
    record with a subject; None for any other (records without a subject are only merged
    when their text is identical, which ``remember`` does)."""
    if m.status == "active" and m.level == "raw" and m.subject is not None:
        return (m.domain or "", m.subject)
    return None


def comparable(old: Memory, new: Memory) -> bool:
    """Whether the four-state decision applies to the pair at all: two episodes (or outcomes)
    are one event only when reported on the same day."""
    episodic = any(m.kind in EPISODIC_KINDS or m.outcome is not None for m in (old, new))
    return not episodic or old.occurred_at[:10] == new.occurred_at[:10]


def nearest(sims: list[float]) -> int:
    """Which of the older records (in ``order``) is the nearest: the highest cosine, the
    earliest of those equal."""
    return max(range(len(sims)), key=lambda i: (sims[i], -i))


def decide(old: Memory, new: Memory, cosine: float, lower: float, upper: float, config) -> tuple[str, str]:
    """The four-state decision for a newer record against its nearest older one.

    Returns (verdict, rule): one of REINFORCE, ADD, UPDATE, CONFLICT and the rule that
    decided it. A contradiction (negation parity, numbers) is checked before the upper
    threshold, not only between the thresholds: "we deploy on Fridays" and "we never
    deploy on Fridays" are near-identical to any embedder, yet must not be merged. Two
    different statements on one subject are both kept: an update must read as one
    (``beliefs.update_signal``) or swap one value of the same statement (``one_slot``), a
    repetition must add nothing (``says_all``), and outcomes are never merged (each is
    evidence a policy counts).
    """
    if normalize_text(old.text) == normalize_text(new.text):
        return REINFORCE, "same text"
    if old.outcome is not None or new.outcome is not None:
        return ADD, "outcomes are evidence"  # each one counted by the policies: never merged, never replaced
    rule = contradiction(old.text, new.text)
    if old.kind not in BELIEF_KINDS or new.kind not in BELIEF_KINDS:
        if rule:  # a contradiction is never a repetition, however close the wording
            return ADD, f"observations that differ ({rule})"
        if cosine >= upper and says_all(old.text, new.text):
            return REINFORCE, "near-duplicate"
        return ADD, "observations, not beliefs"
    if cosine >= lower and rule and (rule != "number" or one_statement(old.text, new.text)):
        return CONFLICT, rule
    if single_valued(old, new, config) and same_holder(old.text, new.text) and (
            one_slot(old.text, new.text) or update_signal(old.text, new.text)):
        # a second preference of one holder on one subject replaces the first when it swaps
        # the value or says it changed; said again in other words (another language), it does not
        return CONFLICT, "value"
    if cosine >= upper and says_all(old.text, new.text):
        return REINFORCE, "near-duplicate"
    if cosine >= lower and (update_signal(old.text, new.text) or one_slot(old.text, new.text)):
        return UPDATE, "same statement, newer value"
    return ADD, "different"


_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n")
_PUNCTUATION = ".,;:!?()[]{}\"'"  # (around a word, not part of it)


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence (not its first word), folded: names and products."""
    found = set()
    for sentence in _SENTENCE.split(text):
        for w in sentence.split()[1:]:
            w = w.strip(_PUNCTUATION)
            if w[:1].isupper():
                found.add(w.casefold())
    return found


def says_all(kept: str, merged: str) -> bool:
    """Whether ``kept`` says everything ``merged`` does, as far as the particulars go: its
    numbers and dates, and its names. A merge archives the newer record into the older one,
    so "Billing uses Stripe" does not absorb "Billing uses Stripe and PayPal since 2024"."""
    if not numbers(merged) <= numbers(kept):
        return False
    return _names(merged) <= {w.strip(_PUNCTUATION).casefold() for w in kept.split()}


def duplicate_events(old: Memory, new: Memory, cosine: float, lower: float, upper: float, now: str,
                     config) -> list[dict]:
    """What the four-state decision (``decide``) for a newer record and its nearest older
    one appends: a merge, a supersede, a conflict, or nothing."""
    verdict, rule = decide(old, new, cosine, lower, upper, config)
    if verdict == REINFORCE:
        return [{"op": "merge", "at": now, "old": old.id, "new": new.id, "cosine": cosine,
                 "seen_at": max(t for t in (new.recorded_at, new.last_reinforced_at) if t),
                 "step": reinforce_step(new.source, config)}]
    if verdict in (UPDATE, CONFLICT) and not later(old, new):
        return []  # a backfilled memory is old news: it updates nothing said since
    if verdict == UPDATE and between_agents(old, new):  # two agents: theirs to harmonize
        return conflict_events(old, new, "update", now, config, f"cosine {cosine}")
    if verdict == UPDATE:
        return [{"op": "supersede", "at": now, "old": old.id, "new": new.id, "reason": f"update (cosine {cosine})"}]
    if verdict == CONFLICT:
        return conflict_events(old, new, rule, now, config, f"cosine {cosine}")
    return []


def update_events(o: Memory, n: Memory, verdict, now: str, config) -> list[dict]:
    """What a ``relation`` verdict between an older and a newer record appends."""
    if verdict.certain:  # recorded as a conflict settled by the newer side (conflicts --all)
        return conflict_events(o, n, verdict.rule, now, config, verdict.detail)
    # unsure: a person decides (conflicts resolve)
    return [{"op": "conflict", "at": now, "id": conflict_id(o.id, n.id), "old": o.id, "new": n.id,
             "rule": verdict.rule, "detail": f"unsure: {verdict.detail}"}]


def short(m: Memory) -> bool:
    """A record promote may move to the long-term tier."""
    return m.status == "active" and m.tier == "short" and m.level == "raw"


def promotion(m: Memory, now: str, config) -> dict | None:
    """The ``promote`` event for one short-term record (``short``), or None.

    A record is promoted alone: when its confidence reaches ``min_confidence`` and it was
    mentioned ``min_occurrences`` times (a repetition is merged into it first: ``decide``)
    or its composite salience reaches ``salience_floor``; when it is protected (its
    importance or risk reaches ``protect_threshold``); or when its time in the short-term
    tier is up and it is a belief (``lasting``), which expiry never drops. No other record
    is joined to it: two records of one subject are two statements.
    """
    c, weights = config["consolidate"], config["salience"]["weights"]
    kept = is_protected(m.salience, config["salience"]["protect_threshold"]) or (due(m, now) and lasting(m, config))
    if not kept:
        if m.confidence < c["min_confidence"]:
            return None
        if m.mention_count < c["min_occurrences"] and composite(m.salience, m.confidence, weights) < c["salience_floor"]:
            return None
    return {"op": "promote", "at": now, "id": m.id, "members": [], "salience": {a: getattr(m.salience, a) for a in AXES},
            "confidence": round(m.confidence, 4), "mention_count": m.mention_count}


def retiring(m: Memory, sources: list[Memory | None]) -> bool:
    """An active abstraction whose every source was superseded or forgotten no longer holds:
    recall prefers abstractions, so a stale one would keep asserting a replaced fact."""
    return all(src is not None and src.status in ("superseded", "invalidated") for src in sources)


def retire_event(m: Memory, now: str) -> dict:
    return {"op": "forget", "at": now, "id": m.id, "retired": True, "reason": f"{RETIRED}: " + ", ".join(m.derived_from)}


def abstraction(m: Memory) -> bool:
    """An active abstraction with sources (what retire looks at)."""
    return m.level != "raw" and m.status == "active" and bool(m.derived_from)


def active_policy(m: Memory) -> bool:
    return m.level == "policy" and m.status == "active"


def watermark(state, now: str) -> dict | None:
    """The ``mark`` event a consolidation at ``now`` appends after its events: every record
    created up to the log's position has been compared. None when no record was created
    since the last mark (a second run appends nothing)."""
    mark = state.marks.get("consolidate", 0)
    if state.seq <= mark or not any(m.seq > mark for m in state.memories.values()):
        return None
    return {"op": "mark", "at": now, "stage": "consolidate", "through": state.seq}
