"""Drive `memstore serve` as a real subprocess: over MCP with the SDK's own stdio client
(``mcp_server``), or over JSON lines (``JsonlServer``); the CLI as a separate process
(``memstore``), as a cron job or a person would run it next to the server.

Every process gets the environment of tests/reliability_support.py (no MEMSTORE_*), plus
an embedding cache of its own: the shared one in ~/.cache may be large and growing under
other runs, and each server reads it (tail) per call.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from pathlib import Path

from reliability_support import MEMSTORE_SCRIPT, subprocess_env

HASHING = '[embedder]\nname = "hashing"\n'


def server_env(cache: Path) -> dict:
    return {**subprocess_env(), "MEMSTORE_CACHE_DIR": str(cache)}


def memstore(store: Path, *argv: str, cache: Path, agent: str | None = None, stdin: bytes = b"",
             env: dict | None = None) -> subprocess.CompletedProcess:
    """The installed console script against ``store``, in a process of its own (bytes out)."""
    pre = ["--store", str(store)] + (["--agent", agent] if agent else [])
    return subprocess.run([MEMSTORE_SCRIPT, *pre, *argv], input=stdin, capture_output=True,
                          env={**server_env(cache), **(env or {})}, timeout=120)


class Mcp:
    """A started MCP session: blocking calls through an anyio portal (pytest is sync)."""

    def __init__(self, portal, client, now: str):
        self.portal, self.client, self.now = portal, client, now

    def list_tools(self) -> list:
        return self.portal.call(self.client.list_tools).tools

    def call(self, tool: str, now: str | None = None, **args):
        """The raw CallToolResult; ``now`` always goes with the call (the session's default)."""
        return self.portal.call(self.client.call_tool, tool, {**args, "now": now or self.now})

    def ok(self, tool: str, now: str | None = None, **args) -> dict:
        """A call that must succeed: its structured result, which the text content repeats."""
        r = self.call(tool, now, **args)
        assert not r.is_error, (tool, r.content)
        assert len(r.content) == 1 and json.loads(r.content[0].text) == r.structured_content
        return r.structured_content

    def err(self, tool: str, now: str | None = None, **args) -> tuple[str, dict]:
        """A call that must fail: (its text, its structured {"error", "exit"})."""
        r = self.call(tool, now, **args)
        assert r.is_error, (tool, r.structured_content)
        assert len(r.content) == 1
        return r.content[0].text, r.structured_content


@contextlib.contextmanager
def mcp_server(store: Path, *, cache: Path, now: str, agent: str | None = None, stderr: Path | None = None):
    """``memstore --store STORE serve [--agent A]`` under the SDK's stdio client; the
    server's stderr goes to ``stderr`` (a file) when given."""
    import anyio.from_thread
    from mcp import StdioServerParameters
    from mcp.client import Client

    argv = ["--store", str(store), "serve"] + (["--agent", agent] if agent else [])
    if stderr is not None:  # the SDK hands the child its own stderr; a shell redirects it
        params = StdioServerParameters(command="/bin/sh", args=["-c", 'exec "$0" "$@" 2>>"$SERVE_ERR"',
                                                                MEMSTORE_SCRIPT, *argv],
                                       env={**server_env(cache), "SERVE_ERR": str(stderr)})
    else:
        params = StdioServerParameters(command=MEMSTORE_SCRIPT, args=argv, env=server_env(cache))
    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(params)) as client:
        yield Mcp(portal, client, now)


class JsonlServer:
    """``memstore serve --jsonl``: one request line in, one reply line out."""

    def __init__(self, store: Path, *, cache: Path, now: str, agent: str | None = None):
        argv = [MEMSTORE_SCRIPT, "--store", str(store), "serve", "--jsonl"] + (["--agent", agent] if agent else [])
        self.err = tempfile.TemporaryFile()  # not a pipe: nobody reads it until the end
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     env=server_env(cache))
        self.now = now
        self.sent = 0

    def send(self, line: bytes) -> dict:
        self.proc.stdin.write(line.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        assert reply.endswith(b"\n"), (reply, self.proc.poll())
        return json.loads(reply)

    def call(self, tool: str, now: str | None = None, **args) -> dict:
        self.sent += 1
        reply = self.send(json.dumps({"id": self.sent, "tool": tool,
                                      "arguments": {**args, "now": now or self.now}}).encode())
        assert reply["id"] == self.sent
        return reply

    def ok(self, tool: str, now: str | None = None, **args) -> dict:
        reply = self.call(tool, now, **args)
        assert reply["ok"] is True, reply
        return reply["result"]

    def close(self) -> tuple[int, bytes, bytes]:
        """End of input: the server exits; (status, what else it wrote, its stderr)."""
        out, _ = self.proc.communicate(timeout=60)
        self.err.seek(0)
        return self.proc.returncode, out, self.err.read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
