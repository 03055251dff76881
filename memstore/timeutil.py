"""Time values: parsing --now and event times, canonical formatting, time buckets.

Rules (documented in memstore(1) under TIME):
- Every instant is stored in UTC as ``YYYY-MM-DDTHH:MM:SSZ`` (second precision, so
  string order is time order). A value without a timezone is taken as UTC; a value
  with an offset is converted to UTC. Fractions of a second are dropped.
- ISO 8601 is parsed with the standard library. Other common spellings
  ("7 Jun 2026 10:00", "2026/06/07") fall back to python-dateutil, imported only then;
  they must name a four-digit year (missing fields are never filled in from today).
- Years run from 0001 to 9998; the year is always written with four digits.
- Event time (occurred_at) keeps its precision: "2020" is the year 2020, not 1 January.
  A week ("2026-W09", "last week") is stored as its Monday (2026-02-23) at precision
  "week": every event time stays an ISO prefix of its start, so text order is time order.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from .errors import UsageError

_YEAR = re.compile(r"^\d{4}$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_YEAR_IN = re.compile(r"\d{4}")
_DEFAULT = datetime(2000, 1, 1)  # fields dateutil finds missing: midnight, never "today"


def format_ts(dt: datetime) -> str:
    """Canonical UTC text of an aware datetime (the year always has four digits)."""
    dt = dt.astimezone(UTC)
    return f"{dt.year:04d}{dt.strftime('-%m-%dT%H:%M:%SZ')}"


def format_minute(dt: datetime) -> str:
    """Canonical UTC text of an event time of minute precision."""
    dt = dt.astimezone(UTC)
    return f"{dt.year:04d}{dt.strftime('-%m-%dT%H:%MZ')}"


def parse_ts(text: str) -> datetime:
    """Inverse of format_ts (trusted, canonical input; fromisoformat is ~20x faster than strptime)."""
    return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)


_MAX_YEAR = 9998  # leaves room for TTLs added to a time (expires_at) without overflow


def _to_utc(dt: datetime) -> datetime:
    """UTC, whole seconds; OverflowError outside years 0001..9998."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC).replace(microsecond=0)
    if dt.year > _MAX_YEAR:
        raise OverflowError(dt.year)
    return dt


def parse_instant(value: str, what: str = "--now") -> datetime:
    """Parse a user-supplied instant; raise UsageError naming the value and the fix."""
    text = (value or "").strip()
    hint = f"{what} {value!r} is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z"
    range_hint = f"{what} {value!r} is out of range; use a time from year 0001 to {_MAX_YEAR}"
    if not text or not any(c.isdigit() for c in text):
        raise UsageError(hint)
    try:
        iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        return _to_utc(datetime.fromisoformat(iso))
    except ValueError:
        pass
    except OverflowError:
        raise UsageError(range_hint) from None
    if not _YEAR_IN.search(text):
        # dateutil fills a missing year (and month, day) from today's date: refuse, so
        # that the same text always means the same instant
        raise UsageError(hint)
    import warnings

    from dateutil import parser  # slow import: only for non-ISO spellings

    try:
        with warnings.catch_warnings():
            # a zone name dateutil does not know ("EST", "ZZ") would silently become UTC
            warnings.simplefilter("error", parser.UnknownTimezoneWarning)
            return _to_utc(parser.parse(text, default=_DEFAULT))
    except parser.UnknownTimezoneWarning:
        raise UsageError(f"{what} {value!r} names a time zone by abbreviation; use an offset such as "
                         "-05:00 or Z, e.g. 2026-06-07T09:30:00-05:00") from None
    except OverflowError:
        raise UsageError(range_hint) from None
    except (ValueError, TypeError, parser.ParserError):
        raise UsageError(hint) from None


def parse_occurred(value: str, what: str = "--occurred-at") -> tuple[str, str]:
    """Parse an event time keeping its precision: returns (canonical text, precision)."""
    text = (value or "").strip()
    if _YEAR.match(text):
        if int(text) < 1:
            raise UsageError(f"{what} {value!r} is out of range; use a year from 0001 to 9999")
        return text, "year"
    m = _MONTH.match(text)
    if m:
        if not 1 <= int(m.group(2)) <= 12:
            raise UsageError(f"{what} {value!r} has no month {m.group(2)}; use YYYY-MM with 01..12")
        return text, "month"
    if _DAY.match(text):
        try:
            date.fromisoformat(text)
        except ValueError:
            raise UsageError(f"{what} {value!r} is not a calendar day; use YYYY-MM-DD") from None
        return text, "day"
    m = _WEEK.match(text)
    if m:
        try:
            monday = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
        except ValueError:
            raise UsageError(f"{what} {value!r} is not an ISO week; use YYYY-Www with 01..52 or 53") from None
        return monday.isoformat(), "week"
    dt = parse_instant(text, what)
    return format_minute(dt), "minute"


def occurred_start(occurred: str) -> datetime:
    """The first instant covered by an event time of any precision."""
    if len(occurred) == 4:
        return datetime(int(occurred), 1, 1, tzinfo=UTC)
    if len(occurred) == 7:
        return datetime(int(occurred[:4]), int(occurred[5:7]), 1, tzinfo=UTC)
    if len(occurred) == 10:
        return datetime.fromisoformat(occurred).replace(tzinfo=UTC)
    o = occurred  # YYYY-MM-DDTHH:MMZ (strptime would load _strptime: ms of a remember's start)
    return datetime(int(o[:4]), int(o[5:7]), int(o[8:10]), int(o[11:13]), int(o[14:16]), tzinfo=UTC)


def iso_week(d: date) -> str:
    y, w, _ = d.isocalendar()
    return f"{y:04d}-W{w:02d}"


def time_buckets(occurred: str, precision: str) -> list[str]:
    """Search keys expanded at write time: year, month, day and ISO week, as precise as known.
    A week (``occurred`` its Monday) is found under itself and under each year and month it
    touches: "last week" across two months may have happened in either."""
    if precision == "year":
        return [occurred]
    if precision == "month":
        return [occurred[:4], occurred]
    day = date.fromisoformat(occurred[:10])
    if precision == "week":
        try:
            sunday = day + timedelta(days=6)
        except OverflowError:  # the last days of 9999
            sunday = date.max
        return list(dict.fromkeys([day.isoformat()[:4], sunday.isoformat()[:4], day.isoformat()[:7],
                                   sunday.isoformat()[:7], iso_week(day)]))
    return [occurred[:4], occurred[:7], occurred[:10], iso_week(day)]


_FIRST = datetime(1, 1, 1, tzinfo=UTC)
_LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def ts_after(ts: str, days: float) -> str:
    """``days`` after ``ts`` (before, when negative), clamped to years 0001..9999: a TTL
    from late in 9998 expires at the end of time, a lookback from 0001 starts at its start."""
    try:
        return format_ts(parse_ts(ts) + timedelta(days=days))
    except OverflowError:
        return format_ts(_LAST if days > 0 else _FIRST)


def days_between(earlier: str, later: str) -> float:
    return (parse_ts(later) - parse_ts(earlier)).total_seconds() / 86400.0
