"""Time cues in queries and --during values, resolved against ``now`` into time buckets.

Accepted: 2026, 2026-06, 2026-06-07, 2026-W23; today / yesterday / this|last week /
this|last month / this|last year; 今日 昨日 今週 先週 今月 先月 今年 去年 昨年;
month names ("in June", "June 2026") and 3月 / 2026年3月. A bare month without a
year means its latest occurrence not after ``now``. "last" must be followed by a
time unit: "last resort" or "last time" is not a time cue.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from ..errors import UsageError
from ..timeutil import iso_week, parse_ts

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MON = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS if m not in ("may", "march")])

_BUCKET = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-W(\d{2}))?$")
_RELATIVE = re.compile(
    r"\b(today|yesterday|(?:this|last|past|previous)\s+(?:week|month|year))\b(?!\w)"
    r"|(今日|本日|昨日|今週|先週|今月|先月|今年|去年|昨年)", re.IGNORECASE)
_MONTH_NAME = re.compile(rf"\b(?:in\s+)?({_MON})\b\.?(?:\s+(\d{{4}}))?", re.IGNORECASE)
_JA_MONTH = re.compile(r"(?:(\d{4})年)?(\d{1,2})月")
_ISO = re.compile(r"\b(\d{4}-W\d{2}|\d{4}-\d{2}(?:-\d{2})?)\b")


def _month_bucket(year: int, month: int) -> str:
    return f"{year:04d}-{month:02d}"


def _latest_month(month: int, today: date) -> str | None:
    year = today.year if month <= today.month else today.year - 1
    return _month_bucket(year, month) if year >= 1 else None


def _relative(word: str, today: date) -> str | None:
    """The bucket a relative word names, or None when it falls before year 0001 (a --now
    at the start of the calendar has no "yesterday")."""
    try:
        return _relative_bucket(word, today)
    except OverflowError:
        return None


def _relative_bucket(word: str, today: date) -> str | None:
    w = " ".join(word.casefold().split())
    if w in ("today", "今日", "本日"):
        return today.isoformat()
    if w in ("yesterday", "昨日"):
        return (today - timedelta(days=1)).isoformat()
    if w in ("this week", "今週"):
        return iso_week(today)
    if w in ("last week", "past week", "previous week", "先週"):
        return iso_week(today - timedelta(days=7))
    if w in ("this month", "今月"):
        return _month_bucket(today.year, today.month)
    if w in ("last month", "past month", "previous month", "先月"):
        first = today.replace(day=1) - timedelta(days=1)
        return _month_bucket(first.year, first.month)
    if w in ("this year", "今年"):
        return str(today.year)
    return str(today.year - 1) if today.year > 1 else None  # last/past/previous year, 去年, 昨年


def parse_during(value: str, now: str) -> str:
    """A --during value as one time bucket, or UsageError naming the fix."""
    text = value.strip()
    today = parse_ts(now).date()
    m = _BUCKET.match(text)
    if m:
        return text
    m = _RELATIVE.fullmatch(text)
    if m:
        bucket = _relative(m.group(0), today)
        if bucket is None:
            raise UsageError(f"--during {value!r} falls before year 0001 at --now {now}; "
                             "use a later --now or a date such as 0001-01")
        return bucket
    found = find_cues(text, now)
    if len(found) == 1:
        return found[0]
    raise UsageError(f"--during {value!r} is not a time I understand; use 2026-06, 2026-W23, "
                     "2026-06-07, \"last week\" or 先週")


def find_cues(text: str, now: str) -> list[str]:
    """Time buckets mentioned in free text (possibly none), in order of appearance."""
    today = parse_ts(now).date()
    found: list[tuple[int, str]] = []
    for m in _ISO.finditer(text):
        found.append((m.start(), m.group(1)))
    for m in _RELATIVE.finditer(text):
        found.append((m.start(), _relative(m.group(0), today)))
    for m in _MONTH_NAME.finditer(text):
        name = m.group(1).casefold()
        month = _MONTHS.get(name) or next(v for k, v in _MONTHS.items() if k.startswith(name))
        if name in ("march", "may") and not m.group(0).lower().startswith("in") and not m.group(2):
            continue  # the verbs "march" and "may": only "in May" or "May 2026" are times
        found.append((m.start(), _month_bucket(int(m.group(2)), month) if m.group(2)
                      else _latest_month(month, today)))
    for m in _JA_MONTH.finditer(text):
        month = int(m.group(2))
        if 1 <= month <= 12:
            found.append((m.start(), _month_bucket(int(m.group(1)), month) if m.group(1)
                          else _latest_month(month, today)))
    seen: list[str] = []
    for _pos, bucket in sorted(found, key=lambda f: (f[0], f[1] or "")):  # None: before 0001
        if bucket is not None and bucket not in seen:
            seen.append(bucket)
    return seen


def validate_bucket(bucket: str) -> bool:
    m = _BUCKET.match(bucket)
    if not m:
        return False
    try:
        if m.group(3):
            date.fromisoformat(bucket)
        elif m.group(2):
            return 1 <= int(m.group(2)) <= 12
        elif m.group(4):
            return 1 <= int(m.group(4)) <= 53
    except ValueError:
        return False
    return True
