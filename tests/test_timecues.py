import pytest

from memstore.errors import UsageError
from memstore.recall.intent import classify
from memstore.recall.timecues import find_cues, parse_during

NOW = "2026-06-10T09:00:00Z"  # a Wednesday in ISO week 24


@pytest.mark.parametrize("text,buckets", [
    ("what happened last week?", ["2026-W23"]),
    ("先週の障害は?", ["2026-W23"]),
    ("anything this week", ["2026-W24"]),
    ("先月の決定", ["2026-05"]),
    ("what did we decide last month", ["2026-05"]),
    ("yesterday's standup", ["2026-06-09"]),
    ("昨日の会議", ["2026-06-09"]),
    ("deals closed in May", ["2026-05"]),
    ("deals closed in July", ["2025-07"]),  # a bare month is its latest occurrence not after now
    ("the outage in March 2024", ["2024-03"]),
    ("3月にモバイルアプリで起きた問題", ["2026-03"]),
    ("2025年12月のリリース", ["2025-12"]),
    ("notes from 2026-W20 and 2026-05-01", ["2026-W20", "2026-05-01"]),
    ("use this only as a last resort", []),
    ("the last time we tried", []),
    ("we will march to the beat", []),
    ("may I ask about coffee", []),
])
def test_find_cues(text, buckets):
    assert find_cues(text, NOW) == buckets


def test_parse_during():
    assert parse_during("2026-06", NOW) == "2026-06"
    assert parse_during("last week", NOW) == "2026-W23"
    assert parse_during("先週", NOW) == "2026-W23"
    assert parse_during("2026-W23", NOW) == "2026-W23"
    with pytest.raises(UsageError):
        parse_during("whenever", NOW)


def test_intent():
    assert classify("what happened last week", ["2026-W23"]) == "temporal"
    assert classify("status of OPS-1423", []) == "factual"
    assert classify("which version, v2.4.1?", []) == "factual"
    assert classify('who said "ship it"', []) == "factual"
    assert classify("how do we feel about the release process", []) == "conceptual"
