"""The near-duplicate groups beside a snapshot, with their vectors: ``snapshots/state-<seq>.near``.

A night's ``consolidate`` decides each new record against the older members of its group
(a domain and a subject): the cosine with every one of them. On a large store a
night's few new records fall in groups of very many members, whose vectors were looked
up in the embedding cache text by text (hashed, found, read from scattered pages of a
large file) after the members were grouped and sorted. This file holds,
for the snapshot's candidates of those groups (active raw records with a subject), each
group's rows in the order consolidate compares them (event time, then seq, then id) and
their vectors in that order, as the embedding cache held them when the snapshot was
taken. A night reads the blocks of its groups; the records the log after the snapshot
touched are built and compared as they are now, with their vectors from the cache, as
without the file (tests/test_neargroups.py holds the events equal).

Every group of the snapshot is listed, so a group the file does not list has no older
member in the snapshot (a night's new subjects: nothing is read for them); a group of fewer
than ``LEAST`` members, or with a member whose vector the cache lacked, is listed without
its vectors (nothing is embedded by `snapshot`), and a night takes it as before. The vectors are those of one embedder, named
in the file: another embedder's night does not read it.

A derived file like the snapshot it belongs to, written after it by `snapshot`, and
believed only after these checks: its format, the checksum of the snapshot it was made
from (the one the night opened), the embedder, its length, the sha256 of everything but
the vectors, and the bounds of every offset and row; a group's vectors are believed when
their own sha256 matches, checked when the group is first read (a night reads a fraction
of them). Anything else and the group is taken as without the file. Deleting it changes
no answer.

Layout: one line of canonical JSON (format, snapshot checksum, the table's rows, embedder,
dimensions, groups, rows, rows with vectors, name bytes, and the sha256 of the body before
the vectors), then, little-endian: where each group's rows start (u8, one more than there
are groups); where each group's domain and subject start in the names (u8, two a group and
one more); the rows (u4); whether each group's vectors are there (u1); each group's
vectors' sha256 (32 bytes a group, zeros for one without); the names (UTF-8, domain then
subject, groups in (domain, subject) order); zeros up to a 64-byte boundary of the file;
the vectors of the groups that have them (f4, one row each, group after group).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..codec import dumps

FORMAT = "memstore-neargroups/1"
# the fewest members a group has its vectors written for: a smaller group costs a night little
# in the cache, and a store of many subjects has many such groups (the zipf shape: half its
# grouped rows are in groups of fewer than 16)
LEAST = 16
_ALIGN = 64
_HEAD_MOST = 1 << 16  # a header line is far shorter


def path_of(snapshot: Path) -> Path:
    """The groups file of a snapshot ``state-<seq>.parquet``: ``state-<seq>.near``."""
    return snapshot.with_suffix(".near")


def candidate_rows(table):
    """The rows of consolidate's near-duplicate candidates: active, raw, with a subject."""
    import numpy as np
    import pyarrow.compute as pc

    from ..rowscan import mask

    held = mask(pc.and_(pc.and_(pc.equal(table.column("status"), "active"), pc.equal(table.column("level"), "raw")),
                        pc.is_valid(table.column("subject"))))
    return np.flatnonzero(held)


