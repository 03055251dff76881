"""`conflicts resolve` reads only the conflicts its ID can name (issue [6/6]: a command that
names a record costs what it reads; at a million memories a resolve folded the whole log and
read every event: 27 s and 1.8 GB).

``writes._conflicts_named`` finds the conflict by scanning the log's bytes for its id (else
the memory the ID names, by id or key), then the events of the lines naming its sides, and
opens the state with no snapshot row built up front. Held here to the fold (every event,
the whole state): the same decision and the same line appended for every conflict of a
lived store and every way to name it, every --keep, after a snapshot, with an agent's
access, and through the fold when the ids are not plain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_support import make_store
from test_reads_scale import _day, _run, _snapshotted

from memstore import writes
from memstore.access import Access
from memstore.conflicts import KEEP, records
from memstore.store.layout import Layout
from memstore.store.open import load_state
from memstore.store.transaction import LogView


@pytest.fixture(scope="module")
def lived(tmp_path_factory) -> Path:
    """A lived store (beliefs updated, conflicts open and settled), snapshotted on day 82."""
    store = _snapshotted(tmp_path_factory.mktemp("resolve") / "s", 82, 100)
    for day, text in ((100, "The VPN is on port 443"), (101, "The VPN is not on port 443 anymore")):
        row = json.dumps({"text": text, "subject": "vpn", "kind": "fact", "domain": "ops"})
        assert _run(store, "remember", "--jsonl", "-", "--now", _day(day), stdin=row.encode())[0] == 0
        assert _run(store, "consolidate", "--now", _day(day))[0] == 0
    return store


def _conflicts(store: Path) -> list[dict]:
    view = LogView(Layout(store))
    return records(view.events(), load_state(Layout(store))[0])


def _resolved(store: Path, ref: str, keep: str, *, fold: bool, access=None, monkeypatch=None, now=None):
    if fold:
        monkeypatch.setattr(writes, "_conflicts_named", lambda *a: None)
    try:
        done = writes.resolve_conflict(Layout(store), ref, keep, now=now or _day(102), note="checked", access=access)
    except Exception as exc:  # (the same refusal either way)
        done = (type(exc).__name__, str(exc))
    finally:
        monkeypatch.undo()
    last = (sorted((store / "log").iterdir())[-1]).read_bytes().rsplit(b"\n", 2)[-2]
    return done, last


def test_the_lived_store_has_conflicts_of_every_standing(lived):
    standing = {r["state"] for r in _conflicts(lived)}
    assert {"open", "superseded"} <= standing, standing


def test_every_conflict_resolves_as_the_fold_would(lived, tmp_path, monkeypatch):
    found = _conflicts(lived)
    assert len(found) >= 3
    refs = []
    for r in found:
        refs += [(r["id"], "new"), (r["old"], "old"), (r["new"], "both")]
    refs += [("c000000000000000", "new"), ("no-such-key", "old")]
    for n, (ref, keep) in enumerate(refs):
        a, b = tmp_path / f"a{n}", tmp_path / f"b{n}"
        shutil.copytree(lived, a)
        shutil.copytree(lived, b)
        assert _resolved(a, ref, keep, fold=False, monkeypatch=monkeypatch) == \
            _resolved(b, ref, keep, fold=True, monkeypatch=monkeypatch), ref
        shutil.rmtree(a)
        shutil.rmtree(b)


@pytest.mark.parametrize("keep", KEEP)
def test_resolving_twice_and_by_key_as_the_fold_would(lived, tmp_path, monkeypatch, keep):
    (first, *_rest) = [r for r in _conflicts(lived) if r["state"] == "open"] or _conflicts(lived)
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(lived, a)
    shutil.copytree(lived, b)
    for _ in range(2):  # the second time: already resolved so (nothing appended), or another way
        assert _resolved(a, first["id"], keep, fold=False, monkeypatch=monkeypatch) == \
            _resolved(b, first["id"], keep, fold=True, monkeypatch=monkeypatch)
    other = "old" if keep != "old" else "new"
    assert _resolved(a, first["new"], other, fold=False, monkeypatch=monkeypatch) == \
        _resolved(b, first["new"], other, fold=True, monkeypatch=monkeypatch)
    keyed = next((m for m in load_state(Layout(lived))[0].ordered() if m.key), None)
    assert keyed is not None
    assert _resolved(a, keyed.key, keep, fold=False, monkeypatch=monkeypatch) == \
        _resolved(b, keyed.key, keep, fold=True, monkeypatch=monkeypatch)


def test_an_agent_that_may_not_read_a_side_finds_no_conflict(lived, tmp_path, monkeypatch):
    state = load_state(Layout(lived))[0]
    r = next(r for r in _conflicts(lived) if state.memories[r["old"]].domain == "ops")
    access = Access("coder", "r", (("r", ((state.memories[r["old"]].domain, "none"),)),))
    for ref in (r["id"], r["new"]):
        a, b = tmp_path / "a", tmp_path / "b"
        shutil.copytree(lived, a)
        shutil.copytree(lived, b)
        got = _resolved(a, ref, "new", fold=False, access=access, monkeypatch=monkeypatch)
        assert got == _resolved(b, ref, "new", fold=True, access=access, monkeypatch=monkeypatch)
        assert got[0][0] == "NotFound" or got[0].conflict != r["id"]
        shutil.rmtree(a)
        shutil.rmtree(b)


def test_ids_a_scan_cannot_spell_go_through_the_fold(lived):
    state, _ = load_state(Layout(lived))
    assert writes._conflicts_named(Layout(lived), state, 'a "quoted" key', None) is None
    assert writes._conflicts_named(Layout(lived), state, "é" * 16, None) is None
    assert writes._conflicts_named(Layout(lived), state, "no such key", None) == []
    r = _conflicts(lived)[0]
    assert writes._conflicts_named(Layout(lived), state, r["id"], None) == \
        [c for c in _conflicts(lived) if {c["old"], c["new"]} & {r["old"], r["new"]}]


# --- harmonize: the open conflicts without the fold ----------------------------------------

def _harmonized(store: Path, *argv: str, fold: bool, monkeypatch):
    from reliability_support import cli

    if fold:
        monkeypatch.setattr(writes, "_open_conflicts", lambda *a: None)
    try:
        got = cli("--store", store, *argv)
    finally:
        monkeypatch.undo()
    return got, [p.read_bytes() for p in sorted((store / "log").iterdir())]


@pytest.mark.parametrize("snapshot", [False, True])
def test_harmonize_proposes_and_applies_as_the_fold_would(tmp_path, monkeypatch, snapshot):
    """Two agents' contradicting beliefs in two domains (test_grants' store), a third pair
    written after the snapshot, an agent that may not read one domain; propose, apply, and
    propose again (nothing left)."""
    from test_grants import GRANTS, NOW, _ok

    src = make_store(tmp_path / "src", GRANTS)
    s = ("--store", str(src))
    for agent, text, at in (("a", "The payroll pipeline uses Jenkins", "2026-06-01T10"),
                            ("a", "Salary bands are reviewed yearly", "2026-06-01T11"),
                            ("b", "The payroll pipeline does not use Jenkins", "2026-06-02T10"),
                            ("b", "Salary bands are not reviewed yearly", "2026-06-02T11")):
        domain = "eng" if "pipeline" in text else "hr"
        _ok(*s, "--agent", agent, "remember", text, "--domain", domain, "--kind", "fact", "--subject",
            text.split()[1], "--now", f"{at}:00:00Z")
    _ok(*s, "consolidate", "--now", "2026-06-03T00:00:00Z")
    if snapshot:
        _ok(*s, "snapshot", "--now", "2026-06-03T00:00:00Z")
    _ok(*s, "--agent", "a", "remember", "The office is in Berlin", "--domain", "ops", "--kind", "fact",
        "--subject", "office", "--now", "2026-06-03T10:00:00Z")
    _ok(*s, "--agent", "b", "remember", "The office is not in Berlin anymore", "--domain", "ops", "--kind",
        "fact", "--subject", "office", "--now", "2026-06-04T10:00:00Z")
    _ok(*s, "consolidate", "--now", "2026-06-04T12:00:00Z")
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    proposed = None
    for argv in (("harmonize", "--json"), ("--agent", "bob", "harmonize", "--json"),
                 ("harmonize", "--apply", "--json"), ("harmonize", "--json")):
        got = _harmonized(a, *argv, "--now", NOW, fold=False, monkeypatch=monkeypatch)
        assert got == _harmonized(b, *argv, "--now", NOW, fold=True, monkeypatch=monkeypatch), argv
        assert got[0][0] == 0, got[0]
        proposed = proposed or got[0][1]
    assert len(json.loads(proposed)["proposals"]) >= 2


def test_a_hidden_conflicts_id_that_is_also_a_key(tmp_path, monkeypatch):
    """An agent may not see the conflict the ID names (hr), and a memory carries that ID as
    its key (eng, in a conflict of its own): the memory's conflict is the one resolved, as
    the fold finds it."""
    from test_grants import GRANTS, NOW, _ok

    src = make_store(tmp_path / "src", GRANTS)
    s = ("--store", str(src))
    _ok(*s, "--agent", "a", "remember", "Salary bands are reviewed yearly", "--domain", "hr", "--kind", "fact",
        "--subject", "bands", "--now", "2026-06-01T10:00:00Z")
    _ok(*s, "--agent", "b", "remember", "Salary bands are not reviewed yearly", "--domain", "hr", "--kind",
        "fact", "--subject", "bands", "--now", "2026-06-02T10:00:00Z")
    _ok(*s, "consolidate", "--now", "2026-06-02T12:00:00Z")
    (hidden,) = [r["id"] for r in _conflicts(src)]
    _ok(*s, "--agent", "a", "remember", "The payroll pipeline uses Jenkins", "--domain", "eng", "--kind", "fact",
        "--subject", "ci", "--key", hidden, "--now", "2026-06-03T10:00:00Z")
    _ok(*s, "--agent", "b", "remember", "The payroll pipeline does not use Jenkins", "--domain", "eng", "--kind",
        "fact", "--subject", "ci", "--now", "2026-06-04T10:00:00Z")
    _ok(*s, "consolidate", "--now", "2026-06-04T12:00:00Z")
    assert len(_conflicts(src)) == 2
    from memstore.access import access_for
    from memstore.config import load_config

    bob = access_for(load_config(Layout(src).read_config_text()), "bob")
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    got = _resolved(a, hidden, "new", fold=False, access=bob, monkeypatch=monkeypatch, now=NOW)
    assert got == _resolved(b, hidden, "new", fold=True, access=bob, monkeypatch=monkeypatch, now=NOW)
    assert isinstance(got[0], writes.Resolved) and got[0].conflict != hidden, got
