"""Text analysis shared by indexing and querying.

English goes to a Tantivy analyzer that lower-cases, drops English stop words and stems. Runs of
CJK characters have no spaces, so they are split here into overlapping bigrams
(plus unigrams for one-character runs) and indexed with a whitespace tokenizer:
"砂糖" then finds "コーヒーに砂糖は入れない".
"""

from __future__ import annotations

import re
import unicodedata

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u30fc々〆]+")
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


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None
