"""Damage every kind of file under a store, then check what the read commands answer.

    python bench/damage.py [--seed 1] [--sample N]

Builds a store over four months with the hashing embedder (every file kind: log partitions,
snapshots, index/records, index/lexical, index/vectors.usearch and its sidecars, every
manifest, the embedding cache), a second one with other texts, and keeps a copy from earlier
in the first one's life. For every file kind: truncate to 0 and to half, XOR 16 seeded bytes,
swap with the other store's file, set back to the earlier copy. After each damage the reads
(recall --no-touch, show, stats, export, export --history, judge, log, conflicts, verify)
are compared with what a store rebuilt from the damaged store's own log and memstore.toml
answers: EXACT, REFUSED, WARNED (acceptable only for damage to the log), AS-UNDAMAGED (log damage
answered as the undamaged store did: reported), SILENT-WRONG (must
be 0), CRASH, HANG. Then `verify --repair` runs and every read must answer exactly what the
rebuilt store answers after its own repair. Prints the table and each case that broke a
promise; exits 1 if any did. --sample N: one damage for each of the first N kinds (what
tests/test_damage.py runs).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from damage_support import damage_run  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample", type=int, help="one damage per file kind, for the first N kinds")
    a = p.parse_args()
    start = time.monotonic()

    def progress(n, total, r):
        if n % 20 == 0:
            print(f"  {n + 1}/{total} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="memstore-damage-") as tmp:
        report = damage_run(Path(tmp), seed=a.seed, sample=a.sample, progress=progress)
    print(f"seed {a.seed}, {time.monotonic() - start:.0f} s")
    print(report.table())
    bad = report.bad()
    if bad:
        print(f"\n{len(bad)} damage(s) that broke a promise (reproduce: damage the named file of a store "
              "built by tests/damage_support.build, as described):")
        print("\n".join("  " + line for line in bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
