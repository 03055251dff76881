"""Several stores in one process (the resident server, the fleet, a test run): what one
store's commands leave in the process never changes what another's write.

Each store has its own embedding cache. A night's near-duplicate vectors used to be held in
one memo for the whole process, keyed by the embedder's name: a second store's night found
the texts it shared with the first there, never asked its own cached embedder for them, so
its cache lacked them and its snapshot's groups file listed those groups without vectors.
Here two stores sharing texts are lived through in one process in both orders, and every
file under each store and each cache is the same byte for byte whichever ran first.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from reliability_support import cli, make_store

from memstore.nightcache import neargroups

START_DAY = 1
SHARED = ["We deploy on Fridays at noon", "Deploys happen on Friday at noon", "We deploy Friday noon",
          "Billing runs on Postgres", "Billing runs on Postgres now"]
OWN = {"a": ["The office plants need water", "Water the office plants"],
       "b": ["The coffee machine is broken", "The coffee machine is broken again"]}


def _day(d: int) -> str:
    return f"2026-05-{START_DAY + d:02d}T18:00:00Z"


def _live(store: Path, cache: Path, name: str, monkeypatch) -> None:
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(cache))
    texts = SHARED + OWN[name]
    for d, text in enumerate(texts):
        subject = "billing" if "Billing" in text else ("deploys" if "eploy" in text else name)
        row = json.dumps({"text": text, "subject": subject})
        code, _out, err = cli("--store", str(store), "remember", "--jsonl", "-", "--now", _day(d), stdin=row.encode())
        assert code == 0, err
        assert cli("--store", str(store), "consolidate", "--now", _day(d))[0] == 0
    assert cli("--store", str(store), "snapshot", "--now", _day(len(texts)))[0] == 0


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def small_groups(monkeypatch):
    monkeypatch.setattr(neargroups, "LEAST", 2)  # (vectors for these stores' small groups)


def test_two_stores_in_one_process_write_the_same_files_in_either_order(tmp_path, monkeypatch, small_groups):
    made: dict[str, dict[str, dict[str, str]]] = {}
    for order in (("a", "b"), ("b", "a")):
        base = tmp_path / "".join(order)
        for name in order:
            store, cache = make_store(base / name / "store"), base / name / "cache"
            _live(store, cache, name, monkeypatch)
            made.setdefault(name, {})["".join(order)] = {**_files(store), **{f"cache/{k}": v for k, v in _files(cache).items()}}
    for name, runs in made.items():
        first, second = runs.values()
        assert any(k.endswith(".near") for k in first), name  # (the groups file was written)
        assert first == second, name
