"""Shared helpers: run the CLI in-process or as a subprocess, fingerprint a store.

Every test works on real files under tmp_path and passes --now explicitly; the
environment is cleared of MEMSTORE_* so a developer's own store is never touched.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
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


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    for name in ("MEMSTORE_DIR", "MEMSTORE_NOW", "MEMSTORE_AGENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


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
