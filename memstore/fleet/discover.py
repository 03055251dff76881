"""Finding the stores under a fleet root."""

from __future__ import annotations

import os
from pathlib import Path

from ..store.layout import LOG_NAME


def is_store(path: str) -> bool:
    """A directory holding log/ with a log partition or with memstore.toml beside it: a
    project that merely has a log/ directory of its own is not taken for a store."""
    log = os.path.join(path, "log")
    if not os.path.isdir(log) or os.path.islink(log):
        return False
    if os.path.isfile(os.path.join(path, "memstore.toml")):
        return True
    try:
        return any(LOG_NAME.match(name) for name in os.listdir(log))
    except OSError:
        return True  # log/ is there but unreadable: the stage run will say why


def find_stores(root: Path) -> tuple[list[str], list[str]]:
    """(stores, unreadable): every store under ``root`` as a path relative to it ("." for
    root itself), sorted, and the directories that could not be listed. A store is never
    searched for more stores, and no symbolic link is followed (a link loop, or a store
    reached twice, would run it twice)."""
    stores: list[str] = []
    unreadable: list[str] = []
    todo = ["."]
    while todo:
        rel = todo.pop()
        path = os.path.normpath(os.path.join(root, rel))
        if is_store(path):
            stores.append(rel)
            continue
        try:
            with os.scandir(path) as entries:
                subdirs = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            unreadable.append(rel)
            continue
        todo.extend(os.path.join(rel, name) if rel != "." else name for name in subdirs)
    return sorted(stores), sorted(unreadable)
