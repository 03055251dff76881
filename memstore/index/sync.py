"""Catch the derived indexes up with the log, or rebuild them from it.

Each index has a manifest with its watermark (the last log seq it reflects).
Catch-up reads only the events after the lowest watermark, folds them onto the
records they touch (fetched from the record index), and writes the changed
records, the new texts (lexical) and the new vectors. A full rebuild is the same
code with every watermark at 0, so both give the same indexes.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from .. import __version__
from ..embed import make_embedder
from ..errors import StoreError
from ..events import touched_ids
from ..fold import fold
from ..model import memory_from_dict
from ..state import State
from ..store.fs import ensure_dir, exclusive_lock, os_error
from ..store.layout import Layout
from ..store.log import LogReader, read_head
from . import lexical, records, vectors
from .embcache import EmbeddingCache
from .manifest import read_manifest, write_manifest


@dataclass
class Indexes:
    records: records.RecordIndex
    lexical: lexical.LexicalIndex
    vectors: vectors.VectorIndex
    embedder: object
    cache: EmbeddingCache
    watermark: int
    caught_up: int  # events applied by this open (0 when already current)


def expected_manifest(name: str, embedder) -> dict:
    """The manifest fields an index must carry to be usable with this embedder."""
    fmt = {"records": records.FORMAT, "lexical": lexical.FORMAT, "vectors": vectors.FORMAT}[name]
    m = {"format": fmt}
    if name == "vectors":
        m.update(embedder=embedder.name, dim=embedder.dim)
    return m


def _watermarks(layout: Layout, embedder) -> dict[str, int]:
    marks = {}
    for name, path in layout.index_paths().items():
        manifest = read_manifest(layout.manifest_path(name))
        expected = expected_manifest(name, embedder)
        if (not isinstance(manifest, dict) or any(manifest.get(k) != v for k, v in expected.items())
                or type(manifest.get("watermark")) is not int or manifest["watermark"] > read_head(layout).seq):
            _remove(path)
            if name == "vectors":
                layout.manifest_path(name).unlink(missing_ok=True)
            marks[name] = 0  # missing, damaged, other format or embedder, ahead of the log: rebuild
        else:
            marks[name] = manifest["watermark"]
    return marks


def _counts_differ(layout: Layout, rec, lex, vec) -> bool:
    """Whether any index holds another number of documents than its manifest says."""
    have = {"records": rec.count(), "lexical": lex.count(), "vectors": len(vec)}
    for name in layout.index_paths():
        manifest = read_manifest(layout.manifest_path(name))
        if isinstance(manifest, dict) and manifest.get("count", have[name]) != have[name]:
            return True
    return False


class _Rebuild(Exception):
    pass


def _open(paths: dict[str, Path], embedder):
    return (records.RecordIndex(paths["records"]), lexical.LexicalIndex(paths["lexical"]),
            vectors.VectorIndex(paths["vectors"], embedder.dim))


def _clear(layout: Layout) -> None:
    for name, path in layout.index_paths().items():
        _remove(path)
        layout.manifest_path(name).unlink(missing_ok=True)


def _failed(layout: Layout, exc: Exception) -> StoreError:
    if isinstance(exc, OSError):
        return os_error(exc, layout.index_dir, "update the indexes in")
    return StoreError(f"cannot update the indexes in {layout.index_dir}: {exc}; "
                      "free some space or check the directory, then run `memstore reindex`")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    if path.suffix == ".usearch":  # the flat matrix and seqs beside it
        for side in vectors.sidecars(path):
            side.unlink(missing_ok=True)


def open_indexes(layout: Layout, config, cache_dir: Path | None, *, progress=None,
                 rebuild: bool = False) -> Indexes:
    """Open the indexes, first catching them up with the log (under the index lock)."""
    embedder = make_embedder(config)
    ensure_dir(layout.index_dir)
    paths = layout.index_paths()
    with exclusive_lock(layout.index_dir / ".lock"):
        if rebuild:
            _clear(layout)
        marks = _watermarks(layout, embedder)
        if len(set(marks.values())) > 1:  # out of step (a crash, a deleted index): rebuild all
            _clear(layout)
            marks = dict.fromkeys(marks, 0)
        cache = EmbeddingCache(cache_dir, embedder.name, embedder.dim)
        mark = marks["records"]
        try:
            rec, lex, vec = _open(paths, embedder)
            if mark and _counts_differ(layout, rec, lex, vec):
                # a crash after an index commit but before its manifest: the documents already
                # hold events past the watermark, and catching up again would add them twice
                raise _Rebuild
            applied = _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress)
        except (_Rebuild, OSError, ValueError, RuntimeError):
            # derived files a crash left half-written (a Tantivy segment file that exists
            # already, a truncated vector file): they are a cache, so build them again, once
            _clear(layout)
            mark = 0
            try:
                rec, lex, vec = _open(paths, embedder)
                applied = _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress)
            except (OSError, ValueError, RuntimeError) as again:
                raise _failed(layout, again) from None
        if applied:
            mark = applied
            for name in paths:
                write_manifest(layout.manifest_path(name), {
                    **expected_manifest(name, embedder), "builder": f"memstore {__version__}",
                    "watermark": mark,
                    "count": {"records": rec.count, "lexical": lex.count, "vectors": vec.__len__}[name](),
                })
        return Indexes(rec, lex, vec, embedder, cache, mark, applied)


CHUNK = 50_000  # events folded and indexed at a time: bounds memory on a large log


def _catch_up(layout, mark, rec, lex, vec, embedder, cache, progress) -> int:
    """Apply the events after ``mark``; return the new watermark (0: nothing to do)."""
    if read_head(layout).seq <= mark:
        return 0
    events = LogReader(layout).events(after_seq=mark)
    last = 0
    while chunk := list(islice(events, CHUNK)):
        _apply(chunk, mark, rec, lex, vec, embedder, cache, progress)
        mark = last = chunk[-1]["seq"]
    if last:
        vec.save()
    return last


def _apply(events: list[dict], mark: int, rec, lex, vec, embedder, cache, progress) -> None:
    """Fold events onto the records they touch and index what they created."""
    touched = list(dict.fromkeys(i for e in events for i in touched_ids(e)))
    before = rec.get(touched) if mark else {}
    state = fold(events, State(memories=dict(before), seq=mark))
    changed = sorted((m for mid, m in state.memories.items() if before.get(mid) != m),
                     key=lambda m: (m.seq, m.id))
    rec.put(changed)
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
