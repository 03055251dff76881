"""Shared by the lifecycle commands (consolidate, distill): run a stage, append its
events, and report them one line each."""

from __future__ import annotations

from .common import env, quiet
from .output import emit_json, note, out


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe(ev: dict, state) -> str:
    """One line for a lifecycle event, naming the records by id and text."""
    op = ev["op"]

    def text(mid: str) -> str:
        m = state.memories.get(mid)
        return f"{mid} {_short(m.text)!r}" if m is not None else mid

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


def run_stage(name: str, stage, *, now: str | None, json: bool, dry_run: bool, embedder: bool) -> None:
    from memstore.state import fold
    from memstore.store import log as logstore
    from memstore.store.open import load_state

    e = env(now)
    state, _reader = load_state(e.layout)
    kw = {}
    if embedder:
        from memstore.embed import make_embedder
        from memstore.index.embcache import CachedEmbedder, EmbeddingCache

        from .indexing import cache_dir

        inner = make_embedder(e.config)  # cached: a nightly job must not re-embed old texts
        kw["embedder"] = CachedEmbedder(inner, EmbeddingCache(cache_dir(), inner.name, inner.dim))
    events = stage(state, now=e.now, config=e.config, **kw)
    seqs = []
    if not dry_run and events:
        from memstore.store.fs import exclusive_lock

        # decide-then-append must not race another writer: under the store lock, if the log
        # moved since the state was read (another consolidate, a remember), decide again on
        # the new state. Two concurrent runs at the same --now append what one run would.
        with exclusive_lock(e.layout.lock_path):
            if logstore.read_head(e.layout).seq != state.seq:
                state, _reader = load_state(e.layout)
                events = stage(state, now=e.now, config=e.config, **kw)
            seqs = logstore.append(e.layout, events, e.now)
    stamped = [{**ev, "at": e.now, "seq": seq} for ev, seq in zip(events, seqs, strict=True)] if seqs else events
    counts: dict[str, int] = {}
    for ev in events:
        counts[ev["op"]] = counts.get(ev["op"], 0) + 1
    if json:
        emit_json({"command": name, "at": e.now, "dry_run": dry_run, "appended": len(seqs),
                   "counts": dict(sorted(counts.items())), "events": stamped})
        return
    after = fold([{**ev, "seq": state.seq + i} for i, ev in enumerate(events, start=1)], state)
    if not quiet():
        for ev in events:
            out(f"{ev['op']:<10} {describe(ev, after)}")
    if not events:
        note(f"{name}: nothing to do at {e.now}")
    else:
        summary = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))
        note(f"{name}: {summary}" + (" (dry run: nothing appended)" if dry_run else
                                     f" appended (seq {seqs[0]}-{seqs[-1]})"))
