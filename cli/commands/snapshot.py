from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note

HELP = """Write the current state as a Parquet snapshot (a cache for fast open).

The snapshot holds every record as folded from the log up to its newest event,
and where in the log that is; opening the store then reads only the log after
it. Deleting snapshots/ changes no answer. The two newest snapshots are kept."""

EPILOG = """\b
Examples:
  memstore snapshot
  0 4 * * *  memstore --quiet snapshot      # crontab: nightly"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from memstore.store.fs import exclusive_lock
    from memstore.store.log import position_after
    from memstore.store.open import load_state
    from memstore.store.snapshot import write_snapshot

    e = env(now)
    e.layout.create()
    with exclusive_lock(e.layout.lock_path):  # no append may land between fold and position
        state, _ = load_state(e.layout)
        path = write_snapshot(e.layout, state, position_after(e.layout))
    if json:
        emit_json({"path": str(path), "seq": state.seq, "rows": len(state.memories)})
    else:
        note(f"{path}  seq={state.seq} rows={len(state.memories)}")
