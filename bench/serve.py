"""Server benchmark: recall through `memstore serve` against in-process recall and the CLI.

    python bench/serve.py                          # 10k, 100k, 1M (builds as bench/recall.py does)
    python bench/serve.py --sizes 10000            # quick look
    python bench/serve.py --keep DIR --reuse       # time again on stores bench/recall.py --keep DIR built

Per size, over bench/recall.py's fixed query mix (8 questions, 5 with cue filters; a
warm-up round first), interleaved call by call so that every path sees the same machine
noise: in-process `memstore.recall.engine.recall` on indexes opened once; one resident
`memstore serve --jsonl` process; the MCP server (`memstore serve`) through the SDK's
stdio client when `mcp` is importable. Both servers get search_memory with touch=false and
an explicit now, and each call's wall time is taken at the client (request written, reply
read and parsed). Then `memstore recall ... --no-touch --json` as one process per call.
Every path must return the same ids as in-process recall (a wrong answer is not a fast one).

Catch-up: a `memstore remember` subprocess writes a probe, and the next call to a
server (asking for the probe, which must be found) pays the catch-up: the first server
asked applies the new events to its open indexes and writes them back, the second finds
the files past its watermark and reopens them; the call after it shows the steady cost
again. Then a few calls with touch: true (an agent's default: each writes a usage event
that the next call catches up with). Reported: p50/p99 ms per path, server / in-process
and CLI / server ratios (goal: server p50 within 1.5x of in-process), and the server's
overhead over in-process (p50 difference) per size: if it grew with n, a call would cost
O(n). The probes and usage events stay in a kept store (a few events among n).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import QUERIES, build  # noqa: E402  (bench/recall.py: the same stores and questions)

NOW = "2026-12-31T00:00:00Z"


def set_now(store: Path) -> None:
    """Every call's now: NOW, or the store's latest record time when a reused store has moved
    past it (the probes write, and writes move forward in time)."""
    global NOW
    from memstore.store.layout import Layout
    from memstore.store.log import read_head

    at = read_head(Layout(store)).at
    NOW = max("2026-12-31T00:00:00Z", at or "")
MEMSTORE = shutil.which("memstore") or "memstore"


def stats(times: list[float]) -> dict:
    t = sorted(times)
    # nearest rank: bench/recall.py's index at 200 calls, and the largest of a few
    return {"p50_ms": statistics.median(t), "p99_ms": t[math.ceil(len(t) * 0.99) - 1], "n": len(t)}


def ids(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


class InProcess:
    """bench/recall.py's in-process recall: indexes opened once, the engine called directly."""

    def __init__(self, store: Path):
        from memstore.config import load_config
        from memstore.index.sync import open_indexes
        from memstore.store.layout import Layout

        layout = Layout(store)
        self.config = load_config(layout.config_path.read_text())
        self.ix = open_indexes(layout, self.config, None)

    async def call(self, q: dict) -> dict:
        from memstore.recall.engine import recall
        from memstore.recall.request import build_request

        return recall(build_request(q, NOW), self.ix, now=NOW, config=self.config)


