"""Every write a store accepts, as one library call each over the write transaction.

Each function here is a planning function (pure: what the log holds, the request and
``now`` in, events out) run by ``memstore.store.transaction.commit``, which locks,
plans again if another writer moved the log, and appends all or nothing. The CLI,
``memstore.api.Store`` and replay call these and nothing lower: whoever writes, the
same checks and the same races are handled once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .errors import NotFound, UsageError
from .model import memory_id
from .remember import Draft, WriteDecision, decide_writes
from .store.layout import Layout
from .store.transaction import Committed, LogView, Plan, commit

if TYPE_CHECKING:
    from .state import State


def remember(layout: Layout, drafts: list[Draft], *, now: str, config,
             allow_past: bool = False, agent: str | None = None) -> list[WriteDecision]:
    """Remember validated drafts (one, or a bulk file's, all or nothing); one decision each:
    add, reinforce (same text again), noop (same key again) or skip (a greeting)."""
    _no_policies(drafts)
    # the ids and keys the drafts would write, looked up in the log (none read whole)
    ids = sorted({memory_id(d.text, d.subject, d.domain) for d in drafts})
    keys = sorted({d.key for d in drafts if d.key})

    def plan(view: LogView) -> Plan:
        decisions = decide_writes(drafts, view.known_for(ids, keys), now, config)
        return Plan([d.event for d in decisions if d.event is not None], decisions)

    return commit(layout, plan, now, allow_past=allow_past, agent=agent).value


def _no_policies(drafts: list[Draft]) -> None:
    if any(d.kind == "policy" for d in drafts):
        raise UsageError("a policy needs a rule, a direction and an author, which remember does not take: "
                         "use memstore policy add RULE --direction avoid|repeat --author NAME")


class PolicyAdded(NamedTuple):
    id: str
    changed: bool  # False: the same policy was written already


def add_policy(layout: Layout, rule: str, *, direction: str, author: str, now: str, config,
               subject: str | None = None, domain: str | None = None, source: str = "human",
               agent: str | None = None, access=None) -> PolicyAdded:
    """Record a policy written directly (memstore.policies.written_policy). The same rule,
    direction and scope again is a no-op; one that a person retired stays retired.
    ``access``: an agent's grants; without write on the domain, PermissionDenied (exit 4)."""
    if access is not None and not access.can_write_policy(domain):
        from .errors import PermissionDenied

        raise PermissionDenied(f"agent {access.agent} (role {access.role}) has no write grant on domain "
                               f"{domain or '(none)'!r}; a person can grant it in memstore.toml: "
                               f"[grants.{access.role}] ... = \"write\"")
    from .policies import DIRECTION_WORDS, written_policy
    from .remember import validate

    if direction not in DIRECTION_WORDS:
        raise UsageError(f"--direction {direction!r} is not one of: avoid, repeat (or mitigate, reinforce)")
    draft = validate({"text": rule, "subject": subject, "domain": domain, "actors": [author], "source": source},
                     max_chars=config["memory"]["max_text_chars"], options=True)
    if not draft.actors:
        raise UsageError("a policy needs an author: --author NAME (who wrote it)")
    record = written_policy(draft.text, direction=DIRECTION_WORDS[direction], author=draft.actors[0], now=now,
                            subject=draft.subject, domain=draft.domain, source=draft.source or "human")

    def plan(view: LogView) -> Plan:
        from .store.snapshot import by_id  # (a million records are not built for one)

        old = view.state(by_id).memories.get(record["id"])
        if old is not None and old.status == "invalidated":
            raise UsageError(f"policy {old.id} was retired at {old.invalid_at}; a retired policy stays retired "
                             "(write the rule in other words to record it again)")
        if old is not None:
            return Plan([], PolicyAdded(old.id, False))
        return Plan([{"op": "policy", "at": now, "memory": record}], PolicyAdded(record["id"], True))

    return commit(layout, plan, now, agent=agent).value


def retire_policy(layout: Layout, ref: str, *, now: str, reason: str | None = None,
                  agent: str | None = None, access=None) -> Forgotten:
    """A person retires a policy (learned or written): a forget of a policy record."""
    return forget(layout, ref, now=now, reason=reason, policy=True, agent=agent, access=access)


class StageRun(NamedTuple):
    """What a lifecycle stage did: the state it decided on, its events as the log holds
    them (with seq, unless a dry run or nothing), and their seqs."""

    state: State
    events: list[dict]
    seqs: tuple[int, ...]

    @property
    def mark(self) -> dict | None:
        """The run's ``mark`` (consolidate appends it last), or None."""
        return self.events[-1] if self.events and self.events[-1]["op"] == "mark" else None

    @property
    def lifecycle(self) -> tuple[list[dict], tuple[int, ...]]:
        """The events and seqs without the mark: what reports list and count."""
        if self.mark is None:
            return self.events, self.seqs
        return self.events[:-1], self.seqs[:-1]


def run_stage(layout: Layout, stage: Callable[..., list[dict]], *, now: str, config,
              dry_run: bool = False, keep=None, **kw) -> StageRun:
    """Run ``consolidate`` or ``distill`` (``stage(state, now=, config=, **kw)``) and append
    its events. Two concurrent runs at the same ``now`` append what one run would.
    ``keep(table, marks)``: the snapshot rows the stage can scan for (``store.open.load_state``)."""

    from .state import acyclic_build

    def plan(view: LogView) -> Plan:
        state = view.state(keep)
        with acyclic_build():  # (a run makes no reference cycles; its state has 100k+ records)
            return Plan(stage(state, now=now, config=config, **kw), state)

    done = commit(layout, plan, now, dry_run=dry_run)
    return StageRun(done.value, done.stamped(now), done.seqs)


def consolidation(state, **kw) -> list[dict]:
    """A consolidation's events, then its watermark (a ``mark`` event, when records were
    created since the last one): ``consolidate``'s stage for ``run_stage``."""
    from .consolidate import consolidate
    from .lifecycle.rules import watermark

    mark = watermark(state, kw["now"])
    origin = getattr(getattr(state.memories, "source", None), "origin", None)
    if origin is not None:  # opened from a snapshot: its keys file, when one can be believed
        from .nightcache.poolkeys import read

        kw["filed"] = read(*origin)
        if kw.get("embedder") is not None:  # and its near-duplicate groups, of this embedder's vectors
            from .nightcache import neargroups

            kw["near"] = neargroups.read(*origin, kw["embedder"])
    return consolidate(state, **kw) + ([mark] if mark else [])


ENGINES = ("engine", "reference")  # how a consolidation is computed: the same events


def reference_consolidation(state, **kw) -> list[dict]:
    """``consolidation`` computed by ``memstore.lifecycle.reference`` over the whole state."""
    from .lifecycle.reference import consolidate
    from .lifecycle.rules import watermark

    mark = watermark(state, kw["now"])
    return consolidate(state, now=kw["now"], config=kw["config"], embedder=kw.get("embedder")) + \
        ([mark] if mark else [])


def consolidate(layout: Layout, *, now: str, config, embedder=None, dry_run: bool = False,
                mapper=map, keyer=None, engine: str = "engine") -> StageRun:
    """The nightly consolidation, then its watermark (``consolidation``); from a snapshot it
    builds only the records it can scan for (``consolidate.rows``) and those it asks for by
    id. ``mapper``: see memstore.consolidate.consolidate (the CLI passes its embedding
    workers' pool, which a big night warms: a script passing one must guard its work with
    ``if __name__ == "__main__"``, as spawned workers run its main module again); ``keyer``:
    where update keys are cached (the CLI's key cache, beside the embedding cache).
    ``engine``: "engine" (memstore.consolidate) or "reference" (memstore.lifecycle.reference,
    every record of the whole state each round: slow, the same events)."""
    if engine not in ENGINES:
        raise ValueError(f"consolidate engine {engine!r}: use one of {', '.join(ENGINES)}")
    if engine == "reference":
        return run_stage(layout, reference_consolidation, now=now, config=config, dry_run=dry_run,
                         embedder=embedder)
    from .consolidate import rows

    return run_stage(layout, consolidation, now=now, config=config, dry_run=dry_run,
                     keep=lambda table, marks: rows(table, marks, now),
                     embedder=embedder, mapper=mapper, keyer=keyer)


def distill(layout: Layout, *, now: str, config, dry_run: bool = False) -> StageRun:
    """The distillation; from a snapshot it builds only the records it can scan for
    (``distill.rows``) and those it asks for by id."""
    from .distill import distill as stage
    from .distill import rows

    return run_stage(layout, stage, now=now, config=config, dry_run=dry_run,
                     keep=lambda table, _marks: rows(table, now, config))


class Forgotten(NamedTuple):
    memory: object  # the record as it was before (a model.Memory)
    changed: bool  # False: it was forgotten already


def forget(layout: Layout, ref: str, *, now: str, reason: str | None = None, policy: bool = False,
           agent: str | None = None, access=None) -> Forgotten:
    """Invalidate a memory (by id or key) from ``now`` on; nothing is deleted. ``policy``:
    the record must be a policy (memstore policy retire). ``access``: a record in a domain
    the agent may not read is not found (memstore.access)."""
    from .access import readable

    def plan(view: LogView) -> Plan:
        from .store.snapshot import by_id  # (a million records are not built for one)

        memory = view.state(by_id).resolve(ref)
        if memory is not None and not readable(access, memory):
            memory = None  # a domain the agent may not read: as if it did not exist
        if policy and (memory is None or memory.level != "policy"):
            raise NotFound(f"no policy with id {ref!r}; list them with `memstore policy list`")
        if memory is None:
            raise NotFound(f"no memory with id or key {ref!r}; list ids with `memstore export` or `memstore log`")
        if memory.status == "invalidated":
            return Plan([], Forgotten(memory, False))
        # "retired": false says outright that a person forgot it, whatever the reason's words
        event = {"op": "forget", "at": now, "id": memory.id, "retired": False}
        if reason:
            event["reason"] = reason
        return Plan([event], Forgotten(memory, True))

    return commit(layout, plan, now, agent=agent).value


class Resolved(NamedTuple):
    conflict: str  # the conflict's id
    keep: str
    changed: bool  # False: it was already resolved this way


def resolve_conflict(layout: Layout, ref: str, keep: str, *, now: str, note: str | None = None,
                     agent: str | None = None, access=None) -> Resolved:
    """A person's decision on a conflict. ``ref``: the conflict id, or the id or key of a
    memory in a conflict (its newest). ``keep``: new, old, both or dismiss."""
    from .conflicts import KEEP, records, resolve_event

    if keep not in KEEP:
        raise UsageError(f"--keep {keep!r} is not one of: {', '.join(KEEP)}" if keep else
                         "resolve needs --keep new, old, both or dismiss")

    def plan(view: LogView) -> Plan:
        from .store.open import load_state
        from .store.snapshot import by_id

        state = view.state(by_id)  # (a million records are not built for one conflict)
        found = _conflicts_named(view.layout, state, ref, access)
        if found is None:  # ids a scan cannot look for, or a log out of order there: the fold's
            state = load_state(view.layout)[0]
            found = records(view.events(), state, access)
        record = next((r for r in found if r["id"] == ref), None)
        if record is None:  # a memory's id or key: its newest conflict
            m = state.resolve(ref)
            mine = [r for r in found if m is not None and m.id in (r["old"], r["new"])]
            if not mine:
                raise NotFound(f"no conflict {ref!r}; list them with `memstore conflicts --all`")
            record = mine[-1]
        if record["state"] == "resolved" and record["resolution"] == keep:
            return Plan([], Resolved(record["id"], keep, False))
        return Plan([resolve_event(record, keep, now, note, person=agent is None)],
                    Resolved(record["id"], keep, True))

    return commit(layout, plan, now, agent=agent).value


_PLAIN_ID = None  # re.compile(...) on first use: an id a bytes scan of the log finds as written


def _conflicts_named(layout: Layout, state, ref: str, access) -> list[dict] | None:
    """``conflicts.records`` of the conflicts ``ref`` can name, without reading the log into
    events: the conflict whose id it is (found by scanning the log's bytes for the id), and
    every conflict of the memory it names (its id or key), which the caller falls back to
    when the conflict is not one the agent may see. Every event that decides a
    conflict's standing (its conflict, resolve and supersede events) names both sides, so
    the events of the lines naming a side are all that record needs, in log order; its
    sides come from ``state``. None: an ID or side that is not printable ASCII (the log's
    JSON may spell it otherwise) or lines out of seq order (the forward read decides)."""
    import re

    from .conflicts import records
    from .store.lookup import scanned_events

    global _PLAIN_ID
    if _PLAIN_ID is None:  # printable ASCII but the quote and the backslash: as canonical JSON spells it
        _PLAIN_ID = re.compile(r"[ !#-\[\]-~]+")
    if not _PLAIN_ID.fullmatch(ref):
        return None
    ops = ("conflict", "resolve", "supersede")
    # (the lines holding it as a whole JSON string: a short key would match most lines, each
    # then parsed; a literal is found fastest)
    named = scanned_events(layout, re.escape(b'"' + ref.encode() + b'"'),
                           lambda ev: ev["op"] == "conflict" and ev["id"] == ref)
    if named is None:
        return None
    sides = {i for ev in named for i in (ev["old"], ev["new"])}
    m = state.resolve(ref)  # (an ID that is a conflict's the agent may not see may name a memory too)
    if m is not None:
        sides.add(m.id)
    if not sides:
        return []
    if not all(_PLAIN_ID.fullmatch(i) for i in sides):
        return None
    pattern = b"|".join(re.escape(i.encode()) for i in sorted(sides))
    events = scanned_events(layout, pattern, lambda ev: ev["op"] in ops and (ev["old"] in sides or ev["new"] in sides))
    return None if events is None else records(events, state, access)  # (it builds the sides in one pass)


def _in_conflict(table, marks):
    """``keep`` for a caller that reads the open conflicts (harmonize): the snapshot rows in
    a conflict (``conflicts_with`` not empty) and, as ``store.snapshot.by_id``, the retired
    abstractions; the records the log after the snapshot touches are built besides."""
    import numpy as np
    import pyarrow.compute as pc

    from .store.snapshot import by_id

    flagged = pc.fill_null(pc.greater(pc.list_value_length(table.column("conflicts_with")), 0), False)
    return np.asarray(flagged.to_numpy(zero_copy_only=False), dtype=bool) | by_id(table, marks)


def _open_conflicts(layout: Layout, state, access) -> list[dict] | None:
    """``conflicts.records`` of every conflict with a side in a conflict now, which every open
    one has (its older side holds the newer in ``conflicts_with``), from ``state`` opened with
    ``_in_conflict`` (every such record is built: a snapshot row in a conflict, or one the log
    after it touched) and the conflict, resolve and supersede events found by scanning the
    log's bytes, read without folding it. Each of those events names both sides, so every
    event of such a conflict is there, in log order. None: lines out of seq order."""
    from .conflicts import records
    from .store.lookup import scanned_events

    flagged = {m.id for m in state.memories.values() if m.conflicts_with}
    ops = ("conflict", "resolve", "supersede")
    events = scanned_events(layout, rb'"op"\s*:\s*"(?:conflict|resolve|supersede)"',
                            lambda ev: ev["op"] in ops and (ev["old"] in flagged or ev["new"] in flagged))
    return None if events is None else records(events, state, access)  # (it builds the sides in one pass)


def _built(state, ids):
    """``state`` with the records of ``ids`` built in one pass over the snapshot (a partial
    state builds one it is asked for by itself, a take of the table each;
    ``conflicts.records`` builds its sides so)."""
    from .state import OnDemand

    if isinstance(state.memories, OnDemand):
        state.memories.build(sorted(set(ids)))
    return state


class Imported(NamedTuple):
    kind: str  # HISTORY or STATE (memstore.exchange)
    read: int
    events: list[dict]
    marks: int = 0  # consolidate marks read but left out (exchange.plan_history)


def import_rows(layout: Layout, rows: list[dict], *, name: str, now: str, config,
                where: list[str] | None = None) -> Imported:
    """Import an export (an event history or a state export, detected), keeping the
    original record times. Idempotent: what the store holds already is skipped. Every row
    is checked first (``exchange.check_rows``): one bad row and nothing is imported.
    ``where``: each row's location for messages ("FILE:LINE: "), by default its number."""
    from .exchange import HISTORY, check_rows, detect, fingerprint, plan_history, plan_state

    if not rows:
        raise UsageError(f"{name} is empty; nothing was imported")
    kind = detect(rows, name)
    where = where or [f"{name}: row {n}: " for n in range(1, len(rows) + 1)]
    check_rows(rows, where, kind, now=now, max_chars=config["memory"]["max_text_chars"])

    def plan(view: LogView) -> Plan:
        if kind == HISTORY:
            held = _held_fingerprints(layout, rows)
            if held is None:
                held = {fingerprint(ev) for ev in view.events()}
            events = plan_history(rows, held, view.seq)
        else:
            from .store.snapshot import by_id

            # (whether each row's record is held: its id asked for)
            events = plan_state(rows, _built(view.state(by_id), (r["id"] for r in rows)))
        # original times are kept: the import writes the past by design
        at = max(ev["at"] for ev in events) if events else None
        return Plan(events, events, at=at, allow_past=True)

    done = commit(layout, plan, now)
    marks = sum(r.get("op") == "mark" for r in rows) - sum(e["op"] == "mark" for e in done.value)
    return Imported(kind, len(rows), done.value, marks if kind == HISTORY else 0)


_SCAN_TIMES = 512  # distinct event times of a history import looked for by a scan of the log's bytes


def _held_fingerprints(layout: Layout, rows: list[dict]) -> set[bytes] | None:
    """The fingerprints of the log's events that could equal one of ``rows`` (a history,
    checked): those at one of the rows' times, found by scanning the log's bytes for them
    (an import fingerprinted every event of the log, however few it wrote).
    A fingerprint covers the time, and a checked time is plain ASCII, which canonical JSON
    writes as it is. None: too many distinct times for one pattern, or lines out of seq
    order (the forward read's rules decide)."""
    import re

    from .exchange import fingerprint
    from .store.lookup import scanned_events

    times = sorted({r["at"] for r in rows})
    if len(times) > _SCAN_TIMES:
        return None
    pattern = b'"at":"(?:' + b"|".join(re.escape(t.encode()) for t in times) + b')"'
    found = scanned_events(layout, pattern, lambda ev: True)
    return None if found is None else {fingerprint(ev) for ev in found}


def record_usage(layout: Layout, ids: list[str], query: str, *, now: str, lock_wait: float = 1.0,
                 agent: str | None = None) -> Committed:
    """The ``recall`` event that feeds the decay boost. Best effort: gives up with
    StoreBusy after ``lock_wait`` seconds rather than keep a reader waiting on a writer."""
    event = {"op": "recall", "at": now, "ids": ids, "query": query[:200]}
    return commit(layout, lambda _view: Plan([event]), now, lock_wait=lock_wait, agent=agent)


class NotesSet(NamedTuple):
    text: str  # the working memory after the write ("" when cleared)
    changed: bool


def set_notes(layout: Layout, agent: str, text: str, *, mode: str = "set", now: str) -> NotesSet:
    """Write an agent's working memory: ``set`` replaces it, ``append`` adds a
    line, ``clear`` empties it. The log holds the whole result each time, so an append
    racing another is re-planned on the text the other left."""
    from .access import check_agent
    from .notes import MODES, updated

    check_agent(agent)
    if mode not in MODES:
        raise UsageError(f"notes mode {mode!r} is not one of: {', '.join(MODES)}")

    def plan(view: LogView) -> Plan:
        from .store.open import load_notes  # (the notes only: no record is read)

        old = load_notes(view.layout).get(agent, {}).get("text", "")
        new = updated(old, text, mode)
        if new == old:
            return Plan([], NotesSet(new, False))
        return Plan([{"op": "notes", "at": now, "text": new}], NotesSet(new, True))

    return commit(layout, plan, now, agent=agent).value


class Superseded(NamedTuple):
    old: str
    new: str
    changed: bool


def supersede_fact(layout: Layout, ref: str, draft: Draft, *, now: str, config, agent: str | None = None,
                   access=None) -> Superseded:
    """Replace a memory with a new statement: the new record is
    added (or reinforced) and the old one superseded from ``now`` (history kept). A repo
    fact never supersedes a workspace one or the reverse: both must share the domain."""
    from .access import readable

    _no_policies([draft])

    def plan(view: LogView) -> Plan:
        from .store.snapshot import by_id  # (a million records are not built for one)

        state = view.state(by_id)
        old = state.resolve(ref)
        if old is None or not readable(access, old):
            raise NotFound(f"no memory with id or key {ref!r}; find it with search_memory or `memstore recall`")
        if old.status in ("superseded", "invalidated"):
            raise UsageError(f"memory {old.id} is {old.status} already; supersede what holds now")
        if (old.domain or None) != (draft.domain or None):
            raise UsageError(f"memory {old.id} is in domain {old.domain!r}, the new fact in {draft.domain!r}; "
                             "a fact supersedes only one of its own domain (a repo fact never replaces a "
                             "workspace one)")
        ids = [memory_id(draft.text, draft.subject, draft.domain)]
        (decision,) = decide_writes([draft], view.known_for(ids, [draft.key] if draft.key else []), now, config)
        if decision.id is None or decision.id == old.id:
            raise UsageError("the new text is the old memory's own; say what changed")
        events = [decision.event] if decision.event is not None else []
        events.append({"op": "supersede", "at": now, "old": old.id, "new": decision.id,
                       "reason": "superseded by " + (agent or "a person")})
        return Plan(events, Superseded(old.id, decision.id, True))

    return commit(layout, plan, now, agent=agent).value


class Harmonized(NamedTuple):
    proposals: list[dict]
    applied: list[str]  # conflict ids resolved


def harmonize(layout: Layout, *, now: str, apply: bool = False, agent: str | None = None,
              access=None) -> Harmonized:
    """Propose a resolution for every open conflict between two agents' beliefs (by
    evidence, then confidence, then recency: memstore.harmonize); with ``apply``, record them."""
    from .conflicts import records, resolve_event
    from .harmonize import proposals

    def plan(view: LogView) -> Plan:
        from .store.open import load_state

        state = view.state(_in_conflict)  # (a million records are not built for the open conflicts)
        conflicts = _open_conflicts(view.layout, state, access)
        if conflicts is None:  # a log out of order there: the fold's
            state = load_state(view.layout)[0]
            conflicts = records(view.events(), state, access)
        found = proposals(conflicts, state)
        if not apply:
            return Plan([], Harmonized(found, []))
        by_id = {r["id"]: r for r in conflicts}
        # a proposal is the rules' judgement, not a person's: the kept side is not made certain
        events = [resolve_event(by_id[p["conflict"]], p["keep"], now, p["why"], person=False) for p in found]
        return Plan(events, Harmonized(found, [p["conflict"] for p in found]))

    return commit(layout, plan, now, agent=agent).value
