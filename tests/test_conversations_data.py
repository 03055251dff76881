"""The conversation benchmark's data (fixtures/conversations/).

- the generator is deterministic: regenerating into a temporary directory gives the committed
  files byte for byte;
- the counts meet the benchmark's minimums (conversations, turns, sessions, languages,
  questions per category), every evidence id names a turn of the question's conversation, and
  every question is asked after its evidence;
- one small end-to-end replay through the CLI, as bench/conversations.py does it (hashing
  embedder): the first sessions of an English and a Japanese conversation, one
  `remember --jsonl` per session and the nightly consolidate, then `recall --batch` finds the
  evidence of single-hop questions about those sessions in the top 10.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from reliability_support import cli, make_store

DATA = Path(__file__).resolve().parent.parent / "fixtures" / "conversations"
CATEGORIES = {"single-hop": 150, "multi-hop": 60, "temporal": 100, "inferential": 40, "adversarial": 50}
TURN_FIELDS = ["turn", "session", "conversation", "speaker", "text", "at"]


def _ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def _japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" for ch in text)


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
    done = subprocess.run([sys.executable, str(DATA / "generate.py"), "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in DATA.glob("*.jsonl"))
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), f"{name} differs: run python fixtures/conversations/generate.py"
    assert sum((DATA / n).stat().st_size for n in made) < 3_000_000


def test_conversations_meet_the_minimums(data):
    turns, _questions = data
    assert len(turns) >= 10
    langs = Counter("ja" if any(_japanese(t["text"]) for t in ts) else "en" for ts in turns.values())
    assert langs["en"] >= 8 and langs["ja"] >= 2, langs
    for cid, ts in turns.items():
        assert len(ts) >= 300, cid
        assert all(list(t) == TURN_FIELDS for t in ts), cid
        assert all(t["conversation"] == cid and t["turn"].startswith(t["session"] + "-t") for t in ts), cid
        assert len({t["turn"] for t in ts}) == len(ts), cid
        sessions = list(dict.fromkeys(t["session"] for t in ts))
        assert 20 <= len(sessions) <= 40, (cid, len(sessions))
        times = [_ts(t["at"]) for t in ts]
        assert times == sorted(times), cid  # chronological, sessions in order
        assert times[-1] - times[0] >= timedelta(days=150), cid  # months, not days
        assert 2 <= sum(1 for t in ts if not t["text"].strip()) <= 8, cid  # a chat export's empty messages
        speakers = {t["speaker"] for t in ts}
        assert len(speakers) == 2 and (speakers == {"user", "assistant"} or "user" not in speakers), (cid, speakers)
        texts = [t["text"] for t in ts if t["text"].strip()]
        assert len(set(texts)) >= 0.5 * len(texts), cid  # chit-chat repeats a little, not mostly


def test_questions_are_labelled_with_evidence_asked_after_it(data):
    turns, questions = data
    by_id = {t["turn"]: t for ts in turns.values() for t in ts}
    assert len(questions) >= 500
    assert len({q["id"] for q in questions}) == len(questions)
    cats = Counter(q["category"] for q in questions)
    for c, least in CATEGORIES.items():
        assert cats[c] >= least, (c, cats[c])
    assert set(cats) == set(CATEGORIES)
    per_conv = Counter(q["conversation"] for q in questions)
    assert set(per_conv) == set(turns) and min(per_conv.values()) >= 30
    ja = Counter(q["category"] for q in questions if _japanese(q["question"]))
    assert all(ja[c] >= 5 for c in CATEGORIES), ja
    for q in questions:
        assert q["question"].strip() and q["answer"], q["id"]
        if q["category"] == "adversarial":
            assert q["evidence"] == [], q["id"]
            continue
        assert q["evidence"], q["id"]
        for e in q["evidence"]:
            t = by_id.get(e)
            assert t is not None and t["conversation"] == q["conversation"], (q["id"], e)
            assert t["text"].strip(), (q["id"], e)
            assert _ts(t["at"]) < _ts(q["now"]), (q["id"], e)
        if q["category"] == "multi-hop":
            assert len(q["evidence"]) >= 2, q["id"]
    # evidence texts are unique in their conversation: a repeat would be folded into the first
    for cid, ts in turns.items():
        first = {}
        for t in ts:
            first.setdefault(t["text"], t["turn"])
        for q in questions:
            if q["conversation"] == cid:
                assert all(first[by_id[e]["text"]] == e for e in q["evidence"]), q["id"]
    # the relative-time questions point at their evidence
    for q in questions:
        if q["type"].startswith("last_weekend"):
            ev = _ts(by_id[q["evidence"][-1]]["at"])
            assert timedelta(hours=1) <= _ts(q["now"]) - ev <= timedelta(days=6), q["id"]


def _replay(store: Path, turns: list[dict]) -> int:
    """bench/conversations.py's replay: one remember --jsonl per session, consolidate nightly."""
    sessions = defaultdict(list)
    for t in turns:
        sessions[t["session"]].append(t)
    empty = 0
    order = list(sessions.values())
    for i, s in enumerate(order):
        rows = [{"text": t["text"], "actor": t["speaker"], "key": t["turn"], "occurred_at": t["at"], "keep": True}
                for t in s if t["text"].strip()]
        empty += len(s) - len(rows)
        path = store.parent / f"{s[0]['session']}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        rc, _out, err = cli("--store", store, "remember", "--jsonl", path, "--now", s[-1]["at"], "--quiet")
        assert rc == 0, err
        day = _ts(s[-1]["at"]).date()
        if i + 1 == len(order) or _ts(order[i + 1][-1]["at"]).date() != day:
            nightly = datetime.combine(day + timedelta(days=1), datetime.min.time()) + timedelta(hours=3)
            rc, _out, err = cli("--store", store, "consolidate", "--now", nightly.strftime("%Y-%m-%dT%H:%M:%SZ"), "--quiet")
            assert rc == 0, err
    return empty


@pytest.mark.parametrize("cid", ["c04", "c10"])
def test_replay_finds_single_hop_evidence(tmp_path, data, cid):
    turns, questions = data
    sessions = list(dict.fromkeys(t["session"] for t in turns[cid]))[:10]
    part = [t for t in turns[cid] if t["session"] in sessions]
    store = make_store(tmp_path / "store")
    _replay(store, part)
    wanted = [q for q in questions if q["conversation"] == cid and q["category"] == "single-hop"
              and all(e.rsplit("-", 1)[0] in sessions for e in q["evidence"])]
    assert len(wanted) >= 5
    lines = [{"query": q["question"], "now": q["now"], "k": 10} for q in wanted]
    rc, out, err = cli("--store", store, "recall", "--batch", "-", "--no-touch", "--json",
                       stdin="".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode())
    assert rc == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    found = [q["id"] for q, a in zip(wanted, answers, strict=True)
             if set(q["evidence"]) <= {r["key"] for r in a["results"]}]
    # the hashing embedder finds about half today; ranking work may only raise this
    assert len(found) >= 3, (found, [q["id"] for q in wanted])
