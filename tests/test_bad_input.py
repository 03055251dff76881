"""Bad input corpus: every case is refused with one `Error: ...` line (no traceback), a
non-zero exit, no output, and the store byte-for-byte as it was (index/ excluded: a cache).

Cases run in-process (fast) against a copy of one prepared store; a read-only store and a
full disk are simulated by injected OSErrors (tests run as root, so chmod cannot make a
store read-only), and for real with a read-only bind mount and a tiny tmpfs where the
machine allows mounting. `run_corpus()` is also what `bench/reliability.py` counts.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from reliability_support import (
    MEMSTORE_SCRIPT,
    cli,
    digest,
    make_store,
    mount,
    subprocess_env,
    umount,
)

T = "2026-06-07T09:00:00Z"
HEAD = "2026-06-09T03:00:00Z"  # the prepared store's latest record time
LATER = "2026-06-10T00:00:00Z"
PAST = "2026-06-01T00:00:00Z"
BIG = "x" * 10_000_000  # 10 MB


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    stdin: bytes = b""
    files: tuple[tuple[str, bytes], ...] = ()  # written under {files}/ first
    env: tuple[tuple[str, str], ...] = ()
    store: str = "{store}"
    inject: str | None = None  # erofs | enospc | enospc-partial
    config: str | None = None  # memstore.toml written before the run (part of the "before")
    now: str | None = LATER  # appended as --now unless None


def jl(*objs) -> bytes:
    return b"".join((o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objs)


GOOD = {"text": "a perfectly good memory"}
BAD_NOWS = ["garbage", "", " ", "2026-13-01", "2026-02-30", "2026-06-07T25:00:00Z", "2026-06-07T09:61:00Z",
            "10000-01-01T00:00:00Z", "9999-06-01T00:00:00Z", "0000-01-01", "2026-06-07T09:00:00+25:00",
            "tomorrow", "next week", "1e9", "nan", "2026-06-07T09:00:00Zjunk", "2026-06-07T09:00:00ZZ", "T09:00",
            "2026-06-07 09:00 +99", "06/07", "2026-06-07 09:00 EST"]


def corpus() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # --- malformed --now (and MEMSTORE_NOW), on writers and readers ---
    for i, bad in enumerate(BAD_NOWS):
        add(Case(f"now-remember-{i}", ("remember", "a memory", "--now", bad), now=None))
    for cmd in (("recall", "memory"), ("consolidate",), ("distill",), ("forget", "{memory}"), ("show", "{memory}"),
                ("snapshot",), ("index",), ("stats",), ("conflicts",), ("verify",), ("judge", "deploy friday"),
                ("export",), ("log",)):
        add(Case(f"now-{cmd[0]}", (*cmd, "--now", "garbage"), now=None))
    add(Case("now-env", ("remember", "a memory"), env=(("MEMSTORE_NOW", "not-a-time"),), now=None))
    # --- out-of-range salience and other option values ---
    for axis in ("importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability",
                 "confidence"):
        add(Case(f"salience-{axis}-high", ("remember", "a memory", f"--{axis}", "1.5")))
    for i, v in enumerate(["-0.1", "nan", "inf", "-inf", "high", "", "0.5.5", "1e999", "0x1"]):
        add(Case(f"salience-value-{i}", ("remember", "a memory", "--importance", v)))
    for opt, v in (("--kind", "bogus"), ("--kind", ""), ("--kind", "note; rm -rf /"), ("--tier", "medium"),
                   ("--outcome", "maybe"), ("--source", "robot"), ("--occurred-at", "garbage"),
                   ("--occurred-at", "2026-13"), ("--occurred-at", "2026-02-30"), ("--occurred-at", "0000"),
                   ("--subject", "two\nlines"), ("--domain", "d" * 300), ("--key", "a\x07bell"),
                   ("--actor", "x" * 300)):
        add(Case(f"option{opt}={v[:12]!r}", ("remember", "a memory", opt, v)))
    # --- text: huge, empty, NUL, invalid UTF-8 ---
    add(Case("huge-arg", ("remember", BIG)))
    add(Case("huge-stdin", ("remember",), stdin=BIG.encode()))
    add(Case("huge-jsonl", ("remember", "--jsonl", "{files}/big.jsonl"), files=(("big.jsonl", jl({"text": BIG})),)))
    for i, text in enumerate(["", "   ", "\n\t "]):
        add(Case(f"empty-arg-{i}", ("remember", text)))
    add(Case("empty-stdin", ("remember",), stdin=b""))
    add(Case("empty-stdin-ws", ("remember", "-"), stdin=b"  \n "))
    add(Case("empty-jsonl-text", ("remember", "--jsonl", "{files}/e.jsonl"), files=(("e.jsonl", jl({"text": ""})),)))
    add(Case("nul-arg", ("remember", "a\x00b")))
    add(Case("nul-stdin", ("remember",), stdin=b"a\x00b"))
    add(Case("nul-jsonl", ("remember", "--jsonl", "{files}/n.jsonl"), files=(("n.jsonl", jl({"text": "a\u0000b"})),)))
    add(Case("utf8-arg", ("remember", "caf\udce9")))
    add(Case("utf8-stdin", ("remember",), stdin=b"caf\xe9 au lait"))
    add(Case("utf8-stdin-truncated", ("remember",), stdin="日本".encode()[:-1]))
    add(Case("utf8-jsonl", ("remember", "--jsonl", "{files}/u.jsonl"), files=(("u.jsonl", b'{"text": "caf\xe9"}\n'),)))
    add(Case("utf8-jsonl-stdin", ("remember", "--jsonl", "-"), stdin=jl(GOOD, b'{"text": "\xff\xfe"}')))
    add(Case("utf8-recall-stdin", ("recall", "-"), stdin=b"\xff"))
    # --- bulk JSONL: malformed, and valid lines mixed with one bad line ---
    for i, body in enumerate([b"not json\n", b"[1, 2]\n", b'"just a string"\n', b'{"text": 5}\n', b'{"txt": "x"}\n',
                              b'{"text": "abc\n', b'{"text": "a", "importance": 7}\n', b'{"text": "a", "kind": "bogus"}\n',
                              b'{"text": "a", "actors": {"alice": 1}}\n', b'{"text": "a", "occurred_at": "soon"}\n',
                              b"null\n", b"{}\n", b"\n\n  \n", b"",
                              jl(GOOD, GOOD | {"text": "second good one"}, b"{broken"),
                              jl(b"{broken", GOOD), jl(GOOD, {"text": "x", "tier": "forever"}, GOOD | {"text": "third"}),
                              jl(*[{"text": f"good line {n}"} for n in range(50)], {"text": ""}, {"text": 1})]):
        add(Case(f"jsonl-{i}", ("remember", "--jsonl", "{files}/b.jsonl"), files=(("b.jsonl", body),)))
    add(Case("jsonl-missing-file", ("remember", "--jsonl", "{files}/absent.jsonl")))
    add(Case("jsonl-directory", ("remember", "--jsonl", "{files}")))
    add(Case("jsonl-and-text", ("remember", "text too", "--jsonl", "{files}/g.jsonl"), files=(("g.jsonl", jl(GOOD)),)))
    # --- unknown ids ---
    for cmd in (("show", "mffffffffffffff0"), ("show", ""), ("show", "no-such-key"), ("forget", "mffffffffffffff0"),
                ("forget", ""), ("forget", "no-such-key"), ("conflicts", "resolve", "c0000000000000000", "--keep", "new"),
                ("conflicts", "resolve", "mffffffffffffff0", "--keep", "old"),
                ("conflicts", "resolve", "{conflict}", "--keep", "bogus"), ("conflicts", "resolve", "{conflict}"),
                ("conflicts", "bogus-action")):
        add(Case(f"unknown-{'-'.join(cmd)[:40]}", cmd))
    # --- recall options ---
    for args in (("--k", "0"), ("--k", "-1"), ("--k", "1001"), ("--k", "ten"), ("--format", "yaml"),
                 ("--during", "the day after never"), ("--as-of", "garbage"), ("--batch", "{files}/absent.jsonl")):
        add(Case(f"recall{args[0]}={args[1][:10]}", ("recall", "memory", *args) if args[0] != "--batch" else ("recall", *args)))
    add(Case("recall-empty-query", ("recall", "")))
    add(Case("recall-batch-malformed", ("recall", "--batch", "{files}/q.jsonl"), files=(("q.jsonl", b'{"query": "a"}\nnope\n'),)))
    # --- the store itself ---
    for cmd in (("remember", "a memory"), ("recall", "memory"), ("consolidate",), ("verify",), ("show", "m1"),
                ("stats",), ("snapshot",), ("index",), ("init",)):
        add(Case(f"store-is-a-file-{cmd[0]}", cmd, store="{afile}"))
    add(Case("store-under-a-file", ("remember", "a memory"), store="{afile}/store"))
    for cmd in (("remember", "a memory"), ("remember", "--jsonl", "{files}/g.jsonl"), ("consolidate",),
                ("forget", "{memory}"), ("snapshot",), ("conflicts", "resolve", "{conflict}", "--keep", "both")):
        files = (("g.jsonl", jl(GOOD, {"text": "another good one"})),)
        add(Case(f"read-only-{cmd[0]}-{len(cmd)}", cmd, files=files, inject="erofs"))
        add(Case(f"disk-full-{cmd[0]}-{len(cmd)}", cmd, files=files, inject="enospc"))
        add(Case(f"disk-full-partial-{cmd[0]}-{len(cmd)}", cmd, files=files, inject="enospc-partial"))
    # --- --now against the log: earlier than its latest record, or beyond the supported range ---
    for cmd in (("remember", "a memory"), ("remember", "--jsonl", "{files}/g.jsonl"), ("forget", "{memory}"),
                ("conflicts", "resolve", "{conflict}", "--keep", "both"), ("consolidate",)):
        add(Case(f"past-now-{cmd[0]}-{len(cmd)}", (*cmd, "--now", PAST), files=(("g.jsonl", jl(GOOD)),), now=None))
        add(Case(f"future-now-{cmd[0]}-{len(cmd)}", (*cmd, "--now", "9999-12-31T00:00:00Z"),
                 files=(("g.jsonl", jl(GOOD)),), now=None))
    # --- configuration and command line ---
    for i, cfg in enumerate(['[embedder\nname = "hashing"', '[embedder]\nname = "gpt"\n', '[nope]\nx = 1\n',
                             '[embedder]\nname = 5\n', "\xff"]):
        add(Case(f"config-{i}", ("remember", "a memory"), config=cfg))
    add(Case("unknown-command", ("rememberr", "a memory"), now=None))
    add(Case("unknown-option", ("remember", "a memory", "--bogus")))
    add(Case("missing-option-value", ("remember", "a memory", "--kind"), now=None))
    return c


CASES = corpus()


# --- running a case -------------------------------------------------------------------------

def build_base(root: Path) -> dict:
    store = make_store(root / "store")
    run = lambda *a: cli("--store", store, *a)  # noqa: E731
    ids = []
    for text, extra in (("The billing database is Postgres", ("--subject", "billing-db", "--kind", "fact")),
                        ("coffee without sugar", ()), ("the deploy checklist lives in the wiki", ())):
        rc, out, err = run("remember", text, *extra, "--now", T)
        assert rc == 0, err
        ids.append(out.strip())
    assert run("remember", "The billing database is not Postgres", "--subject", "billing-db", "--kind", "fact",
               "--now", "2026-06-08T09:00:00Z")[0] == 0
    rc, out, err = run("consolidate", "--now", HEAD, "--json")
    conflict = next(e["id"] for e in json.loads(out)["events"] if e["op"] == "conflict")
    assert run("snapshot", "--now", HEAD)[0] == 0
    assert run("recall", "billing", "--no-touch", "--now", HEAD)[0] == 0
    # a pending short-term expiry, so a past consolidate would have work to refuse
    for i in range(2):
        assert run("remember", f"standup notes {i}", "--subject", "standup", "--now", HEAD)[0] == 0
    afile = root / "afile"
    afile.write_text("not a store")
    return {"store": store, "memory": ids[1], "conflict": conflict, "afile": afile}


def _fill(value: str, ctx: dict) -> str:
    for k, v in ctx.items():
        value = value.replace("{" + k + "}", str(v))
    return value


class Injected:
    """Fail the store's writes the way a read-only file system or a full disk does."""

    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def __init__(self, kind: str, monkeypatch, store: Path):
        self.kind, self.mp, self.store = kind, monkeypatch, str(store)
        real_open, real_write = os.open, os.write
        state = {"writes": 0}

        def erofs(path, flags, *a, **k):
            if flags & self.WRITE_FLAGS and str(path).startswith(self.store):
                raise OSError(errno.EROFS, "Read-only file system", str(path))
            return real_open(path, flags, *a, **k)

        def refuse(*a, **k):
            raise OSError(errno.EROFS, "Read-only file system")

        def enospc(fd, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def partial(fd, data):
            state["writes"] += 1
            if state["writes"] == 1 and len(data) > 1:
                return real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")

        if kind == "erofs":
            monkeypatch.setattr(os, "open", erofs)
            for name in ("mkdir", "replace", "rename", "unlink", "truncate", "chmod"):
                monkeypatch.setattr(os, name, refuse)
        else:
            monkeypatch.setattr(os, "write", enospc if kind == "enospc" else partial)


def run_case(case: Case, base: dict, work: Path, monkeypatch) -> tuple[list[str], str, str]:
    """Run one case on a fresh copy of the base store; return (problems, stdout, stderr)."""
    ctx = dict(base)
    store = work / "store"
    shutil.copytree(base["store"], store, symlinks=True)
    ctx["store"] = store
    ctx["files"] = work / "files"
    (work / "files").mkdir()
    for name, body in case.files:
        (work / "files" / name).write_bytes(body)
    if case.config is not None:
        (store / "memstore.toml").write_text(case.config, errors="surrogateescape")
    target = Path(_fill(case.store, ctx))
    before = digest(target)
    argv = ["--store", str(target), *(_fill(a, ctx) for a in case.argv)]
    if case.now is not None:
        argv += ["--now", case.now]
    with monkeypatch.context() as mp:
        for k, v in case.env:
            mp.setenv(k, v)
        if case.inject:
            Injected(case.inject, mp, store)
        try:
            rc, out, err = cli(*argv, stdin=case.stdin)
        except BaseException as exc:  # a traceback would have reached the user
            return [f"raised {type(exc).__name__}: {exc}"[:300]], "", ""
    problems = []
    lines = err.splitlines()
    if rc == 0:
        problems.append("exit status 0")
    if not lines or not lines[0].startswith("Error: ") or len(lines[0]) <= len("Error: "):
        problems.append(f"stderr does not start with one `Error: ...` line: {err[:300]!r}")
    elif any(not line.startswith("  ") for line in lines[1:]):  # only indented detail may follow
        problems.append(f"more than one error line: {err[:300]!r}")
    if "Traceback" in err:
        problems.append("traceback")
    if out:
        problems.append(f"printed to stdout: {out[:200]!r}")
    if digest(target) != before:
        problems.append("the store changed")
    return problems, out, err


def run_corpus(work: Path) -> dict:
    """Every case, outside pytest (for the bench): counts and the failures."""
    base = build_base(work / "base")
    mp = pytest.MonkeyPatch()
    failures, changed = [], 0
    for n, case in enumerate(CASES):
        problems, _out, _err = run_case(case, base, work / f"case{n}", mp)
        changed += "the store changed" in problems
        if problems:
            failures.append((case.id, problems))
        shutil.rmtree(work / f"case{n}", ignore_errors=True)
    mp.undo()
    return {"tried": len(CASES), "store_changes": changed, "failures": failures}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict:
    return build_base(tmp_path_factory.mktemp("bad-input-base"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_and_changes_nothing(case, base, tmp_path, monkeypatch):
    problems, out, err = run_case(case, base, tmp_path, monkeypatch)
    assert problems == [], err


def test_the_corpus_is_large_and_names_are_unique():
    assert len(CASES) >= 100 and len({c.id for c in CASES}) == len(CASES)


# --- the real thing, where the machine allows mounts ----------------------------------------

def _run(store: Path, *argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, MEMSTORE_SCRIPT, "--store", str(store), *argv], input=stdin,
                          capture_output=True, env=subprocess_env(), timeout=60)


def _one_error_line(p: subprocess.CompletedProcess) -> str:
    err = p.stderr.decode()
    assert p.returncode != 0 and p.stdout == b"" and err.startswith("Error: ") and err.count("\n") == 1, err
    return err


def test_a_real_read_only_store(base, tmp_path):
    if os.geteuid() != 0:  # an ordinary user: plain modes make a store read-only
        pytest.skip("covered by the chmod variant below")
    ro = tmp_path / "ro"
    shutil.copytree(base["store"], tmp_path / "src")
    ro.mkdir()
    if not (mount("--bind", str(tmp_path / "src"), str(ro)) and mount("-o", "remount,ro,bind", str(ro))):
        umount(ro)
        pytest.skip("cannot make a read-only bind mount here (no mount privilege)")
    try:
        before = digest(ro)
        for argv in (["remember", "a memory", "--now", LATER], ["consolidate", "--now", LATER],
                     ["snapshot", "--now", LATER], ["forget", base["memory"], "--now", LATER]):
            err = _one_error_line(_run(ro, *argv))
            assert "read-only" in err, err
        assert digest(ro) == before
    finally:
        umount(ro)


def test_a_read_only_store_for_an_ordinary_user(base, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores modes: see the bind-mount and injected variants")
    store = tmp_path / "store"
    shutil.copytree(base["store"], store)
    for path in [store, *store.rglob("*")]:
        os.chmod(path, 0o500 if path.is_dir() else 0o400)
    try:
        before = digest(store)
        err = _one_error_line(_run(store, "remember", "a memory", "--now", LATER))
        assert "permission denied" in err
        assert digest(store) == before
    finally:
        for path in [store, *store.rglob("*")]:
            os.chmod(path, 0o700 if path.is_dir() else 0o600)


def test_a_really_full_disk(base, tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if not mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)):
        pytest.skip("cannot mount a tmpfs here (no mount privilege)")
    try:
        store = mnt / "store"
        shutil.copytree(base["store"], store, ignore=shutil.ignore_patterns("index", "snapshots"))
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:  # fill the file system to the last byte
            for size in (1 << 16, 4096, 512, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)
        before = digest(store)
        bulk = tmp_path / "bulk.jsonl"
        bulk.write_bytes(jl(*[{"text": f"memory number {i} " + "y" * 200} for i in range(200)]))
        for argv in (["remember", "a memory that does not fit " * 2000, "--now", LATER],
                     ["remember", "--jsonl", str(bulk), "--now", LATER]):
            err = _one_error_line(_run(store, *argv))
            assert "disk is full" in err, err
        assert digest(store) == before
        filler.unlink()
        assert _run(store, "remember", "--jsonl", str(bulk), "--now", LATER).returncode == 0
        assert _run(store, "verify", "--repair", "--now", LATER).returncode == 0
    finally:
        umount(mnt)


def test_invalid_utf8_in_a_real_argv(base, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(base["store"], store)
    before = digest(store)
    p = subprocess.run([os.fsencode(sys.executable), os.fsencode(MEMSTORE_SCRIPT), b"--store", os.fsencode(store),
                        b"remember", b"caf\xe9", b"--now", LATER.encode()], capture_output=True,
                       env=subprocess_env(), timeout=60)
    assert _one_error_line(p) == "Error: text is not valid UTF-8; convert it, e.g. with iconv\n"
    assert digest(store) == before

