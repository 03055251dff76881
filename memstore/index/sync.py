"""Catch the derived indexes up with the log, or rebuild them from it.

Each index has a manifest with its watermark (the last log seq it reflects).
Catch-up reads only the events after the lowest watermark, folds them onto the
records they touch (fetched from the record index), and writes the changed
records, the new texts (lexical) and the new vectors. A full rebuild is the same
code with every watermark at 0, so both give the same indexes.

Derived files are checked, never trusted: each manifest carries the anchor of the log
line at its watermark (store/anchor.py), so an index from another store or a watermark
set back is rebuilt; a catch-up that finds documents past the watermark rebuilds instead
of adding them twice; and damage that shows only when a query reads it (a Tantivy panic,
an I/O or decode error, vectors that are not unit length) rebuilds every index from the
log once and retries the call (``Indexes``), with one note through ``notify``.
On a read-only store, current indexes are read without the lock (through links in a
temporary directory, since Tantivy writes lock files next to what it opens); a needed
catch-up or rebuild is a StoreError. A store whose log holds no event gets empty
in-memory indexes: a read creates nothing.
"""

from __future__ import annotations

import atexit
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain, islice
from pathlib import Path

from .. import __version__
from ..embed import make_embedder
from ..errors import MemstoreError, StoreError
from ..events import touched_ids
from ..fold import fold
from ..model import memory_from_dict
from ..state import State
from ..store.anchor import anchor_for, anchor_problem
from ..store.fs import FILE_MODE, ensure_dir, exclusive_lock, os_error
from ..store.layout import Layout
from ..store.log import LogReader, read_head
from . import columns, lexical, records, vectors
from .embcache import EmbeddingCache
from .filecheck import file_list, files_changed
from .manifest import read_manifest, write_manifest
from .workers import EmbedPool


class Indexes:
    """The three indexes, the embedder and the cache. ``records``, ``lexical`` and ``vectors``
    forward to the open indexes; a call that finds damage rebuilds them all from the log
    (once per open) and is retried; ``generation`` counts those rebuilds, so a caller that
    combined several calls can start again on the rebuilt indexes."""

    def __init__(self, parts, embedder, cache, watermark: int, caught_up: int, heal=None):
        self._parts = dict(zip(("records", "lexical", "vectors"), parts, strict=True))
        self.embedder = embedder
        self.cache = cache
        self.watermark = watermark
        self.caught_up = caught_up  # events applied by this open (0 when already current)
        self.generation = 0
        self._heal = heal  # (name, exc) -> new parts; None: cannot rebuild (read-only, in memory)
        self.records = _Guard(self, "records")
        self.lexical = _Guard(self, "lexical")
        self.vectors = _Guard(self, "vectors")

    def _damaged(self, name: str, exc: BaseException) -> None:
        what = f"{name} index is damaged ({describe(exc)})"
        if self.generation:
            raise StoreError(f"{what} again after it was rebuilt from the log; run `memstore reindex`, "
                             "then `memstore verify`") from None
        if self._heal is None:
            raise StoreError(f"{what} and cannot be rebuilt here (the store is read-only); run "
                             "`memstore reindex` where the store is writable") from None
        self._parts = dict(zip(("records", "lexical", "vectors"), self._heal(name), strict=True))
        self.generation += 1


class _Guard:
    """Forwards attribute access to one index; a method call that finds damage heals and retries."""

    __slots__ = ("_owner", "_name")

    def __init__(self, owner: Indexes, name: str):
        self._owner = owner
        self._name = name

    def __getattr__(self, attr):
        value = getattr(self._owner._parts[self._name], attr)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            try:
                with _panic_text():
                    return getattr(self._owner._parts[self._name], attr)(*args, **kwargs)
            except BaseException as exc:
                if not is_damage(exc):
                    raise
                self._owner._damaged(self._name, exc)
            try:
                return getattr(self._owner._parts[self._name], attr)(*args, **kwargs)
            except BaseException as exc:
                if not is_damage(exc):
                    raise
                self._owner._damaged(self._name, exc)  # raises: rebuilt once already
                raise

        return call

    def __len__(self) -> int:
        return self.__getattr__("__len__")()


_SINK: list = []  # one scratch file per process for what Rust prints while panicking


