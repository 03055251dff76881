"""The write path as pure functions: validate input, build records, plan events.

``decide_writes(drafts, known, now, config)`` decides per draft: a repeated caller key is a
no-op (same id back), the same text/subject/domain is a ``reinforce``, a greeting
is skipped, anything else is an ``add``. Near-duplicates and contradictions are
decided later by ``consolidate`` (memstore(7)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from unicodedata import category

from .classify import NOTE, PRIORS, classify, cue, prior
from .errors import UsageError
from .model import AXES, KINDS, OUTCOMES, SOURCES, Memory, Salience, log_record, memory_id
from .timehint import may_hold_time
from .timeutil import (
    format_minute,
    parse_occurred,
    parse_ts,
    time_buckets,
    ts_after,
)

FIELDS = {"text", "kind", "subject", "domain", "actors", "actor", "outcome", "occurred_at",
          "confidence", "source", "key", "tier", "keep", "session", "turn", *AXES}

# An explicit kind sets the tier and prior salience the classifier would have given it (cue
# words in the text raise the prior as they do for a classified memory).
_LONG = frozenset(("decision", "preference", "definition", "fact", "procedure", "plan", "policy"))
KIND_DEFAULTS = {k: ("long" if k in _LONG else "short", PRIORS[k]) for k in KINDS}


@dataclass(frozen=True, slots=True)
class Draft:
    """One validated request to remember something."""

    text: str
    kind: str | None = None
    subject: str | None = None
    domain: str | None = None
    actors: tuple[str, ...] = ()
    outcome: str | None = None
    occurred_at: tuple[str, str] | None = None  # (canonical, precision)
    axes: tuple[tuple[str, float], ...] = ()
    confidence: float | None = None
    source: str | None = None
    key: str | None = None
    tier: str | None = None
    keep: bool = False
    session: str | None = None  # the conversation it was said in, and its turn there
    turn: int | None = None


@dataclass(frozen=True, slots=True)
class WriteDecision:
    action: str  # add | reinforce | noop | skip
    id: str | None
    memory: Memory | None
    event: dict | None
    reason: str = ""


def _turn(value, name: str, where: str) -> int | None:
    """A turn's position in its session: a whole number from 0 (a CLI option arrives as text)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**9:
        raise UsageError(f"{where}{name} {value!r} must be a whole number from 0 (the turn's position "
                         "in its session)")
    return value


def _label(value, name: str, where: str, limit: int = 200) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{where}{name} must be text, not {value!r}")
    value = value.strip()
    if not value:
        return None
    if not _utf8(value):
        raise UsageError(f"{where}{name} is not valid UTF-8; convert it, e.g. with iconv")
    if len(value) > limit or any(ord(c) < 32 for c in value):
        raise UsageError(f"{where}{name} {value[:40]!r} must be one line of at most {limit} characters")
    if not value.isprintable() and (bad := next((c for c in value if _hidden(c)), None)):
        raise UsageError(f"{where}{name} {value[:40]!r} contains U+{ord(bad):04X} "
                         f"({_CATEGORY_NAMES[category(bad)]}); labels are one line of visible text: remove it")
    return value


# Labels reach prompts and terminals inside the formats' brackets: none may hold a character
# that ends a line (U+0085, U+2028), steers a terminal (C0/C1) or reorders text (bidi).
_CATEGORY_NAMES = {"Cc": "a control character", "Cf": "a format character",
                   "Zl": "a line separator", "Zp": "a paragraph separator"}


def _hidden(c: str) -> bool:
    return category(c) in _CATEGORY_NAMES


