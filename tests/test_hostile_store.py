"""What counts as a store, and what a hostile or mistaken --store meets: a directory that is
not a store is never adopted, a read never creates a
store, a file of the wrong type where memstore expects its own is one clear error, and
none of it leaves a trace. Every case asserts the exit status, exactly one `Error:` line,
no traceback, and the directory's digest (and, index/ included, its listing) unchanged."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from reliability_support import MEMSTORE_SCRIPT, cli, digest, make_store, subprocess_env

T = "2026-06-07T09:00:00Z"
LATER = "2026-06-08T09:00:00Z"
NO_STORE = "(remember something first, or check --store / $MEMSTORE_DIR)"


def listing(root: Path) -> list[str]:
    """Every path under root, index/ included (digest() skips it as a cache)."""
    if not os.path.lexists(root):
        return ["absent"]
    if not root.is_dir():
        return ["not a directory"]
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def snapshot(root: Path) -> tuple:
    return digest(root), listing(root)


def refused(argv, expected_err: str, rc: int, watched: list[Path]) -> None:
    before = [snapshot(p) for p in watched]
    got_rc, out, err = cli(*argv)
    assert (got_rc, out) == (rc, ""), err
    assert err == expected_err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert [snapshot(p) for p in watched] == before


@pytest.fixture
def project(tmp_path) -> Path:
    """Somebody's project: an executable main.py that no memstore command may touch."""
    proj = tmp_path / "proj"
    proj.mkdir(mode=0o755)
    os.chmod(proj, 0o755)
    (proj / "main.py").write_bytes(b"#!/usr/bin/env python3\nprint('hi')\n")
    os.chmod(proj / "main.py", 0o755)
    (proj / "src").mkdir()
    (proj / "src" / "lib.py").write_bytes(b"X = 1\n")
    return proj


def jsonl(tmp_path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "We decided to move billing to Postgres"}\n')
    return path


# every command a user could point at the wrong directory: writes, maintenance and reads
ALL_COMMANDS = [
    ["remember", "We decided to move billing to Postgres"],
    ["init"], ["snapshot"], ["consolidate"], ["distill"], ["forget", "x"], ["index"], ["reindex"],
    ["verify"], ["verify", "--repair"], ["recall", "billing"], ["judge", "deploy on friday"],
    ["stats"], ["show", "m0123456789abcde"], ["export"], ["log"], ["brief"], ["conflicts"],
    ["conflicts", "list"], ["conflicts", "resolve", "c0123456789abcde", "--keep", "new"],
]


def _name(argv) -> str:
    return " ".join(argv[:2])


@pytest.mark.parametrize("argv", ALL_COMMANDS + [["import", "IN"]], ids=_name)
def test_a_project_directory_is_never_adopted(project, tmp_path, argv):
    argv = [str(jsonl(tmp_path)) if a == "IN" else a for a in argv]
    main_py = project / "main.py"
    mode, data = main_py.stat().st_mode, main_py.read_bytes()
    refused(["--store", project, *argv, "--now", T],
            f"Error: {project} is not a memstore store (it holds other files, e.g. main.py); "
            "choose an empty or new directory for --store\n", 1, [project])
    assert (main_py.stat().st_mode, main_py.read_bytes()) == (mode, data)
    assert stat.S_IMODE(mode) == 0o755


def test_a_symlink_to_a_project_is_not_adopted_either(project, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(project)
    refused(["--store", link, "remember", "We use Postgres", "--now", T],
            f"Error: {link} is not a memstore store (it holds other files, e.g. main.py); "
            "choose an empty or new directory for --store\n", 1, [project])


def test_the_library_refuses_a_project_directory_too(project):
    from memstore.api import Store
    from memstore.errors import StoreError

    before = snapshot(project)
    with pytest.raises(StoreError, match="is not a memstore store"):
        Store(project).remember("We decided to move billing to Postgres", now=T)
    assert snapshot(project) == before


@pytest.mark.parametrize("own", [[], ["memstore.toml"], ["memstore.toml", "index/", ".lock", "snapshots/"]],
                         ids=["empty", "config-only", "own-names-only"])
def test_an_empty_or_memstore_only_directory_becomes_a_store(tmp_path, own):
    root = make_store(tmp_path / "new") if own else tmp_path / "new"
    root.mkdir(exist_ok=True)
    for name in own[1:]:
        (root / name.rstrip("/")).mkdir() if name.endswith("/") else (root / name).touch()
    rc, out, err = cli("--store", root, "remember", "We decided to move billing to Postgres", "--now", T)
    assert rc == 0 and err == "", err
    assert (root / "log").is_dir()


def test_a_store_may_hold_other_files_once_it_is_one(tmp_path):
    """A store is a directory with log/: a note a person left there does not unmake it."""
    root = make_store(tmp_path / "s")
    assert cli("--store", root, "remember", "We use Postgres for billing", "--now", T)[0] == 0
    (root / "NOTES.txt").write_text("mine\n")
    rc, out, err = cli("--store", root, "remember", "We use Redis for caching", "--now", LATER)
    assert rc == 0, err


@pytest.mark.parametrize("argv", [
    ["recall", "billing"], ["judge", "deploy on friday"], ["stats"], ["show", "m0123456789abcde"],
    ["export"], ["log"], ["brief"], ["conflicts"], ["conflicts", "list"], ["eval", "Q"],
], ids=_name)
def test_a_read_on_a_missing_store_creates_nothing(tmp_path, argv):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"query": "billing", "relevant": ["m0123456789abcde"]}\n')
    argv = [str(questions) if a == "Q" else a for a in argv]
    typo = tmp_path / "typo" / "store"
    refused(["--store", typo, *argv, "--now", T], f"Error: no such store: {typo} {NO_STORE}\n", 1, [tmp_path])


