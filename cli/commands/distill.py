from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt

HELP = """Distill faded memories into abstractions, and outcomes into policies.

Run it weekly. A long-term memory whose effective salience at --now is under
distill.floor (and that is not protected) climbs one rung of the ladder
raw -> summary -> pattern -> principle -> policy as a new derived record; the
original stays as its evidence and recall prefers the abstraction. A pattern
needs distill.pattern_min_sources independent sources on one subject (or kind
and actors). Memories with outcomes on a shared cause become policies: negative
ones a mitigate policy, positive ones a reinforce policy, from
distill.policy_min_support memories on, with confidence
(count/(count+1) + salienceSum/(count*4)) times its share of the outcomes. Which
stands follows the balance of evidence: the side with distill.policy_majority of
the outcomes stands and the other is superseded (or brought back); nearer the
middle both stand in an open conflict for a person. Everything is extractive and
deterministic; running it twice at the same --now appends nothing the second
time. Prints one line per event appended."""

EPILOG = """\b
Examples:
  memstore distill --now 2026-06-14T04:00:00Z
  memstore distill --dry-run --json
  0 4 * * 0  memstore --quiet distill         # crontab: Sundays"""


def run(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be appended; append nothing.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from ..stage import run_stage

    run_stage("distill", now=now, json=json, dry_run=dry_run, embedder=False)
