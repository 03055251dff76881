"""The order of a snapshot's ids beside it: ``snapshots/state-<seq>.order``.

Every open that builds a snapshot's records when they are asked for (``state.Partial``,
``state.Lazy``: every command and tool at scale) finds a record's row by its id in the ids
sorted, and sorting them was a large part of an open. The sort is the
same every time the snapshot is opened, so `snapshot` writes it beside the snapshot.

The file needs no checksum of its own and is bound to no snapshot by name only: whatever it
holds is believed only when it sorts the ids of the table it is read for, which is checked
in full at each read (bounds, then the ids it lists strictly ascending: with a million
distinct ids there is one such order, and checking it is a gather and a comparison).
Anything else and the ids are sorted as without it. Deleting it changes no answer.

Layout: ``MSORDER1``, the number of rows (u8), then each row number in id order (u4), all
little-endian.
"""

from __future__ import annotations

from pathlib import Path

from .fs import read_regular, write_atomic

MAGIC = b"MSORDER1"


def path_of(snapshot: Path) -> Path:
    """The id order of a snapshot ``state-<seq>.parquet``: ``state-<seq>.order``."""
    return snapshot.with_suffix(".order")


def encode(order) -> bytes:
    import numpy as np

    return MAGIC + len(order).to_bytes(8, "little") + np.asarray(order).astype("<u4").tobytes()


def decode(data: bytes, ids):
    """The order in ``data`` when it sorts ``ids`` (a numpy array of distinct fixed-width ids,
    as ``snapshot._Rows`` holds them), else None."""
    import numpy as np

    n = len(ids)
    if len(data) != 16 + 4 * n or data[:8] != MAGIC or int.from_bytes(data[8:16], "little") != n:
        return None
    order = np.frombuffer(data, dtype="<u4", offset=16).astype(np.int64)
    if n and int(order.max()) >= n:
        return None
    ranked = ids[order]
    return order if n < 2 or bool((ranked[1:] > ranked[:-1]).all()) else None


def read(snapshot: Path, ids):
    """The id order beside ``snapshot`` when there is one and it sorts ``ids``, else None."""
    try:
        data = read_regular(path_of(snapshot))
    except OSError:  # none, unreadable, or not a regular file
        return None
    return decode(data, ids)


def problem(snapshot: Path, ids) -> str | None:
    """Why the id order beside ``snapshot`` cannot be used for a table of these ``ids`` (None:
    it can, or there is none); for verify."""
    try:
        data = read_regular(path_of(snapshot))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc})"
    return None if decode(data, ids) is not None else "does not sort its snapshot's ids"


def grown(old_ids, old_order, ids):
    """The order of ``ids`` (a table that begins with the rows of one whose sorted ids and
    order are ``old_ids`` and ``old_order``, then rows added: a snapshot taken from the last
    one), the added ids merged in; None when ``ids`` does not begin so."""
    import numpy as np

    n = len(old_order)
    if len(ids) < n or not np.array_equal(ids[:n][old_order], old_ids):
        return None
    added = ids[n:]
    mine = np.argsort(added, kind="stable")
    at = np.searchsorted(old_ids, added[mine])
    return np.insert(old_order, at, n + mine)


def write(snapshot: Path, order) -> None:
    write_atomic(path_of(snapshot), encode(order))
