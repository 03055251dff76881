"""Frozen values: the memory record, its salience vector, and the vocabularies.

A memory is the unit every seed calls an episode. Its fields are documented in
memstore(5); the memory model (axes, decay, ladder) in memstore(7).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import MISSING, dataclass, field, fields
from functools import lru_cache
from operator import attrgetter

try:  # CPython's own SHA-256, the same digest: hashlib would load OpenSSL in every
    from _sha2 import sha256  # remember's start (3.12 and later)
except ImportError:
    try:
        from _sha256 import sha256  # 3.11
    except ImportError:  # another Python
        from hashlib import sha256

# The seven salience axes, each in [0, 1]. Order is the canonical order.
AXES = ("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability")

KINDS = (
    "note", "meeting", "decision", "incident", "deal", "preference", "definition",
    "fact", "plan", "procedure", "disambiguation", "policy",
)
OUTCOMES = ("positive", "negative", "pending")
# Episodes are events, not beliefs: a second incident like the first is more evidence, never
# an update of it (consolidate, recall and the update rules all read it so).
EPISODIC_KINDS = ("meeting", "incident", "deal")
# Kinds that state something meant to hold until it changes: expiry of the short-term tier
# never drops them (a disambiguation holds for one thread; a note is an observation).
DURABLE_KINDS = ("fact", "preference", "definition", "plan", "decision", "procedure", "policy")
TIERS = ("short", "long")
STATUSES = ("active", "expired", "archived", "superseded", "invalidated")
LEVELS = ("raw", "summary", "pattern", "principle", "policy")
# Where a memory came from sets its initial confidence (veracity; memstore(7), SALIENCE).
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


def _doc(default=MISSING, *, doc: str, default_factory=MISSING):
    """A Memory field with its memstore(5) RECORD FIELDS text in metadata["doc"].

    Class-level only: the generated __init__ is the same as with a plain default.
    """
    return field(default=default, default_factory=default_factory, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class Memory:
    """One record: the fold of the events that touched it. Each field's metadata["doc"]
    is its documentation (man/gen.py renders it into memstore(5), RECORD FIELDS)."""

    id: str = _doc(doc=(
        "Content-derived identifier: \"m\" and the first 15 hex digits of the SHA-256 of the "
        "domain, the subject and the normalised text (NFKC, runs of white space as one space, "
        "case-folded), joined by U+001F. The same text on the same subject and domain has the "
        "same id in every store."))
    text: str = _doc(doc="The memory itself (at most memory.max_text_chars characters).")
    recorded_at: str = _doc(doc="Record time: the --now of the command that wrote it.")
    occurred_at: str = _doc(doc=(
        "Event time, as precise as it is known: YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDTHH:MMZ; "
        "a week as its Monday, YYYY-MM-DD (from --occurred-at, else the time the text states, "
        "e.g. \"in 2020\", \"last week\" or \"last Tuesday\", else --now)."))
    precision: str = _doc(doc="The precision of occurred_at: year, month, week, day or minute.")
    kind: str = _doc("note", doc=(
        "What sort of memory: note, meeting, decision, incident, deal, preference, definition, "
        "fact, plan, procedure, disambiguation or policy."))
    key: str | None = _doc(None, doc=(
        "The caller's idempotency key or external id (--key), or null; a second write with the "
        "same key is a no-op. Keys map to ids in the state (and in snapshot metadata)."))
    subject: str | None = _doc(None, doc=(
        "Topic label, or null; consolidation groups and compares memories by subject."))
    domain: str | None = _doc(None, doc="Scope (e.g. eng, personal), or null; part of the id.")
    actors: tuple[str, ...] = _doc((), doc="People or agents involved (a list, possibly empty).")
    outcome: str | None = _doc(None, doc=(
        "positive, negative, pending or null; distill learns policies from outcomes."))
    time_buckets: tuple[str, ...] = _doc((), doc=(
        "Search keys expanded from occurred_at at write time: year, month, day and ISO week, as "
        "far as the precision allows (e.g. 2026, 2026-06, 2026-06-07, 2026-W23; a week: itself and "
        "each year and month it touches); an abstraction carries its sources' buckets."))
    tier: str = _doc("short", doc=(
        "short (expires after memory.short_ttl_days unless consolidated) or long."))
    status: str = _doc("active", doc=(
        "active, expired (short-term TTL passed), archived (merged into another record), "
        "superseded (replaced; see superseded_by) or invalidated (forgotten, or an abstraction "
        "whose sources no longer hold). Nothing is ever deleted."))
    level: str = _doc("raw", doc=(
        "Rung of the abstraction ladder: raw, summary, pattern, principle or policy."))
    salience: Salience = _doc(default_factory=Salience, doc=(
        "The seven axes, each in [0,1]: importance, urgency, risk, novelty, emotion, recurrence, "
        "actionability (see memstore(7)). Stored undecayed; decay is computed at --now."))
    confidence: float = _doc(1.0, doc=(
        "Belief in the memory, in [0,1]. Set by source (human 1.0, agent 0.7, tool 0.5, imported "
        "0.6) unless given. Each re-mention removes confidence.reinforce_step x the source's "
        "veracity of the remaining doubt (an agent's 0.7 becomes 0.763, then 0.813); a person's "
        "conflicts resolve sets the kept belief to 1.0. It never falls on reinforcement."))
    source: str = _doc("human", doc=(
        "Where it came from: human, agent, tool or imported. The abstractions and policies "
        "distill makes are tool."))
    valid_from: str | None = _doc(None, doc=(
        "Bitemporal start: the record time from which it holds."))
    invalid_at: str | None = _doc(None, doc=(
        "Bitemporal end: when it stopped holding (superseded or forgotten), else null."))
    invalid_periods: tuple[str, ...] = _doc((), doc=(
        "The earlier spells in which it did not hold and which ended when it was reinstated "
        "(a conflict resolved its way, a policy's evidence come back to it), each an ISO 8601 "
        "interval of two record times, from/until (e.g. 2026-05-01T03:00:00Z/2026-05-02T10:00:00Z), "
        "oldest first; usually empty. With recorded_at and invalid_at they are its whole validity: "
        "recall --as-of T finds it only when T falls in none of them."))
    superseded_by: str | None = _doc(None, doc="The id of the record that replaced it, else null.")
    derived_from: tuple[str, ...] = _doc((), doc=(
        "Provenance: the ids an abstraction or a policy was made from."))
    recall_count: int = _doc(0, doc=(
        "How many recalls returned it (not counting --no-touch); boosts salience by "
        "1 + ln(1 + recall_count)."))
    last_recalled_at: str | None = _doc(None, doc=(
        "Record time of the last recall that returned it, else null."))
    mention_count: int = _doc(1, doc=(
        "How many times it was said: 1, plus reinforcements and merged duplicates."))
    last_reinforced_at: str | None = _doc(None, doc=(
        "When it was last said again; decay runs from the latest of recorded_at, "
        "last_reinforced_at and last_recalled_at."))
    expires_at: str | None = _doc(None, doc=(
        "When a short-term memory expires (recorded_at + memory.short_ttl_days); null for "
        "long-term ones."))
    seq: int = _doc(0, doc=(
        "Log position of the event that created it: the canonical sort key of every listing."))
    # Lifecycle links, set by the fold of consolidate/distill/conflict events (memstore(7)).
    merged_into: str | None = _doc(None, doc=(
        "For an archived duplicate or a promoted group member: the id of the record kept."))
    abstracted_by: str | None = _doc(None, doc=(
        "The id of the abstraction recall should prefer to this record."))
    conflicts_with: tuple[str, ...] = _doc((), doc=(
        "Ids of the records it is in open conflict with."))
    reconciled_with: tuple[str, ...] = _doc((), doc=(
        "Ids of records a person ruled compatible (conflicts resolved as both or dismiss): never "
        "flagged again."))
    reason: str | None = _doc(None, doc=(
        "Why it was invalidated or superseded (the --reason of forget, or the conflict), as "
        "text for people: nothing decides by it."))
    retired: bool = _doc(False, doc=(
        "true for an abstraction consolidation invalidated because every record it was derived "
        "from was superseded or forgotten (a forget event with \"retired\": true); it comes back "
        "when a person reinstates one of those records. false for everything else, including "
        "anything forgotten with memstore forget, whatever its reason says."))
    direction: str | None = _doc(None, doc=(
        "Policies only: mitigate (learned from negative outcomes, or written to avoid something) "
        "or reinforce (positive outcomes, or written to repeat something)."))
    against: tuple[str, ...] = _doc((), doc=(
        "Learned policies only: the ids of the outcome memories on the same cause that point the "
        "other way (derived_from holds those that support it); judge shows both sides."))
    author: str | None = _doc(None, doc=(
        "Policies written directly (memstore policy add): who wrote it (--author); else null."))
    session: str | None = _doc(None, doc=(
        "The conversation (session or thread) it was said in (--session), else null; with turn, "
        "recall reads a turn with its neighbours."))
    turn: int | None = _doc(None, doc=(
        "Its position in that session (--turn: 0, 1, 2, ...), else null."))
    agent: str | None = _doc(None, doc=(
        "The agent whose write created it (--agent, MEMSTORE_AGENT, or the server's agent); null "
        "for a write without one (a person, cron). Harmonize names both agents of a conflict by it."))


MEMORY_FIELDS = tuple(f.name for f in fields(Memory))
_FIELD_SET = frozenset(MEMORY_FIELDS)
_TUPLE_FIELDS = ("actors", "time_buckets", "invalid_periods", "derived_from", "conflicts_with", "reconciled_with",
                 "against")


def memory_to_dict(m: Memory) -> dict:
    d = {name: getattr(m, name) for name in MEMORY_FIELDS}
    d["salience"] = m.salience.as_dict()
    for name in _TUPLE_FIELDS:
        d[name] = list(d[name])
    return d


def log_record(m: Memory) -> dict:
    """A record as a creating event carries it: no seq (the log assigns it), and no agent
    unless an agent wrote it (the transaction stamps that; logs without agents stay as they were)."""
    d = memory_to_dict(m)
    del d["seq"]
    for name in ("agent", "session", "turn"):  # logs that do not use them stay as they were
        if d[name] is None:
            del d[name]
    if not d["invalid_periods"]:  # (only a state export's record has held and lapsed)
        del d["invalid_periods"]
    return d


def memory_from_dict(d: dict) -> Memory:
    """The record a dict (a log event's, an export row's) holds: its fields, the defaults for
    those it leaves out, keys that are no field ignored; KeyError when it lacks a field with
    no default. Built like ``memories_from_columns``: a fold builds a million of these."""
    if not _FROM_DICT:
        lines = ["def build(d):", "    o = new(Memory)"]
        scope = {"new": object.__new__, "Memory": Memory, "Salience": Salience}
        for i, f in enumerate(fields(Memory)):
            scope[f"s{i}"] = getattr(Memory, f.name).__set__
            if f.name == "salience":
                value = "Salience(**(d.get('salience') or {}))"
            elif f.name in _TUPLE_FIELDS:
                value = f"tuple(d.get({f.name!r}) or ())"
            elif f.default is MISSING:
                value = f"d[{f.name!r}]"
            else:
                scope[f"default{i}"] = f.default
                value = f"d.get({f.name!r}, default{i})"
            lines.append(f"    s{i}(o, {value})")
        lines.append("    return o")
        exec("\n".join(lines) + "\n", scope)  # noqa: S102 (generated from field names only)
        _FROM_DICT.append(scope["build"])
    return _FROM_DICT[0](d)


_FROM_DICT: list = []  # the generated builder (made on first use)


_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1 << 17)  # consolidate asks it of a text once per record it is compared with
def normalize_text(text: str) -> str:
    """The form two texts must share to count as the same memory."""
    if text.isascii():  # the same, faster: NFKC leaves ASCII as it is, casefold is lower
        return " ".join(text.split()).lower()  # there, and split() splits where \s matches
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def memory_id(text: str, subject: str | None, domain: str | None) -> str:
    """Content-derived id: same text, subject and domain give the same id everywhere."""
    h = sha256()
    h.update("\x1f".join((domain or "", subject or "", normalize_text(text))).encode())
    return "m" + h.hexdigest()[:15]


_BUILDER: list = []  # the generated builder (made on first use)


def evolve(m: Memory, /, **changes) -> Memory:
    """``dataclasses.replace(m, **changes)`` for a record, built as ``memories_from_columns``
    builds one (each slot set through its descriptor; the frozen ``__init__`` set each
    field through ``object.__setattr__``): the fold replaces a record for every event that
    changes one, a million times in a big log. The same record; an unknown field is a
    TypeError, as with ``replace``."""
    if not _EVOLVER:
        n = len(MEMORY_FIELDS)
        body = ["def evolve(m, changes):", "    o = new(Memory)",
                "    " + ", ".join(f"v{i}" for i in range(n)) + ", = values(m)"]
        body += [f"    s{i}(o, v{i})" for i in range(n)]
        body += ["    for name, value in changes.items():", "        by_name[name](o, value)", "    return o"]
        scope = {f"s{i}": getattr(Memory, f).__set__ for i, f in enumerate(MEMORY_FIELDS)}
        scope.update(new=object.__new__, Memory=Memory, values=attrgetter(*MEMORY_FIELDS),
                     by_name={f: getattr(Memory, f).__set__ for f in MEMORY_FIELDS})
        exec("\n".join(body) + "\n", scope)  # noqa: S102 (generated from field names only)
        _EVOLVER.append(scope["evolve"])
    if not changes.keys() <= _FIELD_SET:
        raise TypeError(f"Memory has no field {sorted(changes.keys() - _FIELD_SET)[0]!r}")
    return _EVOLVER[0](m, changes)


_EVOLVER: list = []  # the generated evolve (made on first use)
_FIELD_SET = frozenset(MEMORY_FIELDS)


def memories_from_columns(columns: list[list]) -> list[Memory]:
    """Records from one list per field (in MEMORY_FIELDS order, values as the fields hold
    them): the same records ``Memory(*values)`` gives, built ~2x faster, by setting each
    slot through its descriptor instead of the frozen ``__init__``'s ``object.__setattr__``
    per field (a million records from a snapshot: seconds). The builder is generated once,
    like dataclasses' own ``__init__``, so the per-record work is one unrolled loop body."""
    if not _BUILDER:
        n = len(MEMORY_FIELDS)
        body = [f"    s{i} = setters[{i}]" for i in range(n)]
        body.append("    for " + ", ".join(f"v{i}" for i in range(n)) + " in zip(*columns, strict=True):")
        body.append("        o = new(Memory)")
        body += [f"        s{i}(o, v{i})" for i in range(n)]
        body.append("        out(o)")
        source = "def build(columns, records):\n    new = object.__new__\n    out = records.append\n"
        scope = {"setters": [getattr(Memory, f).__set__ for f in MEMORY_FIELDS], "Memory": Memory}
        exec(source + "\n".join(body) + "\n", scope)  # noqa: S102 (generated from field names only)
        _BUILDER.append(scope["build"])
    if len(columns) != len(MEMORY_FIELDS):
        raise ValueError(f"{len(columns)} columns for {len(MEMORY_FIELDS)} fields")
    records: list[Memory] = []
    _BUILDER[0](columns, records)
    return records
