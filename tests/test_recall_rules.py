"""recall.rules: each ranking rule can be switched off for a benchmark, and only that rule.

One small store (hashing embedder) where most rules fire. For every switch: written out as
true it changes nothing; false gives what recall gives with the rule's own constant or step
neutralised in the code; and where the store makes the rule fire, false changes the answer.
"""

from __future__ import annotations

import json

import pytest
from reliability_support import cli, make_store

from memstore.config import DEFAULTS, load_config
from memstore.errors import UsageError
from memstore.recall import decompose, engine, fuse, timewindow

HASHING = '[embedder]\nname = "hashing"\n'
RULES = list(DEFAULTS["recall"]["rules"])

SESSIONS = [  # (day, [(speaker, text)]), one session a day
    ("2025-02-08", [("assistant", "How was your trip to Cornwall?"),
                    ("user", "Amazing, we hiked the coast path every single day.")]),
    ("2025-03-01", [("user", "Up Cat Bells with my dad, seven hours of walking.")]),
    ("2025-03-05", [("user", "What is 7.5 miles in kilometres?"),
                    ("assistant", "Seven and a half miles is about twelve kilometres.")]),
]
SETTLED = [("2025-02-01", "I live in Berlin."), ("2025-02-03", "I moved to Munich, I no longer live in Berlin.")]
# newer than the rest and about nothing asked: the time voice's newest of the whole store
FILLER = [f"Bought {thing} at the corner shop." for thing in (
    "bread", "milk", "eggs", "coffee", "rice", "apples", "soap", "tea", "butter", "jam", "pasta", "salt",
    "pepper", "lemons", "onions", "garlic", "honey", "oats", "yoghurt", "cheese", "flour", "sugar",
    "beans", "lentils", "carrots", "leeks", "pears", "plums", "grapes", "olives")]
OPEN = [("2025-03-06", "The team standup is at 9am every morning."), ("2025-03-08", "The team standup moved to 10am.")]
QUESTIONS = [
    ("How was your trip to Cornwall?", "2025-03-20"),
    ("What is 7.5 miles in kilometres?", "2025-03-20"),
    ("What did I do last weekend?", "2025-03-03"),
    ("Which came first, the Cornwall trip or the walk up Cat Bells?", "2025-03-20"),
    ("When is the team standup?", "2025-03-20"),
    ("Is the team standup at 9am every morning?", "2025-03-20"),
    ("Do I live in Berlin?", "2025-03-20"),
    ("walking with my dad", "2025-03-20"),
]

# what each rule is, taken out in the code itself: the switch must give the same answers
NEUTRAL = {
    "exact_text": lambda mp: mp.setattr(engine, "EXACT", 1.0),
    "question_half": lambda mp: mp.setattr(engine, "QUESTION", 1.0),
    "session_neighbours": lambda mp: mp.setattr(engine, "CONTEXT_SEEDS", 0),
    "informative": lambda mp: mp.setattr(engine, "_informative", lambda ix, seqs: {s: 1.0 for s in seqs}),
    "decomposition": lambda mp: mp.setattr(decompose, "split", lambda q: decompose.Decomposed("single")),
    "time_windows": lambda mp: mp.setattr(timewindow, "windows", lambda q, now: []),
    "recency_of_matches": lambda mp: mp.setattr(engine, "MATCHED", 0),
    "replacements": lambda mp: mp.setattr(engine, "REPLACEMENT_SEEDS", 0),
    "stale_halving": lambda mp: mp.setattr(engine, "STALE", 1.0),
    "update_lift": None,  # no constant of its own: checked by the answer changing
    "update_slack": lambda mp: mp.setattr(engine, "SLACK", 0.0),
    "perhaps_changed": lambda mp: mp.setattr(engine, "NEAR", float("inf")),
    "newer_first": lambda mp: mp.setattr(fuse, "mmr", _without_newer(fuse.mmr)),
    "sources_first": None,  # this store has no summaries: tests/test_recall_abstractions.py
}
# the rules this store makes fire (update_slack needs a cosine just under the update floor,
# newer_first an older memory that diversification would pick before its update,
# perhaps_changed a change said at another time than what it changes, not a note against a fact)
FIRES = {"exact_text", "question_half", "session_neighbours", "informative", "decomposition",
         "time_windows", "recency_of_matches", "replacements", "stale_halving", "update_lift"}


