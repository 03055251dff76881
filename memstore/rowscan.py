"""consolidate's scans as column masks over a snapshot's table (memstore.store.snapshot), so
a night builds the records it reads, not every live one (issue [6/6], item 2).

The rows a night opens with (``open_rows``) are a superset of those whose record a stage's
scan keeps: the scan's own test then runs on the records built, so it decides. The update
pool (``pool_of``), the near-duplicate groups' older members (``members``) and promote's
short-term records (``shorts``) are not built at all: what they read is read from columns,
with column tests equal to consolidate's record tests (tests/test_rowscan.py holds each to
them, nulls as None), and a record is built when it is compared (a candidate, a nearest
older member).

Rows whose record the log after the snapshot changed, or the run wrote, are never read
from the table: those records are built already, and judged as they are now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .model import EPISODIC_KINDS


def mask(condition):
    """A boolean Arrow column (or a condition over columns) as a numpy mask, a null as False.
    Shared with the other column scans of a night's tables (nightcache.neargroups)."""
    import numpy as np

    return np.asarray(condition.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def open_rows(table, mark: int, now: str | None = None):
    """The rows a night's state is opened with: those created after the last mark (the
    day's records, which every stage compares and ``watermark`` looks for), the retired
    abstractions (``fold`` reinstates them by scanning), the active abstractions (policy
    conflicts and retire scan for those) and the active short-term records due to expire by
    ``now`` (every active short-term one without it). The update pool, the near-duplicate
    groups and promote's short-term records are read apart (``pool_of``, ``members``,
    ``shorts``)."""
    import pyarrow.compute as pc

    active = pc.equal(table.column("status"), "active")
    short = pc.and_(active, pc.equal(table.column("tier"), "short"))
    if now is not None:
        short = pc.and_(short, pc.less_equal(table.column("expires_at"), now))
    abstraction = pc.fill_null(pc.not_equal(table.column("level"), "raw"), True)  # (None != "raw")
    return (mask(pc.greater(table.column("seq"), mark)) | mask(table.column("retired")) | mask(short)
            | mask(pc.and_(active, abstraction)))


def group_rows(table, subjects: set[str]):
    """The active raw records on these subjects: the near-duplicate groups of a night's new
    records (a group is a domain and a subject; every domain's rows are kept)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not subjects:
        return np.zeros(table.num_rows, dtype=bool)
    on = pc.is_in(table.column("subject"), value_set=pa.array(sorted(subjects), type=pa.string()))
    return mask(pc.and_(pc.and_(pc.equal(table.column("status"), "active"), pc.equal(table.column("level"), "raw")), on))


def pooled_rows(table, updatable: tuple[str, ...]):
    """Exactly the rows consolidate's ``pooled`` keeps, read as their records would be:
    raw, without an outcome, of an updatable status, not an episode (a null kind is none)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def among(name, values):
        return mask(pc.is_in(table.column(name), value_set=pa.array(values, type=pa.string())))

    return (mask(pc.equal(table.column("level"), "raw")) & mask(pc.is_null(table.column("outcome")))
            & among("status", list(updatable)) & ~among("kind", list(EPISODIC_KINDS)))


class Pool(Sequence):
    """The update pool in canonical order as columns (``ids``, ``texts``, ``recorded``: each
    record's record time); ``pool[i]`` is its record, built when asked for. ``rows``: each
    record's row in the table (of ``table_rows`` rows) it was read from, -1 for a record
    judged as built (an int64 array; None: not read from a table)."""

    def __init__(self, ids: list[str], texts: list[str], recorded: list[str], get, rows=None,
                 table_rows: int | None = None, regular: bool | None = None, rows_of=None, domains=None):
        self.ids, self.texts, self.recorded, self._get = ids, texts, recorded, get
        self.rows, self.table_rows = rows, table_rows
        self.regular = regular  # whether ``recorded`` never falls along the pool (None: not known)
        self.rows_of = rows_of  # ids -> their table rows (-1: none), the snapshot's lookup (None: none)
        self.domains = domains  # each record's domain by position (a ``Column``), when read from a table
        self._inv = self._built = None  # table row -> position; a built record's id -> position

    def positions(self, ids: list[str]):
        """Each of ``ids``' position in the pool, -1 where it is not there (an int64 array):
        found by the table's id lookup, not a dict of every id."""
        import numpy as np

        if self._inv is None:
            self._inv = np.full(self.table_rows, -1, dtype=np.int64)
            mine = np.flatnonzero(self.rows >= 0)
            self._inv[self.rows[mine]] = mine
            self._built = {self.ids[p]: p for p in np.flatnonzero(self.rows < 0).tolist()}
        at = self.rows_of(list(ids))
        out = np.where(at >= 0, self._inv[np.maximum(at, 0)], -1)
        for k, i in enumerate(ids):  # (a record built is judged as it is: at its own place)
            p = self._built.get(i)
            if p is not None:
                out[k] = p
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int):
        return self._get(self.ids[i])


