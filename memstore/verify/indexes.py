"""verify's index check: manifests, watermarks, anchors and contents against the log.

Beyond counts, the indexes are cross-checked against the log folded at their watermark:
the manifest's anchor must be this log's line at that seq (not another store's index,
not a watermark set back) after partitions of the recorded sizes and sha256; every file
the manifest lists must have the recorded size and sha256 (a segment file set back or
swapped passes its CRC footer); every Tantivy file's CRC footer must match its bytes; the
records must digest to the folded state; the lexical index and the vectors must hold
exactly the records' seqs; a deterministic sample of records must find their own
document by their text and kind; every stored vector must be finite and unit length
(or zero), and a sample of the USearch file's vectors must equal the flat rows.
Everything is opened through links in a temporary directory: verify writes nothing.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from ..codec import JSONDecodeError, loads
from ..index.filecheck import files_changed
from ..store.anchor import anchor_problem
from ..store.fs import read_regular
from ..store.layout import INDEXES, Layout
from .logcheck import Fold
from .report import Finding, Report


def read_manifests(layout: Layout, config) -> tuple[dict[str, dict | str | None], dict[str, dict]]:
    """Each index's manifest (None: absent; a str: why it is unusable) and the expected fields."""
    from ..embed import make_embedder
    from ..index.sync import expected_manifest

    embedder = make_embedder(config)  # cheap: models load on first embed, not here
    manifests: dict[str, dict | str | None] = {}
    expected = {}
    for name in layout.index_paths():
        expected[name] = expected_manifest(name, embedder)
        mpath = layout.manifest_path(name)
        try:
            manifests[name] = loads(read_regular(mpath))
            if not isinstance(manifests[name], dict):
                manifests[name] = "manifest is not a JSON object"
        except FileNotFoundError:
            manifests[name] = None
        except (OSError, JSONDecodeError) as exc:
            manifests[name] = f"manifest is unreadable ({exc})"
    return manifests, expected


_FOOTER_MAGIC = 1337  # Tantivy's footer: JSON {"version", "crc"}, its length (u32), this (u32)
SAMPLE = 32  # records whose lexical document is looked up by text
BLOCK = 8192  # records of the records index decoded at a time


def _footer_problems(path: Path) -> list[str]:
    """Tantivy files whose CRC32 footer does not match their bytes."""
    bad = []
    try:
        names = sorted(n for n in path.iterdir() if n.is_file() and n.suffix in
                       (".store", ".term", ".idx", ".pos", ".fast", ".fieldnorm", ".del"))
    except OSError:
        return []
    for f in names:
        try:
            data = f.read_bytes()
            size, magic = struct.unpack("<II", data[-8:])
            crc = json.loads(data[-8 - size:-8])["crc"]
            ok = magic == _FOOTER_MAGIC and crc == zlib.crc32(data[:-8 - size])
        except (OSError, ValueError, KeyError, TypeError, struct.error):
            ok = False
        if not ok:
            bad.append(f"{f.name} does not match its checksum (damaged)")
    return bad


def count_documents(layout: Layout, expected: dict[str, dict]) -> dict:
    """Documents in each index as it is on disk (a str when it cannot be opened), plus
    ``_digest`` (the records' rows checksum) and ``_problems`` ([(index, message)])."""
    from ..index import lexical, records, vectors
    from ..index.sync import describe, is_damage, shadow

    paths = layout.index_paths()
    openers = {
        "records": lambda p: records.RecordIndex(shadow(p)),
        "lexical": lambda p: lexical.LexicalIndex(shadow(p)),
        "vectors": lambda p: vectors.VectorIndex(p, expected["vectors"]["dim"]),
    }
    counts: dict = {"_problems": []}
    problems = counts["_problems"]
    opened = {}
    for name, opener in openers.items():
        path = paths[name]
        if not path.exists():
            counts[name] = 0 if name == "vectors" else "directory is missing"
            continue
        if name != "vectors":
            problems += [(name, m) for m in _footer_problems(path)]
        try:
            opened[name] = opener(path)
            counts[name] = len(opened[name]) if name == "vectors" else opened[name].count()
        except BaseException as exc:
            if not is_damage(exc):
                raise
            counts[name] = f"cannot be opened ({describe(exc)})"[:200]
            opened.pop(name, None)
    if len(opened) == len(INDEXES):
        try:
            _contents(opened, counts, problems)
        except BaseException as exc:
            if not is_damage(exc):
                raise
            problems.append(("records", f"cannot be read ({describe(exc)})"))
    return counts


