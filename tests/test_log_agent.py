"""An agent's `log --limit/--since` reads the log from its end, as the owner's does (issue
[6/6]: reads that cost what they return; at a million memories an agent's `log --limit 10`
folded the whole state to learn which records it may not read: 25 s and 1.8 GB).

``memstore_cli.commands.log._recent_visible`` asks the records index (and the log after its watermark)
for the domains of just the records the events it reads name. Held here to the forward read
over the whole state: the same lines for every --limit, with --since, --op and --json, for
an agent with a domain it may not read, with the index behind the log, and without one.
"""

from __future__ import annotations

import shutil

import memstore_cli.commands.log as log_command  # (the module memstore's main runs, not cli.*)
import pytest
from reliability_support import cli
from test_grants import NOW, _hidden, _leaks, built, gs  # noqa: F401 (fixtures)


def _both(store, monkeypatch, *argv: str) -> str:
    fast = cli("--store", store, "--agent", "bob", "log", *argv, "--now", NOW)
    with monkeypatch.context() as m:
        m.setattr(log_command, "_recent_visible", lambda *a: None)
        slow = cli("--store", store, "--agent", "bob", "log", *argv, "--now", NOW)
    assert fast == slow, argv
    assert fast[0] == 0, fast
    return fast[1]


ARGVS = [("--limit", "1"), ("--limit", "3"), ("--limit", "7", "--json"), ("--limit", "500"),
         ("--op", "remember", "--limit", "2"), ("--op", "conflict", "--limit", "5", "--json"),
         ("--since", "2026-06-02"), ("--since", "2026-06-03", "--limit", "2"),
         ("--since", "2026-06-01", "--until", "2026-06-03", "--json")]


def test_an_agents_recent_log_is_the_forward_reads(gs, monkeypatch):  # noqa: F811
    hidden, texts = _hidden(gs)
    assert cli("--store", gs, "index", "--now", NOW)[0] == 0
    # the index behind the log: an hr memory and an eng one after its watermark
    for text, domain in (("Payroll bonus pool is secret", "hr"), ("Payroll job moved to nightly", "eng")):
        assert cli("--store", gs, "remember", text, "--domain", domain, "--now", NOW)[0] == 0
    shown = 0
    for argv in ARGVS:
        out = _both(gs, monkeypatch, *argv)
        assert "Payroll bonus pool is secret" not in out and _leaks(out, hidden, texts) == []
        shown += len(out.splitlines())
    assert shown > len(ARGVS)  # (something was shown)
    owner = cli("--store", gs, "log", "--limit", "500", "--now", NOW)[1]
    assert len(owner.splitlines()) > len(_both(gs, monkeypatch, "--limit", "500").splitlines())


def test_it_reads_from_the_end_when_the_index_can_be_believed(gs, monkeypatch):  # noqa: F811
    from memstore.access import access_for
    from memstore.config import load_config
    from memstore.store.layout import Layout

    layout = Layout(gs)
    access = access_for(load_config(layout.read_config_text()), "bob")
    everything = lambda ev: True  # noqa: E731
    shutil.rmtree(gs / "index", ignore_errors=True)
    assert log_command._recent_visible(layout, everything, 3, None, access) is None  # no index
    assert cli("--store", gs, "index", "--now", NOW)[0] == 0
    got = log_command._recent_visible(layout, everything, 3, None, access)
    assert isinstance(got, list) and len(got) == 3


def test_without_an_index_the_forward_read_answers(gs, monkeypatch, tmp_path):  # noqa: F811
    assert cli("--store", gs, "index", "--now", NOW)[0] == 0
    bare = tmp_path / "bare"
    shutil.copytree(gs, bare, ignore=shutil.ignore_patterns("index"))
    for argv in ARGVS[:4]:
        assert _both(gs, monkeypatch, *argv) == _both(bare, monkeypatch, *argv)


@pytest.mark.parametrize("limit", [1, 2, 5, 40])
def test_every_limit_against_the_whole_log(gs, monkeypatch, limit):  # noqa: F811
    assert cli("--store", gs, "index", "--now", NOW)[0] == 0
    whole = _both(gs, monkeypatch).splitlines()
    assert _both(gs, monkeypatch, "--limit", str(limit)).splitlines() == whole[-limit:]
