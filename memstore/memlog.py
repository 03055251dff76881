"""An in-memory event log: the store's append + fold without files.

For in-process runs of the lifecycle (tests, benchmarks, the year scenario): the
same events the CLI would append, folded the same way, so what holds here holds
for a store on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .codec import loads
from .fold import fold
from .remember import decide_writes, validate
from .state import State


@dataclass
class MemLog:
    events: list[dict] = field(default_factory=list)
    state: State = field(default_factory=State)

    def append(self, events: list[dict], now: str) -> list[dict]:
        """Stamp seqs (and ``at``), fold, keep; returns the stamped events."""
        stamped = [{**e, "at": now, "seq": self.state.seq + i} for i, e in enumerate(events, start=1)]
        self.events += stamped
        self.state = fold(stamped, self.state)
        return stamped

    def remember(self, objs: list[dict], now: str, config) -> list[str | None]:
        """``memstore remember --jsonl`` in process: returns each request's id (None: skipped)."""
        drafts = [validate(o, max_chars=config["memory"]["max_text_chars"]) for o in objs]
        decisions = decide_writes(drafts, _Known(self.state), now, config)
        self.append([d.event for d in decisions if d.event is not None], now)
        return [d.id for d in decisions]

    def replay(self, jsonl: str, config) -> MemLog:
        """Lines of JSON, each stamped with its time ``at``: an object with an ``op`` is an
        event appended as is; any other is a remember request (the `remember --jsonl` form)."""
        for line in jsonl.strip().splitlines():
            obj = loads(line)
            at = obj.pop("at")
            if "op" in obj:
                self.append([obj], at)
            else:
                self.remember([obj], at, config)
        return self

    def run(self, stage, now: str, config, **kw) -> list[dict]:
        """Run a lifecycle stage on the current state and append what it returns."""
        return self.append(stage(self.state, now=now, config=config, **kw), now)


class _Known:
    def __init__(self, state: State):
        self.state = state

    def has_id(self, mid: str) -> bool:
        return mid in self.state.memories

    def key_id(self, key: str) -> str | None:
        return self.state.keys.get(key)
