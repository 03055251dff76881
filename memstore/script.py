"""Replay scripts: dated memstore commands, one per line (see memstore-replay(1)).

    # comment
    2026-01-05T09:12:00Z remember --actor alice --subject billing-db "We decided ..."
    2026-01-06T03:00:00Z consolidate

Each line is a time (its --now) and a shell-quoted command. Parsing is pure and
checks every line before anything runs, so a typo on line 4,000 fails at once.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from .errors import UsageError
from .timeutil import format_ts, parse_instant

# Commands whose output is a checkpoint: compared with the goldens on replay.
READ_COMMANDS = frozenset({"recall", "judge", "conflicts", "stats", "show", "export", "log", "eval", "brief"})
WRITE_ONLY = frozenset({"remember", "consolidate", "distill", "index", "reindex", "forget", "snapshot", "init"})


@dataclass(frozen=True)
class Step:
    line: int
    now: str
    args: tuple[str, ...]

    @property
    def command(self) -> str:
        return self.args[0]

    @property
    def checkpoint(self) -> bool:
        if self.command == "conflicts" and len(self.args) > 1 and self.args[1] == "resolve":
            return False
        return self.command in READ_COMMANDS


def parse_script(text: str, name: str, known: frozenset[str] | set[str]) -> list[Step]:
    steps: list[Step] = []
    last = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
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
        if args[0] not in known or args[0] == "replay":
            raise UsageError(f"{where}unknown command {args[0]!r}")
        if any(a in ("--now", "--store") or a.startswith(("--now=", "--store=")) for a in args):
            raise UsageError(f"{where}do not pass --now or --store in a script: the line's time is its --now")
        if last is not None and now < last:
            raise UsageError(f"{where}time {now} is earlier than the line before ({last}); "
                             "scripts must move forward in time")
        last = now
        steps.append(Step(n, now, args))
    if not steps:
        raise UsageError(f"{name} holds no commands")
    return steps
