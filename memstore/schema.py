"""The log's grammar: what a well-formed event and a well-formed record are.

``event_problem(e)`` says why an event cannot be folded (naming the field), or None.
Every reader runs it (``store.log.LogReader`` skips what fails and reports it), so the
fold, the indexes and recall only ever see events of the shapes they were written in:
a hand-edited or damaged line is skipped and reported, never a traceback, never a
text that is a number or a salience of 55. ``verify`` reports the same problems, and
``import`` refuses a file holding any of them (``strict``: no unknown fields or ops,
ids that match their text, the caller's text limit).

Checks are about shape and range only; what an event means is ``fold``'s business.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from functools import lru_cache

from .model import AXES, KINDS, LEVELS, MEMORY_FIELDS, OUTCOMES, SOURCES, STATUSES, TIERS, memory_id

MAX_TEXT = 1_000_000  # a reader's hard cap; writers refuse far less (memory.max_text_chars)
MAX_LABEL = 200
MAX_LIST = 100_000
MAX_NOTES = 20_000  # one agent's working memory (memstore.notes.MAX_CHARS, with room)
MAX_SEQ = 2**53  # exact in every JSON reader; a log reaches it never

# ASCII digits and no trailing line break: a str pattern's \d also takes other scripts' digits
# (int() reads them) and $ matches before a final newline; all three are used with fullmatch
_ID = re.compile(r"m[0-9a-f]{15}")
_TS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_OCCURRED = {"year": re.compile(r"[0-9]{4}"), "month": re.compile(r"[0-9]{4}-[0-9]{2}"),
             "day": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
             "week": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),  # its Monday
             "minute": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}Z")}
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# what a label may not hold: a line break, a C0 or C1 control, DEL (one regex search, not a
# test per character: every log line has several labels)
_NOT_IN_A_LABEL = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(sorted(c for c in _LINE_BREAKS if ord(c) >= 0xa0)) + "]")
_KEEP = ("new", "old", "both", "dismiss")
_DIRECTIONS = (None, "mitigate", "reinforce")
_AXIS_SET = frozenset(AXES)
_FIELD_SET = frozenset(MEMORY_FIELDS)


class Bad(Exception):
    """One problem, worded for people: "FIELD: what is wrong"."""


@lru_cache(maxsize=8192)
def _valid_ts(value: str) -> bool:
    if not _TS.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value[:-1])
    except ValueError:
        return False
    return value[:4] != "0000"


def _ts(value, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not _valid_ts(value):
        raise Bad(f"{name} {_show(value)} is not a UTC time like 2026-06-07T09:30:00Z")


def _period_ok(v) -> bool:
    """An ``invalid_periods`` item: two record times, the first before the second."""
    if type(v) is not str or len(v) != 41 or v[20] != "/":
        return False
    start, end = v[:20], v[21:]
    return _valid_ts(start) and _valid_ts(end) and start < end


def _periods_ok(v) -> bool:
    return type(v) is list and len(v) <= MAX_LIST and all(map(_period_ok, v)) and v == sorted(v)


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _id(value, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise Bad(f"{name} {_show(value)} is not a memory id (m and 15 hex digits)")


def _ids(value, name: str, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise Bad(f"{name} must be a list of memory ids")
    for v in value:
        _id(v, name)


def _text(value, name: str, *, limit: int = MAX_TEXT, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise Bad(f"{name} must be text, not {_show(value)}")
    if len(value) > limit:
        raise Bad(f"{name} is {len(value)} characters, over the limit of {limit}")
    if "\x00" in value:
        raise Bad(f"{name} contains a NUL character")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Bad(f"{name} is not valid UTF-8") from None


def _label(value, name: str, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    _text(value, name, limit=MAX_LABEL)
    if not value.strip() or _NOT_IN_A_LABEL.search(value):
        raise Bad(f"{name} {_show(value)} must be one non-empty line of at most {MAX_LABEL} characters")


def _labels(value, name: str) -> None:
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise Bad(f"{name} must be a list of names")
    for v in value:
        _label(v, name, optional=False)


def _unit(value, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 <= value <= 1):
        raise Bad(f"{name} {_show(value)} must be a number from 0 to 1")


def _count(value, name: str, *, low: int = 0) -> None:
    # (below 2**53, as a seq: a count past int64 failed the snapshot's and the index's columns)
    if type(value) is not int or not low <= value < MAX_SEQ:
        raise Bad(f"{name} {_show(value)} must be a whole number of at least {low}, below 2**53")


def _choice(value, name: str, allowed) -> None:
    if value not in allowed or isinstance(value, bool):
        shown = ", ".join("null" if a is None else a for a in allowed)
        raise Bad(f"{name} {_show(value)} is not one of: {shown}")


def _salience(value, name: str = "salience", *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, dict) or not _AXIS_SET.issuperset(value):
        raise Bad(f"{name} must be an object of the axes {', '.join(AXES)}")
    for axis, v in value.items():
        _unit(v, f"{name}.{axis}")


def _occurred(value, precision) -> None:
    _choice(precision, "precision", tuple(_OCCURRED))
    if not isinstance(value, str) or not _valid_occurred(value, precision):
        raise Bad(f"occurred_at {_show(value)} is not a calendar time of precision {precision!r}")


@lru_cache(maxsize=8192)
def _valid_occurred(value: str, precision: str) -> bool:
    if not _OCCURRED[precision].fullmatch(value) or value[:4] == "0000":
        return False
    try:
        if precision == "minute":  # the pattern fixed the positions; strptime would load _strptime
            datetime(int(value[:4]), int(value[5:7]), int(value[8:10]), int(value[11:13]), int(value[14:16]))
        elif precision == "day":
            date.fromisoformat(value)
        elif precision == "week":
            return date.fromisoformat(value).weekday() == 0
        elif precision == "month":
            return 1 <= int(value[5:]) <= 12
    except ValueError:
        return False
    return True


def record_problem(d, *, strict: bool = False, max_chars: int = MAX_TEXT) -> str | None:
    """Why ``d`` is not a well-formed memory record (as events carry it), or None.

    ``strict`` (imports): unknown fields are refused and a raw record's id must be the
    one its text, subject and domain give (``model.memory_id``)."""
    try:
        check_record(d, strict=strict, max_chars=max_chars)
    except Bad as exc:
        return str(exc)
    return None


_MISSING = object()
_LABEL_FIELDS = ("subject", "domain", "key", "author", "agent", "session")
_CHOICES = (("kind", "note", frozenset(KINDS)), ("tier", "short", frozenset(TIERS)),
            ("status", "active", frozenset(STATUSES)), ("level", "raw", frozenset(LEVELS)),
            ("source", "human", frozenset(SOURCES)))
_OUTCOME_SET, _DIRECTION_SET = frozenset(OUTCOMES), frozenset(d for d in _DIRECTIONS if d)
_TS_FIELDS = ("valid_from", "invalid_at", "last_recalled_at", "last_reinforced_at", "expires_at")
_ID_FIELDS = ("superseded_by", "merged_into", "abstracted_by")
_ID_LISTS = ("derived_from", "conflicts_with", "reconciled_with", "against")


def _utf8(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _label_ok(v) -> bool:
    """``_label`` of a value that is not None, as a verdict."""
    return (type(v) is str and len(v) <= MAX_LABEL and bool(v.strip()) and not _NOT_IN_A_LABEL.search(v)
            and _utf8(v))


def _fraction(v) -> bool:
    return (type(v) is float or type(v) is int) and 0 <= v <= 1  # (NaN and infinities fail the range)


def _record_ok(d, max_chars: int) -> bool:
    """True only when ``check_record(d)`` (not strict) passes: its checks, each made as one
    test of the plain JSON types a log line decodes to, in one function. A record a reader
    folds passes through here in a fraction of check_record's calls;
    False says nothing: check_record decides, and words the problem."""
    get = d.get
    if type(v := get("id")) is not str or not _ID.fullmatch(v):
        return False
    if (type(v := get("text")) is not str or len(v) > max_chars or "\x00" in v or not v.strip()
            or not _utf8(v)):
        return False
    for name in _LABEL_FIELDS:
        if (v := get(name)) is not None and not _label_ok(v):
            return False
    if (v := get("actors", _MISSING)) is not _MISSING and (
            type(v) is not list or len(v) > MAX_LIST or not all(map(_label_ok, v))):
        return False
    for name, default, allowed in _CHOICES:
        if type(v := get(name, default)) is not str or v not in allowed:
            return False
    if (v := get("outcome")) is not None and (type(v) is not str or v not in _OUTCOME_SET):
        return False
    if (v := get("direction")) is not None and (type(v) is not str or v not in _DIRECTION_SET):
        return False
    if type(v := get("recorded_at")) is not str or not _valid_ts(v):
        return False
    for name in _TS_FIELDS:
        if (v := get(name)) is not None and (type(v) is not str or not _valid_ts(v)):
            return False
    if (type(p := get("precision")) is not str or p not in _OCCURRED or type(v := get("occurred_at")) is not str
            or not _valid_occurred(v, p)):
        return False
    if (v := get("time_buckets", _MISSING)) is not _MISSING and (
            type(v) is not list or len(v) > MAX_LIST or not all(type(b) is str and len(b) <= 10 for b in v)):
        return False
    if (v := get("salience", _MISSING)) is not _MISSING and (
            type(v) is not dict or not _AXIS_SET.issuperset(v) or not all(map(_fraction, v.values()))):
        return False
    if not _fraction(get("confidence", 1.0)):
        return False
    if (type(v := get("recall_count", 0)) is not int or not 0 <= v < MAX_SEQ
            or type(v := get("mention_count", 1)) is not int or not 1 <= v < MAX_SEQ
            or type(v := get("seq", 0)) is not int or not 0 <= v < MAX_SEQ):
        return False
    for name in _ID_FIELDS:
        if (v := get(name)) is not None and (type(v) is not str or not _ID.fullmatch(v)):
            return False
    for name in _ID_LISTS:
        if (v := get(name)) is not None and (type(v) is not list or len(v) > MAX_LIST or not all(
                type(i) is str and _ID.fullmatch(i) for i in v)):
            return False
    if (v := get("turn")) is not None and (type(v) is not int or not 0 <= v < MAX_SEQ):
        return False
    if (v := get("invalid_periods")) is not None and not _periods_ok(v):
        return False
    if (v := get("reason")) is not None and (type(v) is not str or len(v) > MAX_TEXT or "\x00" in v
                                             or not _utf8(v)):
        return False
    return type(get("retired", False)) is bool


def check_record(d, *, strict: bool = False, max_chars: int = MAX_TEXT) -> None:
    if strict or type(d) is not dict or not _record_ok(d, max_chars):
        check_record_fully(d, strict=strict, max_chars=max_chars)


def check_record_fully(d, *, strict: bool = False, max_chars: int = MAX_TEXT) -> None:
    """``check_record`` field by field, each problem worded (what ``_record_ok`` must agree
    with)."""
    if not isinstance(d, dict):
        raise Bad("memory must be a JSON object")
    if strict and not _FIELD_SET.issuperset(d):
        raise Bad(f"unknown field {sorted(set(d) - _FIELD_SET)[0]!r}")
    _id(d.get("id"), "id")
    _text(d.get("text"), "text", limit=max_chars)
    if not d["text"].strip():
        raise Bad("text is empty")
    for name in ("subject", "domain", "key"):
        _label(d.get(name), name)
    _labels(d.get("actors", []), "actors")
    _choice(d.get("kind", "note"), "kind", KINDS)
    _choice(d.get("tier", "short"), "tier", TIERS)
    _choice(d.get("status", "active"), "status", STATUSES)
    _choice(d.get("level", "raw"), "level", LEVELS)
    _choice(d.get("source", "human"), "source", tuple(SOURCES))
    _choice(d.get("outcome"), "outcome", (None, *OUTCOMES))
    _choice(d.get("direction"), "direction", _DIRECTIONS)
    _ts(d.get("recorded_at"), "recorded_at")
    _occurred(d.get("occurred_at"), d.get("precision"))
    for name in ("valid_from", "invalid_at", "last_recalled_at", "last_reinforced_at", "expires_at"):
        _ts(d.get(name), name, optional=True)
    if d.get("invalid_periods") is not None and not _periods_ok(d["invalid_periods"]):
        raise Bad("invalid_periods must be a list, oldest first, of spans like "
                  "2026-05-01T03:00:00Z/2026-05-02T10:00:00Z")
    buckets = d.get("time_buckets", [])
    if not isinstance(buckets, list) or len(buckets) > MAX_LIST or not all(
            isinstance(b, str) and len(b) <= 10 for b in buckets):
        raise Bad("time_buckets must be a list of short strings like 2026-06")
    _salience(d.get("salience", {}))
    _unit(d.get("confidence", 1.0), "confidence")
    _count(d.get("recall_count", 0), "recall_count")
    _count(d.get("mention_count", 1), "mention_count", low=1)
    _count(d.get("seq", 0), "seq")
    for name in ("superseded_by", "merged_into", "abstracted_by"):
        _id(d.get(name), name, optional=True)
    for name in ("derived_from", "conflicts_with", "reconciled_with", "against"):
        _ids(d.get(name), name)
    _label(d.get("author"), "author")
    _label(d.get("agent"), "agent")
    _label(d.get("session"), "session")
    if d.get("turn") is not None:
        _count(d.get("turn"), "turn")
    _text(d.get("reason"), "reason", optional=True)
    if not isinstance(d.get("retired", False), bool):
        raise Bad(f"retired {_show(d.get('retired'))} must be true or false")
    if strict and d.get("level", "raw") == "raw" and d["id"] != memory_id(d["text"], d.get("subject"),
                                                                           d.get("domain")):
        raise Bad(f"id {d['id']} does not match its text, subject and domain "
                  f"(expected {memory_id(d['text'], d.get('subject'), d.get('domain'))})")


# --- events, one checker per op -------------------------------------------------------------

def _check_created(e: dict, strict: bool, ids: bool, max_chars: int) -> None:
    memory = e.get("memory")
    try:
        check_record(memory, strict=strict, max_chars=max_chars)
    except Bad as exc:
        raise Bad(f"memory.{exc}" if isinstance(memory, dict) else str(exc)) from None
    if strict or ids:
        _own_id(e)
    _ids(e.get("abstracts"), "abstracts")


def _own_id(e: dict) -> None:
    """A remembered record's id must be the one its text, subject and domain give."""
    if e["op"] != "remember":
        return
    memory = e["memory"]
    if memory["id"] != memory_id(memory["text"], memory.get("subject"), memory.get("domain")):
        raise Bad(f"memory.id {memory['id']} does not match its text, subject and domain")


