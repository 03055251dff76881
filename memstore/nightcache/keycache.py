"""Update keys (``memstore.beliefs.frame.keys``) cached by text hash: append-only, shared
by stores, beside the embedding cache.

consolidate ranks a new memory's update candidates by the keys it shares with every
updatable record (``beliefs.candidates.Postings``). Deriving the keys of every one of them
again each night was most of a night's run (``bench/scale.py --only nightly``): keys are a
pure function of the text, so they are kept here once.

The file, ``keys-<KEYS_VERSION>.bin``, is a sequence of blocks, one per append:

    b"MSK1", count n (u4), payload length (u4), CRC-32 of the payload (u4), payload:
    n text hashes (16 bytes each), n + 1 offsets (u4) into the keys text, the keys text
    (UTF-8: each text's keys sorted and joined by U+001F, one after another)

A block whose CRC fails is skipped; a block cut short (a crash mid-append) ends the file
and is cut off by the next append. The version in the name changes with the rule, so a
file of another rule's keys is never read (tests pin the rule to its version). Like the
embedding cache, a block is believed when its CRC holds: the cache directory is the
user's own.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from itertools import repeat as _repeat
from pathlib import Path

from ..beliefs.frame import KEYS_VERSION
from ..errors import StoreError
from ..index.embcache import text_hash
from ..store.fs import FILE_MODE, ensure_dir, write_all

MAGIC = b"MSK1"
_HEAD = struct.Struct("<4sIII")
_SEP = "\x1f"
_GATHER = 65_536  # texts whose keys ``Keys.postings`` joins at a time

_LOADED: dict[Path, _Read] = {}  # path -> what this process has read of it


class _Read:
    """What one process holds of one file: its sound blocks' payloads and, sorted by hash,
    where each entry lies (block, row)."""

    def __init__(self):
        import numpy as np

        self.end = 0  # bytes read: every block before it is whole (sound or skipped)
        self.blocks: list[tuple[bytes, object, int]] = []  # (payload, offsets, count)
        self.hashes = np.zeros(0, dtype="S16")
        self.where = np.zeros(0, dtype=np.int64)  # block << 32 | row

    def take(self, data: bytes, base: int) -> None:
        """Blocks from ``data`` (the file from byte ``base``) up to the first cut-short one."""
        import numpy as np

        at = 0
        new_h, new_w = [], []
        while at + _HEAD.size <= len(data):
            magic, n, length, crc = _HEAD.unpack_from(data, at)
            end = at + _HEAD.size + length
            if magic != MAGIC or end > len(data) or length < 16 * n + 4 * (n + 1):
                break  # a torn (or foreign) tail: nothing after it is read
            payload = data[at + _HEAD.size:end]
            at = end
            if zlib.crc32(payload) != crc:
                continue  # damaged: its texts are derived again
            offsets = np.frombuffer(payload, dtype="<u4", count=n + 1, offset=16 * n)
            if (int(offsets[0]) != 0 or int(offsets[-1]) != length - 16 * n - 4 * (n + 1)
                    or (np.diff(offsets.astype(np.int64)) < 0).any()):
                continue  # (the CRC held: written so on purpose) not believed
            block = len(self.blocks)
            self.blocks.append((payload, offsets, n))
            new_h.append(np.frombuffer(payload, dtype="S16", count=n))
            new_w.append((block << 32) | np.arange(n, dtype=np.int64))
        self.end = base + at
        if new_h:
            hashes = np.concatenate([self.hashes, *new_h])
            where = np.concatenate([self.where, *new_w])
            order = np.argsort(hashes, kind="stable")  # the first entry of a hash wins
            self.hashes, self.where = hashes[order], where[order]

    def locate(self, hashes: list[bytes]):
        """Where each hash's entry lies (block << 32 | row), -1 where none: an int64 array."""
        import numpy as np

        if not hashes or not len(self.hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        want = np.array(hashes, dtype="S16")
        pos = np.minimum(np.searchsorted(self.hashes, want), len(self.hashes) - 1)
        return np.where(self.hashes[pos] == want, self.where[pos], -1)

    def text(self, w: int) -> bytes:
        """The keys text (UTF-8, joined by U+001F) of the entry at ``w`` (``locate``)."""
        payload, offsets, n = self.blocks[w >> 32]
        row = w & 0xFFFFFFFF
        start = 16 * n + 4 * (n + 1)
        return payload[start + int(offsets[row]):start + int(offsets[row + 1])]

    def texts(self, where) -> list[bytes]:
        """``text`` of each entry of ``where`` (an int64 array of found entries), in order."""
        import numpy as np

        out: list = [b""] * len(where)
        block = where >> 32
        for b in np.unique(block).tolist():
            at = np.flatnonzero(block == b)
            payload, offsets, n = self.blocks[b]
            rows = where[at] & 0xFFFFFFFF
            start = 16 * n + 4 * (n + 1)
            lo = (offsets[rows].astype(np.int64) + start).tolist()
            hi = (offsets[rows + 1].astype(np.int64) + start).tolist()
            for i, a, z in zip(at.tolist(), lo, hi, strict=True):
                out[i] = payload[a:z]
        return out


def _decoded(text: bytes) -> frozenset | None:
    try:
        return frozenset(text.decode().split(_SEP)) if text else frozenset()
    except UnicodeDecodeError:  # (the CRC held: written so by hand) derived again
        return None


class Keys(Sequence):
    """What ``KeyCache.keys`` hands back: each text's keys, a frozenset, in the texts' order.
    A text the file holds is decoded when it is read, and ``postings`` gathers which texts
    hold which keys without building a set per text (a night's consolidate reads the keys
    of every pool text to gather the postings of the day's few keys: decoding them one by
    one built a set for every pool text)."""

    def __init__(self, read: _Read, where, fresh: dict[int, frozenset], texts: list[str], derive):
        self._read, self._where, self._fresh = read, where, fresh  # fresh: the derived ones
        self._texts, self._derive = texts, derive
        self._got: dict[int, frozenset] = {}  # decoded once read (a bulk import reads them all, often)

    def _bad(self, i: int) -> frozenset:
        """A text whose keys in the file do not decode (written so by hand: the CRC held):
        derived again, as if the file lacked it."""
        found = self._fresh[i] = next(iter(self._derive([self._texts[i]])))
        return found

    def __len__(self) -> int:
        return len(self._where)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = i if i >= 0 else i + len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        found = self._fresh.get(i)
        if found is None:
            found = self._got.get(i)
        if found is None:
            found = _decoded(self._read.text(int(self._where[i])))
            if found is None:
                return self._bad(i)
            self._got[i] = found
        return found

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None

    def _part(self, part, where) -> tuple:
        """(the keys texts of the positions ``part``, found at ``where``; the position each of
        their keys belongs to, an int64 array, and the keys, one list), decoded at once; the
        last two None when one of the texts does not decode."""
        import numpy as np

        texts = self._read.texts(where[part])
        try:  # (U+001F is ASCII: the joined text decodes if and only if every text does)
            raw = b"\x1f".join(texts)
            joined = raw.decode()
        except UnicodeDecodeError:
            return texts, None, None
        words = joined.split(_SEP)
        # each text's words: the separators within it, plus one (an empty text has none)
        sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        starts = np.cumsum(sizes + 1) - sizes - 1
        seps = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x1F)  # (not a running count
        # a byte: 8 bytes of it a byte of keys)
        counts = np.where(sizes > 0, seps.searchsorted(starts + sizes) - seps.searchsorted(starts) + 1, 0)
        if len(words) != int(counts.sum()):  # an empty text makes one empty word: drop them
            words = [w for t, w in zip(_owners(counts, texts), words, strict=True) if t]
        return texts, np.repeat(part, counts), words

    def words(self) -> tuple[list[str], object]:
        """Every text's keys as one list, and the position of the text each belongs to (an
        int64 array): the lists of ``self[i]`` for every ``i``, without a set made per text."""
        import numpy as np

        where = self._where.copy()
        where[list(self._fresh)] = -1
        hit = np.flatnonzero(where >= 0)
        owners, words = [], []
        for at in range(0, len(hit), _GATHER):
            part = hit[at:at + _GATHER]
            texts, owner, found = self._part(part, where)
            if owner is None:  # (as ``postings``)
                for i, text in zip(part.tolist(), texts, strict=True):
                    if _decoded(text) is None:
                        self._bad(i)
                    else:
                        owners.append(np.full(len(self[i]), i, dtype=np.int64))
                        words += self[i]
                continue
            owners.append(owner)
            words += found
        for i in sorted(self._fresh):
            owners.append(np.full(len(self._fresh[i]), i, dtype=np.int64))
            words += self._fresh[i]
        return words, np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)

    def postings(self, wanted: frozenset | None) -> dict[str, object]:
        """key -> the positions of the texts holding it (an ascending int64 array), for the
        keys in ``wanted`` (None: every key); the same lists as reading each text's keys."""
        import numpy as np

        where = self._where.copy()
        where[list(self._fresh)] = -1
        hit = np.flatnonzero(where >= 0)
        lists: dict[str, list] = {}  # key -> position arrays, in position order
        for at in range(0, len(hit), _GATHER):
            part = hit[at:at + _GATHER]
            texts, owner, words = self._part(part, where)
            if owner is None:  # a text written by hand: each on its own, as ``__getitem__``
                for i, text in zip(part.tolist(), texts, strict=True):
                    found = _decoded(text)
                    if found is None:
                        self._bad(i)  # (gathered with the derived ones, below)
                        continue
                    for word in (found if wanted is None else found & wanted):
                        lists.setdefault(word, []).append(np.array([i], dtype=np.int64))
                continue
            ids: dict[str, int] = {}
            if wanted is None:
                code = np.fromiter((ids.setdefault(w, len(ids)) for w in words), dtype=np.int64, count=len(words))
            else:
                ids = {w: j for j, w in enumerate(sorted(wanted))}
                code = np.fromiter(map(ids.get, words, _repeat(-1)), dtype=np.int64, count=len(words))
                keep = code >= 0
                code, owner = code[keep], owner[keep]
            order = np.argsort(code, kind="stable")  # (each key's positions stay ascending)
            code, owner = code[order], owner[order]
            cuts = np.flatnonzero(np.diff(code)) + 1
            names = list(ids)
            for codes_, owners in zip(np.split(code, cuts), np.split(owner, cuts), strict=True):
                if len(codes_):
                    lists.setdefault(names[int(codes_[0])], []).append(owners)
        for i in sorted(self._fresh):
            found = self._fresh[i]
            for word in (found if wanted is None else found & wanted):
                lists.setdefault(word, []).append(np.array([i], dtype=np.int64))
        out = {}
        for word, parts in lists.items():
            a = parts[0] if len(parts) == 1 else np.concatenate(parts)
            out[word] = a if bool((a[1:] > a[:-1]).all()) else np.sort(a)
        return out


