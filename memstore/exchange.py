"""Moving memory between stores: checking and planning an import (the Markdown page is
``memstore.markdown``).

Import takes either export form:
- the event log (`export --history`): events are appended with their original
  times; an event already in the target (same content, any seq) is skipped, so
  importing twice appends nothing. Into an empty store this reproduces the
  source's state exactly (same digest). Consolidate's marks are kept only where the
  target's log is the source's up to them (they name log positions).
- the state (`export`, JSONL records): each record not already present (by id,
  or by key) becomes one ``import`` event that restores it as it was, its
  original record time kept; the event is stamped with that time, never today's.
"""

from __future__ import annotations

import hashlib

from .codec import dumps
from .errors import UsageError
from .model import memory_from_dict, memory_to_dict

HISTORY, STATE = "history", "state"


def fingerprint(event: dict) -> bytes:
    """An event's identity without its log position."""
    return hashlib.sha256(dumps({k: v for k, v in event.items() if k != "seq"})).digest()


def detect(rows: list[dict], name: str) -> str:
    kinds = {HISTORY if "op" in r and "seq" in r else STATE if "id" in r and "text" in r else None
             for r in rows}
    if kinds == {HISTORY}:
        return HISTORY
    if kinds == {STATE}:
        return STATE
    raise UsageError(f"{name} is neither a memstore event log (`export --history`) nor a state "
                     "export (`export`); nothing was imported")


def check_rows(rows: list[dict], where: list[str], kind: str, *, now: str, max_chars: int) -> None:
    """Refuse the whole file at its first bad row (UsageError naming the line and field).

    A row must be what this memstore writes (``schema``, strictly: no unknown fields or ops,
    ids that match their text), pass the checks ``remember`` applies to what it is asked to
    store, carry a record time no later than ``now`` (a time in the future would block
    every later write), and not repeat a seq, id or key of an earlier row."""
    seen: dict = {}
    for w, row in zip(where, rows, strict=True):
        problem = _row_problem(row, kind, now, max_chars)
        if problem is None:
            ident = [("seq", row["seq"])] if kind == HISTORY else [("id", row["id"])]
            if kind == STATE and row.get("key") is not None:
                ident.append(("key", row["key"]))
            for name, value in ident:
                if (name, value) in seen:
                    problem = f"{name} {value!r} also appears on {seen[(name, value)].rstrip(': ')}"
                    break
                seen[(name, value)] = w
        if problem is not None:
            raise UsageError(f"{w}{problem}; nothing was imported")


_DRAFT_FIELDS = ("text", "kind", "subject", "domain", "actors", "outcome", "confidence", "source", "key",
                 "tier")


def _row_problem(row: dict, kind: str, now: str, max_chars: int) -> str | None:
    from .remember import validate
    from .schema import event_problem, record_problem

    if kind == HISTORY:
        problem = event_problem(row, strict=True, max_chars=max_chars)
        if problem is not None:
            return problem
        if row["at"] > now:
            return f"at {row['at']} is after --now {now}: a record time in the future would block later writes"
        record = row.get("memory")
    else:
        problem = record_problem(row, strict=True, max_chars=max_chars)
        if problem is not None:
            return problem
        record = row
    if record is None:
        return None
    if record["recorded_at"] > now:
        return (f"recorded_at {record['recorded_at']} is after --now {now}: a record time in the future "
                "would block later writes")
    try:
        validate({k: record[k] for k in _DRAFT_FIELDS if record.get(k) is not None}, max_chars=max_chars)
    except UsageError as exc:
        return str(exc)
    return None


def plan_history(rows: list[dict], existing: set[bytes], base: int = 0) -> list[dict]:
    """The events to append after the target's ``base`` events. A consolidate ``mark``
    names the source's log positions: it is kept only where the target's log is the
    source's up to it (an empty target, nothing skipped before it), else left out, and the
    target's next consolidate compares the whole window as for a store never marked
    (slower, never a record missed)."""
    events = sorted(rows, key=lambda e: e["seq"])
    out = []
    for e in events:
        if e["op"] == "mark" and not (base == 0 and len(out) + 1 == e["seq"]):
            continue
        fp = fingerprint(e)
        if fp in existing:
            continue
        existing.add(fp)
        out.append({k: v for k, v in e.items() if k != "seq"})
    return out


def plan_state(rows: list[dict], state) -> list[dict]:
    """Import events for the records the state does not hold yet (rows passed check_rows)."""
    out = []
    for row in sorted(rows, key=lambda r: (r.get("seq", 0), r["id"])):
        m = memory_from_dict(row)
        if m.id in state.memories or (m.key is not None and m.key in state.keys):
            continue
        record = memory_to_dict(m)
        if not record["invalid_periods"]:  # (import lines stay as they were before the field)
            del record["invalid_periods"]
        out.append({"op": "import", "at": m.recorded_at, "memory": record})
    return out
