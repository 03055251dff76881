"""verify's snapshot check: readable, consistent with their metadata and with the log.

A snapshot must be a regular file of this memstore's format whose stored rows match their
checksum, whose anchor is this log's line at its seq (not another store's snapshot) after
partitions of the sizes and sha256 it recorded (not a log since truncated or replaced), and
whose rows equal the log folded to that seq."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..codec import JSONDecodeError, loads
from ..model import memory_to_dict
from ..nightcache.neargroups import path_of as near_path
from ..nightcache.poolkeys import path_of as pool_keys_path
from ..store import idorder
from ..store.anchor import anchor_problem
from ..store.fs import temp_writer
from ..store.layout import KEYS_NAME, LOG_NAME, NEAR_NAME, ORDER_NAME, SNAPSHOT_NAME, Layout
from ..store.snapshot import (
    read_snapshot,
    release_unused,
    rows_checksum,
    snapshot_files,
    state_blocks,
)
from .logcheck import Fold
from .report import Finding, Report


@dataclass
class _Snap:
    path: Path
    seq: int
    meta: dict | None = None
    checksum: str | None = None
    keys: dict | None = None
    marks: dict | None = None
    rows: int = 0
    error: str | None = None
    pool_keys: str | None = None  # what is wrong with its keys file (nightcache.poolkeys), if anything
    order: str | None = None  # what is wrong with its id order (store.idorder), if anything
    near: str | None = None  # what is wrong with its near-duplicate groups (nightcache.neargroups), if anything


def read_snapshots(layout: Layout) -> tuple[list[_Snap], list[Finding]]:
    snaps, found = [], []
    try:
        names = sorted(os.listdir(layout.snapshots_dir))
    except FileNotFoundError:
        return [], []
    for name in names:
        path = layout.snapshots_dir / name
        if SNAPSHOT_NAME.match(name) or temp_writer(name) is not None or not path.is_file():
            continue
        if KEYS_NAME.match(name) or ORDER_NAME.match(name) or NEAR_NAME.match(name):
            if not path.with_suffix(".parquet").is_file():
                what = {".keys": "keys", ".order": "id order", ".near": "near-duplicate groups"}[path.suffix]
                found.append(Finding(path, 0, f"the {what} of a snapshot that is gone: memstore ignores it; "
                                     "--repair deletes it", "snapshot", "delete"))
            continue
        found.append(Finding(path, 0, "not a snapshot (state-<seq>.parquet): memstore ignores it; "
                             "--repair deletes it", "snapshot", "delete"))
    for seq, path in snapshot_files(layout):
        snap = _Snap(path, seq)
        try:
            state, meta = read_snapshot(path, keep=_none)
            snap.meta = meta
            snap.checksum, snap.rows = _rows_digest(state)
            snap.keys = dict(sorted(state.keys.items()))
            snap.marks = dict(state.marks)
            snap.pool_keys = _pool_keys_problem(path, meta, state)
            snap.order = _order_problem(path, state)
            snap.near = _near_problem(path, meta, state)
        except Exception as exc:  # any damage: pyarrow, metadata, rows
            snap.error = f"{type(exc).__name__}: {exc}"[:200]
        snaps.append(snap)
    if snaps:
        release_unused()
    return snaps, found


def _pool_keys_problem(path: Path, meta: dict, state) -> str | None:
    """What is wrong with the keys file beside the snapshot at ``path`` (None: nothing, or
    there is none): it must be readable, of this snapshot, sound, and hold exactly the keys of
    the snapshot's pool rows (built again here, derived from their texts: a key cache is the
    user's, not the store's)."""
    from ..nightcache import poolkeys
    from ..store.fs import read_regular
    from ..store.snapshot import state_table

    keys = poolkeys.path_of(path)
    if not os.path.lexists(keys):
        return None
    why = poolkeys.problem(path, meta.get("checksum"))
    if why is not None:
        return why
    if read_regular(keys) != poolkeys.build(state_table(state), meta["checksum"], bounded=False):
        return "holds other keys than the snapshot's rows have"
    return None


def _near_problem(path: Path, meta: dict, state) -> str | None:
    """What is wrong with the near-duplicate groups beside the snapshot at ``path`` (None:
    nothing, or there is none): it must be readable, of this snapshot, sound, list exactly the
    snapshot's groups with their rows in order, and its vectors must match their digests.
    (Whether they are the embedder's vectors for those texts is not checked: that would be
    embedding them again; a night reads the cache's own vectors, as the file was made from.)"""
    import numpy as np

    from ..nightcache import neargroups
    from ..store.snapshot import state_table

    if not os.path.lexists(neargroups.path_of(path)):
        return None
    why = neargroups.problem(path, meta.get("checksum"))
    if why is not None:
        return why
    near = neargroups.read(path, meta.get("checksum"))
    groups, starts, rows = neargroups.grouped(state_table(state))
    if list(near.index) != groups or not np.array_equal(near.starts, starts) or not np.array_equal(near.rows, rows):
        return "holds other groups than the snapshot's rows make"
    damaged = near.damaged()
    if damaged:
        return f"holds vectors that do not match their digest ({len(damaged)} group(s), damaged)"
    return None


def _order_problem(path: Path, state) -> str | None:
    """What is wrong with the id order beside the snapshot at ``path`` (None: nothing, or
    there is none): it must sort the snapshot's ids."""
    from ..store.snapshot import id_array

    source = getattr(state.memories, "source", None)
    ids = id_array(source.table) if source is not None else None
    if ids is None:  # (ids no order can sort by row: one beside it is never read)
        return "does not sort its snapshot's ids" if os.path.lexists(idorder.path_of(path)) else None
    return idorder.problem(path, ids)


def _none(table, _marks):
    """``keep`` for ``read_snapshot``: no row built up front (``_rows_digest`` builds them a
    block at a time)."""
    import numpy as np

    return np.zeros(table.num_rows, dtype=bool)


def _rows_digest(state) -> tuple[str, int]:
    """(``rows_checksum`` of the state's rows in canonical order, their number), each block
    of records built, hashed and let go in turn (a million rows held at once took gigabytes)."""
    count = 0

    def rows():
        nonlocal count
        for block in state_blocks(state):
            count += len(block)
            yield from map(memory_to_dict, block)

    return rows_checksum(rows()), count


def check_snapshots(layout: Layout, snaps: list[_Snap], fold: Fold, report: Report) -> None:
    for snap in snaps:
        report.snapshots += 1
        if snap.path.is_dir() and not snap.path.is_symlink():
            report.findings.append(Finding(snap.path, 0, "a directory named like a snapshot: memstore "
                                           "ignores it; remove it (--repair cannot)", "snapshot"))
            continue
        problem = _snapshot_problem(layout, snap, fold, report.head)
        keys = pool_keys_path(snap.path)
        if problem:
            report.findings.append(Finding(snap.path, 0, f"{problem}; --repair deletes it (a cache: "
                                           "no answer changes)", "snapshot", "delete"))
        else:
            if snap.pool_keys:
                report.findings.append(Finding(keys, 0, f"snapshot keys file {snap.pool_keys}: consolidate does "
                                               "not use it; --repair deletes it (a cache: no answer changes)",
                                               "snapshot", "delete"))
            if snap.order:
                report.findings.append(Finding(idorder.path_of(snap.path), 0, f"snapshot id order {snap.order}: "
                                               "it is not used; --repair deletes it (a cache: no answer changes)",
                                               "snapshot", "delete"))
            if snap.near:
                report.findings.append(Finding(near_path(snap.path), 0, f"snapshot near-duplicate groups {snap.near}: "
                                               "consolidate does not use what fails its checks; --repair deletes it "
                                               "(a cache: no answer changes)", "snapshot", "delete"))


def _snapshot_problem(layout: Layout, snap: _Snap, fold: Fold, head: int) -> str | None:
    if snap.error:
        return f"unreadable snapshot ({snap.error})"
    meta = snap.meta
    if meta.get("seq") != snap.seq:
        return f"metadata says seq {meta.get('seq')!r} but the name says {snap.seq}"
    if snap.seq > head:
        return f"claims seq {snap.seq} but the log ends at seq {head}"
    if meta.get("rows") != snap.rows:
        return f"metadata says {meta.get('rows')!r} rows but it holds {snap.rows}"
    if snap.seq and meta.get("anchor") is not None:
        # (without an anchor readers never use it; its rows are checked against the log below)
        problem = anchor_problem(layout, meta["anchor"], snap.seq, hashes=True)
        if problem:
            return f"does not match this log as it is now ({problem}): readers do not use it"
    captured = fold.captured.get(snap.seq)
    if captured is not None:
        checksum, keys, _n = captured
        if checksum != snap.checksum or keys != snap.keys:
            return f"rows differ from the log folded to seq {snap.seq}"
        if fold.marks.get(snap.seq) != snap.marks:  # a wrong mark would skip comparisons
            return f"its consolidate marks {snap.marks} differ from the log's at seq {snap.seq}"
    return _position_problem(layout, meta.get("position"), snap.seq)


def _position_problem(layout: Layout, position, seq: int) -> str | None:
    if position is None:
        return None
    try:
        name, offset = position
        path = layout.log_dir / name
        size = path.stat().st_size
        if not LOG_NAME.match(name) or not 0 <= offset <= size:
            raise ValueError
        with open(path, "rb") as fh:
            start = max(0, offset - (1 << 20))
            fh.seek(start)
            before = fh.read(offset - start)
            after = fh.readline()
    except (OSError, ValueError, TypeError):
        return f"records a log position {position!r} that does not exist"
    if before and not before.endswith(b"\n"):
        return f"log position {name}:{offset} is not at the start of a line"
    prev_line = before[:-1].rsplit(b"\n", 1)[-1] if before else b""
    for line, want in ((prev_line, seq), (after.rstrip(b"\n") if after.endswith(b"\n") else b"", seq + 1)):
        if not line:
            continue
        try:
            got = loads(line).get("seq")
        except (JSONDecodeError, AttributeError):
            continue  # a damaged line is reported by the log check
        if got != want:
            return f"log position {name}:{offset} is at seq {got}, not next to seq {seq}"
    return None


