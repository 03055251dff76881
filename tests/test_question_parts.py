"""Multi-part questions (memstore.recall.decompose) and the time windows a question names
(memstore.recall.timewindow), English and Japanese."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.recall.decompose import split
from memstore.recall.timewindow import Window, bucket_span, buckets, memory_span, narrow, windows


@pytest.mark.parametrize(("question", "shape", "parts"), [
    ("Which happened first, moving to Dublin or taking up rock climbing?", "order",
     ("moving to Dublin", "taking up rock climbing")),
    ("Did taking up trail running come before or after Daniel's baby news?", "order",
     ("taking up trail running", "Daniel's baby news")),
    ("Was the wedding before the trip to Cornwall?", "order", ("wedding", "trip to Cornwall")),
    ("Which came first: the concert or the wedding?", "order", ("concert", "wedding")),
    ("The concert or the wedding, which came first?", "order", ("concert", "wedding")),
    ("How many weeks passed between signing up for the half marathon and running it?", "order",
     ("signing up for the half marathon", "running it")),
    ("How long was it from the job offer to my first day?", "order", ("job offer", "my first day")),
    ("Did I go to Lisbon or Porto?", "choice", ("Did I go to Lisbon", "Did I go to Porto")),
    ("Is Anna or Naomi my manager?", "choice", ("Is Anna my manager", "Is Naomi my manager")),
    ("What do I drink, tea or coffee?", "choice", ("What do I drink tea", "What do I drink coffee")),
    ("Did I visit New York or San Francisco in May?", "choice",
     ("Did I visit New York in May", "Did I visit San Francisco in May")),
    ("Did I do both the marathon and the triathlon?", "both", ("marathon", "triathlon")),
    ("Where did I go with Tom, Mia, and Luca?", "list",
     ("Where did I go with Tom", "Where did I go with Mia", "Where did I go with Luca")),
    ("京都旅行とマラソン、どちらが先？", "order", ("京都旅行", "マラソン")),
    ("引っ越しと転職のどちらが先でしたか？", "order", ("引っ越し", "転職")),
    ("登録からレースまでは何週間？", "order", ("登録", "レース")),
    ("入籍と結婚式の間は何日？", "order", ("入籍", "結婚式")),
    ("ヨガとピラティスの両方を続けている？", "both", ("ヨガ", "ピラティス")),
])
def test_questions_split_into_their_parts(question, shape, parts):
    got = split(question)
    assert (got.shape, got.parts) == (shape, parts)


@pytest.mark.parametrize(("question", "shape"), [
    ("How often did I bring up the move?", "count"),
    ("How many times did Ben mention moving?", "count"),
    ("引っ越しの話を何回した？", "count"),
    ("転職の話は何度出た？", "count"),
    ("List the trips I took.", "list"),
    ("Which places did I travel to this year?", "list"),
    ("今年行った場所を全部教えて", "list"),
])
def test_count_and_list_questions_ask_for_every_mention(question, shape):
    got = split(question)
    assert (got.shape, got.parts, got.every) == (shape, (), True)


@pytest.mark.parametrize("question", [
    "What is my dog called?",
    "Who did I travel to Cornwall with?",
    "Is the user vegetarian or not?",  # "or not" offers no second option
    "Should I bring a jacket or something?",
    "Tom and I went where?",  # two people doing one thing: one part
    "What did I do with my sister and my brother?",  # "and" of two: one question, both in it
    "I picked up two new hobbies; what do they share?",
    "コーヒーと紅茶はどちらが好き？",  # a preference, not an order in time
    "父と行った山はどこ？",  # と as "with"
    "",
])
def test_one_part_questions_stay_whole(question):
    got = split(question)
    assert got.parts == ()
    assert got.shape in ("single", "count", "list")


@given(st.text(max_size=200))
def test_any_text_splits_without_error_into_non_empty_distinct_parts(text):
    got = split(text)
    assert all(p.strip() for p in got.parts)
    assert len({p.casefold() for p in got.parts}) == len(got.parts)
    assert got.parts == () or len(got.parts) >= 2


# --- time windows -----------------------------------------------------------------------

NOW = "2025-06-18T20:32:00Z"  # a Wednesday


def _spans(question: str, now: str = NOW) -> list[tuple[str, str, int]]:
    return [(w.start.isoformat(), w.end.isoformat(), w.slack) for w in windows(question, now)]


@pytest.mark.parametrize(("question", "spans"), [
    ("How did I spend last weekend?", [("2025-06-14", "2025-06-15", 2)]),
    ("Who was with me at the match the past weekend?", [("2025-06-14", "2025-06-15", 2)]),
    ("What did I do over the weekend?", [("2025-06-14", "2025-06-15", 2)]),
    ("What did I do last Saturday?", [("2025-06-14", "2025-06-14", 2)]),
    ("What was going on with Waffle two weeks ago?", [("2025-06-02", "2025-06-08", 3)]),
    ("What did I tell you about Ethan four weeks ago?", [("2025-05-19", "2025-05-25", 3)]),
    # a day near 30 back, not last month (the 19th's week, not the whole of May)
    ("What did I say about my brother about a month ago?", [("2025-05-15", "2025-05-23", 2)]),
    ("What did I do last month?", [("2025-05-01", "2025-05-31", 7)]),
    ("What did I do on the Saturday before last?", [("2025-06-07", "2025-06-07", 2)]),
    ("1か月くらい前に仕事のことで何て言ってた？", [("2025-05-15", "2025-05-23", 2)]),
    ("What did I buy a few days ago?", [("2025-06-12", "2025-06-16", 1)]),
    ("Who did I meet a couple of weeks ago?", [("2025-05-31", "2025-06-08", 2)]),
    ("What happened in 2020?", [("2020-01-01", "2020-12-31", 0)]),
    ("What did I start earlier this month?", [("2025-06-01", "2025-06-18", 7)]),
    ("先週末は何をした？", [("2025-06-14", "2025-06-15", 2)]),
    ("この前の週末に誰と会った？", [("2025-06-14", "2025-06-15", 2)]),
    ("先週の土曜日に何をした？", [("2025-06-14", "2025-06-14", 2)]),
    ("4週間前に兄について何て言った？", [("2025-05-19", "2025-05-25", 3)]),
    ("ひと月前に何の話をした？", [("2025-05-12", "2025-05-26", 3)]),
    ("数日前に買ったものは？", [("2025-06-12", "2025-06-16", 1)]),
    ("2024年4月に何があった？", [("2024-04-01", "2024-04-30", 7)]),
])
def test_time_phrases_become_windows_with_slack(question, spans):
    assert _spans(question) == spans


@pytest.mark.parametrize("question", [
    "How many days ago did I get back from Cornwall?",  # asks for a time, names none
    "Which happened first, the move or the new job?",
    "What is my last resort?",
    "What will I do next weekend?",  # the future
    "What did I do tomorrow?",
    "来週の予定は？",
    "What do I usually do on Tuesday?",  # a weekday alone
])
def test_questions_naming_no_past_time_have_no_window(question):
    assert windows(question, NOW) == []


def test_last_weekend_said_on_a_weekend_is_the_one_before():
    sunday = "2025-06-15T10:00:00Z"
    assert _spans("What did I do last weekend?", sunday) == [("2025-06-07", "2025-06-08", 2)]
    assert _spans("What am I doing this weekend?", sunday) == [("2025-06-14", "2025-06-15", 2)]


def test_windows_weigh_the_core_above_the_slack():
    w = Window(date(2025, 6, 14), date(2025, 6, 15), 2, "last weekend")
    assert w.weight(date(2025, 6, 14), date(2025, 6, 14)) == 2
    assert w.weight(date(2025, 6, 17), date(2025, 6, 17)) == 1  # told on Tuesday
    assert w.weight(date(2025, 6, 18), date(2025, 6, 18)) == 0
    assert w.weight(date(2025, 6, 1), date(2025, 6, 30)) == 2  # a memory known to the month


def test_buckets_keep_whole_months_and_years_and_add_slack_days():
    month = windows("What broke in April?", "2026-11-29T00:00:00Z")
    assert buckets(month, slack=False) == ["2026-04"]
    assert buckets(month)[:1] == ["2026-04"] and "2026-03-25" in buckets(month) and "2026-05-07" in buckets(month)
    weekend = windows("What did I do last weekend?", NOW)
    assert buckets(weekend, slack=False) == ["2025-06-14", "2025-06-15"]
    assert buckets(weekend) == ["2025-06-14", "2025-06-15", "2025-06-12", "2025-06-13", "2025-06-16", "2025-06-17"]
    assert buckets(windows("What happened in 2020?", NOW)) == ["2020"]
    assert narrow(weekend) and not narrow(month)


def test_a_week_phrase_also_names_its_week():
    # memories known only to the week carry the week's bucket and no day
    week = windows("What did we decide last week?", NOW)
    assert buckets(week, slack=False) == [f"2025-06-{d:02d}" for d in range(9, 16)] + ["2025-W24"]
    assert buckets(windows("What did I do last weekend?", NOW), slack=False) == ["2025-06-14", "2025-06-15"]
    assert memory_span("2025-06-09", "week") == (date(2025, 6, 9), date(2025, 6, 15))
    assert week[0].weight(*memory_span("2025-06-09", "week")) == 2


def test_spans_of_buckets_and_memories():
    assert bucket_span("2026-W23") == (date(2026, 6, 1), date(2026, 6, 7), "week")
    assert bucket_span("2024-02") == (date(2024, 2, 1), date(2024, 2, 29), "month")
    assert bucket_span("2026-13") is None
    assert memory_span("2020-01-01T00:00:00Z", "year") == (date(2020, 1, 1), date(2020, 12, 31))
    assert memory_span("2026-06-07T09:00:00Z", "minute") == (date(2026, 6, 7), date(2026, 6, 7))


@given(st.text(max_size=120), st.datetimes(min_value=__import__("datetime").datetime(1901, 1, 1),
                                          max_value=__import__("datetime").datetime(2098, 12, 31)))
def test_any_question_gives_well_formed_windows(text, when):
    for w in windows(text, when.strftime("%Y-%m-%dT%H:%M:%SZ")):
        assert w.start <= w.end and w.slack >= 0


@pytest.mark.parametrize("now", ["0001-01-01T00:00:00Z", "0001-01-05T00:00:00Z", "9999-12-31T23:59:59Z"])
@pytest.mark.parametrize("question", ["What did I do last weekend?", "a few months ago", "four weeks ago",
                                      "先週末", "this weekend", "in December", "yesterday"])
def test_windows_at_the_ends_of_the_calendar(now, question):
    for w in windows(question, now):
        assert w.start <= w.end
        first, last = w.days()
        assert first <= last
        assert buckets([w]) and buckets([w], slack=False)
