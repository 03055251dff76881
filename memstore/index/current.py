"""Records as the log has them now, without folding the log: the records index at its
watermark plus the events after it, folded onto the records they touch.

A read that needs a few records (``show``) or aggregates over all of them (``stats``)
then costs what it returns, not a fold of the whole log. The index is
a derived file and is checked before it is believed (its manifest's format, watermark,
log anchor, file list and document count; nothing created after its watermark); when
any check fails, or the log after the watermark is long, ``open_current`` returns None and
the caller folds the log as before: a derived file that disagrees with the log never
answers. Nothing is written: a read-only store is read the same way.
"""

from __future__ import annotations

from itertools import chain, islice

from ..fold import fold
from ..model import Memory
from ..state import State
from ..store.anchor import anchor_problem
from ..store.layout import Layout
from ..store.log import LogReader, read_head
from . import records
from .filecheck import files_changed
from .manifest import read_manifest

MAX_TAIL = 20_000  # events after the watermark folded per read; beyond it, the full fold


class Current:
    """The records index plus ``overlay``: the records the log changed after its watermark,
    as the fold has them now."""

    def __init__(self, index: records.RecordIndex, overlay: dict[str, Memory], tail: list[dict] = (),
                 layout: Layout | None = None, mark: int = 0):
        self.index = index
        self.overlay = overlay
        self.tail = list(tail)  # the events after the index's watermark
        self.layout, self.mark = layout, mark  # the store, and the index's watermark

    def in_conflict(self) -> list[str]:
        """The ids of the records in an open conflict now."""
        ids = {i for i in self.index.ids("open", "conflict") if i not in self.overlay}
        return sorted(ids | {i for i, m in self.overlay.items() if m.conflicts_with})

    def flagged_blocks(self, size: int):
        """The records in an open conflict now, in creation order (seq, then id), about
        ``size`` at a time: the index's (less those the log changed since) merged with the
        overlay's."""
        extra = sorted((m for m in self.overlay.values() if m.conflicts_with), key=lambda m: (m.seq, m.id))
        j = 0
        for block in self.index.blocks("open", "conflict", size):
            block = [m for m in block if m.id not in self.overlay]
            k = j
            while block and k < len(extra) and (extra[k].seq, extra[k].id) <= (block[-1].seq, block[-1].id):
                k += 1
            if k > j:
                block, j = sorted(block + extra[j:k], key=lambda m: (m.seq, m.id)), k
            if block:
                yield block
        if j < len(extra):
            yield extra[j:]

    def posting(self, dim: str, value: str, keep) -> list[Memory]:
        """The records ``keep`` accepts among those the index lists under ``dim`` = ``value`` and
        those the log changed since (a changed record may have joined or left the list), as
        the log has them now, in creation order."""
        found = {m.id: m for m in self.index.posting(dim, [value])}
        found.update(self.overlay)
        return sorted((m for m in found.values() if keep(m)), key=lambda m: (m.seq, m.id))

    def events(self, mid: str) -> list[dict] | None:
        """The events that touched ``mid`` (``events.touched_ids``), oldest first: the log
        lines the records index names (read by seq), then those after its watermark. None
        when a line is not the event the index says (a damaged or edited log: the index
        holds the record as the log no longer tells it, so the fold answers, and says what
        it skipped), or when the log's seqs do not rise there (the forward read's rules
        decide what it says)."""
        return self.events_of([mid])[mid]

    def events_of(self, ids: list[str]) -> dict[str, list[dict] | None]:
        """``events`` of each of ``ids``, their lines read in one pass over the log in seq
        order (not a bisection of the log and a mapping for each record)."""
        from ..events import touched_ids
        from ..store.log import well_formed
        from ..store.lookup import lines_at

        seqs = self.index.events_of(list(ids))
        wanted = sorted({q for mid in ids for q in seqs.get(mid, ())})
        lines = lines_at(self.layout, wanted) if wanted else []
        # each line parsed and checked once, however many of the records it touches (a
        # promotion names thousands)
        events = {q: well_formed(line) for q, line in zip(wanted, lines or (), strict=False)}
        touched = {q: frozenset(touched_ids(ev)) for q, ev in events.items() if ev is not None and ev["seq"] == q}
        later: dict[str, list[dict]] = {}  # id -> the events after the watermark that touched it
        for ev in self.tail:
            for i in dict.fromkeys(touched_ids(ev)):
                later.setdefault(i, []).append(ev)
        found: dict[str, list[dict] | None] = {}
        for mid in ids:
            mine = seqs.get(mid, [])
            if lines is None or not all(mid in touched.get(q, ()) for q in mine):
                found[mid] = None
                continue
            found[mid] = [events[q] for q in mine] + later.get(mid, [])
        return found

    def columns(self) -> tuple[dict, dict[str, Memory]]:
        """Every record's aggregate columns (``RecordIndex.columns``, in any row order) less
        the records changed since they were taken, and those records as the log has them now:
        from ``index/columns.bin`` when it is usable, else from the index itself."""
        from . import columns

        side = columns.read(self.layout, self.mark) if self.layout is not None else None
        if side is None:
            return self.index.columns(), dict(self.overlay)
        cols, between = side
        changed = self.get(records.touched(self.index, between)) if between else {}
        return cols, {**changed, **self.overlay}

    def get(self, ids: list[str]) -> dict[str, Memory]:
        found = {i: self.overlay[i] for i in ids if i in self.overlay}
        rest = [i for i in ids if i not in found]
        if rest:
            found.update(self.index.get(rest))
        return found

    def hidden(self, access, ids) -> frozenset[str]:
        """Which of ``ids`` name records ``access`` may not read (``access.hidden_ids`` for
        just the records a reply links to)."""
        if access is None:
            return frozenset()
        from ..access import readable

        return frozenset(i for i, m in self.get(sorted(set(ids))).items() if not readable(access, m))

    def key_id(self, key: str) -> str | None:
        """The id a caller key is bound to when the records can tell: the one record created
        with it (a key is bound when first written, and a later write with it reinforces
        that record). None: ask the log (no record or several carry it: a key bound by a
        reinforce only, or records imported with it). One case only the log tells apart: an
        import of a record carrying a key that a reinforce had bound to another record
        before (the fold keeps that first binding; this names the imported record)."""
        if self.index.count(self.index.dimension_query("key", [key])) > 4:
            return None
        ids = {m.id for m in self.index.posting("key", [key])}
        ids |= {mid for mid, m in self.overlay.items() if m.key == key}
        return ids.pop() if len(ids) == 1 else None

    def resolve(self, ref: str, layout: Layout) -> Memory | None:
        m = self.get([ref]).get(ref)
        if m is not None:
            return m
        mid = self.key_id(ref)
        if mid is None:  # a key bound by a reinforce only: read the log for it
            from ..store.lookup import known_for

            mid = known_for(layout, [], [ref]).key_id(ref)
        return self.get([mid]).get(mid) if mid else None


