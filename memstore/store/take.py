"""Take a snapshot of a store: fold the log and write it (``store.snapshot``), under the store
lock. Beside ``store.open`` and ``store.snapshot``, which it joins: a snapshot is written from
a state opened, and an open reads snapshots, so neither imports the other for this."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .fs import exclusive_lock
from .layout import Layout
from .log import position_after
from .open import load_state
from .snapshot import Sidecars, by_id, write_snapshot


class Taken(NamedTuple):
    """A snapshot written: where, at which log position, and how many records it holds."""

    path: Path
    seq: int
    rows: int


def take_snapshot(layout: Layout, sidecars: Sidecars | None = None) -> Taken:
    """Fold the log and write the snapshot, under the store lock: no append may land
    between the fold and the log position recorded with it. From the last usable snapshot,
    only the records the log after it touches are built (``store.snapshot.by_id``); the
    other rows are the old snapshot's (``snapshot.state_table``). ``sidecars``: the hook that
    writes its derived files beside it (``snapshot.Sidecars``; the night's:
    ``memstore.nightcache.snapshots.snapshot_sidecars``)."""
    layout.create()
    with exclusive_lock(layout.lock_path):
        state, _ = load_state(layout, keep=by_id)
        path, rows = write_snapshot(layout, state, position_after(layout), sidecars)
        return Taken(path, state.seq, rows)
