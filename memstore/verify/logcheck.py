"""verify's log check: every line, the seq order, and the fold of each event."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace

from ..codec import JSONDecodeError, loads
from ..fold import apply_event, known_op
from ..schema import event_problem
from ..state import State, state_rows
from ..store.fs import temp_writer
from ..store.layout import LOG_NAME, Layout
from ..store.log import log_files
from ..store.snapshot import rows_checksum
from .report import Finding, Report


@dataclass
class Fold:
    """The log folded line by line, with the state captured at chosen seqs."""

    targets: list[int]
    state: State = field(default_factory=State)
    captured: dict[int, tuple[str, dict, int]] = field(default_factory=dict)  # seq -> (checksum, keys, n)

    def before(self, seq: int) -> None:
        while self.targets and self.targets[0] < seq:
            self._capture(self.targets.pop(0))

    def finish(self) -> None:
        while self.targets:
            self._capture(self.targets.pop(0))

    def _capture(self, seq: int) -> None:
        s = self.state
        self.captured[seq] = (rows_checksum(state_rows(s)), dict(sorted(s.keys.items())), len(s.memories))


def _apply(fold: Fold, event: dict) -> str | None:
    seq = event["seq"]
    try:
        apply_event(fold.state, event)
    except Exception as exc:  # a shape the grammar let through: every reader would fail on it
        return f"seq {seq}: {event['op']} event cannot be applied ({type(exc).__name__}: {exc})"
    if not known_op(event["op"]):
        return f"seq {seq}: unknown op {event['op']!r} (skipped by this memstore; a newer version wrote it?)"
    return None


def _line_problem(line: bytes, prev: int) -> tuple[dict | None, str | None]:
    """(the event readers fold from this line or None, why it is skipped)."""
    try:
        event = loads(line)
    except JSONDecodeError:
        return None, "empty line" if not line.strip() else "line is not valid JSON"
    problem = event_problem(event)
    if problem is not None:
        seq = event.get("seq") if isinstance(event, dict) else None
        return None, f"seq {seq}: {problem}" if type(seq) is int and seq > 0 else problem
    if event["seq"] <= prev:
        return None, f"seq {event['seq']} does not follow seq {prev} (a duplicate or out of order)"
    return event, None


def check_log(layout: Layout, fold: Fold, report: Report, now: str | None = None) -> None:
    """Every line of every partition. A line readers skip is a finding; so is a run of such
    lines at the very end of the log, which writers refuse to continue after (--repair moves
    that run to log/quarantine/, keeping the bytes)."""
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
    prev = 0
    future: list[tuple] = []  # events recorded after --now: one finding names the first
    for index, path in enumerate(files):
        newest = index == len(files) - 1
        try:
            data = path.read_bytes()
        except OSError as exc:
            found.append(Finding(path, 0, f"cannot read: {exc.strerror}", "log"))
            continue
        lines = data.split(b"\n")
        tail = lines.pop()
        offset, bad_from = 0, None  # bad_from: (line, offset) where the trailing skipped run starts
        skipped: list[int] = []  # where this file's skipped lines are in found (worded at the end)
        for n, line in enumerate(lines, start=1):
            at_offset, offset = offset, offset + len(line) + 1
            event, problem = _line_problem(line, prev)
            if event is None:
                skipped.append(len(found))
                found.append(Finding(path, n, f"{problem} (skipped by readers", "log"))
                bad_from = bad_from or (n, at_offset)
                continue
            bad_from = None
            seq = event["seq"]
            if seq != prev + 1:
                missing = f"{prev + 1}" if seq == prev + 2 else f"{prev + 1}..{seq - 1}"
                found.append(Finding(path, n, f"seq {seq} follows {prev}: event(s) {missing} are missing",
                                     "log"))
            edited = event_problem(event, ids=True)
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
        at_end = bad_from[0] if newest and bad_from is not None else len(lines) + 1
        for i in skipped:
            f = found[i]
            found[i] = replace(f, message=f.message + (")" if f.line >= at_end else
                                                       "; --repair never edits a complete line)"))
        if newest and bad_from is not None:
            first, start = bad_from
            rest = data[start:]
            span = f"line {first}" if first == len(lines) else f"lines {first}..{len(lines)}"
            found.append(Finding(path, first, f"the log ends with damage ({span}, {len(rest)} bytes): "
                                 "writers refuse to append after it; --repair moves it to "
                                 "log/quarantine/ (the bytes are kept)", "log", "quarantine",
                                 (start, len(rest), hashlib.sha256(rest).hexdigest())))
        elif tail:
            where = "final line" if newest else "last line, before a later partition,"
            found.append(Finding(path, len(lines) + 1, f"torn {where} ({len(tail)} bytes, never "
                                 "acknowledged); --repair moves it to log/quarantine/", "log",
                                 "quarantine", (len(data) - len(tail), len(tail))))
    if future:
        path, n, seq, at = future[0]
        latest = max(f[3] for f in future)
        found.append(Finding(path, n, f"{len(future)} event(s) recorded after --now {now}, the first "
                             f"seq {seq} at {at}, the latest at {latest} (a clock set wrong, or an "
                             "edit): writes are refused until --now passes it", "log"))
    report.head = prev

