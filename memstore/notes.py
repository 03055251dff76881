"""Working memory: one private, free-form scratchpad per agent.

"What an agent was in the middle of": carried to its next run, never promoted to a
fact, never recalled for anyone else, injected verbatim into that agent's own preamble.
The log holds each write as the whole new text (op ``notes``); the state keeps the last.
"""

from __future__ import annotations

from .errors import UsageError

MODES = ("set", "append", "clear")
MAX_CHARS = 8_000  # it rides in every prompt of its agent: a scratchpad, not a document


def updated(old: str, text: str, mode: str) -> str:
    """The working memory after a write; UsageError when it would be too long or is not text."""
    if mode == "clear":
        return ""
    if not isinstance(text, str) or "\x00" in text:
        raise UsageError("notes must be text (no NUL bytes)")
    text = text.strip("\n")
    if not text.strip():
        text = ""  # white space alone says nothing: set clears, append adds nothing
    new = text if mode == "set" else f"{old}\n{text}" if old and text else (old or text)
    if len(new) > MAX_CHARS:
        raise UsageError(f"working memory would be {len(new):,} characters; the limit is {MAX_CHARS:,} "
                         "(it is sent with every prompt: keep what you are in the middle of, and "
                         "remember durable facts instead)")
    return new
