"""A small library facade over one store: the CLI's verbs as methods.

    from memstore.api import Store
    store = Store("/tmp/mem")
    store.remember("We decided to move billing to Postgres", now="2026-06-07T09:00:00Z")
    store.recall("which database for billing?", now="2026-06-08T09:00:00Z")

``now`` is required everywhere (ISO 8601); nothing here reads the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import load_config
from .store.layout import Layout
from .timeutil import format_ts, parse_instant


def _now(now: str) -> str:
    return format_ts(parse_instant(now, "now"))


@dataclass
class Store:
    root: str | Path
    cache_dir: str | Path | None = None  # embedding cache shared between stores; None: no cache

    def __post_init__(self):
        self.layout = Layout(Path(self.root).expanduser())
        self.config = load_config(self.layout.read_config_text())

    def remember(self, text: str, *, now: str, **fields) -> str | None:
        """Store a memory; returns its id (None for a greeting that was not stored)."""
        from .remember import plan, validate
        from .store.log import append
        from .store.lookup import known_all

        now = _now(now)
        draft = validate({"text": text, **fields}, max_chars=self.config["memory"]["max_text_chars"])
        (outcome,) = plan([draft], known_all(self.layout), now, self.config)
        if outcome.event is not None:
            append(self.layout, [outcome.event], now)
        return outcome.id

    def _indexes(self):
        from .index.sync import open_indexes

        return open_indexes(self.layout, self.config, Path(self.cache_dir) if self.cache_dir else None)

    def recall(self, query: str, *, now: str, k: int = 10, **cues) -> dict:
        """The recall result object (as `memstore recall --json` prints it); records no usage."""
        from .recall.engine import recall
        from .recall.request import build_request

        now = _now(now)
        return recall(build_request({"query": query, "k": k, **cues}, now), self._indexes(), now=now,
                      config=self.config)

    def _stage(self, stage, now: str, **kw) -> list[dict]:
        from .store.log import append
        from .store.open import load_state

        now = _now(now)
        state, _ = load_state(self.layout)
        events = stage(state, now=now, config=self.config, **kw)
        append(self.layout, events, now)
        return events

    def consolidate(self, *, now: str) -> list[dict]:
        from .consolidate import consolidate
        from .embed import make_embedder

        return self._stage(consolidate, now, embedder=make_embedder(self.config))

    def distill(self, *, now: str) -> list[dict]:
        from .distill import distill

        return self._stage(distill, now)

    def state(self):
        from .store.open import load_state

        return load_state(self.layout)[0]
