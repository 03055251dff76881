"""memstore fleet: one stage over every store under a root, on worker processes or a real
Dask cluster (a LocalCluster this file starts), with per-store status, a JSON report,
--retry, and no change to a store whose run failed. Also the README's DuckDB query over
every store's snapshot.

Each good store's result must be what `memstore STAGE` gives on a copy of it; each broken
store must fail with the error `memstore STAGE` gives it, its files unchanged byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from reliability_support import cli, digest, make_store

from memstore.fleet import find_stores

ROOT = Path(__file__).resolve().parent.parent
T0, T1 = "2026-06-01T09:00:00Z", "2026-06-02T09:00:00Z"
NOW = "2026-06-20T03:00:00Z"  # past the 14-day TTL of T0's short-term memories
FUTURE = "2026-06-25T09:00:00Z"
TEXTS = ["We moved billing to Postgres", "Alice takes no sugar in her coffee", "Deploys on Friday broke checkout",
         "The oncall rotation changes on Mondays", "We moved billing to Postgres"]
GOOD = ["a", "b", "team/c"]
LINE = re.compile(r"^(\S+) +(ok|failed) +(\d+\.\d\d)s  (.*)$")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))


def _remember(store: Path, texts: list[str], now: str, *extra: str) -> None:
    for text in texts:
        rc, _out, err = cli("--store", store, "remember", text, "--now", now, *extra)
        assert rc == 0, err


def build_fleet(root: Path) -> Path:
    """Three good stores (one nested), one with a broken memstore.toml, one whose log has a record
    after NOW (its stage plans, then the append is refused), and two directories that are not stores."""
    for i, name in enumerate(GOOD):
        store = make_store(root / name)
        _remember(store, TEXTS[i:] + TEXTS[:i], T0)
        _remember(store, [f"Store {name} keeps its runbook in the wiki"], T1, "--subject", "runbook")
    bad = make_store(root / "bad")
    _remember(bad, TEXTS, T0)
    (bad / "memstore.toml").write_text('[embedder\nname = "hashing"\n')
    late = make_store(root / "late")
    _remember(late, TEXTS[:3], T0)
    _remember(late, ["Bob prefers tea"], FUTURE)
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("not a store\n")
    (root / "project" / "log").mkdir(parents=True)  # a log/ of someone's own: no partition, no memstore.toml
    return root


def log_bytes(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / "log").glob("*.jsonl"))}


def fleet(*argv) -> tuple[int, str, str]:
    return cli("fleet", *[str(a) for a in argv])


def drop_timings(report: dict) -> dict:
    return {**{k: v for k, v in report.items() if k not in ("engine", "root", "results")},
            "results": [{k: v for k, v in e.items() if k not in ("seconds", "cpu_seconds")}
                        for e in report["results"]]}


@pytest.fixture
def pristine(tmp_path) -> Path:
    return build_fleet(tmp_path / "pristine")


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def test_discovery_finds_stores_only_and_never_looks_inside_one(tmp_path, pristine):
    outer = make_store(tmp_path / "nested" / "outer")
    _remember(outer, ["outer store"], T0)
    inner = make_store(outer / "brief" / "inner")  # inside a store: not searched for
    _remember(inner, ["inner store"], T0)
    os.symlink(pristine / "a", tmp_path / "nested" / "link")  # links are not followed
    assert find_stores(pristine) == (["a", "b", "bad", "late", "team/c"], [])
    assert find_stores(tmp_path / "nested") == (["outer"], [])
    assert find_stores(outer) == (["."], [])  # a root that is itself a store is a fleet of one


def test_fleet_consolidate_runs_every_store_and_leaves_a_failed_one_as_it_was(tmp_path, pristine):
    root = copy(pristine, tmp_path / "root")
    direct = copy(pristine, tmp_path / "direct")
    before = {name: (digest(root / name), log_bytes(root / name)) for name in ("bad", "late")}
    report = tmp_path / "night.json"
    rc, out, err = fleet("consolidate", "--root", root, "--now", NOW, "--jobs", "2", "--report", report)
    assert rc == 1, err
    lines = [LINE.match(line) for line in out.splitlines()]
    assert all(lines), out
    assert [(m[1], m[2]) for m in lines] == [("a", "ok"), ("b", "ok"), ("bad", "failed"), ("late", "failed"),
                                             ("team/c", "ok")]
    assert re.fullmatch(rf"fleet consolidate: 3 ok, 2 failed of 5 store\(s\) at {NOW} \(local 2 jobs, "
                        r"\d+\.\d s of work\)\n", err), err
    data = json.loads(report.read_text())
    assert stat_mode(report) == 0o600
    assert {k: data[k] for k in ("format", "command", "stage", "root", "at", "stores", "ok", "failed")} == {
        "format": "memstore-fleet/1", "command": "fleet", "stage": "consolidate", "root": str(root), "at": NOW,
        "stores": 5, "ok": 3, "failed": 2}
    results = {e["path"]: e for e in data["results"]}
    assert list(results) == ["a", "b", "bad", "late", "team/c"]
    for m in lines:  # the text line says what the report holds
        e = results[m[1]]
        assert float(m[3]) == pytest.approx(e["seconds"], abs=0.006)
        assert m[4] == (e["error"] if e["status"] == "failed" else _summary(e))
    for name in GOOD:  # as `memstore consolidate` on a copy: the same log, byte for byte, and the same result
        rc, got, err = cli("--store", direct / name, "consolidate", "--now", NOW, "--json")
        assert rc == 0, err
        one = json.loads(got)
        assert one["appended"] > 0
        assert results[name]["result"] == {"appended": one["appended"], "counts": one["counts"],
                                           "seqs": [one["events"][0]["seq"], one["events"][-1]["seq"]],
                                           "examined_through": one["examined_through"]}
        assert (results[name]["status"], results[name]["error"], results[name]["skipped_lines"]) == ("ok", None, 0)
        assert log_bytes(root / name) == log_bytes(direct / name)
    for name in ("bad", "late"):  # the error `memstore consolidate` gives, and nothing changed
        rc, got, err = cli("--store", direct / name, "consolidate", "--now", NOW)
        assert rc in (1, 2) and err.startswith("Error: ")  # a bad memstore.toml is a usage error (2)
        assert results[name] == {"path": name, "stage": "consolidate", "status": "failed", "error": err[7:].strip(),
                                 "result": None, "seconds": results[name]["seconds"],
                                 "cpu_seconds": results[name]["cpu_seconds"], "skipped_lines": 0}
        assert (digest(root / name), log_bytes(root / name)) == before[name]
    assert "is not valid TOML" in results["bad"]["error"]
    assert "is earlier than the store's latest record time" in results["late"]["error"]


def _damage_line(store: Path, n: int) -> None:
    """Two bytes of the log's line n (1-based) overwritten: no longer a well-formed event."""
    path = next((store / "log").glob("*.jsonl"))
    lines = path.read_bytes().split(b"\n")
    lines[n - 1] = lines[n - 1][:20] + b"XX" + lines[n - 1][22:]
    path.write_bytes(b"\n".join(lines))


