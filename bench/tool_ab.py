"""One MCP tool call (memstore.tools.call, what `memstore serve` runs for a tools/call) through
this checkout and another, in-process, interleaved: wall time, peak RSS, the same answer.

    python bench/tool_ab.py --store DIR --other OLD_CHECKOUT --tool list_conflicts \\
        --args '{}' --now 2027-01-03T00:00:00Z [--runs 2]

Each run is a fresh process whose imports come from this checkout or from --other (a
``git worktree add`` of an older commit; the same virtual environment) that opens the
store as the server does (``memstore.resident.Resident``) and makes the one call. Use a
tool that writes nothing (list_conflicts, search_memory with touch false, preamble,
judge, read_my_notes, harmonize without apply), or a copy of the store. Opening the
indexes catches them up with the log (derived files, written): on a store whose indexes are
behind, the first run pays for that; run once before, or read the later pairs. Runs
alternate (other, this, this, other, ...). Not a test (outside tests/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import hashlib, json, os, resource, sys, time
sys.path.insert(0, os.environ["SRC"])
from pathlib import Path

import memstore
if not Path(memstore.__file__).resolve().is_relative_to(Path(os.environ["SRC"]).resolve()):
    raise SystemExit(f"memstore came from {memstore.__file__}, not from {os.environ['SRC']}")
from memstore import tools
from memstore.resident import Resident

store, tool, args, now, agent = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], sys.argv[5] or None
t = time.perf_counter()
got = tools.call(Resident(store), tool, args, now=now, agent=agent)
wall = time.perf_counter() - t
print(json.dumps({"wall": round(wall, 2), "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                  "answer": hashlib.sha256(json.dumps(got, sort_keys=True).encode()).hexdigest()[:16]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--other", type=Path, required=True, help="another checkout (git worktree add DIR REV)")
    ap.add_argument("--tool", required=True)
    ap.add_argument("--args", default="{}", help="the tool's arguments, a JSON object")
    ap.add_argument("--now", required=True)
    ap.add_argument("--agent", default="")
    ap.add_argument("--runs", type=int, default=2, help="pairs of runs")
    a = ap.parse_args()
    out: dict[str, list[dict]] = {"this": [], "other": []}
    for k in range(a.runs):
        for name in (("other", "this") if k % 2 == 0 else ("this", "other")):
            src = HERE if name == "this" else a.other
            p = subprocess.run([sys.executable, "-c", CHILD, str(a.store), a.tool, a.args, a.now, a.agent],
                               env={**os.environ, "SRC": str(src)}, capture_output=True, text=True, check=False)
            if p.returncode:
                raise SystemExit(f"{src}: {p.stderr.strip()[-2000:]}")
            r = json.loads(p.stdout.strip().splitlines()[-1])
            out[name].append(r)
            print(f"{name:5}  {r['wall']:7.2f} s  {r['rss_mb']:6d} MB  answer {r['answer']}", flush=True)
    answers = {r["answer"] for rs in out.values() for r in rs}
    print("the same answer" if len(answers) == 1 else f"ANSWERS DIFFER: {sorted(answers)}")
    for key in ("wall", "rss_mb"):
        t, o = (sum(r[key] for r in out[n]) for n in ("this", "other"))
        print(f"{key}: this {t:.2f} / other {o:.2f} = {t / o:.2f}x")


if __name__ == "__main__":
    main()