def grouped(table):
    """(the groups as (domain, subject) in order, where each one's rows start (one more than
    there are groups), the rows): the candidates grouped by domain (a null one is "") and
    subject, each group's rows in consolidate's order (event time, seq, id: ``_order``).
    Arrow compares strings by their UTF-8 bytes, which order as their code points do."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = candidate_rows(table)
    if not len(rows):
        return [], np.zeros(1, dtype=np.int64), rows
    idx = pa.array(rows, type=pa.int64())
    keys = pa.table({"domain": pc.fill_null(table.column("domain").take(idx), ""),
                     "subject": table.column("subject").take(idx),
                     "occurred_at": table.column("occurred_at").take(idx),
                     "seq": table.column("seq").take(idx), "id": table.column("id").take(idx)})
    order = pc.sort_indices(keys, sort_keys=[(name, "ascending") for name in keys.column_names]).to_numpy()
    rows = rows[order]
    domain = keys.column("domain").take(order).to_pylist()
    subject = keys.column("subject").take(order).to_pylist()
    first = [0] + [i for i in range(1, len(rows)) if domain[i] != domain[i - 1] or subject[i] != subject[i - 1]]
    starts = np.array([*first, len(rows)], dtype=np.int64)
    return [(domain[i], subject[i]) for i in first], starts, rows


def build(table, checksum: str, embedder, prior=None) -> bytes | None:
    """The file's bytes for a snapshot's ``table`` whose data checksum is ``checksum`` (see
    ``write``); None when the table has no group."""
    import io

    plan = _plan(table, embedder, prior)
    if plan is None:
        return None
    out = io.BytesIO()
    _emit(out, table.num_rows, checksum, embedder, plan)
    return out.getvalue()


def write(snapshot: Path, table, checksum: str, embedder, prior=None) -> bool:
    """Write the groups file of the snapshot at ``snapshot`` (its table and data checksum),
    with the vectors ``embedder.cached(texts)`` holds (the embedding cache: nothing is
    embedded; a group with a member it lacks, or of fewer than ``LEAST`` members, is listed
    without its vectors). ``prior``: (the
    ``NearGroups`` of the snapshot this one was taken from, that snapshot's table): the
    vectors of the rows both tables hold alike are copied from it (those of its groups whose
    digests hold), the others looked up; the same bytes either way. Written a block of
    groups at a time, never whole in memory. False, and none there, when the table has no
    group (or ``embedder`` is None)."""
    import os

    from ..store.fs import write_atomic_with

    path = path_of(snapshot)
    plan = _plan(table, embedder, prior) if embedder is not None else None
    if plan is None:
        path.unlink(missing_ok=True)
        return False

    def fill(fd: int) -> None:
        with os.fdopen(fd, "wb", closefd=False) as out:
            _emit(out, table.num_rows, checksum, embedder, plan)

    write_atomic_with(path, fill)
    return True


class _Plan:
    """What the file holds and where each row's vector comes from: the last file's vectors
    (``old_at``, a row of ``old``), else the cache's answer (``cache_at``, a row of ``looked``)."""

    def __init__(self, groups, starts, rows, covered, old, old_at, looked, cache_at):
        self.groups, self.starts, self.rows, self.covered = groups, starts, rows, covered
        self.old, self.old_at, self.looked, self.cache_at = old, old_at, looked, cache_at

    def vectors(self, a: int, z: int):
        """The vectors of the rows ``a`` to ``z`` (of the file's rows), as one array."""
        import numpy as np

        old_at, cache_at = self.old_at[a:z], self.cache_at[a:z]
        out = np.empty((z - a, self.looked.shape[1]), dtype="<f4")
        mine = old_at >= 0
        if mine.any():
            out[mine] = self.old[old_at[mine]]
        if not mine.all():
            out[~mine] = self.looked[cache_at[~mine]]
        return out


def _plan(table, embedder, prior) -> _Plan | None:
    import numpy as np

    groups, starts, rows = grouped(table)
    if not groups:
        return None
    old, old_at = _from_prior(table, rows, embedder, prior)
    need = np.flatnonzero(old_at < 0)
    texts = table.column("text").take(rows[need]).to_pylist() if len(need) else []
    if texts:
        looked, found = embedder.cached(texts, "passage")
        looked = np.ascontiguousarray(looked, dtype="<f4")
    else:
        looked, found = np.zeros((0, embedder.dim), dtype="<f4"), np.zeros(0, dtype=bool)
    have = np.ones(len(rows), dtype=bool)
    have[need] = found
    cache_at = np.full(len(rows), -1, dtype=np.int64)
    cache_at[need] = np.arange(len(need), dtype=np.int64)
    covered = np.logical_and.reduceat(have, starts[:-1]) & (np.diff(starts) >= LEAST)
    return _Plan(groups, starts, rows, covered, old, old_at, looked, cache_at)


def _from_prior(table, rows, embedder, prior):
    """(the last file's vectors, or None; for each of ``rows``, its row among them, -1 where
    the last file has none to give): when ``table`` begins with the last snapshot's rows (their
    ids: a snapshot taken from another keeps its rows in place and adds the records created
    since after them), for those rows with the same text in groups whose digests hold."""
    import numpy as np
    import pyarrow.compute as pc

    none = np.full(len(rows), -1, dtype=np.int64)
    if prior is None:
        return None, none
    old, old_table = prior
    n = old.table_rows
    if (old.embedder != embedder.name or old.dim != embedder.dim or old_table.num_rows != n
            or table.num_rows < n or not table.column("id").slice(0, n).equals(old_table.column("id"))):
        return None, none
    at = np.full(table.num_rows, -1, dtype=np.int64)
    for key, g in old.index.items():
        found = old.block(key) if old.covered[g] else None  # (its digest checked)
        if found is not None:
            first = int(old._vec_at[g])
            at[found[0]] = np.arange(first, first + len(found[0]), dtype=np.int64)
    # (a raw record's text never changes; held to it all the same)
    same = pc.fill_null(pc.equal(table.column("text").slice(0, n), old_table.column("text")), False)
    at[:n][~np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)] = -1
    return old._vectors, at[rows]


