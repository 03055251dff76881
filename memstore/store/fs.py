"""Private files and directories (0700 / 0600), atomic whole-file writes, the store lock."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import StoreError

DIR_MODE = 0o700
FILE_MODE = 0o600


def os_error(exc: OSError, path: Path | str, doing: str) -> StoreError:
    """Turn an OSError into one line a user can act on."""
    reason = {
        errno.ENOSPC: "the disk is full; free some space and retry",
        errno.EDQUOT: "the disk quota is exceeded; free some space and retry",
        errno.EACCES: "permission denied; check the store's owner and mode (it should be yours, 0700)",
        errno.EPERM: "operation not permitted; check the store's owner and mode",
        errno.EROFS: "the file system is read-only; use a writable --store",
        errno.ENOTDIR: "a file is in the way where a directory is needed; choose another --store",
        errno.EEXIST: "a file is in the way where a directory is needed; choose another --store",
        errno.EISDIR: "a directory is in the way where a file is needed",
    }.get(exc.errno, exc.strerror or str(exc))
    return StoreError(f"cannot {doing} {path}: {reason}")


def ensure_dir(path: Path) -> None:
    """Create a private directory, or accept one that exists. Safe when several processes
    create the same store at once: mkdir first and look only when it says "exists" (a
    check-then-create would see another process's half-made directory as a file)."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True)
    except FileExistsError:
        if path.is_dir():
            return
        raise StoreError(f"{path} is a file, not a directory; choose another --store") from None
    except OSError as exc:
        raise os_error(exc, path, "create directory") from None
    try:
        os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask
    except OSError as exc:
        raise os_error(exc, path, "create directory") from None


def write_all(fd: int, data) -> None:
    """os.write until every byte is written (one call may write fewer, e.g. past 2 GiB)."""
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


TEMP_NAME = re.compile(r"^\..+\.tmp(\d+)$")  # write_atomic's temporary file: .<name>.tmp<pid>


def temp_writer(name: str) -> int | None:
    """The pid that wrote a temporary file of ``write_atomic`` named ``name``, else None."""
    m = TEMP_NAME.match(name)
    return int(m.group(1)) if m else None


def temp_path(path: Path) -> Path:
    """Where a whole file is written before it is renamed over ``path`` (``TEMP_NAME``: verify
    tells a dead writer's leftover by the pid in it)."""
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def write_atomic(path: Path, data: bytes) -> None:
    """Write a whole file so that readers see the old or the new version, never a mix."""
    write_atomic_with(path, lambda fd: write_all(fd, data))


def write_atomic_with(path: Path, fill) -> None:
    """``write_atomic`` of what ``fill(fd)`` writes to the open file (a file too large to
    hold in memory whole)."""
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            fill(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise os_error(exc, path, "write") from None


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_held = threading.local()  # lock paths this thread holds: taking one again is a no-op


@contextmanager
def exclusive_lock(lock_path: Path, blocking: bool = True, wait: float | None = None):
    """flock on STORE/.lock: writers serialise here; readers never take it.

    A blocking take is re-entrant within a thread (it would otherwise wait for itself), so
    a read-decide-append sequence (consolidate) can hold the lock around ``log.append``,
    which takes it too. A non-blocking try still reports a held lock as held. ``wait``
    bounds a blocking take to about that many seconds (then yields False)."""
    held = _held.__dict__.setdefault("paths", set())
    key = os.path.abspath(lock_path)
    if blocking and key in held:
        yield True
        return
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as exc:
        raise os_error(exc, lock_path, "open the lock") from None
    try:
        if not _flock(fd, blocking, wait):
            yield False
            return
        held.add(key)
        try:
            yield True
        finally:
            held.discard(key)
    finally:
        os.close(fd)  # closing releases the flock


def _flock(fd: int, blocking: bool, wait: float | None) -> bool:
    if blocking and wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    tries = 1 if not blocking else max(1, int(wait / _POLL) + 1)
    for n in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if n + 1 < tries:
                time.sleep(_POLL)
    return False


_POLL = 0.02


def sha256_file(path) -> str:
    """The SHA-256 (hex) of a file's bytes, read 1 MiB at a time."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class NotRegular(OSError):
    """A path memstore reads as a file holds something else (``mode``: a FIFO, a directory)."""

    def __init__(self, path, mode: int):
        super().__init__(f"{os.fspath(path)} is not a regular file")
        self.mode = mode


def read_regular(path) -> bytes:
    """A file's bytes, opened without blocking: a FIFO put where memstore expects one of its
    files would otherwise hang the open until some writer came. NotRegular for anything but
    a regular file, OSError as open() raises it."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(path, mode)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def arrays(buffer):
    """``take(dtype, count)``: the next ``count`` items of ``dtype`` in ``buffer``, one array
    after another (a derived file's body), and ``take.at()``: how far it has read."""
    import numpy as np

    at = 0

    def take(dtype, count):
        nonlocal at
        out = np.frombuffer(buffer, dtype=dtype, count=count, offset=at)
        at += out.nbytes
        return out

    take.at = lambda: at
    return take


def read_headed(path) -> tuple[dict, memoryview] | str | None:
    """A derived file of one line of canonical JSON (its header) and then its body, as
    (header, body); a reason (text) when it cannot be read or has no header; None when there
    is no such file."""
    from ..codec import JSONDecodeError, loads

    try:
        data = read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc})"
    end = data.find(b"\n")
    try:
        head = loads(data[:end]) if end >= 0 else None
    except JSONDecodeError:
        head = None
    return (head, memoryview(data)[end + 1:]) if isinstance(head, dict) else "has no header"
