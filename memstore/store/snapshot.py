"""Parquet snapshots of the state at log position N: a cache for fast open.

``snapshots/state-<seq>.parquet`` holds one row per memory; its key-value metadata
records the format, the seq, where in the log the tail starts, the row count, a
checksum of the file's bytes before its footer (``data_checksum``, checked on every open;
each page also carries a CRC) and the anchor of the log line at its seq with the sizes of
the partitions before it (store/anchor.py: another store's snapshot, or one of a log since
truncated or replaced, is not used). Deleting snapshots changes no answer.
pyarrow is imported here only (its import slows start-up).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ..codec import dumps, loads
from ..model import AXES
from ..schema import STAGES
from ..state import Lazy, OnDemand, Partial, State
from . import idorder
from .fs import ensure_dir, read_regular, write_atomic
from .layout import COMPANIONS, SNAPSHOT_NAME, Layout

FORMAT = "memstore-snapshot/8"  # /2: retired; /3: rows checksum, log anchor; /4: against, author;
# /5: agent, notes, session, turn; /6: the checksum of the columns, page CRCs; /7: the checksum
# of the file's bytes before its footer; /8: invalid_periods (an older snapshot lacks them, so
# it is not read: the state is folded from the log instead)
KEEP = 2  # older snapshots are removed after a new one is written


def _schema():
    import pyarrow as pa

    s, i, f = pa.string(), pa.int64(), pa.float64()
    return pa.schema([
        ("id", s), ("key", s), ("kind", s), ("text", s), ("subject", s), ("domain", s),
        ("actors", pa.list_(s)), ("outcome", s), ("occurred_at", s), ("precision", s),
        ("recorded_at", s), ("time_buckets", pa.list_(s)), ("tier", s), ("status", s),
        ("level", s), ("salience", pa.struct([(a, f) for a in AXES])), ("confidence", f),
        ("source", s), ("valid_from", s), ("invalid_at", s), ("invalid_periods", pa.list_(s)), ("superseded_by", s),
        ("derived_from", pa.list_(s)), ("recall_count", i), ("last_recalled_at", s),
        ("mention_count", i), ("last_reinforced_at", s), ("expires_at", s), ("seq", i),
        ("merged_into", s), ("abstracted_by", s), ("conflicts_with", pa.list_(s)),
        ("reconciled_with", pa.list_(s)), ("reason", s), ("direction", s),
        ("retired", pa.bool_()), ("against", pa.list_(s)), ("author", s), ("agent", s), ("session", s), ("turn", i),
    ])


def rows_checksum(rows: list[dict]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(dumps(row))
        h.update(b"\n")
    return h.hexdigest()


def snapshot_files(layout: Layout) -> list[tuple[int, Path]]:
    try:
        names = os.listdir(layout.snapshots_dir)
    except FileNotFoundError:
        return []
    found = [(int(m.group(1)), layout.snapshots_dir / n) for n in names if (m := SNAPSHOT_NAME.match(n))]
    return sorted(found)


def parquet_bytes(state: State, position: tuple[str, int] | None = None, anchor: dict | None = None,
                  table=None) -> bytes:
    """The state's rows as Parquet, with the snapshot metadata attached; ``table``: the rows
    already taken (``state_table``, or a caller's share of them, ``store.visible``)."""
    return _written(state, position, anchor, table)[0]


def state_blocks(state: State, size: int = 65_536):
    """The state's records in canonical order (``State.ordered``), about ``size`` at a time:
    from ``state_table``'s rows for a state opened partially from a snapshot (the records
    built a block at a time, each block let go before the next: a whole export does
    not hold every record), else from the records held."""
    if _rows_of(state) is not None:
        yield from table_blocks(state_table(state), size)
        return
    records = state.ordered()
    for at in range(0, len(records), size):
        yield records[at:at + size]


def table_blocks(table, size: int):
    """The records of a snapshot's table, ``size`` rows at a time, each block built as it is
    asked for."""
    for at in range(0, table.num_rows, size):
        yield _memories(table.slice(at, size))


def _written(state: State, position, anchor, table=None) -> tuple[bytes, int, str]:
    """(``parquet_bytes``, its row count, its data checksum). The checksum is of the file's bytes before its
    footer (``data_checksum``): the row group is written, its bytes hashed, then the
    metadata added to the footer, in one pass (a write, a read back and a second write, and
    an Arrow stream of the columns hashed, took most of a snapshot's time)."""
    import pyarrow.parquet as pq

    table = state_table(state) if table is None else table
    meta = {
        "format": FORMAT,
        "seq": state.seq,
        "at": state.at,
        "position": list(position) if position else None,
        "rows": table.num_rows,
        "checksum": None,
        "anchor": anchor,
        "keys": dict(sorted(state.keys.items())),
        "notes": dict(sorted(state.notes.items())),
        "marks": dict(sorted(state.marks.items())),
    }
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, table.schema, compression="zstd", write_page_checksum=True) as writer:
        writer.write_table(table)
        with buf.getbuffer() as written:
            meta["checksum"] = hashlib.sha256(written[:buf.tell()]).hexdigest()
        writer.add_key_value_metadata({"memstore": dumps(meta)})
    data = buf.getvalue()
    if data_checksum(data) != meta["checksum"]:  # (the writer held back bytes it wrote later)
        raise RuntimeError("the snapshot's bytes before its footer changed as the footer was written")
    return data, table.num_rows, meta["checksum"]