def _owners(counts, texts):
    """Per word of the joined texts: whether it belongs to a non-empty text."""
    for n, t in zip(counts.tolist(), texts, strict=True):
        if t:
            yield from [True] * n
        else:
            yield False


def _block(hashes: list[bytes], sets: list[frozenset]) -> bytes:
    import numpy as np

    texts = [_SEP.join(sorted(s)).encode() for s in sets]
    offsets = np.zeros(len(texts) + 1, dtype="<u4")
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    payload = b"".join(hashes) + offsets.tobytes() + b"".join(texts)
    return _HEAD.pack(MAGIC, len(hashes), len(payload), zlib.crc32(payload)) + payload


class KeyCache:
    """``keys(texts, derive)``: each text's update keys, from the file where it has them,
    else from ``derive(texts)`` (then appended). No directory: nothing is kept."""

    def __init__(self, directory: Path | None):
        self.path = directory / f"keys-{KEYS_VERSION}.bin" if directory else None

    def _read(self) -> _Read:
        found = _LOADED.setdefault(self.path, _Read())
        try:
            size = self.path.stat().st_size
        except OSError:  # none yet, or no directory to hold one: nothing cached
            size = 0
        if size < found.end:  # replaced or cut since: read afresh
            found = _LOADED[self.path] = _Read()
        if size > found.end:
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(found.end)
                    found.take(fh.read(size - found.end), found.end)
            except OSError:  # unreadable: the keys are derived
                pass
        return found

    def keys(self, texts: list[str], derive) -> Sequence[frozenset]:
        """Each text's keys (a ``Keys``; a list where there is no file): read from the file,
        those it lacks from ``derive(texts)``, then appended."""
        if self.path is None:
            return list(derive(texts))
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        read = self._read()
        where = read.locate(hashes)
        missing = np.flatnonzero(where < 0).tolist()
        todo: dict[bytes, int] = {}  # a text asked for twice is derived once
        for i in missing:
            todo.setdefault(hashes[i], i)
        fresh: dict[int, frozenset] = {}
        if todo:
            derived = dict(zip(todo, derive([texts[i] for i in todo.values()]), strict=True))
            keep = [(h, k) for h, k in derived.items() if not any(_SEP in w for w in k)]
            if keep:
                try:
                    self._append([h for h, _ in keep], [k for _, k in keep])
                except (OSError, StoreError):  # a full disk, an unwritable cache: derived again next time
                    pass
            fresh = {i: derived[hashes[i]] for i in missing}
        return Keys(read, where, fresh, texts, derive)

    def _append(self, hashes: list[bytes], sets: list[frozenset]) -> None:
        import fcntl

        ensure_dir(self.path.parent)
        block = _block(hashes, sets)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # stores share the file: one append at a time
            size = os.fstat(fd).st_size
            found = self._read()  # up to the first torn block, if any (under the lock: final)
            if found.end < size:
                os.ftruncate(fd, found.end)  # a crash's torn block: cut before appending
            write_all(fd, block)
        finally:
            os.close(fd)
