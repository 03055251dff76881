"""Handing back the pages Tantivy maps of an index's files after a bulk read.

Tantivy reads its files through read-only shared mappings. Reading tens of thousands of
stored records scattered over a million (the `conflicts` listing, the brief's open
conflicts) leaves most of the doc store mapped, in this process's RSS, for pages it will
not read again. ``release`` drops this process's
mappings of those pages (``MADV_DONTNEED``); they stay in the page cache, and a later read
faults them back in from it, so nothing Tantivy sees changes. Linux only; elsewhere, and
wherever /proc or madvise is missing, nothing happens.
"""

from __future__ import annotations

import os
from pathlib import Path

_MADV_DONTNEED = 4  # (Linux's value; the mmap module's constant names it only for its own maps)
_MADVISE: list = []  # libc's madvise once found (a read of thousands of records calls release hundreds of times)
_REAL: dict[Path, bytes] = {}  # a directory -> its real path's prefix, once a process


def _madvise():
    if not _MADVISE:
        import ctypes

        try:
            fn = ctypes.CDLL(None, use_errno=True).madvise
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        except (OSError, AttributeError):
            fn = None
        _MADVISE.append(fn)
    return _MADVISE[0]


def release(directory: Path) -> int:
    """Drop this process's mapped pages of the files under ``directory``; the bytes released
    (0 where nothing could be)."""
    import sys

    if not sys.platform.startswith("linux"):
        return 0
    try:
        with open("/proc/self/maps", "rb") as fh:
            maps = fh.read().splitlines()
    except OSError:
        return 0
    prefix = _REAL.get(directory)
    if prefix is None:
        prefix = _REAL[directory] = os.fsencode(os.path.realpath(directory)) + b"/"
    spans = []
    for line in maps:
        if prefix not in line:
            continue
        parts = line.split(maxsplit=5)
        # a read-only mapping of a file under the directory (never one this process writes)
        if len(parts) == 6 and parts[5].startswith(prefix) and parts[1][:2] == b"r-":
            lo, hi = (int(x, 16) for x in parts[0].split(b"-"))
            spans.append((lo, hi - lo))
    if not spans:
        return 0
    madvise = _madvise()
    if madvise is None:
        return 0
    done = 0
    for lo, size in spans:
        if madvise(lo, size, _MADV_DONTNEED) == 0:
            done += size
    return done
