"""Text analysis shared by indexing and querying.

English goes to a Tantivy analyzer that lower-cases, drops English stop words and stems. Runs of
CJK characters have no spaces, so they are split here into overlapping bigrams
(plus unigrams for one-character runs) and indexed with a whitespace tokenizer:
"砂糖" then finds "コーヒーに砂糖は入れない".
"""

from __future__ import annotations

import re
import unicodedata

from ..cjk import CJK_RUN as _CJK_RUN

_NOT_WORD = re.compile(r"[^\w\s]+")


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def cjk_tokens(text: str) -> list[str]:
    """Bigrams of every CJK run (a one-character run is its own token)."""
    tokens: list[str] = []
    for run in _CJK_RUN.findall(normalize(text)):
        if len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def latin_text(text: str) -> str:
    """The text with CJK runs and query-syntax characters removed (for the English analyzer)."""
    return " ".join(_NOT_WORD.sub(" ", _CJK_RUN.sub(" ", normalize(text))).split())


# Query-side only (documents keep every word): function words that Tantivy's short English
# list keeps, so "what does billing use?" searches for billing and use, not "what" and "doe".
QUERY_STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves
""".split())


def query_words(text: str) -> str:
    """The latin part of a query without function words (all of it if nothing else is left)."""
    words = latin_text(text).split()
    kept = [w for w in words if w not in QUERY_STOP_WORDS]
    return " ".join(kept or words)


def content_words(text: str) -> int:
    """How many words of substance a text holds: latin words that are no function words, plus
    one per two CJK characters (Japanese has no spaces)."""
    latin = [w for w in latin_text(text).split() if w not in QUERY_STOP_WORDS]
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    return len(latin) + cjk // 2
