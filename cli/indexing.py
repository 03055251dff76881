"""Opening the indexes from the CLI: cache location and a progress bar on a terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_dir() -> Path:
    """Embedding cache shared by all stores: $MEMSTORE_CACHE_DIR, else $XDG_CACHE_HOME/memstore."""
    env = os.environ.get("MEMSTORE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memstore" / "embeddings"


def open_indexes(e, *, rebuild: bool = False):
    from memstore.index.sync import open_indexes as _open

    from .common import quiet
    from .output import note

    if quiet() or not sys.stderr.isatty():
        return _open(e.layout, e.config, cache_dir(), rebuild=rebuild, notify=note)
    bar: list = []

    def progress(n: int) -> None:  # the bar appears only once something is being embedded
        if not bar:
            from rich.progress import Progress

            bar.append(Progress(transient=True))
            bar.append(bar[0].add_task("embedding new memories", total=None))
            bar[0].start()
        bar[0].advance(bar[1], n)

    try:
        return _open(e.layout, e.config, cache_dir(), rebuild=rebuild, progress=progress, notify=note)
    finally:
        if bar:
            bar[0].stop()
