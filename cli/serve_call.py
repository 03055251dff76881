"""One tool call at the server's edge: the clock is read here, errors become results."""

from __future__ import annotations

import sys
import traceback

# The tools that only read, as the CLI's reads (recall, preamble, judge, conflicts): on a
# store that does not exist they say so (a typo'd --store) instead of answering empty.
# read_my_notes and harmonize answer empty there, as `notes show` and `harmonize` do.
STORE_READS = frozenset({"search_memory", "preamble", "judge", "list_conflicts"})


def answer(resident, tool, arguments, agent: str | None) -> dict:
    """{"ok": true, "result": ...} or {"ok": false, "error": ..., "exit": N}."""
    from memstore import tools
    from memstore.errors import MemstoreError

    from .common import resolve_now

    if tool == "list_tools":
        return {"ok": True, "result": {"tools": [
            {"name": n, "description": t["description"], "input_schema": t["schema"]} for n, t in tools.TOOLS.items()]}}
    if not isinstance(tool, str):
        return {"ok": False, "error": "tool must be a tool name (list_tools lists them)", "exit": 2}
    args = {} if arguments is None else arguments
    try:
        if tool in STORE_READS and not resident.layout.root_exists():
            from memstore.errors import StoreError
            from memstore.store.layout import show_path

            raise StoreError(f"no such store: {show_path(resident.layout.root)} "
                             "(remember something first, or check --store / $MEMSTORE_DIR)")
        now = resolve_now(None) if not isinstance(args, dict) or args.get("now") is None else args["now"]
        return {"ok": True, "result": tools.call(resident, tool, args, now=now, agent=agent)}
    except MemstoreError as exc:
        return {"ok": False, "error": str(exc), "exit": exc.exit_code}
    except Exception as exc:  # a bug: reported, and the server stays up for the next call
        traceback.print_exc(file=sys.stderr)
        return {"ok": False, "error": f"internal error ({type(exc).__name__}); see the server's stderr",
                "exit": 70}
