"""The update pool's keys beside a snapshot, inverted: ``snapshots/state-<seq>.keys``.

A night's ``consolidate`` ranks each new record's update candidates by the keys it shares
with every record of the update pool (``beliefs.candidates.Postings``): which pool records
hold the day's few thousand keys. Without this file that is read from the key cache text
by text: the keys of every pool record, hashed, looked up, decoded and inverted, every
night. This file holds that inversion for the pool as the snapshot has it, so a night
reads the postings of its own keys and derives only those of the pool records the log
after the snapshot touched.

It covers the snapshot's rows that pass ``rowscan.pooled_rows`` (raw, no outcome, active
or expired, not an episode), by row number. A record the log after the snapshot touched is
built, and its keys are taken as before (from the key cache, or derived when there are
few), as are those of a record not in the pool when the snapshot was taken. So the postings a night gathers are the same ones,
whichever way each record's keys were found (tests/test_poolkeys.py holds them equal).

A derived file like the snapshot it belongs to, written after it by `snapshot`, and
believed only after these checks: its format and keys rule (``KEYS_VERSION``), the checksum
of the snapshot it was made from (the one the night opened), its length and sha256, and
the bounds of every offset and row in it. Anything else and the night takes the keys from
the key cache, as without it. Deleting it changes no answer.

Layout: one line of canonical JSON (format, keys rule, snapshot checksum, the table's rows,
records, keys, postings, name bytes, sha256 of the rest), then, little-endian: the covered
rows (u4, ascending); each key's hash (u8: blake2b of its UTF-8, 8 bytes; sorted, then by
name); where each key's name starts in the names (u8, one more than there are keys); where
each key's postings start (u8, likewise); the postings (u4: indexes into the covered rows,
ascending within a key); the names (UTF-8). The same snapshot and keys make the same bytes.
"""

from __future__ import annotations

import hashlib
from itertools import chain
from pathlib import Path

from ..beliefs.candidates import looked_up
from ..beliefs.frame import KEYS_VERSION, keys_of
from ..codec import dumps
from ..store.fs import arrays, read_headed, write_atomic

FORMAT = "memstore-poolkeys/1"
_UPDATABLE = ("active", "expired")  # (consolidate's ``_UPDATABLE``; a test holds them equal)


def path_of(snapshot: Path) -> Path:
    """The keys file of a snapshot ``state-<seq>.parquet``: ``state-<seq>.keys``."""
    return snapshot.with_suffix(".keys")


def _hash(name: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "little")


# pool texts whose keys a snapshot derives at most: past it (a store not
# consolidated since a bulk import, whose key cache lacks them) the file is left out, and the
# night after derives them into the key cache, as it would without the file
DERIVE_MOST = 65_536


class _TooMany(Exception):
    """More keys to derive than ``DERIVE_MOST``."""


def _derive(texts: list[str]) -> list[frozenset]:
    if len(texts) > DERIVE_MOST:
        raise _TooMany
    return keys_of(texts)


def build(table, checksum: str, keyer=None, prior=None, bounded: bool = True) -> bytes | None:
    """The file's bytes for a snapshot's ``table`` whose data checksum is ``checksum``.
    ``keyer(texts, derive)``: where the pool texts' keys are looked up first (the key
    cache), else they are derived here. ``prior``: (the ``PoolKeys`` of the snapshot this
    one was taken from, that snapshot's table): its postings are kept for the rows both
    tables hold alike, and only the other pool rows' keys are looked up (``_grown``). The
    same bytes either way. None when more than ``DERIVE_MOST`` keys would be derived
    (``bounded``; verify derives every one)."""
    import numpy as np

    from ..rowscan import pooled_rows

    pooled = pooled_rows(table, _UPDATABLE)
    rows = np.flatnonzero(pooled)
    derive = _derive if bounded else keys_of
    try:
        if prior is not None:
            grown = _grown(table, pooled, rows, keyer, *prior, derive=derive)
            if grown is not None:
                return _bytes(table.num_rows, checksum, rows, *grown)
        words, owner = _words(table, rows, keyer, derive)
    except _TooMany:
        return None
    distinct = list(dict.fromkeys(words))
    names = [w.encode() for w in distinct]
    # keys in (hash, name) order, each key's records ascending: bytes that do not depend on
    # the order a set was iterated in
    hashed = [_hash(n) for n in names]
    order = sorted(range(len(names)), key=lambda j: (hashed[j], names[j]))
    rank = {distinct[j]: r for r, j in enumerate(order)}
    code = np.fromiter(map(rank.__getitem__, words), dtype=np.int64, count=len(words))
    by = np.argsort(code * max(1, len(rows)) + owner)  # (by key, then row: distinct)
    counts = np.bincount(code, minlength=len(names))
    return _bytes(table.num_rows, checksum, rows, np.array([hashed[j] for j in order], dtype="<u8"),
                  np.array([len(names[j]) for j in order], dtype=np.int64), b"".join(names[j] for j in order),
                  counts, owner[by])


