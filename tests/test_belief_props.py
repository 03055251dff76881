"""Properties of belief updates (hypothesis), in process: small stores
drawn from pairs of the belief-update set (an update and what it updates, or a stable fact
and its lookalike), recorded in any order over a few months, some backdated, some carrying
outcomes, consolidated every night.

- a memory is never superseded by an older one: one said before it (record time, then log
  position), or one about a year before the one it was said in (a backfill, "in 2019 ...");
- consolidate is idempotent at a fixed now, and the log folds to the state it decided on;
- an outcome-bearing memory (evidence for policies) is never superseded;
- ``beliefs.relation`` never raises, on any text, and is deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstore import beliefs
from memstore.config import load_config
from memstore.consolidate import consolidate
from memstore.embed import HashingEmbedder
from memstore.fold import fold
from memstore.memlog import MemLog
from memstore.timeutil import ts_after

CONFIG = load_config(None)
WAIT = load_config("[conflicts]\nauto_supersede = false\n")
HASH = HashingEmbedder(256)
T0 = "2026-01-01T08:00:00Z"
DATA = Path(__file__).parent / "data" / "beliefs"


def _pairs() -> list[tuple[str, str]]:
    """A few dozen (older, newer) text pairs: every 4th update (all languages and sorts
    interleave in the file) and every 2nd stable fact with its lookalike."""
    updates = [json.loads(line) for line in (DATA / "updates.jsonl").read_text().splitlines() if line.strip()]
    stable = [json.loads(line) for line in (DATA / "stable.jsonl").read_text().splitlines() if line.strip()]
    return ([(u["old"]["text"], u["new"]["text"]) for u in updates[::4]]
            + [(s["fact"]["text"], s["lookalike"]["text"]) for s in stable[::2]])


PAIRS = _pairs()
TEXTS = [t for pair in PAIRS for t in pair]

# One memory of a pair: which side, when recorded (day), how many days before that it happened
# (a backfill), and what a caller may add.
memory = st.fixed_dictionaries(
    {"pair": st.integers(0, len(PAIRS) - 1), "side": st.sampled_from((0, 1)), "day": st.integers(0, 90)},
    optional={
        "backdate": st.integers(0, 60),
        "outcome": st.sampled_from(("positive", "negative")),
        "kind": st.sampled_from(("note", "fact", "preference", "decision", "incident")),
        "subject": st.sampled_from(("diet", "home", "work")),
        "tier": st.sampled_from(("short", "long")),
    },
)
# Both sides of a pair, the second some days after the first (or before it, or the same day),
# sometimes with a subject and kind the caller gave both.
pair = st.tuples(
    st.integers(0, len(PAIRS) - 1), st.integers(0, 60), st.integers(-30, 30),
    st.fixed_dictionaries({}, optional={"subject": st.just("topic"),
                                        "kind": st.sampled_from(("fact", "preference", "note"))}),
).map(lambda p: [{"pair": p[0], "side": 0, "day": p[1], **p[3]},
                 {"pair": p[0], "side": 1, "day": max(0, p[1] + p[2]), **p[3]}])
stores = st.tuples(st.lists(pair, min_size=1, max_size=4), st.lists(memory, max_size=6)).map(
    lambda t: [m for group in t[0] for m in group] + t[1])


def _request(m: dict, at: str) -> dict:
    req = {"text": PAIRS[m["pair"]][m["side"]], "confidence": 0.9}
    req.update({k: m[k] for k in ("outcome", "kind", "subject", "tier") if k in m})
    if "backdate" in m:
        req["occurred_at"] = ts_after(at, -m["backdate"])[:10]
    return req


def _nightly(memories: list[dict], config) -> tuple[MemLog, list[list[dict]]]:
    """Remember each day's memories, consolidate that night; returns the log and each night's
    events. After each night, a second run at the same now must append nothing."""
    log = MemLog()
    nights = []
    days = sorted({m["day"] for m in memories})
    for n, day in enumerate(days):
        for i, m in enumerate(mm for mm in memories if mm["day"] == day):
            at = ts_after(T0, day + (n * 100 + i) / 1_000_000)  # distinct, increasing record times
            log.remember([_request(m, at)], at, config)
        now = ts_after(T0, day + 0.6)  # 22:24 the same day
        nights.append(log.run(consolidate, now, config, embedder=HASH))
        assert consolidate(log.state, now=now, config=config, embedder=HASH) == []
    return log, nights


def _newer(new, old) -> bool:
    """Said after ``old``, about a year not before the one ``old`` was said in."""
    return (new.recorded_at, new.seq) > (old.recorded_at, old.seq) and new.occurred_at[:4] >= old.recorded_at[:4]


PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(stores, st.booleans())
def test_never_superseded_by_an_older_memory(memories, auto):
    log, nights = _nightly(memories, CONFIG if auto else WAIT)
    s = log.state
    for e in (e for night in nights for e in night):
        if e["op"] == "supersede":
            old, new = s.memories[e["old"]], s.memories[e["new"]]
            assert _newer(new, old), (old.text, old.occurred_at, new.text, new.occurred_at)
        if e["op"] == "conflict":  # an update's conflict names the older memory as old
            assert _newer(s.memories[e["new"]], s.memories[e["old"]]), e
    for m in s.ordered():
        if m.status == "superseded":
            assert _newer(s.memories[m.superseded_by], m)


@PROPS
@given(stores, st.integers(1, 400), st.booleans())
def test_consolidate_is_idempotent_at_a_fixed_now(memories, later, auto):
    config = CONFIG if auto else WAIT
    log, _ = _nightly(memories, config)
    now = ts_after(log.state.at, later)
    first = consolidate(log.state, now=now, config=config, embedder=HASH)
    assert consolidate(log.state.copy(), now=now, config=config, embedder=HASH) == first  # deterministic
    log.append(first, now)
    assert consolidate(log.state, now=now, config=config, embedder=HASH) == []
    # What consolidate decided on its working copy is what the log folds to, from scratch.
    assert fold(log.events).memories == log.state.memories


outcomes = st.lists(st.sampled_from((None, "negative", "positive")), min_size=12, max_size=12)


def _with_outcomes(memories: list[dict], outcomes: list) -> list[dict]:
    return [{**m, "outcome": o} if o else m for m, o in zip(memories, outcomes * 2, strict=False)]


@PROPS
@given(stores.map(lambda ms: [{k: v for k, v in m.items() if k != "subject"} for m in ms]), outcomes)
def test_an_update_in_everyday_words_never_supersedes_an_outcome(memories, outcomes):
    """Without subjects only the belief-update rules (consolidate's updates) can supersede."""
    _no_outcome_superseded(_with_outcomes(memories, outcomes))


@PROPS
@example(memories=[{"pair": 0, "side": 0, "day": 0, "subject": "topic", "kind": "preference"},
                   {"pair": 0, "side": 1, "day": 0, "subject": "topic", "kind": "preference"}],
         outcomes=["negative"] + [None] * 11)
@given(stores, outcomes)
def test_an_outcome_is_never_superseded(memories, outcomes):
    _no_outcome_superseded(_with_outcomes(memories, outcomes))


def _no_outcome_superseded(memories: list[dict]) -> None:
    log, nights = _nightly(memories, CONFIG)
    s = log.state
    for e in (e for night in nights for e in night):
        if e["op"] == "supersede":
            assert s.memories[e["old"]].outcome is None, (s.memories[e["old"]].text, e)
    assert all(m.status != "superseded" for m in s.ordered() if m.outcome is not None)


# Arbitrary text, and text made of the set's own words and marks (where the rules look).
PIECES = sorted({w for t in TEXTS for w in t.split()} | {"not", "no longer", "anymore", "もう", "ない", "年",
                                                           "2020", "3月", "「", "」", "、", "。", "?", "!", "..."})
built = st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join)
cjk = st.text(alphabet=st.characters(codec="utf-8", categories=("Lo", "Po", "Ps", "Pe", "Nd", "Zs")), max_size=40)
texts = st.one_of(st.text(max_size=60), cjk, built, st.sampled_from(TEXTS))


