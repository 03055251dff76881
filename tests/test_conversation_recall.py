"""End to end on one small conversation: months of sessions written turn by turn as
a user would (one `remember --jsonl` per session with its --now, the nightly consolidate), then
multi-part and temporal questions through `recall` at their own --now."""

from __future__ import annotations

import json

import pytest
from memstore_cli.main import main
from reliability_support import cli, make_store

# (session day, [(speaker, text)]): the evidence shares few or no words with the questions
SESSIONS = [
    ("2025-02-08", [("user", "Rainy Saturday, so I reorganised the bookshelf by colour."),
                    ("assistant", "That sounds satisfying.")]),
    ("2025-02-12", [("user", "Did an intro to climbing course; next month we go outside on real rock."),
                    ("assistant", "Exciting! Indoor walls first?"),
                    ("user", "Yes, the bouldering gym near work.")]),
    ("2025-02-20", [("user", "The climbing gym was packed again tonight."),
                    ("user", "Climbing shoes are so tight, my toes hurt after climbing."),
                    ("user", "Watched a climbing film about a huge granite wall.")]),
    ("2025-03-03", [("assistant", "How was your Saturday?"),
                    ("user", "Up Cat Bells with my dad! Seven hours, one blister, zero regrets.")]),
    ("2025-03-10", [("user", "Big news, I brought home a beagle puppy today and named her Waffle."),
                    ("assistant", "Congratulations! Puppies are a lot of work.")]),
    ("2025-03-18", [("user", "Waffle chewed two shoes and a phone charger."),
                    ("user", "I spent the weekend before last cleaning the flat top to bottom.")]),
]
EVIDENCE_WEEKEND = "2025-03-03-t2"
EVIDENCE_CLIMB, EVIDENCE_PUPPY = "2025-02-12-t1", "2025-03-10-t1"


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMSTORE_CACHE_DIR", str(tmp_path_factory.mktemp("embcache")))
    yield _build(tmp_path_factory)
    mp.undo()


def _build(tmp_path_factory):
    root = tmp_path_factory.mktemp("conversation")
    store = make_store(root / "store", "")  # the default embedder (bundled e5): what users run
    for day, turns in SESSIONS:
        rows = [{"text": text, "actor": speaker, "key": f"{day}-t{i}", "occurred_at": f"{day}T18:{i:02d}:00Z",
                 "session": day, "turn": i, "keep": True} for i, (speaker, text) in enumerate(turns, start=1)]
        path = root / f"{day}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        for argv in (("remember", "--jsonl", path, "--now", f"{day}T19:00:00Z"),
                     ("consolidate", "--now", f"{day}T23:00:00Z")):
            rc, _out, err = cli("--store", store, *argv, "--quiet")
            assert rc == 0, err
    return store


def _recall(capsys, store, question: str, now: str, k: int = 5) -> dict:
    out = _run(capsys, "--store", store, "recall", question, "--now", now, "--k", str(k), "--no-touch", "--json")
    return json.loads(out)


def test_last_weekend_finds_the_day_told_on_monday_that_shares_no_word(capsys, store):
    got = _recall(capsys, store, "How did I spend last weekend?", "2025-03-05T12:00:00Z", k=3)
    assert got["stats"]["time_windows"] == [["2025-03-01", "2025-03-02", 2]]
    assert got["stats"]["intent"] == "temporal"
    assert EVIDENCE_WEEKEND in [r["key"] for r in got["results"]]


def test_a_time_phrase_ranks_but_never_filters(capsys, store):
    # asked a month later, the only memory of it lies outside "last weekend": still found
    got = _recall(capsys, store, "What did Waffle chew last weekend?", "2025-04-16T12:00:00Z", k=3)
    assert "2025-03-18-t1" in [r["key"] for r in got["results"]]
    assert got["stats"]["time_windows"] == [["2025-04-12", "2025-04-13", 2]]


def test_japanese_time_phrases_weigh_the_same_way(capsys, store):
    got = _recall(capsys, store, "先週末は何をしていた？", "2025-03-05T12:00:00Z", k=3)
    assert got["stats"]["time_windows"] == [["2025-03-01", "2025-03-02", 2]]
    assert EVIDENCE_WEEKEND in [r["key"] for r in got["results"]]


def test_which_came_first_brings_both_parts_though_one_part_has_many_paraphrases(capsys, store):
    question = "Which happened first, taking up climbing or getting the puppy?"
    got = _recall(capsys, store, question, "2025-04-01T12:00:00Z", k=4)
    assert got["stats"]["parts"] == ["taking up climbing", "getting the puppy"]
    keys = [r["key"] for r in got["results"]]
    # (the puppy's session: its news, or the reply to it, which names puppies; since expired
    # turns rank as active ones, the reply can come first)
    assert any(k.startswith(EVIDENCE_PUPPY[:10]) for k in keys), keys
    assert any(k.startswith(("2025-02-12", "2025-02-20")) for k in keys), keys


def test_how_often_keeps_every_mention(capsys, store):
    got = _recall(capsys, store, "How often did I mention climbing?", "2025-04-01T12:00:00Z", k=5)
    keys = {r["key"] for r in got["results"]}
    assert {"2025-02-12-t1", "2025-02-20-t1", "2025-02-20-t2", "2025-02-20-t3"} <= keys, keys
