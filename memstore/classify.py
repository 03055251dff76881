"""LLM-free classification of free text into kind, tier and base salience.

Rough by design: the value of a memory is decided later by consolidation
(memstore(7), SALIENCE). The rules are ordered; the first that matches wins.
Explicit options override them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Classification:
    kind: str
    tier: str  # "short" | "long" | "skip"
    base: float  # uniform prior for the salience axes not given explicitly
    rule: str


_I = re.IGNORECASE

# One acknowledgement, or several run together ("ok thanks", "了解、ありがとうございます").
_ACK = (
    r"(?:(?:hi|hello|hey|yo|thanks|thank you|thx|ty|ok|okay|k|sure|got it|cool|great|nice|"
    r"yes|yeah|yep|no|nope|bye|good (?:morning|night|evening|afternoon)|see you|lol|np|"
    r"sounds good|will do|noted|lgtm|cheers|have a (?:nice|good|great) (?:weekend|day|evening))\b"
    r"(?:\s+(?:so much|a lot|all|everyone|team|there|!))*|\+1"
    r"|こんにちは|こんばんは|おはよう(?:ございます)?|ありがとう(?:ございます|ございました)?|"
    r"どうも|了解(?:です|しました)?|承知(?:しました|いたしました)?|はい|うん|ええ|いいえ|"
    r"よろしく(?:お願いします|おねがいします)?|お疲れ(?:様|さま)(?:です|でした)?|またね|なるほど|"
    r"お先に失礼します|おつかれ(?:さま)?)"
)
_ACK_GAP = r"[\s,.!?！？。、〜ー…w]*"
GREETING = re.compile(rf"^\s*{_ACK}(?:{_ACK_GAP}{_ACK})*{_ACK_GAP}$", _I)

DISAMBIGUATION = re.compile(
    r"\b(?:here|in this (?:context|thread|doc(?:ument)?|chat))\b.{0,60}\bmeans?\b"
    r"|\bby [\"'“]?\w[\w\s-]{0,30}[\"'”]? (?:I|we) mean\b"
    r"|ここでの.{1,30}は|この文脈(?:で|での)|ここで言う",
    _I,
)

PREFERENCE = re.compile(
    r"\b(?:I|we)\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|don'?t like|do not like|"
    r"always|never)\b"
    r"|\bmy favou?rite\b|\bI'?m allergic\b"
    r"|(?:が|は)(?:大?好き|嫌い|苦手)|を好む|私の.{1,20}は|アレルギー",
    _I,
)

DECISION = re.compile(
    r"\b(?:we|I|the team|they)\s+(?:have\s+)?(?:decided|agreed|chose|chosen|will go with|"
    r"are going with|settled on)\b|\blet'?s go with\b|\bdecision\s*:"
    r"|に決めた|に決定|ことにした|ことに決め|で合意|を採用(?:する|した|します)",
    _I,
)

DEFINITION = re.compile(
    r"^\s*[\"'“]?[\w][\w\s./+-]{0,40}[\"'”]?\s+(?:is|are)\s+(?:a|an|the|our|short for)\b"
    r"|^\s*[\w][\w\s./+-]{0,40}\s+(?:means|stands for|refers to)\b"
    r"|.{1,40}とは.{1,200}(?:である|です|だ|のこと|を指す|を意味する)",
    _I,
)

_RULES = (
    (DISAMBIGUATION, Classification("disambiguation", "short", 0.5, "disambiguation")),
    (DECISION, Classification("decision", "long", 0.8, "decision")),
    (PREFERENCE, Classification("preference", "long", 0.8, "preference")),
    (DEFINITION, Classification("definition", "long", 0.65, "definition")),
)

NOTE = Classification("note", "short", 0.5, "default")
SKIP = Classification("note", "skip", 0.0, "greeting")


def classify(text: str) -> Classification:
    if GREETING.match(text):
        return SKIP
    for pattern, result in _RULES:
        if pattern.search(text):
            return result
    return NOTE