def _words(table, rows, keyer, derive=keys_of) -> tuple[list[str], object]:
    """The keys of the texts at ``rows`` as one list, and the index in ``rows`` of the row
    each belongs to (an int64 array)."""
    import numpy as np

    texts = table.column("text").take(rows).to_pylist() if len(rows) else []
    found = looked_up(texts, keyer, derive)
    if hasattr(found, "words"):  # (the key cache's: decoded in blocks, not a set a record)
        return found.words()
    return (list(chain.from_iterable(found)),
            np.repeat(np.arange(len(found), dtype=np.int64), [len(h) for h in found]))


def _bytes(table_rows: int, checksum: str, rows, hashes, lengths, blob: bytes, counts, postings) -> bytes:
    """The file: the keys' ``hashes`` and the ``lengths`` of their names, joined in ``blob``,
    in file order; ``counts`` postings each, ``postings`` (indexes into ``rows``) key after key."""
    import numpy as np

    starts = np.zeros(len(counts) + 1, dtype="<u8")
    np.cumsum(counts, out=starts[1:])
    name_starts = np.zeros(len(lengths) + 1, dtype="<u8")
    np.cumsum(lengths, out=name_starts[1:])
    body = b"".join([np.asarray(rows).astype("<u4").tobytes(), np.asarray(hashes, dtype="<u8").tobytes(),
                     name_starts.tobytes(), starts.tobytes(), np.asarray(postings).astype("<u4").tobytes(), blob])
    head = {"format": FORMAT, "keys_version": KEYS_VERSION, "snapshot": checksum, "table_rows": table_rows,
            "records": len(rows), "keys": len(lengths), "postings": len(postings), "names": len(blob),
            "sha256": hashlib.sha256(body).hexdigest()}
    return dumps(head) + b"\n" + body


