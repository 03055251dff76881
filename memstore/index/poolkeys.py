"""The update pool's keys beside a snapshot, inverted: ``snapshots/state-<seq>.keys``.

A night's ``consolidate`` ranks each new record's update candidates by the keys it shares
with every record of the update pool (``beliefs.candidates.Postings``): which pool records
hold the day's few thousand keys. Without this file that is read from the key cache text
by text: the keys of every pool record (342,000 at a million memories), hashed, looked up,
decoded and inverted, every night (1.8 s of a 7.4 s night at 1M). This file holds that
inversion for the pool as the snapshot has it, so a night reads the postings of its own
keys and derives only those of the pool records the log after the snapshot touched.

It covers the snapshot's rows that pass ``rowscan.pooled_rows`` (raw, no outcome, active
or expired, not an episode), by row number. A record the log after the snapshot touched is
built, and its keys are taken as before (from the key cache), as are those of a record not
in the pool when the snapshot was taken. So the postings a night gathers are the same ones,
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

from ..beliefs.frame import KEYS_VERSION, keys_of
from ..codec import JSONDecodeError, dumps, loads
from ..store.fs import read_regular, write_atomic

FORMAT = "memstore-poolkeys/1"
_UPDATABLE = ("active", "expired")  # (consolidate's ``_UPDATABLE``; a test holds them equal)


def path_of(snapshot: Path) -> Path:
    """The keys file of a snapshot ``state-<seq>.parquet``: ``state-<seq>.keys``."""
    return snapshot.with_suffix(".keys")


def _hash(name: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "little")


def build(table, checksum: str, keyer=None) -> bytes:
    """The file's bytes for a snapshot's ``table`` whose data checksum is ``checksum``.
    ``keyer(texts, derive)``: where the pool texts' keys are looked up first (the key
    cache), else they are derived here."""
    import numpy as np

    from ..rowscan import pooled_rows

    rows = np.flatnonzero(pooled_rows(table, _UPDATABLE))
    texts = table.column("text").take(rows).to_pylist() if len(rows) else []
    found = keyer(texts, keys_of) if keyer is not None else keys_of(texts)
    if hasattr(found, "words"):  # (the key cache's: decoded in blocks, not a set a record)
        words, owner = found.words()
    else:
        words = list(chain.from_iterable(found))
        owner = np.repeat(np.arange(len(found), dtype=np.int64), [len(h) for h in found])
    distinct = list(dict.fromkeys(words))
    names = [w.encode() for w in distinct]
    # keys in (hash, name) order, each key's records ascending: bytes that do not depend on
    # the order a set was iterated in
    hashed = [_hash(n) for n in names]
    order = sorted(range(len(names)), key=lambda j: (hashed[j], names[j]))
    rank = {distinct[j]: r for r, j in enumerate(order)}
    code = np.fromiter(map(rank.__getitem__, words), dtype=np.int64, count=len(words))
    by = np.argsort(code * max(1, len(rows)) + owner)  # (by key, then row: distinct)
    postings = owner[by]
    counts = np.bincount(code, minlength=len(names))
    starts = np.zeros(len(names) + 1, dtype="<u8")
    np.cumsum(counts, out=starts[1:])
    sorted_names = [names[j] for j in order]
    name_starts = np.zeros(len(names) + 1, dtype="<u8")
    np.cumsum([len(n) for n in sorted_names], out=name_starts[1:])
    blob = b"".join(sorted_names)
    body = b"".join([rows.astype("<u4").tobytes(), np.array([hashed[j] for j in order], dtype="<u8").tobytes(),
                     name_starts.tobytes(), starts.tobytes(), postings.astype("<u4").tobytes(), blob])
    head = {"format": FORMAT, "keys_version": KEYS_VERSION, "snapshot": checksum, "table_rows": table.num_rows,
            "records": len(rows), "keys": len(names), "postings": len(postings), "names": len(blob),
            "sha256": hashlib.sha256(body).hexdigest()}
    return dumps(head) + b"\n" + body


def write(snapshot: Path, table, checksum: str, keyer=None) -> Path:
    """Write the keys file of the snapshot at ``snapshot`` (its table and data checksum)."""
    path = path_of(snapshot)
    write_atomic(path, build(table, checksum, keyer))
    return path


class PoolKeys:
    """A keys file as read: the covered table rows (``rows``), and the postings of keys."""

    def __init__(self, head: dict, body: memoryview):
        import numpy as np

        r, k, p = head["records"], head["keys"], head["postings"]
        at = 0

        def take(dtype, count):
            nonlocal at
            out = np.frombuffer(body, dtype=dtype, count=count, offset=at)
            at += out.nbytes
            return out

        self.table_rows = head["table_rows"]
        self.rows = take("<u4", r).astype(np.int64)
        self._hashes = take("<u8", k)
        self._name_at = take("<u8", k + 1).astype(np.int64)
        self._post_at = take("<u8", k + 1).astype(np.int64)
        self._postings = take("<u4", p)
        self._names = bytes(body[at:at + head["names"]])

    def _sound(self) -> bool:
        """The bounds a reader relies on (the sha256 held: a file made so on purpose is not
        believed either)."""
        import numpy as np

        def rising(a, end):  # from 0 to ``end``, never falling
            return len(a) >= 1 and int(a[0]) == 0 and int(a[-1]) == end and not (np.diff(a) < 0).any()

        rows = self.rows
        return (rising(self._name_at, len(self._names)) and rising(self._post_at, len(self._postings))
                and not (np.diff(rows) <= 0).any() and (not len(rows) or (rows[0] >= 0 and rows[-1] < self.table_rows))
                and bool((self._hashes[1:] >= self._hashes[:-1]).all())
                and (not len(self._postings) or int(self._postings.max()) < len(rows)))

    def postings(self, keys) -> dict[str, object]:
        """key -> the indexes (into ``rows``) of the covered records holding it, ascending
        (an int64 array), for the keys of ``keys`` that any covered record holds."""
        import numpy as np

        keys = sorted(keys)
        if not keys or not len(self._hashes):
            return {}
        names = [k.encode() for k in keys]
        want = np.array([_hash(n) for n in names], dtype="<u8")
        lo = np.searchsorted(self._hashes, want, side="left").tolist()
        hi = np.searchsorted(self._hashes, want, side="right").tolist()
        out = {}
        for key, name, a, z in zip(keys, names, lo, hi, strict=True):
            for j in range(a, z):  # (a hash shared by other names: each compared)
                if self._names[self._name_at[j]:self._name_at[j + 1]] == name:
                    found = self._postings[self._post_at[j]:self._post_at[j + 1]].astype(np.int64)
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
    try:
        data = read_regular(path_of(snapshot))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc})"
    end = data.find(b"\n")
    try:
        head = loads(data[:end]) if end >= 0 else None
    except JSONDecodeError:
        head = None
    if not isinstance(head, dict):
        return "has no header"
    if head.get("format") != FORMAT or head.get("keys_version") != KEYS_VERSION:
        return f"is of format {head.get('format')!r} (keys {head.get('keys_version')!r}), not {FORMAT!r} " \
               f"(keys {KEYS_VERSION})"
    if checksum is None or head.get("snapshot") != checksum:
        return "was made from another snapshot than the one beside it"
    counts = [head.get(name) for name in ("table_rows", "records", "keys", "postings", "names")]
    if not all(type(c) is int and 0 <= c < 1 << 40 for c in counts):
        return "has a header whose counts are not counts"
    _n, r, k, p, b = counts
    body = memoryview(data)[end + 1:]
    if len(body) != 4 * r + 8 * k + 16 * (k + 1) + 4 * p + b or hashlib.sha256(body).hexdigest() != head.get("sha256"):
        return "does not match its length or sha256 (damaged)"
    keys = PoolKeys(head, body)
    if not keys._sound():
        return "holds offsets or rows out of bounds"
    return keys
