"""Helpers for the recall tests: build a store from the relevance set through the CLI."""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

from memstore_cli.main import main

DATA = Path(__file__).parent / "data" / "relevance"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


def load_relevance_store(store: Path, tmp: Path, nightly: bool = False, weekly: bool = False) -> None:
    """The set written as it was said. The tests run no lifecycle; ``nightly`` runs consolidate
    at 03:00 after each day with memories and ``weekly`` distill at 03:05 each Sunday, as the
    README's cron lines do: what the lifecycle adds to recall on this set, or costs it."""
    from datetime import date, timedelta

    memories = [json.loads(line) for line in (DATA / "memories.jsonl").read_text().splitlines()]
    days = sorted({m["now"][:10] for m in memories})
    last = None
    for n, (now, group) in enumerate(groupby(memories, key=lambda m: m["now"])):
        if last is not None and now[:10] != last:
            _nights(store, last, now[:10], nightly, weekly)
        bulk = tmp / f"bulk{n}.jsonl"
        bulk.write_text("".join(json.dumps({k: v for k, v in m.items() if k != "now"},
                                           ensure_ascii=False) + "\n" for m in group))
        assert main(["--store", str(store), "-q", "remember", "--jsonl", str(bulk), "--now", now]) == 0
        last = now[:10]
    if last is not None:
        _nights(store, last, (date.fromisoformat(days[-1]) + timedelta(days=1)).isoformat(), nightly, weekly)


def _nights(store: Path, day: str, before: str, nightly: bool, weekly: bool) -> None:
    """The lifecycle from the night after ``day`` up to ``before`` (a later day with memories)."""
    from datetime import date, timedelta

    d = date.fromisoformat(day)
    end = date.fromisoformat(before)
    while d < end:
        nxt = d + timedelta(days=1)
        if nightly and d.isoformat() == day:
            assert main(["--store", str(store), "-q", "consolidate", "--now", f"{nxt}T03:00:00Z"]) == 0
        if weekly and nxt.weekday() == 6:
            assert main(["--store", str(store), "-q", "distill", "--now", f"{nxt}T03:05:00Z"]) == 0
        d = nxt


def write_config(store: Path, text: str) -> None:
    store.mkdir(parents=True, exist_ok=True)
    (store / "memstore.toml").write_text(text)
