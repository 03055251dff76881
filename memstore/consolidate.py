"""The nightly's engine: ``consolidate(state, now=, config=) -> events``, the events the
reference (``memstore.lifecycle.reference``) appends, computed for a million records.

What is decided lives in ``memstore.lifecycle.rules``; this module decides nothing of its own.
It reads a snapshot's rows as columns, keeps work from round to round (``_Memo``), batches
the embedding cache, prefetches on worker processes, and reads the snapshot's keys and groups
files. tests/test_lifecycle_reference.py holds it to the reference with its sizes lowered.

The stages, repeated until none has anything left to say (so a second run at
the same ``now`` appends nothing):

1. expire: short-term records past ``expires_at``;
2. updates (memstore.beliefs): each new record (below) that says in
   everyday words that an older belief changed (a new value, a negation, a stop, a
   cancellation, a replacement) supersedes it, or opens a conflict when the rules are unsure;
   any kind, with or without a subject;
3. near-duplicates (memstore(7), CONSOLIDATION): each new record is compared
   with the older active records of its subject and domain (records without a
   subject are only merged when their text is identical, which remember does;
   episodes of different days are different events, see ``comparable``);
   the most similar one (embedder cosine) decides the four-state write:
   reinforce (merge) / add (nothing) / update (supersede) / conflict;
4. promote: each short-term record alone (``rules.promotion``): by its mentions (a
   repetition was merged into it), its salience, its protection, or at its expiry when
   it is of a durable kind; no record is joined to another.

Policy-direction conflicts are checked too (distill creates the policies), and
abstractions whose every source was superseded or forgotten are retired with them.

A record is new when it was recorded within ``lookback_days`` and created after the
store's consolidate watermark: the write path appends a ``mark`` event (``watermark``)
after each run's events, so a nightly run compares the day's records, not the whole
window again. The comparisons of a record are made once, when it is new.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from heapq import merge
from itertools import repeat
from typing import NamedTuple

from .beliefs import relation
from .beliefs.candidates import CHUNK, Postings
from .beliefs.frame import frames_of, gists_of, seed, seed_gists, ungisted, unseeded
from .beliefs.rules import may_relate_any, may_relate_each
from .config import thresholds
from .conflicts import policy_conflicts, settled
from .cosine import dot
from .events import touched_ids
from .fold import apply_stage
from .lifecycle import rules
from .lifecycle.rules import (
    abstraction,
    active_policy,
    duplicate_events,
    expiring,
    fresh,
    may_update,
    pooled,
    promotion,
    retire_event,
    retiring,
    short,
    update_events,
    updating,
)
from .model import EPISODIC_KINDS, Memory
from .state import _CANONICAL
from .timeutil import ts_after
from .working import Working

# the rules' names as the engine's modules and tests know them
_MAX_CANDIDATES, _UPDATABLE, _order = rules.MAX_CANDIDATES, rules.UPDATABLE, rules.order


class _Vectors:
    """Texts' vectors for one embedder, kept as the arrays the embedder returned (a cache, not
    state), for one run: the vectors a run holds came through its own embedder, so what it
    embeds reaches that embedder's cache whatever ran before in the process. A lookup is a
    dict probe a text and one gather, not a numpy row object a text, and what is fetched is
    kept as it came, not copied into one growing matrix."""

    def __init__(self):
        self.clear()

    def __len__(self) -> int:
        return self.total

    def clear(self, name: str | None = None) -> None:
        self.name, self.rows = name, {}  # text -> its row, counted over the arrays in order
        self.arrays: list = []
        self.starts: list[int] = []  # the first row of each array
        self.total = 0  # rows held (a text put twice holds two)

    def put(self, texts: list[str], vecs) -> None:
        """Hold ``texts``' vectors ``vecs`` (one row each, in order; a text may be there twice)."""
        import numpy as np

        vecs = np.asarray(vecs)
        if self.arrays and (self.arrays[0].dtype != vecs.dtype or self.arrays[0].shape[1:] != vecs.shape[1:]):
            self.clear(self.name)  # (another embedder's kind of vector, under the same name)
        n = self.total
        self.arrays.append(vecs)
        self.starts.append(n)
        self.total += len(texts)
        self.rows.update(zip(texts, range(n, n + len(texts)), strict=True))

    def gather(self, texts: list[str]):
        """The held vectors of ``texts`` (every one held) as the rows of one matrix, in order."""
        import numpy as np

        at = np.fromiter(map(self.rows.__getitem__, texts), dtype=np.int64, count=len(texts))
        if len(self.arrays) == 1:
            return self.arrays[0][at]
        which = np.searchsorted(self.starts, at, side="right") - 1
        out = np.empty((len(texts), *self.arrays[0].shape[1:]), dtype=self.arrays[0].dtype)
        for k in np.unique(which).tolist():
            mine = which == k
            out[mine] = self.arrays[k][at[mine] - self.starts[k]]
        return out


# What it holds at most (beyond what one call needs), in bytes of float32 vectors: a night on
# a large store whose day touched most subjects looks up more group texts a round than a
# smaller cache held, and it was cleared and filled again each round (twice the lookups)
_CAP_BYTES = 1 << 28  # 256 MB: 262,144 vectors at 256 dimensions, 174,762 at 384
_CAP: int | None = None  # a number of vectors instead (tests)
_PREFETCH = 32_768  # texts of the near-duplicate groups looked up in one call


def _vectors(embedder, texts: list[str], memo: _Vectors):
    """The vectors of ``texts`` as the rows of one matrix, in order, kept in the run's ``memo``."""
    import numpy as np

    if memo.name != embedder.name:
        memo.clear(embedder.name)
    rows = memo.rows
    cap = _CAP if _CAP is not None else _CAP_BYTES // (4 * max(1, embedder.dim))
    cached = getattr(embedder, "cached", None)
    if cached is not None and texts and rows.keys().isdisjoint(texts):
        # none held (a night's first round): what the cache holds read straight into the
        # answer, in order, and kept as it is; what it lacks embedded as below (sorted,
        # once each): the same vectors as fetching every text into the memo, one copy fewer
        vecs, found = cached(texts, "passage")
        lack = np.flatnonzero(~found)
        if len(lack):
            todo = sorted({texts[i] for i in lack.tolist()})
            got, at = embedder.embed(todo, "passage"), {t: j for j, t in enumerate(todo)}
            vecs[lack] = got[[at[texts[i]] for i in lack.tolist()]]
        if len(memo) + len(texts) > cap:
            memo.clear(embedder.name)
        memo.put(texts, vecs)
        return vecs
    missing = sorted({t for t in texts if t not in rows})
    if missing and len(memo) + len(missing) > cap:
        memo.clear(embedder.name)  # bounded: what this call needs is then fetched whole
        rows, missing = memo.rows, sorted(set(texts))
    if missing:
        memo.put(missing, embedder.embed(missing, "passage"))
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return memo.gather(texts)


