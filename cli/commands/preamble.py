from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env, read_stdin_text
from ..output import emit_json, out

HELP = """Print the dispatch preamble for an agent's task.

Three parts, framed as user data and not instructions: every active policy as
`- [domain] "rule"`; the agent's own working memory (--agent; `memstore notes`),
verbatim, each line behind "> "; then at most recall.preamble_max (5) facts within
recall.preamble_chars (1,200) characters, found for the TASK by keyword (--semantic:
the four voices), only when TASK has at least recall.preamble_min_query (20)
characters. It ends telling the agent to verify important items with search_memory.
--repo SLUG ranks that repo's memories and policies first. Nothing from a domain the
agent's role may not read appears. Prints nothing when there is nothing to say."""

EPILOG = """\b
Examples:
  memstore --agent coder preamble "refactor the session store for the billing service" --repo web
  memstore preamble "ship the mobile build on Friday" --json"""


def run(
    task: Annotated[str | None, typer.Argument(help="The task; '-' or absent reads stdin.")] = None,
    repo: Annotated[str | None, typer.Option("--repo", metavar="SLUG", help="Rank this repo's memories first.")] = None,
    semantic: Annotated[bool, typer.Option("--semantic", help="Find facts with every voice, not keywords only.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.access import check_slug
    from memstore.dispatch import dispatch
    from memstore.store.open import load_notes

    from ..indexing import open_indexes

    e = env(now)
    if task is None or task == "-":
        task = read_stdin_text()
    if repo is not None:
        check_slug(repo)
    notes = ""
    if e.agent is not None and e.layout.root_exists():
        notes = load_notes(e.layout).get(e.agent, {}).get("text", "")  # (no record read)
    result = dispatch(open_indexes(e), task, now=e.now, config=e.config, notes=notes, access=e.access,
                      repo=repo, semantic=semantic)
    if json:
        emit_json(result)
    elif result["text"]:
        out(result["text"])
