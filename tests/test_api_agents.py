"""The library facade as an agent: its writes carry the name, grants limit its reads, and it
keeps a working memory (memstore.api.Store(..., agent=NAME))."""

from __future__ import annotations

import json

import pytest
from reliability_support import make_store

from memstore.api import Store
from memstore.errors import NotFound, UsageError

NOW = "2026-06-07T09:00:00Z"


def test_an_agent_through_the_library(tmp_path):
    root = make_store(tmp_path / "s", '[embedder]\nname = "hashing"\n[grants.coder]\nhr = "none"\n')
    owner, coder = Store(root), Store(root, agent="coder")
    hidden = owner.remember("Salary bands for 2026 are set", now=NOW, domain="hr")
    mine = coder.remember("Salary of the build server is its uptime", now=NOW, domain="eng")
    log = [json.loads(line) for p in sorted((root / "log").glob("*.jsonl")) for line in p.read_text().splitlines()]
    assert [e.get("agent") for e in log] == [None, "coder"]
    assert coder.state().memories[mine].source == "agent"
    assert [r["id"] for r in coder.recall("salary", now=NOW)["results"]] == [mine]
    assert {r["id"] for r in owner.recall("salary", now=NOW)["results"]} == {hidden, mine}
    with pytest.raises(NotFound):
        coder.forget(hidden, now=NOW)
    assert coder.set_notes("halfway through the bands review", now=NOW) == "halfway through the bands review"
    assert coder.notes() == "halfway through the bands review"
    assert Store(root, agent="other").notes() == ""
    with pytest.raises(UsageError):
        owner.notes()
    with pytest.raises(UsageError):
        Store(root, agent="bad name")