class _Memo:
    """What one consolidation carries from round to round (its stages repeat until none has
    anything left to say). Only work whose answer cannot have changed is reused, so the
    events are those of recomputing everything each round:

    - update candidates: the pool of updatable records only shrinks within a run (no event
      of consolidate creates or revives one), and the ranking over a smaller pool is the
      ranking over the larger one without the records that left. So a new record's ranking
      is taken once, three times as long as needed, and each round reads the first
      ``_MAX_CANDIDATES`` still in the pool; it is taken again only when fewer are left
      and the long ranking was cut short;
    - silent records: a new record whose check no candidate can make say anything (its
      text tentative, or saying no update word while every older record sharing a key with
      it has its negation and no single value both have: ``may_relate_any``) is not ranked
      or checked at all (``silent``, found once, from the gists of the run's first pool;
      the pool only shrinks, so it stays so). A bulk import's chatter is most of it;
    - relations: ``relation`` is a pure function of the two texts; a candidate it found
      unrelated, or in another domain, stays so: a later check passes over its place in the
      long ranking (``quiet``, kept with the ranking it is a place in);
    - update checks: a new record's check is not made again while nothing it reads changed
      since the round of the last one began (``unchanged``): a bulk import's later rounds
      check the few records whose candidates were superseded or left in conflict;
    - near-duplicate groups: a group is decided again only when an event since its last
      decision touched one of its members (a group decided without events, and untouched
      since, decides nothing again).
    """

    def __init__(self, mapper=map, keyer=None, filed=None, near=None):
        self.mapper = mapper  # where keys and frames are computed: map, or worker processes
        self.keyer = keyer  # where update keys are looked up first (Postings), or None
        self.filed = filed  # the keys file of the snapshot the run opened (Postings), or None
        self.near = near  # its near-duplicate groups file (nightcache.neargroups), or None
        self.vectors = _Vectors()  # the near-duplicate groups' vectors, from round to round
        # (domain, subject) -> (the group's members at its last decision, their vectors), for
        # the groups read from ``near``: a later round takes the rows of those still active
        self.matrices: dict[tuple, tuple] = {}
        self.postings: Postings | None = None
        self.alive = None  # the round's pool, as positions of the postings' pool
        self.candidates: dict[str, list[str]] = {}  # id -> its long ranking (ids)
        self.places: dict[str, object] = {}  # id -> its long ranking, as the postings' positions
        self.domains: dict[str, list] = {}  # id -> its long ranking's domains
        self.relations: dict[tuple[str, str], object] = {}
        self.silent: frozenset[str] = frozenset()  # new records no check can make an event for
        # id -> (its long ranking, a bit set at each position whose check can make no event)
        self.quiet: dict[str, tuple[list[str], int]] = {}
        self.touched: set[str] | None = None  # None: nothing decided yet
        # (domain, subject) -> the group's members at its last decision, in ``_order``: a
        # later round's group is those still active (no consolidate event makes a record
        # join one), not a scan of every record again
        self.groups: dict[tuple, list[Memory]] = {}
        # update checks (``unchanged``), over the run's list of writes (memstore.working):
        self.examined: dict[str, int] = {}  # id -> the writes made as the round of its last check began
        self.watchers: dict[str, list[str]] = {}  # id -> the new records whose checks read it
        self.watched: dict[str, tuple] = {}  # id -> (its long ranking, how much of it its watchers hold)
        self.read: dict[str, tuple] = {}  # id -> what a check reads of it (``_read``), if written
        self.changed: dict[str, int] = {}  # id -> the last write that changed its ``_read``
        self.dirty: dict[str, int] = {}  # id -> the last write that changed what its check reads
        self.synced = 0  # how far the above follow the writes
        self.pool = None  # a run over a snapshot: (its pool, the ids in it now, how far in the writes)
        self.promoted = False  # promote has tested the snapshot's columns (``rowscan.promotable``)

    def reset(self, postings: Postings) -> None:
        """New postings: every ranking and check is made again."""
        self.postings, self.candidates, self.places, self.examined = postings, {}, {}, {}
        self.domains = {}
        self.watchers, self.watched = {}, {}

    def sync(self, s) -> None:
        """Follow the writes ``s`` (a run's state) made since the last call: a record whose
        ``_read`` changed dirties the checks that read it (its own, and those of the records
        it is a candidate of)."""
        written = s.memories.written
        if self.synced == len(written):
            return
        batch = {}
        for i in range(self.synced, len(written)):
            batch[written[i]] = i
        self.synced = len(written)
        base = s.base
        build = getattr(base, "build", None)
        if build is not None:  # (the records the run began with, built in one pass: not one take each)
            build([x for x in batch if x not in self.read and not dict.__contains__(base, x)])
        for x, i in batch.items():
            was = self.read.get(x)
            if was is None:  # its first write: what the run began with (a record it created: new)
                began = dict.get(base, x) if build is not None else base.get(x)
                was = _read(began) if began is not None else None
            now = self.read[x] = _read(s.memories[x])
            if now != was:
                self.changed[x] = i
                for w in self.watchers.get(x, ()):
                    self.dirty[w] = i

    def watch(self, nid: str, ranked: list[str], s) -> None:
        """``nid``'s check, comparing it with ``ranked`` this round, reads from now on itself
        and its long ranking up to the last of ``ranked`` (the records after it do not change
        which are compared until one before it leaves the pool, which its watchers hear of;
        ones that left stay out). A record that changed before it was watched dirties the
        check too (the change may be after the round began: the round's pool held it)."""
        self.sync(s)
        long = self.candidates[nid]
        reach = long.index(ranked[-1]) + 1 if len(ranked) == _MAX_CANDIDATES else len(long)
        was, done = self.watched.get(nid, (None, 0))
        if was is not long:  # a first ranking, or a new one
            done, ids = 0, [nid, *long[:reach]]
        else:
            ids = long[done:reach]
        if not ids:
            return
        self.watched[nid] = (long, max(done, reach))
        for x in ids:
            self.watchers.setdefault(x, []).append(nid)
        if self.changed:
            dirty = max(self.dirty.get(nid, -1), *map(self.changed.get, ids, repeat(-1, len(ids))))
            if dirty >= 0:
                self.dirty[nid] = dirty

    def unchanged(self, n, s) -> bool:
        """Whether nothing ``n``'s update check reads changed since the round of its last check
        began: not ``n`` itself, nor its long ranking up to the last record compared (``watch``;
        their pool membership at a round's start, status and conflicts being all the check
        reads of them, ``relation`` a function of the texts). Then the check makes again what
        it made then: nothing, since what it made (a conflict) changed ``n``'s conflicts."""
        seen = self.examined.get(n.id)
        if seen is None:
            return False
        self.sync(s)
        return self.dirty.get(n.id, -1) < seen

    def touch(self, events: list[dict]) -> None:
        if self.touched is not None:
            self.touched.update(_ids(events))

    def take_touched(self, s) -> set[tuple] | None:
        """The near-duplicate groups to decide now (None: all), and a fresh start."""
        touched, self.touched = self.touched, set()
        if touched is None:
            return None
        return {((m.domain or ""), m.subject) for m in (s.memories.get(i) for i in touched)
                if m is not None and m.subject is not None}


