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
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from .codec import JSONDecodeError, loads
from .fold import apply_event, known_op
from .state import State, state_rows
from .store.fs import DIR_MODE, FILE_MODE, exclusive_lock, temp_writer
from .store.layout import INDEXES, LOG_NAME, SNAPSHOT_NAME, Layout
from .store.log import log_files, quarantine
from .store.snapshot import read_snapshot, rows_checksum, snapshot_files

_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


@dataclass(frozen=True)
class Finding:
    """One problem: ``path:line: message``; ``fix`` names the repair, None when there is none."""

    path: Path
    line: int
    message: str
    check: str  # log | snapshot | index | files
    fix: str | None = None  # quarantine | delete | rebuild | chmod
    detail: tuple = ()  # what the repair needs (fragment offset and length, the wanted mode)

    def render(self) -> str:
        return f"{self.path}:{self.line}: {' '.join(self.message.split())}"  # always one line

    def to_dict(self) -> dict:
        return {"path": str(self.path), "line": self.line, "message": self.message,
                "check": self.check, "fix": self.fix}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # informational: never an exit status
    head: int = 0
    events: int = 0
    log_files: int = 0
    snapshots: int = 0

    @property
    def clean(self) -> bool:
        return not self.findings

    def needs_rebuild(self) -> bool:
        return any(f.fix == "rebuild" for f in self.findings)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


# --- files: modes, owner, leftovers -------------------------------------------------------

def check_files(layout: Layout, alive: Callable[[int], bool] = pid_alive) -> list[Finding]:
    found: list[Finding] = []
    uid = os.geteuid()
    for dirpath, dirnames, filenames in os.walk(layout.root):
        dirnames.sort()
        base = Path(dirpath)
        found.extend(_check_mode(base, uid))
        for name in sorted(filenames):
            found.extend(_check_mode(base / name, uid))
            found.extend(_check_temp(layout, base / name, alive))
    return found


def _check_mode(path: Path, uid: int) -> list[Finding]:
    try:
        st = path.lstat()
    except OSError:
        return []  # removed while we looked (a temp file renamed into place)
    if stat.S_ISLNK(st.st_mode):
        return []
    want = DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE
    have = stat.S_IMODE(st.st_mode)
    out = []
    if have != want:
        what = "directory" if want == DIR_MODE else "file"
        loose = " (readable by others)" if have & 0o077 else ""
        out.append(Finding(path, 0, f"{what} mode {have:04o}{loose}, expected {want:04o}; "
                           "--repair sets it", "files", "chmod", (want,)))
    if st.st_uid != uid:
        out.append(Finding(path, 0, f"owned by uid {st.st_uid}, not by you (uid {uid}); "
                           "chown it back (--repair cannot)", "files"))
    return out


def _check_temp(layout: Layout, path: Path, alive: Callable[[int], bool]) -> list[Finding]:
    name = path.name
    pid = temp_writer(name)
    if pid is not None:
        if alive(pid):
            return []  # a write in progress
    elif not (name.endswith(".usearch.tmp") and path.parent == layout.index_dir):
        return []
    return [Finding(path, 0, "temporary file left by an interrupted write; --repair deletes it",
                    "files", "delete")]


# --- log ------------------------------------------------------------------------------------

@dataclass
class _Fold:
    """The log folded line by line, with the state captured at chosen seqs."""

    targets: list[int]
    state: State = field(default_factory=State)
    captured: dict[int, tuple[str, dict, int]] = field(default_factory=dict)  # seq -> (checksum, keys, n)

    def before(self, seq: int) -> None:
        while self.targets and self.targets[0] < seq:
            self._capture(self.targets.pop(0))

    def finish(self) -> None:
        while self.targets:
            self._capture(self.targets.pop(0))

    def _capture(self, seq: int) -> None:
        s = self.state
        self.captured[seq] = (rows_checksum(state_rows(s)), dict(sorted(s.keys.items())), len(s.memories))


def _check_event(event, path: Path, n: int) -> tuple[int | None, list[Finding]]:
    if not isinstance(event, dict):
        return None, [Finding(path, n, "line is not a JSON object (skipped by readers)", "log")]
    seq = event.get("seq")
    if type(seq) is not int or seq < 1:
        return None, [Finding(path, n, f"seq {seq!r} is not a positive integer (skipped by readers)", "log")]
    problems = []
    if not isinstance(event.get("op"), str):
        problems.append(Finding(path, n, f"seq {seq}: op {event.get('op')!r} is not a string", "log"))
    at = event.get("at")
    if not isinstance(at, str) or not _TS.match(at):
        problems.append(Finding(path, n, f"seq {seq}: at {at!r} is not a UTC time like 2026-06-07T09:30:00Z",
                                "log"))
    return seq, problems


