"""Crash safety: SIGKILL at random points (seeded) and at the worst points on purpose.

After each kill: every id the process had printed is in the log, `verify --repair`
then `verify` are clean, and recall works with the indexes caught up. The full run
(>= 100 trials) is `python bench/reliability.py`; this suite runs a short seeded one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import (
    ID_LINE,
    KILLER,
    cli,
    crash_trials,
    injected_crash_trials,
    make_store,
    subprocess_env,
)
from reliability_support import kill_at as _kill_at

from memstore.store.layout import Layout
from memstore.store.open import load_state

T = "2026-06-07T09:00:00Z"


def test_kills_at_the_worst_points(tmp_path):
    stats = injected_crash_trials(tmp_path / "store", tmp_path / "work", trials=4, seed=7)
    assert stats.failures == []
    assert stats.killed_during == dict.fromkeys(("mid-write", "after-append", "before-replace", "before-manifest"), 1)
    assert stats.torn_tails >= 1 and stats.lost == stats.corrupt_lines == 0


def test_seeded_crash_trials(tmp_path):
    stats = crash_trials(tmp_path / "store", tmp_path / "work", trials=12, seed=20260607,
                         bulk_max=80, max_delay=0.8)
    assert stats.failures == []
    figures = stats.figures()
    assert figures["trials"] == 12 and figures["writes_acknowledged"] > 0
    assert figures["writes_lost"] == 0 and figures["corrupt_lines"] == 0


def kill_at(point: str, store: Path, *argv: str, frac: float = 0.5) -> subprocess.CompletedProcess:
    p = _kill_at(point, store, *argv, frac=frac)
    assert p.returncode == -9, p.stderr.decode()
    return p


@pytest.fixture
def seeded(tmp_path) -> Path:
    store = make_store(tmp_path / "store")
    for i in range(5):
        assert cli("--store", store, "remember", f"seeded memory {i} about billing", "--now", T)[0] == 0
    assert cli("--store", store, "recall", "billing", "--no-touch", "--now", T)[0] == 0
    return store


def log_bytes(store: Path) -> bytes:
    return (store / "log" / "2026-06.jsonl").read_bytes()


def test_killed_in_the_middle_of_a_bulk_append(seeded, tmp_path):
    before = log_bytes(seeded)
    bulk = tmp_path / "bulk.jsonl"
    bulk.write_text("".join(json.dumps({"text": f"bulk memory {i} " + "x" * 500}) + "\n" for i in range(200)))
    p = kill_at("mid-write", seeded, "remember", "--jsonl", str(bulk), "--now", T, frac=0.5)
    assert p.stdout == b""  # nothing was acknowledged
    written = log_bytes(seeded)[len(before):]
    prefix, torn = written[: written.rfind(b"\n") + 1], written[written.rfind(b"\n") + 1:]
    assert torn and len(prefix.splitlines()) == 100  # complete lines of the unacknowledged batch, then a fragment
    rc, out, _ = cli("--store", seeded, "verify")
    assert rc == 1 and ": torn final line (" in out
    rc, out, err = cli("--store", seeded, "verify", "--repair")
    assert rc == 0, out + err
    assert log_bytes(seeded) == before + prefix  # complete lines are never edited
    assert [p.read_bytes() for p in (seeded / "log" / "quarantine").iterdir()] == [torn]
    assert cli("--store", seeded, "verify")[0] == 0
    # the next writer is not blocked by the dead one's lock, and the retry succeeds
    rc, out, _ = cli("--store", seeded, "remember", "--jsonl", str(bulk), "--now", T)
    assert rc == 0 and len(out.split()) == 200
    assert cli("--store", seeded, "verify")[0] == 0


def test_killed_right_after_a_durable_append(seeded):
    """Unacknowledged but written: present (a retry then reinforces, never duplicates)."""
    kill_at("after-append", seeded, "remember", "written but never acknowledged", "--now", T)
    state, _ = load_state(Layout(seeded))
    assert any(m.text == "written but never acknowledged" for m in state.memories.values())
    rc, out, err = cli("--store", seeded, "remember", "written but never acknowledged", "--now", T)
    assert rc == 0 and err.startswith("reinforce")
    assert cli("--store", seeded, "verify")[0] == 0


def test_killed_while_writing_a_snapshot(seeded):
    kill_at("before-replace", seeded, "snapshot", "--now", T)
    (leftover,) = (seeded / "snapshots").iterdir()
    assert leftover.name.startswith(".state-") and ".tmp" in leftover.name
    rc, out, _ = cli("--store", seeded, "verify")
    assert rc == 1 and out.startswith(f"{leftover}:0: temporary file left by an interrupted write")
    assert cli("--store", seeded, "verify", "--repair")[0] == 0
    assert list((seeded / "snapshots").iterdir()) == []
    assert cli("--store", seeded, "snapshot", "--now", T)[0] == 0
    assert cli("--store", seeded, "verify")[0] == 0


def test_killed_between_index_commit_and_manifest(seeded):
    for i in range(3):
        assert cli("--store", seeded, "remember", f"later memory {i} about billing", "--now", T)[0] == 0
    kill_at("before-manifest", seeded, "index", "--now", T)
    rc, out, _ = cli("--store", seeded, "verify")
    assert rc == 1 and "index holds 8 documents, the log holds 5 records" in out
    rc, out, _ = cli("--store", seeded, "recall", "later memory billing", "--json", "--no-touch", "--now", T)
    assert rc == 0 and len({r["id"] for r in json.loads(out)["results"]}) == len(json.loads(out)["results"]) == 8
    assert cli("--store", seeded, "verify") == (0, "", cli("--store", seeded, "verify")[2])


def test_damaged_index_files_are_rebuilt_by_the_next_read(seeded):
    """Whatever a crash leaves in index/ (a half-written Tantivy file, a truncated vector
    file), the next read rebuilds the indexes from the log instead of failing."""
    assert cli("--store", seeded, "remember", "one more about billing", "--now", T)[0] == 0
    (seeded / "index" / "records" / "meta.json").write_text("garbage")
    for f in (seeded / "index" / "lexical").glob("*.store"):
        f.write_bytes(b"xx")
    (seeded / "index" / "vectors.usearch").write_bytes(b"\0" * 10)
    assert cli("--store", seeded, "verify")[0] == 1
    rc, out, err = cli("--store", seeded, "recall", "billing", "--json", "--no-touch", "--now", T)
    assert rc == 0 and len(json.loads(out)["results"]) == 6, err
    assert cli("--store", seeded, "verify")[0] == 0


def test_printed_ids_are_durable(seeded):
    """What a killed bulk run printed is exactly what the log holds for it."""
    p = subprocess.run([sys.executable, "-c", KILLER, "none", "0", "--store", str(seeded), "remember", "one more",
                        "--now", T], capture_output=True, env=subprocess_env(), timeout=60)
    assert p.returncode == 0
    (mid,) = [line for line in p.stdout.decode().split() if ID_LINE.match(line)]
    assert mid in load_state(Layout(seeded))[0].memories
