"""Each index directory describes itself: format, builder, embedder, watermark."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..codec import dumps_pretty, loads
from ..store.fs import write_atomic


def read_manifest(path: Path) -> dict | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO named like one: never waited on
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            manifest = loads(fh.read())
    except (OSError, ValueError):
        return None  # a damaged manifest means "rebuild", never a crash
    finally:
        os.close(fd)
    return manifest if isinstance(manifest, dict) else None


def write_manifest(path: Path, manifest: dict) -> None:
    write_atomic(path, dumps_pretty(manifest) + b"\n")