def _apply(fold: _Fold, event: dict) -> str | None:
    seq = event["seq"]
    if seq <= fold.state.seq:
        return None  # a duplicate seq: reported by the sequence check; readers skip it too
    try:
        apply_event(fold.state, event)
    except Exception as exc:  # a malformed payload: every reader would fail on it
        return f"seq {seq}: {event['op']} event cannot be applied ({type(exc).__name__}: {exc})"
    if not known_op(event["op"]):
        return f"seq {seq}: unknown op {event['op']!r} (skipped by this memstore; a newer version wrote it?)"
    return None


def check_log(layout: Layout, fold: _Fold, report: Report) -> None:
    found = report.findings
    try:
        names = sorted(os.listdir(layout.log_dir))
    except FileNotFoundError:
        names = []
    for name in names:
        path = layout.log_dir / name
        if not LOG_NAME.match(name) and path.is_file() and temp_writer(name) is None:
            found.append(Finding(path, 0, "not a log partition (YYYY-MM.jsonl): memstore ignores it; "
                                 "rename or remove it (--repair cannot)", "log"))
    files = log_files(layout)
    report.log_files = len(files)
    prev = 0
    for index, path in enumerate(files):
        try:
            data = path.read_bytes()
        except OSError as exc:
            found.append(Finding(path, 0, f"cannot read: {exc.strerror}", "log"))
            continue
        lines = data.split(b"\n")
        tail = lines.pop()
        for n, line in enumerate(lines, start=1):
            try:
                event = loads(line)
            except JSONDecodeError:
                what = "empty line" if not line.strip() else "line is not valid JSON"
                found.append(Finding(path, n, f"{what} (skipped by readers; --repair never edits "
                                     "a complete line)", "log"))
                continue
            seq, problems = _check_event(event, path, n)
            found.extend(problems)
            if seq is None:
                continue
            if seq <= prev:
                found.append(Finding(path, n, f"seq {seq} does not follow {prev} "
                                     "(a duplicate or out of order)", "log"))
            elif seq != prev + 1:
                missing = f"{prev + 1}" if seq == prev + 2 else f"{prev + 1}..{seq - 1}"
                found.append(Finding(path, n, f"seq {seq} follows {prev}: event(s) {missing} are missing",
                                     "log"))
            if problems:
                prev = max(prev, seq)
                continue
            report.events += 1
            fold.before(seq)
            problem = _apply(fold, event)
            if problem:
                found.append(Finding(path, n, problem, "log"))
            prev = max(prev, seq)
        if tail:
            offset = len(data) - len(tail)
            where = "final line" if index == len(files) - 1 else "last line, before a later partition,"
            found.append(Finding(path, len(lines) + 1, f"torn {where} ({len(tail)} bytes, never "
                                 "acknowledged); --repair moves it to log/quarantine/", "log",
                                 "quarantine", (offset, len(tail))))
    report.head = prev


# --- snapshots ------------------------------------------------------------------------------

@dataclass
class _Snap:
    path: Path
    seq: int
    meta: dict | None = None
    checksum: str | None = None
    keys: dict | None = None
    rows: int = 0
    error: str | None = None


def read_snapshots(layout: Layout) -> tuple[list[_Snap], list[Finding]]:
    snaps, found = [], []
    try:
        names = sorted(os.listdir(layout.snapshots_dir))
    except FileNotFoundError:
        return [], []
    for name in names:
        path = layout.snapshots_dir / name
        if not SNAPSHOT_NAME.match(name) and temp_writer(name) is None and path.is_file():
            found.append(Finding(path, 0, "not a snapshot (state-<seq>.parquet): memstore ignores it; "
                                 "--repair deletes it", "snapshot", "delete"))
    for seq, path in snapshot_files(layout):
        snap = _Snap(path, seq)
        try:
            state, meta = read_snapshot(path)
            snap.meta = meta
            snap.rows = len(state.memories)
            snap.checksum = rows_checksum(state_rows(state))
            snap.keys = dict(sorted(state.keys.items()))
        except Exception as exc:  # any damage: pyarrow, metadata, rows
            snap.error = f"{type(exc).__name__}: {exc}"[:200]
        snaps.append(snap)
    return snaps, found


def check_snapshots(layout: Layout, snaps: list[_Snap], fold: _Fold, report: Report) -> None:
    for snap in snaps:
        report.snapshots += 1
        problem = _snapshot_problem(layout, snap, fold, report.head)
        if problem:
            report.findings.append(Finding(snap.path, 0, f"{problem}; --repair deletes it (a cache: "
                                           "no answer changes)", "snapshot", "delete"))


