"""Time cues in queries and --during values, resolved against ``now`` into time buckets.

The grammar is memstore.textdates' (memstore(1), TIME), read as a question: a month or
day without a year is its latest occurrence not after ``now``.

Accepted: 2026, 2026-06, 2026-06-07, 2026-W23, 2026/6/7; bare years 1900..2099 where
the text ends or pauses after them, before "and 2021", or after "in", "during",
"since", "between"... ("what happened in 2020?", "2020"; not "2020 units", a 2019
MacBook, v2020.1, ABC-2020, $2020, 555-2020); today / yesterday / the day before
yesterday / this morning / tonight / last night / this|last|past|previous
week|month|year; the week before last; last Tuesday (the latest one before today) /
Tuesday last week; N days|weeks|months|years ago (weeks: that day's week); last March,
last summer (its year); month names ("in June", "June 2026", "Jan"; the verbs need "in May" or a date)
and days ("March 3", "3 March", "April 5, 2024"); 今日 本日 今朝 昨日 一昨日 今週 先週
先々週 前の週 先週の火曜 今月 先月 今年 去年 昨年 一昨年 去年の夏 今年の3月; 3日前 三日前 2週間前
1ヶ月前 3年前; 3月 / 3月3日 / 2026年3月 / 2020年. "last" must be followed by a time
unit: "last resort" or "last time" is not a time cue. The future ("next week",
tomorrow, 来週) is not a cue; a --during value may name a week to come ("next week",
来週, "the week after next").
"""

from __future__ import annotations

import re
from datetime import date

from ..errors import UsageError
from ..textdates import scan

_BUCKET = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-W(\d{2}))?$")


def parse_during(value: str, now: str) -> str:
    """A --during value as one time bucket, or UsageError naming the fix."""
    text = value.strip()
    if _BUCKET.match(text):
        return text
    exprs = list(scan(text, now, query=True))
    if len(exprs) == 1 and exprs[0].kind == "out_of_range" and (exprs[0].start, exprs[0].end) == (0, len(text)):
        raise UsageError(f"--during {value!r} falls before year 0001 at --now {now}; "
                         "use a later --now or a date such as 0001-01")
    found = _buckets(exprs, future=True)  # asked for by name: "--during 'next week'" is a plan's week
    if len(found) == 1:
        return found[0]
    raise UsageError(f"--during {value!r} is not a time I understand; use 2026-06, 2026-W23, "
                     "2026-06-07, \"last week\" or 先週")


def find_cues(text: str, now: str) -> list[str]:
    """Time buckets mentioned in free text (possibly none), in order of appearance."""
    return _buckets(scan(text, now, query=True))


def _buckets(exprs, future: bool = False) -> list[str]:
    seen: list[str] = []
    for expr in exprs:
        # the future (but in --during) and what cannot be written (before 0001, "last winter") are no cue
        if expr.value is not None and (future or expr.kind != "future") and expr.value not in seen:
            seen.append(expr.value)
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
