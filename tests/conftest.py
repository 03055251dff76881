"""Shared helpers: run the CLI in-process or as a subprocess, fingerprint a store.

Every test works on real files under tmp_path and passes --now explicitly. The suite is
hermetic: each test process (the controller and every xdist worker) gets a home of its own
(HOME and the XDG directories, inherited by the subprocesses it starts), the environment is
cleared of MEMSTORE_*, and a guard fails the test that opens, makes or removes anything in
the real home's memstore directories (the user's store, embedding cache and settings).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from memstore_cli.main import main

NOW = "2026-06-07T09:30:00Z"
LATER = "2026-06-08T10:00:00Z"
EARLIER = "2026-06-01T00:00:00Z"
BAD_NOW = "Error: --now 'garbage' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z\n"
MEMSTORE = Path(sys.executable).with_name("memstore")


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def json(self):
        return json.loads(self.out)

    def jsonl(self) -> list:
        return [json.loads(line) for line in self.out.splitlines()]


REAL_HOME_VAR = "PYTEST_MEMSTORE_REAL_HOME"  # (set once, by the first process: workers inherit a fake HOME)
_HOME: list[str] = []  # this process's own home
_TOUCHED: list[str] = []  # what was done to the real home's memstore directories, as it happened
_GUARDED_EVENTS = {"open", "os.mkdir", "os.remove", "os.rename", "os.rmdir", "os.truncate", "shutil.rmtree",
                   "os.chmod", "os.utime", "os.symlink", "os.link", "os.listdir", "os.scandir"}


def real_home_dirs() -> tuple[str, ...]:
    """The real home's directories that memstore uses: what no test may touch."""
    homes = {os.environ[REAL_HOME_VAR], pwd.getpwuid(os.getuid()).pw_dir}
    return tuple(sorted({os.path.join(os.path.realpath(h), *part) for h in homes for part in
                         ((".cache", "memstore"), (".local", "share", "memstore"), (".config", "memstore"))}))


def _fingerprint(roots: tuple[str, ...]) -> list[tuple]:
    """Every path under ``roots`` with its size and modification time."""
    out = []
    for root in roots:
        for top, dirs, files in os.walk(root):
            for name in sorted(dirs + files):
                st = os.lstat(os.path.join(top, name))
                out.append((os.path.join(top, name), st.st_size, st.st_mtime_ns))
    return sorted(out)


def _guard(event: str, args: tuple) -> None:
    if not _GUARD_ON or event not in _GUARDED_EVENTS or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.fsdecode(args[0])
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    path = os.path.normpath(path)
    for root in _GUARDED:
        if path == root or path.startswith(root + os.sep):
            _TOUCHED.append(f"{event} {path}")
            raise PermissionError(f"a test touched the real home: {event} {path}")


_GUARDED: tuple[str, ...] = ()
_GUARD_ON = False
_BEFORE: list[list[tuple]] = []  # the real home's memstore directories as the session began


def pytest_configure(config) -> None:
    """A home of this process's own, before any test or subprocess runs."""
    global _GUARDED, _GUARD_ON
    if _HOME:
        return
    os.environ.setdefault(REAL_HOME_VAR, os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    home = tempfile.mkdtemp(prefix=f"memstore-tests-{worker}-")
    _HOME.append(home)
    for name in [k for k in os.environ if k.startswith("MEMSTORE_")]:
        del os.environ[name]
    os.environ["HOME"] = home
    for var, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state")):
        os.environ[var] = os.path.join(home, sub)
    _GUARDED = real_home_dirs()
    _BEFORE.append(_fingerprint(_GUARDED))
    _GUARD_ON = True
    sys.addaudithook(_guard)


def pytest_sessionfinish(session, exitstatus) -> None:
    """The subprocesses the tests started are held too: the real home's memstore directories
    end the session as they began it."""
    global _GUARD_ON
    if not _BEFORE:
        return
    _GUARD_ON = False
    changed = sorted(set(_fingerprint(_GUARDED)) ^ set(_BEFORE[0]))
    _GUARD_ON = True
    if changed:
        sys.stderr.write(f"\nthe real home's memstore directories changed during the run (a test's subprocess, "
                         f"or memstore used outside the tests meanwhile): {changed[:5]}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config) -> None:
    if _HOME:
        shutil.rmtree(_HOME.pop(), ignore_errors=True)


@pytest.fixture(autouse=True)
def _real_home_untouched():
    """Fails the test during which something touched the real home's memstore directories."""
    seen = len(_TOUCHED)
    yield
    touched = _TOUCHED[seen:]
    assert not touched, f"the test touched the real home: {touched[:5]}"


def _own_env() -> dict[str, str]:
    """The variables memstore reads where a test may set them: MEMSTORE_*, HOME, XDG_*."""
    return {k: v for k, v in os.environ.items() if k.startswith(("MEMSTORE_", "XDG_")) or k == "HOME"}


def _restore_env(before: dict[str, str]) -> None:
    for name in set(_own_env()) - set(before):
        del os.environ[name]
    os.environ.update(before)


@pytest.fixture(autouse=True, scope="module")
def _module_env():
    """A module's fixtures and tests leave the environment as they found it, even where a
    helper sets a variable outright (the fuzz and damage harnesses set MEMSTORE_CACHE_DIR)."""
    before = _own_env()
    yield
    _restore_env(before)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    before = _own_env()  # (with what the module's fixtures set)
    for name in ("MEMSTORE_DIR", "MEMSTORE_NOW", "MEMSTORE_AGENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    yield
    _restore_env(before)  # (a test that set a variable outright leaves it behind no more)


@pytest.fixture
def store(tmp_path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def cli(capsys, monkeypatch):
    """cli(*argv, stdin=None) -> Result: memstore's main() in this process."""

    def run(*argv: str, stdin: bytes | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        capsys.readouterr()
        rc = main([str(a) for a in argv])
        got = capsys.readouterr()
        return Result(rc, got.out, got.err)

    return run


@pytest.fixture
def ms(cli, store):
    """ms(command, *args, now=NOW) -> Result: a command against the test's store."""

    def run(command: str, *args: str, now: str | None = NOW, stdin: bytes | None = None) -> Result:
        argv = ["--store", str(store), command, *args]
        if now is not None:
            argv += ["--now", now]
        return cli(*argv, stdin=stdin)

    return run


def run_memstore(*argv: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """The installed console script in a subprocess (bytes in, bytes out)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    base.update(env or {})
    return subprocess.run([str(MEMSTORE), *argv], input=stdin if stdin is not None else b"",
                          capture_output=True, env=base, timeout=60)


def store_digest(root: Path) -> str:
    """Fingerprint of every file and directory under a store: path, mode, bytes."""
    if not root.exists():
        return "absent"
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        h.update(str(path.relative_to(root)).encode() + b"\0" + oct(stat.S_IMODE(st.st_mode)).encode())
        if path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def log_lines(root: Path) -> list[dict]:
    """Every event of a store's log, in file then line order."""
    events = []
    for path in sorted((root / "log").glob("*.jsonl")):
        events.extend(json.loads(line) for line in path.read_bytes().splitlines())
    return events


def write_jsonl(path: Path, *objs) -> Path:
    """Objects (dicts become canonical-ish JSON, str/bytes are written as they are) one a line."""
    parts = []
    for obj in objs:
        if isinstance(obj, bytes):
            parts.append(obj)
        elif isinstance(obj, str):
            parts.append(obj.encode())
        else:
            parts.append(json.dumps(obj, ensure_ascii=False).encode())
    path.write_bytes(b"\n".join(parts) + b"\n")
    return path
