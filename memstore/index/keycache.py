"""Update keys (``memstore.beliefs.frame.keys``) cached by text hash: append-only, shared
by stores, beside the embedding cache.

consolidate ranks a new memory's update candidates by the keys it shares with every
updatable record (``beliefs.candidates.Postings``). Deriving the keys of every one of them
again each night was most of a night's run (a million memories, ``bench/scale.py --only
nightly``: 46.8 s derived, 37.3 s cached): keys are a pure function of the text, so they
are kept here once.

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
from pathlib import Path

from ..beliefs.frame import KEYS_VERSION
from ..errors import StoreError
from ..store.fs import FILE_MODE, ensure_dir, write_all
from .embcache import text_hash

MAGIC = b"MSK1"
_HEAD = struct.Struct("<4sIII")
_SEP = "\x1f"

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

    def find(self, hashes: list[bytes]) -> list[frozenset | None]:
        import numpy as np

        if not hashes or not len(self.hashes):
            return [None] * len(hashes)
        want = np.array(hashes, dtype="S16")
        pos = np.minimum(np.searchsorted(self.hashes, want), len(self.hashes) - 1)
        hit = self.hashes[pos] == want
        found: list[frozenset | None] = []
        for ok, w in zip(hit.tolist(), self.where[pos].tolist(), strict=True):
            if not ok:
                found.append(None)
                continue
            payload, offsets, n = self.blocks[w >> 32]
            row = w & 0xFFFFFFFF
            start = 16 * n + 4 * (n + 1)
            text = payload[start + int(offsets[row]):start + int(offsets[row + 1])]
            try:
                found.append(frozenset(text.decode().split(_SEP)) if text else frozenset())
            except UnicodeDecodeError:  # (the CRC held: written so by hand) derived again
                found.append(None)
        return found


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

    def keys(self, texts: list[str], derive) -> list[frozenset]:
        if self.path is None:
            return list(derive(texts))
        hashes = [text_hash(t) for t in texts]
        found = self._read().find(hashes)
        todo: dict[bytes, int] = {}  # a text asked for twice is derived once
        for i, f in enumerate(found):
            if f is None:
                todo.setdefault(hashes[i], i)
        if todo:
            fresh = list(derive([texts[i] for i in todo.values()]))
            for i, keys in zip(todo.values(), fresh, strict=True):
                found[i] = keys
            keep = [(h, k) for h, k in zip(todo, fresh, strict=True) if not any(_SEP in w for w in k)]
            if keep:
                try:
                    self._append([h for h, _ in keep], [k for _, k in keep])
                except (OSError, StoreError):  # a full disk, an unwritable cache: derived again next time
                    pass
            for i, f in enumerate(found):
                if f is None:
                    found[i] = found[todo[hashes[i]]]
        return found

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
