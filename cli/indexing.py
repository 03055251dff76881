"""Opening the indexes from the CLI: cache location and a progress bar on a terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", metavar="N", help="Worker processes that embed new texts, one thread each "
                 "(vectors are the same bits whatever N). Default: the machine's cores; 1 embeds in "
                 "this process."),
]


def job_count(given: int | None) -> int:
    """--jobs as given, else the machine's cores; 0 or less is a usage error."""
    from memstore.errors import UsageError

    if given is None:
        return max(1, os.cpu_count() or 1)
    if given < 1:
        raise UsageError(f"--jobs {given} is not a number of worker processes; give 1 or more "
                         "(1 embeds in this process)")
    return given


def cache_dir() -> Path:
    """Embedding cache shared by all stores: $MEMSTORE_CACHE_DIR, else $XDG_CACHE_HOME/memstore."""
    env = os.environ.get("MEMSTORE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memstore" / "embeddings"


def open_indexes(e, *, rebuild: bool = False, jobs: int | None = None):
    """The store's indexes, caught up; what the catch-up embeds runs on ``jobs`` worker
    processes (default: the machine's cores; they start only for a large catch-up)."""
    from memstore.index.sync import open_indexes as _open

    from .common import quiet
    from .output import note

    n = job_count(jobs)
    if quiet() or not sys.stderr.isatty():
        return _open(e.layout, e.config, cache_dir(), rebuild=rebuild, notify=note, jobs=n)
    bar: list = []

    def progress(n: int) -> None:  # the bar appears only once something is being embedded
        if not bar:
            from rich.progress import Progress

            bar.append(Progress(transient=True))
            bar.append(bar[0].add_task("embedding new memories", total=None))
            bar[0].start()
        bar[0].advance(bar[1], n)

    try:
        return _open(e.layout, e.config, cache_dir(), rebuild=rebuild, progress=progress, notify=note, jobs=n)
    finally:
        if bar:
            bar[0].stop()
