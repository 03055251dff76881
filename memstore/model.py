"""Frozen values: the memory record, its salience vector, and the vocabularies.

A memory is the unit every seed calls an episode. Its fields are documented in
memstore(5); the memory model (axes, decay, ladder) in memstore(7).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, fields

# The seven salience axes, each in [0, 1]. Order is the canonical order.
AXES = ("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability")

KINDS = (
    "note", "meeting", "decision", "incident", "deal", "preference", "definition",
    "fact", "plan", "procedure", "disambiguation", "policy",
)
OUTCOMES = ("positive", "negative", "pending")
TIERS = ("short", "long")
STATUSES = ("active", "expired", "archived", "superseded", "invalidated")
LEVELS = ("raw", "summary", "pattern", "principle", "policy")
# Where a memory came from sets its initial confidence (veracity) [002].
SOURCES = {"human": 1.0, "agent": 0.7, "tool": 0.5, "imported": 0.6}


@dataclass(frozen=True, slots=True)
class Salience:
    importance: float = 0.5
    urgency: float = 0.5
    risk: float = 0.5
    novelty: float = 0.5
    emotion: float = 0.5
    recurrence: float = 0.5
    actionability: float = 0.5

    def as_dict(self) -> dict[str, float]:
        return {a: getattr(self, a) for a in AXES}

    @classmethod
    def uniform(cls, value: float, **overrides: float) -> Salience:
        base = dict.fromkeys(AXES, value)
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)

    def merge_max(self, other: Salience) -> Salience:
        return Salience(**{a: max(getattr(self, a), getattr(other, a)) for a in AXES})


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    text: str
    recorded_at: str
    occurred_at: str
    precision: str
    kind: str = "note"
    key: str | None = None
    subject: str | None = None
    domain: str | None = None
    actors: tuple[str, ...] = ()
    outcome: str | None = None
    time_buckets: tuple[str, ...] = ()
    tier: str = "short"
    status: str = "active"
    level: str = "raw"
    salience: Salience = field(default_factory=Salience)
    confidence: float = 1.0
    source: str = "human"
    valid_from: str | None = None
    invalid_at: str | None = None
    superseded_by: str | None = None
    derived_from: tuple[str, ...] = ()
    recall_count: int = 0
    last_recalled_at: str | None = None
    mention_count: int = 1
    last_reinforced_at: str | None = None
    expires_at: str | None = None
    seq: int = 0  # log position of the event that created it (stable sort key)
    # Lifecycle links, set by the fold of consolidate/distill/conflict events (memstore(7)).
    merged_into: str | None = None  # archived duplicate or promoted group member -> the record kept
    abstracted_by: str | None = None  # the derived record recall should prefer to this one
    conflicts_with: tuple[str, ...] = ()  # open conflicts: the other records' ids
    reconciled_with: tuple[str, ...] = ()  # conflicts a person settled as keep both / dismiss
    reason: str | None = None  # why it was invalidated or superseded
    direction: str | None = None  # policies only: mitigate | reinforce


MEMORY_FIELDS = tuple(f.name for f in fields(Memory))
_FIELD_SET = frozenset(MEMORY_FIELDS)
_TUPLE_FIELDS = ("actors", "time_buckets", "derived_from", "conflicts_with", "reconciled_with")


def memory_to_dict(m: Memory) -> dict:
    d = {name: getattr(m, name) for name in MEMORY_FIELDS}
    d["salience"] = m.salience.as_dict()
    for name in _TUPLE_FIELDS:
        d[name] = list(d[name])
    return d


def memory_from_dict(d: dict) -> Memory:
    d = dict(d)
    d["salience"] = Salience(**d.get("salience") or {})
    for name in _TUPLE_FIELDS:
        d[name] = tuple(d.get(name) or ())
    return Memory(**{k: v for k, v in d.items() if k in _FIELD_SET})


_SPACES = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The form two texts must share to count as the same memory."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def memory_id(text: str, subject: str | None, domain: str | None) -> str:
    """Content-derived id: same text, subject and domain give the same id everywhere."""
    h = hashlib.sha256()
    h.update("\x1f".join((domain or "", subject or "", normalize_text(text))).encode())
    return "m" + h.hexdigest()[:15]
