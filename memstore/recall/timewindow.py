"""Time windows named by a question, with slack: what recall weighs candidates by (never filters).

``windows(text, now)`` reads the question with memstore.textdates' grammar (as recall's time
cues do) plus phrases only a question uses: weekends ("last weekend", "the past weekend",
"over the weekend", 先週末, この前の週末) and vague counts ("a few days ago", "a couple of
weeks ago", 数日前, ひと月前). Each becomes a core span of days and a slack: people say
what they did on Saturday on Monday ("…on Saturday"), and "a month ago" is never exactly
30 days. A memory whose event time falls in the core ranks higher, one within the slack
a little higher, any other is untouched (memstore(7), RECALL).

Slack by what was named: a day ±2 days, a week ±3, a month ±7, a year none; a weekend
+2 days after it; a vague count its own spread. The future and bounds ("since May") name
no window. "How many days ago did I…" names none either: it asks for a time, it gives none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ..textdates import scan
from ..timeutil import parse_ts

_SLACK = {"day": 2, "week": 3, "month": 7, "year": 0}

# "last weekend", "the past weekend", "this past weekend", "over the weekend", "at the weekend"
_WEEKEND = re.compile(
    r"\b(?:(?:last|this past|the past|past|this|over the|at the|on the)\s+weekend|weekend just gone)\b"
    r"|先週末|この前の週末|こないだの週末|この間の週末|今週末|週末")
# vague counts: (phrase, days back, spread either side)
_VAGUE = [
    (re.compile(r"\ba\s+couple\s+(?:of\s+)?days\s+ago\b"), 2, 1),
    (re.compile(r"\b(?:a\s+few|several)\s+days\s+ago\b|数日前"), 4, 2),
    (re.compile(r"\bthe\s+other\s+day\b|この前|こないだ|この間"), 4, 3),
    (re.compile(r"\ba\s+couple\s+(?:of\s+)?weeks\s+ago\b"), 14, 4),
    (re.compile(r"\b(?:a\s+few|several)\s+weeks\s+ago\b|数週間前"), 21, 7),
    (re.compile(r"ひと月(?:ほど|くらい|ぐらい)?前"), 30, 7),
    # "about a month ago" is a day near 30 back, not last month: a span short enough to read whole
    (re.compile(r"\b(?:(?:about|around|roughly|nearly|almost|just over|a little over)\s+)?(?:a|one)\s+month\s+ago\b"
                r"|(?:1|一)(?:か|ヶ|カ|ケ)月(?:ほど|くらい|ぐらい)前"), 30, 4),
    (re.compile(r"\ba\s+couple\s+(?:of\s+)?months\s+ago\b"), 60, 14),
    (re.compile(r"\b(?:a\s+few|several)\s+months\s+ago\b|数か月前|数ヶ月前|数カ月前"), 90, 30),
]
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "the Saturday before last": the one before last Saturday (先々週の土曜 is textdates')
_BEFORE_LAST = re.compile(r"\bthe\s+(" + "|".join(_WEEKDAYS) + r")\s+before\s+last\b")
_BUCKET = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-W(\d{2}))?$")


def _shift(d: date, days: int) -> date:
    """d moved by days, held at the ends of the calendar (years 1 and 9999)."""
    try:
        return d + timedelta(days=days)
    except OverflowError:
        return date.min if days < 0 else date.max


@dataclass(frozen=True)
class Window:
    start: date  # core, inclusive
    end: date
    slack: int  # days either side that count at the lower weight
    phrase: str
    week: str | None = None  # the ISO week a week phrase named: memories known only to the week carry no day

    def weight(self, first: date, last: date) -> int:
        """2: the span [first, last] meets the core; 1: only the slack; 0: neither."""
        if first <= self.end and last >= self.start:
            return 2
        if self.slack and first <= _shift(self.end, self.slack) and last >= _shift(self.start, -self.slack):
            return 1
        return 0

    def days(self) -> tuple[date, date]:
        """The window with its slack, as (first day, last day)."""
        return _shift(self.start, -self.slack), _shift(self.end, self.slack)


def windows(text: str, now: str) -> list[Window]:
    """The time windows a question names, in order of appearance (possibly none)."""
    low = text.lower()
    today = parse_ts(now).date()
    found: list[tuple[int, Window]] = []
    taken: list[tuple[int, int]] = []
    for m in _WEEKEND.finditer(low):
        found.append((m.start(), _weekend(today, m.group(0))))
        taken.append(m.span())
    for m in _BEFORE_LAST.finditer(low):
        back = (today.weekday() - _WEEKDAYS.index(m.group(1))) % 7 or 7  # "last Saturday"
        day = _shift(today, -back - 7)
        found.append((m.start(), Window(day, day, _SLACK["day"], m.group(0))))
        taken.append(m.span())
    for pattern, back, spread in _VAGUE:
        for m in pattern.finditer(low):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            center = _shift(today, -back)
            found.append((m.start(), Window(_shift(center, -spread), min(today, _shift(center, spread)),
                                            max(1, spread // 2), m.group(0))))
            taken.append(m.span())
    for expr in scan(text, now, query=True):
        if expr.value is None or expr.kind in ("future", "bound", "out_of_range"):
            continue
        if any(a < expr.end and expr.start < b for a, b in taken):
            continue
        span = bucket_span(expr.value)
        if span is None:
            continue
        first, last, unit = span
        if expr.kind == "current":  # "this month": so far
            last = min(last, today)
        week = expr.value if unit == "week" else None
        found.append((expr.start, Window(first, last, _SLACK[unit], text[expr.start:expr.end], week)))
    found.sort(key=lambda f: f[0])
    out: list[Window] = []
    for _at, w in found:
        if w not in out:
            out.append(w)
    return out


def _weekend(today: date, phrase: str) -> Window:
    """The latest Saturday and Sunday not after today; "last weekend" said on a weekend day means
    the one before; "this weekend" / 今週末 said Friday to Sunday means the current one."""
    saturday = _shift(today, -((today.weekday() - 5) % 7))
    if today.weekday() >= 5 and phrase.startswith(("last", "the past", "past", "先週末")):
        saturday = _shift(saturday, -7)
    if today.weekday() == 4 and phrase in ("this weekend", "今週末", "週末"):
        saturday = _shift(today, 1)
    return Window(saturday, max(saturday, _shift(saturday, 1)), 2, phrase)


def bucket_span(bucket: str) -> tuple[date, date, str] | None:
    """A time bucket (2026, 2026-06, 2026-06-07, 2026-W23) as (first day, last day, unit)."""
    m = _BUCKET.match(bucket)
    if not m:
        return None
    year = int(m.group(1))
    try:
        if m.group(3):
            d = date(year, int(m.group(2)), int(m.group(3)))
            return d, d, "day"
        if m.group(2):
            month = int(m.group(2))
            first = date(year, month, 1)
            nxt = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
            return first, nxt - timedelta(days=1), "month"
        if m.group(4):
            monday = date.fromisocalendar(year, int(m.group(4)), 1)
            return monday, monday + timedelta(days=6), "week"
        return date(year, 1, 1), date(year, 12, 31), "year"
    except (ValueError, OverflowError):
        return None


def memory_span(occurred_at: str, precision: str) -> tuple[date, date] | None:
    """The days a memory's event time covers at its precision."""
    try:
        if precision == "year":
            span = bucket_span(occurred_at[:4])
        elif precision == "month":
            span = bucket_span(occurred_at[:7])
        elif precision == "week":  # stored as its Monday
            d = date.fromisoformat(occurred_at[:10])
            return d, _shift(d, 6)
        else:
            d = date.fromisoformat(occurred_at[:10])
            return d, d
    except ValueError:
        return None
    return None if span is None else (span[0], span[1])


