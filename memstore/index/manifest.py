"""Each index directory describes itself: format, builder, embedder, watermark."""

from __future__ import annotations

from pathlib import Path

from ..codec import dumps_pretty, loads
from ..store.fs import write_atomic


def read_manifest(path: Path) -> dict | None:
    try:
        return loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # a damaged manifest means "rebuild", never a crash


def write_manifest(path: Path, manifest: dict) -> None:
    write_atomic(path, dumps_pretty(manifest) + b"\n")