def id_problem(e: dict) -> str | None:
    """What ``event_problem(e, ids=True)`` adds for an event ``event_problem(e)`` passed: a
    remembered record's id that does not match its text (verify checked every event twice)."""
    try:
        _own_id(e)
    except Bad as exc:
        return f"{e['op']}: {exc}"
    return None


def _reinforce(e: dict) -> None:
    _id(e.get("id"), "id")
    _salience(e.get("salience"), optional=True)
    _unit(e.get("confidence"), "confidence", optional=True)
    _unit(e.get("step"), "step", optional=True)
    _label(e.get("key"), "key")


def _recall(e: dict) -> None:
    _ids(e.get("ids"), "ids", optional=False)
    _text(e.get("query"), "query", optional=True)


def _one(e: dict) -> None:
    _id(e.get("id"), "id")


def _pair(e: dict) -> None:
    _id(e.get("old"), "old")
    _id(e.get("new"), "new")


def _promote(e: dict) -> None:
    _id(e.get("id"), "id")
    _ids(e.get("members"), "members")
    _salience(e.get("salience"))
    _unit(e.get("confidence"), "confidence")
    _count(e.get("mention_count"), "mention_count", low=1)


def _merge(e: dict) -> None:
    _pair(e)
    _ts(e.get("seen_at"), "seen_at")
    _unit(e.get("step"), "step", optional=True)


