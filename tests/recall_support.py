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


def load_relevance_store(store: Path, tmp: Path) -> None:
    memories = [json.loads(line) for line in (DATA / "memories.jsonl").read_text().splitlines()]
    for n, (now, group) in enumerate(groupby(memories, key=lambda m: m["now"])):
        bulk = tmp / f"bulk{n}.jsonl"
        bulk.write_text("".join(json.dumps({k: v for k, v in m.items() if k != "now"},
                                           ensure_ascii=False) + "\n" for m in group))
        assert main(["--store", str(store), "-q", "remember", "--jsonl", str(bulk), "--now", now]) == 0


def write_config(store: Path, text: str) -> None:
    store.mkdir(parents=True, exist_ok=True)
    (store / "memstore.toml").write_text(text)