def test_a_read_through_memstore_dir_names_the_missing_store(tmp_path, monkeypatch):
    typo = tmp_path / "typo"
    monkeypatch.setenv("MEMSTORE_DIR", str(typo))
    refused(["recall", "billing", "--now", T], f"Error: no such store: {typo} {NO_STORE}\n", 1, [tmp_path])


@pytest.mark.parametrize("config", [False, True], ids=["empty", "config-only"])
def test_a_read_on_an_empty_store_answers_empty(tmp_path, config):
    root = make_store(tmp_path / "s") if config else tmp_path / "s"
    root.mkdir(exist_ok=True)
    before = digest(root)
    for argv in (["stats", "--json"], ["export"], ["log"], ["recall", "billing", "--json"]):
        rc, out, err = cli("--store", root, *argv, "--now", T)
        assert rc == 0 and "Traceback" not in err, err
    assert digest(root) == before
    assert not (root / "log").exists()


def test_a_read_on_an_empty_store_creates_no_index(tmp_path):
    root = make_store(tmp_path / "s")
    assert cli("--store", root, "recall", "billing", "--now", T)[0] == 0
    assert listing(root) == ["memstore.toml"]


def test_an_empty_memstore_dir_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTORE_DIR", "")
    refused(["remember", "We use Postgres", "--now", T],
            "Error: MEMSTORE_DIR is set but empty; unset it or set it to the store directory\n", 2, [tmp_path])


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_store_option_is_refused(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    argv = ["--store=", "remember", "We use Postgres"] if where == "before" else \
        ["remember", "We use Postgres", "--store="]
    refused([*argv, "--now", T],
            "Error: --store is empty; give the store directory (--store . for the current one)\n",
            2, [tmp_path])


def test_set_globals_refuses_an_empty_store_string():
    from cli.common import set_globals
    from memstore.errors import UsageError

    class Ctx:
        obj = None

    with pytest.raises(UsageError, match="--store is empty"):
        set_globals(Ctx(), store="")


# --- the store path itself is something else -------------------------------------------

def test_store_is_a_file_a_device_or_a_fifo(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("data\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((afile, "a file"), (Path("/dev/null"), "a device"), (fifo, "a FIFO (named pipe)")):
        for argv in (["remember", "We use Postgres"], ["recall", "x"], ["verify", "--repair"]):
            refused(["--store", path, *argv, "--now", T],
                    f"Error: store {path} is {kind}, not a directory; choose another --store\n", 1, [tmp_path])


def test_store_is_a_dangling_symlink(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    for argv in (["init"], ["remember", "We use Postgres"], ["recall", "x"]):
        refused(["--store", link, *argv, "--now", T],
                f"Error: store {link} is a symbolic link to {tmp_path / 'nowhere'}, which does not exist; "
                "choose another --store\n", 1, [tmp_path])


def test_a_store_directory_that_cannot_be_listed(tmp_path, monkeypatch):
    """Simulated (tests run as root, which lists any directory)."""
    root = tmp_path / "locked"
    root.mkdir()
    real = os.listdir

    def listdir(path="."):
        if Path(path) == root:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    refused(["--store", root, "remember", "We use Postgres", "--now", T],
            f"Error: cannot list the store {root}: permission denied; check the store's owner and mode "
            "(it should be yours, 0700)\n", 1, [tmp_path])


def test_a_non_utf8_store_path_is_refused_clearly(tmp_path):
    bad = Path(os.fsdecode(os.fsencode(tmp_path) + b"/st\xff"))
    shown = f"{tmp_path}/st\\xff"
    for argv in (["remember", "We use Postgres"], ["recall", "x"], ["init"]):
        refused(["--store", bad, *argv, "--now", T],
                f"Error: store path {shown} is not valid UTF-8; rename the directory or choose another "
                "--store (the indexes need a UTF-8 path)\n", 1, [tmp_path])


def test_a_store_path_with_a_newline_stays_one_line(tmp_path):
    odd = tmp_path / "a\nb"
    refused(["--store", odd, "recall", "x", "--now", T],
            f"Error: no such store: {tmp_path}/a\\nb {NO_STORE}\n", 1, [tmp_path])


# --- memstore's own names, of the wrong type ---------------------------------------------

@pytest.fixture
def filled(tmp_path) -> Path:
    root = make_store(tmp_path / "s")
    rc, _out, err = cli("--store", root, "remember", "We decided to move billing to Postgres", "--now", T)
    assert rc == 0, err
    return root


def _replace(path: Path, kind: str) -> None:
    if path.is_dir():
        import shutil

        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    if kind == "file":
        path.write_text("not ours\n")
    elif kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")


WRONG = [  # (name, what is put there, the message's tail)
    ("log", "file", "is a file, not a directory; memstore keeps its log there: move it away or choose another --store"),
    ("snapshots", "file", "is a file, not a directory; memstore keeps its snapshots there: move it away or "
                          "choose another --store"),
    ("index", "fifo", "is a FIFO (named pipe), not a directory; memstore keeps its index there: move it away "
                      "or choose another --store"),
    ("brief", "file", "is a file, not a directory; memstore keeps its brief there: move it away or choose "
                      "another --store"),
    ("memstore.toml", "dir", "is a directory, not a regular file; move it away or choose another --store"),
    ("memstore.toml", "fifo", "is a FIFO (named pipe), not a regular file; move it away or choose another --store"),
    (".lock", "dir", "is a directory, not a regular file; move it away or choose another --store"),
    (".lock", "dangling", "is a symbolic link to nothing; memstore needs a regular file there: remove it"),
]


@pytest.mark.parametrize("fresh", [True, False], ids=["new", "filled"])
@pytest.mark.parametrize("name,kind,tail", WRONG, ids=[f"{n}-{k}" for n, k, _ in WRONG])
def test_an_own_name_of_the_wrong_type(filled, tmp_path, fresh, name, kind, tail):
    """Run as a subprocess with a timeout: a FIFO opened for reading would hang forever."""
    root = filled
    if fresh:
        root = make_store(tmp_path / "fresh")
    _replace(root / name, kind)
    before = snapshot(root)
    for argv in (["stats"], ["remember", "We use Redis for caching"], ["verify", "--repair"], ["recall", "x"]):
        p = subprocess.run([MEMSTORE_SCRIPT, "--store", str(root), *argv, "--now", LATER], capture_output=True,
                           text=True, timeout=60, env=subprocess_env(), stdin=subprocess.DEVNULL)
        assert (p.returncode, p.stdout) == (1, ""), (argv, p.stderr)
        assert p.stderr == f"Error: {root / name} {tail}\n", argv
        assert snapshot(root) == before


def test_memstore_toml_fifo_does_not_hang_the_library(tmp_path):
    from memstore.errors import StoreError
    from memstore.store.layout import Layout

    root = tmp_path / "s"
    root.mkdir()
    os.mkfifo(root / "memstore.toml")
    with pytest.raises(StoreError, match="FIFO"):
        Layout(root).read_config_text()


def test_the_library_refuses_a_project_directory_for_reads_too(tmp_path):
    from memstore.api import Store
    from memstore.errors import StoreError

    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("print('hi')\n")
    with pytest.raises(StoreError, match="is not a memstore store"):
        Store(project)
    assert sorted(p.name for p in project.iterdir()) == ["main.py"]


def test_verify_repair_touches_only_memstores_own_paths(tmp_path):
    """A store that (also) holds a user's file: verify neither reports nor chmods it."""
    from reliability_support import cli, make_store

    store = make_store(tmp_path / "store")
    assert cli("--store", str(store), "remember", "a memory", "--now", "2026-06-07T09:00:00Z")[0] == 0
    script = store / "notes.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (store / "log" / "2026-06.jsonl").chmod(0o644)
    rc, out, _err = cli("--store", str(store), "verify", "--repair", "--now", "2026-06-08T00:00:00Z")
    assert rc == 0 and "2026-06.jsonl:0: file mode 0644" in out and "notes.sh" not in out
    assert oct(script.stat().st_mode & 0o777) == "0o755"
    assert oct((store / "log" / "2026-06.jsonl").stat().st_mode & 0o777) == "0o600"
