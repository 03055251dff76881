"""The whole state as a table, as a caller may read it: what `export` writes.

An agent's export holds the records its grants let it read, each with its links to
records it may not read left out (``access.redacted``), and only its own working notes.
Folding the whole log for it built every record at once;
here the snapshot's table (``snapshot.state_table``) is filtered by domain, and only the
rows that link to a hidden record are built and redacted, then put back in place. The
rows come out in canonical order as the state's (``State.ordered``), so every format is
the one the fold's records give. Markdown is written from the table a block at a time.
"""

from __future__ import annotations

from ..access import LINK_FIELDS, LINK_LISTS, redacted
from ..model import LEVELS
from ..state import State
from .snapshot import _memories, _Rows, state_table, table_blocks

BLOCK = 65_536  # records built at a time


def readable_rows(table, access):
    """A boolean array: whether ``access`` may read each row's record (the owner: all)."""
    import numpy as np
    import pyarrow.compute as pc

    if access is None:
        return np.ones(table.num_rows, dtype=bool)
    domains = table.column("domain").combine_chunks().dictionary_encode()
    allowed = np.array([access.can_read(d) for d in domains.dictionary.to_pylist()] + [access.can_read(None)],
                       dtype=bool)
    codes = pc.fill_null(domains.indices, len(domains.dictionary)).to_numpy(zero_copy_only=False)
    return allowed[codes]


def hidden_of(state: State, access) -> frozenset[str]:
    """``access.hidden_ids`` of a state, from its snapshot table's domain column when it was
    opened partially from one: a record's domain never changes, so the table's rows and the
    records built since (new ones, or changed) say it all, with no table merged."""
    import pyarrow as pa

    from ..access import hidden_ids
    from .snapshot import _rows_of

    rows = _rows_of(state)
    if access is None or rows is None:
        return hidden_ids(state, access)
    table = rows.table.select(["id", "domain"])
    listed = table.column("id").filter(pa.array(~readable_rows(table, access))).to_pylist()
    return frozenset(listed) | {m.id for m in state.memories.built() if not access.can_read(m.domain)}


def caller_table(state: State, access, agent: str | None):
    """(the table of the records ``access`` may read, redacted; the state's keys, notes and
    marks as the caller sees them) or None when the table's ids cannot be looked up
    (``snapshot._Rows``: the caller folds)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = state_table(state)
    if access is None:  # (the state's header only: its table can be let go once this one is taken)
        return table, State(keys=dict(state.keys), notes=dict(state.notes), marks=dict(state.marks),
                            seq=state.seq, at=state.at)
    mask = readable_rows(table, access)
    hidden = frozenset(table.column("id").filter(pa.array(~mask)).to_pylist())
    seen = State(keys={k: i for k, i in state.keys.items() if i not in hidden},
                 notes={a: n for a, n in state.notes.items() if a == agent}, marks=dict(state.marks),
                 seq=state.seq, at=state.at)
    if not hidden:
        return table, seen
    visible = table.filter(pa.array(mask))
    probe = pa.array(sorted(hidden), type=pa.string())
    links = np.zeros(visible.num_rows, dtype=bool)
    for name in LINK_LISTS:
        column = visible.column(name).combine_chunks()
        held = pc.fill_null(pc.is_in(pc.list_flatten(column), value_set=probe), False).to_numpy(zero_copy_only=False)
        links[pc.list_parent_indices(column).to_numpy(zero_copy_only=False)[held]] = True
    for name in LINK_FIELDS:
        links |= pc.fill_null(pc.is_in(visible.column(name), value_set=probe), False).to_numpy(zero_copy_only=False)
    if not links.any():
        return visible, seen
    rows = _Rows.of(visible)
    if rows is None:
        return None
    return rows.merged([redacted(m, hidden) for m in _memories(visible.filter(pa.array(links)))]), seen


def blocks(table):
    """The table's records, ``BLOCK`` rows at a time (``snapshot.table_blocks``)."""
    return table_blocks(table, BLOCK)


def markdown_sections(table):
    """``markdown.markdown_page``'s sections of the table's records: by level in the model's
    order, then by kind in code point order (Arrow sorts strings by their UTF-8 bytes, in
    the same order), each kind's records in the table's order, ``BLOCK`` at a time."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    level = pc.fill_null(pc.index_in(table.column("level"), value_set=pa.array(LEVELS)), -1)
    level = level.to_numpy(zero_copy_only=False)
    kinds = table.column("kind").combine_chunks().dictionary_encode()
    kind, names = kinds.indices.to_numpy(zero_copy_only=False), kinds.dictionary
    rank = np.empty(len(names), dtype=np.int64)
    rank[pc.sort_indices(names).to_numpy()] = np.arange(len(names))
    for n, name in enumerate(LEVELS):
        rows = np.flatnonzero(level == n)
        if len(rows):
            yield name, len(rows), _kinds(table, rows, kind, names, rank, BLOCK)


def _kinds(table, rows, kind, names, rank, size):
    import numpy as np

    for code in sorted(np.unique(kind[rows]).tolist(), key=rank.__getitem__):
        mine = rows[kind[rows] == code]
        yield names[code].as_py(), (_memories(table.take(mine[at:at + size])) for at in range(0, len(mine), size))
