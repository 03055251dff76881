import textwrap
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out

HELP = """List conflicting memories side by side, or resolve one.

Consolidation and distillation record a conflict when two memories on one
subject contradict each other (opposite negation, different numbers or dates, a
changed preference) or two policies on one cause point opposite ways. Unless
conflicts.auto_supersede is false the newer memory supersedes the older at once
(the older keeps its history, with invalid_at set); otherwise the conflict stays
open until a person decides. `memstore conflicts` lists the open ones (--all:
every conflict with how it ended); `memstore conflicts resolve ID --keep
new|old|both|dismiss` records the decision (ID is the conflict's id, or the id or
--key of a memory in exactly one conflict, its newest): keep the newer memory, keep the
older one (reinstating it), keep both (they do not contradict), or dismiss the
detection. Resolving an automatically settled conflict overrides it."""

EPILOG = """\b
Examples:
  memstore conflicts
  memstore conflicts --all --json
  memstore conflicts resolve c6c442313f0ebc0f --keep old --note "still true for EU"
  memstore conflicts resolve my-memory-key --keep new
"""


def run(
    action: Annotated[str | None, typer.Argument(metavar="resolve", help="'resolve' to decide a conflict.")] = None,
    conflict: Annotated[str | None, typer.Argument(metavar="ID", help="The conflict id, or a memory's id or key (resolve).")] = None,
    keep: Annotated[str | None, typer.Option(help="resolve: new, old, both or dismiss.")] = None,
    note_text: Annotated[str | None, typer.Option("--note", help="resolve: why (kept in the log).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="List every conflict, not only open ones.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.conflicts import records
    from memstore.store.transaction import LogView

    if action not in (None, "resolve"):
        raise UsageError(f"unknown action {action!r}; use `memstore conflicts` or `memstore conflicts resolve ID --keep ...`")
    e = env(now)
    if action == "resolve":
        _resolve(e, conflict, keep, note_text, json)
        return
    view = LogView(e.layout)
    state = view.state()
    found = records(view.events(), state)
    if conflict is not None or keep is not None:
        raise UsageError("ID and --keep go with `resolve`: memstore conflicts resolve ID --keep new")
    shown = found if all_ else [r for r in found if r["state"] == "open"]
    if json:
        emit_json({"at": e.now, "conflicts": [_with_records(r, state) for r in shown]})
        return
    for r in shown:
        _print_side_by_side(r, state)
    if not shown:
        note("no open conflicts" if not all_ else "no conflicts recorded")


def _resolve(e, cid, keep, why, json) -> None:
    from memstore import writes

    if cid is None:
        raise UsageError("resolve needs a conflict ID: memstore conflicts resolve ID --keep new|old|both|dismiss")
    done = writes.resolve_conflict(e.layout, cid, keep, now=e.now, note=why)
    if json:
        emit_json({"id": done.conflict, "keep": keep, "changed": done.changed})
        return
    out(done.conflict)
    if not done.changed:
        note(f"already resolved: keep {keep}")


def _with_records(r: dict, state) -> dict:
    from memstore.model import memory_to_dict

    sides = {}
    for side in ("old", "new"):
        m = state.memories.get(r[side])
        sides[side] = None if m is None else {
            k: v for k, v in memory_to_dict(m).items()
            if k in ("id", "key", "text", "subject", "domain", "kind", "source", "confidence", "recorded_at",
                     "occurred_at", "status", "invalid_at", "superseded_by", "level", "direction")
        }
    return {**r, "records": sides}


_W = 38


def _print_side_by_side(r: dict, state) -> None:
    detail = f" ({r['detail']})" if r.get("detail") else ""
    ended = f" {r['resolution']}" if r.get("resolution") else ""
    out(f"{r['id']}  {r['rule']}{detail}  detected {r['detected_at']}  {r['state']}{ended}")
    old, new = state.memories.get(r["old"]), state.memories.get(r["new"])
    rows = [("", "old", "new")]
    for label, get in (
        ("id", lambda m: m.id), ("text", lambda m: m.text), ("source", lambda m: m.source),
        ("confidence", lambda m: f"{m.confidence:.2f}"), ("recorded", lambda m: m.recorded_at),
        ("occurred", lambda m: m.occurred_at), ("status", lambda m: m.status),
    ):
        rows.append((label, get(old) if old else "-", get(new) if new else "-"))
    for label, a, b in rows:
        left, right = textwrap.wrap(a, _W) or [""], textwrap.wrap(b, _W) or [""]
        for i in range(max(len(left), len(right))):
            la = left[i] if i < len(left) else ""
            rb = right[i] if i < len(right) else ""
            out(f"  {label if i == 0 else '':<11}{la:<{_W}}  {rb}".rstrip())
    out()
