"""Which older records a new one is compared with for updates (consolidate's ``_updates``).

The rule: the records said before it (``later``) that share the most of its lookup keys,
then the newest, at most ``limit``. Counting shared keys record by record in Python cost
(new records) x (postings of their keys): far too slow for a bulk import.
``Postings.ranked`` gives the same list with the counting done by numpy (the
new record's keys' postings counted into one array, a common key's as one row added),
and only the best few records ordered. When record time never goes back as the log goes
on (no ``--allow-past`` wrote into the pool), a record said before the new one is also
before it in the log, so only the positions before it are ranked.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .frame import keys, keys_of
from .rules import later

CHUNK = 512  # texts per task when keys or frames are computed on worker processes
# when the records ranked over are this many times the new record's keys' postings, shared
# keys are counted by sorting the postings (np.unique); else in one count array as long as
# those records: the same counts
_SPARSE = 8
# in a count array, a key that at least 1/_DENSE of the pool holds is counted by adding its
# row (one byte per pool record, built when first needed): a sequential add instead of a
# scatter of as many positions; at most _DENSE_BYTES of rows are kept, other keys scattered
_DENSE = 16
_DENSE_BYTES = 64 << 20
# pool records a keys file does not cover whose keys are derived rather than looked up: the key
# cache's index is read whole on its first lookup, which costs more than deriving a few texts
DERIVE_FEW = 4096


def looked_up(texts: list[str], keyer, derive):
    """The keys of ``texts``: derived when they are few (``DERIVE_FEW``) or there is no key
    cache, else from ``keyer(texts, derive)`` (the key cache, deriving what it lacks)."""
    return derive(texts) if keyer is None or len(texts) <= DERIVE_FEW else keyer(texts, derive)


class Postings:
    def __init__(self, pool: list, mapper=map, keyer=None, wanted=None, filed=None):
        """``pool``: the records that may be updated, in log order (seq ascending).
        ``mapper(fn, chunks)``: where their keys are computed (consolidate's workers).
        ``keyer(texts, derive)``: where they are looked up first (the key cache), ``derive``
        giving the ones it lacks. ``wanted``: the ids of the records that will be ranked
        (None: any): only their keys' postings are gathered now (a night's thousand new
        records hold a few thousand of a big pool's keys), another's when it is ranked.
        ``filed``: the keys file of the snapshot a ``rowscan.Pool``'s rows are of
        (``nightcache.poolkeys``): the postings of the records it covers are read from it, and
        only the other records' keys are looked up (used when ``wanted`` is few)."""
        self.pool = pool
        # (read by position without touching each record; a ``rowscan.Pool`` has them as columns)
        columns = hasattr(pool, "texts")
        self.ids = pool.ids if columns else [m.id for m in pool]
        # id -> position: a ``rowscan.Pool`` of a table looks ids up in it (those wanted at once)
        self.position = _Positions(pool.positions, wanted) if getattr(pool, "rows_of", None) is not None \
            else {m_id: i for i, m_id in enumerate(self.ids)}
        self.texts = pool.texts if columns else [m.text for m in pool]
        recorded = pool.recorded if columns else [m.recorded_at for m in pool]

        def derive(texts: list[str]) -> list[frozenset]:
            chunks = [texts[i:i + CHUNK] for i in range(0, len(texts), CHUNK)]
            return [k for part in mapper(keys_of, chunks) for k in part]

        texts = self.texts
        few = wanted is not None and 2 * len(wanted) <= len(pool)
        split = _split(filed, pool) if few and filed is not None else None
        self._filed = None
        if split is None:
            # each pool record's keys by position (the key cache's ``Keys`` decodes them as
            # read; keys' own cache is smaller than a big pool)
            self._found = keyer(texts, derive) if keyer is not None else derive(texts)
        else:  # (the file's records' keys are looked up only when one is asked for)
            at, loose = split

            def look(some: list[str]):
                return looked_up(some, keyer, derive)

            self._found = _Split(texts, loose, look([texts[i] for i in loose]), look)
            self._found.fetch([self.position[i] for i in wanted if i in self.position])
            self._filed = (filed, at)
        # the keys whose postings are gathered (None: all of them, as when most records are
        # wanted: a bulk import's first consolidate)
        self._covered = None if not few else frozenset().union(
            *(self._found[self.position[i]] for i in wanted if i in self.position))
        self._lists = self._gather(self._covered)  # key -> positions in the pool, ascending
        self._arrays: dict[str, object] = {}
        self._rows: dict[str, object] = {}  # key -> its dense row (``_row``)
        self._recorded = recorded
        self._year: dict[str, int] = {}  # a year -> ``_year_end``
        known = getattr(pool, "regular", None)  # (a ``rowscan.Pool`` compares over its column)
        self.regular = known if known is not None else all(a <= b for a, b in zip(recorded, recorded[1:], strict=False))

    def keys_of(self, m) -> frozenset:
        """``m``'s lookup keys, as ranking reads them (a pool record's: those the pool holds)."""
        i = self.position.get(m.id)
        return keys(m.text) if i is None else self._found[i]

    def keys_at(self, i: int) -> frozenset:
        """The keys of the pool's record at position ``i``."""
        return self._found[i]

    def _gather(self, wanted: frozenset | None) -> dict:
        """key -> the pool positions holding it, ascending (a list, or the key cache's array),
        for the keys in ``wanted`` (None: all)."""
        if self._filed is not None:
            return self._gather_filed(wanted)
        gather = getattr(self._found, "postings", None)
        if gather is not None and wanted is not None:  # (a bulk import's ranking reads every
            return gather(wanted)  # record's keys anyway: they are decoded, once, below)
        lists: dict[str, list[int]] = {}
        for i, found in enumerate(self._found):
            for word in (found if wanted is None else found & wanted):
                lists.setdefault(word, []).append(i)
        return lists

    def _gather_filed(self, wanted: frozenset) -> dict:
        """``_gather`` from the keys file: its covered records' postings, mapped to pool
        positions (those no longer in the pool dropped), with the other pool records'."""
        import numpy as np

        filed, at = self._filed
        out = {}
        for word, found in filed.postings(wanted).items():
            found = at[found]
            found = found[found >= 0]
            if len(found):
                out[word] = found
        loose = self._found.loose
        gather = getattr(self._found.loose_keys, "postings", None)
        if gather is not None:
            extra = gather(wanted)
        else:
            extra = {}
            for j, held in enumerate(self._found.loose_keys):
                for word in held & wanted:
                    extra.setdefault(word, []).append(j)
        for word, js in extra.items():
            more = loose[np.asarray(js, dtype=np.int64)]
            have = out.get(word)
            out[word] = more if have is None else np.insert(have, have.searchsorted(more), more)  # (disjoint)
        return out

    def _cover(self, more: frozenset) -> None:
        """Gather the postings of keys ``more`` too (one pass over the pool's keys)."""
        self._lists.update(self._gather(more))
        self._covered |= more

    def _year_end(self, year: str) -> int:
        """The pool position after the last record recorded in ``year`` or before, record
        years (text, as ``later`` compares them) only growing along the pool (``regular``):
        found by bisection over the record times, not a year made for each record."""
        end = self._year.get(year)
        if end is None:
            end = self._year[year] = bisect_right(self._recorded, year, key=lambda t: t[:4])
        return end

    def domains_at(self, positions) -> list[str | None]:
        """The domains of the pool's records at ``positions`` (a domain never changes)."""
        domains = getattr(self.pool, "domains", None)  # (a ``rowscan.Pool``'s column: no record built)
        return domains.take(positions) if domains is not None else [self.pool[i].domain for i in positions]

    def ids_at(self, positions) -> list[str]:
        """The ids of the pool's records at ``positions``."""
        take = getattr(self.ids, "take", None)  # (a ``rowscan.Pool``'s: one read of the column)
        return take(positions) if take is not None else [self.ids[i] for i in positions]

    def _array(self, word: str):
        import numpy as np

        found = self._arrays.get(word)
        if found is None:
            found = self._arrays[word] = np.asarray(self._lists[word], dtype=np.int64)
        return found

    def alive(self, ids) -> object:
        """The pool positions whose records are among ``ids`` (a set, or a ``rowscan.InPool``:
        those that left the pool named), for ``ranked``."""
        import numpy as np

        out = np.ones(len(self.pool), dtype=bool)
        gone = getattr(ids, "gone", None)
        if gone is not None:
            at = self.position.many(sorted(gone))
            out[at[at >= 0]] = False
            return out
        # (the few that left, found by a set difference: not a probe of each pool id)
        gone = self.position.keys() - ids
        out[np.fromiter(map(self.position.__getitem__, gone), dtype=np.int64, count=len(gone))] = False
        return out

    def covers(self, ids) -> bool:
        """Whether every record of ``ids`` (as ``alive`` takes them) is in this pool."""
        pool = getattr(ids, "pool", None)
        return pool is self.pool if pool is not None else ids <= self.position.keys()

    def _row(self, word: str):
        """The key's dense row: 1 at the pool positions of its records, else 0 (uint8); None
        once the rows kept reach _DENSE_BYTES."""
        import numpy as np

        found = self._rows.get(word)
        if found is None:
            if (len(self._rows) + 1) * len(self.pool) > _DENSE_BYTES:
                return None
            found = self._rows[word] = np.zeros(len(self.pool), dtype=np.uint8)
            found[self._array(word)] = 1
        return found

    def _counts(self, words: list[str], arrays: list, end: int, alive) -> tuple:
        """How many keys each pool record below ``end`` that ``alive`` keeps shares with the
        new record: (positions, counts) with positions ascending, over the records that share
        one; or (None, counts) with counts over every position below ``end``, zeros
        included. ``arrays``: the postings of the new record's keys ``words``. The first,
        sorting the postings below ``end``, when they are few against it: a count array as
        long as the pool made every new record cost O(pool), and a bulk import's first
        consolidate O(n^2). The second, one count array, when they are not: the dense keys'
        rows added, the others' positions below ``end`` incremented (a key's are distinct)."""
        import numpy as np

        def below(a):  # (each key's postings are ascending)
            return a if a[-1] < end else a[:a.searchsorted(end)]

        if sum(map(len, arrays)) * _SPARSE < end:
            hit, shared = np.unique(np.concatenate([below(a) for a in arrays]), return_counts=True)
            if alive is not None:
                keep = alive[hit]
                hit, shared = hit[keep], shared[keep]
            return hit, shared
        counts = np.zeros(end, dtype=np.uint8 if len(arrays) < 256 else np.int64)
        for word, a in zip(words, arrays, strict=True):
            row = self._row(word) if len(a) * _DENSE >= len(self.pool) else None
            if row is None:
                counts[below(a)] += 1
            else:
                counts += row[:end]
        if alive is not None:
            counts *= alive[:end]
        return None, counts

    def ranked(self, n, limit: int, alive=None) -> list:
        """The records ``n`` is compared with, best first (see the module's rule).
        ``alive``: ``self.alive(ids)``, the records still in the pool (records left since it
        was built are passed over; the order of the rest is the order over the smaller pool)."""
        return [self.pool[i] for i in self.places(n, limit, alive)]

    def places(self, n, limit: int, alive=None) -> list[int]:
        """``ranked``'s records as their positions in the pool."""
        import numpy as np

        found = self.keys_of(n)
        if self._covered is not None and not found <= self._covered:
            self._cover(found - self._covered)
        words = [w for w in found if w in self._lists]
        if not words or limit <= 0:
            return []
        arrays = [self._array(w) for w in words]
        if self.regular and n.id in self.position:
            # every record before n's position was said before it (record time, then seq), so
            # ``later`` is its year condition alone, and record years only grow along the
            # pool: the records before both n and the first one recorded after n's year
            end = min(self.position[n.id], self._year_end(n.occurred_at[:4]))
            hit, shared = self._counts(words, arrays, end, alive)

            def where(mask):  # the pool positions of the counts a mask picks, ascending
                return np.flatnonzero(mask) if hit is None else hit[mask]

            # the least count still in the best ``limit``: all records above it, then the
            # latest of those at it
            least = _least(shared, limit)
            if least is None:
                return []
            reach = shared >= max(least, 1)  # (one pass over the counts, then over the few)
            picked, counted = where(reach), shared[reach].astype(np.int64)  # (negated below)
            over = counted > least
            above, counted = picked[over], counted[over]
            above = above[np.lexsort((-above, -counted))]
            at = picked[~over][::-1][:limit - len(above)]
            return [*above.tolist(), *at.tolist()]
        hit, shared = self._counts(words, arrays, len(self.pool), None)
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
                    ranked.append(i)
                    if len(ranked) == limit:
                        return ranked
            if take == len(hit):
                return ranked
            take = min(len(hit), take * 4)


class _Positions:
    """id -> pool position, looked up in a ``rowscan.Pool`` (``lookup(ids)``: an array, -1 for
    none) and kept: ``get``, ``in``, ``[]`` as a dict's, ``many`` for a list at once."""

    def __init__(self, lookup, wanted=None):
        self._lookup, self._seen = lookup, {}
        if wanted:
            self.many(list(wanted))

    def many(self, ids: list[str]):
        import numpy as np

        todo = [i for i in dict.fromkeys(ids) if i not in self._seen]
        if todo:
            self._seen.update(zip(todo, self._lookup(todo).tolist(), strict=True))
        return np.array([self._seen[i] for i in ids], dtype=np.int64)

    def get(self, i: str, default=None):
        p = self._seen.get(i)
        if p is None:
            p = self._seen[i] = int(self._lookup([i])[0])
        return p if p >= 0 else default

    def __contains__(self, i: str) -> bool:
        return self.get(i) is not None

    def __getitem__(self, i: str) -> int:
        p = self.get(i)
        if p is None:
            raise KeyError(i)
        return p


def _split(filed, pool) -> tuple | None:
    """(for each record the keys file covers, its position in ``pool``, -1 where it is not
    there as the file read it; the positions of the pool records it does not cover), or
    None when the file cannot be used for this pool: not a ``rowscan.Pool`` of the same
    table, or its rows not in the pool's order."""
    import numpy as np

    rows = getattr(pool, "rows", None)
    if rows is None or getattr(pool, "table_rows", None) != filed.table_rows:
        return None
    inv = np.full(filed.table_rows, -1, dtype=np.int64)
    mine = np.flatnonzero(rows >= 0)  # (a record built is judged as it is now: not from the file)
    inv[rows[mine]] = mine
    at = inv[filed.rows]
    hit = at[at >= 0]
    if (np.diff(hit) <= 0).any():
        return None  # (a table in canonical order never does this)
    loose = np.ones(len(pool), dtype=bool)
    loose[hit] = False
    return at, np.flatnonzero(loose)


class _Split(Sequence):
    """Each pool record's keys by position, when a keys file covers most of them: those of
    the records it does not cover (``loose``) looked up at once, any other when asked for."""

    def __init__(self, texts: list[str], loose, loose_keys, look):
        self._texts, self.loose, self.loose_keys, self._look = texts, loose, loose_keys, look
        self._at = {p: j for j, p in enumerate(loose.tolist())}
        self._got: dict[int, frozenset] = {}

    def __len__(self) -> int:
        return len(self._texts)

    def fetch(self, positions: list[int]) -> None:
        """Look up the keys of these positions' records in one call."""
        todo = sorted({p for p in positions if p not in self._at and p not in self._got})
        if todo:
            self._got.update(zip(todo, self._look([self._texts[p] for p in todo]), strict=True))

    def __getitem__(self, i: int) -> frozenset:
        j = self._at.get(i)
        if j is not None:
            return self.loose_keys[j]
        if i not in self._got:
            self.fetch([i])
        return self._got[i]


def _least(shared, limit: int) -> int | None:
    """The largest count at least ``limit`` of ``shared`` reach (0 when fewer than ``limit``
    are above 0); None when none is. A count array's histogram (np.bincount) would copy it
    to 64-bit integers first; the best counts are a few levels from the top."""
    import numpy as np

    top = int(shared.max()) if len(shared) else 0
    if top == 0:
        return None
    # how many reach a level only falls as the level rises: the largest level that ``limit``
    # reach, found by halving (a pass over the counts a try: 4 at most for 16 levels, where
    # going down from the top took more)
    lo, hi = 0, top  # (``limit`` reach lo, or lo is 0; none above hi is known to)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if np.count_nonzero(shared >= mid) >= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo
