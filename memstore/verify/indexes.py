"""verify's index check: manifests, watermarks and document counts against the log."""

from __future__ import annotations

from ..codec import JSONDecodeError, loads
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
            manifests[name] = loads(mpath.read_bytes())
            if not isinstance(manifests[name], dict):
                manifests[name] = "manifest is not a JSON object"
        except FileNotFoundError:
            manifests[name] = None
        except (OSError, JSONDecodeError) as exc:
            manifests[name] = f"manifest is unreadable ({exc})"
    return manifests, expected


def count_documents(layout: Layout, expected: dict[str, dict]) -> dict[str, int | str]:
    """Documents in each index as it is on disk (a str when it cannot be opened)."""
    from ..index import lexical, records, vectors
    paths = layout.index_paths()
    openers = {
        "records": lambda p: records.RecordIndex(p).count(),
        "lexical": lambda p: lexical.LexicalIndex(p).count(),
        "vectors": lambda p: len(vectors.VectorIndex(p, expected["vectors"]["dim"])),
    }
    counts: dict[str, int | str] = {}
    for name, opener in openers.items():
        path = paths[name]
        if not path.exists():
            counts[name] = 0 if name == "vectors" else "directory is missing"
            continue
        try:
            counts[name] = opener(path)
        except Exception as exc:
            counts[name] = f"cannot be opened ({type(exc).__name__}: {exc})"[:200]
    return counts


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
    want = fold.captured.get(mark, (None, None, 0))[2] if mark else 0
    for name in INDEXES:
        have = counts.get(name)
        if isinstance(have, str):
            report.findings.append(Finding(paths[name], 0, f"{name} index {have}; --repair rebuilds it",
                                           "index", "rebuild"))
        elif have != want:
            report.findings.append(Finding(paths[name], 0, f"{name} index holds {have} documents, the log "
                                           f"holds {want} records at seq {mark}; --repair rebuilds it",
                                           "index", "rebuild"))
    if mark < head:
        report.notes.append(Finding(layout.index_dir, 0, f"indexes are {head - mark} event(s) behind the log "
                                    f"(seq {mark} of {head}); the next read catches them up", "index"))