class InPool:
    """The records of a ``Pool`` still in it this round: all but those that left (``gone``,
    their ids), without a set of every id."""

    def __init__(self, pool: Pool):
        self.pool, self.gone = pool, set()

    def __len__(self) -> int:
        return len(self.pool) - len(self.gone)


def pool_of(work, pooled, updatable: tuple[str, ...]) -> Pool:
    """The records of ``work`` (a run's state over a snapshot, memstore.working) that pass
    ``pooled``: the table's rows that pass ``pooled_rows``, but for those built (judged by
    their record, as the run has it), in canonical order (seq, then id)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table, have = work.source.table, work.memories
    rows = np.flatnonzero(pooled_rows(table, updatable))
    # the rows of the records built (a few thousand), found by their ids: not a probe of each
    # pool id
    found = work.source._at(list(dict.keys(have)))
    built_row = np.zeros(table.num_rows, dtype=bool)
    built_row[found[found >= 0]] = True
    rows = rows[~built_row[rows]]
    built = sorted((m for m in dict.values(have) if pooled(m)), key=lambda m: (m.seq, m.id))
    table_ids = table.column("id").take(rows)
    times = table.column("recorded_at").take(rows).combine_chunks()
    seqs = table.column("seq").take(rows).to_numpy(zero_copy_only=False)
    order = _merged(table_ids, seqs, built)
    n = len(rows)
    at = np.concatenate([rows.astype(np.int64), np.full(len(built), -1, dtype=np.int64)])[order]
    # (the texts, ids and record times are read when asked for: a night asks for the few texts
    # its keys file does not cover, the ids of the candidates it ranks, a record time a year)
    places = list(zip(np.flatnonzero(order >= n).tolist(), [built[j - n] for j in order[order >= n].tolist()],
                      strict=True))
    texts = Column(table.column("text"), at, {p: m.text for p, m in places})
    ids = Column(table.column("id"), at, {p: m.id for p, m in places})
    recorded = Column(table.column("recorded_at"), at, {p: m.recorded_at for p, m in places})
    domains = Column(table.column("domain"), at, {p: m.domain for p, m in places})
    # (whether the record times never fall along the pool, compared over the column: Arrow
    # orders strings by their UTF-8 bytes, as Python's code points; a null is not regular)
    times = pa.concat_arrays([times, pa.array([m.recorded_at for m in built], type=pa.string())]).take(
        pa.array(order, type=pa.int64()))
    regular = len(times) < 2 or pc.all(pc.fill_null(pc.less_equal(times[:-1], times[1:]), False)).as_py()
    return Pool(ids, texts, recorded, have.__getitem__, at, table.num_rows, bool(regular), work.source._at, domains)


_NONE = object()  # (no value held: a held value may be None)


class Column(Sequence):
    """A pool column's values by position (its texts, ids, record times): a table row's
    (``rows``: each position's, -1 for a record built) read when asked for, a built record's
    held (``held``: position -> value, which may be None: a domain); ``take`` reads some
    positions' in one call, and iterating or slicing reads all of them in one take (a bulk
    import's first consolidate reads them all; a night, a few). Equal to
    a list of its values."""

    def __init__(self, column, rows, held: dict[int, object]):
        self._column, self._rows, self._held, self._all = column, rows, held, None

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        if isinstance(i, slice) or self._all is not None:
            return self._list()[i]
        if i < 0:
            i += len(self)
        found = self._held.get(i, _NONE)
        return found if found is not _NONE else self._column[int(self._rows[i])].as_py()

    def take(self, positions) -> list:
        """The values at ``positions`` (ints), in their order."""
        import numpy as np
        import pyarrow as pa

        if self._all is not None:
            return [self._all[i] for i in positions]
        at = np.asarray(positions, dtype=np.int64).reshape(-1)
        if not len(at):
            return []
        got = self._column.take(pa.array(np.maximum(self._rows[at], 0), type=pa.int64())).to_pylist()
        if self._held:
            for k, i in enumerate(at.tolist()):
                found = self._held.get(i, _NONE)
                if found is not _NONE:
                    got[k] = found
        return got

    def __iter__(self):
        return iter(self._list())

    def __eq__(self, other) -> bool:
        if isinstance(other, Column | list | tuple):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # (a sequence compared by value)

    def _list(self) -> list[str]:
        if self._all is None:
            import numpy as np
            import pyarrow as pa

            got = self._column.take(pa.array(np.maximum(self._rows, 0), type=pa.int64())).to_pylist() \
                if len(self._rows) else []
            for p, text in self._held.items():
                got[p] = text
            self._all = got
        return self._all


def _merged(ids, seqs, built: list) -> object:
    """The canonical order (seq, then id) of the table's ``ids`` (a list, or an Arrow array:
    an id is read only where seqs tie) with their ``seqs``, followed by the ``built`` records
    (sorted so), as positions in that list: the table's rows are in canonical order already
    (a snapshot is written so; checked), each built record goes before the first row after
    it. Sorted whole when the rows are not in that order."""
    import numpy as np

    n = len(ids)
    seqs = np.asarray(seqs, dtype=np.int64)
    ties = np.flatnonzero(seqs[1:] == seqs[:-1])

    def id_at(i: int) -> str:
        found = ids[i]
        return found if isinstance(found, str) else found.as_py()

    if (seqs[1:] < seqs[:-1]).any() or any(id_at(i) >= id_at(i + 1) for i in ties.tolist()):
        every = (ids if isinstance(ids, list) else ids.to_pylist()) + [m.id for m in built]
        keys = np.concatenate([seqs, np.array([m.seq for m in built], dtype=np.int64)])
        return np.lexsort((np.array(every, dtype=str), keys)) if every else np.zeros(0, dtype=np.int64)
    place = []
    for m in built:
        j = int(seqs.searchsorted(m.seq, "left"))
        while j < n and seqs[j] == m.seq and id_at(j) < m.id:
            j += 1
        place.append(j)
    return np.insert(np.arange(n, dtype=np.int64), place, n + np.arange(len(built), dtype=np.int64))


class Member(NamedTuple):
    """A near-duplicate group's member as its table row has it: what grouping, ordering and
    comparing read (consolidate's ``_group_duplicates``); the record is built when it is the
    nearest older one of a new record."""

    id: str
    seq: int
    occurred_at: str
    recorded_at: str
    kind: str
    outcome: str | None
    text: str
    status: str
    level: str
    domain: str | None
    subject: str | None


def members(work, subjects: set[str], keys: set[tuple] | None = None) -> list[Member]:
    """The active raw members on ``subjects`` of the table's rows (those of the groups
    ``keys`` only: (domain, "" for none; subject)), but for the records ``work`` lists (the
    run's listings scan those, as they are now), as ``Member`` values."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = work.source.table
    rows = np.flatnonzero(group_rows(table, subjects))
    if keys is not None and len(rows):  # (a subject of other domains' groups: not made into values)
        at = pa.array(rows, type=pa.int64())
        domains = pc.fill_null(table.column("domain").take(at), "").to_pylist()
        named = table.column("subject").take(at).to_pylist()
        rows = rows[[k for k, key in enumerate(zip(domains, named, strict=True)) if key in keys]]
    listed = work.listed()
    return [m for m in members_at(table, rows) if m.id not in listed]


def members_at(table, rows) -> list[Member]:
    """The table's ``rows`` as ``Member`` values, in that order."""
    import pyarrow as pa

    at = pa.array(rows, type=pa.int64())
    columns = [table.column(name).take(at).to_pylist() for name in Member._fields]
    return list(map(Member._make, zip(*columns, strict=True)))


def unlisted(work, rows):
    """Which of the table's ``rows`` hold records ``work`` does not list (``members`` leaves
    the others out: the run's listings scan them, as they are now), as a boolean array."""
    import numpy as np

    at = work.source._at(list(work.listed()))
    listed = np.zeros(work.source.table.num_rows, dtype=bool)
    listed[at[at >= 0]] = True
    return ~listed[rows]


class Axes(NamedTuple):
    """A salience as its columns have it (``model.Salience``'s fields, in its order)."""

    importance: float
    urgency: float
    risk: float
    novelty: float
    emotion: float
    recurrence: float
    actionability: float


class Short(NamedTuple):
    """An active short-term raw record as its table row has it: what promote reads of it
    (``lifecycle.rules.promotion``)."""

    id: str
    seq: int
    occurred_at: str
    domain: str | None
    subject: str | None
    text: str
    confidence: float
    mention_count: int
    salience: Axes
    conflicts_with: tuple[str, ...]
    status: str
    tier: str
    level: str
    kind: str
    expires_at: str | None


def _short_rows(table):
    """The rows of the table's active short-term raw records."""
    import numpy as np
    import pyarrow.compute as pc

    return np.flatnonzero(mask(pc.and_(pc.and_(pc.equal(table.column("status"), "active"),
                                                pc.equal(table.column("tier"), "short")),
                                        pc.equal(table.column("level"), "raw"))))


def promotable(work, now: str, config):
    """The rows (ascending) of the table's active short-term raw records that promote keeps
    (``lifecycle.rules.promotion``), tested over the columns: protected; due and of a durable kind;
    or confidence at least ``min_confidence`` with ``min_occurrences`` mentions or a
    composite salience at ``salience_floor``. ``salience.composite`` itself, given the
    columns as arrays: the same floating-point operations in the same order."""
    from types import SimpleNamespace

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .model import AXES, DURABLE_KINDS
    from .salience import composite

    table = work.source.table
    rows = _short_rows(table)
    if not len(rows):
        return rows
    c, threshold = config["consolidate"], config["salience"]["protect_threshold"]

    def floats(column):
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)

    def flags(array):
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)

    taken = pa.array(rows, type=pa.int64())
    salience = table.column("salience").take(taken).combine_chunks()
    axes = SimpleNamespace(**{a: floats(salience.field(a)) for a in AXES})
    confidence = floats(table.column("confidence").take(taken))
    mentions = np.asarray(table.column("mention_count").take(taken).to_numpy(zero_copy_only=False))
    protected = (axes.risk >= threshold) | (axes.importance >= threshold)
    expires = table.column("expires_at").take(taken)
    due = flags(pc.fill_null(pc.and_(pc.not_equal(expires, ""), pc.less_equal(expires, now)), False))
    belief = flags(pc.is_in(table.column("kind").take(taken), value_set=pa.array(DURABLE_KINDS)))
    earned = (confidence >= c["min_confidence"]) & (
        (mentions >= c["min_occurrences"]) | (composite(axes, confidence, config["salience"]["weights"]) >= c["salience_floor"]))
    return rows[protected | (due & belief) | earned]


def shorts(work, rows=None) -> list[Short]:
    """The table's active short-term raw records (or those at ``rows``, ascending), but for
    those ``work`` lists (promote's scan reads them as they are now), as ``Short`` values in
    canonical order."""
    table = work.source.table
    rows = _short_rows(table) if rows is None else rows
    listed = work.listed()

    def column(name):
        return table.column(name).take(rows)

    axes = column("salience").combine_chunks().flatten()
    saliences = map(Axes._make, zip(*(a.to_pylist() for a in axes), strict=True))
    values = {name: column(name).to_pylist() for name in Short._fields if name not in ("salience", "conflicts_with")}
    values["salience"] = saliences
    values["conflicts_with"] = (tuple(c or ()) for c in column("conflicts_with").to_pylist())
    made = map(Short._make, zip(*(values[name] for name in Short._fields), strict=True))
    return [m for m in made if m.id not in listed]
