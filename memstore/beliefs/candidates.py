"""Which older records a new one is compared with for updates (consolidate's ``_updates``).

The rule: the records said before it (``later``) that share the most of its lookup keys,
then the newest, at most ``limit``. Counting shared keys record by record in Python cost
(new records) x (postings of their keys): a bulk import of 100k records ran past 15
minutes. ``Postings.ranked`` gives the same list with the counting done by numpy (one
``bincount`` over the key lists of the new record), and only the best few records
ordered. When record time never goes back as the log goes on (no ``--allow-past`` wrote
into the pool), a record said before the new one is also before it in the log, so only
the positions before it are ranked.
"""

from __future__ import annotations

from bisect import bisect_right

from .frame import keys, keys_of
from .rules import later

CHUNK = 512  # texts per task when keys or frames are computed on worker processes
# below a pool this many times the postings, shared keys are counted by sorting the postings
# (np.unique); above it, by one count array over the pool (np.bincount): the same counts
_SPARSE = 8


class Postings:
    def __init__(self, pool: list, mapper=map, keyer=None):
        """``pool``: the records that may be updated, in log order (seq ascending).
        ``mapper(fn, chunks)``: where their keys are computed (consolidate's workers).
        ``keyer(texts, derive)``: where they are looked up first (the key cache), ``derive``
        giving the ones it lacks."""
        self.pool = pool
        self.position = {m.id: i for i, m in enumerate(pool)}
        lists: dict[str, list[int]] = {}  # key -> positions in the pool, ascending
        self._keys: dict[str, frozenset] = {}  # id -> keys (keys' own cache is smaller than a big pool)

        def derive(texts: list[str]) -> list[frozenset]:
            chunks = [texts[i:i + CHUNK] for i in range(0, len(texts), CHUNK)]
            return [k for part in mapper(keys_of, chunks) for k in part]

        texts = [m.text for m in pool]
        found_all = keyer(texts, derive) if keyer is not None else derive(texts)
        for i, (m, found) in enumerate(zip(pool, found_all, strict=True)):
            self._keys[m.id] = found
            for word in found:
                lists.setdefault(word, []).append(i)
        self._lists = lists
        self._arrays: dict[str, object] = {}
        self._year = None
        self.regular = all(a.recorded_at <= b.recorded_at for a, b in zip(pool, pool[1:], strict=False))

    def _years(self) -> list[str]:
        """Each pool record's record year, as ``later`` compares it (text)."""
        if self._year is None:
            self._year = [m.recorded_at[:4] for m in self.pool]
        return self._year

    def _array(self, word: str):
        import numpy as np

        found = self._arrays.get(word)
        if found is None:
            found = self._arrays[word] = np.array(self._lists[word], dtype=np.int64)
        return found

    def alive(self, ids) -> object:
        """The pool positions whose records are among ``ids`` (for ``ranked``)."""
        import numpy as np

        return np.fromiter((m.id in ids for m in self.pool), dtype=bool, count=len(self.pool))

    def _counts(self, positions, end: int, alive) -> tuple:
        """How many keys each pool record below ``end`` that ``alive`` keeps shares with the
        new record: (positions, counts) with positions ascending, over the records that share
        one; or (None, counts) with counts over every position below ``end``, zeros
        included. The first, sorting the postings, when they are few against the pool: a
        count array as long as the pool made every new record cost O(pool), and a bulk
        import's first consolidate O(n^2). The second, one np.bincount, when they are not."""
        import numpy as np

        if len(positions) * _SPARSE < len(self.pool):
            hit, shared = np.unique(positions[positions < end], return_counts=True)
            if alive is not None:
                keep = alive[hit]
                hit, shared = hit[keep], shared[keep]
            return hit, shared
        counts = np.bincount(positions, minlength=len(self.pool))[:end]
        return None, (counts if alive is None else counts * alive[:end])

    def ranked(self, n, limit: int, alive=None) -> list:
        """The records ``n`` is compared with, best first (see the module's rule).
        ``alive``: ``self.alive(ids)``, the records still in the pool (records left since it
        was built are passed over; the order of the rest is the order over the smaller pool)."""
        import numpy as np

        found = self._keys.get(n.id)
        words = [w for w in (keys(n.text) if found is None else found) if w in self._lists]
        if not words or limit <= 0:
            return []
        positions = np.concatenate([self._array(w) for w in words])
        if self.regular and n.id in self.position:
            # every record before n's position was said before it (record time, then seq), so
            # ``later`` is its year condition alone, and record years only grow along the
            # pool: the records before both n and the first one recorded after n's year
            end = min(self.position[n.id], bisect_right(self._years(), n.occurred_at[:4]))
            hit, shared = self._counts(positions, end, alive)

            def where(mask):  # the pool positions of the counts a mask picks, ascending
                return np.flatnonzero(mask) if hit is None else hit[mask]

            # the least count still in the best ``limit`` (from the counts' own histogram):
            # all records above it, then the latest of those at it
            tally = np.bincount(shared)
            if len(tally) < 2 or not tally[1:].any():
                return []
            tally[0] = 0
            reach = np.cumsum(tally[::-1])
            least = len(tally) - 1 - min(int(np.searchsorted(reach, limit)), len(tally) - 1)
            top = shared > least
            above, counted = where(top), shared[top]
            above = above[np.lexsort((-above, -counted))]
            at = where(shared == least)[::-1][:limit - len(above)] if least else above[:0]
            return [self.pool[i] for i in (*above.tolist(), *at.tolist())]
        hit, shared = self._counts(positions, len(self.pool), None)
        if hit is None:
            hit = np.flatnonzero(shared)
            shared = shared[hit]
        # best first: more shared keys, then later in the log (position order is seq order)
        order = shared.astype(np.int64) * len(self.pool) + hit
        take = min(len(hit), 4 * limit)
        while True:
            best = hit[np.argsort(-order)] if take == len(hit) else \
                hit[np.argpartition(-order, take - 1)[:take]]
            best = best[np.argsort(-order[np.searchsorted(hit, best)], kind="stable")]
            ranked = []
            for i in best.tolist():
                o = self.pool[i]
                if o.id != n.id and (alive is None or alive[i]) and later(o, n):
                    ranked.append(o)
                    if len(ranked) == limit:
                        return ranked
            if take == len(hit):
                return ranked
            take = min(len(hit), take * 4)
