from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out

HELP = """Forget a memory: mark it invalidated from --now on (nothing is deleted).

The record stays in the log and in `memstore show` with status invalidated,
invalid_at and the reason; recall leaves it out unless asked about the past.
Forgetting a forgotten memory changes nothing."""

EPILOG = """\b
Examples:
  memstore forget m3f1c0e9a2b4d6e8 --reason "wrong customer"
  memstore forget ticket-1423 --json"""


def run(
    ref: Annotated[str, typer.Argument(metavar="ID|KEY", help="A memory id or a caller --key.")],
    reason: Annotated[str | None, typer.Option(help="Why it no longer holds (kept in the log).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore import writes

    e = env(now)
    done = writes.forget(e.layout, ref, now=e.now, reason=reason, agent=e.agent, access=e.access)
    memory, changed = done.memory, done.changed
    if json:
        emit_json({"id": memory.id, "key": memory.key, "forgotten": changed,
                   "status": "invalidated", "reason": reason if changed else memory.reason})
        return
    out(memory.id)
    if not changed:
        note(f"already forgotten at {memory.invalid_at}")