_BLOCK = 16_384  # rows of vectors gathered, hashed and written at a time (16 MB at 256 dimensions)


def _emit(out, table_rows: int, checksum: str, embedder, plan: _Plan) -> None:
    """Write the file into ``out`` (a seekable binary file): the vectors first, at their place
    past the header (whose length the counts fix: its sha256 is of a fixed length), a block
    of rows at a time, each group's digest taken as it goes; then the header and the table."""
    import numpy as np

    groups, starts, rows, covered = plan.groups, plan.starts, plan.rows, plan.covered
    names = [part.encode() for key in groups for part in key]
    name_at = np.zeros(len(names) + 1, dtype="<u8")
    np.cumsum([len(n) for n in names], out=name_at[1:])
    vec_at = _vector_starts(starts, covered)
    g = len(groups)
    head = {"format": FORMAT, "snapshot": checksum, "table_rows": table_rows, "embedder": embedder.name,
            "dim": int(embedder.dim), "groups": g, "rows": len(rows), "vectors": int(vec_at[-1]),
            "names": int(name_at[-1]), "sha256": "0" * 64}
    size = 8 * (g + 1) + 8 * (2 * g + 1) + 4 * len(rows) + g + 32 * g + int(name_at[-1])
    line = dumps(head)
    end = len(line) + 1 + size
    out.seek(end + _padding(end))
    hashers = [hashlib.sha256() if held else None for held in covered.tolist()]
    k, n = 0, len(rows)  # (k: the group of the row at hand)
    for a in range(0, n, _BLOCK):  # (a block of rows at a time: a group may be larger)
        z = min(n, a + _BLOCK)
        block = plan.vectors(a, z)
        at = a
        while at < z:
            while starts[k + 1] <= at:
                k += 1
            upto = min(z, int(starts[k + 1]))
            if hashers[k] is not None:
                part = block[at - a:upto - a]
                hashers[k].update(part)
                out.write(part.tobytes())
            at = upto
    digests = [h.digest() if h is not None else bytes(32) for h in hashers]
    table = b"".join([np.asarray(starts).astype("<u8").tobytes(), name_at.tobytes(),
                      np.asarray(rows).astype("<u4").tobytes(), np.asarray(covered).astype("u1").tobytes(),
                      b"".join(digests), b"".join(names)])
    head["sha256"] = hashlib.sha256(table).hexdigest()
    line = dumps(head)
    out.seek(0)
    out.write(line + b"\n" + table + bytes(_padding(end)))