def data_checksum(data) -> str | None:
    """sha256 (hex) of a Parquet file's bytes before its footer: its magic and every column
    chunk, page headers (with their CRCs) and pages; None when it has no Parquet footer."""
    n = len(data)
    if n < 12 or bytes(data[:4]) != b"PAR1" or bytes(data[-4:]) != b"PAR1":
        return None
    footer = int.from_bytes(data[-8:-4], "little")
    if footer > n - 12:
        return None
    return hashlib.sha256(memoryview(data)[:n - 8 - footer]).hexdigest()


def state_table(state: State):
    """The state's rows as the snapshot's table, in canonical order (``State.ordered``). A
    state opened partially from a snapshot (``state.Partial`` over its table, as
    ``take_snapshot`` opens it) takes the rows of the records it did not build from that
    table as they are, and builds rows only for those it did: the same table, without a
    million records built and turned back into columns (most of a snapshot's time)."""
    rows = _rows_of(state)
    if rows is not None:
        return rows.merged(list(state.memories.built()))
    return _table(state.ordered())


def release_unused() -> None:
    """Hand the memory Arrow has freed back to the system: its allocator keeps it otherwise."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def opened_partially(state: State) -> bool:
    """Whether the state was opened from a snapshot's table with rows left unbuilt (``keep``,
    or a ``state.Lazy`` not listed yet)."""
    return _rows_of(state) is not None


def _rows_of(state: State) -> _Rows | None:
    """The snapshot table a state opened partially from a snapshot builds its records from
    (None once a ``state.Lazy`` has built them all)."""
    memories = state.memories
    return memories.source if isinstance(memories, OnDemand) and isinstance(memories.source, _Rows) else None


def _table(memories: list):
    """The records as the snapshot's table, built column by column from the records (the
    same table ``state_rows`` as dicts would give, without a dict per row, which
    took most of a snapshot's time and memory). The fields are read one record at a time, all
    at once (``attrgetter``), then turned into columns: a pass over a million records per
    field cost twice as much."""
    from operator import attrgetter

    import pyarrow as pa

    schema = _schema()
    names = [f.name for f in schema]
    columns = list(zip(*map(attrgetter(*names), memories), strict=True)) if memories else [()] * len(names)
    arrays = []
    for f, values in zip(schema, columns, strict=True):
        if f.name == "salience":
            axes = list(zip(*(tuple(getattr(v, a) for a in AXES) for v in values), strict=True)) if values \
                else [()] * len(AXES)
            arrays.append(pa.StructArray.from_arrays([pa.array(a, type=pa.float64()) for a in axes],
                                                     fields=list(f.type)))
        else:  # (a list field's tuples are sequences to Arrow)
            arrays.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


class Prior(NamedTuple):
    """The snapshot a state was opened from (``read_snapshot(keep=)`` or ``lazy``), as a
    ``Sidecars`` hook is told of it: its path, its data checksum and its table. A sidecar
    of it that can be believed may be grown rather than made again."""

    path: Path
    checksum: str | None
    table: object


# A hook that writes derived files beside a snapshot just written: ``sidecars(snapshot, table,
# checksum, prior)``, given the snapshot's path, its table and data checksum, and the snapshot
# its state was opened from (a ``Prior``, or None). The store layer composes them without
# knowing what they hold (the night's caches: memstore.nightcache.snapshots); each file must be
# one the layout names beside a snapshot (``layout.COMPANIONS``), so that it goes when the
# snapshot goes. The hook leaves out a file it cannot write; an error it raises is the caller's.
Sidecars = Callable[[Path, object, str, Prior | None], None]


def write_snapshot(layout: Layout, state: State, position: tuple[str, int] | None,
                   sidecars: Sidecars | None = None) -> tuple[Path, int]:
    """(the snapshot written, its row count). Beside it go the order of its ids
    (``store.idorder``; left out when it cannot be written: an open then sorts the ids) and
    the files ``sidecars`` writes (``Sidecars``; None: none)."""
    ensure_dir(layout.snapshots_dir)
    from .anchor import anchor_for

    path = layout.snapshots_dir / f"state-{state.seq:012d}.parquet"
    table = state_table(state)
    data, rows, checksum = _written(state, position, anchor_for(layout, state.seq), table)
    write_atomic(path, data)
    source = getattr(state.memories, "source", None)
    _write_order(path, table, source)
    if sidecars is not None:
        origin = getattr(source, "origin", None)
        sidecars(path, table, checksum, None if origin is None else Prior(*origin, source.table))
    ours = [p for _seq, p in snapshot_files(layout) if p.is_file()]  # never a directory or FIFO
    for old in ours[:-KEEP]:
        old.unlink(missing_ok=True)
        drop_companions(old)
    return path, rows


def companions(snapshot: Path) -> tuple[Path, ...]:
    """The derived files written beside a snapshot, which go when it goes, by the names the
    layout gives them (``layout.COMPANIONS``): its id order (``store.idorder``) and what a
    ``Sidecars`` hook writes (its update pool's keys, its near-duplicate groups)."""
    return tuple(snapshot.with_suffix(suffix) for suffix in COMPANIONS)


def drop_companions(snapshot: Path) -> None:
    """Remove a snapshot's ``companions`` (one that will not go is not read, and verify
    reports it)."""
    for path in companions(snapshot):
        _drop(path)


def _write_order(path: Path, table, source) -> None:
    """The order of the snapshot's ids beside it (``store.idorder``): from the order of the
    snapshot it was taken from when it has one (its rows in place, the rows added merged in),
    else sorted. Left out when the ids are not all 16 characters or it cannot be written."""
    import numpy as np

    from ..errors import StoreError

    ids = id_array(table)
    if ids is None:
        _drop(idorder.path_of(path))
        return
    order = idorder.grown(source.ids, source.order, ids) if isinstance(source, _Rows) else None
    if order is None:
        order = np.argsort(ids, kind="stable")
    try:
        idorder.write(path, order)
    except (OSError, StoreError):
        _drop(idorder.path_of(path))


def _drop(path: Path) -> None:
    """Remove a derived file that could not be written (one that will not go is not read)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def by_id(table, _marks):
    """``keep`` for a caller that reads records only by id or caller key (a forget, a policy
    added or retired, a fact superseded, a snapshot taken): no snapshot row is built up
    front but the retired abstractions, which a person's resolution in the log after the
    snapshot brings back (``fold._reinstate`` looks for them by scanning: a record not built
    would be missed, and read later as still retired); any other record is built when its
    id is asked for (``state.Partial``)."""
    import numpy as np
    import pyarrow.compute as pc

    retired = pc.fill_null(table.column("retired"), False).to_numpy(zero_copy_only=False)
    return np.asarray(retired, dtype=bool)


def read_snapshot(path: Path, keep=None, lazy: bool = False) -> tuple[State, dict]:
    """The state a snapshot holds and its metadata; ValueError (or any pyarrow error) when it is
    damaged (a page fails its CRC), of another format, or its rows do not match their checksum.

    ``keep(table, marks)``: a boolean mask of the rows to build now (a stage that scans few of
    a million records), given the table and the snapshot's lifecycle watermarks; the state's
    records are then a ``state.Partial`` that builds any other row its id is asked for.
    ``lazy`` (without ``keep``): the records are a ``state.Lazy``, every row built when it is
    first read. A table whose ids cannot be looked up so is built whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = read_regular(path)  # a FIFO or directory named like a snapshot: refused, never waited on
    file = pq.ParquetFile(pa.BufferReader(data))
    state, meta = _header(file.metadata.metadata)
    if meta.get("checksum") != data_checksum(data):
        raise ValueError("its bytes do not match the checksum in its metadata")
    # (every page is under that sha256, its CRC too: checking the CRCs again, page by page,
    # was a fifth of reading a million rows)
    table = file.read()
    if not table.schema.equals(_schema()):  # (a footer that decodes the pages as other columns)
        raise ValueError("its columns are not a snapshot's")
    if meta.get("rows") != table.num_rows:
        raise ValueError("its row count does not match its metadata")
    rows = _Rows.of(table, lambda ids: idorder.read(path, ids)) if keep is not None or lazy else None
    if rows is not None:
        rows.origin = (path, meta.get("checksum"))  # (checked above, whichever format)
        import numpy as np

        # (lazy: the retired abstractions, which the fold scans for, as by_id builds them)
        wanted = np.flatnonzero(np.asarray((keep or by_id)(table, dict(state.marks)), dtype=bool))
        state.memories = (Lazy if keep is None else Partial)({m.id: m for m in rows.take(wanted)}, rows)
        return state, meta
    state.memories = {m.id: m for m in _memories(table)}
    if len(state.memories) != table.num_rows:
        raise ValueError("it holds an id twice")
    return state, meta


def id_array(table):
    """The table's ids as a numpy array of 16-byte strings, in row order (a view of the
    column's bytes), or None when one is not the 16 characters every id is."""
    import numpy as np
    import pyarrow as pa

    column = table.column("id").combine_chunks()
    if column.type != pa.string() or column.null_count or column.offset:
        return None
    _validity, offsets, data = column.buffers()
    ends = np.frombuffer(offsets, dtype=np.int32)[:len(column) + 1]
    if len(column) and not (np.diff(ends) == 16).all():
        return None
    return np.frombuffer(data, dtype="S16", count=len(column), offset=int(ends[0])) if len(column) \
        else np.zeros(0, dtype="S16")


class _Rows:
    """A snapshot table's records by id, built when asked for (``state.Partial``'s and ``state.Lazy``'s source)."""

    def __init__(self, table, ids, order):
        self.table, self.ids, self.order = table, ids, order  # ids sorted, and their rows
        self.origin: tuple[Path, str | None] | None = None  # (the snapshot read, its data checksum)

    @classmethod
    def of(cls, table, known=None) -> _Rows | None:
        """None when an id is not the 16 characters every id is (no lookup by sorting then),
        ValueError when one is there twice. ``known(ids)``: the order that sorts the table's
        ids, when it is known and does (``store.idorder``), else None: they are sorted."""
        import numpy as np

        ids = id_array(table)
        if ids is None:
            return None
        order = known(ids) if known is not None else None
        if order is None:
            order = np.argsort(ids, kind="stable")
            ids = ids[order]
            if len(ids) > 1 and (ids[1:] == ids[:-1]).any():
                raise ValueError("it holds an id twice")
        else:  # (checked strictly ascending: distinct)
            ids = ids[order]
        return cls(table, ids, order)

    def merged(self, built: list):
        """The table with the rows of ``built`` (records of its ids, changed or not, and new
        ones) in place of its own, in canonical order: (seq, id), as ``State.ordered`` sorts
        (Arrow compares strings by their UTF-8 bytes, which order as their code points do).
        One take of the rows, in one chunk: a table written in other chunks is cut into other
        pages, other bytes than the fold's."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        n = self.table.num_rows
        at = self._at([m.id for m in built])
        order = np.arange(n, dtype=np.int64)
        order[at[at >= 0]] = n + np.flatnonzero(at >= 0)  # a record built in place of its row
        order = np.concatenate([order, n + np.flatnonzero(at < 0)])  # and those the table lacks
        # (cast: a list read back from Parquet names its items "element", not "item" as
        # built, and the written file's schema says which)
        both = pa.concat_tables([self.table.replace_schema_metadata(None).cast(_schema()), _table(built)])
        keys = both.select(["seq", "id"]).take(order)
        order = order[pc.sort_indices(keys, sort_keys=[("seq", "ascending"), ("id", "ascending")]).to_numpy()]
        return both.take(order).combine_chunks()

    def _at(self, keys: list):
        """The row of each key in the table, -1 where it has none."""
        import numpy as np

        at = np.full(len(keys), -1, dtype=np.int64)
        if not len(self.ids):
            return at
        ok = [i for i, k in enumerate(keys) if isinstance(k, str) and len(k) == 16 and k.isascii()]
        if ok:
            probe = np.array([keys[i].encode() for i in ok], dtype="S16")
            found = np.minimum(np.searchsorted(self.ids, probe), len(self.ids) - 1)
            hit = self.ids[found] == probe
            at[np.array(ok)[hit]] = self.order[found[hit]]
        return at

    def rows_of(self, keys) -> list[int]:
        at = self._at(list(keys))
        return sorted(at[at >= 0].tolist())

    def take(self, rows) -> list:
        return _memories(self.table.take(rows)) if len(rows) else []

    def one(self, key):
        got = self.take(self.rows_of([key]))
        return got[0] if got else None

    def many(self, keys) -> list:
        return self.take(self.rows_of(keys))

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def missing(self, keys: list) -> int:
        """How many of ``keys`` (distinct) are no row's id."""
        return int((self._at(keys) < 0).sum())

    def every(self) -> list:
        """Every row's record, in the table's order (built with the cycle collector paused, as
        ``open.load_state`` builds a state: ``state.acyclic_build``)."""
        from ..state import acyclic_build

        with acyclic_build():
            return _memories(self.table)


def read_header(path: Path) -> tuple[State, dict]:
    """The state a snapshot holds without its records (seq, caller keys, notes, watermarks)
    and its metadata, from its footer alone: its rows are neither read nor checked (they
    cannot change these; `preamble` and `notes` read no record). ValueError as read_snapshot."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return _header(pq.read_metadata(pa.BufferReader(read_regular(path))).metadata)


def _header(metadata) -> tuple[State, dict]:
    """(the state without records, the metadata) from a snapshot's key-value metadata, checked."""
    meta = loads((metadata or {})[b"memstore"])
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"snapshot format {meta.get('format') if isinstance(meta, dict) else None!r} "
                         f"is not this memstore's {FORMAT!r}")
    notes = meta.get("notes") or {}
    if not isinstance(notes, dict) or not all(isinstance(v, dict) and isinstance(v.get("text"), str)
                                              for v in notes.values()):
        raise ValueError("its working-memory notes are not a table of texts")
    marks = meta.get("marks") or {}  # a snapshot written before marks: none (every record is new)
    if not isinstance(marks, dict) or not all(k in STAGES and type(v) is int and 0 <= v <= meta["seq"]
                                              for k, v in marks.items()):
        raise ValueError("its lifecycle watermarks are not stage names with log positions")
    return State(seq=meta["seq"], at=meta["at"], keys=dict(meta["keys"]), notes=dict(notes), marks=dict(marks)), meta


