"""The whole `export` from the snapshot's table (issue [6/6]): an agent's records filtered by
domain and redacted as a table (``store.visible``), markdown written a block at a time. Each
format must be the bytes the records folded from the whole log give (``export._from_records``,
the code before tables), for the owner and for agents under grant tables that hide a
domain, open only one, or close repo domains by their workspace name, on a store opened
from a snapshot plus a log tail, with records that link across domains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_support import HASHING, make_store
from test_brief_agent import TABLES, _days
from test_reads_scale import _day, _run

FORMATS = ("jsonl", "parquet", "markdown")


def _linked_rows(src: Path) -> list[dict]:
    """Records that link across domains, as a hand-edited state export may: a conflict
    between eng and hr, a policy with evidence in both, a record superseded by a hidden
    one, and a key bound to a hidden record."""
    texts = [("We ship on Tuesdays", "eng"), ("We never ship on Tuesdays", "repo:web/hr"),
             ("The deploy broke invoicing", "eng"), ("The deploy broke payslips", "repo:web/hr"),
             ("Avoid deploys before payslips", "eng"), ("Payslips go out on the 25th", "eng"),
             ("Payslips go out on the 28th", "repo:api/hr")]
    for n, (text, domain) in enumerate(texts):
        body = json.dumps({"text": text, "domain": domain, "key": f"linked-{n}"}).encode()
        assert _run(src, "remember", "--jsonl", "-", "--now", _day(n), stdin=body)[0] == 0
    rows = {r["text"]: r for r in map(json.loads, _run(src, "export", "--now", _day(9))[1].splitlines())}
    a, b = rows["We ship on Tuesdays"], rows["We never ship on Tuesdays"]
    a["conflicts_with"], b["conflicts_with"] = [b["id"]], [a["id"]]
    rows["Avoid deploys before payslips"].update(
        level="policy", direction="mitigate", tier="long", confidence=0.8,
        derived_from=[rows["The deploy broke invoicing"]["id"], rows["The deploy broke payslips"]["id"]])
    old = rows["Payslips go out on the 25th"]
    old.update(status="superseded", superseded_by=rows["Payslips go out on the 28th"]["id"])
    return list(rows.values())


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("exporttables")
    src = make_store(base / "src")
    rows = _linked_rows(src)
    s = make_store(base / "s")
    _days(s, range(0, 30))
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert _run(s, "import", "-", "--now", _day(30), stdin=body)[0] == 0
    assert _run(s, "snapshot", "--now", _day(30))[0] == 0
    _days(s, range(31, 45))  # the log after the snapshot: new records, conflicts, reinforcements
    for text, domain in (("Bonuses are paid in March", "hr"), ("The hiring plan is on the wiki", "eng"),
                         ("Bonuses are paid in March", "hr")):  # (one hidden after it, then reinforced by id)
        assert _run(s, "remember", text, "--domain", domain, "--now", _day(45))[0] == 0
    for agent in ("bot", "other"):  # (only its own notes reach an agent's parquet)
        assert _run(s, "--agent", agent, "notes", "set", f"{agent}'s own note", "--now", _day(45))[0] == 0
    return s


def _export(store: Path, agent: str | None, fmt: str, out: Path) -> bytes:
    who = ("--agent", agent) if agent else ()
    code, _stdout, err = _run(store, *who, "export", "--format", fmt, "--output", str(out), "--now", _day(46))
    assert code == 0, err
    return out.read_bytes()


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_export_from_the_table_is_the_folds(store, table, tmp_path, monkeypatch):
    from memstore_cli.commands import export  # (the module memstore's main runs, not cli.*)

    from memstore.store import visible

    (store / "memstore.toml").write_text(HASHING + '[agents]\nbot = "r"\n\n' + TABLES[table])
    for agent in (None, "bot"):
        for fmt in FORMATS:
            with monkeypatch.context() as m:
                m.setattr(visible, "caller_table", lambda *a: None)  # the records folded, as before
                want = _export(store, agent, fmt, tmp_path / "want")
            with monkeypatch.context() as m:
                m.setattr(export, "_from_records", lambda *a: pytest.fail("the export built every record"))
                m.setattr(visible, "BLOCK", 7)  # (many blocks, and kinds across them)
                assert _export(store, agent, fmt, tmp_path / "got") == want, (agent, fmt)
                m.setattr(visible, "BLOCK", 65_536)
                assert _export(store, agent, fmt, tmp_path / "got") == want, (agent, fmt)


def test_an_agent_sees_no_hidden_record_nor_a_link_to_one(store, tmp_path):
    (store / "memstore.toml").write_text(HASHING + '[agents]\nbot = "r"\n\n[grants.r]\nhr = "none"\n')
    owner = _export(store, None, "jsonl", tmp_path / "owner")
    rows = [json.loads(line) for line in owner.splitlines()]
    hidden = {r["id"] for r in rows if r["domain"] in ("repo:web/hr", "repo:api/hr")}
    assert {"We never ship on Tuesdays", "Payslips go out on the 28th"} <= {r["text"] for r in rows if r["id"] in hidden}
    linking = [r for r in rows if r["id"] not in hidden and hidden & {
        *r["conflicts_with"], *r["derived_from"], r["superseded_by"]}]
    assert {"We ship on Tuesdays", "Avoid deploys before payslips", "Payslips go out on the 25th"} <= {
        r["text"] for r in linking}  # the conflict's eng side, the policy, the superseded record
    for fmt in FORMATS:
        data = _export(store, "bot", fmt, tmp_path / fmt)
        assert [i for i in sorted(hidden) if i.encode() in data] == [], fmt
        assert all(r["id"].encode() in data for r in linking), fmt
    seen = {r["id"]: r for r in map(json.loads, _export(store, "bot", "jsonl", tmp_path / "j").splitlines())}
    for r in linking:
        got = seen[r["id"]]
        assert (got["conflicts_with"], got["superseded_by"]) == ([], None)
        assert len(got["derived_from"]) == len(r["derived_from"]) - sum(i in hidden for i in r["derived_from"])


@pytest.mark.parametrize("agent", [None, "bot"])
def test_the_history_is_written_a_block_at_a_time_as_the_whole_log_says(store, tmp_path, monkeypatch, agent):
    """`export --history`, the owner's and an agent's, against the log's events filtered by
    the records hidden in the whole state, joined at once (the code before blocks)."""
    from memstore_cli.commands import export  # (the module memstore's main runs, not cli.*)

    from memstore.access import access_for, event_visible, hidden_ids
    from memstore.codec import dumps_line
    from memstore.config import load_config
    from memstore.store.layout import Layout
    from memstore.store.open import load_state
    from memstore.store.transaction import LogView

    (store / "memstore.toml").write_text(HASHING + '[agents]\nbot = "r"\n\n[grants.r]\nhr = "none"\n')
    layout = Layout(store)
    access = access_for(load_config(layout.read_config_text()), agent)
    hidden = hidden_ids(load_state(layout)[0], access)
    assert bool(hidden) is (agent is not None)
    want = b"".join(dumps_line(ev) for ev in LogView(layout).events() if event_visible(ev, access, hidden))
    who = ("--agent", agent) if agent else ()
    for block in (1, 7, 65_536):
        monkeypatch.setattr(export, "HISTORY_BLOCK", block)
        code, _out, err = _run(store, *who, "export", "--history", "--output", str(tmp_path / "h"), "--now", _day(46))
        assert code == 0, err
        assert (tmp_path / "h").read_bytes() == want, block


def test_an_export_stopped_half_way_leaves_the_file_as_it_was(store, tmp_path, monkeypatch):
    """--output is written beside the file and renamed over it: an export that fails after
    its first block leaves the earlier file whole (a shorter file of whole lines would
    import without a word) and nothing beside it; a finished one replaces it, keeping its
    mode; a device is written in place."""
    import os
    import stat

    from memstore.store import snapshot, visible

    (store / "memstore.toml").write_text(HASHING)
    out = tmp_path / "state.jsonl"
    out.write_bytes(b"the earlier export\n")
    os.chmod(out, 0o640)  # (a mode no umask gives)
    built = snapshot._memories

    def failing(table):
        if table.num_rows and table.column("seq")[0].as_py() > 40:
            raise KeyboardInterrupt  # (as Ctrl-C)
        return built(table)

    with monkeypatch.context() as m:
        m.setattr(visible, "BLOCK", 7)
        m.setattr(snapshot, "_memories", failing)
        code, _o, err = _run(store, "export", "--output", str(out), "--now", _day(46))
        assert code == 130, err  # (as the shell says of Ctrl-C)
    assert out.read_bytes() == b"the earlier export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.jsonl"]
    code, _o, err = _run(store, "export", "--output", str(out), "--now", _day(46))
    assert code == 0, err
    assert out.read_bytes() == _run(store, "export", "--now", _day(46))[1].encode()
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.jsonl"]
    assert _run(store, "export", "--history", "--output", os.devnull, "--now", _day(46))[0] == 0
    code, _o, err = _run(store, "export", "--output", str(tmp_path / "no" / "such.jsonl"), "--now", _day(46))
    assert code == 2 and "cannot write --output" in err and "No such file or directory" in err
