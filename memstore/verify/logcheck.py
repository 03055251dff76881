"""verify's log check: every line, the seq order, and the fold of each event."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace

from ..fold import apply_event, known_op
from ..schema import id_problem
from ..state import State, state_rows
from ..store.fs import temp_writer
from ..store.layout import LOG_NAME, Layout
from ..store.log import in_order, log_files, parsed
from ..store.snapshot import rows_checksum
from .report import Finding, Report

_WINDOW = 1 << 25  # bytes of a partition read at a time


@dataclass
class Fold:
    """The log folded line by line, with the state captured at chosen seqs."""

    targets: list[int]
    state: State = field(default_factory=State)
    captured: dict[int, tuple[str, dict, int]] = field(default_factory=dict)  # seq -> (checksum, keys, n)
    marks: dict[int, dict] = field(default_factory=dict)  # seq -> the lifecycle watermarks there

    def before(self, seq: int) -> None:
        while self.targets and self.targets[0] < seq:
            self._capture(self.targets.pop(0))

    def finish(self) -> None:
        while self.targets:
            self._capture(self.targets.pop(0))

    def _capture(self, seq: int) -> None:
        s = self.state
        self.captured[seq] = (rows_checksum(state_rows(s)), dict(sorted(s.keys.items())), len(s.memories))
        self.marks[seq] = dict(s.marks)


def _apply(fold: Fold, event: dict) -> str | None:
    seq = event["seq"]
    try:
        apply_event(fold.state, event)
    except Exception as exc:  # a shape the grammar let through: every reader would fail on it
        return f"seq {seq}: {event['op']} event cannot be applied ({type(exc).__name__}: {exc})"
    if not known_op(event["op"]):
        return f"seq {seq}: unknown op {event['op']!r} (skipped by this memstore; a newer version wrote it?)"
    return None


def check_log(layout: Layout, fold: Fold, report: Report, now: str | None = None) -> None:
    """Every line of every partition, in the order and with the rules readers use
    (``store.log.parsed`` and ``in_order``). A line readers skip is a finding; so is a run
    of such lines at the very end of the log, which writers refuse to continue after
    (--repair moves that run to log/quarantine/, keeping the bytes)."""
    found = report.findings
    try:
        names = sorted(os.listdir(layout.log_dir))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for name in names:
        path = layout.log_dir / name
        if LOG_NAME.match(name) and not path.is_file():
            found.append(Finding(path, 0, "a log partition that is not a regular file: memstore does not "
                                 "read it; move it away (--repair cannot)", "log"))
        elif not LOG_NAME.match(name) and path.is_file() and temp_writer(name) is None:
            found.append(Finding(path, 0, "not a log partition (YYYY-MM.jsonl): memstore ignores it; "
                                 "rename or remove it (--repair cannot)", "log"))
    files = log_files(layout)
    report.log_files = len(files)
    first_finding = len(found)
    # file index -> (its size, the offset of each complete line, the torn fragment's length):
    # a partition is read a window at a time (a million-line log held whole, and split into
    # a million lines beside it, was most of verify's memory)
    read: dict[int, tuple[int, list[int], int]] = {}

    def lines():
        for index, path in enumerate(files):
            offsets: list[int] = []
            try:
                with open(path, "rb") as fh:
                    parts = _Lines(fh, offsets)
                    for n, event, problem in parsed(parts):
                        yield event, (index, n), problem
                    read[index] = (parts.size, offsets, parts.tail)
            except OSError as exc:
                found.append(Finding(path, 0, f"cannot read: {exc.strerror}", "log"))

    prev = 0
    skipped: list[int] = []  # indexes into found of the skipped lines (worded once the tail is known)
    future: list[tuple] = []  # events recorded after --now: one finding names the first
    for event, (index, n), problem in in_order(lines()):
        path = files[index]
        if event is None:
            skipped.append(len(found))
            found.append(Finding(path, n, f"{problem} (skipped by readers", "log"))
            continue
        seq = event["seq"]
        if seq != prev + 1:
            missing = f"{prev + 1}" if seq == prev + 2 else f"{prev + 1}..{seq - 1}"
            found.append(Finding(path, n, f"seq {seq} follows {prev}: event(s) {missing} are missing", "log"))
        edited = id_problem(event)  # (the rest of event_problem passed as the line was read)
        if edited is not None:
            found.append(Finding(path, n, f"seq {seq}: {edited}: the line was edited after it was "
                                 "written (readers still use it)", "log"))
        if now is not None and event["at"] > now:
            future.append((path, n, seq, event["at"]))
        report.events += 1
        fold.before(seq)
        problem = _apply(fold, event)
        if problem:
            found.append(Finding(path, n, problem, "log"))
        prev = seq
    tail_from = _damaged_tail(files, read, {(found[i].path, found[i].line) for i in skipped})
    for i in skipped:
        f = found[i]
        at_end = tail_from is not None and f.path == files[-1] and f.line >= tail_from
        found[i] = replace(f, message=f.message + (")" if at_end else "; --repair never edits a complete line)"))
    for index, path in enumerate(files):
        if index not in read:
            continue
        size, offsets, tail = read[index]
        newest = index == len(files) - 1
        if newest and tail_from is not None:
            start = offsets[tail_from - 1]
            rest = _bytes(path, start, size)
            count = len(offsets)
            span = f"line {tail_from}" if tail_from == count else f"lines {tail_from}..{count}"
            found.append(Finding(path, tail_from, f"the log ends with damage ({span}, {len(rest)} bytes): "
                                 "writers refuse to append after it; --repair moves it to "
                                 "log/quarantine/ (the bytes are kept)", "log", "quarantine",
                                 (start, len(rest), hashlib.sha256(rest).hexdigest())))
        elif tail:
            where = "final line" if newest else "last line, before a later partition,"
            found.append(Finding(path, len(offsets) + 1, f"torn {where} ({tail} bytes, never "
                                 "acknowledged); --repair moves it to log/quarantine/", "log",
                                 "quarantine", (size - tail, tail)))
    if future:
        path, n, seq, at = future[0]
        latest = max(f[3] for f in future)
        found.append(Finding(path, n, f"{len(future)} event(s) recorded after --now {now}, the first "
                             f"seq {seq} at {at}, the latest at {latest} (a clock set wrong, or an "
                             "edit): writes are refused until --now passes it", "log"))
    order = {path: i for i, path in enumerate(files)}  # in file and line order, whatever in_order held back
    found[first_finding:] = sorted(found[first_finding:], key=lambda f: (order.get(f.path, -1), f.line))
    report.head = prev


class _Lines:
    """The complete lines of a partition, read ``_WINDOW`` bytes at a time, each line's
    offset appended to ``offsets`` as it is given; once read, ``size``: the bytes read, and
    ``tail``: the length of the torn fragment after the last newline (0: none)."""

    def __init__(self, fh, offsets: list[int]):
        self.fh, self.offsets, self.size, self.tail = fh, offsets, 0, 0

    def __iter__(self):
        carry, base = b"", 0  # the bytes after the last newline so far, and where they start
        while chunk := self.fh.read(_WINDOW):
            data = carry + chunk
            at, end = 0, data.rfind(b"\n") + 1
            while at < end:
                stop = data.index(b"\n", at)
                self.offsets.append(base + at)
                yield data[at:stop]
                at = stop + 1
            carry, base = data[end:], base + end
        self.size, self.tail = base + len(carry), len(carry)


def _bytes(path, start: int, end: int) -> bytes:
    """The bytes ``start`` to ``end`` of a partition as verify read it (an append since only
    adds bytes after ``end``)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(end - start)


def _damaged_tail(files, read, skipped: set) -> int | None:
    """The first line of the run of skipped lines that ends the newest partition, or None."""
    if not files or len(files) - 1 not in read:
        return None
    path, count = files[-1], len(read[len(files) - 1][1])
    first = None
    for n in range(count, 0, -1):
        if (path, n) not in skipped:
            break
        first = n
    return first
