from __future__ import annotations

from typing import Annotated

import typer

from memstore.errors import NotFound

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, out

HELP = """Show one memory (by id or --key value) and the events that touched it.

Lists every field of the record as the log's fold has it now, followed by the
log events that created or changed it, oldest first."""

EPILOG = """\b
Examples:
  memstore show m3f1c0e9a2b4d6e8
  memstore show ticket-1423 --json"""


def run(
    ref: Annotated[str, typer.Argument(metavar="ID|KEY", help="A memory id or a caller --key.")],
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.events import summary, touched_ids
    from memstore.model import memory_to_dict
    from memstore.store.log import LogReader
    from memstore.store.open import load_state

    e = env(now)
    state, _reader = load_state(e.layout)
    memory = state.resolve(ref)
    if memory is None:
        raise NotFound(f"no memory with id or key {ref!r}; list ids with `memstore export` or `memstore log`")
    events = [ev for ev in LogReader(e.layout).events() if memory.id in touched_ids(ev)]
    record = memory_to_dict(memory)
    if json:
        emit_json({"memory": record, "events": events})
        return
    for name, value in record.items():
        if name == "salience":
            value = " ".join(f"{k}={v:g}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(value) if value else "-"
        elif value is None:
            value = "-"
        out(f"{name:<19}{value}")
    out("events")
    for ev in events:
        out(f"  {ev['seq']:>6}  {ev['at']}  {ev['op']:<10} {summary(ev)}")
