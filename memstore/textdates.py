"""Time expressions read from free text, English and Japanese (memstore(1), TIME).

``event_time(text, recorded_at)`` gives the event time a memory's text states, as
(canonical occurred_at, precision), or None when it states none usable: the caller then
keeps the record time. ``scan`` yields every expression with its position and kind; the
recall time cues (memstore.recall.timecues) read questions with the same grammar.

Accepted (any case; dates in UTC; relative ones count back from the record time):
- absolute: 2024-04-05, 2024/4/5, 2024-04, 2026-W23; "April 5, 2024", "March 3rd",
  "3 March", "the 3rd of March 2024", "March 2024", "Sept 2021"; "in March" (a full
  month name after in / back in / during / from / on / early / mid / late); "in 2020",
  "back in 2019", "during 2020", "from 2019", "circa 2019", "early/mid/late 2020",
  "mid-2020", "(the) summer (of) 2020"; 2024年4月3日 2024年4月 2020年 2019年の夏 4月3日 3月.
- relative: today, earlier today, tonight, this morning|afternoon|evening, yesterday,
  last night, the day before yesterday; last|past|previous week|month|year; last
  Tuesday (the latest Tuesday strictly before the record day); Tuesday last week; last
  March (the latest March before this month); last summer|spring|autumn|fall (the year
  of the latest one over); N minutes|hours|days|weeks|months|years ago (N: digits or
  a/an/one..twelve); 今日 本日 今朝 今夜 今晩 昨日 昨夜 昨晩 一昨日 おととい; 先週 先々週
  前の週 先週の火曜(日) 今週の月曜; 先月 先々月 先月の3日; 去年 昨年 一昨年 おととし
  去年の3月(3日) 今年の3月 去年の夏; 3日前 三日前 十日前 2週間前 1ヶ月前 一か月前 3年前 2時間前.
- weeks: last|this|next|coming week, the week before last, the week after next, N weeks
  ago, 先週 今週 来週 再来週 先々週 前の週 2週間前, 2026-W23: the ISO week, at precision
  week (stored as its Monday), a week to come and the current one included.
Precision is never made up: days and weekdays give a day, weeks a week, months a month,
years and seasons a year.

A month, day or weekday without a year is placed by the text's tense: past ("we
shipped", was, did, had, happened, any verb in -ed; ～した でした だった ました) gives
the latest one not after the record day (a weekday: strictly before it); future (will,
'll, going to, shall, next, scheduled, planned, due, expected, booked, "moved|slipped
to <date>"; ～する予定 ～します つもり 予約 延期 付で 4月から に決定) the next one not
before it (a weekday: strictly after); future words win over past ones, so a plan told
in the past ("booked flights for April 18") is still to come. With neither, a month or
day is its occurrence nearest the record time (last, this or next year; a tie goes to
the past) and a weekday alone ("on Tuesday we deploy") is not read; a weekday is read
only after "on" (火曜に, 火曜は, 火曜の), so "the Sunday Globe" and "meets on the second
Wednesday" are no days. A date that recurs is a fact about a date, not an event time,
and is skipped: one without a year in a text with every|each <time unit, month or
weekday>, annually, yearly, 毎 (毎月 毎年 毎週), or a birthday or anniversary
(誕生日 記念日) the text does not celebrate ("Mom's birthday is March 5", "every March
5"; "we celebrated Mom's birthday on March 5" is an event).

The first expression in the text decides. These give None (the record time is kept):
the future other than a week (tomorrow, later today, next Tuesday|month|March, "N days
from now", 明日 来月 来年 3日後), the current month or year (this month|year, 今月 今年),
bounds (since|by|until|before|after a date) and "last winter" / 去年の冬 (which year?).
Never read as time: "last resort", "last time", "the last one", times of day, durations
("for 3 days", "in 3 days", 3日間), d/m and m/d numbers
(3/14), vague counts ("a few days ago", "1.5 years ago"), kanji years (二〇二〇年),
decades and fiscal years (2020年代 2020年度), a number inside a longer number, version,
id, price or phone number (12020, v2020.1, ABC-2020, $2020, 2,020, 555-2020), and a
year alone unless after one of the words above (a 2019 MacBook, 2020 units). Years
outside 1900..2099 count only inside a full date (2024-04-05, "March 1066"): "in 1066"
is more often a quantity than a date in what agents write. "Jan" alone is a name as
often as a month (a memory needs a full month name or a date); "may", "march" and "mar"
are months only when capitalised.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

from .timehint import may_hold_time as _may_hold_time
from .timeutil import iso_week, parse_ts

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
_MONTH_NO = {m: i for i, m in enumerate(_MONTHS, start=1)} | {
    m[:3]: i for i, m in enumerate(_MONTHS, start=1)} | {"sept": 9}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
              "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_KANJI = {c: i for i, c in enumerate("一二三四五六七八九", start=1)}

# month names as a trie: one test per first letter instead of 24 alternatives
_MON = ("(?:j(?:an(?:uary)?|u(?:ne?|ly?))|feb(?:ruary)?|ma(?:r(?:ch)?|y)|a(?:pr(?:il)?|ug(?:ust)?)"
        "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WD = "|".join(_WEEKDAYS)
_SEASON = "summer|spring|autumn|fall|winter"
_YEAR_END = r"(?![0-9a-z_]|[.,:/\-]\d|\s*%)"  # not a longer number, 2020s, 2020.1, 2020%
_DAY_UNITS = "日|週間|週|ヶ月|か月|カ月|ヵ月|ケ月|箇月|年|時間|分"

# One pattern per form; group names are unique within a family. Python's re tries
# each alternative at each position, so one alternation of every form scanned over
# the text is slow on every line. Instead cheap finders propose start
# positions (digit runs; the first characters of Japanese words; an English word trie,
# whose literal first letters let the engine skip positions), and only there the forms
# of that family are tried. The text is lower-cased first (ignore-case is slower).
# Checks that look left of a match (a word boundary, a number inside an id, "in"
# before a month) are done in Python on the few matches.
_D2, _D4, _K = r"\d\d?", r"\d\d\d\d", "[一二三四五六七八九十]"
_FORMS = {
    # digits first
    "iso": rf"(?P<iy>{_D4})(?:-(?P<im>\d\d)(?:-(?P<id>\d\d))?|-w(?P<iw>\d\d)|/(?P<sm>{_D2})/(?P<sd>{_D2}))"
           r"(?![0-9]|[-/.:]\d)",
    "ja_date": rf"(?P<jy>{_D4})年(?:(?P<jm>{_D2})月(?:(?P<jd>{_D2})日(?![間前後]))?|(?![前後間度代]))"
               r"(?:の?(?P<jys>[春夏秋冬]))?",
    "ja_count": rf"(?P<jc>\d\d?\d?)\s*(?P<jcu>{_DAY_UNITS})(?P<jcd>[前後])",
    "ja_md": rf"(?P<mm>{_D2})月(?![間前後])(?:(?P<md>{_D2})日(?![間前後]))?",
    "en_dmy": rf"(?P<dd>{_D2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm>{_MON})(?![a-z])\.?"
              rf"(?:,?\s+(?P<dy>{_D4}){_YEAR_END})?",
    "en_year": rf"(?P<yy>{_D4}){_YEAR_END}",
    # Japanese words
    "ja_kcount": rf"(?P<jc>{_K}{_K}?{_K}?)\s*(?P<jcu>{_DAY_UNITS})(?P<jcd>[前後])",
    "ja_week": r"(?P<jwk>先々週|先週|今週|再来週|来週)(?:の?(?P<jwd>[月火水木金土日])曜日?)?",
    "ja_month": rf"(?P<jmo>先々月|先月|今月|再来月|来月)(?!度)(?:の?(?P<jmd>{_D2})日(?![間前後]))?",
    "ja_year": r"(?P<jyr>一昨年|おととし|去年|昨年|今年|再来年|来年)(?!度)"
               rf"(?:の?(?:(?P<jym>{_D2})月(?:(?P<jyd>{_D2})日(?![間前後]))?|(?P<jyse>[春夏秋冬])))?",
    "ja_day": r"(?P<jdw>一昨日|おととい|昨日|昨夜|昨晩|今日|本日|今朝|今夜|今晩|明後日|明日)",
    "ja_prevweek": r"(?P<jpw>前の週)",
    "ja_wday": r"(?P<jwn>[月火水木金土日])曜日?(?=[にはの])",
    # English words
    "en_rel": r"(?P<er>the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)|day\s+after\s+tomorrow|yesterday"
              r"|tomorrow|later\s+today|earlier\s+(?:today|this\s+(?:morning|afternoon|evening))|today|tonight)\b",
    "en_last": r"(?P<ld>last|past|previous|next|coming|this)\s+(?P<lu>night|week|month|year|morning|afternoon"
               rf"|evening|{_WD}|{_SEASON})\b",
    "en_ago": r"(?P<cd>ago|from\s+now)\b",
    "en_wbl": r"the\s+week\s+(?P<wb>before\s+last|after\s+next)\b",
    "en_wday": rf"(?P<wdn>{_WD})\b",
    "en_month": rf"(?P<mn>{_MON})(?![a-z])\.?(?:\s+(?:the\s+)?(?P<mdd>{_D2})(?:st|nd|rd|th)?\b(?![:.,]\d))?"
                rf"(?:,?\s+(?P<my>{_D4}){_YEAR_END})?",
}
_NOT_BEFORE_NUMBER = set("0123456789abcdefghijklmnopqrstuvwxyz_$€£¥#.,:/+-")
_NOT_BEFORE_WORD = set("0123456789abcdefghijklmnopqrstuvwxyz_")
_KANJI_DIGITS = set("0123456789一二三四五六七八九十百千万数")


@cache
def _families() -> tuple:
    """(finder, forms, characters that may not stand before a start) per family, compiled
    on first use: most lines never get past the pre-check. The forms of a family
    are one alternation; an empty group closes each form, so m.lastgroup names it."""
    def forms(*names: str) -> re.Pattern:
        return re.compile("|".join(f"{_FORMS[n]}(?P<{n}>)" for n in names))

    return (
        (re.compile(r"\d+"), forms("iso", "ja_date", "ja_count", "ja_md", "en_dmy", "en_year"),
         _NOT_BEFORE_NUMBER),
        (re.compile(r"[一二三四五六七八九十先今再来お去昨本明]|前の週|[月火水木金土日]曜"),
         forms("ja_kcount", "ja_week", "ja_month", "ja_year", "ja_day", "ja_prevweek", "ja_wday"),
         _KANJI_DIGITS),
        (re.compile(r"a(?:go|pr|ug)|f(?:rom\s+now|eb|riday)|l(?:ast|ater)|p(?:ast|revious)|n(?:ext|ov)|coming"
                    r"|t(?:he\s+(?:day|week)|o(?:day|night|morrow)|his|uesday|hursday)|yesterday|earlier"
                    r"|d(?:ay\s+after|ec)|j(?:an|u[nl])|m(?:a[ry]|onday)|s(?:ep|aturday|unday)|oct|wednesday"),
         forms("en_rel", "en_last", "en_ago", "en_wbl", "en_wday", "en_month"), _NOT_BEFORE_WORD),
    )


# what may stand left of a match, read backwards from it (search ... endpos=start), and
# what ends a bare year in a question; compiled on first use like the families
_AROUND = {
    "year": r"(?:\b(?P<yp>back\s+in|in|during|circa|since|by|until|till|before|after|from|between)\s+)?"
            rf"(?:\b(?P<yq>early|mid|late)[\s-]+|\b(?:the\s+)?(?P<ys>{_SEASON})\s+(?:of\s+)?)?$",
    "month": r"\b(?P<mp>back\s+in|in|on|during|since|by|until|till|before|after|from|last|this|next|early"
             r"|mid|late)[\s-]+(?:the\s+)?(?:(?:early|mid|late)[\s-]+)?$",
    "count": rf"\b(?P<cn>\d{{1,3}}|{'|'.join(_NUM_WORDS)})\s+(?P<cu>minute|hour|day|week|month|year)s?\s+$",
    "weekday": rf"\b(?P<wd>{_WD})\s+$",
    "pause": r"\s*(?:[?!.,;:)\]」』）。、？！]|$)|\s+(?:and|or|to|through)\s+\d\d\d\d\b",
}


@cache
def _around(name: str) -> re.Pattern:
    return re.compile(_AROUND[name])

# Tense and recurrence, read over the whole text once it holds an expression. Future words
# win over past ones ("we decided we will ship in May"); a regular past is any word in -ed
# but these adjectives and non-verbs.
_MOOD = {
    # plans told in the past ("booked flights for April 18", "slipped to May 12", 4月1日付で
    # 交代しました) name a date to come: they count as future
    "future": r"\b(?:will|won't|shall|gonna|upcoming|planned|scheduled|rescheduled|next|going\s+to|due"
              r"|deadline|booked|reserved|targete?d?|expected|signed\s+up|registered|invited|cancell?ed"
              r"|(?:plans?|intends?|expects?)\s+to|(?:i|we|you|they|he|she|it)['’]ll)\b"
              r"|\b(?:moved|moves|pushed|slipped|postponed|delayed|bumped)\b[^.;]{0,20}?\b(?:to|until)\s+(?:the\s+)?"
              r"(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|\d)"
              r"|予定|つもり|予約|延期|招待|締め?切|提案|付で|[月日]から|に決[定ま]|に向け|(?<!てい)ます(?!た)|ませんか|でしょう|だろう"
              r"|する(?:[。、．，！!？?\s」』）)]|$)",
    "past": r"\b(?:was|were|did|didn't|had|happened|went|came|made|got|took|gave|began|ran|wrote|built|met"
            r"|saw|left|sent|found|told|said|bought|paid|held|won|lost|kept|brought|thought|felt|became"
            r"|broke|chose|drove|fell|flew|forgot|froze|grew|heard|knew|led|meant|rode|rose|sold|spent"
            r"|spoke|stood|taught|threw|understood|woke|wore|[a-z]{3,}ed)\b"
            r"|(?<!ま)た(?:[。、．，！!？?\s」』）)]|$|ので|から|けど|が|ため|の|と|り)",
    "not_past": r"speed|indeed|proceed|exceed|succeed|embed|breed|bleed|greed|shred|hundred|kindred|sacred"
                r"|based|related|detailed|limited|advanced|automated|dedicated|distributed|interested"
                r"|required|red|need|feed|seed|bed|shed|wed|fed",
    # a date that recurs: after every/each/毎, or a birthday's unless it was celebrated
    "every": rf"\b(?:every|each)\s+(?:other\s+|single\s+)?(?:day|week|month|year|morning|evening|night"
             rf"|weekday|quarter|{_SEASON}|{_WD}|{'|'.join(_MONTHS)}|\d)|\b(?:annually|yearly)\b|毎",
    "yearly": r"\b(?:birthday|bday|anniversary|anniversaries)s?\b|誕生日|記念日|命日",
    "celebrated": r"\bcelebrat|\bpart(?:y|ies)\b|祝",
}


@cache
def _mood_patterns() -> dict[str, re.Pattern]:
    return {k: re.compile(v) for k, v in _MOOD.items()}


class _Mood:
    """How a text places a month, day or weekday without a year: ``lean`` past (the latest
    occurrence), future (the next one) or None (the nearest; a weekday alone is then not
    read); ``recurs``: the date recurs (a birthday, "every March 5"), it is no event time.
    Read from the text on first use: most expressions ("yesterday", "in 2020") need neither."""

    __slots__ = ("_low", "_lean", "_recurs")

    def __init__(self, low: str | None, lean: str | None = None, recurs: bool = False):
        self._low, self._lean, self._recurs = low, lean, recurs

    def _read(self) -> None:
        low, self._low = self._low, None
        p = _mood_patterns()
        if p["future"].search(low):
            self._lean = "future"
        elif any(not p["not_past"].fullmatch(m.group(0)) for m in p["past"].finditer(low)):
            self._lean = "past"
        self._recurs = bool(p["every"].search(low)
                            or (p["yearly"].search(low) and not p["celebrated"].search(low)))

    @property
    def lean(self) -> str | None:
        if self._low is not None:
            self._read()
        return self._lean

    @property
    def recurs(self) -> bool:
        if self._low is not None:
            self._read()
        return self._recurs


_QUESTION = _Mood(None, "past")  # a question asks about what was, never a recurring date


# words that make a year (or a month) the event's own time, and those that make it a bound
_EVENT_PREP = {"in", "back in", "during", "circa", "from", "on", "early", "mid", "late"}
_BOUND_PREP = {"since", "by", "until", "till", "before", "after"}
_CAPITAL_ONLY = {"may", "march", "mar"}  # the verbs and "mar": months only when capitalised


@dataclass(frozen=True, slots=True)
class TimeExpr:
    """One time expression: ``value`` is YYYY, YYYY-MM, YYYY-MM-DD or YYYY-Www (None when
    it names no time that can be written down: before year 0001, "last winter", the
    future). ``kind``: absolute (a calendar date named in the text; may lie after the
    reference day), relative (counted back from it), current (this week/month/year),
    future (only a week has a value), bound (since/until a date), recurring (a date without
    a year that recurs: a birthday, "every March 5"; only in a memory), vague ("last
    winter") or out_of_range (before year 0001 or after 9999)."""

    start: int
    end: int
    value: str | None
    precision: str | None
    kind: str


def event_time(text: str, recorded_at: str) -> tuple[str, str] | None:
    """The event time the text states: (canonical occurred_at, precision), or None.

    ``recorded_at`` is canonical UTC (YYYY-MM-DDTHH:MM:SSZ); relative expressions count
    back from it. The first expression in the text decides, a recurring date aside (a
    birthday is a fact about a date); one in the future, the current period or a bound
    gives None (the caller keeps the record time), a week excepted."""
    if not _may_hold_time(text):
        return None
    for expr in scan(text, recorded_at):
        if expr.kind != "recurring":
            return _as_event(expr)
    return None


def _as_event(expr: TimeExpr) -> tuple[str, str] | None:
    if expr.value is None or expr.kind in ("bound", "recurring"):
        return None
    if expr.precision == "week":  # this, last or next week: stored as its Monday
        return date.fromisocalendar(int(expr.value[:4]), int(expr.value[6:]), 1).isoformat(), "week"
    if expr.kind in ("future", "current"):
        return None
    return expr.value, expr.precision


def _lower(text: str) -> str:
    """Lower case, one character for one (so positions match the original text)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def scan(text: str, now: datetime | str, *, query: bool = False) -> Iterator[TimeExpr]:
    """Time expressions in ``text`` in order of appearance, resolved against ``now`` (an
    aware datetime or canonical UTC text, parsed only when something is found).

    ``query`` reads a question instead of a memory: a month or day without a year is its
    latest occurrence not after ``now`` (in a memory: the nearest one); a bare year is a
    cue when the text ends or pauses after it ("what happened in 2020?", "2020"); a month
    name needs no "in"; "N weeks ago" is that day's week."""
    low = _lower(text)
    found = []
    how = None  # the sentence's tense and whether it states a recurring date: read on the first hit
    families = _families()
    if low.isascii():
        families = (families[0], families[2])  # no kanji: skip those
    for finder, family, banned in families:
        for start in finder.finditer(low):
            at = start.start()
            if at and low[at - 1] in banned and not low.endswith(("mid-", "early-", "late-"), 0, at):
                continue  # inside a word, id, version or price
            hit = family.match(low, at)
            if hit is None:
                continue
            if isinstance(now, str):
                now = parse_ts(now)
            if how is None:
                how = _QUESTION if query else _Mood(low)
            name = hit.lastgroup
            try:
                read = _READERS[name](hit, text, now, query, how)
            except (OverflowError, ValueError):  # before 0001 or after 9999: named, not writable
                read = (hit.start(), None, None, "out_of_range")
            if read is not None:
                found.append((read[0], -hit.end(), read))
    found.sort(key=lambda f: (f[0], f[1]))
    end = 0
    for start, neg_end, (_, value, precision, kind) in found:
        if start >= end:  # overlaps are read twice (2024年4月 and 4月): the leftmost, longest wins
            end = -neg_end
            yield TimeExpr(start, end, value, precision, kind)


def _clear_left(low: str, start: int, banned: set[str]) -> bool:
    return start == 0 or low[start - 1] not in banned


# --- resolution -------------------------------------------------------------------------

def _day(d: date) -> tuple[str, str, str]:
    return d.isoformat(), "day", "relative"


def _month(year: int, month: int, kind: str = "relative") -> tuple[str, str, str]:
    if not 1 <= year <= 9999:
        raise OverflowError(year)
    return f"{year:04d}-{month:02d}", "month", kind


def _year(year: int, kind: str = "relative") -> tuple[str, str, str]:
    if not 1 <= year <= 9999:
        raise OverflowError(year)
    return f"{year:04d}", "year", kind


_FUTURE = (None, None, "future")


def _months_back(today: date, n: int) -> tuple[int, int]:
    idx = today.year * 12 + today.month - 1 - n
    return idx // 12, idx % 12 + 1


def _absolute_day(year: int, month: int, day: int):
    try:
        return date(year, month, day).isoformat(), "day", "absolute"
    except ValueError:
        return None  # 2024-02-30: not a day, not a time


def _yearless_day(month: int, day: int, today: date, how: _Mood):
    """A month and day without a year, placed by the text's tense (_Mood): kind recurring
    when the date recurs."""
    if how.lean:  # the latest not after today, or the next not before (29 February: 8 years)
        step = -1 if how.lean == "past" else 1
        for year in range(today.year, min(max(today.year + 9 * step, 0), 10000), step):
            try:
                d = date(year, month, day)
            except ValueError:
                continue
            if (d <= today) if step < 0 else (d >= today):
                return _yearly((d.isoformat(), "day", "absolute"), how)
        return None
    best = None
    for year in (today.year - 1, today.year, today.year + 1):  # the nearest; ties to the past
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if best is None or abs((d - today).days) < abs((best - today).days):
            best = d
    return _yearly((best.isoformat(), "day", "absolute"), how) if best else None


def _yearless_month(month: int, today: date, how: _Mood):
    if not 1 <= month <= 12:
        return None
    if how.lean == "past":
        year = today.year if month <= today.month else today.year - 1
    elif how.lean == "future":
        year = today.year if month >= today.month else today.year + 1
    else:  # the nearest occurrence, counted in months; ties to the past
        here = today.year * 12 + today.month - 1
        _, year = min((abs(y * 12 + month - 1 - here), y) for y in (today.year - 1, today.year, today.year + 1))
    return _yearly(_month(year, month, "absolute"), how)


def _yearly(found: tuple, how: _Mood) -> tuple:
    return (found[0], found[1], "recurring") if how.recurs else found


def _week_day(today: date, weeks: int, weekday: int) -> tuple[str | None, str | None, str]:
    """That weekday of the ISO week ``weeks`` from this one."""
    d = today - timedelta(days=today.weekday()) + timedelta(days=7 * weeks + weekday)
    return _FUTURE if d > today else _day(d)


def _week(today: date, weeks: int) -> tuple[str | None, str | None, str]:
    """The ISO week ``weeks`` from this one; a week to come is named too (a plan's week)."""
    kind = "current" if weeks == 0 else "future" if weeks > 0 else "relative"
    return iso_week(today + timedelta(days=7 * weeks)), "week", kind


def _season_year(today: date, season: str):
    """The year of the latest such season over before today (summer: June to August)."""
    if season == "winter":
        return None, None, "vague"  # December and the next February: no honest year
    end = {"spring": 5, "summer": 8, "autumn": 11, "fall": 11}[season]
    return _year(today.year if today.month > end else today.year - 1)


def _num(token: str) -> int:
    """Digits, an English number word or a kanji numeral up to 九十九 (-1: not a number)."""
    if token in _NUM_WORDS:
        return _NUM_WORDS[token]
    if token.isdecimal():
        return int(token)
    tens, ten, ones = token.partition("十")
    if not ten:
        return _KANJI[token] if len(token) == 1 else -1
    if len(tens) > 1 or len(ones) > 1 or "十" in ones or tens == "一":
        return -1
    return (_KANJI[tens] if tens else 1) * 10 + (_KANJI[ones] if ones else 0)


def _ago(now: datetime, n: int, unit: str, query: bool):
    today = now.date()
    if unit in ("minute", "hour"):
        return _day((now - timedelta(**{unit + "s": n})).date())
    if unit == "day":
        return _day(today - timedelta(days=n))
    if unit == "week":
        return iso_week(today - timedelta(days=7 * n)), "week", "relative"  # "two weeks ago": that week
    if unit == "month":
        return _month(*_months_back(today, n))
    return _year(today.year - n)


def _guarded(start: int, resolve) -> tuple | None:
    """(start, *resolve()) for a reader whose expression starts left of its match ("3 days
    ago", "in June"): out of the calendar, the whole expression is out_of_range."""
    try:
        found = resolve()
    except (OverflowError, ValueError):
        return start, None, None, "out_of_range"
    return None if found is None else (start, *found)


def _at(start, found):
    return None if found is None else (start, *found)


def _iso(m, text, now, query, how):
    low = m.string
    if not _clear_left(low, m.start(), _NOT_BEFORE_NUMBER):
        return None
    year = int(m["iy"])
    if year == 0:
        return None
    if m["iw"]:
        week = int(m["iw"])
        try:
            date.fromisocalendar(year, week, 1)
        except ValueError:
            return None
        return m.start(), f"{year:04d}-W{week:02d}", "week", "absolute"
    if m["sm"]:
        return _at(m.start(), _absolute_day(year, int(m["sm"]), int(m["sd"])))
    if m["id"]:
        return _at(m.start(), _absolute_day(year, int(m["im"]), int(m["id"])))
    month = int(m["im"])
    return _at(m.start(), _month(year, month, "absolute")) if 1 <= month <= 12 else None


def _ja_date(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _NOT_BEFORE_NUMBER):
        return None
    year = int(m["jy"])
    if m["jd"]:
        found = _absolute_day(year, int(m["jm"]), int(m["jd"]))
    elif m["jm"]:
        month = int(m["jm"])
        found = _month(year, month, "absolute") if 1 <= month <= 12 and year else None
    else:
        found = _year(year, "absolute") if 1900 <= year <= 2099 else None
    return _at(m.start(), found)


_JA_UNITS = {"日": "day", "週間": "week", "週": "week", "年": "year", "時間": "hour", "分": "minute"}


def _ja_count(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _KANJI_DIGITS):
        return None
    n = _num(m["jc"])
    if n < 0:
        return None
    if m["jcd"] == "後":
        return m.start(), *_FUTURE
    return m.start(), *_ago(now, n, _JA_UNITS.get(m["jcu"], "month"), query)


def _ja_md(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _NOT_BEFORE_NUMBER):
        return None
    month = int(m["mm"])
    if not 1 <= month <= 12:
        return None
    if m["md"]:
        return _at(m.start(), _yearless_day(month, int(m["md"]), now.date(), how))
    return _at(m.start(), _yearless_month(month, now.date(), how))


def _ja_week(m, text, now, query, how):
    today = now.date()
    weeks = {"先々週": -2, "先週": -1, "今週": 0, "来週": 1, "再来週": 2}[m["jwk"]]
    if m["jwd"]:
        return m.start(), *_week_day(today, weeks, "月火水木金土日".index(m["jwd"]))
    return m.start(), *_week(today, weeks)


def _ja_month(m, text, now, query, how):
    today = now.date()
    back = {"先々月": 2, "先月": 1, "今月": 0, "来月": -1, "再来月": -2}[m["jmo"]]
    if back < 0:
        return m.start(), *_FUTURE
    year, month = _months_back(today, back)
    if m["jmd"]:
        found = _absolute_day(year, month, int(m["jmd"]))
        if found is None:
            return None
        return m.start(), *(_FUTURE if found[0] > today.isoformat() else (found[0], "day", "relative"))
    return m.start(), *_month(year, month, "current" if back == 0 else "relative")


def _ja_year(m, text, now, query, how):
    today = now.date()
    back = {"一昨年": 2, "おととし": 2, "去年": 1, "昨年": 1, "今年": 0, "来年": -1, "再来年": -2}[m["jyr"]]
    if back < 0:
        return m.start(), *_FUTURE
    year = today.year - back
    if m["jyd"]:
        return _at(m.start(), _absolute_day(year, int(m["jym"]), int(m["jyd"])))
    if m["jym"]:
        month = int(m["jym"])
        return _at(m.start(), _month(year, month, "absolute")) if 1 <= month <= 12 else None
    if m["jyse"] == "冬":
        return m.start(), None, None, "vague"  # 去年の冬: that December, or the one before?
    if m["jyse"]:
        return m.start(), *_year(year)
    return m.start(), *_year(year, "current" if back == 0 else "relative")


_JA_DAYS = {"一昨日": -2, "おととい": -2, "昨日": -1, "昨夜": -1, "昨晩": -1, "今日": 0, "本日": 0,
            "今朝": 0, "今夜": 0, "今晩": 0, "明日": 1, "明後日": 2}


def _ja_day(m, text, now, query, how):
    shift = _JA_DAYS[m["jdw"]]
    return m.start(), *(_FUTURE if shift > 0 else _day(now.date() + timedelta(days=shift)))


def _en_rel(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _NOT_BEFORE_WORD):
        return None
    w = m["er"]
    if "tomorrow" in w or w.startswith("later"):
        return m.start(), *_FUTURE
    shift = -2 if "before" in w else -1 if w == "yesterday" else 0
    return m.start(), *_day(now.date() + timedelta(days=shift))


def _en_last(m, text, now, query, how):
    low = m.string
    if not _clear_left(low, m.start(), _NOT_BEFORE_WORD):
        return None
    today = now.date()
    direction, unit = m["ld"], m["lu"]
    if direction == "last" and low[:m.start()].endswith("the ") and re.match(r"\s+of\b", low[m.end():]):
        return None  # "the last week of the quarter": a place in a period, not the past
    weeks = {"next": 1, "coming": 1, "this": 0}.get(direction, -1)
    if unit == "week":
        wd = _around("weekday").search(low, max(0, m.start() - 12), m.start())
        if wd:  # "Tuesday last week"
            return _guarded(wd.start(), lambda: _week_day(today, weeks, _WEEKDAYS.index(wd["wd"])))
        return m.start(), *_week(today, weeks)
    if weeks > 0:
        return m.start(), *_FUTURE
    last = weeks < 0
    if unit == "night":
        return (m.start(), *_day(today - timedelta(days=1))) if direction == "last" else None
    if unit in ("morning", "afternoon", "evening"):
        return (m.start(), *_day(today)) if direction == "this" else None
    if unit in _WEEKDAYS:  # "last Tuesday": the latest one strictly before today ("this Tuesday": unclear)
        back = (today.weekday() - _WEEKDAYS.index(unit) - 1) % 7 + 1
        return (m.start(), *_day(today - timedelta(days=back))) if last else None
    if unit == "month":
        return m.start(), *_month(*_months_back(today, 1 if last else 0), "relative" if last else "current")
    if unit == "year":
        return m.start(), *(_year(today.year - 1) if last else _year(today.year, "current"))
    return (m.start(), *_season_year(today, unit)) if last else None


def _en_ago(m, text, now, query, how):
    low = m.string
    c = _around("count").search(low, max(0, m.start() - 24), m.start())
    if c is None or not _clear_left(low, c.start(), _NOT_BEFORE_NUMBER):
        return None
    if m["cd"] != "ago":
        return c.start(), *_FUTURE
    return _guarded(c.start(), lambda: _ago(now, _num(c["cn"]), c["cu"], query))


def _month_token_ok(token: str, query: bool, context: bool) -> bool:
    low = token.lower()
    if low in _CAPITAL_ONLY and not token[0].isupper():
        return query and context and low != "mar"  # "in may" in a question is still May
    return True


def _en_month(m, text, now, query, how):
    low = m.string
    if not _clear_left(low, m.start(), _NOT_BEFORE_WORD):
        return None
    before = _around("month").search(low, max(0, m.start() - 24), m.start())
    start, pre = (before.start(), " ".join(before["mp"].split())) if before else (m.start(), "")
    return _guarded(start, lambda: _month_value(m, text, now.date(), query, how, pre))


def _month_value(m, text, today, query, how, pre):
    name = m.string[m.start("mn"):m.end("mn")]
    month = _MONTH_NO[name]
    if not _month_token_ok(text[m.start("mn"):m.end("mn")], query, bool(pre or m["mdd"] or m["my"])):
        return None
    if not (query or m["mdd"] or m["my"] or name in _MONTHS or pre == "last"):
        return None  # a memory: "Jan" alone is as often a name as a month
    if pre == "next":
        return _FUTURE
    if m["mdd"] and m["my"]:
        found = _absolute_day(int(m["my"]), month, int(m["mdd"]))
    elif m["mdd"]:
        found = _yearless_day(month, int(m["mdd"]), today, how)
    elif m["my"]:
        year = int(m["my"])
        found = _month(year, month, "absolute") if year else None
    elif pre == "last":  # the latest such month strictly before this one
        return _month(today.year if month < today.month else today.year - 1, month)
    elif pre == "this":
        return _month(today.year, month, "absolute")
    elif query:
        # a month name alone is a cue in a question; the verbs need "in May"
        found = None if name in _CAPITAL_ONLY and not pre else _yearless_month(month, today, how)
    elif pre in _EVENT_PREP or pre in _BOUND_PREP:
        found = _yearless_month(month, today, how)  # a memory: "in March", not "March" alone
    else:
        return None
    if found is None:
        return None
    return found[0], found[1], "bound" if pre in _BOUND_PREP else found[2]


def _en_dmy(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _NOT_BEFORE_NUMBER):
        return None
    if not _month_token_ok(text[m.start("dm"):m.end("dm")], query, False):
        return None
    month, day = _MONTH_NO[m["dm"]], int(m["dd"])
    if m["dy"]:
        return _at(m.start(), _absolute_day(int(m["dy"]), month, day))
    return _at(m.start(), _yearless_day(month, day, now.date(), how))


def _en_wbl(m, text, now, query, how):
    if not _clear_left(m.string, m.start(), _NOT_BEFORE_WORD):
        return None
    return m.start(), *_week(now.date(), -2 if m["wb"].startswith("before") else 2)


def _en_wday(m, text, now, query, how):
    """A weekday alone ("on Tuesday we shipped"): read only in a memory whose tense places it,
    after "on" (火曜に, 火曜は, 火曜の in Japanese)."""
    low = m.string
    if query or not _clear_left(low, m.start(), _NOT_BEFORE_WORD) or not low[:m.start()].endswith("on "):
        return None  # "the Sunday Globe", "meets on the second Wednesday": no day of its own
    if not how.lean or re.match(r"\s+before\s+last\b", low[m.end():]):
        return None  # "the Tuesday before last": not the latest one
    return m.start(), *_weekday(now.date(), _WEEKDAYS.index(m["wdn"]), how)


def _ja_wday(m, text, now, query, how):
    if query or not how.lean or not _clear_left(m.string, m.start(), _KANJI_DIGITS):
        return None
    return m.start(), *_weekday(now.date(), "月火水木金土日".index(m["jwn"]), how)


def _weekday(today: date, weekday: int, how: _Mood):
    """The latest such weekday strictly before today (past) or the next strictly after."""
    if how.lean == "past":
        d = today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    else:
        d = today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    return _yearly((d.isoformat(), "day", "absolute"), how)


def _ja_prevweek(m, text, now, query, how):
    return m.start(), *_week(now.date(), -1)


def _en_year(m, text, now, query, how):
    low = m.string
    year = int(m["yy"])
    if not 1900 <= year <= 2099:
        return None
    if not _clear_left(low, m.start(), _NOT_BEFORE_NUMBER) and low[m.start() - 1] != "-":
        return None
    b = _around("year").search(low, max(0, m.start() - 32), m.start())
    pre = " ".join((b["yp"] or "").split())
    if low[m.start() - 1:m.start()] == "-" and not b["yq"]:
        return None  # ABC-2020, 555-2020; only "mid-2020" has a dash
    if pre in _BOUND_PREP:
        return b.start(), *_year(year, "bound")
    if b["yq"] or b["ys"] or pre in _EVENT_PREP:
        return b.start(), *_year(year, "absolute")
    if not query:
        return None  # a 2019 MacBook, 2020 units, "of 2020": not an event's time
    if low[:m.start()].rstrip(" ()")[-1:].isdigit():
        return None  # the end of a phone number
    if pre or _around("pause").match(low, m.end()):
        return b.start(), *_year(year, "absolute")
    return None


_READERS = {
    "iso": _iso, "ja_date": _ja_date, "ja_count": _ja_count, "ja_kcount": _ja_count, "ja_md": _ja_md, "ja_week": _ja_week,
    "ja_month": _ja_month, "ja_year": _ja_year, "ja_day": _ja_day, "en_rel": _en_rel,
    "en_last": _en_last, "en_ago": _en_ago, "en_month": _en_month, "en_dmy": _en_dmy,
    "en_year": _en_year, "en_wbl": _en_wbl, "en_wday": _en_wday, "ja_wday": _ja_wday,
    "ja_prevweek": _ja_prevweek,
}