def _contents(ix: dict, counts: dict, problems: list) -> None:
    """The records' digest; the seqs every index holds; sampled texts; vector norms."""
    import numpy as np

    from ..model import memory_to_dict
    from ..store.snapshot import rows_checksum

    rec, lex, vec = ix["records"], ix["lexical"], ix["vectors"]
    seqs: list[int] = []
    originals: list[int] = []  # the seqs of the records derived from none

    def rows():  # every record in canonical order, a block at a time (held at once: gigabytes)
        for block in rec.blocks(None, None, BLOCK):
            for m in block:
                seqs.append(m.seq)
                if not m.derived_from:
                    originals.append(m.seq)
                yield memory_to_dict(m)

    counts["_digest"] = rows_checksum(rows())
    seqs.sort()
    lex_seqs = lex.seqs(lex._t.Query.all_query(), lex.count())
    if lex_seqs != seqs:
        problems.append(("lexical", "holds other memories than the records index (seqs differ)"))
    if [int(k) for k in vec.keys] != seqs:
        problems.append(("vectors", "holds other memories than the records index (seqs differ)"))
    picked = sorted(originals)[:: max(1, len(originals) // SAMPLE)]
    sampled = rec.by_seqs(picked)
    for m in (sampled[q] for q in picked if q in sampled):
        own = lex.term_set("seq", [m.seq])
        text = lex.text_query(m.text)
        wants = [lex.term_set("kind", [m.kind])] + ([text] if text is not None else [])
        if any(lex.count(lex.all_of([own, q])) != 1 for q in wants):
            problems.append(("lexical", f"the document of {m.id} (seq {m.seq}) does not hold its text "
                                        "and kind"))
            break
    try:
        vec.check_rows(vec.rows)
    except ValueError as exc:
        problems.append(("vectors", str(exc)))
        return
    if len(vec.keys):
        pick = vec.keys[:: max(1, len(vec.keys) // SAMPLE)]
        stored = vec.stored(pick)
        rows = vec.vectors(pick)
        if not all(np.allclose(stored[i], rows[int(k)], atol=1e-5) for i, k in enumerate(pick)):
            problems.append(("vectors", f"{vec.path.name} disagrees with its flat rows"))


def check_indexes(layout: Layout, manifests, expected, counts, fold: Fold, report: Report) -> None:
    paths = layout.index_paths()
    head = report.head
    if all(m is None for m in manifests.values()) and not any(p.exists() for p in paths.values()):
        if head:
            report.notes.append(Finding(layout.index_dir, 0, "indexes not built yet (the next read "
                                        "or `memstore index` builds them)", "index"))
        return
    marks = {}
    for name, manifest in manifests.items():
        mpath = layout.manifest_path(name)
        problem = None
        if manifest is None:
            problem = "manifest is missing"
        elif isinstance(manifest, str):
            problem = manifest
        else:
            for k, v in expected[name].items():
                if manifest.get(k) != v:
                    what = "embedder" if k in ("embedder", "dim") else k
                    problem = (f"built with {what} {manifest.get(k)!r}, this store expects {v!r}")
                    break
            mark = manifest.get("watermark")
            if problem is None and (type(mark) is not int or mark < 0):
                problem = f"watermark {mark!r} is not a log seq"
            if problem is None and mark > head:
                problem = (f"watermark {mark} is ahead of the log head {head} (the log lost events, "
                           "or the index belongs to another store)")

            if problem is None:
                marks[name] = mark
        if problem:
            report.findings.append(Finding(mpath, 0, f"{problem}; --repair rebuilds the indexes from "
                                           "the log", "index", "rebuild"))
    if len(marks) < len(INDEXES):
        return
    if len(set(marks.values())) > 1:
        report.findings.append(Finding(layout.index_dir, 0, "indexes are out of step (watermarks "
                                       + ", ".join(f"{n} {marks[n]}" for n in INDEXES)
                                       + "); --repair rebuilds them", "index", "rebuild"))
        return
    mark = marks["records"]
    digest, _keys, want = fold.captured.get(mark, (None, None, 0)) if mark else (None, None, 0)
    differ = False
    for name in INDEXES:
        have = counts.get(name)
        if isinstance(have, str):
            differ = True
            report.findings.append(Finding(paths[name], 0, f"{name} index {have}; --repair rebuilds it",
                                           "index", "rebuild"))
        elif have != want:
            differ = True
            report.findings.append(Finding(paths[name], 0, f"{name} index holds {have} documents, the log "
                                           f"holds {want} records at seq {mark}; --repair rebuilds it",
                                           "index", "rebuild"))
    for name, message in counts.get("_problems", ()):
        report.findings.append(Finding(paths[name], 0, f"{name} index: {message}; --repair rebuilds it",
                                       "index", "rebuild"))
    if not differ and digest is not None and counts.get("_digest") not in (None, digest):
        differ = True
        report.findings.append(Finding(paths["records"], 0, f"records index differs from the log folded "
                                       f"to seq {mark}; --repair rebuilds it", "index", "rebuild"))
    if not differ and not counts.get("_problems") and mark:  # anything found already says "rebuild"
        for name in INDEXES:
            problem = (_anchor_problem(layout, manifests[name], mark)
                       or files_changed(layout, name, manifests[name], hashes=True))
            if problem:
                report.findings.append(Finding(layout.manifest_path(name), 0, f"{problem}; --repair "
                                               "rebuilds the indexes from the log", "index", "rebuild"))
    from ..index import columns

    if not differ and (why := columns.problem(layout, mark)):
        report.findings.append(Finding(columns.path_of(layout), 0, f"the records' columns file {why}; "
                                       "--repair rebuilds the indexes from the log", "index", "rebuild"))
    if mark < head:
        report.notes.append(Finding(layout.index_dir, 0, f"indexes are {head - mark} event(s) behind the log "
                                    f"(seq {mark} of {head}); the next read catches them up", "index"))



def _anchor_problem(layout: Layout, manifest: dict, mark: int) -> str | None:
    if "anchor" not in manifest:
        return "manifest records no log anchor (built by an older memstore)"
    # (a line that moved is found again: a damaged line inserted before it changes nothing the
    # indexes hold, and what they hold was compared with the folded log above; a read rebuilds)
    problem = anchor_problem(layout, manifest["anchor"], mark, hashes=True, moved=True)
    return f"manifest's anchor does not hold: {problem}" if problem else None
