from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note

HELP = """Write the current state as a Parquet snapshot (a cache for fast open).

The snapshot holds every record as folded from the log up to its newest event,
and where in the log that is; opening the store then reads only the log after
it. Beside it go the update pool's keys (state-<seq>.keys), which the next
consolidate reads instead of looking each pool record up in the key cache.
Deleting snapshots/ changes no answer. The two newest snapshots are kept."""

EPILOG = """\b
Examples:
  memstore snapshot
  0 4 * * *  memstore --quiet snapshot      # crontab: nightly"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from memstore.index.keycache import KeyCache
    from memstore.store.snapshot import take_snapshot

    from ..indexing import cache_dir

    e = env(now)
    taken = take_snapshot(e.layout, keyer=KeyCache(cache_dir()).keys)  # (the pool's keys beside it)
    if json:
        emit_json({"path": str(taken.path), "seq": taken.seq, "rows": taken.rows})
    else:
        note(f"{taken.path}  seq={taken.seq} rows={taken.rows}")