NARROW = 10  # days: a window this short is read whole (semantic matches too), not only by its words


def buckets(ws: list[Window], slack: bool = True) -> list[str]:
    """Index time buckets for the windows: a whole month or year as itself (memories known
    only to the month carry no day), any other span as its days, a week phrase's days and
    its week; with ``slack``, the days of the slack beside it too."""
    out: list[str] = []
    for w in ws:
        out += _cover(w.start, w.end)
        if w.week:
            out.append(w.week)
        if slack and w.slack:
            out += _days(_shift(w.start, -w.slack), _shift(w.start, -1))
            out += _days(_shift(w.end, 1), _shift(w.end, w.slack))
    return list(dict.fromkeys(out))


def narrow(ws: list[Window]) -> bool:
    return bool(ws) and all((w.end - w.start).days + 1 <= NARROW for w in ws)


def _days(first: date, last: date) -> list[str]:
    return [_shift(first, i).isoformat() for i in range((last - first).days + 1)]


def _cover(first: date, last: date) -> list[str]:
    if (first.month, first.day, last.month, last.day) == (1, 1, 12, 31):
        return [f"{y:04d}" for y in range(first.year, last.year + 1)]
    if first.day == 1 and (last == date.max or _shift(last, 1).day == 1):
        out, y, m = [], first.year, first.month
        while (y, m) <= (last.year, last.month):
            out.append(f"{y:04d}-{m:02d}")
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return out
    if (last - first).days > 62:  # a long odd span: the months it touches
        end = date.max if (last.year, last.month) == (9999, 12) else _shift(_shift(last.replace(day=28), 4).replace(day=1), -1)
        return _cover(first.replace(day=1), end)
    return _days(first, last)
