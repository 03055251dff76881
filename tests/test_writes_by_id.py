"""Commands that read a few records by id or key, an agent's notes or the policies do not
build a million records (issue [6/6]: every command at a million memories).

`forget`, `policy add`, `policy retire` and the `supersede_fact` tool plan on a state opened
from the snapshot with no row built up front (``store.snapshot.by_id``: a record is built when
its id is asked for, ``state.Partial``); `notes` (its reads and writes) and `preamble` read
the notes from the snapshot's footer and the notes events after it (``load_notes``: no row
read); `policy list` builds the snapshot's policy rows (``policies.rows``). Held here to the
whole state, command for command: the same store with its snapshot and without it (the
fold) gives the same output, exit status and log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_support import make_store
from test_reads_scale import _day, _live, _run

from memstore.policies import rows as policy_rows
from memstore.state import Partial
from memstore.store.layout import Layout
from memstore.store.open import load_notes, load_state
from memstore.store.snapshot import by_id


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    """(a lived store with notes and a policy, snapshotted on day 40 and lived on to day 60;
    the same store without its snapshot)."""
    base = tmp_path_factory.mktemp("byid")
    store = make_store(base / "s")
    _live(store, range(0, 40))
    assert _run(store, "--agent", "coder", "notes", "set", "auth refactor half done", "--now", _day(40))[0] == 0
    assert _run(store, "policy", "add", "Never deploy on Fridays", "--direction", "avoid", "--author", "ana",
                "--subject", "deploys", "--now", _day(40))[0] == 0
    assert _run(store, "snapshot", "--now", _day(40))[0] == 0
    _live(store, range(40, 60))
    assert _run(store, "--agent", "coder", "notes", "append", "tests pending", "--now", _day(60))[0] == 0
    assert _run(store, "--agent", "ops", "notes", "set", "rotate keys", "--now", _day(60))[0] == 0
    bare = base / "bare"
    shutil.copytree(store, bare, ignore=shutil.ignore_patterns("snapshots"))
    return store, bare


def _both(pair, *argv: str) -> tuple:
    a, b = (_run(p, *argv) for p in pair)
    assert a == b, argv
    return a


def test_the_states_they_open_are_partial(pair):
    store, _bare = pair
    whole, _ = load_state(Layout(store))
    ids, _ = load_state(Layout(store), keep=by_id)
    policies, _ = load_state(Layout(store), keep=policy_rows)
    assert isinstance(ids.memories, Partial) and len(ids.memories) < len(whole.memories)  # (the tail's only)
    assert ids.notes == whole.notes and ids.keys == whole.keys and ids.marks == whole.marks
    assert [m for m in policies.ordered() if m.level == "policy"] == \
        [m for m in whole.ordered() if m.level == "policy"] != []


def test_the_notes_alone_are_the_folds(pair, tmp_path):
    """From the snapshot's footer and the notes events after it; from the log alone without a
    snapshot; and from a snapshot whose rows are damaged (they cannot change the notes)."""
    store, bare = pair
    whole = load_state(Layout(bare))[0].notes
    assert whole.keys() == {"coder", "ops"}
    assert load_notes(Layout(store)) == load_notes(Layout(bare)) == load_state(Layout(store))[0].notes == whole
    damaged = tmp_path / "d"
    shutil.copytree(store, damaged)
    (snap,) = (damaged / "snapshots").glob("*.parquet")
    data = bytearray(snap.read_bytes())
    data[len(data) // 3] ^= 0xFF  # a page of rows, not the footer
    snap.write_bytes(bytes(data))
    assert load_notes(Layout(damaged)) == whole == load_state(Layout(damaged))[0].notes


def test_reads_of_notes_and_policies(pair):
    assert _both(pair, "--agent", "coder", "notes", "--json")[1] == \
        '{"agent":"coder","notes":"auth refactor half done\\ntests pending","updated_at":"' + _day(60) + '"}\n'
    assert _both(pair, "--agent", "coder", "preamble", "deploys on friday", "--now", _day(61))[0] == 0
    assert json.loads(_both(pair, "policy", "list", "--all", "--json", "--now", _day(61))[1])["policies"]


def test_writes_by_id_and_key_plan_as_the_whole_state_does(pair, tmp_path):
    copies = (tmp_path / "s", tmp_path / "bare")  # (the module's pair is read by the other tests)
    for p, c in zip(pair, copies, strict=True):
        shutil.copytree(p, c)
    pair = copies
    store, _bare = pair
    code, out, _ = _run(store, "export", "--now", _day(60))
    assert code == 0
    ids = [json.loads(line)["id"] for line in out.splitlines()]
    refs = [ids[0], ids[len(ids) // 2], ids[-1], "ticket-3", "ticket-57", "nope", "m" + "0" * 15, ids[0]]
    for ref in refs:  # (the last: forgotten already)
        _both(pair, "forget", ref, "--reason", "test", "--now", _day(61))
    for argv in (("policy", "add", "Never deploy on Fridays", "--direction", "avoid", "--author", "ana",
                  "--subject", "deploys"),
                 ("policy", "add", "Always tag releases", "--direction", "repeat", "--author", "ana")):
        _both(pair, *argv, "--now", _day(62))
    policy = json.loads(_both(pair, "policy", "list", "--json", "--now", _day(62))[1])["policies"][0]["id"]
    _both(pair, "policy", "retire", policy, "--now", _day(63))
    _both(pair, "policy", "retire", ids[1], "--now", _day(63))  # not a policy
    _both(pair, "policy", "add", "Never deploy on Fridays", "--direction", "avoid", "--author", "ana",
          "--subject", "deploys", "--now", _day(64))  # retired: stays retired
    for agent, action in (("coder", ("append", "merged")), ("coder", ("set", "all done")), ("ops", ("clear",)),
                          ("ops", ("clear",)), ("new", ("append", "first line")), ("coder", ("clear",))):
        _both(pair, "--agent", agent, "notes", *action, "--now", _day(65))
        _both(pair, "--agent", agent, "notes", "--json")
    assert (store / "log").exists()
    logs = [sorted((p / "log").iterdir()) for p in pair]
    assert [f.read_bytes() for f in logs[0]] == [f.read_bytes() for f in logs[1]]


def test_supersede_fact_plans_as_the_whole_state_does(pair, tmp_path):
    from memstore import writes
    from memstore.config import load_config
    from memstore.errors import NotFound, UsageError
    from memstore.remember import validate

    copies = [tmp_path / "a", tmp_path / "b"]
    for p, c in zip(pair, copies, strict=True):
        shutil.copytree(p, c)
    config = load_config(Layout(copies[0]).read_config_text())
    code, out, _ = _run(copies[0], "export", "--now", _day(60))
    ids = [json.loads(line)["id"] for line in out.splitlines()]
    draft = validate({"text": "Ticket 3 is closed"}, max_chars=1000)
    for ref in ("ticket-3", ids[2], ids[2], "nope"):
        got = []
        for c in copies:
            try:
                got.append(writes.supersede_fact(Layout(c), ref, draft, now=_day(66), config=config))
            except (NotFound, UsageError) as exc:
                got.append(str(exc))
        assert got[0] == got[1], ref
    logs = [sorted((c / "log").iterdir()) for c in copies]
    assert [f.read_bytes() for f in logs[0]] == [f.read_bytes() for f in logs[1]]


def test_policy_list_from_the_records_index_is_the_folds(pair, tmp_path):
    """`policy list` reads the records index's policies and the records the log changed since
    when the index can be believed; held to the fold (no index, no snapshot) and to the
    snapshot's policy rows (no index), before and after policies change in the log."""
    store, _bare = pair
    copies = {name: tmp_path / name for name in ("indexed", "snapshot", "folded")}
    shutil.copytree(store, copies["indexed"])
    shutil.copytree(store, copies["snapshot"], ignore=shutil.ignore_patterns("index"))
    shutil.copytree(store, copies["folded"], ignore=shutil.ignore_patterns("index", "snapshots"))
    from memstore.index.current import open_current

    assert open_current(Layout(copies["indexed"])) is not None  # (its road is the index's)

    def listed() -> list[tuple]:
        got = [_run(c, "policy", "list", *flags, "--json", "--now", _day(70)) for c in copies.values()
               for flags in ((), ("--all",))]
        assert all(g[0] == 0 for g in got)
        return got

    first = listed()
    assert first[0] == first[2] == first[4] and first[1] == first[3] == first[5]
    assert json.loads(first[1][1])["policies"]
    for c in copies.values():  # the log moves on past the index: a retirement and a new policy
        pid = json.loads(_run(c, "policy", "list", "--json", "--now", _day(70))[1])["policies"][0]["id"]
        assert _run(c, "policy", "retire", pid, "--now", _day(70))[0] == 0
        assert _run(c, "policy", "add", "Always pin versions", "--direction", "repeat", "--author", "ana",
                    "--now", _day(70))[0] == 0
    then = listed()
    assert then[0] == then[2] == then[4] and then[1] == then[3] == then[5] and then != first