def _without_newer(mmr):
    def call(order, scores, vectors, k, lam, floor=0.0, newer=None):
        return mmr(order, scores, vectors, k, lam, floor, None)
    return call


def _write(store, day: str, rows: list[dict]) -> None:
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    rc, _out, err = cli("--store", store, "remember", "--jsonl", "-", "--now", f"{day}T19:00:00Z", stdin=body)
    assert rc == 0, err


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMSTORE_CACHE_DIR", str(tmp_path_factory.mktemp("embcache")))
    store = make_store(tmp_path_factory.mktemp("rules") / "store", HASHING)
    for day, text in SETTLED:  # consolidate settles this pair: the older is superseded
        _write(store, day, [{"text": text, "occurred_at": f"{day}T10:00:00Z"}])
        assert cli("--store", store, "consolidate", "--now", f"{day}T23:00:00Z", "--quiet")[0] == 0
    for day, turns in SESSIONS:
        _write(store, day, [{"text": t, "actor": who, "key": f"{day}-t{i}", "occurred_at": f"{day}T18:{i:02d}:00Z",
                             "session": day, "turn": i, "keep": True} for i, (who, t) in enumerate(turns, start=1)])
    for day, text in OPEN:  # never consolidated: recall's own update rules rank this pair
        _write(store, day, [{"text": text, "occurred_at": f"{day}T10:00:00Z"}])
    _write(store, "2025-03-10", [{"text": t} for t in FILLER])
    yield store
    mp.undo()


def _answers(store, rules: dict[str, bool] | None = None) -> list[list[tuple[str, float]]]:
    table = "".join(f"{k} = {'true' if v else 'false'}\n" for k, v in (rules or {}).items())
    (store / "memstore.toml").write_text(HASHING + (f"[recall.rules]\n{table}" if rules is not None else ""))
    body = "".join(json.dumps({"query": q, "now": f"{now}T20:00:00Z", "k": 5}) + "\n" for q, now in QUESTIONS)
    try:
        rc, out, err = cli("--store", store, "recall", "--batch", "-", "--no-touch", "--json", stdin=body.encode())
    finally:
        (store / "memstore.toml").write_text(HASHING)
    assert rc == 0, err
    return [[(r["id"], r["score"]) for r in json.loads(line)["results"]] for line in out.splitlines() if line.strip()]


def test_every_rule_has_a_switch_and_a_check():
    assert set(NEUTRAL) == set(RULES)
    assert all(DEFAULTS["recall"]["rules"].values())


def test_a_switch_is_true_or_false():
    assert load_config("[recall.rules]\nquestion_half = false\n")["recall"]["rules"]["question_half"] is False
    for bad in ("question_half = 0", "question_half = 'no'", "no_such_rule = false"):
        with pytest.raises(UsageError, match="recall.rules"):
            load_config(f"[recall.rules]\n{bad}\n")


def test_all_on_written_out_changes_nothing(store):
    assert _answers(store, dict.fromkeys(RULES, True)) == _answers(store)


@pytest.mark.parametrize("rule", RULES)
def test_a_switch_off_takes_its_rule_out(store, rule, monkeypatch):
    default = _answers(store)
    off = _answers(store, {rule: False})
    if NEUTRAL[rule] is not None:
        with monkeypatch.context() as mp:
            NEUTRAL[rule](mp)
            assert off == _answers(store), rule
    if rule in FIRES:
        assert off != default, rule