class Jsonl:
    """One `memstore serve --jsonl` process; a call is one line out, one line back."""

    def __init__(self, store: Path, env: dict):
        self.proc = subprocess.Popen([MEMSTORE, "--store", str(store), "serve", "--jsonl"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.seq = 0

    async def call(self, q: dict, touch: bool = False) -> dict:
        self.seq += 1
        line = {"id": self.seq, "tool": "search_memory", "arguments": {**q, "touch": touch, "now": NOW}}
        self.proc.stdin.write(json.dumps(line, ensure_ascii=False).encode() + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if not reply.get("ok") or reply["id"] != self.seq:
            raise SystemExit(f"serve --jsonl: {reply}")
        return reply["result"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Mcp:
    """The MCP server through the SDK's own stdio client."""

    def __init__(self, client):
        self.client = client

    async def call(self, q: dict) -> dict:
        r = await self.client.call_tool("search_memory", {**q, "touch": False, "now": NOW})
        if r.is_error:
            raise SystemExit(f"serve (MCP): {r.content[0].text}")
        return r.structured_content


def cli_args(q: dict) -> list[str]:
    args = [q["query"]]
    for opt in ("actor", "domain", "kind", "during"):
        for v in q.get(opt, ()):
            args += [f"--{opt}", v]
    return args


def cli(store: Path, q: dict, env: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    out = subprocess.run([MEMSTORE, "--store", str(store), "recall", *cli_args(q), "--now", NOW, "--no-touch",
                          "--json"], env=env, check=True, capture_output=True).stdout
    return time.perf_counter() - t, json.loads(out)


async def timed(path, q: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    result = await path.call(q)
    return (time.perf_counter() - t) * 1000, result


async def measure(store: Path, env: dict, rounds: int, cli_runs: int, probes: int, use_mcp: bool) -> dict:
    t = time.perf_counter()
    paths = {"in-process": InProcess(store)}
    open_s = time.perf_counter() - t
    paths["jsonl"] = Jsonl(store, env)
    if use_mcp:
        from mcp import StdioServerParameters
        from mcp.client import Client

        client = Client(StdioServerParameters(command=MEMSTORE, args=["--store", str(store), "serve"], env=env))
        await client.__aenter__()
        paths["mcp"] = Mcp(client)
    try:
        want, first_ms = {}, {}
        for q in QUERIES:  # warm-up; a server opens the store in its first call
            for name, p in paths.items():
                ms, result = await timed(p, q)
                first_ms.setdefault(name, ms)
                got = ids(result)
                want.setdefault(q["query"], got)
                if got != want[q["query"]]:
                    raise SystemExit(f"{name} answered {q['query']!r} differently: {got} vs {want[q['query']]}")
        times = {name: [] for name in paths}
        for _ in range(rounds):
            for q in QUERIES:
                for name, p in paths.items():  # interleaved: each path sees the same noise
                    ms, result = await timed(p, q)
                    times[name].append(ms)
                    if ids(result) != want[q["query"]]:
                        raise SystemExit(f"{name} answered {q['query']!r} differently")
        out = {name: stats(ts) for name, ts in times.items()}
        out["open_s"] = open_s
        out["first_call_s"] = {name: ms / 1000 for name, ms in first_ms.items() if name != "in-process"}
        cli_ms = []
        cli(store, QUERIES[0], env)  # warm: bytecode, page cache
        for i in range(cli_runs):
            q = QUERIES[i % len(QUERIES)]
            s, result = cli(store, q, env)
            cli_ms.append(s * 1000)
            if ids(result) != want[q["query"]]:
                raise SystemExit(f"the CLI answered {q['query']!r} differently")
        out["cli"] = stats(cli_ms)
        out["catch_up"] = await catch_up(store, env, paths, probes)
        return out
    finally:
        paths["jsonl"].close()
        if use_mcp:
            await client.__aexit__(None, None, None)


async def catch_up(store: Path, env: dict, paths: dict, probes: int) -> dict:
    """The first call after another process wrote, and the call after it (the same question).

    The first server asked catches its open indexes up in place and writes them back; a
    second server then finds the files past its own watermark and opens them afresh. The
    servers take turns at being first, so each role is timed on each server."""
    servers = [p for n, p in paths.items() if n != "in-process"]
    roles = ("catch-up", "reopen")[:len(servers)]
    times = {r: [] for r in roles}
    after = []
    write_ms = []
    first = []  # each server's first catch-up also loads the embedding cache (once per process)
    for i in range(-len(servers), probes):
        text = f"catchup probe zqx{time.time_ns()} rollback plan"
        t = time.perf_counter()
        mid = subprocess.run([MEMSTORE, "--store", str(store), "remember", text, "--kind", "note", "--now", NOW],
                             env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
        write_ms.append((time.perf_counter() - t) * 1000)
        q = {"query": text.split()[2]}
        order = servers[i % len(servers):] + servers[:i % len(servers)]
        for role, p in zip(roles, order, strict=True):
            ms, result = await timed(p, q)
            if mid not in ids(result):
                raise SystemExit(f"a server did not see {mid} after the write: {ids(result)}")
            (first if i < 0 and role == "catch-up" else times[role]).append(ms)
        for p in order:
            after.append((await timed(p, q))[0])
    return {"remember_ms": statistics.median(write_ms), "next_p50_ms": statistics.median(after),
            "first_catch_up_ms": first,
            **{r: {"p50_ms": statistics.median(ts), "max_ms": max(ts)} for r, ts in times.items()}}


async def timed_touch(server: Jsonl, q: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    result = await server.call(q, touch=True)
    return (time.perf_counter() - t) * 1000, result


async def touching(store: Path, env: dict, calls: int) -> dict:
    """search_memory as an agent calls it by default (touch: true, which writes a usage event
    the next call must catch up with), on a fresh `serve --jsonl`."""
    server = Jsonl(store, env)
    try:
        await server.call(QUERIES[0])  # open
        ms = []
        for i in range(calls):
            ms.append((await timed_touch(server, QUERIES[i % len(QUERIES)]))[0])
        await server.call(QUERIES[0])  # catches up with the last usage event: a kept store is left current
        return stats(ms)
    finally:
        server.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--rounds", type=int, default=25, help="rounds of the 8 questions per path (after a warm-up)")
    ap.add_argument("--cli-runs", type=int, default=20)
    ap.add_argument("--probes", type=int, default=5, help="writes from another process, for the catch-up cost")
    ap.add_argument("--touch-calls", type=int, default=8,
                    help="calls with touch: true (an agent's default; they write usage events); 0: none")
    ap.add_argument("--no-mcp", action="store_true", help="skip the MCP server even if the SDK is importable")
    ap.add_argument("--keep", help="keep stores under this directory (bench/recall.py's layout)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse stores an earlier run built there")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args()
    if args.reuse and not args.keep:
        ap.error("--reuse needs --keep DIR")
    try:
        import mcp.client  # noqa: F401
        use_mcp = not args.no_mcp
    except ImportError:
        use_mcp = False
    print(f"machine: {os.cpu_count()} cpu, python {sys.version.split()[0]}; MCP client: "
          f"{'yes' if use_mcp else 'no (mcp not importable or --no-mcp)'}")
    root = Path(args.keep or tempfile.mkdtemp(prefix="msbench-serve-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMSTORE_CACHE_DIR": str(root / "cache")}
    for var in ("PYTHONDONTWRITEBYTECODE", "MEMSTORE_AGENT", "MEMSTORE_NOW", "MEMSTORE_STORE"):
        env.pop(var, None)  # installed .pyc files; the owner, not a developer's agent; our --store and --now
    figures = {}
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            store = root / f"s{n}"
            built = root / f"s{n}.build.json"
            if args.reuse and built.exists():
                print(f"N={n:>8}: reusing the store built {json.loads(built.read_text())['built']}", flush=True)
            else:
                if store.exists():
                    shutil.rmtree(store)
                built.unlink(missing_ok=True)
                t = time.perf_counter()
                b = build(store, n, env)
                b["built"] = time.strftime("%Y-%m-%d %H:%M:%S")
                built.write_text(json.dumps(b))
                print(f"N={n:>8}: built in {time.perf_counter() - t:.0f} s", flush=True)
            set_now(store)
            t = time.perf_counter()
            r = asyncio.run(measure(store, env, args.rounds, args.cli_runs, args.probes, use_mcp))
            if args.touch_calls:
                r["touch"] = asyncio.run(touching(store, env, args.touch_calls))
            r["took_s"] = time.perf_counter() - t
            figures[n] = r
            report(n, r)
        if len(figures) > 1:
            print("server overhead over in-process, p50 ms (flat in n: no O(n) cost per call):")
            for name in ("jsonl", "mcp"):
                if name in figures[next(iter(figures))]:
                    print(f"  {name:>5}: " + ", ".join(f"{n:,}: {f[name]['p50_ms'] - f['in-process']['p50_ms']:+.2f}"
                                                     for n, f in figures.items()))
        if args.json:
            print(json.dumps(figures, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def report(n: int, r: dict) -> None:
    base = r["in-process"]["p50_ms"]
    print(f"N={n:>8}: measured in {r['took_s']:.0f} s; opened in {r['open_s']:.1f} s in-process; first server call "
          + ", ".join(f"{k} {v:.1f} s" for k, v in r["first_call_s"].items()) + " (it opens the store)")
    for name in ("in-process", "jsonl", "mcp", "cli"):
        if name not in r:
            continue
        s = r[name]
        ratio = "" if name == "in-process" else (
            f"  = {s['p50_ms'] / base:.2f}x in-process" if name != "cli"
            else f"  = {s['p50_ms'] / r['jsonl']['p50_ms']:.1f}x serve --jsonl")
        print(f"  {name:>10}: p50 {s['p50_ms']:7.1f} ms  p99 {s['p99_ms']:7.1f} ms over {s['n']} calls{ratio}")
    c = r["catch_up"]
    print("  a server's first catch-up (it loads the embedding cache): "
          + ", ".join(f"{ms:.0f} ms" for ms in c["first_catch_up_ms"]))
    print(f"  after a `memstore remember` ({c['remember_ms']:.0f} ms) from another process, the first call: "
          + "; ".join(f"{role} p50 {c[role]['p50_ms']:.1f} ms (max {c[role]['max_ms']:.1f})"
                      for role in ("catch-up", "reopen") if role in c)
          + f"; the call after it {c['next_p50_ms']:.1f} ms", flush=True)
    if "touch" in r:
        t = r["touch"]
        print(f"  touch: true (each call writes a usage event): p50 {t['p50_ms']:.1f} ms p99 {t['p99_ms']:.1f} ms"
              f" over {t['n']} calls = {t['p50_ms'] / base:.1f}x in-process", flush=True)

if __name__ == "__main__":
    main()