@contextmanager
def _panic_text():
    """Rust's panic hook prints "thread ... panicked at ..." on fd 2 before pyo3 raises: hold
    what a call writes there, drop it if the call panicked (one note reports the damage and
    the rebuild), pass it on otherwise. Costs two dup2 calls."""
    if not _SINK:
        _SINK.append(tempfile.TemporaryFile())  # kept open: its descriptor is reused per call
    fd = _SINK[0].fileno()
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no fd 2 to guard
        yield
        return
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.dup2(fd, 2)
    panicked = False
    try:
        yield
    except BaseException as exc:
        panicked = type(exc).__name__ == "PanicException"
        raise
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        size = os.lseek(fd, 0, os.SEEK_CUR)
        if size and not panicked:
            os.write(2, os.pread(fd, size, 0))


def is_damage(exc: BaseException) -> bool:
    """Errors a damaged derived file raises: Tantivy's Rust panics (pyo3's PanicException is a
    BaseException), I/O and decode errors. memstore's own errors are not damage."""
    if isinstance(exc, MemstoreError):
        return False
    return type(exc).__name__ == "PanicException" or isinstance(exc, (OSError, ValueError, RuntimeError))


def describe(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:160]


def expected_manifest(name: str, embedder) -> dict:
    """The manifest fields an index must carry to be usable with this embedder."""
    fmt = {"records": records.FORMAT, "lexical": lexical.FORMAT, "vectors": vectors.FORMAT}[name]
    m = {"format": fmt}
    if name == "vectors":
        m.update(embedder=embedder.name, dim=embedder.dim)
    return m


def _watermarks(layout: Layout, embedder, head: int, *, remove: bool = True) -> tuple[dict[str, int], str | None]:
    """Each index's usable watermark (0: rebuild it) and, when one is not this log's or its
    files are not those its manifest lists, why (a phrase for a note or an error)."""
    marks, why = {}, None
    for name, path in layout.index_paths().items():
        manifest = read_manifest(layout.manifest_path(name))
        expected = expected_manifest(name, embedder)
        mark = manifest.get("watermark") if isinstance(manifest, dict) else None
        if (not isinstance(manifest, dict) or any(manifest.get(k) != v for k, v in expected.items())
                or type(mark) is not int or mark <= 0 or mark > head):
            mark = None  # missing, damaged, other format or embedder, empty, ahead of the log
        elif problem := anchor_problem(layout, manifest.get("anchor"), mark):
            # (a manifest from before anchors, or before they recorded partitions, is simply
            # rebuilt)
            if isinstance(manifest.get("anchor"), dict) and "older memstore" not in problem:
                why = why or f"index/ did not match this store's log (index/{_shown(name)}: {problem})"
            mark = None
        elif problem := files_changed(layout, name, manifest):
            if "files" in manifest:  # (likewise a manifest from before file lists)
                why = why or f"{problem} (damaged or replaced)"
            mark = None
        if mark is None:
            if remove:
                _remove(path)
                layout.manifest_path(name).unlink(missing_ok=True)
            mark = 0
        marks[name] = mark
    return marks, why


def _counts_differ(layout: Layout, rec, lex, vec) -> bool:
    """Whether any index holds another number of documents than its manifest says."""
    have = {"records": rec.count(), "lexical": lex.count(), "vectors": len(vec)}
    for name in layout.index_paths():
        manifest = read_manifest(layout.manifest_path(name))
        if isinstance(manifest, dict) and manifest.get("count", have[name]) != have[name]:
            return True
    return False


def _past(mark: int, rec, lex, vec) -> bool:
    """Whether an index already holds a memory created after the watermark (set back, or a
    crash between a commit and its manifest): catching up would add it twice."""
    return rec.count_after(mark) > 0 or lex.count_after(mark) > 0 or vec.max_seq() > mark


class _Rebuild(Exception):
    pass


def _open(paths: dict[str, Path] | None, embedder, vector_path: Path):
    """The three indexes (in memory when ``paths`` is None)."""
    return (records.RecordIndex(paths and paths["records"]), lexical.LexicalIndex(paths and paths["lexical"]),
            vectors.VectorIndex(vector_path, embedder.dim))


def _clear(layout: Layout) -> None:
    for name, path in layout.index_paths().items():
        _remove(path)
        layout.manifest_path(name).unlink(missing_ok=True)
    columns.remove(layout)


