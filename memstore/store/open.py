"""Open a store's state: the newest usable snapshot plus the log tail after it."""

from __future__ import annotations

from ..state import State, fold
from .layout import Layout
from .log import LogReader, read_head
from .snapshot import read_snapshot, snapshot_files


def load_state(layout: Layout, *, use_snapshots: bool = True) -> tuple[State, LogReader]:
    layout.check_readable()
    reader = LogReader(layout)
    base, start = State(), None
    if use_snapshots:
        head = read_head(layout)
        for seq, path in reversed(snapshot_files(layout)):
            if seq > head.seq:
                continue  # claims more than the log holds: not ours to trust
            try:
                base, meta = read_snapshot(path)
            except Exception:  # a damaged cache is skipped, never fatal (verify reports it)
                continue
            start = tuple(meta["position"]) if meta.get("position") else None
            break
    events = reader.events(after_seq=base.seq, start=start)
    if start is not None:
        first = next(events, None)
        if first is not None and first["seq"] != base.seq + 1:
            # the recorded position does not line up with the log: read it all
            reader = LogReader(layout)
            events = reader.events(after_seq=base.seq)
        elif first is not None:
            base = fold([first], base)
    return fold(events, base), reader