def test_a_state_import_plans_as_the_whole_state_does(pair, tmp_path):
    """`import` of a state export asks for each row's id (``store.snapshot.by_id``, the rows' ids
    built in one pass): held rows, rows only the snapshot holds, rows the log after it
    created, a held key under another id, and new rows are told apart as the fold tells them."""
    copies = [tmp_path / "a", tmp_path / "b"]
    for p, c in zip(pair, copies, strict=True):
        shutil.copytree(p, c)
    code, out, _ = _run(copies[0], "export", "--now", _day(66))
    assert code == 0
    held = [json.loads(line) for line in out.splitlines()]
    other = make_store(tmp_path / "other")
    rows = [{"text": "Imported fact one", "key": "imported-1"}, {"text": "Imported fact two"},
            {"text": "Ticket 3 is open somewhere else", "key": "ticket-3"}]
    assert _run(other, "remember", "--jsonl", "-", "--now", _day(66),
                stdin="\n".join(json.dumps(r) for r in rows).encode())[0] == 0
    new = [json.loads(line) for line in _run(other, "export", "--now", _day(66))[1].splitlines()]
    export = tmp_path / "state.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in [held[0], held[len(held) // 2], held[-1], *new]))
    got = [_run(c, "import", str(export), "--json", "--now", _day(67)) for c in copies]
    assert got[0] == got[1] and got[0][0] == 0, got
    assert json.loads(got[0][1]) == {"kind": "state", "read": 6, "imported": 2, "skipped": 4}
    logs = [sorted((c / "log").iterdir()) for c in copies]
    assert [f.read_bytes() for f in logs[0]] == [f.read_bytes() for f in logs[1]]
