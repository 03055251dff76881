"""verify's log check: every line, the seq order, and the fold of each event."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..codec import JSONDecodeError, loads
from ..fold import apply_event, known_op
from ..state import State, state_rows
from ..store.fs import temp_writer
from ..store.layout import LOG_NAME, Layout
from ..store.log import log_files
from ..store.snapshot import rows_checksum
from .report import Finding, Report

_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


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


def _check_event(event, path: Path, n: int) -> tuple[int | None, list[Finding]]:
    if not isinstance(event, dict):
        return None, [Finding(path, n, "line is not a JSON object (skipped by readers)", "log")]
    seq = event.get("seq")
    if type(seq) is not int or seq < 1:
        return None, [Finding(path, n, f"seq {seq!r} is not a positive integer (skipped by readers)", "log")]
    problems = []
    if not isinstance(event.get("op"), str):
        problems.append(Finding(path, n, f"seq {seq}: op {event.get('op')!r} is not a string", "log"))
    at = event.get("at")
    if not isinstance(at, str) or not _TS.match(at):
        problems.append(Finding(path, n, f"seq {seq}: at {at!r} is not a UTC time like 2026-06-07T09:30:00Z",
                                "log"))
    return seq, problems


def _apply(fold: Fold, event: dict) -> str | None:
    seq = event["seq"]
    if seq <= fold.state.seq:
        return None  # a duplicate seq: reported by the sequence check; readers skip it too
    try:
        apply_event(fold.state, event)
    except Exception as exc:  # a malformed payload: every reader would fail on it
        return f"seq {seq}: {event['op']} event cannot be applied ({type(exc).__name__}: {exc})"
    if not known_op(event["op"]):
        return f"seq {seq}: unknown op {event['op']!r} (skipped by this memstore; a newer version wrote it?)"
    return None


def check_log(layout: Layout, fold: Fold, report: Report) -> None:
    found = report.findings
    try:
        names = sorted(os.listdir(layout.log_dir))
    except FileNotFoundError:
        names = []
    for name in names:
        path = layout.log_dir / name
        if not LOG_NAME.match(name) and path.is_file() and temp_writer(name) is None:
            found.append(Finding(path, 0, "not a log partition (YYYY-MM.jsonl): memstore ignores it; "
                                 "rename or remove it (--repair cannot)", "log"))
    files = log_files(layout)
    report.log_files = len(files)
    prev = 0
    for index, path in enumerate(files):
        try:
            data = path.read_bytes()
        except OSError as exc:
            found.append(Finding(path, 0, f"cannot read: {exc.strerror}", "log"))
            continue
        lines = data.split(b"\n")
        tail = lines.pop()
        for n, line in enumerate(lines, start=1):
            try:
                event = loads(line)
            except JSONDecodeError:
                what = "empty line" if not line.strip() else "line is not valid JSON"
                found.append(Finding(path, n, f"{what} (skipped by readers; --repair never edits "
                                     "a complete line)", "log"))
                continue
            seq, problems = _check_event(event, path, n)
            found.extend(problems)
            if seq is None:
                continue
            if seq <= prev:
                found.append(Finding(path, n, f"seq {seq} does not follow {prev} "
                                     "(a duplicate or out of order)", "log"))
            elif seq != prev + 1:
                missing = f"{prev + 1}" if seq == prev + 2 else f"{prev + 1}..{seq - 1}"
                found.append(Finding(path, n, f"seq {seq} follows {prev}: event(s) {missing} are missing",
                                     "log"))
            if problems:
                prev = max(prev, seq)
                continue
            report.events += 1
            fold.before(seq)
            problem = _apply(fold, event)
            if problem:
                found.append(Finding(path, n, problem, "log"))
            prev = max(prev, seq)
        if tail:
            offset = len(data) - len(tail)
            where = "final line" if index == len(files) - 1 else "last line, before a later partition,"
            found.append(Finding(path, len(lines) + 1, f"torn {where} ({len(tail)} bytes, never "
                                 "acknowledged); --repair moves it to log/quarantine/", "log",
                                 "quarantine", (offset, len(tail))))
    report.head = prev