def _utf8(value: str) -> bool:
    """False for text holding lone surrogates (undecodable bytes from argv or a file)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unit(value, name: str, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value) if isinstance(value, str) else None
        except ValueError:
            value = None
        if value is None:
            raise UsageError(f"{where}{name} must be a number from 0 to 1")
    if isinstance(value, int) and not -(2**53) < value < 2**53:  # float() would overflow
        raise UsageError(f"{where}{name} is out of range; use a number from 0 to 1")
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise UsageError(f"{where}{name} {value} is out of range; use a number from 0 to 1")
    return round(float(value), 4) + 0.0  # + 0.0: -0 and -0.00001 are stored as 0.0, not -0.0


def _choice(value, name: str, allowed, where: str) -> str | None:
    if value is None:
        return None
    if value not in allowed:
        raise UsageError(f"{where}{name} {value!r} is not one of: {', '.join(allowed)}")
    return value


def validate(obj: dict, *, max_chars: int, where: str = "", options: bool = False) -> Draft:
    """Check one request (a JSONL object or the CLI's options); raise naming the field.

    ``options`` names fields as command-line options (--occurred-at) in messages.
    """
    return _validate(obj, max_chars, where, (_OPTION_NAMES if options else _FIELD_NAMES).__getitem__)


# How messages name each field: as in JSONL, or as the command-line option.
_FIELD_NAMES = {n: n for n in FIELDS}
_OPTION_NAMES = {n: "--" + n.replace("_", "-") for n in FIELDS}
_SOURCE_NAMES = tuple(SOURCES)
_AXIS_SET = frozenset(AXES)


def _validate(obj, max_chars: int, where: str, nm) -> Draft:
    if not isinstance(obj, dict):
        raise UsageError(f"{where}expected a JSON object with a \"text\" field")
    if not FIELDS.issuperset(obj):
        unknown = sorted(set(obj) - FIELDS)
        raise UsageError(f"{where}unknown field {unknown[0]!r}; known fields: text, kind, subject, "
                         "domain, actors, outcome, occurred_at, confidence, source, key, tier, keep, "
                         "session, turn, "
                         + ", ".join(AXES))
    text = obj.get("text")
    if not isinstance(text, str):
        raise UsageError(f"{where}\"text\" is required and must be a string")
    text = text.strip()
    if not text:
        raise UsageError(f"{where}text is empty; give the memory's text as an argument or on stdin")
    if "\x00" in text:
        raise UsageError(f"{where}text contains a NUL byte; memories are text, not binary data")
    if not text.isascii() and not _utf8(text):
        raise UsageError(f"{where}text is not valid UTF-8; convert it, e.g. with iconv")
    if len(text) > max_chars:
        raise UsageError(f"{where}text is {len(text)} characters, over the limit of {max_chars}; "
                         "split it into smaller memories (or raise memory.max_text_chars)")
    actors = obj.get("actors", obj.get("actor"))
    if actors is None:
        actors = []
    elif isinstance(actors, str):
        actors = actors.split(",")
    elif not isinstance(actors, list):
        raise UsageError(f"{where}actors must be a list of names")
    names: list[str] = []
    for a in actors:
        name = _label(a, nm("actor"), where, 100)
        if name and name not in names:
            names.append(name)
    occurred = obj.get("occurred_at")
    if occurred is not None:
        if not isinstance(occurred, str):
            raise UsageError(f"{where}occurred_at must be a date string like 2026-06 or 2026-06-07")
        occurred = parse_occurred(occurred, f"{where}{nm('occurred_at')}")
    axes = () if _AXIS_SET.isdisjoint(obj) else tuple(
        (a, v) for a in AXES if a in obj and (v := _unit(obj[a], nm(a), where)) is not None)
    keep = obj.get("keep", False)
    if not isinstance(keep, bool):
        raise UsageError(f"{where}keep must be true or false")
    return Draft(
        text=text,
        kind=_choice(obj.get("kind"), nm("kind"), KINDS, where),
        subject=_label(obj.get("subject"), nm("subject"), where),
        domain=_label(obj.get("domain"), nm("domain"), where),
        actors=tuple(names),
        outcome=_choice(obj.get("outcome"), nm("outcome"), OUTCOMES, where),
        occurred_at=occurred,
        axes=axes,
        confidence=_unit(obj.get("confidence"), nm("confidence"), where),
        source=_choice(obj.get("source"), nm("source"), _SOURCE_NAMES, where),
        key=_label(obj.get("key"), nm("key"), where),
        tier=_choice(obj.get("tier"), nm("tier"), ("short", "long"), where),
        keep=keep,
        session=_label(obj.get("session"), nm("session"), where),
        turn=_turn(obj.get("turn"), nm("turn"), where),
    )


def build(draft: Draft, now: str, config) -> Memory | None:
    """The record a draft would create at ``now`` (None: a greeting, not stored)."""
    if draft.kind is None:
        cls = classify(draft.text)
        if cls.tier == "skip":
            if not draft.keep:
                return None
            cls = NOTE
        kind, tier, base = cls.kind, cls.tier, cls.prior
    else:
        kind = draft.kind
        tier = KIND_DEFAULTS[kind][0]
        base = prior(kind, cue(draft.text))
    tier = draft.tier or tier
    source = draft.source or config["memory"]["default_source"]
    if draft.occurred_at is not None:  # an explicit --occurred-at wins over the text
        occurred, precision = draft.occurred_at
    else:  # "in 2020", "last Tuesday", 「3日前」: the time the text states, as precise as it says
        stated = None
        if may_hold_time(draft.text):
            from .textdates import event_time  # the grammar, only for a text that may hold a time

            stated = event_time(draft.text, now)
        occurred, precision = stated or (_minute(now), "minute")
    ttl = config["memory"]["short_ttl_days"]
    return Memory(
        id=memory_id(draft.text, draft.subject, draft.domain),
        key=draft.key,
        kind=kind,
        text=draft.text,
        subject=draft.subject,
        domain=draft.domain,
        actors=draft.actors,
        outcome=draft.outcome,
        occurred_at=occurred,
        precision=precision,
        recorded_at=now,
        time_buckets=_buckets(occurred, precision),
        tier=tier,
        salience=_salience(base, draft.axes),
        confidence=draft.confidence if draft.confidence is not None else SOURCES[source],
        source=source,
        valid_from=now,
        last_reinforced_at=now,
        expires_at=_expiry(now, ttl) if tier == "short" else None,
        session=draft.session,
        turn=draft.turn,
    )


# Pure functions of a few distinct values per command, cached: a bulk write of 100k
# lines would otherwise parse and format the same --now 100k times.
@lru_cache(maxsize=256)
def _minute(now: str) -> str:
    return format_minute(parse_ts(now))


@lru_cache(maxsize=4096)
def _buckets(occurred: str, precision: str) -> tuple[str, ...]:
    return tuple(time_buckets(occurred, precision))


def _salience(base: Salience, axes: tuple[tuple[str, float], ...]) -> Salience:
    """The prior with the explicit axes over it; frozen: one value serves every record."""
    return _with_axes(base, axes) if axes else base


@lru_cache(maxsize=4096)
def _with_axes(base: Salience, axes: tuple[tuple[str, float], ...]) -> Salience:
    return replace(base, **dict(axes))


@lru_cache(maxsize=256)
def _expiry(now: str, ttl: float) -> str:
    return ts_after(now, ttl)


def reinforce_step(source: str, config) -> float:
    """How much of the remaining doubt a re-mention removes: confidence.reinforce_step times
    the source's veracity (a person's word counts more than a tool's; memstore(7), SALIENCE)."""
    return round(config["confidence"]["reinforce_step"] * SOURCES[source], 4)


def decide_writes(drafts: list[Draft], known, now: str, config) -> list[WriteDecision]:
    """Decide each draft's write; later drafts see earlier ones (bulk files repeat themselves)."""
    new_ids: set[str] = set()
    new_keys: dict[str, str] = {}
    out: list[WriteDecision] = []
    for draft in drafts:
        if draft.key is not None:
            existing = new_keys.get(draft.key) or known.key_id(draft.key)
            if existing is not None:
                out.append(WriteDecision("noop", existing, None, None, "key already remembered"))
                continue
        memory = build(draft, now, config)
        if memory is None:
            out.append(WriteDecision("skip", None, None, None, "greeting or acknowledgement"))
            continue
        if memory.id in new_ids or known.has_id(memory.id):
            event = {"op": "reinforce", "at": now, "id": memory.id,
                     "salience": memory.salience.as_dict(), "confidence": memory.confidence,
                     "step": reinforce_step(memory.source, config)}
            if draft.key is not None:
                event["key"] = draft.key
                new_keys[draft.key] = memory.id
            out.append(WriteDecision("reinforce", memory.id, memory, event, "same text already remembered"))
            continue
        record = log_record(memory)
        new_ids.add(memory.id)
        if draft.key is not None:
            new_keys[draft.key] = memory.id
        out.append(WriteDecision("add", memory.id, memory, {"op": "remember", "at": now, "memory": record}))
    return out
