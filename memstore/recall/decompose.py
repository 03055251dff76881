"""Multi-part questions split into the parts whose evidence recall must all bring back.

No model: a few rules over the question's wording, English and Japanese (memstore(7), RECALL).

- order: "Which happened first, X or Y?", "Did X come before or after Y?", "X or Y, which came
  first?", "How many days between X and Y?", 「XとY、どちらが先？」「XとYの間は何日？」 -> X, Y
- choice: "... X or Y?" (a question offering options) -> the question with X, with Y
- both: "both X and Y", "X as well as Y", 「XとYの両方」 -> X, Y
- list: "X, Y and Z" -> each item
- count / list questions ("how many times", "how often", "list the…", "which … have I …",
  「何回」「何度」「全部」) keep one part but ask for every mention: recall's diversification
  then spares near-repeats, which are the evidence.

``split(question)`` returns a Decomposed value; ``parts`` is empty for a question of one part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Decomposed:
    shape: str  # single, order, choice, both, list, count
    parts: tuple[str, ...] = ()  # the sub-questions (empty: one part)
    every: bool = False  # every mention is evidence (count and list questions)


_END = r"[\s?？。.!！]*$"
_ART = r"(?:the\s+|my\s+)?"
_ORDER = [
    # which happened first, X or Y?
    re.compile(r"^(?:which|what)\b[^,:?]*?\b(?:first|earlier|sooner|later|last|more\s+recently|before)\b[\s,:—-]*"
               r"(?P<a>.+?)\s*,?\s+or\s+(?P<b>.+?)" + _END, re.I),
    # did X come before or after Y?
    re.compile(r"^(?:did|was|were|is|has|had|does)\s+(?P<a>.+?)\s+(?:come|happen|take\s+place|start|occur|get\s+done)?\s*"
               r"(?:before\s+or\s+after|after\s+or\s+before|earlier\s+or\s+later|earlier\s+than|before|after)\s+(?P<b>.+?)" + _END,
               re.I),
    # X or Y, which came first?
    re.compile(r"^(?P<a>.+?)\s+or\s+(?P<b>.+?)\s*[,:—-]+\s*which\b.*$", re.I),
    # how many days/weeks passed between X and Y? / how long between X and Y / from X to Y
    re.compile(r"^how\s+(?:many\s+\w+|long|much\s+time)\b.*?\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)" + _END, re.I),
    re.compile(r"^how\s+(?:many\s+\w+|long|much\s+time)\b.*?\bfrom\s+(?P<a>.+?)\s+(?:to|until|till)\s+(?P<b>.+?)" + _END, re.I),
    # Japanese: XとY(、|の|は)どちらが先 / どっちが先 / 先なのはどちら
    re.compile(r"^(?P<a>.+?)と(?P<b>.+?)(?:[、,]\s*|の|は|では)?(?:どちら|どっち|いずれ)(?:が|の方が)?(?:先|早|後|最近).*$"),
    re.compile(r"^(?P<a>.+?)と(?P<b>.+?)の間(?:は|に|には)?(?:何|どれ|どの).*$"),
    re.compile(r"^(?P<a>.+?)(?:から|より)(?P<b>.+?)まで(?:は|に|には)?(?:何|どれ|どの).*$"),
]
_BOTH = [
    re.compile(r"\bboth\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)" + _END, re.I),
    re.compile(r"^(?P<pre>.*?\b)(?P<a>\w[\w'’ -]*?)\s+as\s+well\s+as\s+(?P<b>.+?)" + _END, re.I),
    re.compile(r"^(?P<a>.+?)と(?P<b>.+?)の(?:両方|どちらも|共通).*$"),
]
# one option or list item: an optional determiner and a word, or a run of capitalised words
_DET = r"(?:(?:the|my|a|an|his|her|our|their|your|\w+['’]s)\s+)?"
_OPTION = _DET + r"(?:[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*|[\w'’-]+)"
# "Did I go to Lisbon or Porto?", "Is Anna or Naomi my manager?", "What do I drink, tea or coffee?"
_CHOICE = re.compile(r"(?<![\w'’-])(?P<a>" + _OPTION + r")\s*,?\s+or\s+(?P<b>" + _OPTION + r")(?![\w'’-])")
# "my sister, my brother and my dad": three items or more
_LIST = re.compile(r"(?<![\w'’-])(?P<items>" + _OPTION + r"(?:\s*,\s+" + _OPTION + r")+\s*,?\s+and\s+" + _OPTION
                   + r")(?![\w'’-])")
_COUNT = re.compile(r"^\s*how\s+(?:many\s+times|often|frequently)\b|\bhow\s+many\s+(?!days|weeks|months|years|hours"
                    r"|minutes)\w+s\b|何回|何度|何件|いくつ|何か所|何ヶ所", re.I)
_EVERY = re.compile(r"^\s*(?:list|name|enumerate)\b|\ball\s+(?:the\s+)?\w+s\b|^\s*which\s+\w+s\s+(?:have|did|do)\b"
                    r"|^\s*what\s+\w+s\s+(?:have|did|do)\b|全部|すべて|全て|どんな.*(?:ある|いる)", re.I)
_OR_NOT = re.compile(r"\bor\s+not\b|\bor\s+(?:so|something|anything|whatever|else)\b", re.I)


def _clean(part: str) -> str:
    part = re.sub(r"^(?:the\s+(?:time\s+)?(?:when\s+)?|when\s+)", "", part.strip(" ,、。?？"), flags=re.I)
    return part.strip()


_LEAD = {"is", "are", "was", "were", "did", "do", "does", "which", "what", "who", "where", "when", "how", "should",
         "could", "would", "can", "will", "has", "have", "had"}


def _two(a: str, b: str) -> tuple[str, ...] | None:
    a, b = _clean(a), _clean(b)
    if not a or not b or a.casefold() == b.casefold():
        return None
    return a, b


def split(question: str) -> Decomposed:
    q = question.strip()
    counts = bool(_COUNT.search(q))
    every = counts or bool(_EVERY.search(q))
    shape_every = "count" if counts else "list" if every else "single"
    for pattern in _ORDER:
        m = pattern.match(q)
        if m and (parts := _two(m["a"], m["b"])):
            return Decomposed("order", parts)
    for pattern in _BOTH:
        m = pattern.search(q)
        if m and (parts := _two(m["a"], m["b"])):
            pre = m.groupdict().get("pre") or ""
            return Decomposed("both", tuple(f"{pre} {p}".strip() for p in parts), every)
    if not _OR_NOT.search(q):
        m = _CHOICE.search(q)
        if m and (parts := _two(m["a"], m["b"])):
            pre, post = q[: m.start()], q[m.end():]
            lead, _, rest = parts[0].partition(" ")
            if rest and lead.casefold() in _LEAD:  # "Is Anna or Naomi ...": the capitalised verb is no option
                pre, parts = f"{pre}{lead} ", (rest, parts[1])
            return Decomposed("choice", tuple(_frame(pre, p, post) for p in parts), every)
    m = _LIST.search(q)
    if m:
        items = [i for i in re.split(r"\s*,\s+(?:and\s+)?|\s*,?\s+and\s+", m["items"]) if i.strip()]
        if len(items) >= 3:
            pre, post = q[: m.start()], q[m.end():]
            return Decomposed("list", tuple(_frame(pre, i, post) for i in items), True)
    return Decomposed(shape_every, (), every)


def _frame(pre: str, part: str, post: str) -> str:
    """The question with one option in place of all of them."""
    return re.sub(r"\s+", " ", f"{pre.rstrip(' ,:')} {part} {post.strip(' ?？.!')}").strip()
