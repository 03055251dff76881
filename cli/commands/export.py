from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import NowOpt, env
from ..output import is_tty, write_bytes

HELP = """Export the current state (or with --history, the whole event log).

jsonl writes one canonical record per line in creation order; parquet writes
the same rows as a Parquet file (needs --output unless stdout is a pipe);
markdown writes a readable page grouped by ladder level and kind. With
--history, the log's events are written as they are, which `memstore import`
replays into another store."""

EPILOG = """\b
Examples:
  memstore export > state.jsonl
  memstore export --format parquet --output state.parquet
  memstore export --format markdown > memory.md
  memstore export --history > events.jsonl
  memstore export --id m3f1c0e9a2b4d6e8 --id ticket-1423"""


HISTORY_BLOCK = 65_536  # events of --history written at a time


def run(
    format: Annotated[str, typer.Option("--format", help="jsonl, parquet or markdown.")] = "jsonl",
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE",
                                                help="Write here instead of stdout (a file is replaced "
                                                     "only once the export is whole).")] = None,
    history: Annotated[bool, typer.Option("--history", help="The full event log instead of the state.")] = False,
    ids: Annotated[list[str] | None, typer.Option("--id", metavar="ID|KEY",
                                                  help="Only these records (repeatable; jsonl).")] = None,
    now: NowOpt = None,
) -> None:
    from memstore.access import event_visible
    from memstore.codec import dumps_lines
    from memstore.store.open import load_state
    from memstore.store.transaction import LogView

    if format not in ("jsonl", "parquet", "markdown"):
        raise UsageError(f"--format {format!r} is not one of: jsonl, parquet, markdown")
    e = env(now)
    if ids:
        if history or format != "jsonl":
            raise UsageError("--id exports records as jsonl; drop --history and --format")
        data = _records(e, ids)
    elif history:
        if format != "jsonl":
            raise UsageError("--history is written as jsonl; drop --format parquet")
        access = e.access
        hidden = frozenset()
        if access is not None:  # (told from the snapshot's domain column: no million records built)
            from memstore.store.snapshot import by_id
            from memstore.store.visible import hidden_of

            hidden = hidden_of(load_state(e.layout, keep=by_id)[0], access)
        visible = (ev for ev in LogView(e.layout).events() if event_visible(ev, access, hidden))
        _write_pieces((dumps_lines(block) for block in _batches(visible, HISTORY_BLOCK)), output)
        return
    else:
        # the snapshot's rows for what the log after it did not touch (``store.snapshot.by_id``),
        # filtered and redacted for an agent as a table (``store.visible``): no million
        # records built at once
        from memstore.store.snapshot import by_id, opened_partially, parquet_bytes, release_unused
        from memstore.store.visible import caller_table

        if format == "parquet" and output is None and is_tty():
            raise UsageError("Parquet is binary; pass --output FILE or redirect stdout")
        state, _ = load_state(e.layout, keep=by_id)
        partial = opened_partially(state)
        got = caller_table(state, e.access, e.agent) if partial else None
        if got is None:  # no snapshot (the records are built), or ids the table cannot look up
            pieces = _from_records(load_state(e.layout)[0] if partial else state, e, format)
        else:
            del state  # its snapshot table, now that the caller's is taken
            release_unused()
            table, seen = got
            pieces = [parquet_bytes(seen, table=table)] if format == "parquet" else _pieces(format, table, e.now)
        _write_pieces(pieces, output)
        return
    _write_pieces([data], output)


def _pieces(format: str, table, now: str):
    """The whole export as pieces of bytes, a block of records at a time (a whole export
    held every record and all its lines at once)."""
    from memstore.codec import dumps_lines
    from memstore.model import memory_to_dict
    from memstore.store.visible import blocks, markdown_sections

    if format == "markdown":
        from memstore.markdown import markdown_page

        return (piece.encode() for piece in markdown_page(table.num_rows, now, markdown_sections(table)))
    return (dumps_lines(memory_to_dict(m) for m in block) for block in blocks(table))


def _batches(items, size: int):
    """``items`` in lists of ``size`` (the last one shorter)."""
    from itertools import islice

    items = iter(items)
    while batch := list(islice(items, size)):
        yield batch


def _write_pieces(pieces, output: Path | None) -> None:
    """Write the pieces to stdout or to --output. A regular file is written beside it, then
    renamed over it: an export stopped half way (an error, Ctrl-C) would otherwise leave a
    shorter file of whole lines, which imports without a word; the file given stays as it
    was. A device, a pipe or a link is written in place."""
    import os

    if output is None:
        for data in pieces:
            write_bytes(data)
        return
    in_place = output.is_symlink() or (output.exists() and not output.is_file())
    target = output if in_place else output.with_name(f".{output.name}.{os.getpid()}.part")
    try:
        try:
            with open(target, "wb") as sink:
                if target != output and output.exists():  # (the file's mode kept: an export may be private)
                    os.chmod(sink.fileno(), output.stat().st_mode & 0o7777)
                for data in pieces:
                    sink.write(data)
            if target != output:
                os.replace(target, output)
        finally:
            if target != output:
                target.unlink(missing_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write --output {output}: {exc.strerror}") from None


def _from_records(state, e, format: str):
    """The export from the records themselves, as pieces of bytes (JSON lines a block at a
    time): for a store without a snapshot, whose state the open folded whole."""
    from memstore.access import hidden_ids, readable, redacted
    from memstore.codec import dumps_lines
    from memstore.model import memory_to_dict
    from memstore.store.snapshot import parquet_bytes, state_blocks

    if e.access is not None:  # a domain the agent has no grant for is not exported to it
        hidden = hidden_ids(state, e.access)
        state = state.copy()
        state.memories = {i: redacted(m, hidden) for i, m in state.memories.items() if readable(e.access, m)}
        state.notes = {a: n for a, n in state.notes.items() if a == e.agent}
        state.keys = {k: i for k, i in state.keys.items() if i not in hidden}
    if format == "markdown":
        from memstore.markdown import render_markdown

        yield render_markdown(state.ordered(), e.now).encode()
    elif format == "jsonl":
        for block in state_blocks(state):
            yield dumps_lines(memory_to_dict(m) for m in block)
    else:
        yield parquet_bytes(state)


def _records(e, refs: list[str]) -> bytes:
    """The named records, one line each in the order given, as the whole export has them:
    from the records index and the log after it when it can answer (no fold), else the fold.
    A reference that names no record (or one the agent may not read) is a NotFound."""
    from memstore.access import hidden_ids, linked_ids, readable, redacted
    from memstore.codec import dumps_lines
    from memstore.errors import NotFound
    from memstore.index.current import open_current, read_or_fold
    from memstore.model import memory_to_dict
    from memstore.store.open import load_state

    current, named, state = open_current(e.layout), None, None
    if current is not None:
        named = read_or_fold(lambda: {ref: current.resolve(ref, e.layout) for ref in refs}, lambda: None)
    if named is None:  # no usable records index: the fold answers
        state = load_state(e.layout)[0]
        named = {ref: state.resolve(ref) for ref in refs}
    found = []
    for ref in refs:
        m = named[ref]
        if m is None or not readable(e.access, m):
            raise NotFound(f"no memory with id or key {ref!r}; list ids with `memstore export` or `memstore log`")
        found.append(m)
    if e.access is None:
        hidden = frozenset()
    elif state is not None:
        hidden = hidden_ids(state, e.access)
    else:
        hidden = current.hidden(e.access, [i for m in found for i in linked_ids(m)])
    return dumps_lines(memory_to_dict(redacted(m, hidden)) for m in found)
