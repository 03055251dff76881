from typing import Annotated

import typer

HELP = """Serve the store to agents over stdio: an MCP server, or JSON lines with --jsonl.

The process stays resident: the embedder, the indexes and the folded state stay warm,
and before each call it catches up with the log, so writes from cron jobs, the CLI and
other servers are seen at once and every write takes the store lock as the CLI's do.
Tools (memstore-serve(1) lists their arguments): remember, propose_fact, propose_policy,
supersede_fact, search_memory, preamble, judge, list_conflicts, resolve_conflict,
harmonize, forget, update_my_notes, read_my_notes. A call may carry `now` (else the
server reads the clock once per call) and `agent` (else --agent, else $MEMSTORE_AGENT).

MCP needs the optional extra: pip install 'memstore[mcp]'. --jsonl needs nothing more:
each input line is {"id": ..., "tool": NAME, "arguments": {...}} and each output line
{"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "error": "...",
"exit": N} with N the exit status the CLI would give (2 usage, 1 not found, 4 no grant).
{"tool": "list_tools"} lists the tools with their JSON schemas."""

EPILOG = """\b
Examples:
  memstore --store ~/agent-memory serve --agent coder
  echo '{"id": 1, "tool": "search_memory", "arguments": {"query": "billing database"}}' | memstore serve --jsonl"""


def run(
    jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON lines on stdin/stdout instead of MCP.")] = False,
) -> None:
    from memstore.resident import Resident
    from memstore.store.open import remember_states

    from ..common import agent, store_dir
    from ..indexing import cache_dir
    from ..output import note

    # this process is the server: every open folds only what the log gained since the last
    # (a switch for the whole process, so it is thrown here, not by the library's Resident)
    remember_states(True)
    resident = Resident(store_dir(), cache_dir=cache_dir(), notify=note)
    if jsonl:
        from ..serve_jsonl import serve
    else:
        from ..serve_mcp import serve
    serve(resident, agent())
