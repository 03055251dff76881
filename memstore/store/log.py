"""The append-only event log: ``log/YYYY-MM.jsonl``, one canonical JSON event per line.

Appends take the store lock, write whole lines with one write(), then fsync.
Readers never lock; they ignore (and report) a torn final line. A torn tail left
by a crashed writer is moved to ``log/quarantine/`` by the next writer before it
appends, so the tail is never glued to a new line. Complete lines are never edited.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..codec import JSONDecodeError, dumps_line, loads
from ..errors import NonMonotonicTime, StoreBusy, StoreError
from ..schema import event_problem
from .fs import FILE_MODE, ensure_dir, exclusive_lock, fsync_dir, os_error, write_all
from .layout import LOG_NAME, Layout

_CHUNK = 1 << 16
_APPENDED = [0]  # events this process appended (the CLI says so when its output then fails)


def appended_count() -> int:
    """How many events this process has appended to any store so far."""
    return _APPENDED[0]


def log_files(layout: Layout) -> list[Path]:
    """The partitions, oldest first: regular files named YYYY-MM.jsonl (a FIFO or a directory
    of that name is not read, so it cannot hang or crash a reader; verify reports it)."""
    try:
        names = sorted(n for n in os.listdir(layout.log_dir) if LOG_NAME.match(n))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in (layout.log_dir / n for n in names) if p.is_file()]


@dataclass(frozen=True)
class Head:
    """The newest well-formed event: its seq and record time. ``torn``: a fragment after the
    final newline (file, offset, length). ``damaged``: why a writer cannot continue the log
    (its last complete line is not a well-formed event, or its seq does not follow the line
    before it); readers skip such a line, writers refuse to append after it."""

    seq: int = 0
    at: str | None = None
    torn: tuple[Path, int, int] | None = None
    damaged: str | None = None


def _tail(path: Path, count: int) -> tuple[list[bytes], int, int]:
    """(up to ``count`` last complete lines, offset of a torn fragment, its length)."""
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        pos, buf = size, b""
        while pos > 0 and buf.count(b"\n") <= count:
            step = min(_CHUNK, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + buf
    end = buf.rfind(b"\n")
    if end < 0:
        return [], 0, size  # no complete line at all: everything is a fragment
    frag_len = len(buf) - end - 1
    lines = buf[:end].split(b"\n")
    if pos > 0:
        lines = lines[1:]  # the first piece may be the end of a longer line
    return lines[-count:], pos + end + 1, frag_len


def _last_complete_line(path: Path) -> tuple[bytes | None, int, int]:
    """(last complete line, offset where a torn fragment starts, fragment length)."""
    lines, frag_at, frag_len = _tail(path, 1)
    return (lines[-1] if lines else None), frag_at, frag_len


def read_head(layout: Layout) -> Head:
    torn = None
    files = log_files(layout)
    for index in range(len(files) - 1, -1, -1):
        path = files[index]
        lines, frag_at, frag_len = _tail(path, 3)
        if frag_len and torn is None:
            torn = (path, frag_at, frag_len)
        if not lines:
            continue
        event, damaged = well_formed(lines[-1]), None
        if event is None:
            damaged = _damage(path, frag_at, "is not a well-formed event")
            event = _last_event(path)  # readers skip a damaged line: so does the head
            if event is None:
                continue
        else:
            # the rule of in_order: the last line must follow the line before it, unless that
            # one is an edited jump (the line before it again is below the last line)
            valid = [well_formed(line) for line in lines[:-1]]
            before = valid[-1] if valid else _previous(files[:index])
            if before is None:
                before = _last_event(path, skip=1)
            if before is not None and before["seq"] >= event["seq"]:
                earlier = valid[-2] if len(valid) == 2 else None
                jump = earlier is not None and earlier["seq"] < event["seq"] and before["seq"] > earlier["seq"] + 1
                if not jump:
                    damaged = _damage(path, frag_at, f"has seq {event['seq']}, which does not follow "
                                                     f"seq {before['seq']} before it")
                    event = before
        return Head(event["seq"], event["at"], torn, damaged)
    return Head(0, None, torn)


def _previous(files: list[Path]) -> dict | None:
    """The last well-formed event of the partitions before the newest one."""
    for path in reversed(files):
        lines, _at, _len = _tail(path, 1)
        if lines:
            return well_formed(lines[-1]) or _last_event(path)
    return None


def _damage(path: Path, end: int, what: str) -> str:
    with open(path, "rb") as fh:
        line = fh.read(end).count(b"\n")
    return f"the last line of the log ({path.parent.name}/{path.name}:{line}) {what}"


def well_formed(line: bytes) -> dict | None:
    """The event a log line holds, or None when readers would skip it (``schema``)."""
    try:
        event = loads(line)
    except JSONDecodeError:
        return None
    return event if event_problem(event) is None else None


def line_seq(line: bytes) -> int | None:
    """The seq a log line claims, without checking the rest of the event (None: not JSON, or
    no integer seq): cheap enough for probing a log by position (anchors, ``lookup.lines_at``)."""
    try:
        event = loads(line)
    except JSONDecodeError:
        return None
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if type(seq) is int else None


def _last_event(path: Path, skip: int = 0) -> dict | None:
    """The last well-formed event of a file, not counting its last ``skip`` complete lines
    (for a damaged tail: slow, rare)."""
    lines = path.read_bytes().split(b"\n")[:-1]
    for line in reversed(lines[:len(lines) - skip]):
        event = well_formed(line)
        if event is not None:
            return event
    return None


def quarantine(layout: Layout, torn: tuple[Path, int, int]) -> Path:
    """Move a torn fragment (never a complete line) to log/quarantine/; return where it went.
    Caller holds the store lock. An earlier fragment from the same offset is kept, not replaced."""
    path, offset, length = torn
    ensure_dir(layout.quarantine_dir)
    with open(path, "rb") as fh:
        fh.seek(offset)
        fragment = fh.read(length)
    target = layout.quarantine_dir / f"{path.stem}.{offset}.torn"
    n = 1
    while target.exists():
        target = layout.quarantine_dir / f"{path.stem}.{offset}.{n}.torn"
        n += 1
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        write_all(fd, fragment)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(layout.quarantine_dir)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, offset)
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


def append(layout: Layout, events: list[dict], now: str, *, allow_past: bool = False,
           lock_wait: float | None = None) -> list[int]:
    """Append events (without seq) stamped at ``now``; return their seqs. All or nothing.

    The storage primitive under ``transaction.commit``, which every writer uses: a
    caller that decided what to append from an earlier read must go through commit.

    ``lock_wait``: give up with StoreBusy after about that many seconds instead of waiting
    for the writer holding the lock (for best-effort records such as recall usage)."""
    if not events:
        return []
    layout.create()
    with exclusive_lock(layout.lock_path, wait=lock_wait) as held:
        if not held:
            raise StoreBusy(f"the store {layout.root} is busy (another writer holds its lock)")
        head = read_head(layout)
        if head.damaged:
            raise StoreError(f"{head.damaged}; nothing was written. `memstore verify` names it, and "
                             "`memstore verify --repair` moves it to log/quarantine/ (the bytes are kept)")
        if head.at is not None and now < head.at and not allow_past:
            raise NonMonotonicTime(
                f"--now {now} is earlier than the store's latest record time {head.at}; "
                "replay must move forward in time (pass --allow-past to record it anyway)"
            )
        try:
            if head.torn:
                quarantine(layout, head.torn)
            files = log_files(layout)
            month = now[:7]
            if files and files[-1].stem > month:
                month = files[-1].stem  # never append to an older partition than the newest
            target = layout.log_dir / f"{month}.jsonl"
            if target.exists() and not target.is_file():
                raise StoreError(f"{target} is not a regular file; move it away (memstore appends "
                                 "to that partition next)")
        except OSError as exc:
            raise os_error(exc, layout.log_dir, "prepare the log in") from None
        seqs = list(range(head.seq + 1, head.seq + 1 + len(events)))
        data = bytearray()  # one growing buffer: 3x faster than joining many small bytes
        for e, s in zip(events, seqs, strict=True):
            data += dumps_line({**e, "seq": s})
        _write_all(target, data)
        _APPENDED[0] += len(seqs)
        return seqs


def _write_all(target: Path, data: bytes | bytearray) -> None:
    new = not target.exists()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    except OSError as exc:
        raise os_error(exc, target, "open the log") from None
    start = os.fstat(fd).st_size
    try:
        view = memoryview(data)  # written here, not by fs.write_all: the crash tests cut this write
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        try:  # leave no partial line behind: nothing was acknowledged
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise os_error(exc, target, "append to") from None
    finally:
        os.close(fd)
    if new:
        fsync_dir(target.parent)


@dataclass
class LogProblem:
    path: Path
    line: int
    message: str


_SKIPPED: dict[tuple[str, int], LogProblem] = {}  # damaged lines readers skipped, not yet reported


def skipped_lines() -> list[LogProblem]:
    """The damaged log lines readers in this process skipped since the last call (each once),
    so that a command can say it answered without them."""
    found = sorted(_SKIPPED.values(), key=lambda p: (str(p.path), p.line))
    _SKIPPED.clear()
    return found


@dataclass
class LogReader:
    """Iterate events in log order; collect problems instead of failing."""

    layout: Layout
    problems: list[LogProblem] = field(default_factory=list)

    def _skip(self, path: Path, line: int, message: str) -> None:
        problem = LogProblem(path, line, message)
        self.problems.append(problem)
        _SKIPPED[(str(path), line)] = problem

    def events(self, after_seq: int = 0, start: tuple[str, int] | None = None) -> Iterator[dict]:
        """Events after ``after_seq``; ``start`` (file name, byte offset): read from there, never
        the bytes before it (a catch-up or a snapshot's tail costs what was appended)."""
        for event, (path, n, offset), problem in in_order(self._lines(start), after_seq):
            if event is None:
                self._skip(path, n + _lines_before(path, offset), problem)
            else:
                yield event

    def _lines(self, start: tuple[str, int] | None) -> Iterator[tuple[dict | None, tuple, str | None]]:
        """(event or None, (path, line number after offset, offset), why it is skipped) for every
        complete line; a line's number in its file is counted only for a problem's report.
        Files are read in blocks: a reader holds one block, never a whole partition."""
        files = log_files(self.layout)
        if start is not None:
            files = [p for p in files if p.name >= start[0]]
        for index, path in enumerate(files):
            offset = start[1] if start is not None and path.name == start[0] else 0
            n, tail = 0, b""
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    while block := f.read(_BLOCK):
                        lines = (tail + block).split(b"\n")
                        tail = lines.pop()  # after the last newline: the start of the next line
                        yield from ((event, (path, m, offset), problem) for m, event, problem in parsed(lines, n + 1))
                        n += len(lines)
            except OSError as exc:
                yield None, (path, n, offset), f"cannot be read ({exc.strerror})"
                continue
            if tail and index == len(files) - 1:  # never acknowledged: the next writer quarantines it
                self.problems.append(LogProblem(path, n + 1 + _lines_before(path, offset),
                                                "torn final line (ignored)"))
            elif tail:
                yield None, (path, n + 1, offset), "incomplete line before a later file"


_BLOCK = 8 << 20


def _lines_before(path: Path, offset: int) -> int:
    """How many lines end before byte ``offset`` of ``path`` (read in blocks, only to number
    a damaged line for its report)."""
    if not offset:
        return 0
    count = 0
    try:
        with open(path, "rb") as f:
            while offset > 0 and (block := f.read(min(offset, 1 << 20))):
                count += block.count(b"\n")
                offset -= len(block)
    except OSError:
        return 0
    return count


def parsed(lines: list[bytes], first: int = 1) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, event or None, why it is not one) for complete lines."""
    for n, line in enumerate(lines, start=first):
        try:
            event = loads(line)
        except JSONDecodeError:
            yield n, None, "empty line" if not line.strip() else "line is not valid JSON"
            continue
        problem = event_problem(event)
        if problem is None:
            yield n, event, None
        else:
            seq = event.get("seq") if isinstance(event, dict) else None
            yield n, None, f"seq {seq}: {problem}" if type(seq) is int and seq > 0 else problem


def in_order(items: Iterable[tuple], after_seq: int = 0) -> Iterator[tuple]:
    """(event, where, problem) in log order -> the same, with each event whose seq does not
    fit the order turned into a problem (event None). Seqs rise by one. A gap is tolerated
    (a lost line), but a seq that jumps ahead and is then followed by a smaller one is an
    edited line, not every line after it: a jump is held until the next event shows which
    of the two fits. Seqs at or below ``after_seq`` were read already: dropped, not damage."""
    last, held = after_seq, None
    for event, where, problem in items:
        if event is None:
            yield None, where, problem
            continue
        seq = event["seq"]
        if held is not None:
            jump, jump_where = held
            held = None
            if last < seq <= jump["seq"]:
                yield None, jump_where, (f"seq {jump['seq']} does not fit between seq {last} and seq {seq} "
                                         "(an edited seq)")
            else:
                last = jump["seq"]
                yield jump, jump_where, None
        if seq <= last:
            if seq > after_seq:
                yield None, where, f"seq {seq} does not follow seq {last} (a duplicate or out of order)"
            continue
        if seq > last + 1:
            held = (event, where)
            continue
        last = seq
        yield event, where, None
    if held is not None:
        yield held[0], held[1], None


def position_after(layout: Layout) -> tuple[str, int] | None:
    """(newest file name, byte size up to its last complete line): where a tail read resumes."""
    files = log_files(layout)
    if not files:
        return None
    path = files[-1]
    _line, frag_at, frag_len = _last_complete_line(path)
    size = path.stat().st_size
    return path.name, (frag_at if frag_len else size)
