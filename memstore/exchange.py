"""Moving memory between stores: Markdown rendering and import planning.

Import takes either export form:
- the event log (`export --history`): events are appended with their original
  times; an event already in the target (same content, any seq) is skipped, so
  importing twice appends nothing. Into an empty store this reproduces the
  source's state exactly (same digest).
- the state (`export`, JSONL records): each record not already present (by id,
  or by key) becomes one ``import`` event that restores it as it was, its
  original record time kept; the event is stamped with that time, never today's.
"""

from __future__ import annotations

import hashlib

from .codec import dumps
from .errors import UsageError
from .model import LEVELS, Memory, memory_from_dict, memory_to_dict

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


def plan_history(rows: list[dict], existing: set[bytes]) -> list[dict]:
    events = sorted(rows, key=lambda e: e["seq"])
    out = []
    for e in events:
        fp = fingerprint(e)
        if fp in existing:
            continue
        existing.add(fp)
        out.append({k: v for k, v in e.items() if k != "seq"})
    return out


def plan_state(rows: list[dict], state, name: str) -> list[dict]:
    out = []
    for n, row in enumerate(sorted(rows, key=lambda r: (r.get("seq", 0), r["id"])), start=1):
        try:
            m = memory_from_dict(row)
        except TypeError as exc:
            raise UsageError(f"{name}: record {n} is not a memstore record ({exc})") from None
        if m.id in state.memories or (m.key is not None and m.key in state.keys):
            continue
        record = memory_to_dict(m)
        out.append({"op": "import", "at": m.recorded_at, "memory": record})
    return out


def render_markdown(memories: list[Memory], now: str) -> str:
    """The state as a readable page: one section per level, then per kind."""
    lines = [f"# memstore export ({now[:10]})", "",
             f"{len(memories)} memories. Each line: text, then kind, status, time and id.", ""]
    for level in LEVELS:
        rows = [m for m in memories if m.level == level]
        if not rows:
            continue
        lines += [f"## {level} ({len(rows)})", ""]
        for kind in sorted({m.kind for m in rows}):
            lines += [f"### {kind}", ""]
            for m in rows:
                if m.kind != kind:
                    continue
                flat = " ".join(m.text.split())
                cues = "; ".join(p for p in (m.subject, ", ".join(m.actors), m.domain) if p)
                lines.append(f"- {flat} — {m.status}, {m.tier}, {m.occurred_at}"
                             + (f", {cues}" if cues else "") + f" `{m.id}`")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
