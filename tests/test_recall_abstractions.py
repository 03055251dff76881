"""Recall after distill: a summary restates one memory, so where that memory answers, the
memory answers in its own words and the summary takes no place (recall.rules.sources_first);
an abstraction written by distill is no newer than what it abstracts (the time voice)."""

from __future__ import annotations

import pytest
from reliability_support import make_store

from memstore.api import Store

LOW = {a: 0.1 for a in ("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability")}
BADGE = "Emi's new building badge number is 80412; her old badge has been deactivated."
OTHERS = [
    "The shredding company picks up every second Tuesday at the loading dock.",
    "Farid got parking spot B-17 in the basement garage this quarter.",
    "The office plants are watered on Mondays by the facilities team.",
]
NOW = "2026-06-01T09:00:00Z"


def _store(root, rules: str = "") -> Store:
    make_store(root, '[embedder]\nname = "hashing"\n' + rules)
    return Store(root)


def _fill(store: Store) -> None:
    store.remember(BADGE, now="2026-01-05T10:00:00Z", kind="fact", tier="long", subject="badge", **LOW)
    for day, text in enumerate(OTHERS, start=6):
        store.remember(text, now=f"2026-01-{day:02d}T10:00:00Z", kind="fact", tier="long", **LOW)
    events = store.distill(now="2026-05-01T03:05:00Z")
    assert [e["memory"]["level"] for e in events if e["op"] == "distill"] == ["summary"] * 4


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    on = _store(tmp_path_factory.mktemp("on") / "store")
    off = _store(tmp_path_factory.mktemp("off") / "store", "[recall.rules]\nsources_first = false\n")
    for s in (on, off):
        _fill(s)
    return on, off


def _levels(result) -> list[tuple[str, str]]:
    return [(r["level"], r["text"]) for r in result["results"]]


def test_the_memory_answers_and_its_summary_takes_no_place(stores):
    on, _off = stores
    got = on.recall("What is Emi's badge number?", now=NOW, k=5)
    assert _levels(got)[0] == ("raw", BADGE)
    assert all(level == "raw" for level, _text in _levels(got))  # every summary's memory is in the store


def test_without_the_rule_the_summary_takes_a_place_beside_its_memory(stores):
    _on, off = stores
    top = _levels(off.recall("What is Emi's badge number?", now=NOW, k=5))[:2]
    assert sorted(top) == [("raw", BADGE), ("summary", f"{BADGE} [fact; badge; 2026-01]")]


def test_a_summary_answers_where_its_memory_cannot(stores):
    on, _off = stores
    # --level summary filters the memories out: their summaries are what is left to answer
    got = on.recall("What is Emi's badge number?", now=NOW, k=5, level=["summary"])
    assert _levels(got)[0] == ("summary", f"{BADGE} [fact; badge; 2026-01]")


def test_an_abstraction_is_no_newer_than_the_memories_it_abstracts(stores):
    _on, off = stores
    from dataclasses import replace

    from memstore.recall.engine import recall
    from memstore.recall.request import build_request

    req = replace(build_request({"query": "badge number parking spot shredding plants", "k": 10,
                                 "explain": True}, NOW), access=off._access)
    got = recall(req, off._indexes(), now=NOW, config=off.config)
    ranks = {(r["level"], r["text"][:20]): r["explain"]["ranks"].get("temporal") for r in got["results"]}
    raws = [v for (level, _t), v in ranks.items() if level == "raw" and v is not None]
    summaries = [v for (level, _t), v in ranks.items() if level == "summary" and v is not None]
    assert raws and summaries and max(raws) < min(summaries)