def _snapshot_problem(layout: Layout, snap: _Snap, fold: _Fold, head: int) -> str | None:
    if snap.error:
        return f"unreadable snapshot ({snap.error})"
    meta = snap.meta
    if meta.get("seq") != snap.seq:
        return f"metadata says seq {meta.get('seq')!r} but the name says {snap.seq}"
    if snap.seq > head:
        return f"claims seq {snap.seq} but the log ends at seq {head}"
    if meta.get("rows") != snap.rows:
        return f"metadata says {meta.get('rows')!r} rows but it holds {snap.rows}"
    if meta.get("checksum") != snap.checksum:
        return "rows do not match the checksum in its metadata"
    captured = fold.captured.get(snap.seq)
    if captured is not None:
        checksum, keys, _n = captured
        if checksum != snap.checksum or keys != snap.keys:
            return f"rows differ from the log folded to seq {snap.seq}"
    return _position_problem(layout, meta.get("position"), snap.seq)


def _position_problem(layout: Layout, position, seq: int) -> str | None:
    if position is None:
        return None
    try:
        name, offset = position
        path = layout.log_dir / name
        size = path.stat().st_size
        if not LOG_NAME.match(name) or not 0 <= offset <= size:
            raise ValueError
        with open(path, "rb") as fh:
            start = max(0, offset - (1 << 20))
            fh.seek(start)
            before = fh.read(offset - start)
            after = fh.readline()
    except (OSError, ValueError, TypeError):
        return f"records a log position {position!r} that does not exist"
    if before and not before.endswith(b"\n"):
        return f"log position {name}:{offset} is not at the start of a line"
    prev_line = before[:-1].rsplit(b"\n", 1)[-1] if before else b""
    for line, want in ((prev_line, seq), (after.rstrip(b"\n") if after.endswith(b"\n") else b"", seq + 1)):
        if not line:
            continue
        try:
            got = loads(line).get("seq")
        except (JSONDecodeError, AttributeError):
            continue  # a damaged line is reported by the log check
        if got != want:
            return f"log position {name}:{offset} is at seq {got}, not next to seq {seq}"
    return None


# --- indexes --------------------------------------------------------------------------------

def read_manifests(layout: Layout, config) -> tuple[dict[str, dict | str | None], dict[str, dict]]:
    """Each index's manifest (None: absent; a str: why it is unusable) and the expected fields."""
    from .embed import make_embedder
    from .index.sync import expected_manifest

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
    from .index import lexical, records, vectors
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


def check_indexes(layout: Layout, manifests, expected, counts, fold: _Fold, report: Report) -> None:
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


# --- the whole check ------------------------------------------------------------------------

def verify(layout: Layout, config, *, alive: Callable[[int], bool] = pid_alive) -> Report:
    """Check everything. Caches are read before the log, so a concurrent append can only make
    the log longer than what they claim, never shorter."""
    report = Report()
    report.findings.extend(check_files(layout, alive))
    snaps, stray = read_snapshots(layout)
    report.findings.extend(stray)
    counts = {}
    if layout.index_dir.is_dir():
        with exclusive_lock(layout.index_dir / ".lock"):  # no catch-up half way through
            manifests, expected = read_manifests(layout, config)
            if any(isinstance(m, dict) for m in manifests.values()):
                counts = count_documents(layout, expected)
    else:
        manifests, expected = read_manifests(layout, config)
    targets = {s.seq for s in snaps if s.error is None}
    targets |= {m["watermark"] for m in manifests.values()
                if isinstance(m, dict) and type(m.get("watermark")) is int and m["watermark"] > 0}
    fold = _Fold(sorted(targets))
    check_log(layout, fold, report)
    fold.finish()
    _confirm_torn(layout, report)
    check_snapshots(layout, snaps, fold, report)
    check_indexes(layout, manifests, expected, counts, fold, report)
    return report


def _confirm_torn(layout: Layout, report: Report) -> None:
    """A fragment seen without the lock may be an append in flight: look again under it."""
    torn = [f for f in report.findings if f.fix == "quarantine"]
    if not torn or not layout.lock_path.exists():
        return
    with exclusive_lock(layout.lock_path):
        for f in torn:
            if not _still_torn(f):
                report.findings.remove(f)


def _still_torn(f: Finding) -> bool:
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
    done per finding. Never edits a complete log line."""
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
                except FileNotFoundError:
                    done[f] = "already gone"
    return done


def fix_modes(layout: Layout, report: Report) -> dict[Finding, str]:
    """chmod what the report found too loose (or too tight); run after any rebuild."""
    done = {}
    for f in report.findings:
        if f.fix == "chmod":
            try:
                os.chmod(f.path, f.detail[0])
                done[f] = f"mode set to {f.detail[0]:04o}"
            except FileNotFoundError:
                done[f] = "already gone"
    return done

