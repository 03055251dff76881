"""The night's files beside a snapshot: the hook `snapshot` passes the store layer
(``store.snapshot.Sidecars``), which writes them without knowing what they hold."""

from __future__ import annotations

from pathlib import Path

from ..errors import StoreError
from . import neargroups, poolkeys


def snapshot_sidecars(keyer=None, embedder=None):
    """The ``Sidecars`` hook that writes, beside a snapshot, its update pool's keys
    (``poolkeys``; ``keyer``: where they are looked up first, the key cache) and its
    near-duplicate groups with their vectors (``neargroups``; ``embedder``: whose ``cached``
    vectors, the embedding cache's; None: no such file). Each is left out when it cannot be
    written (a night then takes the keys and vectors from the caches, as without it)."""

    def write(path: Path, table, checksum: str, prior) -> None:
        # (taken from a snapshot whose keys file can be believed: its postings are kept, only the
        # rows added or back in the pool since are looked up)
        found = poolkeys.read(prior.path, prior.checksum) if prior is not None else None
        try:
            poolkeys.write(path, table, checksum, keyer, None if found is None else (found, prior.table))
        except (OSError, StoreError):
            _drop(poolkeys.path_of(path))  # (not another snapshot's keys by that name)
        # (likewise its groups' vectors are copied from the last snapshot's, where they hold)
        near = neargroups.read(prior.path, prior.checksum, embedder) \
            if embedder is not None and prior is not None else None
        try:
            neargroups.write(path, table, checksum, embedder, None if near is None else (near, prior.table))
        except (OSError, StoreError):
            _drop(neargroups.path_of(path))

    return write


def _drop(path: Path) -> None:
    """Remove a derived file that could not be written (one that will not go is not read)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
