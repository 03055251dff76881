"""Where the fleet's runs execute: worker processes on this machine, or a Dask cluster.

Both take the stores as (name, path) pairs and return one entry per store, in the order
given, each ``run_one``'s dict with the store's name as "path". A worker that dies (killed,
out of memory) fails the stores it took with that reason; it never ends the fleet run.
"""

from __future__ import annotations

import re
from functools import partial

from ..errors import StoreError, UsageError
from .runner import run_one

ADDRESS = re.compile(r"^(tcp|tls|ucx|ws|wss)://[^\s/]+:\d+/?$")


def _lost(stage: str, why: str) -> dict:
    return {"stage": stage, "status": "failed", "seconds": 0.0, "cpu_seconds": 0.0, "error": " ".join(why.split()),
            "result": None, "skipped_lines": 0}


def _entries(stores, results) -> list[dict]:
    return [{"path": name, **result} for (name, _path), result in zip(stores, results, strict=True)]


def run_local(stores: list[tuple[str, str]], stage: str, now: str, cache_dir: str | None, jobs: int) -> list[dict]:
    """On a pool of ``jobs`` worker processes (one store per task)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if not stores:
        return []
    work = partial(run_one, stage=stage, now=now, cache_dir=cache_dir)
    # forkserver: workers start from a clean interpreter, not a fork of a caller that may hold
    # threads or open indexes (a test process, a library user)
    context = multiprocessing.get_context("forkserver")
    results = []
    with ProcessPoolExecutor(max_workers=min(jobs, len(stores)), mp_context=context) as pool:
        futures = [pool.submit(work, path) for _name, path in stores]
        for future in futures:
            try:
                results.append(future.result())
            except Exception as exc:  # BrokenProcessPool: a worker died under this store or another
                results.append(_lost(stage, f"the worker process died ({type(exc).__name__}: {exc}); "
                                            "run it again with --retry"))
    return _entries(stores, results)


def check_address(address: str) -> str:
    if not ADDRESS.match(address):
        raise UsageError(f"--address {address!r} is not a scheduler address; give e.g. tcp://HOST:8786 "
                         "(what `dask scheduler` prints)")
    return address


def run_dask(stores: list[tuple[str, str]], stage: str, now: str, cache_dir: str | None, address: str) -> list[dict]:
    """On the Dask distributed cluster whose scheduler is at ``address``. Each worker must
    have memstore installed and see the stores at the same paths. A task whose worker dies is
    run again on another (a stage at one ``now`` is safe to run twice: the second appends
    nothing); after the scheduler's allowed failures the store fails."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--address needs Dask distributed, which is not installed: "
                         "pip install 'memstore[fleet]'") from None
    try:
        client = Client(check_address(address), timeout="5s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise StoreError(f"cannot reach the Dask scheduler at {address} ({' '.join(str(exc).split())}); "
                         "start it (`dask scheduler`) or check --address; no store was touched") from None
    if not stores:
        client.close()
        return []
    work = partial(run_one, stage=stage, now=now, cache_dir=cache_dir)
    results = []
    with client:
        # pure=False: unique task keys, so two fleet runs on one scheduler never share a result
        futures = client.map(work, [path for _name, path in stores], pure=False)
        for future in futures:
            try:
                results.append(future.result())
            except Exception as exc:  # KilledWorker, a lost scheduler: this store's run is unknown
                results.append(_lost(stage, f"the Dask task failed ({type(exc).__name__}: {exc}); "
                                            "run it again with --retry"))
    return _entries(stores, results)