def _ids(events: list[dict]) -> set[str]:
    """The records the events change."""
    return {i for e in events for i in touched_ids(e)}


def _fresh(m: Memory, since: str, s) -> bool:
    """``rules.fresh`` against the state's watermark."""
    return fresh(m, since, s.marks.get("consolidate", 0))


def _expire(s, now: str, config) -> list[dict]:
    return [{"op": "expire", "at": now, "id": m.id} for m in _select(s, "expire", lambda m: expiring(m, now, config))]


def _near_duplicates(s, now: str, config, embedder, memo: _Memo) -> list[dict]:
    lower, upper = thresholds(config, embedder)
    since = ts_after(now, -config["consolidate"]["lookback_days"])
    redo = memo.take_touched(s)  # None: every group (the first round)
    candidates = _select(s, "duplicates", lambda m: m.status == "active" and m.level == "raw"
                         and m.subject is not None)
    # the groups with a fresh record: fresh records are created after the mark, so they end
    # the listing (seq order); the rest of it is not tested one by one
    mark, wanted = s.marks.get("consolidate", 0), set()
    for m in reversed(candidates):
        if m.seq <= mark:
            break
        if _fresh(m, since, s):
            key = (m.domain or "", m.subject)
            if redo is None or key in redo:
                wanted.add(key)
    groups: dict[tuple, list[Memory]] = {}
    ready: dict[tuple, object] = {}  # a group's vectors, when known before its batch (the groups file)
    if redo is None or not wanted <= memo.groups.keys():
        subjects = {k[1] for k in wanted}
        scan, filed = candidates, {}
        if isinstance(s, Working) and s.source is not None and subjects:
            # from a snapshot, the records listed are those the run opened with: the groups'
            # other members are read from the table's columns (``rowscan.members``), not built,
            # or with their vectors from the snapshot's groups file (``_filed``)
            from .rowscan import members

            filed, none = _filed(s, wanted, memo)
            rest = {k for k in wanted if k not in filed and k not in none}
            scan = [*candidates, *members(s, {k[1] for k in rest}, rest)]
        for m in scan:
            if m.subject in subjects and (key := (m.domain or "", m.subject)) in wanted:
                groups.setdefault(key, []).append(m)
        for group in groups.values():
            group.sort(key=_order)
        if filed:
            _merge_filed(filed, groups, embedder, ready, memo.vectors)
        if scan is not candidates:  # in the order a scan of every record meets them (below)
            groups = {k: groups[k] for k in sorted(groups, key=lambda k: _first(groups[k]))}
    else:  # (members kept in order: a record's _order never changes)
        import numpy as np

        held = {}
        # (a member is active until the run writes it otherwise: the groups' members were all
        # active when listed, and no record but a written one changes)
        gone = {i for i in set(s.memories.written) if s.memories[i].status != "active"} \
            if isinstance(s, Working) else None
        for key in wanted:
            was = memo.groups[key]
            known = memo.matrices.get(key)
            if isinstance(was, _Members) and gone is not None:
                alive = was.alive(gone)
                if known is not None and known[0] is was:
                    # the group and its vectors kept whole, those no longer active masked out (a
                    # round's members and all their vectors were copied)
                    mask = np.zeros(len(was), dtype=bool)
                    mask[alive] = True
                    held[key], ready[key] = _Masked(was, mask), known[1]
                    continue
                held[key] = was.subset(alive)
            else:
                alive = [i for i, m in enumerate(_now(s, x) for x in was) if m.status == "active"]
                held[key] = [_now(s, was[i]) for i in alive]
            if known is not None and known[0] is was:
                ready[key] = known[1][alive]
        # in the order a scan meets them: by the first of their records in canonical order
        for key in sorted((k for k in held if held[k]), key=lambda k: _first(held[k])):
            groups[key] = held[key]
    memo.groups.update((key, _whole(group)) for key, group in groups.items())
    memo.matrices.update((key, (_whole(groups[key]), matrix)) for key, matrix in ready.items() if key in groups)
    groups = {k: g for k, g in groups.items() if len(g) >= 2}
    events: list[dict] = []
    batch: list[list[Memory]] = []
    texts = 0  # in the batch (a running count: many small groups make long batches)
    pending: list[tuple] = []  # (members, matrix) with their vectors, to decide in order

    def settle() -> None:
        # each group's nearest older members are found first, and the records they name
        # built in one pass: found one by one, each a take of the snapshot's table
        plans = [_plan(s, members, matrix, since, mark) for members, matrix in pending]
        if isinstance(s, Working):
            s.build([plan.ids[best] for plan in plans if plan.nearest for best, _ in plan.nearest.values()])
        for (members, matrix), plan in zip(pending, plans, strict=True):
            found = _group_duplicates(s, members, matrix, since, now, config, lower, upper, plan)
            memo.touch(found)
            events.extend(found)
        pending.clear()

    def flush() -> None:
        # the vectors of several groups in one call: the embedding cache is looked up (and
        # what it lacks embedded, on the workers) once a batch instead of once a group
        matrix, start = _vectors(embedder, [m.text for g in batch for m in g], memo.vectors), 0
        for members in batch:
            pending.append((members, matrix[start:start + len(members)]))
            start += len(members)
        batch.clear()

    for key, members in groups.items():
        if key in ready:  # (in order: the groups batched before it are decided first)
            if batch:
                flush()
                texts = 0
            pending.append((members, ready[key]))
            continue
        batch.append(members)
        texts += len(members)
        if texts >= _PREFETCH:
            flush()
            settle()  # (what a batch's vectors hold stays bounded)
            texts = 0
    if batch:
        flush()
    settle()
    return events