def _failed(layout: Layout, exc: BaseException) -> StoreError:
    if isinstance(exc, OSError):
        return os_error(exc, layout.index_dir, "update the indexes in")
    return StoreError(f"cannot update the indexes in {layout.index_dir}: {describe(exc)}; "
                      "free some space or check the directory, then run `memstore reindex`")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if path.suffix == ".usearch":  # the seqs beside it (and an older format's copy of the rows)
        for side in (*vectors.sidecars(path), *vectors.stale(path)):
            side.unlink(missing_ok=True)


def _writable(layout: Layout) -> bool:
    """Create index/ and its lock file if need be; False when the store is read-only."""
    try:
        if not layout.index_dir.is_dir():
            ensure_dir(layout.index_dir)
        fd = os.open(layout.index_dir / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
        os.close(fd)
        return True
    except StoreError:
        if layout.root.is_dir() and not os.access(layout.root, os.W_OK):
            return False
        raise
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise os_error(exc, layout.index_dir / ".lock", "open the lock") from None


@contextmanager
def read_lock(layout: Layout):
    """The index lock for a reader that must not see a catch-up half way (verify); yields
    False without it on a read-only store, where no catch-up can run."""
    if layout.index_dir.is_dir() and _writable(layout):
        with exclusive_lock(layout.index_dir / ".lock"):
            yield True
    else:
        yield False


def open_indexes(layout: Layout, config, cache_dir: Path | None, *, progress=None,
                 rebuild: bool = False, notify=None, embedder=None, jobs: int = 1) -> Indexes:
    """Open the indexes, first catching them up with the log (under the index lock).

    ``notify(text)`` hears, once, that damaged or foreign index files were rebuilt.
    ``embedder``: one already loaded (a long-lived process keeps its model).
    ``jobs``: worker processes that embed what the catch-up adds (workers.py; 1: this one)."""
    if type(jobs) is not int or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    embedder = embedder or make_embedder(config)
    cache = EmbeddingCache(cache_dir, embedder.name, embedder.dim)
    head = read_head(layout).seq
    if head == 0 and not rebuild and not layout.index_dir.exists():
        # nothing to index: empty indexes in memory, and nothing created on disk
        parts = _open(None, embedder, layout.index_path("vectors"))
        return Indexes(parts, embedder, cache, 0, 0)
    if not _writable(layout):
        if rebuild:
            raise StoreError(f"cannot rebuild the indexes in {layout.index_dir}: the store is read-only; "
                             "use a writable --store")
        return _open_read_only(layout, embedder, cache, head)

    def heal(name: str) -> tuple:
        with exclusive_lock(layout.index_dir / ".lock"):
            parts, _mark, _applied = _build(layout, embedder, cache, progress, notify, rebuild=True, jobs=jobs)
        if notify:
            notify(f"memstore: index/{_shown(name)} was damaged; "
                   "rebuilt from the log")
        return parts

    with exclusive_lock(layout.index_dir / ".lock"):
        parts, mark, applied = _build(layout, embedder, cache, progress, notify, rebuild=rebuild, jobs=jobs)
    return Indexes(parts, embedder, cache, mark, applied, heal)


def _build(layout: Layout, embedder, cache, progress, notify, *, rebuild: bool, jobs: int = 1):
    """Catch up (or rebuild) under the index lock; (parts, watermark, events applied).
    The workers, when a catch-up needs them, live as long as this call."""
    with EmbedPool(embedder, jobs) as pool:
        return _build_with(layout, pool, cache, progress, notify, rebuild=rebuild)


def _build_with(layout: Layout, embedder, cache, progress, notify, *, rebuild: bool):
    paths = layout.index_paths()
    vpath = paths["vectors"]
    if rebuild:
        _clear(layout)
    head = read_head(layout).seq
    marks, why = _watermarks(layout, embedder, head)
    if len(set(marks.values())) > 1:  # out of step (a crash, a deleted index): rebuild all
        _clear(layout)
        marks = dict.fromkeys(marks, 0)
    mark = marks["records"]
    damaged = False
    try:
        rec, lex, vec = _open(paths, embedder, vpath)
        if mark and (_counts_differ(layout, rec, lex, vec) or _past(mark, rec, lex, vec)):
            raise _Rebuild
        caught, applied = _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress)
    except BaseException as exc:
        if not (isinstance(exc, _Rebuild) or is_damage(exc)):
            raise
        # derived files a crash left half-written (a Tantivy segment file that exists
        # already, a truncated vector file) or damaged ones: they are a cache, so build
        # them again, once
        damaged = type(exc).__name__ == "PanicException"
        _clear(layout)
        mark = 0
        try:
            rec, lex, vec = _open(paths, embedder, vpath)
            caught, applied = _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress)
        except BaseException as again:
            if not is_damage(again):
                raise
            raise _failed(layout, again) from None
    if notify and damaged:
        notify("memstore: index/ was damaged; rebuilt from the log")
    elif notify and why:
        notify(f"memstore: {why}; index/ rebuilt from the log")
    if caught:
        mark = caught
        _write_manifests(layout, embedder, mark, rec, lex, vec)
    elif mark:  # nothing new: still write the columns file a store of this size lacks
        manifest = read_manifest(layout.manifest_path("records")) or {}
        columns.refresh(layout, rec, mark, [manifest.get("anchor")])
    return (rec, lex, vec), mark, applied


