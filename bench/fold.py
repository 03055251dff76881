"""The fold of a whole log, in-process, against another checkout's code.

    python bench/fold.py --store DIR/s1000000 --other OLD_CHECKOUT --pairs 1
    python bench/fold.py --store DIR --micro        # also the per-record steps, this checkout

Each run is a fresh process that imports memstore from this checkout or from --other (a
``git worktree add`` of an older commit) and times ``store.open.load_state`` with no
snapshot: every line read, checked (``schema``) and folded (``fold``), as `verify`, a
`snapshot` without an earlier one and any open of a store never snapshotted do. Runs
alternate (other, this, this, other, ...) since this machine's speed drifts; the states must
hold the same records (a digest of their rows, after the timing). --micro times, on the
log's first remembered records, ``model.evolve`` against ``dataclasses.replace`` and
``schema.check_record`` against ``check_record_fully`` (per call, this checkout only). Not a
test (outside tests/).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import hashlib, json, os, sys, time
sys.path.insert(0, sys.argv[1])
import memstore
if not memstore.__file__.startswith(sys.argv[1]):
    raise SystemExit(f"memstore came from {memstore.__file__}, not from {sys.argv[1]}")
from pathlib import Path
from memstore.codec import dumps
from memstore.model import memory_to_dict
from memstore.store.layout import Layout
from memstore.store.open import load_state
t = time.perf_counter()
state, _reader = load_state(Layout(Path(sys.argv[2])), use_snapshots=False)
wall = time.perf_counter() - t
h = hashlib.sha256()
for m in state.ordered():
    h.update(dumps(memory_to_dict(m)))
print(json.dumps({"wall": round(wall, 2), "records": len(state.memories), "seq": state.seq,
                  "digest": h.hexdigest()[:16]}))
"""


def micro(store: Path) -> None:
    import timeit
    from dataclasses import replace

    sys.path.insert(0, str(HERE))
    from memstore.codec import loads
    from memstore.model import evolve, memory_from_dict
    from memstore.schema import check_record, check_record_fully
    from memstore.store.layout import Layout
    from memstore.store.log import log_files

    records = []
    with open(log_files(Layout(store))[0], "rb") as fh:
        for line in fh:
            e = loads(line)
            if e.get("op") == "remember":
                records.append(e["memory"])
            if len(records) == 1000:
                break
    built = [memory_from_dict(d) for d in records]

    def per(fn) -> float:
        return min(timeit.repeat(fn, number=1, repeat=5)) / len(records) * 1e6

    print(f"evolve {per(lambda: [evolve(m, status='archived', merged_into=m.id) for m in built]):.2f} us, "
          f"dataclasses.replace {per(lambda: [replace(m, status='archived', merged_into=m.id) for m in built]):.2f} us")
    print(f"check_record {per(lambda: [check_record(d) for d in records]):.2f} us, "
          f"check_record_fully {per(lambda: [check_record_fully(d) for d in records]):.2f} us "
          f"(over the log's first {len(records)} remembered records)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--other", type=Path, help="another checkout to compare with (a git worktree)")
    p.add_argument("--pairs", type=int, default=1)
    p.add_argument("--micro", action="store_true", help="also time evolve and check_record per record")
    a = p.parse_args()
    if a.micro:
        micro(a.store)
    order = ["this"] * a.pairs if a.other is None else \
        [w for i in range(a.pairs) for w in (("other", "this") if i % 2 == 0 else ("this", "other"))]
    runs: dict[str, list[dict]] = {"this": [], "other": []}
    for who in order:
        src = HERE if who == "this" else a.other.resolve()
        out = subprocess.run([sys.executable, "-c", CHILD, str(src) + "/", str(a.store)], capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"fold: the run from {src} failed:\n{out.stderr[-2000:]}")
        got = json.loads(out.stdout.strip().splitlines()[-1])
        runs[who].append(got)
        print(who, json.dumps(got), flush=True)
    if runs["other"]:
        digests = {r["digest"] for rs in runs.values() for r in rs}
        print("the same records" if len(digests) == 1 else f"RECORDS DIFFER: {sorted(digests)}")
        this, other = (sum(r["wall"] for r in runs[w]) for w in ("this", "other"))
        print(f"wall: this {this:.1f} / other {other:.1f} = {this / other:.2f}x")


if __name__ == "__main__":
    main()
