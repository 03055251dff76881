"""The fold: what each event means for the records. ``fold(events, state) -> state``.

This module is the one home of the log's meaning: the handler of every op (writes,
usage, and the lifecycle's consolidate, distill, conflict and forget events) is in
``HANDLERS``, and ``apply_event`` is the single step that snapshots, indexes, replays,
the lifecycle's working copies and ``verify`` all use, so they agree on what a log says.

Handlers only change fields; nothing is ever removed from the state, so a record's
history stays readable (memstore(7), "forgetting never deletes"). They tolerate ids
they do not know: a log may be replayed against a state that lacks a record (e.g. a
hand-edited export) and must not crash the fold. Unknown ops are skipped (a newer
memstore may write ops an older one does not know); ``verify`` reports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from .model import Salience, evolve, memory_from_dict
from .state import State, recurrence_after


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
    s.memories[m.id] = evolve(
        m,
        mention_count=mentions,
        last_reinforced_at=e["at"],
        salience=sal,
        confidence=_raised(m.confidence, e.get("confidence", 0.0), e.get("step")),
    )
    if e.get("key") is not None:
        s.keys.setdefault(e["key"], m.id)


def _raised(old: float, said: float, step: float | None) -> float:
    """Confidence after a re-mention: never below either side (memstore(7), SALIENCE), and
    ``step`` of the remaining doubt more when the event carries one (its size comes from
    the source's veracity). Events written before "step" existed fold as they always did."""
    value = max(old, said)
    if step:
        value = max(value, round(old + step * (1.0 - old), 4))
    return value


def _recall(s: State, e: dict) -> None:
    for mid in e["ids"]:
        m = s.memories.get(mid)
        if m is not None:
            s.memories[mid] = evolve(m, recall_count=m.recall_count + 1, last_recalled_at=e["at"])


# --- lifecycle ops ------------------------------------------------------------

def _set(s: State, mid: str, **changes) -> None:
    m = s.memories.get(mid)
    if m is not None:
        s.memories[mid] = evolve(m, **changes)


def _drop_link(s: State, a: str, b: str) -> None:
    """Close the open conflict between a and b on both sides."""
    for x, y in ((a, b), (b, a)):
        m = s.memories.get(x)
        if m is not None and y in m.conflicts_with:
            s.memories[x] = evolve(m, conflicts_with=tuple(i for i in m.conflicts_with if i != y))


def _expire(s: State, e: dict) -> None:
    m = s.memories.get(e["id"])
    if m is not None and m.status == "active":
        _set(s, m.id, status="expired")


def _promote(s: State, e: dict) -> None:
    """A short-term group becomes one long-term record; the other members point to it."""
    rep = s.memories.get(e["id"])
    if rep is None:
        return
    s.memories[rep.id] = evolve(
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
    s.memories[old.id] = evolve(old, mention_count=mentions, salience=sal, last_reinforced_at=seen,
                                confidence=_raised(old.confidence, new.confidence, e.get("step")))
    s.memories[new.id] = evolve(new, status="archived", merged_into=old.id)


def _supersede(s: State, e: dict) -> None:
    """Bitemporal replacement: the old record stops holding at ``at``; history is kept (memstore(7), FORGETTING)."""
    _drop_link(s, e["old"], e["new"])
    m = s.memories.get(e["old"])
    if m is not None:
        s.memories[m.id] = evolve(m, status="superseded", invalid_at=_ended(m, e["at"]), superseded_by=e["new"],
                                  reason=e.get("reason"))


def _ended(m, at: str) -> str:
    """When a record stops holding: ``at``, unless it stopped holding earlier and still
    does not (a superseded record forgotten later was not believed in between)."""
    return m.invalid_at if m.invalid_at is not None and m.invalid_at < at else at


def _held_again(m, at: str, **changes):
    """``m`` holding again from ``at``: the spell in which it did not hold is kept in
    ``invalid_periods`` (recall --as-of reads it), not lost with ``invalid_at``."""
    periods = m.invalid_periods
    if m.invalid_at is not None and m.invalid_at < at:
        periods = (*periods, f"{m.invalid_at}/{at}")
    return evolve(m, invalid_at=None, invalid_periods=periods, **changes)


def _conflict(s: State, e: dict) -> None:
    old, new = e["old"], e["new"]
    for x, y in ((old, new), (new, old)):
        m = s.memories.get(x)
        if m is not None and y not in m.conflicts_with:
            s.memories[x] = evolve(m, conflicts_with=(*m.conflicts_with, y))


RETIRED = "its sources no longer hold"  # the reason text of a retirement (for people)


def _reinstate(s: State, mid: str, other: str, at: str) -> None:
    """Undo a supersession by ``other`` (a person overrode the automatic choice), and
    bring back the abstractions that were retired only because of it."""
    m = s.memories.get(mid)
    if m is None or m.status != "superseded" or m.superseded_by != other:
        return
    s.memories[mid] = _held_again(m, at, status="active", superseded_by=None, reason=None)
    # rare (a person's decision): a scan is fine. A state opened partially from a snapshot
    # has every retired abstraction built (store.snapshot.by_id, state.Lazy): only those are scanned
    built = getattr(s.memories, "built", None)
    for d in list(built() if built is not None else s.memories.values()):
        if d.status == "invalidated" and d.retired and mid in d.derived_from:
            s.memories[d.id] = _held_again(d, at, status="active", reason=None, retired=False)


def _resolve(s: State, e: dict) -> None:
    """A person's decision on a conflict: keep new | old | both | dismiss (memstore(7), CONFLICTS)."""
    old, new, keep = e["old"], e["new"], e["keep"]
    _drop_link(s, old, new)
    why = f"conflict {e['id']} resolved: keep {keep}"
    if keep in ("new", "old"):
        winner, loser = (new, old) if keep == "new" else (old, new)
        _reinstate(s, winner, loser, e["at"])
        if "confidence" in e:  # a person's word makes the kept belief certain
            _set(s, winner, confidence=e["confidence"])
        m = s.memories.get(loser)
        if m is not None and m.status in ("active", "expired", "superseded"):  # stale, not just short-lived
            s.memories[loser] = evolve(m, status="superseded", invalid_at=_ended(m, e["at"]),
                                       superseded_by=winner, reason=why)
        return
    for x, y in ((old, new), (new, old)):  # both / dismiss: both hold; never flag this pair again
        _reinstate(s, x, y, e["at"])
        m = s.memories.get(x)
        if m is not None and y not in m.reconciled_with:
            s.memories[x] = evolve(m, reconciled_with=(*m.reconciled_with, y))


def _forget(s: State, e: dict) -> None:
    m = s.memories.get(e["id"])
    if m is None:
        return
    for other in m.conflicts_with:
        _drop_link(s, m.id, other)
    _set(s, m.id, status="invalidated", invalid_at=_ended(m, e["at"]), reason=e.get("reason"), retired=_retired(e))


def _retired(e: dict) -> bool:
    """Whether a forget is consolidation's retirement of an abstraction. Events say so in
    "retired"; logs written before that field existed said it only in the reason, and are
    read as they were written (memstore(5), forget)."""
    if "retired" in e:
        return e["retired"] is True
    return (e.get("reason") or "").startswith(RETIRED)


def _derive(s: State, e: dict) -> None:
    """``distill`` and ``policy``: create a derived record, or update it when it grows.

    The sources listed in ``abstracts`` point to it, so recall prefers the abstraction.
    """
    new = memory_from_dict({**e["memory"], "seq": e["seq"]})
    old = s.memories.get(new.id)
    if old is None:
        s.memories[new.id] = new
    else:  # more support: keep identity, creation time and status; refresh content
        s.memories[new.id] = evolve(
            old, text=new.text, derived_from=new.derived_from, salience=new.salience,
            confidence=new.confidence, mention_count=new.mention_count, last_reinforced_at=e["at"],
            actors=new.actors, against=new.against,
        )
    for mid in e.get("abstracts") or ():
        _set(s, mid, abstracted_by=new.id)


def _reinstate_event(s: State, e: dict) -> None:
    """A superseded policy stands again: the balance of evidence came back to it (memstore(7),
    POLICIES). Only a superseded record comes back; a forgotten one stays forgotten."""
    m = s.memories.get(e["id"])
    if m is not None and m.status == "superseded":
        s.memories[m.id] = _held_again(m, e["at"], status="active", superseded_by=None, reason=e.get("reason"))


def _import(s: State, e: dict) -> None:
    """A record restored from a state export, as it was, at this log's position: its seq is
    the import event's (as for every record), never the source store's, which may repeat a
    seq this store has already used (the indexes find records by seq)."""
    m = memory_from_dict({**e["memory"], "seq": e["seq"]})
    if m.id not in s.memories:
        s.memories[m.id] = m
        if m.key is not None:
            s.keys.setdefault(m.key, m.id)


def _notes(s: State, e: dict) -> None:
    """An agent's working memory, replaced whole (set, append and clear all write the result)."""
    if e["text"]:
        s.notes[e["agent"]] = {"text": e["text"], "at": e["at"]}
    else:
        s.notes.pop(e["agent"], None)


apply_notes = _notes  # (store.open.load_notes: the notes alone, without the records)


def _mark(s: State, e: dict) -> None:
    """A lifecycle stage's watermark: every record created at or before ``through`` was
    examined by that stage's run (memstore(7), CONSOLIDATION)."""
    s.marks[e["stage"]] = min(e["through"], e["seq"] - 1)  # a mark cannot vouch for what follows it


HANDLERS: dict[str, Callable[[State, dict], None]] = {
    "remember": _remember, "reinforce": _reinforce, "recall": _recall,
    "expire": _expire, "promote": _promote, "merge": _merge, "supersede": _supersede,
    "conflict": _conflict, "resolve": _resolve, "forget": _forget,
    "distill": _derive, "policy": _derive, "import": _import, "reinstate": _reinstate_event,
    "notes": _notes, "mark": _mark,
}


def known_op(op) -> bool:
    return op in HANDLERS


def apply_event(s: State, e: dict) -> None:
    """Fold one event into ``s`` in place. An event at or below ``s.seq`` was folded
    already (a snapshot overlaps the tail) and is skipped; an unknown op only moves the
    position. A malformed payload raises (KeyError, TypeError, ...): ``verify`` reports it."""
    seq = e["seq"]
    if seq <= s.seq:
        return
    handler = HANDLERS.get(e["op"])
    try:
        if handler is not None:
            handler(s, e)
    finally:
        s.seq = seq
        s.at = e["at"] if s.at is None or e["at"] > s.at else s.at


def fold(events: Iterable[dict], state: State | None = None) -> State:
    """A new state: ``state`` (not changed) with ``events`` applied in order."""
    s = state.copy() if state is not None else State()
    for e in events:
        apply_event(s, e)
    return s


def apply_stage(s: State, events: list[dict]) -> None:
    """Fold a lifecycle stage's own events into its working copy, in place, so later
    decisions in the same run see earlier ones. Stand-in seqs continue the copy's; the
    log assigns the real ones, in the same order, so the real fold gives the same records."""
    for e in events:
        apply_event(s, {**e, "seq": s.seq + 1, "at": e.get("at") or s.at})