@settings(max_examples=400, deadline=None)
@given(texts, texts)
def test_relation_never_raises_and_is_deterministic(old, new):
    first = beliefs.relation(old, new)
    signal = beliefs.update_signal(old, new)
    change = beliefs.change_signal(old, new)
    beliefs.frame.cache_clear()  # the analysis again from the text, not from the cache
    assert beliefs.relation(old, new) == first
    assert beliefs.update_signal(old, new) is signal
    assert beliefs.change_signal(old, new) is change
    assert change or not signal  # an update is a change
    if first is not None:
        assert isinstance(first.certain, bool) and first.rule in (
            "negation", "stop", "cancel", "replacement", "value", "role")
        assert isinstance(first.detail, str)


def _set_texts() -> list[str]:
    """Every text of the five belief sets (updates, stable facts, lookalikes, filler), in file order."""
    found: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                found.append(x) if k == "text" and isinstance(x, str) else walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for path in sorted(DATA.parent.glob("beliefs*/*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                walk(json.loads(line))
    return list(dict.fromkeys(found))


def test_the_cheap_refusal_never_refuses_what_the_rules_would_find():
    """``relation`` refuses a pair without an update word, a flipped negation or a single value
    before its rules run (most pairs a night compares); on the belief sets' texts, each with
    the 40 after it both ways, the rules find nothing in any pair it refuses."""
    from memstore.beliefs.frame import frame
    from memstore.beliefs.rules import _fresh, _related, _unmarked

    texts = _set_texts()
    refused = found = 0
    for i, old in enumerate(texts):
        for new in texts[i + 1:i + 41]:
            for o, n in ((old, new), (new, old)):
                a, b = frame(o), _fresh(frame(o), frame(n))
                verdict = _related(o, n, a, b)
                found += verdict is not None
                if _unmarked(a, b):
                    refused += 1
                    assert verdict is None, (o, n, verdict)
    assert len(texts) > 1500 and refused > 50_000 and found > 100  # (the check is not vacuous)


@settings(max_examples=400, deadline=None)
@given(texts, texts)
def test_the_cheap_refusal_on_any_text(old, new):
    from memstore.beliefs.frame import frame
    from memstore.beliefs.rules import _fresh, _related, _unmarked

    a, b = frame(old), _fresh(frame(old), frame(new))
    assert not _unmarked(a, b) or _related(old, new, a, b) is None


def _fixture_texts() -> list[str]:
    """The texts the year fixture remembers (its script's quoted texts and JSONL files)."""
    found: list[str] = []
    for path in sorted((Path(__file__).parent.parent / "fixtures").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if isinstance(v, dict) and isinstance(v.get("text"), str):
                found.append(v["text"])
    return list(dict.fromkeys(found))


def test_a_gist_is_what_the_frame_says():
    """consolidate's workers compute a text's gist (update words or not, negation, single)
    alone, and frames only for the pairs the gists do not refuse: the gist must be the
    frame's, on the belief sets' and the fixtures' texts."""
    from memstore.beliefs.frame import Gist, _frame, _gist

    # (+ a replacement said only by what was given away: no update word of its own)
    texts = _set_texts() + _fixture_texts() + ["I passed the Garmin on to my brother"]
    marked = negated = single = 0
    for t in texts:
        f = _frame(t)
        assert _gist(t) == Gist(bool(f.markers), f.negated, f.single), t
        marked, negated, single = marked + bool(f.markers), negated + f.negated, single + f.single
    assert len(texts) > 3000 and min(marked, negated, single) > 50  # (each field is exercised)


@settings(max_examples=400, deadline=None)
@given(texts, texts)
def test_the_gists_refuse_only_what_the_frames_refuse(old, new):
    from memstore.beliefs.frame import Gist, _frame, _gist, frame
    from memstore.beliefs.rules import _fresh, _tentative, _unmarked, may_relate

    for t in (old, new):
        f = _frame(t)
        assert _gist(t) == Gist(bool(f.markers), f.negated, f.single)
    if not may_relate(old, new):
        assert beliefs.relation(old, new) is None
        assert _tentative(new) or _unmarked(frame(old), _fresh(frame(old), frame(new)))


@settings(max_examples=400, deadline=None)
@given(texts, st.lists(texts, min_size=1, max_size=4), texts)
def test_a_new_text_refused_for_every_kind_is_refused_for_every_text_of_them(new, olds, other):
    """consolidate passes over a new record, unranked, when ``may_relate_any`` refuses the
    kinds (negation, single value) of the older records sharing a key with it. Exact both
    ways: refused, no text of those kinds may relate and ``relation`` finds nothing; let
    through, some text of them may relate."""
    from memstore.beliefs.frame import gist
    from memstore.beliefs.rules import may_relate, may_relate_any

    def kind(t):
        return gist(t).negated, gist(t).single

    kinds = {kind(t) for t in olds}
    if may_relate_any(new, kinds):
        assert any(may_relate(t, new) for t in olds)
    else:
        for t in [*olds, other]:
            if kind(t) in kinds:
                assert not may_relate(t, new), t
                assert beliefs.relation(t, new) is None, t
