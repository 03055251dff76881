"""The cheap test every text passes through before memstore.textdates reads a time from it.

Kept apart so that ``remember`` pays for the time grammar (its import and compilation,
a few ms per process) only for a text that may state a time.
"""

from __future__ import annotations

import re
from functools import cache

_DIGITS = b"0123456789"
# a word of its own, as the grammar reads one ("Jan 5", "1 JAN", "Sept 3"): "benchmark 7",
# "decided after incident 42" and "junior 2" hold none (before, any "dec" or "mar" with a
# digit loaded the grammar); full names are among the words below
_ABBREVIATED = rb"(?i)\b(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)(?![a-z])"


@cache
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(year-like digits, a month abbreviation, a digit or a Japanese time character):
    compiled on first need."""
    return re.compile(rb"\d{4}"), re.compile(_ABBREVIATED), re.compile(r"[\d日月年週曜朝夜晩時分]|おとと")


def may_hold_time(text: str) -> bool:
    """Cheap necessary condition: every expression that gives an event time holds four digits
    in a row (English), a digit or one of these kanji (Japanese), or one of these words
    (checked by a test). Cheaper than one regex over the same words (CPython's re tries
    each alternative at each position) or any() over a tuple of them."""
    if text.isascii():
        raw = text.encode()
        # a digit alone is not enough: every English expression with digits and no time word
        # holds a year (2020, 2024-04-05, 2026-W23); "note number 3" must not load the grammar
        if len(raw.translate(None, _DIGITS)) != len(raw):
            yearish, abbreviated, _ = _patterns()
            if yearish.search(raw) or abbreviated.search(raw):  # "Jan 5", "1 JAN": a day in a month
                return True
    elif _patterns()[2].search(text):
        return True
    s = text.lower()
    return ("ago" in s or "last" in s or "past" in s or "previous" in s or "day" in s or "tonight" in s
            or "morning" in s or "noon" in s or "evening" in s or "uary" in s or "march" in s
            or "april" in s or "may" in s or "june" in s or "july" in s or "august" in s or "ember" in s
            or "october" in s or ("week" in s and _week_named(s)))


def _week_named(s: str) -> bool:
    """"this|next|coming week" or "the week after next" (a week with "last" or "ago" passed
    above): "weekly" and "weekend" do not load the grammar. str.find, not a regex: an
    alternation without a literal start is tried at every position."""
    at = s.find("week")
    while at >= 0:
        if s[:at].rstrip().endswith(("this", "next", "coming")) or s[at + 4:].lstrip().startswith("after"):
            return True
        at = s.find("week", at + 4)
    return False


