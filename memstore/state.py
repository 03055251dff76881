"""State is a fold of the log: ``fold(events, state) -> state``.

Each op's effect on the records lives here and only here, so snapshots, indexes
and replays all agree on what the log means. Unknown ops are skipped (a newer
memstore may write ops an older one does not know); ``verify`` reports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from .codec import dumps
from .model import Memory, Salience, memory_from_dict, memory_to_dict


@dataclass
class State:
    """Records by id, caller keys to ids, and the log position folded so far.

    Treat a State as a value: ``fold`` returns a new one and never changes its input.
    """

    memories: dict[str, Memory] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    seq: int = 0
    at: str | None = None

    def copy(self) -> State:
        return State(dict(self.memories), dict(self.keys), self.seq, self.at)

    def resolve(self, ref: str) -> Memory | None:
        """A record by id or by caller key."""
        m = self.memories.get(ref)
        if m is None and ref in self.keys:
            m = self.memories.get(self.keys[ref])
        return m

    def ordered(self) -> list[Memory]:
        """Records in creation order (seq, then id): the canonical order of every listing."""
        return sorted(self.memories.values(), key=lambda m: (m.seq, m.id))


def recurrence_after(mentions: int) -> float:
    """Recurrence axis implied by a mention count: 1 -> 0, 2 -> 0.5, 3 -> 0.67, ..."""
    return round(1.0 - 1.0 / mentions, 4)


def _remember(s: State, e: dict) -> None:
    m = memory_from_dict({**e["memory"], "seq": e["seq"]})
    old = s.memories.get(m.id)
    if old is not None:  # two writers raced on the same text: the second is a reinforcement
        _reinforce(s, {"id": m.id, "at": e["at"], "key": m.key, "salience": e["memory"]["salience"],
                       "confidence": m.confidence})
        return
    s.memories[m.id] = m
    if m.key is not None:
        s.keys.setdefault(m.key, m.id)


def _reinforce(s: State, e: dict) -> None:
    m = s.memories.get(e["id"])
    if m is None:
        return
    mentions = m.mention_count + 1
    sal = m.salience.merge_max(Salience(**e["salience"])) if e.get("salience") else m.salience
    sal = replace(sal, recurrence=max(sal.recurrence, recurrence_after(mentions)))
    s.memories[m.id] = replace(
        m,
        mention_count=mentions,
        last_reinforced_at=e["at"],
        salience=sal,
        confidence=max(m.confidence, e.get("confidence", 0.0)),  # confidence only rises [004]
    )
    if e.get("key") is not None:
        s.keys.setdefault(e["key"], m.id)


def _recall(s: State, e: dict) -> None:
    for mid in e["ids"]:
        m = s.memories.get(mid)
        if m is not None:
            s.memories[mid] = replace(m, recall_count=m.recall_count + 1, last_recalled_at=e["at"])


APPLY: dict[str, Callable[[State, dict], None]] = {
    "remember": _remember,
    "reinforce": _reinforce,
    "recall": _recall,
}


def fold(events: Iterable[dict], state: State | None = None) -> State:
    s = state.copy() if state is not None else State()
    for e in events:
        seq = e["seq"]
        if seq <= s.seq:
            continue  # already folded (a snapshot overlaps the tail)
        handler = APPLY.get(e["op"])
        if handler is not None:
            handler(s, e)
        s.seq = seq
        s.at = e["at"] if s.at is None or e["at"] > s.at else s.at
    return s


def register(op: str, handler: Callable[[State, dict], None]) -> None:
    """Lifecycle modules add their ops here (consolidate, distill, conflicts)."""
    APPLY[op] = handler


def state_rows(s: State) -> list[dict]:
    return [memory_to_dict(m) for m in s.ordered()]


def digest(s: State) -> str:
    """Canonical digest of a state: sorted canonical JSON rows, never file bytes."""
    import hashlib

    h = hashlib.sha256()
    for row in sorted(state_rows(s), key=lambda r: r["id"]):
        h.update(dumps(row))
        h.update(b"\n")
    h.update(dumps(dict(sorted(s.keys.items()))))
    return h.hexdigest()


from . import lifecycle_ops  # noqa: E402,F401  registers the lifecycle ops (consolidate, distill, conflicts)
