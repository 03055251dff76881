"""One stage on one store, as a fleet worker runs it.

``run_one`` is what each worker process (local or on a Dask cluster) calls: it opens the
store as the CLI would, runs the stage through the library (each stage is that stage's
own write, so a failure leaves the store as it was) and returns a plain dict. A store's
failure is a result, never an exception: one bad store must not stop the others.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ..errors import MemstoreError, StoreError
from ..store.layout import Layout, show_path

STAGES = ("consolidate", "distill", "index", "snapshot", "brief", "verify")

_EMBEDDERS: dict[tuple, object] = {}  # one per embedder config per worker: a model loads once
# One run at a time per process: the umask and the skipped-lines record are per process, so two
# runs on two threads of one Dask worker would mix them (threads gain nothing here anyway)
_ONE_AT_A_TIME = threading.Lock()


class _Findings(Exception):
    """verify found problems: the store's run failed, with its result kept."""

    def __init__(self, message: str, result: dict):
        super().__init__(message)
        self.result = result


def run_one(root: str, stage: str, now: str, cache_dir: str | None) -> dict:
    """Run ``stage`` on the store at ``root`` at ``now``: {"stage", "status" ("ok" or
    "failed"), "seconds" (wall), "cpu_seconds", "error" (one line, or None), "result" (the
    stage's, or None), "skipped_lines" (damaged log lines the run read past)}."""
    with _ONE_AT_A_TIME:
        return _run_one(root, stage, now, cache_dir)


def _run_one(root: str, stage: str, now: str, cache_dir: str | None) -> dict:
    from ..store.log import skipped_lines

    started, cpu = time.perf_counter(), time.process_time()  # durations for the report, not times a store sees
    umask = os.umask(0o077)  # private data, as the CLI makes it (a Dask worker has its own umask)
    skipped_lines()  # forget what an earlier store in this worker skipped
    result, error = None, None
    try:
        result = _RUN[stage](Layout(Path(root)), now, Path(cache_dir) if cache_dir else None)
    except _Findings as exc:
        result, error = exc.result, str(exc)
    except MemstoreError as exc:
        error = str(exc)
    except Exception as exc:  # an OS error or a bug in one store: that store fails, the fleet goes on
        error = f"{type(exc).__name__}: {exc}"
    finally:
        os.umask(umask)
    skipped = len(skipped_lines())
    return {"stage": stage, "status": "ok" if error is None else "failed",
            "seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),  # this process's CPU: a machine's load does not inflate it
            "error": None if error is None else " ".join(error.split()), "result": result,
            "skipped_lines": skipped}


def _open(layout: Layout):
    """The store's config, checked as every command checks its --store; a store that is not
    there (on this worker) is an error, never created."""
    from ..config import load_config

    layout.check_readable()
    if not layout.exists():
        raise StoreError(f"no store at {show_path(layout.root)} (on this worker: every worker must see "
                         "the fleet root at the same path)")
    return load_config(layout.read_config_text())


def _embedder(config):
    from ..embed import make_embedder

    key = tuple(sorted(config["embedder"].items()))
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = make_embedder(config)
    return _EMBEDDERS[key]


def _stage_result(done) -> dict:
    """As `memstore consolidate|distill --json` says it: a run's mark is counted apart."""
    counts: dict[str, int] = {}
    events, seqs = done.lifecycle
    for ev in events:
        counts[ev["op"]] = counts.get(ev["op"], 0) + 1
    result = {"appended": len(done.seqs), "counts": dict(sorted(counts.items())),
              "seqs": [seqs[0], seqs[-1]] if seqs else None}
    if done.mark is not None:
        result["examined_through"] = done.mark["through"]
    return result


def _consolidate(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from ..night import Night

    config = _open(layout)
    # (the CLI's night, on one process: a task is a store; the model loaded once a worker)
    with Night(config, cache_dir, embedder=_embedder(config)) as night:
        return _stage_result(night.consolidate(layout, now=now))


def _distill(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from .. import writes

    return _stage_result(writes.distill(layout, now=now, config=_open(layout)))


def _index(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from ..index.sync import open_indexes

    config = _open(layout)
    ix = open_indexes(layout, config, cache_dir, embedder=_embedder(config))
    return {"watermark": ix.watermark, "applied_events": ix.caught_up, "records": ix.records.count(),
            "vectors": len(ix.vectors), "embedder": ix.embedder.name}


def _snapshot(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from ..index.embcache import CachedEmbedder, EmbeddingCache
    from ..nightcache.keycache import KeyCache
    from ..nightcache.snapshots import snapshot_sidecars
    from ..store.take import take_snapshot

    inner = _embedder(_open(layout))  # (named only: the groups' vectors are read from the cache)
    taken = take_snapshot(layout, snapshot_sidecars(
        keyer=KeyCache(cache_dir).keys, embedder=CachedEmbedder(inner, EmbeddingCache(cache_dir, inner.name, inner.dim))))
    return {"snapshot": Path(taken.path).relative_to(layout.root).as_posix(), "seq": taken.seq,
            "rows": taken.rows}


def _brief(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from ..brief import brief_current, brief_data, is_empty, render_markdown
    from ..index.current import open_current, read_or_fold
    from ..store.open import load_state
    from ..store.pages import write_brief

    config = _open(layout)

    def fold() -> dict:
        return brief_data(load_state(layout)[0], now, config)

    # as `memstore brief`: the records index and the log after it when they can be believed
    current = open_current(layout)
    data = fold() if current is None else read_or_fold(lambda: brief_current(current, now, config), fold)
    if is_empty(data):  # as `memstore brief`: no page of empty sections
        return {"date": data["date"], "written": None}
    path = write_brief(layout, data["date"], render_markdown(data))
    return {"date": data["date"], "written": Path(path).relative_to(layout.root).as_posix()}


def _verify(layout: Layout, now: str, cache_dir: Path | None) -> dict:
    from ..verify import verify

    report = verify(layout, _open(layout), now=now)
    result = {"clean": report.clean, "head": report.head, "events": report.events,
              "log_files": report.log_files, "snapshots": report.snapshots,
              "findings": len(report.findings), "notes": len(report.notes)}
    if not report.clean:
        more = "; `memstore verify` lists them" if len(report.findings) > 1 else ""
        raise _Findings(f"{len(report.findings)} finding(s), first: {report.findings[0].render()}{more}", result)
    return result


_RUN = {"consolidate": _consolidate, "distill": _distill, "index": _index, "snapshot": _snapshot,
        "brief": _brief, "verify": _verify}


def summary(entry: dict) -> str:
    """One line saying what a successful run did."""
    r, stage = entry["result"] or {}, entry["stage"]
    if stage in ("consolidate", "distill"):
        if not r.get("appended"):
            text = "nothing to do"
        else:
            counts = ", ".join(f"{n} {op}" for op, n in r["counts"].items())
            text = f"{counts} appended (seq {r['seqs'][0]}-{r['seqs'][1]})"
    elif stage == "index":
        text = (f"indexes at seq {r['watermark']} ({r['applied_events']} new events; {r['records']} records, "
                f"{r['vectors']} vectors)")
    elif stage == "snapshot":
        text = f"{r['snapshot']} seq={r['seq']} rows={r['rows']}"
    elif stage == "brief":
        text = r["written"] or f"nothing active on {r['date']}; no file written"
    else:
        text = f"clean ({r['events']} events to seq {r['head']})"
    if entry.get("skipped_lines"):
        text += f" (skipped {entry['skipped_lines']} damaged log line(s); `memstore verify` names them)"
    return text
