"""``memstore verify``: check a store against its own invariants, and repair what is safe.

Checks (each a pure function of what the store adapters read):

- log: every line is a JSON object with an integer ``seq``, a string ``op`` and a
  canonical ``at``; seqs rise by exactly one across all partitions (no gap, no
  duplicate); the op is one this memstore knows and the event folds without an
  error; no torn (unterminated) final line; no stray files where partitions live.
- snapshots: readable, the seq in the name is the seq in the metadata, not beyond
  the log head, the row count and checksum match the rows, the rows match the log
  folded up to that seq, and the recorded log position lines up with that seq.
- indexes: each manifest parses, has this memstore's format (and, for vectors, the
  configured embedder and dimension); watermarks agree with each other, are not
  ahead of the log head, and the document counts equal the number of records the
  log holds at the watermark. A watermark *behind* the head is a note, not a
  finding: every read catches the indexes up first.
- files: directories 0700 and files 0600, owned by the user running verify;
  no temporary file left by an interrupted whole-file write.

Repairs (``--repair``) never edit a complete log line: a torn fragment is moved to
``log/quarantine/`` (the bytes are kept), bad snapshots and leftover temporary
files are deleted (caches), modes are set to 0700/0600, and the caller rebuilds
the indexes from the log when ``needs_rebuild`` says so. Damaged complete lines,
seq gaps and unknown ops are reported and left alone: the log is the truth.

The checks live beside this module, one per kind of file: ``files``, ``logcheck``,
``snapshots``, ``indexes``; ``report`` holds what they find.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from contextlib import nullcontext

from ..store.fs import exclusive_lock
from ..store.layout import SNAPSHOT_NAME, Layout
from ..store.log import quarantine
from ..store.snapshot import drop_companions
from .files import check_files, fix_modes, pid_alive
from .indexes import check_indexes, count_documents, read_manifests
from .logcheck import Fold, check_log
from .report import Finding, Report
from .snapshots import check_snapshots, read_snapshots

__all__ = ["Finding", "Report", "fix_modes", "pid_alive", "repair", "verify"]


# --- the whole check ------------------------------------------------------------------------

def verify(layout: Layout, config, *, now: str | None = None,
           alive: Callable[[int], bool] = pid_alive) -> Report:
    """Check everything. Caches are read before the log, so a concurrent append can only make
    the log longer than what they claim, never shorter. ``now``: events recorded after it are
    findings (a record time in the future blocks every later write)."""
    report = Report()
    report.findings.extend(check_files(layout, alive))
    snaps, stray = read_snapshots(layout)
    report.findings.extend(stray)
    counts = {}
    if layout.index_dir.is_dir():
        from ..index.sync import read_lock

        with read_lock(layout):  # no catch-up half way through (none can run on a read-only store)
            manifests, expected = read_manifests(layout, config)
            if any(isinstance(m, dict) for m in manifests.values()):
                counts = count_documents(layout, expected)
    else:
        manifests, expected = read_manifests(layout, config)
    targets = {s.seq for s in snaps if s.error is None}
    targets |= {m["watermark"] for m in manifests.values()
                if isinstance(m, dict) and type(m.get("watermark")) is int and m["watermark"] > 0}
    fold = Fold(sorted(targets))
    check_log(layout, fold, report, now)
    fold.finish()
    _confirm_torn(layout, report)
    check_snapshots(layout, snaps, fold, report)
    check_indexes(layout, manifests, expected, counts, fold, report)
    return report


def _confirm_torn(layout: Layout, report: Report) -> None:
    """A fragment seen without the lock may be an append in flight: look again under it."""
    torn = [f for f in report.findings if f.fix == "quarantine" and len(f.detail) == 2]
    if not torn or not layout.lock_path.exists():
        return
    with exclusive_lock(layout.lock_path):
        for f in torn:
            if not _still_torn(f):
                report.findings.remove(f)


def _still_torn(f: Finding) -> bool:
    if len(f.detail) == 3:  # a damaged tail of complete lines: still there, byte for byte?
        offset, length, sha = f.detail
        try:
            with open(f.path, "rb") as fh:
                fh.seek(offset)
                rest = fh.read()
        except OSError:
            return False
        return len(rest) == length and hashlib.sha256(rest).hexdigest() == sha
    offset, length = f.detail
    try:
        with open(f.path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size <= offset:
                return False
            fh.seek(offset)
            rest = fh.read()
    except OSError:
        return False
    return b"\n" not in rest  # the fragment grew into complete lines: it was an append in flight


# --- repair ---------------------------------------------------------------------------------

def repair(layout: Layout, report: Report) -> dict[Finding, str]:
    """Apply the safe fixes (all but the index rebuild, which the caller does); return what was
    done per finding. Never edits a complete log line, except that a damaged run at the very
    end of the log (which no reader folds and no writer continues after) is moved, whole and
    unchanged, to log/quarantine/."""
    done: dict[Finding, str] = {}
    with exclusive_lock(layout.lock_path) if layout.lock_path.exists() else nullcontext():
        for f in report.findings:
            if f.fix == "quarantine" and _still_torn(f):
                offset = f.detail[0]
                size = f.path.stat().st_size
                target = quarantine(layout, (f.path, offset, size - offset))
                done[f] = f"moved {size - offset} bytes to {target.relative_to(layout.root)}"
        for f in report.findings:
            if f.fix == "delete":
                try:
                    f.path.unlink()
                    done[f] = "deleted"
                    if SNAPSHOT_NAME.match(f.path.name) and f.path.parent == layout.snapshots_dir:
                        drop_companions(f.path)
                except FileNotFoundError:
                    done[f] = "already gone"
                except OSError as exc:  # e.g. a directory where a file was expected: reported, left
                    done[f] = f"cannot delete it ({exc.strerror})"
    return done

