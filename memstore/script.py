"""Replay scripts: dated memstore commands, one per line (see memstore-replay(1)).

    # comment
    2026-01-05T09:12:00Z remember --actor alice --subject billing-db "We decided ..."
    2026-01-06T03:00:00Z consolidate

Each line (ended by a newline; any other character, U+2028 included, is part of it) is a
time (its --now) and a shell-quoted command. Parsing is pure and
checks every line before anything runs, so a typo on line 4,000 fails at once.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass

from .errors import UsageError
from .timeutil import format_ts, parse_instant

# Command paths whose output is a checkpoint: compared with the goldens on replay. Plain
# `conflicts` lists like `conflicts list`; `conflicts resolve` is a write.
READ_COMMANDS = frozenset({
    ("recall",), ("judge",), ("conflicts",), ("conflicts", "list"), ("stats",), ("show",), ("export",),
    ("log",), ("eval",), ("brief",), ("preamble",),
})


@dataclass(frozen=True)
class Step:
    line: int
    now: str
    args: tuple[str, ...]
    path: tuple[str, ...] = ()  # the command path the args name: ("recall",), ("conflicts", "resolve")

    @property
    def command(self) -> str:
        return self.args[0]

    @property
    def checkpoint(self) -> bool:
        return (self.path or self.args[:1]) in READ_COMMANDS


def command_path(args: tuple[str, ...], known: Collection[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest command path in ``known`` that args start with: ("conflicts", "list")."""
    path = args[:1]
    while len(path) < len(args) and args[: len(path) + 1] in known:
        path = args[: len(path) + 1]
    return path


def parse_script(text: str, name: str, known: Collection[str] | Collection[tuple[str, ...]]) -> list[Step]:
    """Steps of a script. ``known``: the command names, or the command paths (with
    sub-commands, e.g. ("conflicts", "resolve")) that a line may run."""
    paths = {(k,) if isinstance(k, str) else tuple(k) for k in known}
    steps: list[Step] = []
    last = None
    # Lines end at \n (and \r\n) only: str.splitlines() would also end one at U+2028, U+0085
    # or \x1c inside a quoted memory text, leaving "No closing quotation".
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r").strip(" \t")
        if not line or line.startswith("#"):
            continue
        where = f"{name}:{n}: "
        head, _, rest = line.partition(" ")
        now = format_ts(parse_instant(head, f"{where}time"))
        try:
            args = tuple(shlex.split(rest))
        except ValueError as exc:
            raise UsageError(f"{where}cannot split the command ({exc}); check its quotes") from None
        if not args:
            raise UsageError(f"{where}a time with no command after it")
        if args[:1] not in paths or args[0] == "replay":
            raise UsageError(f"{where}unknown command {args[0]!r}")
        if any(a in ("--now", "--store") or a.startswith(("--now=", "--store=")) for a in args):
            raise UsageError(f"{where}do not pass --now or --store in a script: the line's time is its --now")
        if last is not None and now < last:
            raise UsageError(f"{where}time {now} is earlier than the line before ({last}); "
                             "scripts must move forward in time")
        last = now
        steps.append(Step(n, now, args, command_path(args, paths)))
    if not steps:
        raise UsageError(f"{name} holds no commands")
    return steps