def _vector_starts(starts, covered):
    """Where each group's vectors start among the vectors (one more than there are groups):
    the groups before it that have theirs, their sizes summed."""
    import numpy as np

    out = np.zeros(len(starts), dtype=np.int64)
    np.cumsum(np.diff(starts) * np.asarray(covered, dtype=np.int64), out=out[1:])
    return out


def _padding(end: int) -> int:
    """The zeros after ``end`` bytes of the file that put the vectors on a 64-byte boundary."""
    return -end % _ALIGN


class NearGroups:
    """A groups file as read: ``block(key)`` gives a group's rows and vectors."""

    def __init__(self, path: Path, head: dict, table: bytes, vectors_at: int):
        import numpy as np

        from ..store.fs import arrays

        g, n = head["groups"], head["rows"]
        self.path, self.table_rows, self.dim = path, head["table_rows"], head["dim"]
        self.embedder = head["embedder"]
        take = arrays(table)
        self.starts = take("<u8", g + 1).astype(np.int64)
        self.name_at = take("<u8", 2 * g + 1).astype(np.int64)
        self.rows = take("<u4", n).astype(np.int64)
        self.covered = take("u1", g)
        at = take.at()
        self.digests = table[at:at + 32 * g]
        names = table[at + 32 * g:at + 32 * g + head["names"]]
        self._names, self._vectors_at, self._n, self._held = names, vectors_at, n, head["vectors"]
        self._vectors = None
        self._vec_at = None  # where each group's vectors start (``_vector_starts``), once sound
        self._checked: dict[int, bool] = {}  # group -> whether its vectors match their digest
        self._ahead = None  # the thread of ``check_ahead``, until ``block`` has waited for it
        self.index: dict[tuple[str, str], int] = {}

    def _sound(self) -> bool:
        import numpy as np

        def rising(a, end):
            return len(a) >= 1 and int(a[0]) == 0 and int(a[-1]) == end and not (np.diff(a) < 0).any()

        if not (rising(self.starts, self._n) and rising(self.name_at, len(self._names))):
            return False
        self._vec_at = _vector_starts(self.starts, self.covered)
        if (self.covered > 1).any() or int(self._vec_at[-1]) != self._held:
            return False
        if self._n and (int(self.rows.min()) < 0 or int(self.rows.max()) >= self.table_rows):
            return False
        try:
            parts = [self._names[a:z].decode() for a, z in zip(self.name_at[:-1].tolist(), self.name_at[1:].tolist(),
                                                                strict=True)]
        except UnicodeDecodeError:
            return False
        self.index = {(parts[2 * g], parts[2 * g + 1]): g for g in range(len(self.starts) - 1)}
        return len(self.index) == len(self.starts) - 1

    def holds(self, key: tuple[str, str]) -> bool:
        """Whether the snapshot has candidates of the group ``key`` (the file lists every group
        it has, with its vectors or not)."""
        return key in self.index

    def block(self, key: tuple[str, str]):
        """(the group's rows, in consolidate's order; its vectors, a read-only map of the file)
        when the file holds the group ``key`` with its vectors and they match their digest,
        else None."""
        if self._ahead is not None:  # (what ``check_ahead`` checks is read once it is done)
            self._ahead.join()
            self._ahead = None
        found = self._span(key)
        if found is None:
            return None
        g, a, z, vecs = found
        ok = self._checked.get(g)
        if ok is None:
            ok = self._checked[g] = self._holds(g, vecs)
        return (self.rows[a:z], vecs) if ok else None

    def _span(self, key):
        """(the group's index, where its rows start and end, its vectors) when it has them."""
        import numpy as np

        g = self.index.get(key)
        if g is None or not self.covered[g]:
            return None
        if self._vectors is None:
            self._vectors = np.memmap(self.path, dtype="<f4", mode="r", offset=self._vectors_at,
                                      shape=(self._held, self.dim)) if self._held else np.zeros((0, self.dim), "<f4")
        a, z = int(self.starts[g]), int(self.starts[g + 1])
        va = int(self._vec_at[g])  # (set by _sound, as every file read is)
        return g, a, z, self._vectors[va:va + z - a]

    def _holds(self, g: int, vecs) -> bool:
        return hashlib.sha256(vecs).digest() == self.digests[32 * g:32 * g + 32]

    def check_ahead(self, keys) -> None:
        """Check the digests of these groups' vectors on a thread (hashing lets go of the
        interpreter), while the caller does other work: a night checks its groups during its
        update stage (reading and hashing all their vectors). ``block`` waits for it."""
        import threading

        spans = [found for key in sorted(keys) if (found := self._span(key)) is not None]
        if not spans:
            return

        def run() -> None:
            for g, _a, _z, vecs in spans:
                self._checked[g] = self._holds(g, vecs)

        self._ahead = threading.Thread(target=run, daemon=True)
        self._ahead.start()

    def damaged(self) -> list[tuple[str, str]]:
        """The groups whose vectors do not match their digest (verify reads them all)."""
        return [key for key, g in self.index.items() if self.covered[g] and self.block(key) is None]


