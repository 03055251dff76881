"""The conflicts a listing shows (`memstore conflicts`, the MCP server's list_conflicts), read
from the records index and the log's conflict events without folding the log.

The sides of each conflict are read from the records index a block at a time, in the order
the listing asks for them, not all held at once. ``listed`` answers None when no records
index can be believed; the caller then folds the log (``conflicts.records`` over the whole
state), which gives the same list.
"""

from __future__ import annotations

_BLOCK = 2048  # sides read from the records index at a time
_SCAN_PER_RECORD = 128 << 10  # log bytes a scan reads in the time one record's lines are found


def shown(found: list[dict], all_: bool) -> list[dict]:
    """The conflicts a listing shows: the open ones, or with ``all_`` every one."""
    return found if all_ else [r for r in found if r["state"] == "open"]


def listed(layout, all_: bool, access=None):
    """(the conflicts shown, their sides by id: ``get(id)``, to be asked for old then new,
    conflict by conflict, as shown) from the records index and the log after it; None: no
    usable records index (or a log out of order where its conflicts are: the fold decides).
    A records index found damaged only as it is read raises (``index.current.read_or_fold``)."""
    from .conflicts import records
    from .index.current import open_current

    current = open_current(layout)
    events = None if current is None else _events(current, layout, all_)
    if events is None:
        return None
    asked = _Asked()  # the order records() asks for the sides in, learnt from a first pass
    records(events, asked, access)
    found = shown(records(events, _Blocks(current, asked.order), access), all_)
    return found, _Blocks(current, [r[side] for r in found for side in ("old", "new")])


class _Asked:
    """A state's ``memories`` that holds nothing and notes the ids asked for, in order."""

    def __init__(self):
        self.memories = self
        self.order: list[str] = []

    def get(self, mid, default=None):
        self.order.append(mid)
        return default


class _Blocks:
    """A state's ``memories`` for one pass that asks for records in a known order: read from
    the records index (and the log after it) ``_BLOCK`` at a time, the block before dropped."""

    def __init__(self, current, order: list[str]):
        self.memories = self
        self._current, self._order, self._block = current, order, _BLOCK
        self._at, self._held = 0, {}

    def get(self, mid, default=None):
        at, self._at = self._at, self._at + 1
        if mid not in self._held:
            if at < len(self._order) and self._order[at] == mid:
                self._held = self._current.get(sorted(set(self._order[at:at + self._block])))
            else:  # asked out of the order given: just this one
                return self._current.get([mid]).get(mid, default)
        return self._held.get(mid, default)


def _events(current, layout, all_: bool) -> list[dict] | None:
    """The conflict, resolve and supersede events, read without folding the log: for --all, a
    scan of the log's bytes for those ops; for open conflicts, the events naming a record
    still in one (the records index names them: every event of an open conflict names its
    sides, which are in one still), from those records' lines (found by bisecting the log on
    the seqs the index lists for them) or, when they are many for the log's size, from the
    scan (finding one record's lines costs about what scanning ``_SCAN_PER_RECORD`` bytes of
    the log does). None: the log is out of order there (the forward read decides)."""
    from .store.lookup import log_size, scanned_events

    ops = ("conflict", "resolve", "supersede")
    pattern = rb'"op"\s*:\s*"(?:conflict|resolve|supersede)"'
    if all_:
        return scanned_events(layout, pattern, lambda ev: ev["op"] in ops)
    ids = current.in_conflict()
    if len(ids) * _SCAN_PER_RECORD > log_size(layout):
        named = frozenset(ids)
        return scanned_events(layout, pattern, lambda ev: ev["op"] in ops and any(
            isinstance(side, str) and side in named for side in (ev.get("old"), ev.get("new"))))
    found: dict[int, dict] = {}
    for at in range(0, len(ids), 4096):  # (the lines of a few thousand records held at a time)
        for mine in current.events_of(ids[at:at + 4096]).values():
            if mine is None:
                return None
            found.update((ev["seq"], ev) for ev in mine if ev["op"] in ops)
    return [found[q] for q in sorted(found)]
