"""Reading commands: show, log, export, snapshot, config, init."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tomllib

import pyarrow.parquet as pq
import pytest
from conftest import BAD_NOW, LATER, NOW, log_lines, store_digest, write_jsonl

from memstore.config import load_config, thaw
from memstore.model import memory_id
from memstore.state import State, digest
from memstore.store.layout import Layout
from memstore.store.log import position_after
from memstore.store.open import load_state
from memstore.store.snapshot import snapshot_files, write_snapshot

HELLO_ID = "mc30813bab1ad9c7"
DB_ID = memory_id("We decided to use Postgres", "db", None)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def populated(ms, store, tmp_path):
    """Two June memories (one reinforced, one keyed) and a July one in a second partition."""
    assert ms("remember", "hello world note").rc == 0
    assert ms("remember", "We decided to use Postgres", "--subject", "db", "--actor", "alice",
              "--key", "D-1").rc == 0
    assert ms("remember", "hello world note", now=LATER).rc == 0
    assert ms("remember", "July plans: hire two engineers", now="2026-07-02T08:00:00Z").rc == 0
    return store


# --- show -----------------------------------------------------------------------------------

def test_show_text(ms, populated):
    r = ms("show", HELLO_ID, now="2026-07-03T00:00:00Z")
    assert (r.rc, r.err) == (0, "")
    lines = r.lines
    assert lines[:3] == ["id                 mc30813bab1ad9c7",
                         "text               hello world note",
                         "recorded_at        2026-06-07T09:30:00Z"]
    assert "time_buckets       2026, 2026-06, 2026-06-07, 2026-W23" in lines
    assert ("salience           importance=0.5 urgency=0.5 risk=0.5 novelty=0.5 emotion=0.5 "
            "recurrence=0.5 actionability=0.5") in lines  # recurrence: max(0.5, 1 - 1/2)
    assert "mention_count      2" in lines
    assert "subject            -" in lines and "actors             -" in lines
    assert lines[-3:] == ["events",
                          "       1  2026-06-07T09:30:00Z  remember   mc30813bab1ad9c7 'hello world note'",
                          "       3  2026-06-08T10:00:00Z  reinforce  mc30813bab1ad9c7"]


def test_show_by_key_json(ms, populated):
    by_key = ms("show", "D-1", "--json").json()
    assert by_key == ms("show", DB_ID, "--json").json()
    assert by_key["memory"]["key"] == "D-1" and by_key["memory"]["actors"] == ["alice"]
    assert by_key["events"] == [e for e in log_lines(populated) if e["seq"] == 2]


def test_show_unknown(ms, populated):
    before = store_digest(populated)
    r = ms("show", "nope")
    assert (r.rc, r.out, r.err) == (
        1, "", "Error: no memory with id or key 'nope'; list ids with `memstore export` or `memstore log`\n")
    assert store_digest(populated) == before


def test_show_on_a_missing_store(ms, store):
    assert ms("show", HELLO_ID).rc == 1
    assert not store.exists()


def test_show_bad_now(ms, populated):
    r = ms("show", HELLO_ID, now="garbage")
    assert (r.rc, r.out, r.err) == (2, "", BAD_NOW)


# --- log ------------------------------------------------------------------------------------

def test_log_text_and_filters(ms, populated):
    r = ms("log")
    assert (r.rc, r.err) == (0, "")
    july_id = memory_id("July plans: hire two engineers", None, None)
    assert r.lines == [
        f"     1  2026-06-07T09:30:00Z  remember   {HELLO_ID} 'hello world note'",
        f"     2  2026-06-07T09:30:00Z  remember   {DB_ID} 'We decided to use Postgres'",
        f"     3  2026-06-08T10:00:00Z  reinforce  {HELLO_ID}",
        f"     4  2026-07-02T08:00:00Z  remember   {july_id} 'July plans: hire two engineers'",
    ]
    assert [line.split()[0] for line in ms("log", "--op", "reinforce").lines] == ["3"]
    assert [line.split()[0] for line in ms("log", "--op", "reinforce", "--op", "remember").lines] == \
        ["1", "2", "3", "4"]
    assert [line.split()[0] for line in ms("log", "--since", "2026-06-08").lines] == ["3", "4"]
    assert [line.split()[0] for line in ms("log", "--until", "2026-06-08T10:00:00Z").lines] == ["1", "2"]
    assert [line.split()[0] for line in ms("log", "--limit", "2").lines] == ["3", "4"]


def test_log_json_is_the_log_itself(ms, populated):
    r = ms("log", "--json")
    raw = b"".join(p.read_bytes() for p in sorted((populated / "log").glob("*.jsonl")))
    assert r.out.encode() == raw


@pytest.mark.parametrize("args,err", [
    (["--since", "garbage"], "Error: --since 'garbage' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z\n"),
    (["--limit", "0"], "Error: Invalid value for '--limit': 0 is not in the range x>=1.\n"),
])
def test_log_bad_options(ms, populated, args, err):
    before = store_digest(populated)
    r = ms("log", *args)
    assert (r.rc, r.out, r.err) == (2, "", err)
    assert store_digest(populated) == before


# --- export ---------------------------------------------------------------------------------

def test_export_jsonl_in_creation_order(ms, populated):
    rows = ms("export").jsonl()
    assert [r["id"] for r in rows] == [HELLO_ID, DB_ID, memory_id("July plans: hire two engineers", None, None)]
    assert [r["seq"] for r in rows] == [1, 2, 4]
    assert rows[0]["mention_count"] == 2


def test_export_history_is_the_log(ms, populated):
    assert ms("export", "--history").jsonl() == log_lines(populated)


def test_export_parquet_matches_jsonl(ms, populated, tmp_path):
    out = tmp_path / "state.parquet"
    r = ms("export", "--format", "parquet", "--output", str(out))
    assert (r.rc, r.out, r.err) == (0, "", "")
    table = pq.read_table(out)
    assert table.to_pylist() == ms("export").jsonl()


def test_export_to_a_file(ms, populated, tmp_path):
    out = tmp_path / "state.jsonl"
    assert ms("export", "--output", str(out)).out == ""
    assert out.read_text() == ms("export").out


def test_export_empty_and_missing_store(ms, store):
    r = ms("export")
    assert (r.rc, r.out) == (1, "") and r.err.startswith(f"Error: no such store: {store} ")
    assert not store.exists()
    store.mkdir()
    r = ms("export")
    assert (r.rc, r.out, r.err) == (0, "", "")


@pytest.mark.parametrize("args,err", [
    (["--format", "csv"], "Error: --format 'csv' is not one of: jsonl, parquet, markdown\n"),
    (["--history", "--format", "parquet", "--output", "x.parquet"],
     "Error: --history is written as jsonl; drop --format parquet\n"),
])
def test_export_bad_options(ms, populated, args, err):
    before = store_digest(populated)
    r = ms("export", *args)
    assert (r.rc, r.out, r.err) == (2, "", err)
    assert store_digest(populated) == before


# --- snapshot -------------------------------------------------------------------------------

def test_snapshot_is_a_cache(ms, populated):
    outputs = lambda: (ms("export").out, ms("show", HELLO_ID, "--json").out, ms("log").out)  # noqa: E731
    without = outputs()
    r = ms("snapshot")
    path = populated / "snapshots" / "state-000000000004.parquet"
    assert (r.rc, r.out, r.err) == (0, "", f"{path}  seq=4 rows=3\n")
    assert outputs() == without
    # events after the snapshot are read from the log tail, in the same and in a new partition
    assert ms("remember", "hello world note", now="2026-07-05T00:00:00Z").rc == 0
    assert ms("remember", "an August memory", now="2026-08-01T00:00:00Z").rc == 0
    assert ms("remember", "We decided to use Postgres", "--subject", "db", now="2026-08-02T00:00:00Z").rc == 0
    with_tail = outputs()
    rows = json.loads("[" + ",".join(with_tail[0].splitlines()) + "]")
    assert [r["mention_count"] for r in rows] == [3, 2, 1, 1]
    shutil.rmtree(populated / "snapshots")
    assert outputs() == with_tail


def test_snapshot_json_and_modes(ms, populated):
    r = ms("snapshot", "--json")
    assert r.json() == {"path": str(populated / "snapshots" / "state-000000000004.parquet"), "rows": 3, "seq": 4}
    assert mode(populated / "snapshots") == 0o700
    assert mode(r.json()["path"]) == 0o600


def test_snapshot_of_an_empty_store(ms, store):
    r = ms("snapshot", "--json")
    assert r.rc == 0 and r.json()["seq"] == 0 and r.json()["rows"] == 0
    assert ms("export").out == ""


def test_two_newest_snapshots_are_kept(ms, populated):
    ms("snapshot")
    ms("remember", "one more", now="2026-07-03T00:00:00Z")
    ms("snapshot", now="2026-07-03T00:00:00Z")
    ms("remember", "and another", now="2026-07-04T00:00:00Z")
    ms("snapshot", now="2026-07-04T00:00:00Z")
    assert [seq for seq, _ in snapshot_files(Layout(populated))] == [5, 6]


def test_opening_reads_the_snapshot_then_the_tail(ms, populated):
    """Prove the snapshot is used: plant a record only a snapshot can supply."""
    layout = Layout(populated)
    state, _ = load_state(layout, use_snapshots=False)
    planted = state.copy()
    marker = state.memories[HELLO_ID].__class__(
        id="m000000000000000", text="only in the snapshot", recorded_at=NOW, occurred_at="2026",
        precision="year", seq=1)
    planted.memories[marker.id] = marker
    write_snapshot(layout, planted, position_after(layout))
    ms("remember", "after the snapshot", now="2026-07-05T00:00:00Z")
    opened, _ = load_state(layout)
    assert "m000000000000000" in opened.memories
    assert memory_id("after the snapshot", None, None) in opened.memories
    replayed, _ = load_state(layout, use_snapshots=False)
    assert "m000000000000000" not in replayed.memories


def test_damaged_or_overreaching_snapshots_are_ignored(ms, populated):
    layout = Layout(populated)
    truth = digest(load_state(layout, use_snapshots=False)[0])
    ms("snapshot")
    (populated / "snapshots" / "state-000000000009.parquet").write_bytes(b"not parquet")
    assert digest(load_state(layout)[0]) == truth
    (populated / "snapshots" / "state-000000000009.parquet").unlink()
    fake = State(seq=99)
    write_snapshot(layout, fake, None)  # claims more than the log holds
    assert digest(load_state(layout)[0]) == truth


# --- config ---------------------------------------------------------------------------------

def test_config_prints_the_effective_toml(ms, store):
    r = ms("config")
    assert (r.rc, r.err) == (0, "")
    assert r.out.startswith("[memory]\nshort_ttl_days = 14.0\nmax_text_chars = 100000\ndefault_source = \"human\"\n")
    assert load_config(r.out) == load_config(None)
    assert thaw(load_config(r.out)) == tomllib.loads(r.out)
    assert not store.exists()


def test_config_reflects_memstore_toml(ms, store):
    store.mkdir()
    (store / "memstore.toml").write_text('[memory]\nshort_ttl_days = 7\ndefault_source = "agent"\n')
    cfg = ms("config", "--json").json()
    assert cfg == {**thaw(load_config(None)), "memory": {**thaw(load_config(None))["memory"],
                                                         "short_ttl_days": 7.0, "default_source": "agent"}}
    [m] = ms("remember", "a note under a custom config", "--json").jsonl()
    assert (m["memory"]["source"], m["memory"]["confidence"]) == ("agent", 0.7)
    assert m["memory"]["expires_at"] == "2026-06-14T09:30:00Z"


def test_config_invalid_toml(ms, store):
    store.mkdir()
    (store / "memstore.toml").write_text("[memory\n")
    r = ms("config")
    assert (r.rc, r.out) == (2, "")
    assert r.err.startswith("Error: memstore.toml is not valid TOML (")  # tomllib's words vary
    assert r.err.endswith("); fix or remove the file\n") and r.err.count("\n") == 1


@pytest.mark.parametrize("text,err", [
    ("[memory]\nshort_ttl_days = \"soon\"\n", "Error: memstore.toml: memory.short_ttl_days must be a number, "
                                              "not 'soon'\n"),
    ("[salience.weights]\nimportance = 0.9\n", "Error: memstore.toml: salience.weights must sum to 1 "
                                               "(they sum to 1.650)\n"),
])
def test_config_errors(ms, store, text, err):
    store.mkdir()
    (store / "memstore.toml").write_text(text)
    before = store_digest(store)
    r = ms("config")
    assert (r.rc, r.out, r.err) == (2, "", err)
    assert ms("remember", "a note under a broken config").err == err
    assert store_digest(store) == before


# --- init -----------------------------------------------------------------------------------

def test_init_creates_a_private_store_and_is_idempotent(ms, store):
    r = ms("init")
    assert (r.rc, r.out, r.err) == (0, f"{store}\n", "")
    assert mode(store) == 0o700 and mode(store / "log") == 0o700
    assert list((store / "log").iterdir()) == []
    again = ms("init")
    assert (again.rc, again.out, again.err) == (0, f"{store}\n", "store already exists\n")
    assert ms("init", "--json").json() == {"created": False, "store": str(store)}


def test_init_json_fresh_and_quiet(cli, store):
    r = cli("--store", str(store), "init", "--json", "--now", NOW)
    assert r.json() == {"created": True, "store": str(store)}
    r = cli("--store", str(store), "--quiet", "init", "--now", NOW)
    assert (r.rc, r.err) == (0, "")


def test_store_from_environment_and_xdg_default(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSTORE_DIR", str(tmp_path / "from-env"))
    assert cli("remember", "hello world note", "--now", NOW).out == HELLO_ID + "\n"
    assert (tmp_path / "from-env" / "log" / "2026-06.jsonl").exists()
    monkeypatch.delenv("MEMSTORE_DIR")
    assert cli("remember", "hello world note", "--now", NOW).out == HELLO_ID + "\n"
    assert (tmp_path / "xdg" / "memstore" / "log" / "2026-06.jsonl").exists()


def test_quiet_prints_nothing_but_json_asked_for(cli, store, tmp_path):
    bulk = write_jsonl(tmp_path / "b.jsonl", {"text": "one note"}, {"text": "two notes"})
    r = cli("--store", str(store), "-q", "remember", "--jsonl", str(bulk), "--now", NOW)
    assert (r.rc, r.out, r.err) == (0, "", "") and len(log_lines(store)) == 2
    r = cli("--store", str(store), "-q", "remember", "thanks", "--now", NOW)
    assert (r.rc, r.out, r.err) == (0, "", "")
    r = cli("--store", str(store), "-q", "remember", "three notes", "--json", "--now", NOW)
    assert r.rc == 0 and r.err == "" and r.json()["id"] == log_lines(store)[-1]["memory"]["id"]


def test_help_and_version(cli):
    r = cli("--help")
    assert r.rc == 0 and r.out.startswith("Usage: memstore [OPTIONS] COMMAND [ARGS]...")
    for command in ("init", "remember", "show", "log", "export", "snapshot", "config"):
        assert f"\n  {command} " in r.out
        sub = cli(command, "--help")
        assert sub.rc == 0 and "--now TIME" in sub.out, command
    from memstore import __version__

    assert cli("--version").out == f"memstore {__version__}\n"
    r = cli("nosuch")
    assert (r.rc, r.out, r.err) == (2, "", "Error: No such command 'nosuch'.\n")
