"""Extractive text helpers for abstractions: sentences, content tokens, the most
informative sentence of a text and the most central sentence of a group.

No model: a sentence's information is the number of distinct content tokens it
holds (English words that are not stopwords, CJK character bigrams). Ties go to
the earlier sentence, so every abstraction is deterministic.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .cjk import CJK as _CJK

_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "the a an and or but of to in on at for with by from as is are was were be been it its this that "
    "these those we i you he she they our my your their his her them us me not no so if then than "
    "there here have has had do does did will would can could should may might just also very".split()
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s and s.strip()]


@lru_cache(maxsize=65536)  # pure; the weekly jobs ask about the same texts again and again
def tokens(text: str) -> frozenset[str]:
    out: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK.search(word):
            out.update(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        elif len(word) > 2 and word not in _STOP:
            out.add(word)
    return frozenset(out)


@lru_cache(maxsize=65536)
def informative_sentence(text: str) -> str:
    """The sentence with the most distinct content tokens (the first on a tie)."""
    parts = sentences(text) or [text.strip()]
    return max(parts, key=lambda s: (len(tokens(s)), -parts.index(s)))


def central_sentence(texts: list[str]) -> str:
    """Of each text's informative sentence, the one sharing most tokens with the others."""
    return _central(tuple(texts))


@lru_cache(maxsize=4096)
def _central(texts: tuple[str, ...]) -> str:
    cands = [informative_sentence(t) for t in texts]
    toks = [tokens(c) for c in cands]

    def score(i: int) -> tuple[float, int]:
        shared = sum(len(toks[i] & toks[j]) / max(1, len(toks[i] | toks[j]))
                     for j in range(len(cands)) if j != i)
        return (round(shared, 9), -i)

    return cands[max(range(len(cands)), key=score)] if cands else ""
