"""Which older records a new one is compared with for updates (consolidate's ``_updates``).

The rule: the records said before it (``later``) that share the most of its lookup keys,
then the newest, at most ``limit``. Counting shared keys for every record of the pool costs
(new records) x (postings of their keys): on a bulk import of templated texts, where every
key is in every record, 100k new records took more than 15 minutes.

``Postings.ranked`` gives the same list while reading little of that when the pool is
regular (record time never goes back as the log goes on, which holds unless ``--allow-past``
wrote into it): a record said before the new one then comes before it in the log, so the
key lists are merged from the new record's position towards the oldest; a record's count
is final once the merge has passed it, and the merge stops as soon as the ``limit``-th best
count found is at least the number of lists not yet exhausted (no record further back can
count more, and at an equal count the newer one ranks first). The merge gives up after
three times ``limit`` records (varied texts rarely settle early, and counting is ~8x
cheaper per record there); then, as for an irregular pool, every record is counted.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import Counter
from itertools import groupby
from operator import itemgetter

from .frame import keys
from .rules import later


class Postings:
    def __init__(self, pool: list):
        """``pool``: the records that may be updated, in log order (seq ascending)."""
        self.pool = pool
        self.seqs = [m.seq for m in pool]
        self.lists: dict[str, list[int]] = {}  # key -> positions in the pool, ascending
        for i, m in enumerate(pool):
            for word in keys(m.text):
                self.lists.setdefault(word, []).append(i)
        self.regular = all(a.recorded_at <= b.recorded_at for a, b in zip(pool, pool[1:], strict=False))

    def ranked(self, n, limit: int) -> list:
        """The records ``n`` is compared with, best first (see the module's rule)."""
        if self.regular and self.pool and (i := bisect_left(self.seqs, n.seq)) < len(self.seqs) \
                and self.seqs[i] == n.seq:
            found = self._merged(n, i, limit)
            if found is not None:
                return found
        return self._counted(n, limit)

    def _counted(self, n, limit: int) -> list:
        counts: Counter[int] = Counter()
        for word in keys(n.text):
            if at := self.lists.get(word):
                counts.update(at)
        ranked: list = []
        for _count, group in groupby(counts.most_common(), key=itemgetter(1)):
            for i in sorted((i for i, _c in group), reverse=True):  # position order is seq order
                o = self.pool[i]
                if o.id != n.id and later(o, n):
                    ranked.append(o)
                    if len(ranked) == limit:
                        return ranked
        return ranked

    def _merged(self, n, position: int, limit: int, budget: int = 0) -> list | None:
        """None when ``budget`` records went by without the answer being settled: the
        merge wins on templated texts and loses on varied ones, where counting is cheaper."""
        budget = budget or 3 * limit
        heap: list[tuple[int, int]] = []  # (-position, list number): the merge, newest first
        lists = [at for word in keys(n.text) if (at := self.lists.get(word))]
        cursors = []
        for j, at in enumerate(lists):
            k = bisect_left(at, position) - 1  # records before n's own position only
            cursors.append(k)
            if k >= 0:
                heapq.heappush(heap, (-at[k], j))
        live = len(heap)  # lists not yet exhausted: the most an unseen record can count
        found: dict[int, list] = {}  # count -> records, newest first

        def settled() -> bool:
            seen = 0
            for count in sorted(found, reverse=True):
                seen += len(found[count])
                if seen >= limit:
                    return count >= live
            return False

        while heap:
            budget -= 1
            if budget < 0:
                return None
            top = heap[0][0]
            count = 0
            while heap and heap[0][0] == top:
                _neg, j = heapq.heappop(heap)
                count += 1
                cursors[j] -= 1
                if cursors[j] >= 0:
                    heapq.heappush(heap, (-lists[j][cursors[j]], j))
                else:
                    live -= 1
            o = self.pool[-top]
            if later(o, n):
                found.setdefault(count, []).append(o)
                if settled():
                    break
        ranked = [o for count in sorted(found, reverse=True) for o in found[count]]
        return ranked[:limit]
