import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.errors import UsageError
from memstore.recall.intent import classify
from memstore.recall.timecues import find_cues, parse_during, validate_bucket

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
    # bare years and 年
    ("what happened in 2020?", ["2020"]),
    ("2020", ["2020"]),
    ("what happened 2020", ["2020"]),
    ("between 2019 and 2021", ["2019", "2021"]),
    ("mid-2020 hiring", ["2020"]),
    ("2020年の出来事", ["2020"]),
    ("２０２０年の出来事", ["2020"]),
    ("we sold 2020 units", []),
    ("a total of 2020 units", []),
    ("a 2019 MacBook", []),
    ("is v2020.1 out", []),
    ("status of ABC-2020", []),
    ("call 555-2020", []),
    ("call 555 2020", []),
    ("priced at $2020", []),
    ("2,020 rows", []),
    ("12020", []),
    ("in 1066", []),
    # days and weeks back
    ("what broke 3 days ago", ["2026-06-07"]),
    ("two weeks ago", ["2026-W22"]),  # the week of that day
    ("2 weeks ago", ["2026-W22"]),
    ("a month ago", ["2026-05"]),
    ("a year ago", ["2025"]),
    ("last Tuesday", ["2026-06-09"]),
    ("last Wednesday", ["2026-06-03"]),
    ("Tuesday last week", ["2026-06-02"]),
    ("the day before yesterday", ["2026-06-08"]),
    ("this morning", ["2026-06-10"]),
    ("3日前の障害", ["2026-06-07"]),
    ("三日前の障害", ["2026-06-07"]),
    ("2週間前の障害", ["2026-W22"]),
    ("1ヶ月前", ["2026-05"]),
    ("先週の火曜の障害", ["2026-06-02"]),
    ("一昨日の会議", ["2026-06-08"]),
    ("一昨年の売上", ["2024"]),
    ("去年の夏", ["2025"]),
    ("last summer", ["2025"]),
    ("on March 3", ["2026-03-03"]),
    ("3月3日の件", ["2026-03-03"]),
    ("July 3", ["2025-07-03"]),  # the latest one not after now, as for months
    ("what did we do in June and in 2025", ["2026-06", "2025"]),
    ("last week and 先週", ["2026-W23"]),  # no duplicates
    # not cues
    ("on Tuesday", []),
    ("the last one", []),
    ("next week", []),
    ("tomorrow", []),
    ("来週", []),
    ("明日の予定", []),
    ("for 3 days", []),
    ("3日間", []),
    ("at 10:00", []),
    ("on 3/14", []),
    ("last winter", []),
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


@pytest.mark.parametrize("value,bucket", [
    ("2020", "2020"), ("in 2020", "2020"), ("2020年", "2020"), ("3 days ago", "2026-06-07"),
    ("2 weeks ago", "2026-W22"), ("last Tuesday", "2026-06-09"), ("先週の火曜", "2026-06-02"),
    ("3日前", "2026-06-07"), ("一昨日", "2026-06-08"), ("March 3", "2026-03-03"),
])
def test_parse_during_new_cues(value, bucket):
    assert parse_during(value, NOW) == bucket


def test_parse_during_names_weeks_to_come():
    assert parse_during("next week", NOW) == "2026-W25"
    assert parse_during("来週", NOW) == "2026-W25"
    assert parse_during("the week after next", NOW) == "2026-W26"
    assert parse_during("the week before last", NOW) == "2026-W22"
    assert find_cues("what is planned for next week?", NOW) == []  # in a question, no cue


@pytest.mark.parametrize("value", ["tomorrow", "2020 units", "last resort", "2019 and 2020", "last winter"])
def test_parse_during_refuses(value):
    with pytest.raises(UsageError, match=r"is not a time I understand"):
        parse_during(value, NOW)


@pytest.mark.parametrize("value", ["3 days ago", "in June", "Tuesday last week", "3日前"])
def test_parse_during_before_year_one(value):
    with pytest.raises(UsageError, match=rf"--during '{value}' falls before year 0001"):
        parse_during(value, "0001-01-02T00:00:00Z")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.sampled_from([NOW, "0001-01-01T00:00:00Z", "9998-12-31T23:59:59Z"]))
def test_find_cues_is_total_and_valid(text, now):
    cues = find_cues(text, now)
    assert len(cues) == len(set(cues))
    assert all(validate_bucket(c) for c in cues)


def test_intent():
    assert classify("what happened last week", ["2026-W23"]) == "temporal"
    assert classify("what happened in 2020?", find_cues("what happened in 2020?", NOW)) == "temporal"
    assert classify("status of OPS-1423", []) == "factual"
    assert classify("which version, v2.4.1?", []) == "factual"
    assert classify('who said "ship it"', []) == "factual"
    assert classify("how do we feel about the release process", []) == "conceptual"
