"""Rendering: canonical JSON to stdout, diagnostics to stderr, rich only on a terminal.

Every command writes through these functions, never to ``sys.stdout`` directly, so that
``capture()`` can collect what a command prints: ``replay`` keeps each checkpoint's output
this way, without replacing ``sys.stdout`` for the whole process.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from memstore.codec import dumps


class Capture:
    """What the commands run inside ``capture()`` printed: stdout as bytes, stderr as text."""

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._err = io.StringIO()
        self.text = _TextSink(self._out)  # a text stream onto stdout (rich writes to one)

    @property
    def stdout(self) -> bytes:
        return self._out.getvalue()

    @property
    def stderr(self) -> str:
        return self._err.getvalue()


class _TextSink:
    def __init__(self, raw: io.BytesIO) -> None:
        self._raw = raw

    def write(self, text: str) -> int:
        self._raw.write(text.encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


_CAPTURE: ContextVar[Capture | None] = ContextVar("memstore_output_capture", default=None)


@contextmanager
def capture() -> Iterator[Capture]:
    """Collect everything written through this module (in this context) instead of printing it."""
    sink = Capture()
    token = _CAPTURE.set(sink)
    try:
        yield sink
    finally:
        _CAPTURE.reset(token)


def write_bytes(data: bytes) -> None:
    """Bytes to stdout as they are (an export, a page that carries its own newlines)."""
    sink = _CAPTURE.get()
    if sink is not None:
        sink._out.write(data)
        return
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def write_text(text: str) -> None:
    """Text to stdout as it is (no newline added)."""
    sink = _CAPTURE.get()
    if sink is not None:
        sink.text.write(text)
    else:
        sys.stdout.write(text)


def emit_json(obj) -> None:
    write_bytes(dumps(obj) + b"\n")


def emit_jsonl(objs) -> None:
    sink = _CAPTURE.get()
    raw = sink._out if sink is not None else sys.stdout.buffer
    for obj in objs:
        raw.write(dumps(obj) + b"\n")
    if sink is None:
        sys.stdout.flush()


def safe(value) -> str:
    """A stored value (text, subject, id, ...) for human output: one line, control
    characters shown as escapes (``\\x1b``, ``\\u2028``) so it cannot steer the terminal.
    JSON output needs none of this: canonical JSON escapes them itself."""
    from memstore.textsafe import visible  # here: remember, which prints only ids, never needs it

    return visible(value)


def out(text: str = "") -> None:
    write_text(text + "\n")


def note(text: str) -> None:
    """A diagnostic for the person at the shell (stderr), silenced by --quiet."""
    from .common import quiet

    if not quiet():
        error(text)


def error(text: str) -> None:
    """A line on stderr that --quiet does not silence (``Error: ...``)."""
    sink = _CAPTURE.get()
    if sink is not None:
        sink._err.write(text + "\n")
        return
    try:  # what was printed before stays before it when both streams go to one file
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # no stdout, a closed pipe
        pass
    sys.stderr.write(text + "\n")


def is_tty() -> bool:
    return _CAPTURE.get() is None and sys.stdout.isatty()


def console():
    """A rich console for tables on a terminal (imported lazily: rich is not free)."""
    from rich.console import Console

    sink = _CAPTURE.get()
    return Console(file=sink.text if sink is not None else None,
                   no_color="NO_COLOR" in os.environ or None, highlight=False)
