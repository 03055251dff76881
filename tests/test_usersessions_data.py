"""The user-sessions benchmark's data (fixtures/usersessions/: months of one person's side of an
assistant, the second conversation shape), and the recall rule it motivated.

- the generator is deterministic: regenerating into a temporary directory gives the committed
  files byte for byte;
- the counts hold what its README says, every evidence id names a turn of the question's user,
  evidence texts are unique per user, and every question is asked after its evidence;
- a memory that is only a question ranks at QUESTION of its score: the user's side of an
  assistant is mostly questions, which e5 puts near any question asked of the memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from reliability_support import cli, make_store

DATA = Path(__file__).resolve().parent.parent / "fixtures" / "usersessions"


@pytest.fixture(scope="module")
def data():
    turns = {}
    for path in sorted(DATA.glob("c*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            turns[path.stem] = [json.loads(line) for line in fh]
    with open(DATA / "questions.jsonl", encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh]
    return turns, questions


def test_generator_rewrites_the_committed_files_byte_for_byte(tmp_path):
    done = subprocess.run([sys.executable, str(DATA / "generate.py"), "--out", str(tmp_path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl")
    assert made == sorted(p.name for p in DATA.glob("*.jsonl"))
    for name in made:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), \
            f"{name} differs: run python fixtures/usersessions/generate.py"


def test_the_set_has_its_shape(data):
    turns, questions = data
    assert len(turns) == 30 and {t["speaker"] for ts in turns.values() for t in ts} == {"user"}
    assert Counter(q["category"] for q in questions) == {"temporal": 52, "multi-session": 38,
                                                          "knowledge-update": 30, "single-session": 30}
    for q in questions:
        by_id = {t["turn"]: t for t in turns[q["conversation"]]}
        assert q["evidence"] and all(e in by_id for e in q["evidence"]), q["id"]
        assert all(by_id[e]["at"] < q["now"] for e in q["evidence"]), q["id"]
        if q["category"] == "multi-session":
            assert len({by_id[e]["session"] for e in q["evidence"]}) >= 2, q["id"]
    for cid, ts in turns.items():
        evidence = {e for q in questions if q["conversation"] == cid for e in q["evidence"]}
        texts = [t["text"] for t in ts if t["turn"] in evidence]
        assert len(texts) == len(set(texts)), cid


def test_a_memory_that_is_only_a_question_ranks_under_a_statement(tmp_path):
    """"What's 7.5 miles in kilometres?" shares the question's words and shape; the hike the
    user told of answers it. Both score alike before the rule (hashing embedder: lexical)."""
    store = make_store(tmp_path / "s", '[embedder]\nname = "hashing"\n')
    for text, at in (("How many kilometres is a half marathon, roughly?", "2025-03-01T10:00:00Z"),
                     ("Hiked the Ridge Trail today: 10 kilometres and my legs are jelly.", "2025-03-02T10:00:00Z")):
        rc, _out, err = cli("--store", store, "remember", text, "--now", at)
        assert rc == 0, err
    rc, out, err = cli("--store", store, "recall", "How many kilometres have I hiked?", "--json", "--no-touch",
                       "--now", "2025-03-10T10:00:00Z")
    assert rc == 0, err
    assert [r["text"][:6] for r in json.loads(out)["results"]] == ["Hiked ", "How ma"]


def test_a_question_next_to_a_match_is_its_context_only_when_someone_else_asked_it(tmp_path):
    """In a chat, the prompt before an answer is half the fact ("Did the flat work out?" /
    "It did!"); the user's own next request to an assistant is another topic."""
    store = make_store(tmp_path / "s", '[embedder]\nname = "hashing"\n')
    rows = [
        {"text": "Did you get anything in the ground this spring?", "actor": "friend", "session": "a", "turn": 0},
        {"text": "Planted garlic in the raised bed today.", "actor": "user", "session": "a", "turn": 1},
        {"text": "How long should I boil an egg for a runny yolk?", "actor": "user", "session": "a", "turn": 2},
    ]
    body = "".join(json.dumps(r) + "\n" for r in rows)
    rc, _out, err = cli("--store", store, "remember", "--jsonl", "-", "--now", "2025-04-01T10:00:00Z", stdin=body.encode())
    assert rc == 0, err
    rc, out, err = cli("--store", store, "recall", "Which vegetables did I plant in the raised bed?", "--json",
                       "--no-touch", "--explain", "--now", "2025-04-10T10:00:00Z")
    assert rc == 0, err
    lifts = {r["text"][:8]: r["explain"]["status_factor"] for r in json.loads(out)["results"]
             if "context" in r["explain"]}
    assert lifts == {"Did you ": 0.6}, lifts  # the egg question keeps its own (lower) score
