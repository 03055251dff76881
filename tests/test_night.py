"""One night for every front door (memstore.night.Night): `memstore consolidate`, the fleet's
task and the library's ``Store.consolidate`` run the same night with the same caches, so a
store consolidated through any of them holds the same log, and each leaves the same
embedding and key caches in the cache directory it was given."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from reliability_support import cli, make_store

from memstore.api import Store
from memstore.fleet.runner import run_one

DAY = [("We deploy on Fridays", "deploys", "decision"), ("We deploy on Fridays!", "deploys", "decision"),
       ("We never deploy on Fridays", "deploys", "decision"), ("The rate limit is 100 per minute", "limits", "fact"),
       ("The rate limit is now 300", "limits", "fact"), ("Lunch was pizza", None, "note"), ("Lunch was pizza", None, "note")]
NOW = "2026-03-09T03:00:00Z"


def _lived(path: Path) -> Path:
    store = make_store(path)
    for day, (text, subject, kind) in enumerate(DAY):
        row = {"text": text, "kind": kind} | ({"subject": subject} if subject else {})
        assert cli("--store", str(store), "remember", "--jsonl", "-", "--now", f"2026-03-0{day + 1}T10:00:00Z",
                   stdin=json.dumps(row).encode())[0] == 0
    return store


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_cli_the_fleet_and_the_library_run_the_same_night(tmp_path, monkeypatch):
    made = {}
    for door in ("cli", "fleet", "library"):
        store, cache = _lived(tmp_path / door / "store"), tmp_path / door / "cache"
        if door == "cli":
            monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(cache))
            assert cli("--store", str(store), "consolidate", "--now", NOW)[0] == 0
            monkeypatch.delenv("MEMSTORE_CACHE_DIR")
        elif door == "fleet":
            assert run_one(str(store), "consolidate", NOW, str(cache))["status"] == "ok"
        else:
            assert Store(store, cache_dir=cache).consolidate(now=NOW)
        made[door] = (_files(store / "log"), _files(cache))
    assert made["cli"] == made["fleet"] == made["library"]
    log, cache = made["cli"]
    assert any(name.startswith("hashing") for name in cache) and any(name.startswith("keys") for name in cache)


def test_the_library_night_keeps_nothing_without_a_cache_dir(tmp_path):
    import os

    store = _lived(tmp_path / "s")
    home = Path(os.environ["HOME"])
    before = _files(home)
    events = Store(store).consolidate(now=NOW)
    assert events and events[-1]["op"] == "mark"
    assert _files(home) == before  # (no cache written in the process's home either)
