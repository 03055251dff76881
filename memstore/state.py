"""The state a log folds to: records by id and caller keys (``memstore.fold`` builds it)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter

from .codec import dumps
from .model import Memory, memory_to_dict

_CANONICAL = attrgetter("seq", "id")  # the same key as (m.seq, m.id), a third cheaper to take


@contextmanager
def acyclic_build():
    """Python's cycle collector paused while a state is built (``store.open.load_state``), or
    a lifecycle run works on one (memstore.writes.run_stage). A state holds no reference
    cycles (frozen records of strings, numbers and tuples), nor does what a run builds beside
    it (lists, dicts and tuples of ids and texts), so the collector finds nothing in them, yet
    it walks every object each time it runs (much of a large state's build,
    ``bench/scale.py --only snapshot``, and of a bulk import's first consolidate). The
    collector's previous setting is restored, whatever happens; a cycle made meanwhile is
    collected after."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class State:
    """Records by id, caller keys to ids, and the log position folded so far.

    Treat a State as a value: ``fold`` returns a new one and never changes its input.
    """

    memories: dict[str, Memory] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    seq: int = 0
    at: str | None = None
    # each agent's working memory: {agent: {"text": ..., "at": ...}}; never a record
    notes: dict[str, dict] = field(default_factory=dict)
    # lifecycle watermarks ("mark" events): {stage: the last seq its run examined}; log
    # positions, like ``seq``, so not part of the digest (a state export does not carry them)
    marks: dict[str, int] = field(default_factory=dict)

    def copy(self) -> State:
        partial = getattr(self.memories, "source", None) is not None  # (a partial state's stays partial)
        memories = self.memories.copy() if partial else dict(self.memories)
        return State(memories, dict(self.keys), self.seq, self.at, dict(self.notes), dict(self.marks))

    def resolve(self, ref: str) -> Memory | None:
        """A record by id or by caller key."""
        m = self.memories.get(ref)
        if m is None and ref in self.keys:
            m = self.memories.get(self.keys[ref])
        return m

    def notes_of(self, agent: str | None) -> str:
        """An agent's working memory ("" when it has none, or for no agent)."""
        return self.notes.get(agent, {}).get("text", "") if agent else ""

    def ordered(self) -> list[Memory]:
        """Records in creation order (seq, then id): the canonical order of every listing."""
        return sorted(self.memories.values(), key=_CANONICAL)


class OnDemand(dict):
    """Records by id, some built from ``source`` (a snapshot's rows: ``source.one(id)``, None
    when there is no such record) when first asked for (``Partial``, ``Lazy``)."""

    __slots__ = ("source",)

    def __init__(self, records=(), source=None):
        super().__init__(records)
        self.source = source

    def __missing__(self, key):
        m = self.source.one(key) if self.source is not None else None
        if m is None:
            raise KeyError(key)
        dict.__setitem__(self, key, m)  # (built, not written: memstore.working)
        return m

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def build(self, ids) -> None:
        """Build the records of ``ids`` not built yet, in one pass over the source."""
        if self.source is not None:
            for m in self.source.many([i for i in ids if not dict.__contains__(self, i)]):
                dict.__setitem__(self, m.id, m)

    def built(self):
        """The records built so far (or written), never building one (a ``Partial``'s
        listing; a ``Lazy``'s listing builds every record)."""
        return dict.values(self)


class Partial(OnDemand):
    """Records by id of which only some are built: a stage that scans few of a snapshot's
    rows (``store.open.load_state(keep=)``) gets those, and any other id it asks for is built
    on first use. Listings (``values``, ``State.ordered``) hold the records built so far, so
    a caller may scan only for records its ``keep`` chose or that it asked for by id."""

    __slots__ = ()

    def copy(self) -> Partial:
        return Partial(self, self.source)


_FILL_AFTER = 2048  # a Lazy's records built one by one before the rest are built at once


class Lazy(OnDemand):
    """Every record of a snapshot's table, each built when it is first read: a whole state
    (``store.open.load_state`` without ``keep``) opens without building a million records,
    and a caller that reads a few by id (the MCP server's tools, a library's
    ``Store.state().resolve``) builds those only. Unlike a ``Partial``'s, its listings are
    complete: the first listing (iteration, ``values``, ``items``, ``==``) builds every row
    not built yet, in one pass, and from then on it is an ordinary dict of every record (no
    source), in the order a state built whole has: the table's rows (canonical order), then
    the records the log after it created, as the fold added them. ``len`` counts without
    building. The fold never removes a record, so a row of the table is a record, built or
    not."""

    __slots__ = ("misses",)

    def __init__(self, records=(), source=None):
        super().__init__(records, source)
        self.misses = 0

    def __missing__(self, key):
        m = OnDemand.__missing__(self, key)  # (KeyError: no such record)
        # a caller reading record after record by id (one table take each) pays
        # for _FILL_AFTER of them at most, then for every record at once as a listing does
        self.misses += 1
        if self.misses >= _FILL_AFTER:
            self.fill()
        return m

    def fill(self) -> None:
        """Build every row not built yet; the built records (changed or not) take their rows'
        places, the others follow."""
        if self.source is None:
            return
        every = {m.id: m for m in self.source.every()}
        every.update(dict.items(self))
        dict.clear(self)
        dict.update(self, every)
        self.source = None

    def copy(self) -> Lazy:
        out = Lazy((), self.source)
        dict.update(out, dict.items(self))  # (the built records only: never a listing)
        return out

    def __len__(self) -> int:
        if self.source is None:
            return dict.__len__(self)
        return self.source.num_rows + self.source.missing(list(dict.keys(self)))

    def __eq__(self, other) -> bool:
        self.fill()
        if isinstance(other, Lazy):
            other.fill()
        return dict.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None

    def setdefault(self, key, default=None):
        m = self.get(key)
        if m is None:
            self[key] = m = default
        return m

    def clear(self) -> None:
        dict.clear(self)
        self.source = None  # (no row comes back)

    def __reduce__(self):
        self.fill()
        return dict, (dict(dict.items(self)),)


def _listed(name: str):
    """dict's method ``name``, after every record is built (``Lazy.fill``)."""
    method = getattr(dict, name)

    def listing(self, *args):
        self.fill()
        return method(self, *args)

    listing.__name__ = listing.__qualname__ = name
    listing.__doc__ = method.__doc__
    return listing


# a listing (iteration, keys, values, items, repr) or a removal lists every record first
for _name in ("__iter__", "keys", "values", "items", "__reversed__", "__repr__", "__delitem__", "pop",
              "popitem", "__or__"):
    setattr(Lazy, _name, _listed(_name))


def recurrence_after(mentions: int) -> float:
    """Recurrence axis implied by a mention count: 1 -> 0, 2 -> 0.5, 3 -> 0.67, ..."""
    return round(1.0 - 1.0 / mentions, 4)


def state_rows(s: State):
    """The state's rows in canonical order, each made as it is read (a million held at once
    took gigabytes)."""
    return map(memory_to_dict, s.ordered())


# Fields added after the first log format leave the digest while at their default, so a
# state that does not use them digests as it did before they existed (goldens stay valid).
_LATER_FIELDS = {"retired": False, "against": [], "author": None, "agent": None, "session": None,
                 "turn": None, "invalid_periods": []}


def digest(s: State) -> str:
    """Canonical digest of a state: sorted canonical JSON rows, never file bytes."""
    import hashlib

    h = hashlib.sha256()
    for row in sorted(state_rows(s), key=lambda r: r["id"]):
        for name, default in _LATER_FIELDS.items():
            if row[name] == default:
                del row[name]
        h.update(dumps(row))
        h.update(b"\n")
    h.update(dumps(dict(sorted(s.keys.items()))))
    if s.notes:  # a store without working memory digests as before notes existed
        h.update(dumps(dict(sorted(s.notes.items()))))
    return h.hexdigest()

