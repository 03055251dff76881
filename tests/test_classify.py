"""The LLM-free classifier, English and Japanese: kind, tier, base salience; greetings skipped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.classify import classify

CASES = {
    ("decision", "long", 0.8): [
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
    ("preference", "long", 0.8): [
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
    ("definition", "long", 0.65): [
        "Kafka is a distributed log",
        "An SLO is a target for service reliability",
        "RRF stands for reciprocal rank fusion",
        "k8s means Kubernetes",
        "SLOとはサービスレベル目標のことである",
        "RAGとは検索拡張生成を指す",
    ],
    ("disambiguation", "short", 0.5): [
        "Here prod means the EU cluster",
        'In this thread, "the bot" means the deploy bot',
        'By "ship" we mean merge to main',
        "ここでのリリースは本番反映のこと",
        "この文脈での顧客は法人顧客です",
    ],
    ("note", "short", 0.5): [
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
    assert (c.kind, c.tier, c.base) == expected, c.rule


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
    assert 0.0 <= c.base <= 1.0