def _write_manifests(layout: Layout, embedder, mark: int, rec, lex, vec) -> None:
    paths = layout.index_paths()
    previous = {name: read_manifest(layout.manifest_path(name)) for name in paths}
    anchor = anchor_for(layout, mark, [m.get("anchor") for m in previous.values() if m])
    for name in paths:
        write_manifest(layout.manifest_path(name), {
            **expected_manifest(name, embedder), "builder": f"memstore {__version__}",
            "watermark": mark, "anchor": anchor,
            "count": {"records": rec.count, "lexical": lex.count, "vectors": vec.__len__}[name](),
            "files": file_list(layout, name, previous[name]),
        })
    columns.refresh(layout, rec, mark, [anchor])


def refresh(ix: Indexes, layout: Layout, config, cache_dir: Path | None, *, notify=None) -> Indexes:
    """Indexes a long-lived process keeps open, brought up to the log's head (memstore serve).

    Nothing new in the log: the same indexes, at the cost of reading the head. New events,
    and the files on disk still at this process's watermark: they are applied to the open
    indexes in place (the cost of what was appended, as in a catch-up). Anything else
    (another process caught the files up, a rebuild, a read-only store): a fresh open,
    which checks every file as any command's open does."""
    head = read_head(layout).seq
    if head == ix.watermark:
        return ix
    if ix._heal is None or head < ix.watermark:
        return open_indexes(layout, config, cache_dir, notify=notify, embedder=ix.embedder)
    with exclusive_lock(layout.index_dir / ".lock"):
        marks, why = _watermarks(layout, ix.embedder, read_head(layout).seq, remove=False)
        if why is None and set(marks.values()) == {ix.watermark} and not ix.generation:
            rec, lex, vec = (ix._parts[n] for n in ("records", "lexical", "vectors"))
            try:
                caught, _count = _catch_up(layout, ix.watermark, rec, lex, vec, ix.embedder, ix.cache, None)
            except BaseException as exc:
                if not is_damage(exc):
                    raise
                caught = -1
            if caught > 0:
                _write_manifests(layout, ix.embedder, caught, rec, lex, vec)
                ix.watermark = caught
                return ix
            if caught == 0:
                return ix
    return open_indexes(layout, config, cache_dir, notify=notify, embedder=ix.embedder)


def _shown(name: str) -> str:
    return "vectors.usearch" if name == "vectors" else name


_SHADOWS: list[str] = []


@atexit.register
def _drop_shadows() -> None:
    for d in _SHADOWS:
        shutil.rmtree(d, ignore_errors=True)


def shadow(path: Path) -> Path:
    """A temporary directory of links to a Tantivy index's files: Tantivy takes its lock files
    beside the files it opens, which a read-only store cannot hold."""
    d = tempfile.mkdtemp(prefix="memstore-ro-")
    _SHADOWS.append(d)
    path = Path(os.path.abspath(path))  # (a link to a relative path resolves from the link's directory:
    # `--store STORE` given relative made every link dangle, and Tantivy then opened an empty index)
    for name in os.listdir(path):
        if not name.startswith(".tantivy-"):
            os.symlink(path / name, Path(d) / name)
    return Path(d)


