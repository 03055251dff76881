from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out, safe

HELP = """Propose how to settle beliefs two agents hold against each other; --apply records it.

When two different agents wrote the two sides of a conflict (`memstore conflicts`
names both), the newer does not win by being newer: the conflict stays open. harmonize
proposes, for each such conflict, to keep the side with more evidence (times it was
said, plus the outcomes behind a policy, less those against it), then the surer one
(confidence), then the newer. Nothing is written without --apply, which records each
proposal as a resolution (a person can still overturn it with `memstore conflicts
resolve`). --agent limits it to the conflicts that agent may read."""

EPILOG = """\b
Examples:
  memstore harmonize
  memstore harmonize --apply --json"""


def run(
    apply: Annotated[bool, typer.Option("--apply", help="Record the proposals as resolutions.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore import writes

    e = env(now)
    done = writes.harmonize(e.layout, now=e.now, apply=apply, agent=e.agent, access=e.access)
    if json:
        emit_json({"at": e.now, "proposals": done.proposals, "applied": done.applied})
        return
    for p in done.proposals:
        won = p["sides"][p["keep"]]
        out(safe(f"{p['conflict']}  keep {p['keep']}: {won['id']} ({won['agent']}) {won['text']!r}"))
        out(safe(f"  {p['why']}"))
    if not done.proposals:
        note("no open conflicts between agents")
    elif apply:
        note(f"recorded {len(done.applied)} resolution(s)")
    else:
        note("nothing recorded; run with --apply to record these")
