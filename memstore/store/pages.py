"""Files the store writes for people to read (brief/DATE.md): derived, never read back."""

from __future__ import annotations

from pathlib import Path

from .fs import ensure_dir, write_atomic
from .layout import Layout


def write_brief(layout: Layout, date: str, text: str) -> Path:
    """Write (or replace) the day's briefing atomically; returns its path."""
    layout.create()
    ensure_dir(layout.brief_dir)
    path = layout.brief_dir / f"{date}.md"
    write_atomic(path, text.encode())
    return path