def _filed(s, wanted: set[tuple], memo: _Memo) -> tuple[dict[tuple, tuple], set[tuple]]:
    """The ``wanted`` groups as the snapshot's groups file has them (``nightcache.neargroups``):
    (key -> (its members read from the table, those the run lists left out, as ``_Members``;
    where each lies in the group's block; the block's vectors), for the groups whose vectors
    can be believed; the groups of which the table has no candidates at all)."""
    import numpy as np

    from .rowscan import unlisted

    near = memo.near
    if near is None or near.table_rows != s.source.table.num_rows:
        return {}, set()
    blocks, none = {}, set()
    for key in sorted(wanted):
        found = near.block(key)
        if found is not None:
            blocks[key] = found
        elif not near.holds(key):
            none.add(key)
    if not blocks:
        return {}, none
    rows = np.concatenate([b[0] for b in blocks.values()])
    keep = unlisted(s, rows)
    made, out, start, at = _Members.read(s.source.table, rows[keep]), {}, 0, 0
    for key, (group_rows, vecs) in blocks.items():
        mine = np.flatnonzero(keep[start:start + len(group_rows)])
        out[key] = (made.part(at, at + len(mine)), mine, vecs)
        start, at = start + len(group_rows), at + len(mine)
    return out, none


def _merge_filed(filed: dict[tuple, tuple], groups: dict[tuple, list], embedder, ready: dict,
                 vectors: _Vectors) -> None:
    """Each of the ``filed`` groups as ``groups`` then holds it: the members read from the
    table merged in ``_order`` with those listed (``groups``' own, built, in ``_order``),
    and its vectors into ``ready``: the table's from the file, the listed ones' looked up."""
    import numpy as np

    listed = [m for key in filed for m in groups.get(key, ())]
    looked = _vectors(embedder, [m.text for m in listed], vectors)
    start = 0
    for key, (made, mine, vecs) in filed.items():
        built = groups.get(key, [])
        places = [made.place(m) for m in built]
        # where each lies in the merged group: the table's members shifted past the built
        # ones placed before them
        shift = np.zeros(len(made) + 1, dtype=np.int64)
        np.add.at(shift, places, 1)
        table_at = np.arange(len(made), dtype=np.int64) + np.cumsum(shift)[:-1]
        built_at = np.asarray(places, dtype=np.int64) + np.arange(len(built), dtype=np.int64)
        matrix = np.empty((len(made) + len(built), vecs.shape[1]), dtype=vecs.dtype)
        matrix[table_at] = vecs[mine]
        if built:
            matrix[built_at] = looked[start:start + len(built)]
        start += len(built)
        groups[key] = made.merged(table_at, built_at, built)
        ready[key] = matrix


