from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_jsonl, out, safe

HELP = """List log events, oldest first, filtered by op and record time.

The log is the store's only source of truth; this prints it as it is (with
--json, the exact canonical lines)."""

EPILOG = """\b
Examples:
  memstore log --op remember --since 2026-06-01
  memstore log --json --limit 5"""


def run(
    op: Annotated[list[str] | None, typer.Option("--op", help="Only these ops (repeatable).")] = None,
    since: Annotated[str | None, typer.Option(metavar="TIME", help="Only events recorded at or after TIME.")] = None,
    until: Annotated[str | None, typer.Option(metavar="TIME", help="Only events recorded before TIME.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many (the newest).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.access import event_visible, hidden_ids
    from memstore.errors import UsageError
    from memstore.events import summary
    from memstore.fold import HANDLERS
    from memstore.store.transaction import LogView
    from memstore.timeutil import format_ts, parse_instant

    e = env(now)
    lo = format_ts(parse_instant(since, "--since")) if since else None
    hi = format_ts(parse_instant(until, "--until")) if until else None
    ops = set(op or ())
    if unknown := sorted(ops - HANDLERS.keys()):
        raise UsageError(f"--op {unknown[0]!r} is not an op the log records; use one of: {', '.join(HANDLERS)}")
    access = e.access

    def wanted(ev: dict) -> bool:
        return (not ops or ev["op"] in ops) and (lo is None or ev["at"] >= lo) and (hi is None or ev["at"] < hi)

    events = None
    if limit or lo:
        events = _recent(e.layout, wanted, limit, lo) if access is None else _recent_visible(e.layout, wanted,
                                                                                             limit, lo, access)
    if events is None:  # read forwards, printed as read (a --limit holds only the newest)
        hidden = hidden_ids(LogView(e.layout).state(), access) if access is not None else frozenset()
        events = (ev for ev in LogView(e.layout).events() if event_visible(ev, access, hidden) and wanted(ev))
        if limit is not None:
            from collections import deque

            events = deque(events, maxlen=limit)
    if json:
        emit_jsonl(events)
        return
    for ev in events:
        who = f"  [{ev['agent']}]" if ev.get("agent") else ""
        out(safe(f"{ev['seq']:>6}  {ev['at']}  {ev['op']:<10} {summary(ev)}{who}"))


def _recent_visible(layout, wanted, limit: int | None, since: str | None, access):
    """``_recent`` of the events an agent may see (``event_visible``), each record they name
    looked up in the records index and the log after its watermark (``Current.hidden``),
    once: an agent's `log --limit 10` folded the whole state. None: no usable records
    index, one found damaged while read, or an answer too long to hold (the forward read
    decides, as for the owner)."""
    from memstore.access import event_ids, event_visible
    from memstore.index.current import open_current, read_or_fold

    def read():
        current = open_current(layout)
        if current is None:
            return None
        hidden: dict[str, bool] = {}

        def visible(ev: dict) -> bool:
            ids = event_ids(ev)
            if new := [i for i in ids if i not in hidden]:
                out = current.hidden(access, new)
                hidden.update((i, i in out) for i in new)
            return event_visible(ev, access, frozenset(i for i in ids if hidden[i]))

        found = _recent(layout, lambda ev: wanted(ev) and visible(ev), limit, since)
        return found if isinstance(found, list) else None  # (a long answer: read forwards)

    return read_or_fold(read, lambda: None)


KEEP = 32 << 20  # bytes of log lines an answer read from the log's end holds as events (~2x that in
# memory); a longer answer is read again forwards


def _recent(layout, wanted, limit: int | None, since: str | None):
    """The newest ``limit`` wanted events (or all since ``since``), oldest first, read from
    the log's end: a --limit or --since costs what it returns. Events of up to ``KEEP``
    bytes of lines are held as found; a longer answer is only counted on the way back, then
    read forwards from where its oldest line begins and printed as it is read, so its memory
    does not grow with it. None: the log is not regular there, and the caller reads it
    forwards (memstore.store.backwards)."""
    from memstore.store.backwards import Irregular, newest_first, oldest_first

    found: list[dict] | None = []
    where: list = []  # (partition, byte offset, length) of the line just read
    count = first = last = held = 0
    start = None  # where the answer's oldest line is
    try:
        for ev in newest_first(layout, stop_month=since[:7] if since else None, where=where):
            last = last or ev["seq"]
            if wanted(ev):
                count, first, start = count + 1, ev["seq"], tuple(where)
                held += where[2]
                if found is not None and held <= KEEP:
                    found.append(ev)
                else:
                    found = None  # (counted from here on, not held)
                if limit is not None and count == limit:
                    break
    except Irregular:
        return None
    except OSError:
        return None  # the forward read reports it as it always did
    if found is not None:
        found.reverse()
        return found
    return (ev for ev in oldest_first(layout, start, first, last) if wanted(ev))