def _open_read_only(layout: Layout, embedder, cache, head: int) -> Indexes:
    """Current indexes of a read-only store, read without the lock; else a StoreError."""
    if head == 0:
        return Indexes(_open(None, embedder, layout.index_path("vectors")), embedder, cache, 0, 0)
    marks, why_not = _watermarks(layout, embedder, head, remove=False)
    behind = [m for m in marks.values() if m != head]

    def refuse(why: str) -> StoreError:
        return StoreError(f"cannot read the indexes in {layout.index_dir}: {why}, and the store is "
                          "read-only so they cannot be brought up to date; run `memstore index` where "
                          "the store is writable (or use a writable copy)")

    if behind:
        why = why_not or f"they are behind the log (seq {min(behind)} of {head})"
        raise refuse(why)
    paths = layout.index_paths()
    try:
        parts = _open({n: shadow(paths[n]) for n in ("records", "lexical")}, embedder, paths["vectors"])
        if _counts_differ(layout, *parts) or _past(head, *parts):
            raise ValueError("their document counts do not match their manifests")
    except BaseException as exc:
        if not is_damage(exc):
            raise
        raise refuse(f"they are damaged ({describe(exc)})") from None
    return Indexes(parts, embedder, cache, head, 0)


CHUNK = 20_000  # events folded and indexed at a time: bounds memory on a large log (a reindex
# peaked higher with more, the log read in blocks)


def _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress) -> tuple[int, int]:
    """Apply the events after ``mark``; (the new watermark, the events applied); (0, 0):
    nothing to do."""
    if read_head(layout).seq <= mark:
        return 0, 0
    events = _after(layout, mark)
    last = count = 0
    while chunk := list(islice(events, CHUNK)):
        _apply(chunk, mark, rec, lex, vec, embedder, cache, progress)
        mark = last = chunk[-1]["seq"]
        count += len(chunk)
    if last:
        vec.save()
    return last, count


def _after(layout: Layout, mark: int) -> Iterator[dict]:
    """The events after ``mark``, read from the byte after its line when the manifests' anchor
    still locates it (reading the whole log to skip what is indexed made every catch-up O(n),
    every call for a server whose searches record their use); else the whole log."""
    if mark:
        anchor = (read_manifest(layout.manifest_path("records")) or {}).get("anchor")
        if isinstance(anchor, dict) and anchor_problem(layout, anchor, mark) is None:
            events = LogReader(layout).events(after_seq=mark, start=(anchor["file"],
                                                                      anchor["start"] + anchor["length"] + 1))
            first = next(events, None)
            if first is None:
                return iter(())
            if first["seq"] == mark + 1:
                return chain([first], events)
    return LogReader(layout).events(after_seq=mark)


def _apply(events: list[dict], mark: int, rec, lex, vec, embedder, cache, progress) -> None:
    """Fold events onto the records they touch and index what they created."""
    touched = records.touched(rec, events) if mark else []
    before = rec.get(touched) if mark else {}
    state = fold(events, State(memories=dict(before), seq=mark))
    named: dict[str, list[int]] = {}  # the events each record is named by (what `show` lists)
    for e in events:
        for i in touched_ids(e):
            named.setdefault(i, []).append(e["seq"])
    changed = sorted((m for mid, m in state.memories.items() if before.get(mid) != m or mid in named),
                     key=lambda m: (m.seq, m.id))
    # every replaced document keeps its events, named in this chunk or not (a forget changes
    # the other side of its conflicts without naming it)
    history = rec.events_of([m.id for m in changed if m.id in before]) if mark else {}
    rec.put(changed, {m.id: sorted({*history.get(m.id, ()), *named.get(m.id, ())}) for m in changed})  # (a chunk
    # applied again after a crash before its manifest names its events once)
    # Text and cues are indexed as the record was created: a later event may reword a
    # derived record (a policy's support grows), and an incremental build and a rebuild
    # from the log must still index the same documents.
    born = {m.id: m for m in state.memories.values() if m.seq > mark}
    for e in events:
        created = e.get("memory")
        if isinstance(created, dict) and created.get("id") in born and born[created["id"]].seq == e["seq"]:
            born[created["id"]] = memory_from_dict({**created, "seq": e["seq"]})
    new = sorted(born.values(), key=lambda m: m.seq)
    lex.add(new)
    if new:
        vecs = cache.embed(embedder, [m.text for m in new], "passage", progress=progress)
        vec.add([m.seq for m in new], vecs)