class _Members(Sequence):
    """A near-duplicate group's members in ``_order``, with the columns its decisions read
    (``_columns``): those read from the snapshot's groups file are made into ``Member``
    values only when one is asked for (a night's groups hold a great many, none of
    them read), the others are held as listed (records)."""

    def __init__(self, ids: list[str], seqs, episodic, occurred: list[str], items: list, rows, table):
        self.ids, self.seqs, self.episodic, self.occurred = ids, seqs, episodic, occurred
        self._items = items  # each position's value where one is held (a record), else None
        self._rows, self._table = rows, table  # each position's table row (-1 for a held one)

    @classmethod
    def read(cls, table, rows) -> _Members:
        """The table's ``rows`` (candidates: active raw records with a subject), in order."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        at = pa.array(rows, type=pa.int64())
        kind, outcome = table.column("kind").take(at), table.column("outcome").take(at)
        episodic = pc.or_(pc.fill_null(pc.is_in(kind, value_set=pa.array(EPISODIC_KINDS, type=pa.string())), False),
                          pc.is_valid(outcome))
        return cls(table.column("id").take(at).to_pylist(),
                   np.asarray(table.column("seq").take(at).to_numpy(zero_copy_only=False), dtype=np.int64),
                   np.asarray(episodic.to_numpy(zero_copy_only=False), dtype=bool),
                   table.column("occurred_at").take(at).to_pylist(), [None] * len(rows),
                   np.asarray(rows, dtype=np.int64), table)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        found = self._items[i]
        if found is not None:
            return found
        from .rowscan import members_at

        return members_at(self._table, self._rows[i:i + 1])[0]

    def part(self, a: int, z: int) -> _Members:
        return _Members(self.ids[a:z], self.seqs[a:z], self.episodic[a:z], self.occurred[a:z], self._items[a:z],
                        self._rows[a:z], self._table)

    def place(self, m) -> int:
        """Where ``m`` (not among them) goes among them in ``_order``."""
        key = _order(m)
        return bisect_left(range(len(self)), key, key=lambda i: (self.occurred[i], int(self.seqs[i]), self.ids[i]))

    def merged(self, table_at, built_at, built: list) -> _Members:
        """These members at ``table_at`` and the records ``built`` at ``built_at``, as one group."""
        import numpy as np

        n = len(self) + len(built)
        ids, occurred, items = [None] * n, [None] * n, [None] * n
        for j, i in enumerate(table_at.tolist()):
            ids[i], occurred[i] = self.ids[j], self.occurred[j]
        seqs, episodic = np.empty(n, dtype=np.int64), np.empty(n, dtype=bool)
        seqs[table_at], episodic[table_at] = self.seqs, self.episodic
        rows = np.full(n, -1, dtype=np.int64)
        rows[table_at] = self._rows
        for i, m in zip(built_at.tolist(), built, strict=True):
            ids[i], occurred[i], items[i] = m.id, m.occurred_at, m
            seqs[i], episodic[i] = m.seq, m.kind in EPISODIC_KINDS or m.outcome is not None
        return _Members(ids, seqs, episodic, occurred, items, rows, self._table)

    def alive(self, gone: set[str]) -> list[int]:
        """The positions of the members still active, ``gone`` naming the records the run
        wrote that are no longer (every member was active when the group was listed, and a
        run changes no record but those it writes: a probe of the written ids, not of the
        run's records for each of 680 members a group)."""
        return [i for i, x in enumerate(self.ids) if x not in gone]

    def subset(self, positions: list[int]) -> _Members:
        """The members at ``positions``, each held as it was listed (a decision reads the
        records by id; of the members themselves only their texts, which no event changes)."""
        import numpy as np

        at = np.asarray(positions, dtype=np.int64)
        items = [self._items[i] for i in positions]
        return _Members([self.ids[i] for i in positions], self.seqs[at], self.episodic[at],
                        [self.occurred[i] for i in positions], items, self._rows[at], self._table)


def _columns(members) -> tuple:
    """(ids, seqs as an array, whether each is an episode or an outcome as an array, a
    function giving their event times) of a group's ``members``."""
    import numpy as np

    if isinstance(members, _Members):
        return members.ids, members.seqs, members.episodic, lambda: members.occurred
    return ([m.id for m in members], np.fromiter((m.seq for m in members), dtype=np.int64, count=len(members)),
            np.array([m.kind in EPISODIC_KINDS or m.outcome is not None for m in members], dtype=bool),
            lambda: [m.occurred_at for m in members])


def _first(members) -> tuple:
    """The first of a group's members (those a ``_Masked`` group keeps) in canonical order, as
    (seq, id)."""
    if isinstance(members, _Members | _Masked):
        import numpy as np

        whole = _whole(members)
        kept = members.mask if isinstance(members, _Masked) else np.ones(len(whole), dtype=bool)
        least = int(whole.seqs[kept].min())
        return least, min(whole.ids[i] for i in np.flatnonzero(kept & (whole.seqs == least)).tolist())
    return min(map(_CANONICAL, members))


class _Masked:
    """A later round's group kept whole with its members no longer active masked out: it is
    decided, ordered and counted as the group of the others (``_plan``, ``_first``, ``len``),
    and its vectors are the whole group's, not a copy of the others' rows."""

    __slots__ = ("members", "mask", "_count")

    def __init__(self, members: _Members, mask):
        self.members, self.mask = members, mask  # (mask: a boolean array, True where active)
        self._count = int(mask.sum())

    def __len__(self) -> int:
        return self._count


def _whole(group):
    """A group as memo keeps it: a ``_Masked`` group's members, whole."""
    return group.members if isinstance(group, _Masked) else group


def _now(s, m):
    """A group member as the run has it now: its record where one is built (a record the log
    after the snapshot or the run changed is), else ``m`` itself (a ``rowscan.Member``
    read from the snapshot, as its record still is)."""
    found = dict.get(s.memories, m.id)
    return m if found is None else found


_AHEAD = 8  # a group's fresh members whose nearest older ones ``_plan`` finds ahead, at most


class _Plan(NamedTuple):
    """What deciding a near-duplicate group reads before its first event (``_plan``)."""

    ids: list[str]
    episodic: object  # whether each member is an episode or an outcome (an array)
    day: object  # each member's event day (an array), or None when none is episodic
    fresh: list[int]  # the positions of the members that may be fresh (created after the mark)
    active: object  # which members are active as the group is decided (an array)
    # fresh position -> its nearest older member, until an event; None: not found ahead
    nearest: dict[int, tuple[int, float]] | None


def _plan(s, members, matrix, since: str, mark: int) -> _Plan:
    """The group's columns and the members active as it is decided: all of them, or those a
    ``_Masked`` group keeps (a later round's group kept whole, the members no longer active
    masked out, is decided as the group of the others); from a snapshot, for a group of
    ``_AHEAD`` fresh members at most, each fresh active member's nearest older one with
    those active (as they are until the group's first event), so that the records they name
    are built in one pass."""
    import numpy as np

    members, mask = (members.members, members.mask) if isinstance(members, _Masked) else (members, None)
    ids, seqs, episodic, occurred = _columns(members)
    day = np.array([t[:10] for t in occurred()]) if episodic.any() else None
    fresh = np.flatnonzero(seqs > mark).tolist()
    active = np.ones(len(ids), dtype=bool) if mask is None else mask
    nearest = {}
    # (found ahead only where the records they name are built by id, and for a few fresh
    # members: a group of many, as a bulk import makes, has its first event early, after which
    # each is found again, lengthening a bulk import's first consolidate)
    if not (isinstance(s, Working) and s.source is not None and len(fresh) <= _AHEAD):
        return _Plan(ids, episodic, day, fresh, active, None)
    for j in fresh:
        if j and _comparable(s.memories[ids[j]], since, s):
            found = _nearest(matrix, j, _ok(active, episodic, day, j))
            if found is not None:
                nearest[j] = found
    return _Plan(ids, episodic, day, fresh, active, nearest)


def _comparable(new: Memory, since: str, s) -> bool:
    """Whether a group member is compared with the older ones: fresh and active."""
    return _fresh(new, since, s) and new.status == "active"


def _ok(active, episodic, day, j: int):
    """The older members member ``j`` may be compared with (``comparable()``)."""
    ok = active[:j]
    if day is not None:
        ok = ok & (~(episodic[:j] | episodic[j]) | (day[:j] == day[j]))
    return ok


def _nearest(matrix, j: int, ok) -> tuple[int, float] | None:
    """The member before ``j`` that ``ok`` keeps nearest to it: (its position, the exact
    cosine); None when ``ok`` keeps none. The cosines against all come from one matrix
    product; the nearest is then taken on the exact pairwise dot products of the few within
    1e-5 of the best, so the choice and the cosine are those of comparing pair by pair."""
    import numpy as np

    if not ok.any():
        return None
    rough = np.where(ok, matrix[:j] @ matrix[j], -np.inf)
    near = np.flatnonzero(rough >= rough.max() - 1e-5)
    sims = {int(i): dot(matrix[i], matrix[j]) for i in near}  # exact: the same on every machine
    best = max(sims, key=lambda i: (sims[i], -i))
    return best, sims[best]


def _group_duplicates(s, members: list[Memory], matrix, since: str, now: str, config,
                      lower: float, upper: float, plan: _Plan | None = None) -> list[dict]:
    """The four-state decisions inside one (domain, subject) group, oldest member first
    (``members``, in ``_order``; ``matrix``: their vectors, as rows; ``plan``: ``_plan``'s,
    made here when not given), each fresh member against its nearest older one still active."""

    if plan is None:
        plan = _plan(s, members, matrix, since, s.marks.get("consolidate", 0))
    ids, episodic, day = plan.ids, plan.episodic, plan.day
    # the members active as the group is decided (an event changes only the records it
    # names: those of its own group); then as its events leave
    active = plan.active.copy()
    at = None  # id -> position (made at the first event)
    events: list[dict] = []
    for j in plan.fresh:
        new = s.memories[ids[j]]
        if not j or not _comparable(new, since, s):
            continue
        # (until the first event every member is active: the plan's nearest holds)
        found = plan.nearest.get(j) if not events and plan.nearest is not None else \
            _nearest(matrix, j, _ok(active, episodic, day, j))
        if found is None:
            continue
        old, cosine = s.memories[ids[found[0]]], round(found[1], 4)
        if settled(old, new):
            continue  # a person (or an open conflict) already holds this pair
        batch = duplicate_events(old, new, cosine, lower, upper, now, config)
        if not batch:
            continue
        apply_stage(s, batch)
        if at is None:
            at = {x: i for i, x in enumerate(ids)}
        for i in {at[x] for x in _ids(batch) if x in at}:
            active[i] = s.memories[ids[i]].status == "active"
        events += batch
    return events


_LONG = 3 * _MAX_CANDIDATES  # the ranking a run keeps per new record (_Memo)


_pooled = pooled  # (``rowscan.pooled_rows`` is its column test)


def _updates(s, now: str, config, memo: _Memo) -> list[dict]:
    """Newer records that update older beliefs in everyday words (memstore.beliefs)."""
    since = ts_after(now, -config["consolidate"]["lookback_days"])
    mark = s.marks.get("consolidate", 0)
    new = sorted(_select(s, "new", lambda m: updating(m, since, mark)),
                 key=lambda m: (m.recorded_at, m.seq, m.id))
    if not new:
        return []
    pool, in_pool = _pool(s, memo)  # (in_pool as the round starts: candidates are ranked over it all round)
    if memo.postings is None or not memo.postings.covers(in_pool):
        memo.reset(Postings(pool, memo.mapper, memo.keyer, wanted=[n.id for n in new], filed=memo.filed))
        memo.silent = _silent(new, memo.postings, memo.mapper)
    memo.alive = None if len(in_pool) == len(memo.postings.pool) else memo.postings.alive(in_pool)
    # the write list of a run's state (memstore.working); another state's checks are all made
    written = s.memories.written if isinstance(s, Working) else None
    start = None if written is None else len(written)  # (the writes the round's pool has seen)
    # (a check whose inputs did not change since it was made is not made again)
    due = [n for n in new if n.id not in memo.silent and (written is None or not memo.unchanged(n, s))]
    ranked_of: dict[str, list[int]] = {}  # _candidates this round, taken ahead
    if memo.mapper is not map and due:  # what the comparisons will need, computed on the workers
        # while the candidates are ranked here, a block of new records at a time
        size, frames = (_BLOCK, _FRAMES) if len(due) <= _BULK else (_BLOCK_BULK, _FRAMES_BULK)
        with _Prefetch(memo.mapper, frames) as ahead:
            for i in range(0, len(due), size):
                job = []  # (a new text, the older texts it is compared with for the first time)
                block = due[i:i + size]
                for n in block:
                    ranked_of[n.id] = _candidates(n, memo)
                _build_candidates(s, block, ranked_of, memo)
                for n in block:
                    olds = [o.text for o, _k in _loud(n, ranked_of[n.id], s, memo)
                            if may_update(o, n) and (o.text, n.text) not in memo.relations]
                    if olds:
                        job.append((n.text, olds))
                ahead.put(job)
        memo.relations.update(dict.fromkeys(ahead.quiet))  # relation's None, from the gists
    elif due and isinstance(s, Working) and s.source is not None:  # (ranked ahead, as above)
        for n in due:
            ranked_of[n.id] = _candidates(n, memo)
        _build_candidates(s, due, ranked_of, memo)
    events: list[dict] = []
    for n in new:
        if n.id in memo.silent:
            continue
        n = s.memories[n.id]
        if n.status != "active":
            continue
        if written is not None:
            if memo.unchanged(n, s):
                continue
            memo.examined[n.id] = start
        ranked = ranked_of.get(n.id)
        if ranked is None:
            ranked = _candidates(n, memo)
        long = memo.candidates.get(n.id)
        if written is not None and ranked:
            memo.watch(n.id, [long[k] for k in ranked], s)
        quiet = 0
        for o, k in _loud(n, ranked, s, memo):
            if not may_update(o, n):  # (fields no consolidate event sets: quiet for the run)
                quiet |= 1 << k
                continue
            if o.status not in _UPDATABLE or settled(o, n):
                continue
            pair = (o.text, n.text)
            if pair not in memo.relations:
                memo.relations[pair] = relation(o.text, n.text)
            verdict = memo.relations[pair]
            if verdict is None:
                quiet |= 1 << k
                continue
            batch = update_events(o, n, verdict, now, config)
            apply_stage(s, batch)
            events += batch
        if quiet:
            was = memo.quiet.get(n.id)
            memo.quiet[n.id] = (long, quiet | (was[1] if was is not None and was[0] is long else 0))
    return events


def _pool(s, memo: _Memo) -> tuple:
    """(the round's update pool, the ids in it). A run over a snapshot reads the pool from
    columns once (``rowscan.pool_of``: its records are not built) and follows the run's writes
    after: a record written since that no longer passes ``_pooled`` leaves it (no consolidate
    event makes one pass that did not: were one to, the pool is read again)."""
    if not (isinstance(s, Working) and s.source is not None):
        pool = _select(s, "updates", _pooled)
        return pool, {m.id for m in pool}
    from .rowscan import InPool, pool_of

    written = s.memories.written
    held = memo.pool
    if held is not None:
        pool, alive, synced = held
        changed = list(dict.fromkeys(written[synced:]))
        for i, at in zip(changed, pool.positions(changed).tolist(), strict=True):
            if not _pooled(s.memories[i]):
                if at >= 0:
                    alive.gone.add(i)
            elif at < 0 or i in alive.gone:
                held = None
                break
    if held is None:
        pool = pool_of(s, _pooled, _UPDATABLE)
        alive = InPool(pool)
    memo.pool = (pool, alive, len(written))
    return pool, alive  # (read, not changed, by the round)


def _build_candidates(s, new: list[Memory], ranked_of: dict[str, list[int]], memo: _Memo) -> None:
    """Build the records ``new`` are compared with this round in one pass: a run over a
    snapshot builds a record when it is first read, and one by one a night's candidates (up
    to 20 a new record) would take a take of the table each."""
    if isinstance(s, Working) and s.source is not None:
        s.build([memo.candidates[n.id][k] for n in new for k in _scoped(n, ranked_of[n.id], memo)])


def _silent(new: list[Memory], postings: Postings, mapper) -> frozenset[str]:
    """The ids of ``new`` (the round's new records, in the pool) whose update check can make
    no event, whatever is ranked for them (``may_relate_any`` over the gist kinds of the pool
    records sharing a key with each; a candidate always shares one). Found only when most of
    the pool is new (a bulk import: the gists of the pool cost at most twice those of the
    new records, which the checks read anyway); a night's thousand records against a big
    pool are all checked, as before."""
    pool = postings.pool
    if not new or 2 * len(new) <= len(pool):
        return frozenset()
    one = {}  # (a gist has eight values: a million texts share eight objects)
    texts = postings.texts
    gists = {t: one.setdefault(g, g) for t, g in _seed(mapper, gists_of, seed_gists, sorted(set(texts)))}
    holders: dict[tuple[bool, bool], set[str]] = {}  # (negated, single) -> the keys of its records
    for i, text in enumerate(texts):
        g = gists[text]
        holders.setdefault((g.negated, g.single), set()).update(postings.keys_at(i))
    silent = []
    for n in new:
        mine = postings.keys_of(n)
        kinds = [kind for kind, held in holders.items() if not held.isdisjoint(mine)]
        if not may_relate_any(n.text, kinds, gists[n.text]):  # (the seeded gists are bounded)
            silent.append(n.id)
    return frozenset(silent)


def _seed(mapper, compute, keep, texts: list[str]):
    """``compute`` (gists_of or frames_of) of ``texts`` by ``mapper`` (the workers), put in
    their cache by ``keep`` (seed_gists or seed); returns (text, what was computed) pairs,
    for a caller that reads them all (the caches are bounded)."""
    chunks = [texts[i:i + CHUNK] for i in range(0, len(texts), CHUNK)]
    pairs = []
    for chunk, found in zip(chunks, mapper(compute, chunks), strict=True):
        keep(chunk, found)
        pairs += zip(chunk, found, strict=True)
    return pairs


# new records ranked before their pairs go to the workers: the workers check a block's pairs
# while this process ranks the next (checks and ranking take about as long), so what is left
# when ranking ends is the last block's
_BLOCK = 128
_FRAMES = CHUNK // 4  # texts whose frames are sent to the workers at a time
# a bulk import's first consolidate (more new records than _BULK) checks them in the larger
# pieces it always had: with thousands of blocks its ranking and checks overlap anyway
_BULK = 2048
_BLOCK_BULK = 2048
_FRAMES_BULK = 8 * CHUNK
# new records (created after the last mark) from which a run asks a mapper that can (an
# ``index.workers.EmbedPool``) to start its workers at once: their update checks then outweigh
# starting a worker on another core; and the records the store holds from which it does, for
# the workers to be up before the update stage needs them (a large store opens slowly enough
# to hide their start; a small one opens at once, and its run then waited for the workers to
# start and stop)
_WARM = 256
_WARM_STORE = 100_000


class _Prefetch:
    """Seeds, on a thread of this process (its work is waiting on the workers), what the
    update checks of the pairs ``put`` to it will read: the texts' gists, then the frames of
    the pairs the gists do not refuse (most do: ``may_relate``), while this process ranks
    the next candidates. Gists and frames are pure functions of the text and seeding only
    caches them: what consolidate decides does not depend on when they arrive."""

    def __init__(self, mapper, frames: int):
        import queue
        import threading

        self.mapper, self.frames = mapper, frames  # (frames: texts sent for frames at a time)
        self.failure: BaseException | None = None
        self.jobs: queue.Queue = queue.Queue()
        self.quiet: list[tuple[str, str]] = []  # the pairs ``may_relate`` refused (old, new)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def put(self, job: list[tuple[str, list[str]]]) -> None:
        """``job``: (a new text, the older texts to compare it with), in any order."""
        self.jobs.put(job)

    def _run(self) -> None:
        waiting: set[str] = set()  # texts whose frames are wanted, not yet sent
        job = ()
        try:
            while (job := self.jobs.get()) is not None:
                texts = {new for new, _ in job} | {o for _, olds in job for o in olds}
                _seed(self.mapper, gists_of, seed_gists, ungisted(texts))
                for new, olds in job:
                    for old, may in zip(olds, may_relate_each(olds, new), strict=True):
                        if may:
                            waiting.add(old)
                            waiting.add(new)
                        else:
                            self.quiet.append((old, new))
                if len(waiting) >= self.frames:
                    _seed(self.mapper, frames_of, seed, unseeded(waiting))
                    waiting = set()
            _seed(self.mapper, frames_of, seed, unseeded(waiting))
        except BaseException as exc:  # (raised where it is joined)
            self.failure = exc
            while job is not None:  # what is put after a failure is dropped, up to the end
                job = self.jobs.get()

    def __enter__(self) -> _Prefetch:
        return self

    def __exit__(self, *exc) -> None:
        self.jobs.put(None)
        self.thread.join()
        if self.failure is not None and exc[0] is None:
            raise self.failure


def _read(m: Memory) -> tuple:
    """What an update check reads of a record that a consolidate event can change."""
    return m.status, m.conflicts_with, m.reconciled_with


def _candidates(n, memo: _Memo) -> list[int]:
    """The records ``n`` is compared with this round (Postings.ranked over the round's pool),
    as positions in its long ranking ``memo.candidates[n.id]``."""
    import numpy as np

    long = memo.candidates.get(n.id)
    if long is None:
        ranked = []
    elif memo.alive is None:  # the round's pool is the postings' whole pool
        ranked = list(range(min(len(long), _MAX_CANDIDATES)))
    else:  # (``alive`` is ``in_pool`` as the postings' positions)
        ranked = np.flatnonzero(memo.alive[memo.places[n.id]])[:_MAX_CANDIDATES].tolist()
    if long is None or (len(ranked) < _MAX_CANDIDATES and len(long) == _LONG):
        at = memo.postings.places(n, _LONG, memo.alive)
        long = memo.candidates[n.id] = memo.postings.ids_at(at)
        memo.domains[n.id] = memo.postings.domains_at(at)
        memo.places[n.id] = np.array(at, dtype=np.int32)
        ranked = list(range(min(len(long), _MAX_CANDIDATES)))
    return ranked


def _loud(n, ranked: list[int], s, memo: _Memo):
    """(record, position) of the candidates at ``ranked`` whose check with ``n`` may still make
    an event: in ``n``'s domain (a domain is a scope: a fact in one does not update another's),
    and not found unrelated by an earlier check (``relation`` None: a function of the texts),
    which no change of status or conflicts makes related."""
    long = memo.candidates[n.id]
    return [(s.memories[long[k]], k) for k in _scoped(n, ranked, memo)]


def _scoped(n, ranked: list[int], memo: _Memo) -> list[int]:
    """The positions of ``_loud``'s candidates, their records not read: the domains are the
    pool's (from a snapshot, its column: most candidates are in another
    domain, and a record was built for each)."""
    long, domains = memo.candidates[n.id], memo.domains.get(n.id)
    was = memo.quiet.get(n.id)
    quiet = was[1] if was is not None and was[0] is long else 0
    return [k for k in ranked if not quiet >> k & 1 and (domains is None or domains[k] == n.domain)]


def _retire(s, now: str, config) -> list[dict]:
    """``rules.retiring`` abstractions, their sources built in one pass from a snapshot."""
    abstractions = _select(s, "retire", abstraction)
    if isinstance(s, Working):  # (from a snapshot, their sources in one pass, not a take of the table each)
        s.build([i for m in abstractions for i in m.derived_from])
    return [retire_event(m, now) for m in abstractions if retiring(m, [s.memories.get(i) for i in m.derived_from])]


def _promote(s, now: str, config, memo: _Memo | None = None) -> list[dict]:
    """``rules.promotion`` of every short-term record, in listing order. From a snapshot, the
    records the run lists are tested as values, the others once a run over the columns
    (``rowscan.promotable``): no consolidate event changes a record the run never writes,
    so one not promoted in the first round is not promoted in a later one."""
    scan = _select(s, "promote", short)
    if isinstance(s, Working) and s.source is not None and (memo is None or not memo.promoted):
        from .rowscan import promotable, shorts

        if memo is not None:
            memo.promoted = True
        rows = promotable(s, now, config)
        if len(rows):
            scan = list(merge(scan, shorts(s, rows), key=_CANONICAL))
    found = (promotion(m, now, config) for m in scan)
    return [e for e in found if e is not None]


def consolidate(state, *, now: str, config, embedder=None, mapper=map, keyer=None, filed=None,
                near=None) -> list[dict]:
    """The events one consolidation at ``now`` appends (without seq), in order.

    ``embedder`` defaults to the hashing embedder (no model) with its thresholds.
    ``mapper(fn, chunks)``: how pure per-text work (update keys and frames) is spread, e.g.
    over the embedder's worker processes; the events are the same whatever it is. One with a
    ``warm()`` (an ``index.workers.EmbedPool``) is asked to start its workers at once when
    the run has ``_WARM`` new records or more in a store of ``_WARM_STORE`` or more.
    ``keyer(texts, derive)``: the update keys of the pool's texts, from a key cache
    (memstore.nightcache.keycache) where it has them, else ``derive(texts)``; the same keys.
    ``filed``: the keys file (memstore.nightcache.poolkeys) of the snapshot ``state`` was opened
    from, whose postings the update stage reads for the records it covers; ``near``: its
    near-duplicate groups file (memstore.nightcache.neargroups) for ``embedder``, whose members
    and vectors the near-duplicate stage reads for the groups it holds; the same events.
    """
    if embedder is None:
        from .embed import HashingEmbedder

        embedder = HashingEmbedder(config["embedder"]["hashing_dim"])
    work = Working.of(state)
    memo = _Memo(mapper, keyer, filed, near)
    warm = getattr(mapper, "warm", None)
    if warm is not None or near is not None:  # (the records created since the last mark)
        mark = work.marks.get("consolidate", 0)
        fresh = [m for m in dict.values(work.memories) if m.seq > mark]
        held = work.source.table.num_rows if work.source is not None else len(work.memories)
        if warm is not None and len(fresh) >= _WARM and held >= _WARM_STORE:
            warm()  # (the update checks' gists and frames go to the workers, which come up meanwhile)
        if near is not None:  # (its groups of the day's records checked on a thread meanwhile)
            near.check_ahead({(m.domain or "", m.subject) for m in fresh if m.subject is not None and m.level == "raw"})
    events: list[dict] = []
    while True:
        batch: list[dict] = []
        for stage in (_expire, _updates, _near_duplicates, _promote, _policy_conflicts, _retire):
            if stage is _near_duplicates:
                found = stage(work, now, config, embedder, memo)
            else:
                found = stage(work, now, config, memo) if stage in (_updates, _promote) else \
                    stage(work, now, config)
                work.build(_ids(found))  # (the records they change, in one pass: a promote's members)
                apply_stage(work, found)
                memo.touch(found)
            batch += found
        if not batch:
            return events
        events += batch


def _select(s, name: str, keep) -> list[Memory]:
    """``s.select`` on a run's state (memstore.working): a stage scans a million records once
    a run, not once a round, since no consolidate event makes a record pass a stage's filter
    it failed (the filters ask for statuses a run only takes away: active, and expired, which
    only active reaches; for tier short, which promote only takes away; for expires_at by now,
    which only promote changes, to none; and for fields no consolidate event sets: level,
    kind, outcome, subject, derived_from). A scan of any other state (the test oracle's)."""
    if isinstance(s, Working):
        return s.select(name, keep)
    return [m for m in s.ordered() if keep(m)]


def rows(table, marks: dict, now: str | None = None):
    """The rows of a snapshot's table (memstore.store.snapshot) a consolidation at ``now``
    opens its state with, as a boolean mask (``rowscan.open_rows``; ``store.open.load_state``
    builds besides the records the log after the snapshot touches). The run reads the update
    pool, its new records' near-duplicate groups and promote's short-term records from
    columns (``rowscan.pool_of``, ``rowscan.members``, ``rowscan.shorts``); anything else it
    reads (candidates, nearest older members, sources, sides of a conflict) it asks for by
    id. A night's state is then the records it reads, not the million archived and
    superseded beside them, nor the live ones it never meets."""
    from .rowscan import open_rows

    return open_rows(table, marks.get("consolidate", 0), now)


def _policy_conflicts(s, now: str, config) -> list[dict]:
    policies = _select(s, "policies", active_policy)
    return policy_conflicts(s, now, config, policies)
