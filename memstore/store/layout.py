"""Where each file of a store lives (see memstore(5))."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreError
from .fs import ensure_dir, os_error

LOG_NAME = re.compile(r"^\d{4}-\d{2}\.jsonl$")  # log/YYYY-MM.jsonl
SNAPSHOT_NAME = re.compile(r"^state-(\d{12})\.parquet$")  # snapshots/state-<seq>.parquet
INDEXES = ("records", "lexical", "vectors")


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "log" / "quarantine"

    @property
    def snapshots_dir(self) -> Path:
        return self.root / "snapshots"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def brief_dir(self) -> Path:
        return self.root / "brief"

    def index_path(self, name: str) -> Path:
        """Where one index lives: index/records/, index/lexical/, index/vectors.usearch."""
        return self.index_dir / {"records": "records", "lexical": "lexical", "vectors": "vectors.usearch"}[name]

    def index_paths(self) -> dict[str, Path]:
        return {name: self.index_path(name) for name in INDEXES}

    def manifest_path(self, name: str) -> Path:
        """An index's manifest: inside its directory, or beside the vector file."""
        path = self.index_path(name)
        return path / "manifest.json" if name != "vectors" else path.with_suffix(".json")

    @property
    def config_path(self) -> Path:
        return self.root / "memstore.toml"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    def exists(self) -> bool:
        return self.log_dir.is_dir()

    def check_readable(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"store {self.root} is a file, not a directory; choose another --store")
        for parent in self.root.parents:  # the nearest existing ancestor must be a directory too
            if parent.exists():
                if not parent.is_dir():
                    raise StoreError(f"store {self.root} is under {parent}, a file, not a directory; "
                                     "choose another --store")
                break

    def create(self) -> None:
        """Create the store's directories (0700); idempotent."""
        self.check_readable()
        ensure_dir(self.root)
        ensure_dir(self.log_dir)

    def read_config_text(self) -> str | None:
        try:
            return self.config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise StoreError(f"cannot read {self.config_path}: {exc}") from None
        except OSError as exc:
            raise os_error(exc, self.config_path, "read") from None
