"""Which characters are CJK: written without spaces, so every text tool splits them into
character n-grams instead of words. One definition for the lexical index, the hashing
embedder and the extractive helpers, so they agree on what a Japanese word is.

Hiragana and katakana (with the prolonged sound mark), CJK ideographs (extension A,
unified, compatibility), Hangul syllables, and the iteration marks 々 and 〆.
"""

from __future__ import annotations

import re

CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af々〆"
CJK = re.compile(f"[{CJK_CLASS}]")  # one CJK character
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")  # a run of them
