"""A history import into a big store (issue [6/6]): the events already held are found by
scanning the log's bytes for the import's event times (``writes._held_fingerprints``)
instead of fingerprinting every event of the log. The log it writes must be the one the
full read gives, byte for byte: for a history partly imported already, one the target
holds none of, one whose times the target's own events share, and a log with a line out
of seq order (the full read decides there)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_support import cli, make_store

from memstore import writes


def _day(d: int) -> str:
    return f"2026-03-{d + 1:02d}T09:00:00Z"


def _run(store: Path, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    return cli("--store", str(store), *argv, stdin=stdin)


def _source(root: Path) -> list[str]:
    """A history of 20 days: memories, repeats, consolidations (one `at` per day)."""
    src = make_store(root / "src")
    for d in range(20):
        rows = [{"text": f"day {d} note {i} about the billing service"} for i in range(3)]
        rows.append({"text": f"day {d % 5} note 0 about the billing service"})  # a repeat: a reinforce
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
        assert _run(src, "remember", "--jsonl", "-", "--now", _day(d), stdin=body)[0] == 0
        assert _run(src, "consolidate", "--now", _day(d))[0] == 0
    code, out, err = _run(src, "export", "--history", "--now", _day(21))
    assert code == 0, err
    return out.splitlines(keepends=True)


def _import(store: Path, lines: list[str], path: Path) -> tuple[int, str]:
    path.write_text("".join(lines))
    code, out, err = _run(store, "import", str(path), "--json", "--now", _day(25))
    assert code == 0, err
    return json.loads(out)["imported"], b"".join(p.read_bytes() for p in sorted((store / "log").glob("*.jsonl")))


@pytest.mark.parametrize("case", ["partly held", "none held", "shared times", "a line out of order"])
def test_the_scan_writes_the_log_the_full_read_writes(tmp_path, monkeypatch, case):
    history = _source(tmp_path)
    target = make_store(tmp_path / "t")
    if case == "partly held":
        _import(target, history[: len(history) // 2], tmp_path / "half.jsonl")
    elif case == "shared times":  # the target's own events at the history's times
        for d in range(0, 20, 3):
            assert _run(target, "remember", f"the target's own note of day {d}", "--now", _day(d),
                        "--allow-past")[0] == 0
        _import(target, history[::4], tmp_path / "some.jsonl")
    elif case == "a line out of order":
        _import(target, history[:30], tmp_path / "first.jsonl")
        log = next((target / "log").glob("*.jsonl"))
        lines = log.read_bytes().splitlines(keepends=True)
        log.write_bytes(b"".join([*lines[:20], lines[5], *lines[20:]]))  # seq 6 again: readers skip it
    full = tmp_path / "full"
    shutil.copytree(target, full)
    seen: list[object] = []
    held = writes._held_fingerprints
    monkeypatch.setattr(writes, "_held_fingerprints", lambda *a: seen.append(held(*a)) or seen[-1])
    got = _import(target, history, tmp_path / "all.jsonl")
    assert (seen[0] is None) is (case == "a line out of order")
    monkeypatch.setattr(writes, "_held_fingerprints", lambda *a: None)
    assert _import(full, history, tmp_path / "all.jsonl") == got
    assert got[0] > 0
    assert _import(target, history, tmp_path / "all.jsonl")[0] == 0  # and again: all held


def test_too_many_times_read_the_log(tmp_path, monkeypatch):
    history = _source(tmp_path)
    monkeypatch.setattr(writes, "_SCAN_TIMES", 5)
    assert writes._held_fingerprints(make_store(tmp_path / "t"), [json.loads(x) for x in history]) is None
