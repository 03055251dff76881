"""The LLM-free classifier, English and Japanese: kind, tier, prior salience, cue words;
greetings skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.classify import CUE, PRIORS, classify, cue, prior
from memstore.config import DEFAULTS
from memstore.model import KINDS

CASES = {
    ("decision", "long"): [
        "We decided to move billing to Postgres",
        "we have decided to freeze deploys",
        "The team agreed to ship on Fridays",
        "Let's go with option B",
        "Decision: use Rust for the parser",
        "They settled on a four-day week",
        "リリースは金曜にすることに決めた",
        "新しいCIを採用する",
        "予算は来月に決定",
    ],
    ("preference", "long"): [
        "I prefer tabs over spaces",
        "I really like dark mode",
        "We never deploy on Fridays",
        "my favourite editor is vim",
        "I'm allergic to peanuts",
        "私は辛いものが好き",
        "猫が大好き",
        "私の好きな色は青です",
        "ピーナッツアレルギーがある",
    ],
    ("definition", "long"): [
        "Kafka is a distributed log",
        "An SLO is a target for service reliability",
        "RRF stands for reciprocal rank fusion",
        "k8s means Kubernetes",
        "SLOとはサービスレベル目標のことである",
        "RAGとは検索拡張生成を指す",
    ],
    ("disambiguation", "short"): [
        "Here prod means the EU cluster",
        'In this thread, "the bot" means the deploy bot',
        'By "ship" we mean merge to main',
        "ここでのリリースは本番反映のこと",
        "この文脈での顧客は法人顧客です",
    ],
    ("note", "short"): [
        "Call the plumber about the leak",
        "明日の会議は10時から",
        "The deploy failed twice today",
        "ok so the deploy failed",
        "thanks to the new cache, latency dropped",
        "no more deploys on Friday",
        "hi-fi speakers are on sale",
        "good morning routine: run 5k",
        "hiking is fun",
    ],
}

# Labelled lists (tests/data/classify/): untagged texts and the kind each should get,
# durable and episodic, English and Japanese. dev.tsv was written before the rules and they
# were built against it; heldout.tsv was written with it and only measured.
DATA = Path(__file__).parent / "data" / "classify"


def labelled(name: str) -> list[tuple[str, str]]:
    rows = (line.split("\t") for line in (DATA / name).read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#"))
    return [(kind, text) for kind, text in rows]


def tier_of(kind: str) -> str:
    return "short" if kind == "note" else "long"


# What the rules get wrong in dev.tsv, and what they give instead: a bare word value is not
# told from an adjective ("the wiki is outdated"), and an allergy is a preference first.
DEV_MISSES = {
    "The default branch is main": "note",
    "夫はエビアレルギーがある": "preference",
}


@pytest.mark.parametrize("expected,text", labelled("dev.tsv"))
def test_labelled_dev(expected, text):
    c = classify(text)
    kind = DEV_MISSES.get(text, expected)
    assert (c.kind, c.tier) == (kind, tier_of(kind)), c.rule
    assert c.prior == prior(c.kind, cue(text))


def test_labelled_lists_are_balanced():
    for name, least in (("dev.tsv", 60), ("heldout.tsv", 40)):
        rows = labelled(name)
        durable = sum(kind != "note" for kind, _ in rows)
        assert durable >= least and len(rows) - durable >= least
        assert len({text for _, text in rows}) == len(rows)
    assert not {t for _, t in labelled("dev.tsv")} & {t for _, t in labelled("heldout.tsv")}


def _scores(name: str) -> tuple[int, int, int]:
    """(durable texts given a long tier, episodic texts given a short one, exact kinds)."""
    rows = labelled(name)
    got = [(kind, classify(text)) for kind, text in rows]
    return (sum(c.tier == "long" for k, c in got if k != "note"),
            sum(c.tier == "short" for k, c in got if k == "note"),
            sum(c.kind == k for k, c in got))


def test_labelled_scores():
    # the figures of both lists, pinned: a rule change shows here what it wins and loses. The
    # held-out figure was measured once, when the rules were done: the honest one.
    assert _scores("dev.tsv") == (69, 71, 139)  # of 70 durable, 71 episodic, 141 texts
    assert _scores("heldout.tsv") == (44, 45, 88)  # of 45 durable, 45 episodic, 90 texts


@pytest.mark.parametrize("text,kind", [
    ("Mom's birthday is March 5", "fact"), ("The staging DB listens on port 5433", "fact"),
    ("I live in Yokohama", "fact"), ("My dentist is Dr. Tanaka", "fact"),
    ("Our cat is called Mochi", "fact"), ("Backups run every Sunday at 3am", "fact"),
    ("Maria is the billing team lead", "fact"), ("The API timeout is 30 seconds", "fact"),
    ("妹の名前はアナです", "fact"), ("横浜に住んでいます", "fact"),
    ("To rotate the keys, run rotate.sh then restart the gateway", "procedure"),
    ("手順：サーバーを止めて、設定を更新し、再起動する", "procedure"),
    ("The office move is scheduled for October 1", "plan"),
    ("Met Maria about billing today", "note"), ("Deployed the search tweak on Friday, no issues", "note"),
    ("build 1234 is flaky this morning", "note"), ("I'm tired today", "note"), ("今日は雨だった", "note"),
    # a state is not a setting, an episode is not a schedule, a pronoun is not a how-to
    ("The server is down", "note"), ("The wiki is outdated", "note"), ("This version is old", "note"),
    ("My manager is out", "note"), ("Our neighbor is noisy", "note"), ("That works for me", "note"),
    ("Every time I deploy something breaks", "note"), ("To my surprise, run times dropped", "note"),
    ("I'll call the plumber tomorrow", "note"), ("サーバーは落ちている", "note"),
    ("このバージョンは古い", "note"), ("毎回同じエラーで困る", "note"),
    ("Backups ran every night last week", "note"), ("さっき横浜駅で佐藤さんに会った", "note"),
    # a question states nothing; a Japanese sentence in the past tense tells an episode
    ("Is the staging DB still on port 5433?", "note"), ("Do backups run every Sunday?", "note"),
    ("ポートは5432でしたっけ？", "note"), ("引っ越しは大変だった。毎日片付けている。", "note"),
])
def test_durable_and_episodic(text, kind):
    c = classify(text)
    assert (c.kind, c.tier) == (kind, tier_of(kind)), c.rule


def test_a_durable_kind_brings_its_prior():
    assert classify("I live in Yokohama").prior == PRIORS["fact"]
    assert classify("To reset the router, hold the button for 10 seconds").prior == PRIORS["procedure"]
    assert classify("I plan to renew my passport in April").prior == PRIORS["plan"]
    # a lasting fact with an allergy in it is protected by the risk cue, like any other kind
    c = classify("Ken is allergic to shellfish")
    assert (c.kind, c.cue, c.prior.risk) == ("fact", "risk", CUE)


GREETINGS = [
    "hi", "Hello!", "hey there", "thanks", "Thank you so much!", "thx", "ok", "OK.", "k", "sure",
    "got it", "cool", "great", "sounds good", "will do", "noted", "good morning", "see you", "bye",
    "ok thanks", "Thanks, bye!", "great, thanks!", "ok got it", "yes", "nope",
    "こんにちは", "おはようございます！", "ありがとうございます", "ありがとうございました。", "了解です",
    "承知しました", "はい", "よろしくお願いします", "お疲れ様です", "なるほどw", "了解、ありがとうございます",
    "はい、承知しました",
]


@pytest.mark.parametrize("expected,text", [(k, t) for k, texts in CASES.items() for t in texts])
def test_classify(expected, text):
    c = classify(text)
    assert (c.kind, c.tier) == expected, c.rule
    assert c.prior == prior(c.kind, cue(text))


PROTECT = DEFAULTS["salience"]["protect_threshold"]


@pytest.mark.parametrize("kind", KINDS)
def test_no_kind_alone_is_protected(kind):
    # a classified decision or preference decays: only cue words or explicit flags protect
    p = PRIORS[kind]
    assert p.importance < PROTECT and p.risk < PROTECT


def test_priors_of_the_classified_kinds():
    assert classify("We decided to move billing to Postgres").prior.as_dict() == {
        "importance": 0.65, "urgency": 0.6, "risk": 0.5, "novelty": 0.6, "emotion": 0.4,
        "recurrence": 0.5, "actionability": 0.85}
    assert classify("I prefer tea over coffee").prior.as_dict() == {
        "importance": 0.6, "urgency": 0.2, "risk": 0.4, "novelty": 0.5, "emotion": 0.7,
        "recurrence": 0.8, "actionability": 0.6}
    assert classify("Call the plumber about the leak").prior.as_dict() == dict.fromkeys(
        ("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability"), 0.5)


CUED = {
    "importance": [
        "We must never deploy on Fridays", "Never push to main directly", "You mustn't skip review",
        "Under no circumstances restart the primary", "Don't ever rotate keys by hand",
        "Always tag releases", "Do not reply to that thread", "Don\u2019t deploy on Fridays",
        "ok. Don't merge before CI", "This is critical: back up first", "Important: the VPN changes",
        "金曜のデプロイは絶対にしない", "必ずバックアップを取る", "本番での作業は厳禁", "重要：請求は月末",
        "土曜の出社は禁止", "決して本番DBを直接触らない",
    ],
    "risk": [
        "I'm allergic to peanuts", "Bob has a severe allergy to shellfish", "risk of anaphylaxis",
        "found a security hole in auth", "the login form has a security vulnerability",
        "ピーナッツアレルギーがある", "この設定は危険", "認証に脆弱性が見つかった",
    ],
    None: [
        "I always take the bus", "Never mind, the meeting is at 3", "This is not important",
        "It isn't critical", "これは重要ではない", "the security review is on Monday",
        "We decided to move billing to Postgres", "we don't deploy on weekends",
        "unimportant detail", "the password manager is 1Password",
    ],
}

# Cue words protect only as rules: an obligation, a prohibition, an imperative, a label or
# "it is important to ...". The same words describing something do not.
RULES = [
    "Never store card numbers in logs", "You must rotate the keys every 90 days",
    "Always tag releases", "We must never deploy on Fridays", "Passwords must be at least 12 characters",
    "It is important to back up before an upgrade", "It's critical that we rotate the keys",
    "This is critical: back up first", "Important: the VPN changes", "Critical: never restart the primary",
    "Do not reply to that thread", "You mustn't skip review", "The primary is never restarted by hand",
    "本番DBは絶対に直接触らない", "必ずレビューを通すこと", "本番での作業は厳禁", "土曜の出社は禁止",
    "重要：請求は月末", "【重要】パスワードは共有しない", "バックアップを取ることが重要だ",
    "決して本番DBを直接触らない",
]
DESCRIPTIONS = [
    "The important thing about the offsite was the food", "Critical path analysis is a scheduling method",
    "It's crucial that you liked the movie?", "That was an important meeting", "a critical bug in the parser",
    "I have never been to Paris", "I've never seen that error", "The build never finished",
    "It must have been the cache", "You must be tired", "Don't know what happened there",
    "Don't worry about it", "Code review is important", "It was crucial to the plot",
    "KPIとは重要業績評価指標のことである", "重要な会議だった", "重要なのは食事だった", "絶対値を取る",
    "絶対パスで指定した",
]


@pytest.mark.parametrize("text", RULES)
def test_a_rule_is_protected(text):
    c = classify(text)
    assert c.cue == "importance" and c.prior.importance == CUE >= PROTECT


@pytest.mark.parametrize("text", DESCRIPTIONS)
def test_a_description_is_not_protected(text):
    c = classify(text)
    assert c.cue is None and c.prior.importance < PROTECT and c.prior.risk < PROTECT


@pytest.mark.parametrize("expected,text", [(k, t) for k, texts in CUED.items() for t in texts])
def test_cue_words(expected, text):
    assert cue(text) == expected
    c = classify(text)
    assert c.cue == expected
    base = PRIORS[c.kind]
    if expected is None:
        assert c.prior == base
    else:
        assert c.prior.importance == CUE >= PROTECT
        assert c.prior.risk == (CUE if expected == "risk" else base.risk)
        assert {a: v for a, v in c.prior.as_dict().items() if a not in ("importance", "risk")} == {
            a: v for a, v in base.as_dict().items() if a not in ("importance", "risk")}


def test_a_cue_protects_and_a_kind_does_not():
    assert classify("We decided to freeze deploys this week").prior.importance < PROTECT
    assert classify("We must never deploy on Fridays").prior.importance >= PROTECT


@pytest.mark.parametrize("text", GREETINGS)
def test_greetings_and_acknowledgements_are_skipped(text):
    c = classify(text)
    assert (c.tier, c.rule) == ("skip", "greeting")


def test_rule_order_first_match_wins():
    # a disambiguation that also reads like a definition is a disambiguation
    assert classify("Here SLO means the 99.9% target").kind == "disambiguation"
    # a decision about a preference is a decision
    assert classify("We decided we prefer Postgres").kind == "decision"


@given(st.text(max_size=200))
def test_classify_is_total_and_deterministic(text):
    c = classify(text)
    assert c == classify(text)
    assert c.tier in ("short", "long", "skip")
    assert all(0.0 <= v <= 1.0 for v in c.prior.as_dict().values())


# The hint gates in front of the patterns (classify._may_match) must never turn a match away:
# classify with them is classify without them, on texts made of the hints, their neighbours,
# the characters IGNORECASE matches to an ASCII letter (İ ı ſ K) and odd white space.
_PIECES = [
    "we", "We", "WE", "I", "I'm", "the team", "they", "decided", "DECIDED", "decİded", "agreed",
    "chose", "chosen", "will go with", "are going with", "settled on", "ſettled on", "let's go with",
    "decision", "decision:", "prefer", "like", "dislike", "don't like", "love", "hate", "always",
    "never", "my favorite", "my favourite", "allergic", "here", "in this context", "means", "mean",
    "by", '"', "“", "”", "'", "is", "İS", "ıs", "are", "a", "an", "the", "our", "short for",
    "stands for", "refers to", "hi", "Hi", "thanks", "thank you", "ok", "oK", "k", "ſure", "sure",
    "got it", "good morning", "have a nice day", "+1", "lol", "no", "nope", "bye", "!", ".", ",",
    "?", "x", "foo", "API", "SLO", "12", "\t", "\n", "\u3000", "\xa0", "\u2028",
    "ここでの", "この文脈で", "ここで言う", "とは", "のことです", "である", "が好き", "は嫌い",
    "が苦手", "を好む", "私の", "アレルギー", "に決めた", "に決定", "ことにした", "ことに決め",
    "で合意", "を採用した", "ありがとう", "了解です", "お疲れ様です", "はい", "コーヒー", "は",
    # the durable rules' hints and their neighbours
    "to", "To", "my", "run", "then", "first", "how to", "steps to", "procedure:", "every", "each",
    "daily", "weekly", "on", "mondays", "Sundays", "once a", "name", "birthday", "is called",
    "born in", "lives in", "works at", "works for", "me", "reports to", "Maria's", "manager",
    "lead", "Bob", "port", "5433", "version", "3.12", "timeout", "=", ":", "listens on", "runs on",
    "floor", "allergic to", "vegan", "we will", "we're going to", "I'll", "I’ll", "next year",
    "in Q3", "scheduled for", "today", "again", "ago", "ci.example.com", "main", "down",
    "手順：", "するには", "実行する", "予定", "来年", "名前は", "に住んでいます", "部長です", "ポートは",
    "5432", "毎週", "を使っている", "今日", "だった", "週2回", "第一月曜", "最寄り駅は", "で動いている",
]
_joined = st.lists(st.sampled_from(_PIECES), max_size=10)


def _unguarded(text):
    import re

    from memstore import classify as c

    def rule(name):
        return re.compile(c._SOURCES[name], re.IGNORECASE)

    if rule("greeting").match(text):
        return c.SKIP
    found = cue(text)
    for name, result in c._RULES:
        if rule(name).search(text):
            return c._result(result, found)
    return c._result(c._DEFAULT, found)


@given(st.one_of(_joined.map(" ".join), _joined.map("".join), st.text(max_size=80)))
def test_the_hints_never_turn_a_match_away(text):
    assert classify(text) == _unguarded(text)
