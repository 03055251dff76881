from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note

HELP = """Write the current state as a Parquet snapshot (a cache for fast open).

The snapshot holds every record as folded from the log up to its newest event,
and where in the log that is; opening the store then reads only the log after
it. Beside it go the update pool's keys (state-<seq>.keys) and the near-duplicate
groups with their vectors from the embedding cache (state-<seq>.near), which the
next consolidate reads instead of looking each record up in the caches.
Deleting snapshots/ changes no answer. The two newest snapshots are kept."""

EPILOG = """\b
Examples:
  memstore snapshot
  0 4 * * *  memstore --quiet snapshot      # crontab: nightly"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from memstore.embed import make_embedder
    from memstore.index.embcache import CachedEmbedder, EmbeddingCache
    from memstore.nightcache.keycache import KeyCache
    from memstore.nightcache.snapshots import snapshot_sidecars
    from memstore.store.take import take_snapshot

    from ..indexing import cache_dir

    e = env(now)
    inner = make_embedder(e.config)  # (named only: its vectors are read from the cache, never made)
    cached = CachedEmbedder(inner, EmbeddingCache(cache_dir(), inner.name, inner.dim))
    # beside it, the pool's keys and the near-duplicate groups' vectors, from the caches
    taken = take_snapshot(e.layout, snapshot_sidecars(keyer=KeyCache(cache_dir()).keys, embedder=cached))
    if json:
        emit_json({"path": str(taken.path), "seq": taken.seq, "rows": taken.rows})
    else:
        note(f"{taken.path}  seq={taken.seq} rows={taken.rows}")
