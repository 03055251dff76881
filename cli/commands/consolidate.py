from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt
from ..indexing import JobsOpt, job_count

HELP = """Consolidate short-term memories: promote, merge near-duplicates, expire.

Run it daily (e.g. from cron at 03:00). Short-term memories are grouped by
subject (else the first 60 characters of their text); a group is promoted to one
long-term memory when it was mentioned at least consolidate.min_occurrences
times or one member's composite salience reaches consolidate.salience_floor, and
the members' mean confidence reaches consolidate.min_confidence. Short-term
memories past their 14-day TTL expire (a status change; nothing is deleted).
Memories written since the last run are compared with older ones on the same
subject and domain by embedding similarity: near-duplicates are merged into the
older one, changed facts supersede it, and contradictions (negation, numbers, a
changed preference) are recorded as conflicts, see `memstore conflicts`. Each run
ends with a mark in the log (the last position it read), so the next compares only
what came after it. Running it twice at the same --now appends nothing the second
time. Prints one line per event appended.
Texts not in the embedding cache are embedded on --jobs worker processes
(default: the machine's cores) when there are many; a run with 256 new memories
or more in a store of 100,000 or more also checks their updates there, the
workers starting as it opens.
--engine reference computes the same events with the plain reference
implementation of the rules (every memory, every round; slow): a check of the
engine on a real store, e.g. `consolidate --dry-run --json --engine reference`."""

EPILOG = """\b
Examples:
  memstore consolidate --now 2026-06-08T03:00:00Z
  memstore consolidate --dry-run --json
  0 3 * * *  memstore --quiet consolidate     # crontab: nightly"""


def run(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be appended; append nothing.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
    jobs: JobsOpt = None,
    engine: Annotated[str, typer.Option(
        "--engine", envvar="MEMSTORE_CONSOLIDATE", show_envvar=True, metavar="NAME",
        help="engine (the default) or reference: how the events are computed; the same events.")] = "engine",
) -> None:
    from memstore.errors import UsageError
    from memstore.writes import ENGINES

    from ..stage import run_stage

    if engine not in ENGINES:
        raise UsageError(f"--engine {engine!r} is not one of: {', '.join(ENGINES)}")
    run_stage("consolidate", now=now, json=json, dry_run=dry_run, embedder=True, jobs=job_count(jobs),
              engine=engine)