def _memories(table) -> list:
    """The records of a snapshot's table, built column by column (no dict per row). The
    columns are the state's canonical rows, checksummed. Values a column repeats (kinds,
    statuses, times, subjects; saliences) are one object shared by the records that hold
    them, not one each: less to build, and a million records take less memory."""
    from ..model import MEMORY_FIELDS, Salience, memories_from_columns

    tuples = {"actors", "time_buckets", "invalid_periods", "derived_from", "conflicts_with", "reconciled_with",
              "against"}
    columns = []
    for name in MEMORY_FIELDS:
        if name == "salience":
            axes = table.column("salience").combine_chunks().flatten()
            shared: dict[tuple, Salience] = {}
            columns.append([shared.get(k) or shared.setdefault(k, Salience(*v))
                            for v in zip(*(a.to_pylist() for a in axes), strict=True)
                            for k in ((v if 0.0 not in v else (v, tuple(map(repr, v)))),)])
            # (-0.0 equals 0.0, so a tuple holding either is keyed by its text too: they read back apart)
        elif name in tuples:
            columns.append(_tuples(table.column(name)))
        else:
            columns.append(_values(table.column(name)))
    return memories_from_columns(columns)


def _tuples(column) -> list:
    """A list column's values as tuples, a tuple it repeats as one shared object (most lists
    are empty, and actors and time buckets repeat). When the column holds few distinct items,
    each list of up to ``_PACKED`` items is told apart by its items' codes packed into one
    integer (0: the empty list), and each distinct list is built once; longer lists are
    read one by one (every list read one by one was slow)."""
    import numpy as np
    import pyarrow.compute as pc

    column = column.combine_chunks()
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy()
    if not lengths.any():
        return [()] * len(column)
    coded = pc.dictionary_encode(column.flatten())
    values = coded.dictionary.to_pylist()
    if len(values) >= (1 << _BITS) - 1:  # (too many to pack)
        return _read_each(column, np.flatnonzero(lengths), [()] * len(column))
    values.append(None)  # a null item's code below
    codes = coded.indices.fill_null(len(values) - 1).to_numpy(zero_copy_only=False).astype(np.int64) + 1
    offsets = column.offsets.to_numpy()
    starts = offsets[:-1] - offsets[0]
    key = np.zeros(len(column), dtype=np.int64)
    for k in range(_PACKED):  # item k of each list, or 0 past its end
        has = lengths > k
        key |= np.where(has, codes[np.where(has, starts + k, 0)], 0) << (_BITS * k)
    distinct, inverse = np.unique(key, return_inverse=True)
    made = []
    for packed in distinct.tolist():
        items = []
        while packed:
            items.append(values[(packed & ((1 << _BITS) - 1)) - 1])
            packed >>= _BITS
        made.append(tuple(items))
    out = list(map(made.__getitem__, inverse.tolist()))
    # (the keys of longer lists held their first items only)
    return _read_each(column, np.flatnonzero(lengths > _PACKED), out)


