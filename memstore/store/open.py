"""Open a store's state: the newest usable snapshot plus the log tail after it.

A long-lived process that opens the same store many times (``memstore replay``)
can ``remember_states()``: the last state folded is then kept with the log position
it reflects, and the next open folds only the events after it.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path

from ..events import touched_ids
from ..fold import fold
from ..state import OnDemand, State
from .layout import Layout
from .log import LogReader, position_after, read_head
from .snapshot import read_header, read_snapshot, snapshot_anchor, snapshot_files

_MEMO: dict[Path, tuple[State, tuple[str, int]]] = {}
_ENABLED = [False]


def remember_states(on: bool = True) -> None:
    """Keep folded states between opens in this process (off by default)."""
    _ENABLED[0] = on
    _MEMO.clear()


def _from_memo(layout: Layout, reader: LogReader) -> State | None:
    memo = _MEMO.get(layout.root)
    if memo is None:
        return None
    state, start = memo
    path = layout.log_dir / start[0]
    try:
        if path.stat().st_size < start[1]:
            return None  # the log is not the one we read: start over
    except FileNotFoundError:
        return None
    events = reader.events(after_seq=state.seq, start=start)
    first = next(events, None)
    if first is None:
        return state if read_head(layout).seq == state.seq else None
    if first["seq"] != state.seq + 1:
        return None
    return fold(events, fold([first], state))


def load_state(layout: Layout, *, use_snapshots: bool = True, keep=None) -> tuple[State, LogReader]:
    """The state (newest usable snapshot plus the log after it) and the reader that read it.

    ``keep(table, marks)``: opened from a snapshot, only the rows of that mask are built, and
    the records the log after it touches; any other record is built when its id is asked for
    (``state.Partial``). For a caller whose every scan looks only for records the mask
    holds (``distill.rows``, ``consolidate.rows``): a million records are not built to read
    a few thousand. Without ``keep``, a state opened from a snapshot is a ``state.Lazy``:
    each record is built when it is first read, and the first listing builds the rest,
    so a caller that reads a few records by id (the MCP server's tools, ``Store.state()``)
    does not pay for them all. Without a
    usable snapshot, or while states are kept between opens (``remember_states``), every
    record is built."""
    from ..state import acyclic_build  # (looked up at each open: a test runs without it)

    layout.check_readable()
    position = position_after(layout)  # taken first: events appended meanwhile are read next time
    reader = LogReader(layout)
    with acyclic_build():
        state = _from_memo(layout, reader) if use_snapshots and _ENABLED[0] else None
        if state is None:
            reader = LogReader(layout)
            # (a state kept for the next open, replay's, is built whole: that open may scan anything)
            state = _load(layout, reader, use_snapshots, None if _ENABLED[0] else keep, lazy=not _ENABLED[0])
    if _ENABLED[0] and position is not None and state.seq:
        _MEMO[layout.root] = (state, position)
    return state, reader


def _load(layout: Layout, reader: LogReader, use_snapshots: bool, keep=None, lazy: bool = False) -> State:
    base, events = _base(layout, reader, (lambda path: read_snapshot(path, keep, lazy)) if use_snapshots else None)
    if isinstance(base.memories, OnDemand):
        return _fold_partial(events, base)
    return fold(events, base)


def _base(layout: Layout, reader: LogReader, read) -> tuple[State, object]:
    """(the newest usable snapshot's state as ``read(path)`` gives it, or an empty state; the
    events after it). ``read`` None: no snapshot (the whole log)."""
    base, start = State(), None
    if read is not None:
        head = read_head(layout)
        for seq, path in reversed(snapshot_files(layout)):
            if seq > head.seq:
                continue  # claims more than the log holds: not ours to trust
            try:
                base, meta = read(path)
            except Exception:  # a damaged cache is skipped, never fatal (verify reports it)
                base = State()
                continue
            anchor = snapshot_anchor(layout, meta)
            if anchor is None:  # another store's, or a partition before it changed
                base = State()
                continue
            # the tail starts right after the anchored line
            start = (anchor["file"], anchor["start"] + anchor["length"] + 1) if anchor else None
            break
    events = reader.events(after_seq=base.seq, start=start)
    if start is not None:
        first = next(events, None)
        if first is not None and first["seq"] != base.seq + 1:
            # the recorded position does not line up with the log: read it all
            reader.problems.clear()
            events = reader.events(after_seq=base.seq)
        elif first is not None:
            events = chain([first], events)
    return base, events


def load_notes(layout: Layout) -> dict[str, dict]:
    """The agents' working memories (``State.notes``) as the log has them now, without a
    record: the newest usable snapshot's (its footer: ``snapshot.read_header``) with the
    ``notes`` events after it applied as the fold applies them (no other event changes
    them). `preamble` and `notes` at a million records read no row."""
    from ..fold import apply_notes

    layout.check_readable()
    base, events = _base(layout, LogReader(layout), read_header)
    notes = State(notes=dict(base.notes))
    for e in events:
        if e["op"] == "notes":
            apply_notes(notes, e)
    return notes.notes


_BATCH = 16_384  # tail events whose records a partial state builds in one pass


def _fold_partial(events, base: State) -> State:
    """``fold`` onto a partial state: the records each batch of events touches are built in
    one pass over the snapshot first (``OnDemand.build``; one by one, each would take its own)."""
    def built(batch: list[dict], base: State) -> State:
        base.memories.build(sorted({i for e in batch for i in touched_ids(e)}))
        return fold(batch, base)

    batch: list[dict] = []
    for e in events:
        batch.append(e)
        if len(batch) == _BATCH:
            base, batch = built(batch, base), []
    return built(batch, base)
