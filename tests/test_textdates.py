"""Event time read from a memory's text (memstore.textdates), English and Japanese."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.textdates import _as_event, _may_hold_time, event_time, scan
from memstore.timeutil import (
    format_ts,
    iso_week,
    occurred_start,
    parse_occurred,
    parse_ts,
    time_buckets,
)

R = "2026-06-10T09:00:00Z"  # a Wednesday in ISO week 24
NEW_YEAR = "2026-01-02T10:00:00Z"  # a Friday in ISO week 1 of 2026 (which starts on 29 December)


@pytest.mark.parametrize("text,expected", [
    # absolute: years
    ("In 2020 we moved the office to Berlin", ("2020", "year")),
    ("back in 2019 the team was five people", ("2019", "year")),
    ("during 2021 we ran on bare metal", ("2021", "year")),
    ("in early 2019 the pilot started", ("2019", "year")),
    ("revenue doubled mid-2020", ("2020", "year")),
    ("the summer of 2018 was the first offsite", ("2018", "year")),
    ("2020年に東京へ引っ越した", ("2020", "year")),
    ("２０２０年に東京へ", ("2020", "year")),
    ("2019年の夏に入社", ("2019", "year")),
    # absolute: months
    ("in March 2024 we switched vendors", ("2024-03", "month")),
    ("March 2024: the vendor switch", ("2024-03", "month")),
    ("Sept 2021 was the launch", ("2021-09", "month")),
    ("2024年4月に異動した", ("2024-04", "month")),
    ("2024-04 release notes", ("2024-04", "month")),
    # absolute: days
    ("on March 3 we met the auditors", ("2026-03-03", "day")),
    ("shipped it March 3rd", ("2026-03-03", "day")),
    ("shipped it 3 March", ("2026-03-03", "day")),
    ("the 3rd of March 2024 outage", ("2024-03-03", "day")),
    ("April 5, 2024 was the cutover", ("2024-04-05", "day")),
    ("Sept. 9, 2021 kickoff", ("2021-09-09", "day")),
    ("2024-04-05 release", ("2024-04-05", "day")),
    ("2024/4/5 にリリース", ("2024-04-05", "day")),
    ("2024年4月3日に契約", ("2024-04-03", "day")),
    ("4月3日に契約した", ("2026-04-03", "day")),
    # a month or day without a year, no tense: the nearest occurrence (here in the future)
    ("the summit on July 3", ("2026-07-03", "day")),
    ("in December the hiring freeze", ("2025-12", "month")),  # 6 months either way: the past
    ("in August the hiring freeze", ("2026-08", "month")),
    # relative to the record time
    ("yesterday the deploy failed", ("2026-06-09", "day")),
    ("the day before yesterday", ("2026-06-08", "day")),
    ("today we agreed on Postgres", ("2026-06-10", "day")),
    ("earlier today the build broke", ("2026-06-10", "day")),
    ("this morning the pager went off", ("2026-06-10", "day")),
    ("tonight the backup ran long", ("2026-06-10", "day")),
    ("last night the backup ran long", ("2026-06-09", "day")),
    ("last Tuesday Bob left", ("2026-06-09", "day")),
    ("last Wednesday Bob left", ("2026-06-03", "day")),  # strictly before the record day
    ("Tuesday last week we met", ("2026-06-02", "day")),
    ("two weeks ago Bob switched teams", ("2026-05-25", "week")),  # the week of 27 May
    ("2 weeks ago Bob switched teams", ("2026-05-25", "week")),
    ("3 days ago", ("2026-06-07", "day")),
    ("2 hours ago the alert fired", ("2026-06-10", "day")),
    ("a month ago", ("2026-05", "month")),
    ("18 months ago", ("2024-12", "month")),
    ("a year ago", ("2025", "year")),
    ("last month the bill doubled", ("2026-05", "month")),
    ("last year the bill doubled", ("2025", "year")),
    ("last week the bill doubled", ("2026-06-01", "week")),  # a week is stored as its Monday
    ("last May we hired two people", ("2026-05", "month")),
    ("last summer we went to Kyoto", ("2025", "year")),  # a season: the year only
    ("昨日の会議でリリース日を決めた", ("2026-06-09", "day")),
    ("一昨日に障害", ("2026-06-08", "day")),
    ("おととい障害", ("2026-06-08", "day")),
    ("今日は在宅", ("2026-06-10", "day")),
    ("今朝サーバーが落ちた", ("2026-06-10", "day")),
    ("昨夜のバッチ", ("2026-06-09", "day")),
    ("先週の火曜に障害が発生した", ("2026-06-02", "day")),
    ("先週の火曜日に障害", ("2026-06-02", "day")),
    ("今週の月曜に障害", ("2026-06-08", "day")),
    ("3日前に連絡があった", ("2026-06-07", "day")),
    ("三日前に連絡", ("2026-06-07", "day")),
    ("十日前に連絡", ("2026-05-31", "day")),
    ("３日前に連絡", ("2026-06-07", "day")),
    ("2週間前に移行", ("2026-05-25", "week")),
    ("1ヶ月前に移行", ("2026-05", "month")),
    ("1か月前に移行", ("2026-05", "month")),
    ("一ヶ月前に移行", ("2026-05", "month")),
    ("3年前に入社", ("2023", "year")),
    ("先月の決定", ("2026-05", "month")),
    ("先月の3日に決定", ("2026-05-03", "day")),
    ("先週に決定", ("2026-06-01", "week")),
    ("去年は大阪にいた", ("2025", "year")),
    ("昨年の売上", ("2025", "year")),
    ("一昨年の売上", ("2024", "year")),
    ("今年の3月に移転", ("2026-03", "month")),
    ("去年の3月3日に移転", ("2025-03-03", "day")),
    ("去年の夏に京都へ", ("2025", "year")),
    # the first expression decides
    ("In 2020, and again yesterday", ("2020", "year")),
    ("Yesterday we revisited the 2020 move in March 2021", ("2026-06-09", "day")),
    ("tomorrow we review what happened in 2020", None),  # a plan keeps the record time
    # no time, or none to trust
    ("use this only as a last resort", None),
    ("the last time we tried", None),
    ("the last one wins", None),
    ("on Tuesday we deploy", None),
    ("we sold 2020 units", None),
    ("a 2019 MacBook", None),
    ("upgrade to v2020.1", None),
    ("ticket ABC-2020", None),
    ("call 555-2020", None),
    ("it cost $2020", None),
    ("2,020 rows", None),
    ("12020 rows", None),
    ("in 2020.5 seconds", None),
    ("at 10:00 the call", None),
    ("meet on 3/14", None),
    ("next Tuesday we deploy", None),
    ("tomorrow we deploy", None),
    ("later today we deploy", None),
    ("in 3 days we deploy", None),
    ("明日リリース", None),
    ("3日後にリリース", None),
    ("for 3 days the site was down", None),
    ("3日間停止した", None),
    ("今年はリモート", None),
    ("since 2020 I live in Berlin", None),
    ("by March 3 we must ship", None),
    ("last winter we skied", None),  # December and the next February: no honest year
    ("去年の冬", None),
    ("2020年代の流行", None),
    ("2020年度の予算", None),
    ("a couple of days ago", None),
    ("1.5 years ago", None),
    ("in 1066 the Normans came", None),
    ("we may go", None),
    ("we will march on", None),
    ("Jan said hi", None),
    ("2024-02-30 is not a day", None),
    ("", None),
])
def test_event_time(text, expected):
    assert event_time(text, R) == expected


@pytest.mark.parametrize("text,expected", [
    ("last Tuesday", ("2025-12-30", "day")),
    ("yesterday", ("2026-01-01", "day")),
    ("the day before yesterday", ("2025-12-31", "day")),
    ("last month", ("2025-12", "month")),
    ("last week", ("2025-12-22", "week")),
    ("last year", ("2025", "year")),
    ("3 weeks ago", ("2025-12-08", "week")),
    ("先週の火曜", ("2025-12-23", "day")),
    ("去年の夏", ("2025", "year")),
    ("in December", ("2025-12", "month")),
    ("on December 30", ("2025-12-30", "day")),
    ("on January 3", ("2026-01-03", "day")),  # nearest: tomorrow, not a year ago
    ("in November", ("2025-11", "month")),
    ("in March", ("2026-03", "month")),
    ("12月30日", ("2025-12-30", "day")),
])
def test_event_time_at_the_turn_of_the_year(text, expected):
    assert event_time(text, NEW_YEAR) == expected


def test_a_week_across_two_years_is_a_week():
    # 29 December 2025 to 4 January 2026: found under both years and both months
    assert event_time("last week", "2026-01-07T08:00:00Z") == ("2025-12-29", "week")
    assert event_time("先週", "2026-01-07T08:00:00Z") == ("2025-12-29", "week")
    assert time_buckets("2025-12-29", "week") == ["2025", "2026", "2025-12", "2026-01", "2026-W01"]


def test_the_nearest_occurrence_ties_to_the_past():
    # 1 January 2024 and 1 January 2025 are both 183 days from 2 July 2024
    assert event_time("on January 1", "2024-07-02T00:00:00Z") == ("2024-01-01", "day")
    assert event_time("on January 1", "2024-07-03T00:00:00Z") == ("2025-01-01", "day")
    assert event_time("in January", "2026-07-10T00:00:00Z") == ("2026-01", "month")
    # 29 February: only leap years are candidates
    assert event_time("on February 29", "2026-06-10T00:00:00Z") is None
    assert event_time("on February 29", "2027-06-10T00:00:00Z") == ("2028-02-29", "day")


def test_the_ends_of_the_calendar():
    assert event_time("yesterday", "0001-01-01T00:00:00Z") is None
    assert event_time("last year and in 2020", "0001-06-01T00:00:00Z") is None
    assert event_time("in December", "9998-12-31T00:00:00Z") == ("9998-12", "month")
    assert event_time("on January 1", "9999-12-31T00:00:00Z") == ("9999-01-01", "day")


def test_scan_gives_positions_and_kinds():
    text = "Tomorrow we review the outage of 2024-04-05, last Tuesday's fix and 3日前の件"
    got = [(text[e.start:e.end], e.value, e.precision, e.kind) for e in scan(text, R)]
    assert got == [
        ("Tomorrow", None, None, "future"),
        ("2024-04-05", "2024-04-05", "day", "absolute"),
        ("last Tuesday", "2026-06-09", "day", "relative"),
        ("3日前", "2026-06-07", "day", "relative"),
    ]


_TOKENS = [
    "in", "back in", "on", "last", "next", "this", "since", "the", "of", "ago", "a", "two", "3",
    "12", "31", "2020", "1999", "2024-04-05", "2026-W53", "2024/2/30", "March", "may", "Jan", "Sept.",
    "Tuesday", "week", "weeks", "month", "months", "year", "years", "days", "hours", "summer",
    "winter", "yesterday", "today", "tomorrow", "tonight", "morning", "night", ",", ".", "-", "$",
    "v", "年", "月", "日", "前", "後", "間", "の", "先週", "先月", "去年", "今年", "一昨年", "昨日",
    "十", "三", "二十", "ヶ月", "週間", "火曜", "夏", "冬", "２０２０", "İ",
    # abbreviations inside and beside words: the pre-check reads them as words of their own
    "dec", "Dec.", "decided", "benchmark", "mar", "sep", "sept", "JUN", "junior", "oct", "5", "1st",
    # weeks, tense and recurring dates
    "before", "after", "coming", "weekly", "Friday", "every", "each", "birthday", "is", "will", "shipped",
    "speed", "前の週", "来週", "金曜", "毎年", "誕生日は", "した", "します", "予定",
]
_texts = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(_TOKENS), max_size=8).map(" ".join),
    st.lists(st.sampled_from(_TOKENS), max_size=8).map("".join),
)
_records = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9998, 12, 31, 23, 59, 59)).map(
    lambda d: format_ts(d.replace(tzinfo=UTC)))


@settings(max_examples=400, deadline=None)
@given(_texts, _records)
def test_event_time_is_total_and_never_after_the_record_unless_absolute(text, recorded):
    got = event_time(text, recorded)
    first = next((e for e in scan(text, recorded) if e.kind != "recurring"), None)
    # the cheap pre-check never hides an expression
    assert got == (_as_event(first) if first is not None else None)
    if got is None:
        return
    if got[1] == "week":  # its Monday, as --occurred-at names the week
        assert parse_occurred(iso_week(parse_ts(got[0] + "T00:00:00Z").date())) == got
    else:
        assert parse_occurred(got[0]) == got
    if first.kind not in ("absolute", "future"):  # a yearless date or a week to come may lie ahead
        assert occurred_start(got[0]) <= parse_ts(recorded)


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_the_pre_check_is_a_necessary_condition(text):
    if not _may_hold_time(text):
        assert all(_as_event(e) is None for e in scan(text, R))


@pytest.mark.parametrize("text, may", [
    ("benchmark note number 77 about deploys", False),  # "mar" inside a word
    ("We decided to move billing after incident 42", False),
    ("the junior dev fixed 3 bugs", False),
    ("Jan 5 standup moved", True),
    ("review on 1 JAN", True),
    ("Sept. 3 sync", True),
    ("dec 4 offsite", True),
])
def test_the_pre_check_reads_month_abbreviations_as_words(text, may):
    assert _may_hold_time(text) is may
    if may:
        assert event_time(text, R) is not None


M = "2026-03-10T09:00:00Z"  # a Tuesday in ISO week 11 (2 to 8 March is week 10)


@pytest.mark.parametrize("text,expected", [
    ("last week we cut the release", ("2026-03-02", "week")),
    ("this week we cut the release", ("2026-03-09", "week")),
    ("next week we cut the release", ("2026-03-16", "week")),
    ("the week before last we cut the release", ("2026-02-23", "week")),
    ("the week after next", ("2026-03-23", "week")),
    ("two weeks ago we cut the release", ("2026-02-23", "week")),
    ("先週リリースした", ("2026-03-02", "week")),
    ("今週リリース", ("2026-03-09", "week")),
    ("来週リリース", ("2026-03-16", "week")),
    ("先々週リリースした", ("2026-02-23", "week")),
    ("2週間前にリリースした", ("2026-02-23", "week")),
    ("前の週にリリースした", ("2026-03-02", "week")),
    ("in the last week we cut two releases", ("2026-03-02", "week")),
    # a day of a week stays a day
    ("Tuesday last week we met", ("2026-03-03", "day")),
    ("先週の火曜に障害", ("2026-03-03", "day")),
])
def test_week_phrases_give_week_precision(text, expected):
    assert event_time(text, M) == expected
    assert time_buckets(*expected)[-1] == iso_week(parse_ts(expected[0] + "T00:00:00Z").date())


def test_the_last_week_of_a_period_is_no_time():
    assert event_time("discounts in the last week of the quarter", M) is None
    assert event_time("the last week of March 2024 was busy", M) == ("2024-03", "month")


@pytest.mark.parametrize("text", [
    "Mom's birthday is March 5",
    "Our anniversary is on June 12",
    "母の誕生日は3月5日",
    "Rent is due on the 1st of every month",
    "every March 5 we renew the domain",
    "each March 5 the license renews",
    "毎年3月5日に更新",
    "毎月5日に支払う",
    "毎週火曜に定例",
    "the standup is every Tuesday",
    "Mom's birthday is March 5; we bought the gift",  # "is" a birthday: a fact, past or not
])
def test_a_recurring_date_is_no_event_time(text):
    assert event_time(text, M) is None
    assert all(e.kind == "recurring" for e in scan(text, M))


def test_a_recurring_date_gives_way_to_a_real_time():
    # the birthday is skipped, the time after it decides
    assert event_time("Mom's birthday is March 5; yesterday we bought a gift", M) == ("2026-03-09", "day")
    # told in the past, a birthday's date is when it was celebrated
    assert event_time("We celebrated Mom's birthday on March 5", M) == ("2026-03-05", "day")
    assert event_time("Mom's birthday was last week", M) == ("2026-03-02", "week")
    assert event_time("Mom's birthday is March 5, 1960", M) == ("1960-03-05", "day")  # a year: one day


@pytest.mark.parametrize("text,expected", [
    # past: the latest one not after the record day
    ("In May we shipped the new search", ("2025-05", "month")),
    ("In May the new search was shipped", ("2025-05", "month")),
    ("In May we did the migration", ("2025-05", "month")),
    ("It happened in November", ("2025-11", "month")),
    ("on March 12 we met the auditors", ("2025-03-12", "day")),
    ("In March we shipped", ("2026-03", "month")),  # this month is not after the record day
    ("5月に新しい検索を出した", ("2025-05", "month")),
    ("5月に新しい検索を出しました", ("2025-05", "month")),
    ("5月は忙しかった", ("2025-05", "month")),
    ("5月はリリース月だった", ("2025-05", "month")),
    ("On Friday we shipped the fix", ("2026-03-06", "day")),
    ("On Tuesday we shipped the fix", ("2026-03-03", "day")),  # strictly before: "today" says today
    ("金曜にリリースした", ("2026-03-06", "day")),
    # future: the next one not before the record day
    ("In January we will ship the new search", ("2027-01", "month")),
    ("In January we're going to ship", ("2027-01", "month")),
    ("In January we'll ship", ("2027-01", "month")),
    ("The offsite is scheduled for June 2", ("2026-06-02", "day")),
    ("on March 2 we will meet the auditors", ("2027-03-02", "day")),
    ("1月にリリースする予定", ("2027-01", "month")),
    ("1月にリリースします", ("2027-01", "month")),
    ("On Monday we will ship the fix", ("2026-03-16", "day")),
    ("月曜にリリースします", ("2026-03-16", "day")),
    # future words win over past ones
    ("We decided we will ship in January", ("2027-01", "month")),
    # neither: the nearest occurrence (ties to the past); a weekday alone is not read
    ("in January the new search", ("2026-01", "month")),
    ("in August the offsite", ("2026-08", "month")),
    ("on Friday we deploy", None),
    ("金曜にリリース", None),
    # the tense places only dates without a year
    ("In May 2027 we shipped", ("2027-05", "month")),
    ("yesterday we will review it", ("2026-03-09", "day")),
    ("the Tuesday before last we shipped", None),  # not the latest Tuesday
    ("the speed boost in May", ("2026-05", "month")),  # "speed" is no past tense
])
def test_the_tense_places_a_date_without_a_year(text, expected):
    assert event_time(text, M) == expected


@pytest.mark.parametrize("text,expected", [
    # a plan told in the past names a date to come
    ("Booked flights to Lisbon, April 18-25.", ("2026-04-18", "day")),
    ("Atlas v2 has slipped to May 12, testing found blocking bugs.", ("2026-05-12", "day")),
    ("Kickoff w/ Hoshino Foods moved to Mon Apr 27, same time.", ("2026-04-27", "day")),
    ("Acme gave a verbal yes! Contract signature expected in May.", ("2026-05", "month")),
    ("4月1日付で、営業部長が交代しました。", ("2026-04-01", "day")),
    ("大阪支店は4月から新オフィスに移転しました。", ("2026-04", "month")),
    ("5月16日に歯の矯正の相談を予約した。", ("2026-05-16", "day")),
    ("リリース日は7月23日に決定した。", ("2026-07-23", "day")),
    ("土曜の移行に向けて、チェックリストを読み合わせた。", ("2026-03-14", "day")),
    # but "moved to" a place is no plan
    ("We moved to Berlin in May", ("2025-05", "month")),
    # a weekday needs "on" (に, は, の in Japanese): names and habits are not days
    ("We get the Sunday Globe delivered to the house.", None),
    ("I was wrong, the board meets on the second Wednesday.", None),
    ("Board voted Raj in as HOA president on Tuesday.", ("2026-03-03", "day")),
    ("娘は水曜日に英語塾に通っています。", None),  # ています: a habit, not the future
    ("資源ごみの回収は木曜じゃなくて金曜だった。", None),
    # a corrected birthday is still a birthday
    ("Correction: Dad's birthday is Oct 21, not the 12th.", None),
    ("清水さんの誕生日、3月13日だった。勘違いしてた。", None),
])
def test_the_tense_in_what_people_write(text, expected):
    assert event_time(text, M) == expected


def test_questions_keep_reading_the_past():
    # a question's month is its latest occurrence, whatever its tense; a weekday alone is no cue
    assert [e.value for e in scan("what will we ship in May?", M, query=True)] == ["2025-05"]
    assert list(scan("what did we ship on Friday?", M, query=True)) == []


@pytest.mark.parametrize("text, may", [
    ("the weekly standup moved to room 4", False),  # "week" in a word: no grammar
    ("weekend plans", False),
    ("this week we ship", True),
    ("next\nweek we ship", True),
    ("the week after next", True),
    ("火曜にリリースした", True),
])
def test_the_pre_check_reads_week_phrases(text, may):
    assert _may_hold_time(text) is may
    if may:
        assert event_time(text, M) is not None


# --- through the command line ---------------------------------------------------------------

W = "2026-03-04T10:00:00Z"  # a Wednesday in ISO week 10: last week is 23 February to 1 March


def test_remember_last_week_then_recall_it_by_week(ms):
    mid = ms("remember", "Last week we rotated the staging keys", now=W).out.strip()
    other = ms("remember", "We rotated the production keys", now=W).out.strip()  # no time: now
    stored = ms("show", mid, "--json", now=W).json()["memory"]
    assert (stored["occurred_at"], stored["precision"], stored["time_buckets"]) == (
        "2026-02-23", "week", ["2026", "2026-02", "2026-03", "2026-W09"])

    def found(*during: str) -> list[str]:
        args = [a for d in during for a in ("--during", d)]
        r = ms("recall", "rotated keys", *args, "--json", "--no-touch", now=W)
        assert (r.rc, r.err) == (0, "")
        return [x["id"] for x in r.json()["results"]]

    assert found("2026-W09") == [mid]
    assert found("last week") == [mid]
    assert found("先週") == [mid]
    assert found("2026-W10") == [other]  # the record time's week
    assert mid in found("2026-02") and mid in found("2026-03")  # it touches both months
    assert found("2026-02-25") == []  # a week memory is in no single day


def test_remember_a_birthday_keeps_the_record_time(ms):
    mid = ms("remember", "Mom's birthday is March 5", now=W).out.strip()
    stored = ms("show", mid, "--json", now=W).json()["memory"]
    assert (stored["occurred_at"], stored["precision"]) == ("2026-03-04T10:00Z", "minute")


def test_remember_in_may_we_shipped_is_last_may(ms):
    mid = ms("remember", "In May we shipped the new search", now=W).out.strip()
    stored = ms("show", mid, "--json", now=W).json()["memory"]
    assert (stored["occurred_at"], stored["precision"]) == ("2025-05", "month")