def _supersede(e: dict) -> None:
    _pair(e)
    _text(e.get("reason"), "reason", optional=True)
    _text(e.get("conflict"), "conflict", limit=MAX_LABEL, optional=True)


def _conflict(e: dict) -> None:
    _pair(e)
    _text(e.get("id"), "id", limit=MAX_LABEL)
    for name in ("rule", "detail"):
        _text(e.get(name), name, optional=True)


def _resolve(e: dict) -> None:
    _conflict(e)
    _choice(e.get("keep"), "keep", _KEEP)
    _text(e.get("note"), "note", optional=True)
    _unit(e.get("confidence"), "confidence", optional=True)


def _forget(e: dict) -> None:
    _one(e)
    _text(e.get("reason"), "reason", optional=True)
    if not isinstance(e.get("retired", False), bool):
        raise Bad(f"retired {_show(e.get('retired'))} must be true or false")


def _reinstate(e: dict) -> None:
    _one(e)
    _text(e.get("reason"), "reason", optional=True)


def _notes(e: dict) -> None:
    _label(e.get("agent"), "agent", optional=False)
    _text(e.get("text"), "text", limit=MAX_NOTES)


STAGES = ("consolidate",)  # the stages that keep a watermark in the log


def _mark(e: dict) -> None:
    _choice(e.get("stage"), "stage", STAGES)
    through = e.get("through")
    if type(through) is not int or not 0 <= through < MAX_SEQ:
        raise Bad(f"through {_show(through)} is not a log position (a whole number from 0)")


