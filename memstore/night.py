"""One night for every front door: what a consolidation needs besides the store.

``Night(config, cache_dir, jobs)`` owns the embedder behind the shared embedding cache, the
worker pool its embeddings, update keys and frames run on, and the key cache. The CLI
(`memstore consolidate`), the fleet and the library (``api.Store``) open the same
``Night``, so all three run the same night with the same caches; none builds its own.

    with Night(config, cache_dir, jobs=2) as night:
        run = night.consolidate(layout, now=now)

A pool of one job runs everything in this process; a pool of more starts its workers only
for a large catch-up or a big night (``consolidate._WARM``), and ``close`` (or leaving the
``with``) ends them. ``cache_dir`` None keeps nothing between runs.
"""

from __future__ import annotations

from pathlib import Path


class Night:
    def __init__(self, config, cache_dir: Path | None, jobs: int = 1, embedder=None):
        """``embedder``: the model to embed with (default: ``make_embedder(config)``); a caller
        running many stores in one process passes one, loaded once."""
        from .embed import make_embedder
        from .index.embcache import CachedEmbedder, EmbeddingCache
        from .index.workers import EmbedPool
        from .nightcache.keycache import KeyCache

        self.config, self.cache_dir = config, cache_dir
        inner = embedder if embedder is not None else make_embedder(config)
        self.pool = EmbedPool(inner, jobs)
        # cached: a nightly job must not embed old texts again
        self.embedder = CachedEmbedder(self.pool, EmbeddingCache(cache_dir, inner.name, inner.dim))
        self.keyer = KeyCache(cache_dir).keys  # update keys derived once are kept

    def __enter__(self) -> Night:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the workers, if any started."""
        self.pool.close()

    def consolidate(self, layout, *, now: str, dry_run: bool = False, engine: str = "engine"):
        """``writes.consolidate`` with this night's embedder, workers and key cache (the
        reference engine takes the embedder alone: it reads every record plainly)."""
        from . import writes

        # (the engine's update keys and frames go to the same workers: a pool maps, and warms)
        work = {} if engine == "reference" else {"mapper": self.pool, "keyer": self.keyer}
        return writes.consolidate(layout, now=now, config=self.config, embedder=self.embedder, dry_run=dry_run,
                                  engine=engine, **work)
