"""Rendering: canonical JSON to stdout, diagnostics to stderr, rich only on a terminal."""

from __future__ import annotations

import os
import sys

from memstore.codec import dumps


def emit_json(obj) -> None:
    sys.stdout.buffer.write(dumps(obj) + b"\n")
    sys.stdout.flush()


def emit_jsonl(objs) -> None:
    out = sys.stdout.buffer
    for obj in objs:
        out.write(dumps(obj) + b"\n")
    sys.stdout.flush()


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    """A diagnostic for the person at the shell (stderr), silenced by --quiet."""
    from .common import quiet

    if not quiet():
        sys.stderr.write(text + "\n")


def is_tty() -> bool:
    return sys.stdout.isatty()


def console():
    """A rich console for tables on a terminal (imported lazily: rich is not free)."""
    from rich.console import Console

    return Console(no_color="NO_COLOR" in os.environ or None, highlight=False)
