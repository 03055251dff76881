"""Where each file of a store lives (see memstore(5))."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreError
from .fs import NotRegular, ensure_dir, os_error, read_regular

LOG_NAME = re.compile(r"^\d{4}-\d{2}\.jsonl$")  # log/YYYY-MM.jsonl
SNAPSHOT_NAME = re.compile(r"^state-(\d{12})\.parquet$")  # snapshots/state-<seq>.parquet
KEYS_NAME = re.compile(r"^state-(\d{12})\.keys$")  # beside it, its update pool's keys (nightcache.poolkeys)
ORDER_NAME = re.compile(r"^state-(\d{12})\.order$")  # and the order of its ids (store.idorder)
NEAR_NAME = re.compile(r"^state-(\d{12})\.near$")  # and its near-duplicate groups (nightcache.neargroups)
# The suffixes of the files beside a snapshot, which go when it goes (``snapshot.companions``):
# the store writes the id order; the others are written by the hook its caller passes
# (``snapshot.Sidecars``), and removed by these names without the store knowing what they hold.
COMPANIONS = (".order", ".keys", ".near")
INDEXES = ("records", "lexical", "vectors")
# The names memstore itself puts at a store's top level, with the kind each must be. A
# directory holding anything else (and no log/) is someone's project, not a store: it is
# never adopted, so no write or `verify --repair` can touch its files.
OWN_NAMES = {"log": "dir", "snapshots": "dir", "index": "dir", "brief": "dir",
             "memstore.toml": "file", ".lock": "file", ".stat-cache.json": "file"}


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

    @property
    def stat_cache_path(self) -> Path:
        """Which files' bytes were found unchanged though their mtime was not (statcache)."""
        return self.root / ".stat-cache.json"

    def exists(self) -> bool:
        return self.log_dir.is_dir()

    def check_readable(self) -> None:
        """Refuse a --store that is not a store and may not become one; creates nothing.

        A store is a directory holding log/; a missing directory, an empty one, or one
        holding only memstore's own names may become one. Each own name present must be
        of its kind (a FIFO memstore.toml would hang a reader; a file named log breaks
        every write)."""
        root = self.root
        shown = show_path(root)
        if not _utf8(root):
            raise StoreError(f"store path {shown} is not valid UTF-8; rename the directory or choose "
                             "another --store (the indexes need a UTF-8 path)")
        try:
            st = os.stat(root)
        except FileNotFoundError:
            if os.path.islink(root):
                raise StoreError(f"store {shown} is a symbolic link to {show_path(os.readlink(root))}, "
                                 "which does not exist; choose another --store") from None
            self._check_parents()
            return
        except NotADirectoryError:
            self._check_parents()
            raise StoreError(f"store {shown} is not a directory; choose another --store") from None
        except OSError as exc:
            raise os_error(exc, shown, "open the store") from None
        if not stat.S_ISDIR(st.st_mode):
            raise StoreError(f"store {shown} is {_kind(st.st_mode)}, not a directory; choose another --store")
        is_store, base = False, os.fspath(root)
        for name, want in OWN_NAMES.items():
            path = f"{base}/{name}"  # str, not Path: this runs several times per command
            try:
                mode = os.stat(path).st_mode
            except FileNotFoundError:
                if os.path.islink(path):
                    raise StoreError(f"{show_path(path)} is a symbolic link to nothing; memstore needs "
                                     f"{'a directory' if want == 'dir' else 'a regular file'} there: "
                                     "remove it") from None
                continue
            except OSError as exc:
                raise os_error(exc, show_path(path), "read") from None
            if want == "dir" and not stat.S_ISDIR(mode):
                raise StoreError(f"{show_path(path)} is {_kind(mode)}, not a directory; memstore keeps "
                                 f"its {name} there: move it away or choose another --store")
            if want == "file" and not stat.S_ISREG(mode):
                raise StoreError(f"{show_path(path)} is {_kind(mode)}, not a regular file; "
                                 "move it away or choose another --store")
            is_store = is_store or name == "log"
        if not is_store:
            self._check_adoptable()

    def _check_parents(self) -> None:
        for parent in self.root.parents:  # the nearest existing ancestor must be a directory too
            if parent.exists():
                if not parent.is_dir():
                    raise StoreError(f"store {show_path(self.root)} is under {show_path(parent)}, a file, "
                                     "not a directory; choose another --store")
                break

    def _check_adoptable(self) -> None:
        try:
            names = os.listdir(self.root)
        except OSError as exc:
            raise os_error(exc, show_path(self.root), "list the store") from None
        foreign = sorted(set(names) - set(OWN_NAMES))
        if foreign:
            raise StoreError(f"{show_path(self.root)} is not a memstore store (it holds other files, "
                             f"e.g. {show_path(foreign[0])}); choose an empty or new directory for --store")

    def root_exists(self) -> bool:
        return os.path.lexists(self.root)

    def create(self) -> None:
        """Create the store's directories (0700); idempotent."""
        self.check_readable()
        ensure_dir(self.root)
        ensure_dir(self.log_dir)

    def read_config_text(self) -> str | None:
        path = self.config_path
        try:
            data = read_regular(path)
        except FileNotFoundError:
            return None
        except NotRegular as exc:
            raise StoreError(f"{show_path(path)} is {_kind(exc.mode)}, not a regular file; "
                             "move it away or choose another --store") from None
        except OSError as exc:
            raise os_error(exc, show_path(path), "read") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StoreError(f"cannot read {show_path(path)}: {exc}") from None


def show_path(path) -> str:
    """A path for a one-line message: undecodable bytes as \\xNN, control characters escaped."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return text if text.isprintable() else ascii(text)[1:-1]


def _utf8(path) -> bool:
    try:
        os.fsencode(path).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
