"""Markdown pages of stored values (`export --format markdown`, the brief): made safe to render.

A stored text may hold ``<script>``, an image link that fetches a URL when the page is
shown (``![](https://...)``), a backtick that swallows the id after it, or a control
character. ``inline`` makes any stored value one line of plain text in Markdown: control
characters shown as escapes, HTML and Markdown punctuation backslash-escaped (CommonMark
renders ``\\[`` as ``[``), and, at the start of a list item, nothing that opens a block.
"""

from __future__ import annotations

import re

from .model import LEVELS, Memory
from .textsafe import visible

# Punctuation that opens inline structure: code, emphasis, links and images, HTML,
# entities, GFM strikethrough; the backslash itself first, so escapes stay unambiguous.
_INLINE = re.compile(r"([\\`*_\[\]<>&~|])")
# What opens a block at the start of a list item's text: a heading, a quote, a nested
# list (bullet or number), a rule or setext underline.
_BLOCK = re.compile(r"^(?:(?P<mark>[#+=-])|(?P<num>\d+)(?P<end>[.)]))")


def inline(value, limit: int | None = None, *, start: bool = False) -> str:
    """``value`` as one line of Markdown text that renders as itself; ``limit`` shortens it
    (before escaping, so escapes are never cut); ``start``: it begins a list item's text."""
    text = " ".join(visible(value).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _INLINE.sub(r"\\\1", text)
    return _BLOCK.sub(_unblock, text, count=1) if start else text


def _unblock(m: re.Match) -> str:
    return "\\" + m["mark"] if m["mark"] else m["num"] + "\\" + m["end"]


def render_markdown(memories: list[Memory], now: str) -> str:
    """The state as a readable page: one section per level, then per kind."""
    def sections():
        for level in LEVELS:
            rows = [m for m in memories if m.level == level]
            if rows:
                yield level, len(rows), ((kind, [[m for m in rows if m.kind == kind]])
                                         for kind in sorted({m.kind for m in rows}))

    return "".join(markdown_page(len(memories), now, sections()))


def markdown_page(total: int, now: str, sections):
    """``render_markdown``'s page as pieces of text, for a page too large to hold:
    ``sections`` gives (level, its count, (kind, its records in blocks)) in order, and
    each block is let go once its lines are written."""
    blank = 0  # empty lines held back: the page ends with its last non-empty line

    def put(lines: list[str]) -> str:
        nonlocal blank
        out = []
        for line in lines:
            if not line:
                blank += 1
                continue
            out.append("\n" * blank + line + "\n")
            blank = 0
        return "".join(out)

    yield put([f"# memstore export ({now[:10]})", "",
               f"{total} memories. Each line: text, then kind, status, time and id.", ""])
    for level, count, kinds in sections:
        yield put([f"## {level} ({count})", ""])
        for kind, blocks in kinds:
            yield put([f"### {inline(kind)}", ""])
            for block in blocks:
                yield put([_line(m) for m in block])
            yield put([""])


def _line(m: Memory) -> str:
    cues = "; ".join(inline(p) for p in (m.subject, ", ".join(m.actors), m.domain) if p)
    return (f"- {inline(m.text, start=True)} — {inline(m.status)}, {inline(m.tier)}, {inline(m.occurred_at)}"
            + (f", {cues}" if cues else "") + f" {code(m.id)}")


def code(value) -> str:
    """An id as a code span; one that is not a plain id (a hand-edited log) as escaped text."""
    text = visible(value)
    return f"`{text}`" if re.fullmatch(r"[0-9A-Za-z_.:-]+", text) else inline(text)
