from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, read_json_lines
from ..output import emit_json, note

HELP = """Import a memstore export into this store, keeping original times.

FILE is either an event log (`memstore export --history`) or a state export
(`memstore export`); the kind is detected. Events and records keep the times
they were recorded at, never today's date. Importing is idempotent: events
already in this store (same content) and records whose id or key is already
here are skipped, so running it twice changes nothing. An event log imported
into an empty store reproduces the source's state exactly."""

EPILOG = """\b
Examples:
  memstore --store old export --history > events.jsonl
  memstore --store new import events.jsonl
  memstore --store laptop export | memstore --store server import -"""


def run(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The export ('-' for stdin).")],
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.exchange import HISTORY, detect, fingerprint, plan_history, plan_state
    from memstore.store.log import LogReader, append
    from memstore.store.open import load_state

    name, lines = read_json_lines(file, "", "; nothing was imported")
    rows = [obj for _where, obj in lines]
    if not rows:
        raise UsageError(f"{name} is empty; nothing was imported")
    kind = detect(rows, name)
    e = env(now)
    if kind == HISTORY:
        existing = {fingerprint(ev) for ev in LogReader(e.layout).events()}
        events = plan_history(rows, existing)
    else:
        state, _ = load_state(e.layout)
        events = plan_state(rows, state, name)
    if events:
        # original times are kept: the import writes the past by design
        append(e.layout, events, max(ev["at"] for ev in events), allow_past=True)
    summary = {"kind": kind, "read": len(rows), "imported": len(events), "skipped": len(rows) - len(events)}
    if json:
        emit_json(summary)
    else:
        note(f"imported {len(events)} of {len(rows)} {'events' if kind == HISTORY else 'records'} "
             f"({summary['skipped']} already present)")