def _grown(table, pooled, rows, keyer, old: PoolKeys, old_table, derive=keys_of) -> tuple | None:
    """``build``'s keys from the keys file ``old`` of ``old_table``, when ``table`` begins with
    ``old_table``'s rows (their ids: a snapshot taken from another keeps its rows in place,
    in canonical order, and adds the records created since after them): the postings of
    the rows still in the pool with the same text kept, the keys of the other pool rows
    looked up. (hashes, names, counts, postings) as ``_bytes`` takes them; None when the
    tables do not line up so."""
    import numpy as np
    import pyarrow.compute as pc

    n = old.table_rows
    if old_table.num_rows != n or table.num_rows < n or not table.column("id").slice(0, n).equals(
            old_table.column("id")):
        return None
    # the rows it covered whose text is the same (a raw record's text never changes; an
    # abstraction's does, and is never in the pool: held to it all the same)
    same = pc.fill_null(pc.equal(table.column("text").slice(0, n), old_table.column("text")), False)
    covered = np.zeros(table.num_rows, dtype=bool)
    covered[old.rows] = np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)[old.rows]
    # the old file's pairs (key, row) whose row is still in the pool, with its text
    key_of = np.repeat(np.arange(len(old.hashes), dtype=np.int64), np.diff(old.post_at))
    row_of = old.rows[old.postings_at.astype(np.int64)]
    keep = pooled[row_of] & covered[row_of]
    key_of, row_of = key_of[keep], row_of[keep]
    fresh = rows[~covered[rows]]  # (created since, back in the pool, or another text)
    words, owner = _words(table, fresh, keyer, derive)
    # the keys the old file lacks, placed among its own in (hash, name) order
    found = {w: old.index(w.encode()) for w in dict.fromkeys(words)}
    added = sorted((_hash(w.encode()), w.encode()) for w, j in found.items() if j < 0)
    place = np.array([old.place(h, b) for h, b in added], dtype=np.int64)  # (the old key each goes before)
    k = len(old.hashes)
    old_code = np.arange(k, dtype=np.int64) + np.searchsorted(place, np.arange(k, dtype=np.int64), side="right")
    new_code = place + np.arange(len(added), dtype=np.int64)
    at_new = {b: int(c) for (_h, b), c in zip(added, new_code.tolist(), strict=True)}
    code = np.fromiter((old_code[j] if (j := found[w]) >= 0 else at_new[w.encode()] for w in words),
                       dtype=np.int64, count=len(words))
    # every pair as one number, key then index into rows: the old ones in order already, the
    # fresh ones sorted and merged in
    width = max(1, len(rows))
    index_of = np.full(table.num_rows, -1, dtype=np.int64)
    index_of[rows] = np.arange(len(rows), dtype=np.int64)
    pairs = old_code[key_of] * width + index_of[row_of]
    more = np.sort(code * width + index_of[fresh[owner]])
    pairs = np.insert(pairs, np.searchsorted(pairs, more), more)
    counts = np.bincount(pairs // width, minlength=k + len(added))
    # a key no row holds any more is left out, as a build from the table leaves it out
    old_held, new_held = counts[old_code] > 0, counts[new_code] > 0
    kept = np.flatnonzero(old_held)
    lengths = np.diff(old.name_at)
    blob = np.frombuffer(old.names, dtype=np.uint8)[np.repeat(old_held, lengths)].tobytes()
    # the new keys go in among the old ones kept: at the byte offset of the first kept after them
    before = np.searchsorted(kept, place[new_held])
    offsets = np.concatenate([[0], np.cumsum(lengths[kept])])[before].tolist()
    names = [b for (_h, b), held in zip(added, new_held.tolist(), strict=True) if held]
    pieces, last = [], 0
    for off, name in zip(offsets, names, strict=True):
        pieces += [blob[last:off], name]
        last = off
    pieces.append(blob[last:])
    hashes = np.insert(old.hashes[kept], before, np.array([h for (h, _b), held in zip(added, new_held.tolist(),
                                                                                     strict=True) if held],
                                                          dtype="<u8"))
    lengths = np.insert(lengths[kept], before, np.array([len(b) for b in names], dtype=np.int64))
    return hashes, lengths, b"".join(pieces), counts[counts > 0], pairs % width


def write(snapshot: Path, table, checksum: str, keyer=None, prior=None) -> bool:
    """Write the keys file of the snapshot at ``snapshot`` (its table and data checksum;
    ``keyer`` and ``prior`` as ``build`` takes them); False, and none there, when ``build``
    leaves it out."""
    path = path_of(snapshot)
    data = build(table, checksum, keyer, prior)
    if data is None:
        path.unlink(missing_ok=True)
        return False
    write_atomic(path, data)
    return True


class PoolKeys:
    """A keys file as read: the covered table rows (``rows``), and the postings of keys."""

    def __init__(self, head: dict, body: memoryview):
        import numpy as np

        r, k, p = head["records"], head["keys"], head["postings"]
        take = arrays(body)
        self.table_rows = head["table_rows"]
        self.rows = take("<u4", r).astype(np.int64)
        self.hashes = take("<u8", k)
        self.name_at = take("<u8", k + 1).astype(np.int64)
        self.post_at = take("<u8", k + 1).astype(np.int64)
        self.postings_at = take("<u4", p)
        self.names = bytes(body[take.at():take.at() + head["names"]])

    def _sound(self) -> bool:
        """The bounds a reader relies on (the sha256 held: a file made so on purpose is not
        believed either)."""
        import numpy as np

        def rising(a, end):  # from 0 to ``end``, never falling
            return len(a) >= 1 and int(a[0]) == 0 and int(a[-1]) == end and not (np.diff(a) < 0).any()

        rows = self.rows
        return (rising(self.name_at, len(self.names)) and rising(self.post_at, len(self.postings_at))
                and not (np.diff(rows) <= 0).any() and (not len(rows) or (rows[0] >= 0 and rows[-1] < self.table_rows))
                and bool((self.hashes[1:] >= self.hashes[:-1]).all())
                and (not len(self.postings_at) or int(self.postings_at.max()) < len(rows)))

    def name(self, j: int) -> bytes:
        """The name (UTF-8) of the key at index ``j``."""
        return self.names[self.name_at[j]:self.name_at[j + 1]]

    def index(self, name: bytes) -> int:
        """The index of the key named ``name``; -1 when no covered record holds it."""
        import numpy as np

        h = np.uint64(_hash(name))
        for j in range(int(self.hashes.searchsorted(h, "left")), int(self.hashes.searchsorted(h, "right"))):
            if self.name(j) == name:
                return j
        return -1

    def place(self, h: int, name: bytes) -> int:
        """Where a key of hash ``h`` named ``name`` (not one of them) goes among the keys: the
        index of the first that sorts after it by (hash, name)."""
        import numpy as np

        at = np.uint64(h)
        j, end = int(self.hashes.searchsorted(at, "left")), int(self.hashes.searchsorted(at, "right"))
        while j < end and self.name(j) < name:
            j += 1
        return j

    def postings(self, keys) -> dict[str, object]:
        """key -> the indexes (into ``rows``) of the covered records holding it, ascending
        (an int64 array), for the keys of ``keys`` that any covered record holds."""
        import numpy as np

        keys = sorted(keys)
        if not keys or not len(self.hashes):
            return {}
        names = [k.encode() for k in keys]
        want = np.array([_hash(n) for n in names], dtype="<u8")
        lo = np.searchsorted(self.hashes, want, side="left").tolist()
        hi = np.searchsorted(self.hashes, want, side="right").tolist()
        out = {}
        for key, name, a, z in zip(keys, names, lo, hi, strict=True):
            for j in range(a, z):  # (a hash shared by other names: each compared)
                if self.name(j) == name:
                    found = self.postings_at[self.post_at[j]:self.post_at[j + 1]].astype(np.int64)
                    if len(found) and not (found[1:] > found[:-1]).all():
                        found = np.unique(found)  # (only a file made so on purpose: kept an index set)
                    if len(found):
                        out[key] = found
                    break
        return out


def read(snapshot: Path, checksum: str | None) -> PoolKeys | None:
    """The keys file of the snapshot at ``snapshot`` whose data checksum is ``checksum``,
    or None when there is none that can be believed (``problem`` says why)."""
    found = _checked(snapshot, checksum)
    return found if isinstance(found, PoolKeys) else None


def problem(snapshot: Path, checksum: str | None) -> str | None:
    """Why the keys file of this snapshot cannot be believed (None: it can, or there is none);
    for verify."""
    found = _checked(snapshot, checksum)
    return found if isinstance(found, str) else None


def _checked(snapshot: Path, checksum: str | None) -> PoolKeys | str | None:
    found = read_headed(path_of(snapshot))
    if not isinstance(found, tuple):
        return found
    head, body = found
    if head.get("format") != FORMAT or head.get("keys_version") != KEYS_VERSION:
        return f"is of format {head.get('format')!r} (keys {head.get('keys_version')!r}), not {FORMAT!r} " \
               f"(keys {KEYS_VERSION})"
    if checksum is None or head.get("snapshot") != checksum:
        return "was made from another snapshot than the one beside it"
    counts = [head.get(name) for name in ("table_rows", "records", "keys", "postings", "names")]
    if not all(type(c) is int and 0 <= c < 1 << 40 for c in counts):
        return "has a header whose counts are not counts"
    _n, r, k, p, b = counts
    if len(body) != 4 * r + 8 * k + 16 * (k + 1) + 4 * p + b or hashlib.sha256(body).hexdigest() != head.get("sha256"):
        return "does not match its length or sha256 (damaged)"
    keys = PoolKeys(head, body)
    if not keys._sound():
        return "holds offsets or rows out of bounds"
    return keys
