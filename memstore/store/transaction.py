"""The write transaction: the one way anything is appended to a store's log.

    committed = commit(layout, plan, now)

``plan(view)`` is a function of what the log holds (a ``LogView``) that returns a
``Plan``: the events to append (without seq) and whatever its caller wants back.
``commit`` plans without the lock (readers never wait), then takes the store lock;
if the log moved meanwhile (another process appended), it plans again on a fresh
view under the lock, so two concurrent writers can never both decide "add" for the
same text or key. Then it appends every event or none.

Every writer uses this: the CLI's commands, ``memstore.api.Store``, replay and
import. Nothing outside ``memstore/store`` takes the store lock for the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from ..errors import StoreBusy
from . import log as logstore
from .fs import exclusive_lock
from .layout import Layout
from .log import LogReader, read_head
from .lookup import Known, known_for


# NamedTuples, not dataclasses: remember imports this module, and start-up time counts.
class Plan(NamedTuple):
    """What a planning function decided. ``at``: the record time to append at when it
    is not the transaction's ``now`` (an import keeps its events' own times);
    ``allow_past``: the events may be older than the log's newest (import, by design)."""

    events: list[dict]
    value: Any = None
    at: str | None = None
    allow_past: bool = False


class Committed(NamedTuple):
    """A plan and the seqs its events got (empty when nothing was appended)."""

    plan: Plan
    seqs: tuple[int, ...] = ()

    @property
    def value(self) -> Any:
        return self.plan.value

    @property
    def events(self) -> list[dict]:
        return self.plan.events

    def stamped(self, now: str) -> list[dict]:
        """The events as the log holds them (``at`` and ``seq`` set)."""
        if not self.seqs:
            return list(self.plan.events)
        at = self.plan.at or now
        return [{**e, "at": at, "seq": s} for e, s in zip(self.plan.events, self.seqs, strict=True)]


class LogView:
    """What the log holds at one moment, read lazily and at most once.

    ``seq`` is the head, read before anything else, so that an append landing while a
    plan reads is seen by ``commit`` as a moved log."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.seq = read_head(layout).seq
        self._state = None

    def state(self, keep=None):
        """The folded state (snapshot plus tail); loaded on first use. ``keep``: only the
        snapshot rows it selects are built up front (``open.load_state``; the first call's
        choice holds)."""
        if self._state is None:
            from .open import load_state

            self._state, _reader = load_state(self.layout, keep=keep)
        return self._state

    def events(self) -> Iterator[dict]:
        """Every readable event in log order (damaged lines are skipped)."""
        return LogReader(self.layout).events()

    def known_for(self, ids: list[str], keys: list[str]) -> Known:
        return known_for(self.layout, ids, keys)


def commit(layout: Layout, plan: Callable[[LogView], Plan], now: str, *, allow_past: bool = False,
           lock_wait: float | None = None, dry_run: bool = False, agent: str | None = None) -> Committed:
    """Plan, lock, re-plan if the log moved, append all or nothing; return what was decided.

    ``dry_run`` plans once and appends nothing. ``lock_wait`` gives up with StoreBusy after
    about that many seconds (best-effort records such as recall usage). ``agent``: who
    writes; stamped on every event (and on the records they create)."""
    if agent is not None:
        plan = _signed(plan, agent)
    view = LogView(layout)
    decided = plan(view)
    if dry_run or not decided.events:
        return Committed(decided)
    _check(decided.events)
    layout.create()
    with exclusive_lock(layout.lock_path, wait=lock_wait) as held:
        if not held:
            raise StoreBusy(f"the store {layout.root} is busy (another writer holds its lock)")
        if read_head(layout).seq != view.seq:
            decided = plan(LogView(layout))
            if not decided.events:
                return Committed(decided)
            _check(decided.events)
        # the lock is re-entrant in this thread: append takes it again at no cost
        seqs = logstore.append(layout, decided.events, decided.at or now,
                               allow_past=allow_past or decided.allow_past)
    return Committed(decided, tuple(seqs))


def _signed(plan: Callable[[LogView], Plan], agent: str) -> Callable[[LogView], Plan]:
    def signed(view: LogView) -> Plan:
        decided = plan(view)
        events = []
        for e in decided.events:
            e = {**e, "agent": agent}
            if isinstance(e.get("memory"), dict) and e["memory"].get("agent") is None:
                e["memory"] = {**e["memory"], "agent": agent}
            events.append(e)
        return decided._replace(events=events)

    return signed


# remember's own events: built by remember.build from drafts remember.validate passed, and
# held to the grammar by a property test (tests/test_hostile_log.py); checking each one
# again here would cost a bulk write a quarter of its speed.
_BUILT = frozenset(("remember", "reinforce"))


def _check(events: list[dict]) -> None:
    """Nothing a reader would skip is ever written, whoever planned it: every event must pass
    the log's grammar (``schema``) and be of an op this memstore folds. Callers validate what people give them with
    messages of their own (``remember.validate``, ``exchange.check_rows``), so a failure
    here is a bug in a planning function, raised as one rather than written and lost."""
    from ..schema import OPS, event_problem

    for e in events:
        op = e.get("op")
        if op in _BUILT:
            continue
        problem = event_problem({**e, "seq": 1}) if op in OPS else f"unknown op {op!r}"
        if problem is not None:
            raise ValueError(f"memstore planned an event readers would skip ({problem}); nothing was "
                             "written (a bug: please report it)")
