"""How the lifecycle's events change records: the fold handlers of consolidate,
distill, conflicts and forget (registered with ``memstore.state.register``).

Every handler only changes fields; nothing is ever removed from the state, so
the history of a record stays readable (memstore(7), "forgetting never deletes").
Handlers tolerate ids they do not know: a log may be replayed against a state
that lacks a record (e.g. a hand-edited export) and must not crash the fold.
"""

from __future__ import annotations

from dataclasses import replace

from .model import Salience, memory_from_dict
from .state import APPLY, State, recurrence_after, register


def _set(s: State, mid: str, **changes) -> None:
    m = s.memories.get(mid)
    if m is not None:
        s.memories[mid] = replace(m, **changes)


def _drop_link(s: State, a: str, b: str) -> None:
    """Close the open conflict between a and b on both sides."""
    for x, y in ((a, b), (b, a)):
        m = s.memories.get(x)
        if m is not None and y in m.conflicts_with:
            s.memories[x] = replace(m, conflicts_with=tuple(i for i in m.conflicts_with if i != y))


def _expire(s: State, e: dict) -> None:
    m = s.memories.get(e["id"])
    if m is not None and m.status == "active":
        _set(s, m.id, status="expired")


def _promote(s: State, e: dict) -> None:
    """A short-term group becomes one long-term record; the other members point to it."""
    rep = s.memories.get(e["id"])
    if rep is None:
        return
    s.memories[rep.id] = replace(
        rep, tier="long", expires_at=None, salience=Salience(**e["salience"]),
        confidence=e["confidence"], mention_count=e["mention_count"],
    )
    for mid in e.get("members") or ():
        _set(s, mid, status="archived", merged_into=rep.id)


def _merge(s: State, e: dict) -> None:
    """A near-duplicate: the newer record is archived, the older one reinforced by it."""
    old, new = s.memories.get(e["old"]), s.memories.get(e["new"])
    if old is None or new is None:
        return
    mentions = old.mention_count + new.mention_count
    sal = old.salience.merge_max(new.salience)
    sal = replace(sal, recurrence=max(sal.recurrence, recurrence_after(mentions)))
    # Decay restarts from when the duplicate was said, not from when the job noticed it.
    seen = max(t for t in (old.last_reinforced_at, e["seen_at"]) if t)
    s.memories[old.id] = replace(old, mention_count=mentions, salience=sal, last_reinforced_at=seen,
                                 confidence=max(old.confidence, new.confidence))
    s.memories[new.id] = replace(new, status="archived", merged_into=old.id)


def _supersede(s: State, e: dict) -> None:
    """Bitemporal replacement: the old record stops holding at ``at``; history is kept [003]."""
    _drop_link(s, e["old"], e["new"])
    _set(s, e["old"], status="superseded", invalid_at=e["at"], superseded_by=e["new"],
         reason=e.get("reason"))


def _conflict(s: State, e: dict) -> None:
    old, new = e["old"], e["new"]
    for x, y in ((old, new), (new, old)):
        m = s.memories.get(x)
        if m is not None and y not in m.conflicts_with:
            s.memories[x] = replace(m, conflicts_with=(*m.conflicts_with, y))


RETIRED = "its sources no longer hold"  # reason consolidate gives abstractions it retires


def _reinstate(s: State, mid: str, other: str) -> None:
    """Undo a supersession by ``other`` (a person overrode the automatic choice), and
    bring back the abstractions that were retired only because of it."""
    m = s.memories.get(mid)
    if m is None or m.status != "superseded" or m.superseded_by != other:
        return
    s.memories[mid] = replace(m, status="active", invalid_at=None, superseded_by=None, reason=None)
    for d in list(s.memories.values()):  # rare (a person's decision): a scan is fine
        if d.status == "invalidated" and mid in d.derived_from and (d.reason or "").startswith(RETIRED):
            s.memories[d.id] = replace(d, status="active", invalid_at=None, reason=None)


def _resolve(s: State, e: dict) -> None:
    """A person's decision on a conflict: keep new | old | both | dismiss [004]."""
    old, new, keep = e["old"], e["new"], e["keep"]
    _drop_link(s, old, new)
    why = f"conflict {e['id']} resolved: keep {keep}"
    if keep in ("new", "old"):
        winner, loser = (new, old) if keep == "new" else (old, new)
        _reinstate(s, winner, loser)
        m = s.memories.get(loser)
        if m is not None and m.status in ("active", "superseded"):
            s.memories[loser] = replace(m, status="superseded", invalid_at=e["at"],
                                        superseded_by=winner, reason=why)
        return
    for x, y in ((old, new), (new, old)):  # both / dismiss: both hold; never flag this pair again
        _reinstate(s, x, y)
        m = s.memories.get(x)
        if m is not None and y not in m.reconciled_with:
            s.memories[x] = replace(m, reconciled_with=(*m.reconciled_with, y))


def _forget(s: State, e: dict) -> None:
    m = s.memories.get(e["id"])
    if m is None:
        return
    for other in m.conflicts_with:
        _drop_link(s, m.id, other)
    _set(s, m.id, status="invalidated", invalid_at=e["at"], reason=e.get("reason"))


def _derive(s: State, e: dict) -> None:
    """``distill`` and ``policy``: create a derived record, or update it when it grows.

    The sources listed in ``abstracts`` point to it, so recall prefers the abstraction.
    """
    new = memory_from_dict({**e["memory"], "seq": e["seq"]})
    old = s.memories.get(new.id)
    if old is None:
        s.memories[new.id] = new
    else:  # more support: keep identity, creation time and status; refresh content
        s.memories[new.id] = replace(
            old, text=new.text, derived_from=new.derived_from, salience=new.salience,
            confidence=new.confidence, mention_count=new.mention_count, last_reinforced_at=e["at"],
            actors=new.actors,
        )
    for mid in e.get("abstracts") or ():
        _set(s, mid, abstracted_by=new.id)


def _import(s: State, e: dict) -> None:
    """A record restored from a state export, exactly as it was (its seq included)."""
    m = memory_from_dict(e["memory"])
    if m.id not in s.memories:
        s.memories[m.id] = m
        if m.key is not None:
            s.keys.setdefault(m.key, m.id)


for _op, _handler in {
    "expire": _expire, "promote": _promote, "merge": _merge, "supersede": _supersede,
    "conflict": _conflict, "resolve": _resolve, "forget": _forget,
    "distill": _derive, "policy": _derive, "import": _import,
}.items():
    register(_op, _handler)


def apply(s: State, events: list[dict]) -> None:
    """Fold a stage's own events into its working copy, in place, so later decisions in
    the same run see earlier ones. Stand-in seqs continue the copy's; the log assigns
    the real ones, in the same order, so the real fold gives the same records."""
    for e in events:
        s.seq += 1
        APPLY[e["op"]](s, {**e, "seq": s.seq})
