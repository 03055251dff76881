from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, read_stdin_text
from ..output import emit_json, note, out, safe

HELP = """Read or write an agent's working memory: its private scratchpad.

Working memory is what an agent was in the middle of: carried to its next
run, never promoted to a fact, never recalled for another agent, and given verbatim
in that agent's own preamble (memstore preamble, the server's preamble tool). It
belongs to the agent named by --agent (or $MEMSTORE_AGENT). `memstore notes` prints
it; `notes set TEXT` replaces it, `notes append TEXT` adds a line, `notes clear`
empties it. TEXT '-' or absent reads stdin. At most 8,000 characters."""

EPILOG = """\b
Examples:
  memstore --agent coder notes set "halfway through the auth refactor; tests in tests/auth pending"
  memstore --agent coder notes append "blocked on the session-store decision"
  memstore --agent coder notes
  memstore --agent coder notes clear"""

ACTIONS = ("show", "set", "append", "clear")


def run(
    action: Annotated[str, typer.Argument(metavar="[show|set|append|clear]",
                                          help="What to do (default: show).")] = "show",
    text: Annotated[str | None, typer.Argument(help="The text for set or append; '-' or absent reads stdin.")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore import writes

    if action not in ACTIONS:
        raise UsageError(f"unknown action {action!r}; use show, set TEXT, append TEXT or clear")
    e = env(now)
    if e.agent is None:
        raise UsageError("working memory belongs to an agent: give --agent NAME (or set MEMSTORE_AGENT)")
    if action == "show":
        if text is not None:
            raise UsageError("show takes no text; use `memstore notes set TEXT`")
        from memstore.store.open import load_notes

        held = load_notes(e.layout).get(e.agent, {}) if e.layout.root_exists() else {}
        if json:
            emit_json({"agent": e.agent, "notes": held.get("text", ""), "updated_at": held.get("at")})
        elif held:
            for line in held["text"].split("\n"):  # its lines as written, each made safe for a terminal
                out(safe(line))
        else:
            note(f"no working memory for agent {e.agent}")
        return
    if action == "clear":
        if text is not None:
            raise UsageError("clear takes no text")
        text = ""
    elif text is None or text == "-":
        text = read_stdin_text()
    done = writes.set_notes(e.layout, e.agent, text, mode=action, now=e.now)
    if json:
        emit_json({"agent": e.agent, "notes": done.text, "changed": done.changed})
    elif not done.changed:
        note("working memory unchanged")
    else:
        note(f"working memory of {e.agent}: {len(done.text)} characters")
