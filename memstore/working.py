"""The state a lifecycle run (consolidate, distill) works on: a copy that knows which records
its events wrote, so listings are patched instead of sorted again, and a stage's scan of a
million records is made once a run (``Working.select``), not once a stage and round."""

from __future__ import annotations

from heapq import merge

from .model import Memory
from .state import _CANONICAL, Partial, State


class Writes(dict):
    """Records by id, with the ids written since the copy was made, in order."""

    __slots__ = ("written",)

    def __setitem__(self, key, value) -> None:
        self.written.append(key)
        dict.__setitem__(self, key, value)

    def _refused(self, *args, **kwargs):
        raise TypeError("a lifecycle run adds and replaces records, never removes one")

    __delitem__ = pop = popitem = setdefault = update = clear = _refused


class PartialWrites(Writes):
    """``Writes`` over a partial state's records (``state.Partial``): an id not built yet is
    built on first use, and that is not a write."""

    __slots__ = ("source",)
    __missing__, get, __contains__ = Partial.__missing__, Partial.get, Partial.__contains__


class Working(State):
    """A working copy of a state (``Working.of``); its input is never changed."""

    @classmethod
    def of(cls, state: State) -> Working:
        source = state.memories.source if isinstance(state.memories, Partial) else None
        memories = Writes(state.memories) if source is None else PartialWrites(state.memories)
        memories.written = []
        if source is not None:
            memories.source = source
        work = cls(memories, dict(state.keys), state.seq, state.at, dict(state.notes), dict(state.marks))
        work._records = state.ordered()  # the one sort of the run
        work.base = state.memories  # the records as the run began (read, never changed)
        work._synced = 0  # how far memories.written is applied to _records
        work._at = None  # id -> position in _records (made when first needed)
        # name -> [its records (None where one left), {id: position} or None, how far in written,
        # how many records the listing held when it was scanned]
        work._selected = {}
        # the snapshot's rows a partial state builds from (store.snapshot._Rows), or None
        work.source = source if hasattr(source, "table") else None
        return work

    def listed(self) -> dict[str, int]:
        """The ids of the records listings are scanned from (those the run opened with, and
        those it wrote): id -> position in ``ordered()``."""
        self.ordered()
        if self._at is None:
            self._at = {m.id: i for i, m in enumerate(self._records)}
        return self._at

    def build(self, ids) -> None:
        """Build the records of ``ids`` not built yet in one pass over the source (built, not
        written; not listed: a listing's scan reads the snapshot's rows apart, memstore.rowscan)."""
        if self.source is None:
            return
        have = self.memories
        self._keep(self.source.many([i for i in dict.fromkeys(ids) if not dict.__contains__(have, i)]))

    def _keep(self, made: list[Memory]) -> None:
        have, base = self.memories, self.base
        for m in made:
            dict.__setitem__(have, m.id, m)
            if not dict.__contains__(base, m.id):  # (the run's records as it began: the same row)
                dict.__setitem__(base, m.id, m)

    def _changed(self, since: int) -> dict[str, Memory]:
        return {i: self.memories[i] for i in self.memories.written[since:]}

    def ordered(self) -> list[Memory]:
        """The records in canonical order: the run's first listing, with the records its
        events replaced put in their places and the ones they created after them (a created
        record's stand-in seq follows every seq before it; else the list is sorted again)."""
        if self._synced < len(self.memories.written):
            if self._at is None:
                self._at = {m.id: i for i, m in enumerate(self._records)}
            late = []  # written records older than the listing's last (a record read by id, then written)
            for i, m in self._changed(self._synced).items():
                if i in self._at:
                    self._records[self._at[i]] = m
                elif not self._records or (self._records[-1].seq, self._records[-1].id) < (m.seq, m.id):
                    self._at[i] = len(self._records)
                    self._records.append(m)
                else:
                    late.append(m)
            if late:  # merged in their places (not a sort of every record built)
                self._records = list(merge(self._records, sorted(late, key=_CANONICAL), key=_CANONICAL))
                self._at = {r.id: n for n, r in enumerate(self._records)}
                self._selected = {}  # positions moved: every selection scans again
            self._synced = len(self.memories.written)
        return list(self._records)

    def select(self, name: str, keep) -> list[Memory]:
        """``[m for m in self.ordered() if keep(m)]``. The first call under a name scans every
        record; a later one tests only the records written since, in the list its last call
        returned, or created since. Were a record there before to pass ``keep`` only now, the
        records are scanned again, so the list is always the scan's; callers whose events
        never do that (consolidate's) pay for a million records once a run."""
        found = self._selected.get(name)
        if found is not None:
            records, at, since, end = found
            changed = self._changed(since)
            if changed:
                self.ordered()  # (where created records go)
                found = self._selected.get(name)  # (none, if the listing was sorted again)
            if changed and found is not None and at is None:
                at = found[1] = {m.id: i for i, m in enumerate(records)}
            for i, m in changed.items() if found is not None else ():
                if i in at:  # kept in place, or left as None (positions never move)
                    records[at[i]] = m if keep(m) else None
                elif keep(m):
                    if self._at[i] < end:
                        found = None  # a record older than the scan that passes now: scan again
                        break
                    at[i] = len(records)
                    records.append(m)
                    # (the listing now reaches this record: one before it that passes later,
                    # created since but not passing then, is out of place: scanned again)
                    end = found[3] = self._at[i] + 1
        if found is None:
            self.ordered()
            found = self._selected[name] = [[m for m in self._records if keep(m)], None, 0, len(self._records)]
        found[2] = len(self.memories.written)
        return list(filter(None, found[0]))
