"""A small library facade over one store: the CLI's verbs as methods.

    from memstore.api import Store
    store = Store("/tmp/mem")
    store.remember("We decided to move billing to Postgres", now="2026-06-07T09:00:00Z")
    store.recall("which database for billing?", now="2026-06-08T09:00:00Z")

``now`` is required everywhere (ISO 8601); nothing here reads the clock. ``agent``: the
store is used as that agent (memstore(7), AGENTS): its writes carry the name, its reads
see what its role's grants allow, and ``notes`` is its working memory.
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
    agent: str | None = None  # who writes and reads (None: the store's owner)

    def __post_init__(self):
        self.layout = Layout(Path(self.root).expanduser())
        self.layout.check_readable()  # a directory that is not a store is refused, not read as empty
        self.config = load_config(self.layout.read_config_text())
        if self.agent is not None:
            from .access import check_agent

            check_agent(self.agent, "agent")

    @property
    def _access(self):
        from .access import access_for

        return access_for(self.config, self.agent)

    def remember(self, text: str, *, now: str, **fields) -> str | None:
        """Store a memory; returns its id (None for a greeting that was not stored).
        Concurrent callers (threads or processes) with the same text or key get one record."""
        from . import writes
        from .remember import validate

        now = _now(now)
        if self.agent is not None:
            fields.setdefault("source", "agent")
        draft = validate({"text": text, **fields}, max_chars=self.config["memory"]["max_text_chars"])
        (decision,) = writes.remember(self.layout, [draft], now=now, config=self.config, agent=self.agent)
        return decision.id

    def _indexes(self):
        from .index.sync import open_indexes

        return open_indexes(self.layout, self.config, Path(self.cache_dir) if self.cache_dir else None)

    def recall(self, query: str, *, now: str, k: int = 10, **cues) -> dict:
        """The recall result object (as `memstore recall --json` prints it); records no usage."""
        from dataclasses import replace

        from .recall.engine import recall
        from .recall.request import build_request

        now = _now(now)
        req = replace(build_request({"query": query, "k": k, **cues}, now), access=self._access)
        return recall(req, self._indexes(), now=now, config=self.config)

    def consolidate(self, *, now: str, dry_run: bool = False) -> list[dict]:
        """Run consolidation at ``now``; returns the events appended (with their seqs), the
        last of them the run's ``mark`` when records were written since the last run."""
        from .night import Night

        with Night(self.config, Path(self.cache_dir) if self.cache_dir else None) as night:
            return night.consolidate(self.layout, now=_now(now), dry_run=dry_run).events

    def distill(self, *, now: str, dry_run: bool = False) -> list[dict]:
        """Run distillation at ``now``; returns the events appended (with their seqs)."""
        from . import writes

        return writes.distill(self.layout, now=_now(now), config=self.config, dry_run=dry_run).events

    def forget(self, ref: str, *, now: str, reason: str | None = None) -> bool:
        """Invalidate a memory by id or key; False when it was forgotten already."""
        from . import writes

        return writes.forget(self.layout, ref, now=_now(now), reason=reason, agent=self.agent,
                             access=self._access).changed

    def resolve_conflict(self, ref: str, keep: str, *, now: str, note: str | None = None) -> str:
        """A person's decision on a conflict (keep new, old, both or dismiss); returns its id."""
        from . import writes

        return writes.resolve_conflict(self.layout, ref, keep, now=_now(now), note=note, agent=self.agent,
                                       access=self._access).conflict

    def judge(self, situation: str, *, now: str, k: int | None = None) -> dict:
        """The judge result object (as `memstore judge --json` prints it)."""
        from .judge import judge

        now = _now(now)
        return judge(self._indexes(), situation, now=now, config=self.config, k=k, access=self._access)

    def notes(self) -> str:
        """This agent's working memory ("" when it has none)."""
        if self.agent is None:
            from .errors import UsageError

            raise UsageError("working memory belongs to an agent: Store(..., agent=NAME)")
        from .store.open import load_notes

        return load_notes(self.layout).get(self.agent, {}).get("text", "")  # (no record read)

    def set_notes(self, text: str, *, now: str, mode: str = "set") -> str:
        """Write this agent's working memory (set, append or clear); returns it as it now is."""
        from . import writes

        if self.agent is None:
            from .errors import UsageError

            raise UsageError("working memory belongs to an agent: Store(..., agent=NAME)")
        return writes.set_notes(self.layout, self.agent, text, mode=mode, now=_now(now)).text

    def state(self):
        from .store.open import load_state

        return load_state(self.layout)[0]
