"""A whole state opened from its snapshot plus the log after it, in-process, through this
checkout and another, interleaved.

    python bench/open_state.py --store DIR --other OLD_CHECKOUT [--pairs 2] [--reads 100]

Each run is a fresh process whose imports come from this checkout or from --other (a
``git worktree add`` of an older commit; the same virtual environment). It times
``store.open.load_state`` (the newest usable snapshot and the tail; the store is only
read), then --reads records read by id (spread over the store; what the MCP server's tools
and ``Store.state().resolve`` do), then a listing of every record (``State.ordered``, what a
whole scan pays), and prints each step's seconds, the peak RSS after the reads and after
the listing, and a digest of the listing (the two versions must agree). Runs alternate
(other, this, this, other, ...), since this machine's speed drifts by more than the
differences measured. Not a test (outside tests/).
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
from memstore.store.layout import Layout
from memstore.store.open import load_state

def _ids(layout):
    import pyarrow.parquet as pq

    newest = sorted((layout.root / "snapshots").glob("state-*.parquet"))[-1]
    return pq.read_table(newest, columns=["id"]).column("id").to_pylist()

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024

layout, reads = Layout(Path(sys.argv[1])), int(sys.argv[2])
t = time.perf_counter()
state, _ = load_state(layout)
load = time.perf_counter() - t
ids = _ids(layout)  # (outside the timings: the newest snapshot's id column)
step = max(1, len(ids) // max(1, reads))
t = time.perf_counter()
got = [state.memories.get(i) for i in ids[::step][:reads]]
read = time.perf_counter() - t
after_reads = rss()
t = time.perf_counter()
records = state.ordered()
listing = time.perf_counter() - t
h = hashlib.sha256()
for m in records:
    h.update(m.id.encode())
    h.update(repr(m).encode())
print(json.dumps({"load_s": round(load, 2), "reads": len(got), "read_s": round(read, 3),
                  "rss_after_reads_mb": after_reads, "list_s": round(listing, 2), "rss_mb": rss(),
                  "records": len(records), "digest": h.hexdigest()[:16]}))
"""


def run(src: Path, store: Path, reads: int) -> dict:
    env = {**os.environ, "SRC": str(src)}
    p = subprocess.run([sys.executable, "-c", CHILD, str(store), str(reads)], env=env, capture_output=True,
                       text=True, check=False)
    if p.returncode:
        raise SystemExit(f"{src}: {p.stderr.strip()[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--other", type=Path, required=True, help="another checkout (git worktree add DIR REV)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--reads", type=int, default=100)
    args = ap.parse_args()
    out: dict[str, list[dict]] = {"this": [], "other": []}
    for k in range(args.pairs):
        for name in (("other", "this") if k % 2 == 0 else ("this", "other")):
            r = run(HERE if name == "this" else args.other, args.store, args.reads)
            out[name].append(r)
            print(f"{name:5}  {json.dumps(r)}", file=sys.stderr, flush=True)
    digests = {r["digest"] for rs in out.values() for r in rs}
    for key in ("load_s", "read_s", "list_s", "rss_after_reads_mb", "rss_mb"):
        a, b = (sum(r[key] for r in out[n]) for n in ("this", "other"))
        print(f"{key:19} this {[r[key] for r in out['this']]}  other {[r[key] for r in out['other']]}"
              f"  ratio {a / b if b else float('nan'):.2f}")
    print("same listing" if len(digests) == 1 else f"LISTINGS DIFFER: {sorted(digests)}")


if __name__ == "__main__":
    main()
