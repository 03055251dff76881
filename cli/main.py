"""The memstore command: the entry point, the umask, interrupts and output that fails.

Exit status: 0 success; 1 an error (or, for checking commands, a finding);
2 a usage error (a malformed option value or argument); 130 interrupted. The command
tree, and how a command line's failures become exit statuses, is cli/app.py.

Standard output may be anything: a terminal or file in a non-UTF-8 encoding (what it
cannot encode is written as backslash escapes), a full disk or /dev/full, a closed
descriptor (``>&-``), a pipe whose reader left (``| head``). A failed write is one
``Error: cannot write the output (...)`` line, exit 1, saying whether the command had
already committed events to the log; a reader that left early ends the command quietly
(exit 0), as it does for other Unix tools.
"""

from __future__ import annotations

import errno
import os
import sys

from . import app
from .output import error


class OutputError(OSError):
    """A write to standard output failed (the OSError it raised is the cause)."""


class ReaderGone(Exception):
    """Standard output is a pipe whose reader has left. Not an OSError: click would turn
    an EPIPE into its own exit 1."""


def main(argv: list[str] | None = None) -> int:
    # private data: whatever gets created, by memstore or by a library it calls (Tantivy and
    # USearch create their files 0644), is 0600 / 0700. Restored for in-process callers.
    umask = os.umask(0o077)
    saved = sys.stdout, sys.stderr, _errors(sys.stdout), _errors(sys.stderr)
    try:
        _guard_streams()
        return _main(argv)
    finally:
        os.umask(umask)
        sys.stdout, sys.stderr = saved[0], saved[1]
        _set_errors(sys.stdout, saved[2])
        _set_errors(sys.stderr, saved[3])


def _main(argv: list[str] | None) -> int:
    command = app.command_for(sys.argv[1:] if argv is None else argv)
    before = _appended()
    try:
        rc = app.invoke(command, argv)
        sys.stdout.flush()  # here, not at interpreter exit, where a failure is only a warning
        return rc
    except KeyboardInterrupt:
        error("Error: interrupted")
        return 130
    except (ReaderGone, BrokenPipeError):
        _discard_stdout()
        return 0  # the reader has all it wanted (`memstore log | head`)
    except OutputError as exc:
        _discard_stdout()
        committed = _appended() - before
        message = f"Error: cannot write the output ({exc.strerror or exc})"
        if committed:
            message += f"; the write was committed ({committed} event{'s' * (committed != 1)})"
        error(message)
        return 1


def _appended() -> int:
    """Events this process has appended (0 before the log module is even imported: the
    import is not free, and `--help` never needs it)."""
    log = sys.modules.get("memstore.store.log")
    return log.appended_count() if log is not None else 0


# --------------------------------------------------------------------------- the streams

def _errors(stream) -> str | None:
    return getattr(stream, "errors", None)


def _set_errors(stream, errors: str | None) -> None:
    if errors is not None and _errors(stream) != errors:
        try:
            stream.reconfigure(errors=errors)
        except (AttributeError, ValueError, OSError):
            pass


def _guard_streams() -> None:
    """Escape what a non-UTF-8 stream cannot encode; make a failed stdout write an OutputError."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        try:
            utf8 = encoding is None or codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if not utf8:
            _set_errors(stream, "backslashreplace")
    sys.stdout = _Closed() if sys.stdout is None else _Guarded(sys.stdout)
    if sys.stderr is None:  # nowhere to say anything: stay quiet rather than crash
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (process lifetime)


def _discard_stdout() -> None:
    """Point a failed stdout at /dev/null, so that the interpreter's flush at exit (of what is
    still buffered) neither fails nor prints a warning."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else None
        if fd is None or sys.stdout is None or sys.stdout.fileno() != fd:
            return  # an in-process caller's stream: not ours to redirect
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def _failed(exc: Exception) -> Exception:
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        return ReaderGone()
    if isinstance(exc, OSError) and exc.errno is not None:
        return OutputError(exc.errno, exc.strerror)
    return OutputError(errno.EIO, str(exc))  # a closed file object, an unencodable text


class _Guarded:
    """Stands in for sys.stdout (and its .buffer): everything passes through; a write or
    flush that fails raises OutputError, which _main tells from the store's own errors."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, data):
        try:
            return self._stream.write(data)
        except (OSError, ValueError) as exc:
            raise _failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise _failed(exc) from None

    @property
    def buffer(self):
        return _Guarded(self._stream.buffer)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Closed:
    """sys.stdout when descriptor 1 was closed (``>&-``): Python leaves it None."""

    encoding = "utf-8"
    errors = "strict"

    @property
    def buffer(self):
        return self

    def write(self, data):
        raise OutputError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass  # nothing was written

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def entry() -> None:
    rc = main()
    # The process ends here without freeing its objects one by one, as interpreter exit would:
    # after a night on a large store the caches and columns it leaves (the embedding and
    # key caches' indexes, a run's frames) were slow to free, for nothing. What exit
    # would still do is done first: the standard streams flushed (main flushed its output and
    # answered for a failure), the atexit handlers run (worker pools, read-only shadows). The
    # store's files are written through descriptors, synced and closed before main returns.
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # (None: the descriptor was closed when the process started)
                stream.flush()
        except (OSError, ValueError):  # (a reader that left, a closed stream: main has answered)
            pass
    import atexit

    atexit._run_exitfuncs()
    os._exit(rc)


if __name__ == "__main__":
    entry()
