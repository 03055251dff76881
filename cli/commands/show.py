from typing import Annotated

import typer

from memstore.errors import NotFound

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, out, safe

HELP = """Show one memory (by id or --key value) and the events that touched it.

Lists every field of the record as the log's fold has it now, followed by the
log events that created or changed it, oldest first. --explain adds the
breakdown of its effective salience at --now: each axis with its weight,
half-life and decay, the confidence gate, the recall boost and the floor
(memstore(7))."""

EPILOG = """\b
Examples:
  memstore show m3f1c0e9a2b4d6e8
  memstore show ticket-1423 --json
  memstore show m3f1c0e9a2b4d6e8 --explain --now 2026-12-01"""


def run(
    ref: Annotated[str, typer.Argument(metavar="ID|KEY", help="A memory id or a caller --key.")],
    explain: Annotated[bool, typer.Option("--explain", help="Break down its effective salience at --now.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.access import event_visible, hidden_ids, readable, redacted
    from memstore.events import summary, touched_ids
    from memstore.model import memory_to_dict
    from memstore.store.open import load_state
    from memstore.store.transaction import LogView

    e = env(now)
    from memstore.index.current import read_or_fold

    found = read_or_fold(lambda: _from_index(e.layout, ref, e.access), lambda: None)
    if found is None:  # no usable records index: the fold answers, as it always did
        state, _reader = load_state(e.layout)
        memory = state.resolve(ref)
        if memory is not None and not readable(e.access, memory):
            memory = None
        hidden = hidden_ids(state, e.access) if memory is not None else frozenset()
        events = [ev for ev in LogView(e.layout).events() if memory is not None and memory.id in touched_ids(ev)]
    else:
        memory, events, hidden = found
    if memory is None:  # (a domain the agent has no grant for: as if it did not exist)
        raise NotFound(f"no memory with id or key {ref!r}; list ids with `memstore export` or `memstore log`")
    events = [ev for ev in events if event_visible(ev, e.access, hidden)]
    record = memory_to_dict(redacted(memory, hidden))
    why = None
    if explain:
        from memstore.salience import explain as explain_salience

        why = explain_salience(memory, e.now, e.config)
    if json:
        emit_json({"memory": record, "events": events} | ({"explain": {"at": e.now, **why}} if why else {}))
        return
    for name, value in record.items():
        if name == "salience":
            value = " ".join(f"{k}={v:g}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(value) if value else "-"
        elif value is None:
            value = "-"
        out(safe(f"{name:<19}{value}"))
    out("events")
    for ev in events:
        who = f"  [{ev['agent']}]" if ev.get("agent") else ""
        out(safe(f"  {ev['seq']:>6}  {ev['at']}  {ev['op']:<10} {summary(ev)}{who}"))
    if why:
        _print_explain(why, e.now)


def _from_index(layout, ref: str, access):
    """(record, the events touching it, the ids it links to that the caller may not read)
    from the records index (each record's event seqs) and those lines of the log: no fold,
    no scan. None: the index cannot answer (missing, behind by much, or not this log's), a
    line it names is not that event (damage: the fold answers and says so), or the log is
    not regular there."""
    from memstore.access import linked_ids, readable
    from memstore.index.current import open_current

    current = open_current(layout)
    if current is None:
        return None
    memory = current.resolve(ref, layout)
    if memory is None or not readable(access, memory):
        return None, [], frozenset()
    events = current.events(memory.id)
    if events is None:
        return None  # out of order: the forward read's rules decide what it says
    hidden = current.hidden(access, [*linked_ids(memory), *(i for ev in events for i in linked_ids(ev))])
    return memory, events, hidden


def _print_explain(why: dict, now: str) -> None:
    out(f"salience at {now}: {why['days_since_use']:g} days since last use"
        + ("; protected (no decay)" if why["protected"] else ""))
    out(f"  {'axis':<14}{'value':>7}{'weight':>8}{'half-life':>11}{'decay':>10}{'decayed':>10}")
    for axis, a in why["axes"].items():
        out(f"  {axis:<14}{a['value']:>7.3f}{a['weight']:>8.2f}{a['half_life_days']:>10g}d"
            f"{a['decay']:>10.4f}{a['decayed']:>10.4f}")
    out(f"  composite {why['composite']:.4f} (gate {why['gate']:.2f} for confidence {why['confidence']:g})")
    out(f"  decayed composite {why['decayed_composite']:.4f} x recall boost {why['recall_boost']:.4f}"
        f", floor {why['floor']:g}")
    out(f"  effective {why['effective']:.4f}")