def read(snapshot: Path, checksum: str | None, embedder=None) -> NearGroups | None:
    """The groups file of the snapshot at ``snapshot`` whose data checksum is ``checksum``,
    for ``embedder`` (its name and dimensions; None: whichever), or None when there is none
    that can be believed (``problem`` says why)."""
    found = _checked(snapshot, checksum, embedder)
    return found if isinstance(found, NearGroups) else None


def problem(snapshot: Path, checksum: str | None) -> str | None:
    """Why the groups file of this snapshot cannot be believed (None: it can, or there is
    none); for verify (which also reads every group's vectors: ``NearGroups.damaged``)."""
    found = _checked(snapshot, checksum, None)
    return found if isinstance(found, str) else None


def _checked(snapshot: Path, checksum: str | None, embedder) -> NearGroups | str | None:
    import os
    import stat

    from ..codec import JSONDecodeError, loads

    path = path_of(snapshot)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as fh:
            line = fh.readline(_HEAD_MOST)
            try:
                head = loads(line) if line.endswith(b"\n") else None
            except JSONDecodeError:
                head = None
            if not isinstance(head, dict):
                return "has no header"
            if head.get("format") != FORMAT:
                return f"is of format {head.get('format')!r}, not {FORMAT!r}"
            if checksum is None or head.get("snapshot") != checksum:
                return "was made from another snapshot than the one beside it"
            counts = [head.get(k) for k in ("table_rows", "dim", "groups", "rows", "vectors", "names")]
            if not all(type(c) is int and 0 <= c < 1 << 40 for c in counts) or not isinstance(head.get("embedder"), str):
                return "has a header whose counts are not counts"
            _n, dim, g, r, v, b = counts
            size = 8 * (g + 1) + 8 * (2 * g + 1) + 4 * r + g + 32 * g + b
            at = len(line) + size + _padding(len(line) + size)  # (where the vectors start)
            if v > r or info.st_size != at + 4 * dim * v:
                return "does not match its length (damaged)"
            if embedder is not None and (head["embedder"] != embedder.name or dim != embedder.dim):
                return None  # (another embedder's vectors: not this night's to read)
            table = fh.read(size)
        if hashlib.sha256(table).hexdigest() != head.get("sha256"):
            return "does not match its sha256 (damaged)"
        found = NearGroups(path, head, table, at)
        if not found._sound():
            return "holds offsets, rows or names out of bounds"
        return found
    finally:
        os.close(fd)
