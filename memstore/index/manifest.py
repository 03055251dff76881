"""Each index directory describes itself: format, builder, embedder, watermark."""

from __future__ import annotations

from pathlib import Path

from ..codec import dumps_pretty, loads
from ..store.fs import read_regular, write_atomic


def read_manifest(path: Path) -> dict | None:
    try:
        manifest = loads(read_regular(path))  # a FIFO named like one: never waited on
    except (OSError, ValueError):
        return None  # a missing or damaged manifest means "rebuild", never a crash
    return manifest if isinstance(manifest, dict) else None


def write_manifest(path: Path, manifest: dict) -> None:
    write_atomic(path, dumps_pretty(manifest) + b"\n")