def open_current(layout: Layout) -> Current | None:
    """The records as of the log's head, or None when the index cannot be believed (the
    caller folds the log)."""
    head = read_head(layout)
    if head.damaged or head.seq == 0:
        return None
    manifest = believed_manifest(layout, "records", records.FORMAT, head.seq)
    if manifest is None:
        return None
    mark = manifest["watermark"]
    try:
        index = records.RecordIndex(read_path(layout.index_path("records")))
        if index.count() != manifest.get("count") or index.count_after(mark) > 0:
            return None  # a crash between the index's commit and its manifest
        tail = list(islice(_after(layout, manifest["anchor"], mark), MAX_TAIL + 1))
        if len(tail) > MAX_TAIL:
            return None
        touched = records.touched(index, tail)
        before = index.get(touched) if touched else {}
    except BaseException as exc:  # a damaged index: the fold answers (verify and reindex repair it)
        from .sync import is_damage

        if is_damage(exc):
            return None
        raise
    state = fold(tail, State(memories=dict(before), seq=mark))
    overlay = {mid: m for mid, m in state.memories.items() if before.get(mid) != m}
    return Current(index, overlay, tail, layout, mark)


def believed_manifest(layout: Layout, name: str, fmt: str, head: int) -> dict | None:
    """An index's manifest when it may be believed: this format, a watermark in the log
    (1 to ``head``) whose anchor is this log's line, and the files it lists as they are."""
    manifest = read_manifest(layout.manifest_path(name))
    mark = manifest.get("watermark") if isinstance(manifest, dict) else None
    if (not isinstance(manifest, dict) or manifest.get("format") != fmt
            or type(mark) is not int or not 0 < mark <= head
            or anchor_problem(layout, manifest.get("anchor"), mark) is not None
            or files_changed(layout, name, manifest) is not None):
        return None
    return manifest


def read_path(path):
    """A Tantivy index's directory to open for reading: itself, or links to its files when
    the store is read-only (Tantivy takes lock files beside what it opens)."""
    import os

    from .sync import shadow

    return path if os.access(path, os.W_OK) else shadow(path)


def _after(layout: Layout, anchor: dict, mark: int):
    """The events after ``mark``, read from the byte after its anchored line."""
    events = LogReader(layout).events(after_seq=mark, start=(anchor["file"], anchor["start"] + anchor["length"] + 1))
    first = next(events, None)
    if first is None:
        return iter(())
    if first["seq"] != mark + 1:
        raise ValueError("the log after the watermark does not continue it")
    return chain([first], events)


def read_or_fold(read, fold_instead):
    """``read()`` (a read through ``open_current``), or ``fold_instead()`` when the index
    turns out damaged only as it is read (a Tantivy panic, an I/O or decode error): a damaged
    derived file never fails a read the log can answer."""
    try:
        return read()
    except BaseException as exc:  # (Tantivy's panics are BaseExceptions; is_damage says which)
        from .sync import is_damage

        if is_damage(exc):
            return fold_instead()
        raise