def _read_each(column, rows, out: list) -> list:
    """``out`` with the lists at ``rows`` read one by one, a list that repeats one tuple."""
    shared: dict[tuple, tuple] = {}
    if len(rows):
        for i, t in zip(rows.tolist(), map(tuple, column.take(rows).to_pylist()), strict=True):
            out[i] = shared.setdefault(t, t)
    return out


_PACKED = 4  # items of a list told apart by one packed integer (``_tuples``)
_BITS = 15  # bits of an item's code in it: 4 x 15 < 63


def _values(column) -> list:
    """A column's values as Python objects, a value it repeats as one shared object."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_string(column.type) or len(column) < 1024:
        return column.to_pylist()
    column = column.combine_chunks()
    if 4 * len(pc.dictionary_encode(column.slice(0, 4096)).dictionary) > 4096:
        return column.to_pylist()  # mostly distinct (ids, texts): nothing to share
    coded = pc.dictionary_encode(column)
    values = coded.dictionary.to_pylist()
    if 4 * len(values) > len(column):
        return column.to_pylist()
    values.append(None)  # a null's code below
    codes = coded.indices.fill_null(len(values) - 1).to_numpy().tolist()
    return [values[i] for i in codes]


def snapshot_anchor(layout: Layout, meta: dict) -> dict | None:
    """Where this log holds the line of the snapshot's seq, if it is the line the snapshot
    recorded, after partitions of the sizes and mtimes it recorded (one read, one stat each);
    None: the snapshot is not of this log as it is now (another store's, or a partition
    before the tail was truncated or replaced)."""
    from .anchor import locate

    return locate(layout, meta.get("anchor"), meta.get("seq"))