def test_a_damaged_log_fails_only_where_the_command_would(tmp_path):
    """A damaged line in the middle is skipped (and counted); a damaged last line stops the
    append after the stage planned: the store fails with `memstore consolidate`'s error and
    its bytes stay as they were."""
    root = tmp_path / "root"
    for name, line in (("last", 5), ("middle", 2)):
        _remember(make_store(root / name), TEXTS, T0)
        _damage_line(root / name, line)
    direct = copy(root, tmp_path / "direct")
    before = digest(root / "last")
    rc, out, err = fleet("consolidate", "--root", root, "--now", NOW, "--json")
    assert rc == 1, err
    last, middle = json.loads(out)["results"]
    rc, _out, err = cli("--store", direct / "last", "consolidate", "--now", NOW)
    assert rc == 1
    assert (last["status"], last["error"], last["skipped_lines"]) == ("failed", err.splitlines()[0][7:], 1)
    assert "is not a well-formed event; nothing was written" in last["error"]
    assert digest(root / "last") == before
    rc, got, err = cli("--store", direct / "middle", "consolidate", "--now", NOW, "--json")
    assert rc == 0 and "skipped 1 damaged log line(s)" in err
    assert (middle["status"], middle["skipped_lines"], middle["result"]["appended"]) == (
        "ok", 1, json.loads(got)["appended"])
    assert log_bytes(root / "middle") == log_bytes(direct / "middle")
    assert _summary(middle).endswith(" (skipped 1 damaged log line(s); `memstore verify` names them)")


