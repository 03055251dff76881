from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, write_text

HELP = """Write the day's briefing: a short Markdown page of working memory.

The most salient active memories at --now, the active policies with their
confidence, open conflicts, outcomes still pending, and what faded below the
distill floor this week. Written to STORE/brief/YYYY-MM-DD.md and printed, for
a person to read in the morning or an agent to load at start. The same store
and --now always give the same page. With nothing active, no page is written
or printed, and a line on stderr says so (--json still prints the empty
sections)."""

EPILOG = """\b
Examples:
  memstore brief
  0 5 * * *  memstore --quiet brief          # crontab: every morning at 05:00
  memstore brief --now 2026-06-07 --no-write | less"""


def run(
    no_write: Annotated[bool, typer.Option("--no-write", help="Print only; do not write brief/DATE.md.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.brief import brief_data, is_empty, render_markdown
    from memstore.store.open import load_state
    from memstore.store.pages import write_brief

    from ..common import quiet

    e = env(now)
    def fold() -> dict:
        state, _ = load_state(e.layout)
        if e.access is not None:  # an agent's brief holds only what its grants let it read
            from memstore.access import readable

            state = state.copy()
            state.memories = {i: m for i, m in state.memories.items() if readable(e.access, m)}
        return brief_data(state, e.now, e.config)

    from memstore.index.current import open_current

    current = open_current(e.layout)
    if current is not None:  # the records index and the log after it: no fold
        from memstore.brief import brief_current
        from memstore.index.current import read_or_fold

        def read() -> dict:
            got = brief_current(current, e.now, e.config, e.access)
            return fold() if got is None else got  # (the lexical index cannot tell the agent's records)

        data = read_or_fold(read, fold)
    else:
        data = fold()
    if is_empty(data):  # a page of empty sections is noise in a morning read or a prompt
        if json:
            emit_json(data)
        note(f"brief: nothing active at {e.now}; no file written")
        return
    text = render_markdown(data)
    if not no_write:
        write_brief(e.layout, data["date"], text)
    if json:
        emit_json(data)
    elif not quiet():
        write_text(text)