_OPS = {
    "reinforce": _reinforce, "recall": _recall, "expire": _one, "promote": _promote, "merge": _merge,
    "supersede": _supersede, "conflict": _conflict, "resolve": _resolve, "forget": _forget,
    "reinstate": _reinstate, "notes": _notes, "mark": _mark,
}
CREATING = ("remember", "distill", "policy", "import")
OPS = (*CREATING, *_OPS)


def event_problem(e, *, strict: bool = False, ids: bool = False, max_chars: int = MAX_TEXT) -> str | None:
    """Why ``e`` is not a well-formed log event, or None. An op this memstore does not know
    passes (a newer version may write it; readers skip it and ``verify`` says so) unless
    ``strict``, which also refuses unknown record fields and ids that do not match. ``ids``:
    a remembered record's id must match its text (a hand-edited text; readers can fold
    it, so only verify and import pay for the hash)."""
    if not isinstance(e, dict):
        return "line is not a JSON object"
    seq = e.get("seq")
    if type(seq) is not int or not 0 < seq < MAX_SEQ:
        return f"seq {_show(seq)} is not a positive whole number below 2**53"
    op = e.get("op")
    if not isinstance(op, str):
        return f"op {_show(op)} is not a string"
    try:
        _ts(e.get("at"), "at")
        _label(e.get("agent"), "agent")  # who wrote it, on any event (the agent's identity)
        if op in CREATING:
            _check_created(e, strict, ids, max_chars)
        elif op in _OPS:
            _OPS[op](e)
        elif strict:
            raise Bad(f"op {_show(op)} is not one of: {', '.join(OPS)}")
    except Bad as exc:
        return f"{op}: {exc}"
    return None
