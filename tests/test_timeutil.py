"""Time: parsing --now and event times, canonical text, buckets, arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.errors import UsageError
from memstore.timeutil import (
    days_between,
    format_minute,
    format_ts,
    iso_week,
    occurred_start,
    parse_instant,
    parse_occurred,
    parse_ts,
    time_buckets,
    ts_after,
)


@pytest.mark.parametrize("text,expected", [
    ("2026-06-07T09:30:00Z", "2026-06-07T09:30:00Z"),
    ("2026-06-07t09:30:00z", "2026-06-07T09:30:00Z"),
    ("  2026-06-07T09:30:00Z\n", "2026-06-07T09:30:00Z"),
    ("2026-06-07T09:30:00", "2026-06-07T09:30:00Z"),  # no zone: UTC
    ("2026-06-07 09:30", "2026-06-07T09:30:00Z"),
    ("2026-06-07", "2026-06-07T00:00:00Z"),
    ("2026-06-07T18:30:00+09:00", "2026-06-07T09:30:00Z"),
    ("2026-06-07T01:30:00-08:00", "2026-06-07T09:30:00Z"),
    ("2026-06-07T09:30:00.999999Z", "2026-06-07T09:30:00Z"),  # fractions dropped, not rounded
    ("20260607T093000Z", "2026-06-07T09:30:00Z"),
    ("2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00Z"),
    # friendlier spellings through python-dateutil; missing fields never come from today
    ("7 Jun 2026 10:00", "2026-06-07T10:00:00Z"),
    ("2026/06/07", "2026-06-07T00:00:00Z"),
    ("June 7, 2026 9:30 PM", "2026-06-07T21:30:00Z"),
    ("2026", "2026-01-01T00:00:00Z"),
    ("0500-01-01", "0500-01-01T00:00:00Z"),  # four-digit years, always
])
def test_parse_instant(text, expected):
    assert format_ts(parse_instant(text)) == expected


@pytest.mark.parametrize("text", ["", "   ", "garbage", "now", "yesterday", "2026-13-01", "2026-06-32",
                                  "1", "7 Jun 10:00", "June 7", "12:00", "2026-06-07T25:00:00Z", "\x00"])
def test_parse_instant_rejects(text):
    with pytest.raises(UsageError) as info:
        parse_instant(text, "--now")
    assert str(info.value) == f"--now {text!r} is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z"


@pytest.mark.parametrize("text", ["9999-12-31T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-06-01"])
def test_parse_instant_out_of_range(text):
    with pytest.raises(UsageError, match=r"is out of range; use a time from year 0001 to 9998$"):
        parse_instant(text, "--now")


def test_parse_instant_names_the_option():
    with pytest.raises(UsageError, match=r"^--since 'x1' is not a date/time"):
        parse_instant("x1", "--since")


@pytest.mark.parametrize("text,expected", [
    ("2020", ("2020", "year")),
    (" 2020 ", ("2020", "year")),
    ("2020-06", ("2020-06", "month")),
    ("2020-06-07", ("2020-06-07", "day")),
    ("2020-02-29", ("2020-02-29", "day")),
    ("2020-06-07T10:15", ("2020-06-07T10:15Z", "minute")),
    ("2020-06-07T10:15:59Z", ("2020-06-07T10:15Z", "minute")),
    ("2020-06-07T10:15:00+02:00", ("2020-06-07T08:15Z", "minute")),
    ("7 Jun 2020 10:15", ("2020-06-07T10:15Z", "minute")),
    ("0999", ("0999", "year")),
    ("9999", ("9999", "year")),
    ("2026-W09", ("2026-02-23", "week")),  # a week is stored as its Monday
    ("2026-W01", ("2025-12-29", "week")),
    ("2020-W53", ("2020-12-28", "week")),
])
def test_parse_occurred_keeps_precision(text, expected):
    assert parse_occurred(text) == expected


@pytest.mark.parametrize("text,message", [
    ("0000", "--occurred-at '0000' is out of range; use a year from 0001 to 9999"),
    ("2020-00", "--occurred-at '2020-00' has no month 00; use YYYY-MM with 01..12"),
    ("2020-13", "--occurred-at '2020-13' has no month 13; use YYYY-MM with 01..12"),
    ("2021-02-29", "--occurred-at '2021-02-29' is not a calendar day; use YYYY-MM-DD"),
    ("later", "--occurred-at 'later' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z"),
    ("2025-W53", "--occurred-at '2025-W53' is not an ISO week; use YYYY-Www with 01..52 or 53"),
    ("2026-W00", "--occurred-at '2026-W00' is not an ISO week; use YYYY-Www with 01..52 or 53"),
])
def test_parse_occurred_rejects(text, message):
    with pytest.raises(UsageError) as info:
        parse_occurred(text)
    assert str(info.value) == message


@pytest.mark.parametrize("occurred,precision,buckets", [
    ("2020", "year", ["2020"]),
    ("2020-06", "month", ["2020", "2020-06"]),
    ("2020-06-07", "day", ["2020", "2020-06", "2020-06-07", "2020-W23"]),
    ("2020-06-07T08:15Z", "minute", ["2020", "2020-06", "2020-06-07", "2020-W23"]),
    ("2021-01-03", "day", ["2021", "2021-01", "2021-01-03", "2020-W53"]),  # ISO week belongs to 2020
    ("2024-12-30", "day", ["2024", "2024-12", "2024-12-30", "2025-W01"]),
    ("0500-01-01", "day", ["0500", "0500-01", "0500-01-01", "0499-W53"]),
    # a week: itself and each month and year it touches
    ("2026-06-01", "week", ["2026", "2026-06", "2026-W23"]),
    ("2026-02-23", "week", ["2026", "2026-02", "2026-03", "2026-W09"]),
    ("2025-12-29", "week", ["2025", "2026", "2025-12", "2026-01", "2026-W01"]),
    ("9999-12-27", "week", ["9999", "9999-12", "9999-W52"]),  # runs past the end of the calendar
])
def test_time_buckets(occurred, precision, buckets):
    assert time_buckets(occurred, precision) == buckets


@pytest.mark.parametrize("occurred,start", [
    ("2020", datetime(2020, 1, 1, tzinfo=UTC)),
    ("2020-06", datetime(2020, 6, 1, tzinfo=UTC)),
    ("2020-06-07", datetime(2020, 6, 7, tzinfo=UTC)),  # a day, or the Monday of a week
    ("2020-06-07T08:15Z", datetime(2020, 6, 7, 8, 15, tzinfo=UTC)),
])
def test_occurred_start(occurred, start):
    assert occurred_start(occurred) == start


def test_arithmetic():
    assert ts_after("2026-06-07T09:30:00Z", 14) == "2026-06-21T09:30:00Z"
    assert ts_after("2026-06-07T09:30:00Z", 0.5) == "2026-06-07T21:30:00Z"
    assert days_between("2026-06-07T09:30:00Z", "2026-06-21T21:30:00Z") == 14.5
    assert days_between("2026-06-08T00:00:00Z", "2026-06-07T00:00:00Z") == -1.0
    assert iso_week(datetime(2026, 6, 7).date()) == "2026-W23"
    assert format_minute(datetime(2026, 6, 7, 18, 30, 59, tzinfo=timezone(timedelta(hours=9)))) == "2026-06-07T09:30Z"


instants = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9998, 12, 30),
                        timezones=st.just(UTC))


@given(instants)
def test_canonical_text_round_trips_and_sorts_like_time(dt):
    text = format_ts(dt)
    assert len(text) == 20
    assert parse_ts(text) == dt.replace(microsecond=0)
    assert format_ts(parse_instant(text)) == text
    assert format_ts(parse_instant(dt.isoformat())) == text


@given(instants, instants)
def test_string_order_is_time_order(a, b):
    a, b = a.replace(microsecond=0), b.replace(microsecond=0)
    assert (format_ts(a) < format_ts(b)) == (a < b)


@given(st.text(max_size=40))
def test_parse_instant_only_raises_usage_errors(text):
    try:
        parse_instant(text)
    except UsageError:
        pass


@given(st.text(max_size=40))
def test_parse_occurred_only_raises_usage_errors(text):
    try:
        occurred, precision = parse_occurred(text)
    except UsageError:
        return
    assert time_buckets(occurred, precision)[0] == occurred[:4]
