from pathlib import Path
from typing import Annotated

import typer

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
    from memstore import writes
    from memstore.exchange import HISTORY

    name, lines = read_json_lines(file, "", "; nothing was imported")
    e = env(now)
    done = writes.import_rows(e.layout, [obj for _where, obj in lines], name=name, now=e.now, config=e.config,
                              where=[where for where, _obj in lines])
    imported = len(done.events)
    summary = {"kind": done.kind, "read": done.read, "imported": imported, "skipped": done.read - imported}
    if json:
        emit_json(summary)
    else:
        note(f"imported {imported} of {done.read} {'events' if done.kind == HISTORY else 'records'} "
             f"({summary['skipped']} already present)")
