"""Shared by the lifecycle commands (consolidate, distill): run the library's stage
write and report its events one line each."""

from __future__ import annotations

from .common import env, quiet
from .output import emit_json, note, out


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


class Texts:
    """The records' texts once a run's events are applied, without folding them into a copy
    of the state (a copy of every record, to print a few lines): no
    lifecycle event changes a text but a derived record's (distill, policy), which the
    event holds whole."""

    def __init__(self, state, events: list[dict]):
        self.state = state
        self.derived = {ev["memory"]["id"]: ev["memory"]["text"] for ev in events
                        if isinstance(ev.get("memory"), dict)}  # (a later event's text wins)

    def get(self, mid: str) -> str | None:
        found = self.derived.get(mid)
        if found is None:
            m = self.state.memories.get(mid)
            found = m.text if m is not None else None
        return found


def describe(ev: dict, texts: Texts) -> str:
    """One line for a lifecycle event, naming the records by id and text."""
    op = ev["op"]

    def text(mid: str) -> str:
        found = texts.get(mid)
        return f"{mid} {_short(found)!r}" if found is not None else mid

    if op in ("distill", "policy"):
        m = ev["memory"]
        extra = f" confidence {m['confidence']:g}" if op == "policy" else ""
        return f"{m['id']} {m['level']}{extra} {_short(m['text'], 70)!r} <- {len(m['derived_from'])} source(s)"
    if op == "promote":
        members = ev.get("members") or []
        more = f", +{len(members)} merged" if members else ""
        return f"{text(ev['id'])} (mentions {ev['mention_count']}{more})"
    if op == "merge":
        return f"{ev['new']} into {text(ev['old'])} (cosine {ev['cosine']})"
    if op == "conflict":
        return f"{ev['id']} {ev['rule']}: {text(ev['old'])} vs {text(ev['new'])}"
    if op == "supersede":
        return f"{ev['old']} by {text(ev['new'])} ({ev.get('reason', '')})"
    return text(ev["id"])


def run_stage(name: str, *, now: str | None, json: bool, dry_run: bool, embedder: bool, jobs: int = 1,
              engine: str | None = None) -> None:
    """Run the library's ``consolidate`` or ``distill`` write and report its events (what it
    embeds, on ``jobs`` worker processes)."""
    from memstore import writes

    e = env(now)
    if embedder:  # (consolidate: the library's night, with the shared caches and the workers)
        from memstore.night import Night

        from .indexing import cache_dir

        with Night(e.config, cache_dir(), jobs) as night:
            done = night.consolidate(e.layout, now=e.now, dry_run=dry_run, engine=engine or "engine")
    else:
        done = getattr(writes, name)(e.layout, now=e.now, config=e.config, dry_run=dry_run)
    state, mark = done.state, done.mark  # the run's mark is bookkeeping: said apart, never listed
    events, seqs = done.lifecycle
    if e.access is not None:  # the stage maintains the whole store; an agent hears only of what it may read
        from memstore.access import event_visible, hidden_in

        hidden = hidden_in(state, e.access, events)  # (the run's state may be partial)
        events = [ev for ev in events if event_visible(ev, e.access, hidden)]
    counts: dict[str, int] = {}
    for ev in events:
        counts[ev["op"]] = counts.get(ev["op"], 0) + 1
    if json:
        emit_json({"command": name, "at": e.now, "dry_run": dry_run, "appended": len(done.seqs),
                   "counts": dict(sorted(counts.items())), "events": events,
                   "examined_through": mark["through"] if mark else None})
        return
    if not quiet():
        texts = Texts(state, events)
        for ev in events:
            out(f"{ev['op']:<10} {describe(ev, texts)}")
    if not events:
        note(f"{name}: nothing to do at {e.now}")
    else:
        summary = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))
        marked = f", then its mark (seq {done.seqs[-1]})" if mark and not dry_run else ""
        note(f"{name}: {summary}" + (" (dry run: nothing appended)" if dry_run else
                                     f" appended (seq {seqs[0]}-{seqs[-1]}){marked}"))
