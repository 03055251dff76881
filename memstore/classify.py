"""LLM-free classification of free text into kind, tier and prior salience.

Rough by design: the value of a memory is decided later by consolidation
(memstore(7), SALIENCE). The rules are ordered; the first that matches wins.
Each kind brings a per-axis prior whose importance and risk stay under
salience.protect_threshold: only strong cue words ("never", "must", 「絶対」, an
allergy) raise them to CUE, so only what is marked important or risky is protected
from decay. Explicit options override all of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from .model import Salience


@dataclass(frozen=True, slots=True)
class Classification:
    kind: str
    tier: str  # "short" | "long" | "skip"
    prior: Salience  # the axes not given explicitly: the kind's prior, raised by cue words
    rule: str
    cue: str | None = None  # "importance" | "risk": what a cue word raised


def _p(importance, urgency, risk, novelty, emotion, recurrence, actionability) -> Salience:
    return Salience(importance, urgency, risk, novelty, emotion, recurrence, actionability)


# Per-kind priors (memstore(7), SALIENCE). Importance and risk stay at most 0.65, under the
# default protect_threshold 0.7: a kind alone never protects a memory from decay. The
# importance of the long-lived kinds is at least salience.floor_importance (0.6), so they
# keep the importance floor. Episodic kinds carry no evidence for one axis over another.
_EPISODIC = Salience.uniform(0.5)
PRIORS: dict[str, Salience] = {
    "note": _EPISODIC, "meeting": _EPISODIC, "incident": _EPISODIC, "deal": _EPISODIC,
    "disambiguation": _EPISODIC,
    # a decision changes what to do, usually soon: actionability and urgency lead
    "decision": _p(0.65, 0.6, 0.5, 0.6, 0.4, 0.5, 0.85),
    # a preference is felt and comes up again and again; rarely urgent
    "preference": _p(0.6, 0.2, 0.4, 0.5, 0.7, 0.8, 0.6),
    # a rule: applied often, steers action, costly to forget
    "policy": _p(0.65, 0.4, 0.6, 0.4, 0.3, 0.8, 0.9),
    # knowledge: recurs, seldom urgent or emotional
    "definition": _p(0.65, 0.2, 0.4, 0.6, 0.2, 0.7, 0.5),
    "fact": _p(0.65, 0.3, 0.5, 0.6, 0.3, 0.6, 0.5),
    # a how-to is for doing, again and again
    "procedure": _p(0.65, 0.3, 0.5, 0.4, 0.2, 0.8, 0.9),
    # a plan is time-bound and actionable
    "plan": _p(0.6, 0.8, 0.4, 0.6, 0.3, 0.4, 0.85),
}

# What a strong cue word raises importance (and, for a risk word, risk) to: at the default
# protect_threshold (0.7) such a memory is protected.
CUE = 0.8

_I = re.IGNORECASE
_APOS = "['\u2019]"

# The cue patterns below run on the lowercased text, and only when one of these words is in
# it (every cue match contains one): a fraction of the full patterns' cost on every write
# (bench/foundation.py, bulk remember).
_HINT = re.compile(r"never|must|under no|do(?:n|\snot)|always|cr(?:itical|ucial)|important"
                   r"|allerg|anaphyla|security|vulnerab"
                   r"|絶対|必ず|決して|厳禁|禁止|重要|アレルギー|危険|脆弱性")

# Words that mark a memory as important: a rule stated as one, or explicit emphasis. Only
# their normative uses count: "never" as an obligation ("Never store card numbers", "we
# must never", "the primary is never restarted"), not as a report ("I've never been", "the
# build never finished"); "must" as an obligation, not a guess ("it must have been the
# cache", "you must be tired"); "always", "do not" and "don't" as an imperative opening a
# sentence ("Always tag releases", not "I always take the bus" nor "Don't know why");
# "critical", "crucial" and "important" as a label ("Important: ...") or a rule ("it is
# important to/that ...", not a question), not as a description ("the important thing was
# the food", "critical path analysis"); 「重要」 as a label or a rule (「重要：」「…ことが重要」),
# not 「重要な会議」 or 「重要業績評価指標」; 「絶対」 not in 「絶対値」「絶対パス」. "never mind" and
# a negated "not important" are not cues. English and Japanese. Lowercase: matched on
# text.lower().
_START = r"(?:^|(?<=[.!?;:\n]))\s*"
_PAST = (r"(?:\w+[^e\W]ed|\w+ied|been|had|did|got|gotten|went|gone|came|saw|seen|heard|knew|known"
         r"|made|took|taken|gave|given|thought|found|told|said|ran|won|wrote|written|became|began"
         r"|begun|understood|showed|shown|felt|left|met|paid|sent|kept|bought|brought|caught)\b")
_EMPHASIS = r"(?:very |really |extremely |absolutely |super |most |so )?"
_IMPORTANT = (
    r"(?:(?<=\bis )|(?<=\bare )|(?<=\bbe ))never\b(?!\s+mind\b)|"
    rf"(?<!have )(?<!{_APOS}ve )(?<!has )(?<!had )(?<!was )(?<!were )"
    rf"\bnever\b(?!\s+(?:mind\b|(?:ever\s+)?{_PAST}))"
    rf"|\bmust(?:n{_APOS}?t)?\b(?!\s+(?:not\s+)?(?:have\s+{_PAST}|be\s+(?:joking|kidding|nice|tired|hard"
    rf"|fun|great|lovely|exhausted|exhausting|annoying|frustrating|so|really|a\s+mistake)\b))"
    rf"|\bunder no circumstances\b|\bdon{_APOS}?t ever\b|\bdo not ever\b"
    rf"|{_START}(?:always|(?:do not|don{_APOS}?t)\b(?!\s+(?:know|think|remember|care|worry|understand"
    rf"|mind|feel|see|get|have|like|want|need|recall|believe|really|even|quite)\b))\b"
    rf"|{_START}{_EMPHASIS}(?:critical|crucial|important)\s*[:!\-\u2013\u2014]"
    rf"|\b(?:is|{_APOS}s|are|{_APOS}re|remains?)\s+{_EMPHASIS}(?:critical|crucial|important)"
    rf"(?:\s+(?:to|that)\b|\s*:)[^?\n]*(?:$|[.!;\n])"
    r"|絶対(?!値|パス|温度|音感|的|評価|量)|必ず|決して|厳禁|禁止"
    r"|(?:^|(?<=[。！!\n]))\s*[【\[［]?\s*重要\s*(?:[:：】\]］!！]|事項)|(?:こと|の)(?:が|は)(?:最も|とても|非常に|極めて)?重要"
)

# Words that mark a memory as risky to forget: a health risk or a security hole. A mention
# of a password is not one (a secret does not belong in memory; memstore(7), THREAT MODEL),
# and "Never share the password" is protected by "never". Lowercase, as IMPORTANT.
_RISK = (
    r"\ballerg(?:ic|y|ies)\b|\banaphyla\w*"
    r"|\bsecurity (?:risk|hole|issue|incident|vulnerabilit(?:y|ies)|breach|flaw|bug|problem)s?\b"
    r"|\bvulnerabilit(?:y|ies)\b"
    r"|アレルギー|危険|脆弱性"
)


@cache
def _cue_patterns() -> tuple[re.Pattern, re.Pattern]:
    """(risk, importance), compiled on the first text with a hint (start-up of `remember`)."""
    return re.compile(_RISK), re.compile(_IMPORTANT)


def cue(text: str) -> str | None:
    """"risk" when a risk word is in the text, "importance" for an importance word, else None."""
    low = text.lower()
    if not _HINT.search(low):
        return None
    risk, important = _cue_patterns()
    if risk.search(low):
        return "risk"
    if important.search(low):
        return "importance"
    return None


@lru_cache(maxsize=64)
def prior(kind: str, cue: str | None = None) -> Salience:
    """The prior salience of a memory of ``kind`` whose text has ``cue`` (cached: frozen)."""
    base = PRIORS.get(kind, _EPISODIC)
    if cue == "risk":
        return replace(base, importance=max(base.importance, CUE), risk=max(base.risk, CUE))
    if cue == "importance":
        return replace(base, importance=max(base.importance, CUE))
    return base


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
_GREETING = rf"^\s*{_ACK}(?:{_ACK_GAP}{_ACK})*{_ACK_GAP}$"

_DISAMBIGUATION = (
    r"\b(?:here|in this (?:context|thread|doc(?:ument)?|chat))\b.{0,60}\bmeans?\b"
    r"|\bby [\"'“]?\w[\w\s-]{0,30}[\"'”]? (?:I|we) mean\b"
    r"|ここでの.{1,30}は|この文脈(?:で|での)|ここで言う"
)
_PREFERENCE = (
    r"\b(?:I|we)\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|don'?t like|do not like|"
    r"always|never)\b"
    r"|\bmy favou?rite\b|\bI'?m allergic\b"
    r"|(?:が|は)(?:大?好き|嫌い|苦手)|を好む|私の.{1,20}は|アレルギー"
)
_DECISION = (
    r"\b(?:we|I|the team|they)\s+(?:have\s+)?(?:decided|agreed|chose|chosen|will go with|"
    r"are going with|settled on)\b|\blet'?s go with\b|\bdecision\s*:"
    r"|に決めた|に決定|ことにした|ことに決め|で合意|を採用(?:する|した|します)"
)
_DEFINITION = (
    r"^\s*[\"'“]?[\w][\w\s./+-]{0,40}[\"'”]?\s+(?:is|are)\s+(?:a|an|the|our|short for)\b"
    r"|^\s*[\w][\w\s./+-]{0,40}\s+(?:means|stands for|refers to)\b"
    r"|.{1,40}とは.{1,200}(?:である|です|だ|のこと|を指す|を意味する)"
)

# Every match of a pattern holds one of its hints (in the folded text, below), so a pattern
# is compiled and run only for a text that holds one: compiling all five slowed every
# `remember` start, most of the time for a text that none of them matches. Held to the
# patterns by a property test (tests/test_classify.py).
_ACK_STARTS = (
    "hi", "hello", "hey", "yo", "thank", "thx", "ty", "ok", "k", "sure", "got it", "cool", "great",
    "nice", "yes", "yeah", "yep", "no", "bye", "good ", "see you", "lol", "np", "sounds good",
    "will do", "noted", "lgtm", "cheers", "have a", "+1",
    "こん", "おは", "あり", "どうも", "了解", "承知", "はい", "うん", "ええ", "いいえ", "よろしく",
    "お疲れ", "またね", "なるほど", "お先に", "おつかれ",
)
_RULE_HINTS = {
    "disambiguation": ("mean", "ここで", "この文脈"),
    "decision": ("decided", "agreed", "chose", "go with", "going with", "settled on", "decision",
                 "決め", "決定", "ことにした", "で合意", "を採用"),
    "preference": ("prefer", "like", "love", "hate", "always", "never", "favo", "allergic",
                   "好", "嫌い", "苦手", "私の", "アレルギー"),
    "definition": ("mean", "stands for", "refers to", "とは"),
}
_SOURCES = {"greeting": _GREETING, "disambiguation": _DISAMBIGUATION, "preference": _PREFERENCE,
            "decision": _DECISION, "definition": _DEFINITION}


@cache
def pattern(name: str) -> re.Pattern:
    """The compiled pattern of a rule (greeting, disambiguation, decision, preference,
    definition): on first use."""
    return re.compile(_SOURCES[name], _I)


def _folded(text: str) -> str:
    """Lower case, with the four characters that IGNORECASE also matches to an ASCII letter
    (İ ı → i, ſ → s; the Kelvin sign lowers to k by itself) spelt as that letter."""
    low = text.lower()
    if low.isascii():
        return low
    return low.replace("i\u0307", "i").replace("ı", "i").replace("ſ", "s")


def _may_match(name: str, low: str, words: list[str]) -> bool:
    if name == "greeting":
        return low.lstrip().startswith(_ACK_STARTS)
    if name == "definition" and ("is" in words or "are" in words):
        return True
    return any(h in low for h in _RULE_HINTS[name])


_RULES = (
    ("disambiguation", ("disambiguation", "short", "disambiguation")),
    ("decision", ("decision", "long", "decision")),
    ("preference", ("preference", "long", "preference")),
    ("definition", ("definition", "long", "definition")),
)
_DEFAULT = ("note", "short", "default")

NOTE = Classification("note", "short", PRIORS["note"], "default")
SKIP = Classification("note", "skip", Salience.uniform(0.0), "greeting")


@lru_cache(maxsize=64)
def _result(rule: tuple[str, str, str], found: str | None) -> Classification:
    kind, tier, name = rule
    return Classification(kind, tier, prior(kind, found), name, found)


def classify(text: str) -> Classification:
    low = _folded(text)
    words = low.split()  # the same white space as the patterns' \s
    if _may_match("greeting", low, words) and pattern("greeting").match(text):
        return SKIP
    found = cue(text)
    for name, rule in _RULES:
        if _may_match(name, low, words) and pattern(name).search(text):
            return _result(rule, found)
    return _result(_DEFAULT, found)
