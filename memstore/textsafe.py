"""Stored values made safe to show: one line, no character that steers a terminal or a reader.

A memory's text, subject or domain is whatever someone stored, so a page or a terminal
line must not let it move the cursor, retitle the window (ESC, OSC, BEL, CR), reorder
what is shown (bidi overrides), or start a new line (U+2028, U+0085). Ordinary text,
Japanese included, passes unchanged (memstore(1)).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line and paragraph separators, and the bidi controls
# (embeddings, overrides, isolates, marks) that make text display in another order.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_BREAK = re.compile("\r\n|[\n\t]")


def _code(match: re.Match) -> str:
    n = ord(match.group())
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def visible(value) -> str:
    """``value`` as one line for a person: newlines and tabs become spaces, any other
    unsafe character shows as its escape (ESC as ``\\x1b``, U+2028 as ``\\u2028``)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():  # the common case: nothing to do (cheap on big listings)
        return text
    return UNSAFE.sub(_code, _BREAK.sub(" ", text))


def flat(text: str) -> str:
    """``text`` as one line of plain words: unsafe characters and runs of white space
    become single spaces (for a prompt, where an escape sequence would only be noise)."""
    return " ".join(UNSAFE.sub(" ", text).split())
