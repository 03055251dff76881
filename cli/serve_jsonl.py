"""`memstore serve --jsonl`: the tools over JSON lines on stdin/stdout (shells, tests)."""

from __future__ import annotations

import sys

from .output import write_bytes
from .serve_call import answer


def serve(resident, agent: str | None) -> None:
    from memstore.codec import dumps, loads

    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        try:
            request = loads(raw)
        except Exception:
            request = None
        if not isinstance(request, dict):
            reply = {"id": None, "ok": False, "error": "each line must be a JSON object "
                     '{"id": ..., "tool": NAME, "arguments": {...}}', "exit": 2}
        else:
            reply = {"id": request.get("id"), **answer(resident, request.get("tool"), request.get("arguments"), agent)}
        write_bytes(dumps(reply) + b"\n")  # flushed: the caller waits for each answer