def _summary(e: dict) -> str:
    from memstore.fleet.runner import summary

    return summary(e)


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_retry_reruns_only_the_failed_stores(tmp_path, pristine):
    root = copy(pristine, tmp_path / "root")
    first = tmp_path / "first.json"
    assert fleet("consolidate", "--root", root, "--now", NOW, "--report", first)[0] == 1
    good = {name: digest(root / name) for name in GOOD}
    (root / "bad" / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')  # the operator fixes it
    second = tmp_path / "second.json"
    rc, out, err = fleet("consolidate", "--root", root, "--now", NOW, "--retry", first, "--report", second)
    assert rc == 1, err
    assert [line.split()[:2] for line in out.splitlines()] == [["bad", "ok"], ["late", "failed"]]
    data = json.loads(second.read_text())
    assert [(e["path"], e["status"]) for e in data["results"]] == [("bad", "ok"), ("late", "failed")]
    assert data["results"][0]["result"]["appended"] > 0
    assert {name: digest(root / name) for name in GOOD} == good  # not run again
    # late's record after NOW stays: at a later --now its run succeeds, and only it runs
    rc, out, err = fleet("consolidate", "--root", root, "--now", "2026-06-26T03:00:00Z", "--retry", second, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert [(e["path"], e["status"]) for e in data["results"]] == [("late", "ok")]
    assert (data["stores"], data["ok"], data["failed"]) == (1, 1, 0)
    # a report with no failure: nothing to retry; a report that is not there: a usage error
    (tmp_path / "third.json").write_text(out)
    rc, out, err = fleet("consolidate", "--root", root, "--now", "2026-06-26T03:00:00Z", "--retry",
                         tmp_path / "third.json")
    assert (rc, out, err) == (0, "", "fleet consolidate: no failed store in the report; nothing to retry\n")
    rc, out, err = fleet("consolidate", "--root", root, "--retry", tmp_path / "gone.json")
    assert (rc, out, err) == (2, "", f"Error: --retry {tmp_path / 'gone.json'}: cannot read it (No such file or "
                                     "directory); give the file --report wrote\n")


def test_a_dask_cluster_gives_the_local_report(tmp_path, pristine):
    """A real LocalCluster (2 worker processes, no dashboard), started here: the same results
    as the local pool, store by store, except the timings."""
    distributed = pytest.importorskip("distributed")
    local_root, dask_root = copy(pristine, tmp_path / "local"), copy(pristine, tmp_path / "dask")
    rc, out, err = fleet("consolidate", "--root", local_root, "--now", NOW, "--json")
    assert rc == 1, err
    local = json.loads(out)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        rc, out, err = fleet("consolidate", "--root", dask_root, "--now", NOW, "--json", "--address", address)
        assert rc == 1, err
        remote = json.loads(out)
        assert remote["engine"] == f"dask {address}" and local["engine"].startswith("local ")
        assert drop_timings(remote) == drop_timings(local)
        for name in GOOD:
            assert log_bytes(dask_root / name) == log_bytes(local_root / name)
        for name in ("bad", "late"):
            assert digest(dask_root / name) == digest(pristine / name)
        # the cluster runs the other stages too: index, then verify finds every good store clean
        rc, out, err = fleet("index", "--root", dask_root, "--now", NOW, "--address", address)
        assert rc == 1 and [line.split()[:2] for line in out.splitlines()] == [
            ["a", "ok"], ["b", "ok"], ["bad", "failed"], ["late", "ok"], ["team/c", "ok"]], out + err
    # an address where no scheduler listens any more: one line, nothing touched
    rc, out, err = fleet("verify", "--root", dask_root, "--now", NOW, "--address", address)
    assert (rc, out) == (1, "") and err.startswith(f"Error: cannot reach the Dask scheduler at {address} (")
    assert err.endswith("start it (`dask scheduler`) or check --address; no store was touched\n")


@pytest.mark.parametrize("stage", ["distill", "index", "snapshot", "brief", "verify"])
def test_every_stage_matches_the_single_store_command(tmp_path, pristine, stage):
    root = copy(pristine, tmp_path / "root")
    direct = copy(pristine, tmp_path / "direct")
    shutil.rmtree(root / "late")
    shutil.rmtree(direct / "late")
    rc, out, err = fleet(stage, "--root", root, "--now", NOW, "--json", "--jobs", "2")
    assert rc == 1, err  # bad's memstore.toml fails every stage
    data = json.loads(out)
    results = {e["path"]: e for e in data["results"]}
    assert [(p, e["status"]) for p, e in results.items()] == [
        ("a", "ok"), ("b", "ok"), ("bad", "failed"), ("team/c", "ok")]
    for name in GOOD:
        rc, got, err = cli("--store", direct / name, stage, "--now", NOW, "--json")
        assert rc == 0, err
        one, mine = json.loads(got), results[name]["result"]
        if stage == "distill":
            assert mine["appended"] == one["appended"] and mine["counts"] == one["counts"]
            assert log_bytes(root / name) == log_bytes(direct / name)
        elif stage == "index":
            assert mine == {k: one[k] for k in mine} and mine["records"] == 5
        elif stage == "snapshot":
            assert mine == {"snapshot": str(Path(one["path"]).relative_to(direct / name)), "seq": one["seq"],
                            "rows": one["rows"]}
            assert (root / name / mine["snapshot"]).read_bytes() == Path(one["path"]).read_bytes()
        elif stage == "brief":
            assert mine == {"date": one["date"], "written": f"brief/{one['date']}.md"}
            page = f"brief/{one['date']}.md"
            assert (root / name / page).read_bytes() == (direct / name / page).read_bytes()
        else:
            assert mine["clean"] is one["clean"] is True
            assert (mine["head"], mine["events"]) == (one["head"], one["events"])
    assert digest(root / "bad") == digest(pristine / "bad")


def test_verify_findings_fail_the_store(tmp_path, pristine):
    root = copy(pristine, tmp_path / "root")
    os.chmod(root / "a" / "log", 0o755)
    rc, out, err = fleet("verify", "--root", root, "--now", NOW, "--json")
    assert rc == 1
    a = json.loads(out)["results"][0]
    assert (a["path"], a["status"], a["result"]["clean"], a["result"]["findings"]) == ("a", "failed", False, 1)
    assert a["error"] == f"1 finding(s), first: {root / 'a' / 'log'}:0: directory mode 0755 (readable by others), " \
                         "expected 0700; --repair sets it"


def test_quiet_prints_only_failures(tmp_path, pristine):
    root = copy(pristine, tmp_path / "root")
    rc, out, err = cli("--quiet", "fleet", "consolidate", "--root", root, "--now", NOW)
    assert rc == 1 and err == ""
    assert [line.split()[:2] for line in out.splitlines()] == [["bad", "failed"], ["late", "failed"]]


def test_usage_errors_touch_nothing(tmp_path, pristine):
    root = copy(pristine, tmp_path / "root")
    before = digest(root)
    not_report = tmp_path / "x.json"
    not_report.write_text('{"a": 1}')
    report = tmp_path / "r.json"
    assert fleet("snapshot", "--root", root, "--now", NOW, "--report", report)[0] == 1
    before = digest(root)
    cases = [
        (["bogus", "--root", root], "Error: fleet stage 'bogus' is not one of: consolidate, distill, index, "
                                    "snapshot, brief, verify\n"),
        (["index", "--root", tmp_path / "missing"],
         f"Error: --root {tmp_path / 'missing'} is not a directory; give the directory holding the stores\n"),
        (["index", "--root", root, "--retry", not_report],
         f"Error: --retry {not_report}: not a memstore fleet report (memstore-fleet/1); give the file --report "
         "wrote\n"),
        (["index", "--root", root, "--retry", report],
         f"Error: --retry {report}: a report of `fleet snapshot`, not of `fleet index`; retry it with "
         "`memstore fleet snapshot --retry`\n"),
        (["index", "--root", root, "--jobs", "2", "--address", "tcp://127.0.0.1:8786"],
         "Error: --jobs is for the local pool; with --address the cluster's workers run the stores\n"),
        (["index", "--root", root, "--address", "localhost"],
         "Error: --address 'localhost' is not a scheduler address; give e.g. tcp://HOST:8786 (what `dask "
         "scheduler` prints)\n"),
        (["index", "--root", root, "--jobs", "0"], "Error: Invalid value for '--jobs': 0 is not in the range x>=1.\n"),
        (["index", "--root", root, "--store", root / "a"],
         "Error: fleet takes --root DIR, and runs as each store's owner: drop --store/--agent\n"),
        (["index", "--root", root, "--report", tmp_path / "no" / "r.json"],
         f"Error: --report {tmp_path / 'no' / 'r.json'}: no directory {tmp_path / 'no'}; choose a path in an "
         "existing directory\n"),
    ]
    for argv, message in cases:
        rc, out, err = fleet(*argv, "--now", NOW)
        assert (rc, out, err) == (2, "", message), argv
    assert digest(root) == before
    (tmp_path / "empty").mkdir()
    rc, out, err = fleet("index", "--root", tmp_path / "empty", "--now", NOW)
    assert (rc, out, err) == (0, "", f"fleet index: no store under {tmp_path / 'empty'}\n")


# --------------------------------------------------------------------------- the README's DuckDB query

SQL = re.compile(r"<!-- fleet-sql[^>]*-->\n```sql\n(.*?)```", re.S)


def test_readme_duckdb_query_counts_every_store_from_its_newest_snapshot(tmp_path):
    """The README's SQL, as written (its root replaced), over a fleet snapshotted twice (each
    store keeps its two newest snapshots; the query must read only the newest)."""
    duckdb = pytest.importorskip("duckdb")
    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    blocks = SQL.findall((ROOT / "README.md").read_text())
    assert len(blocks) == 1, "README needs one <!-- fleet-sql --> block"
    root = tmp_path / "memstores"
    for i, name in enumerate(["ada", "bob", "ops"]):
        store = make_store(root / name)
        _remember(store, TEXTS[: 2 + i], T0)
    rc, _out, err = cli("--store", root / "ops", "policy", "add", "Never deploy on Fridays", "--direction", "avoid",
                        "--author", "ops", "--now", T1)
    assert rc == 0, err
    assert fleet("snapshot", "--root", root, "--now", T1)[0] == 0
    _remember(root / "ada", ["Ada moved to the Lisbon office"], "2026-06-03T09:00:00Z")
    assert fleet("consolidate", "--root", root, "--now", NOW)[0] == 0
    rc, _out, err = fleet("snapshot", "--root", root, "--now", NOW)
    assert rc == 0, err
    assert len(list((root / "ada" / "snapshots").glob("state-*.parquet"))) == 2
    sql = blocks[0].replace("/srv/memstores", str(root))
    got = duckdb.sql(sql).fetchall()
    want = []
    for name in ["ada", "bob", "ops"]:
        state, _ = load_state(Layout(root / name))
        counts = Counter((m.level, m.status) for m in state.memories.values())
        want += [(name, level, status, n) for (level, status), n in sorted(counts.items())]
    assert got == want
    assert ("ops", "policy", "active", 1) in got and ("ada", "raw", "expired", 3) in got


def test_a_store_named_in_bytes_that_are_not_utf8_fails_with_a_report_that_is_json(tmp_path, pristine):
    root = tmp_path / "root"
    root.mkdir()
    odd = os.fsdecode(b"st\xffx")
    shutil.copytree(pristine / "a", root / odd)
    rc, out, err = fleet("verify", "--root", root, "--now", NOW, "--json")
    assert rc == 1, err
    (entry,) = json.loads(out)["results"]
    assert (entry["path"], entry["status"]) == ("st\\xffx", "failed")
    assert entry["error"] == (f"store path {root}/st\\xffx is not valid UTF-8; rename the directory or choose "
                              "another --store (the indexes need a UTF-8 path)")
