"""The shape of the CLI layer: what imports what, where global options go, the conflicts
group, and how replay captures and shows the output of its lines.

1. Imports within cli/ are acyclic, counting imports inside functions; replay does not
   re-enter the CLI through cli/main; no module in cli/ touches the log or the store lock
   (the write transaction is the library's: memstore/writes.py).
2. --store and --quiet work after the command name as before it (real click options).
3. `memstore conflicts` is a group: list (also the plain command) and resolve.
4. replay captures each line's output through cli/output.py and shows checkpoints as text.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from memstore_cli import output
from memstore_cli.main import main

from memstore.script import READ_COMMANDS, parse_script

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "cli"
T1, T2, T3 = "2026-01-02T10:00:00Z", "2026-01-03T11:00:00Z", "2026-01-04T03:00:00Z"
HASHING = '[embedder]\nname = "hashing"\n[conflicts]\nauto_supersede = false\n'


# --------------------------------------------------------------------------- 1. imports

def _module_name(path: Path) -> str:
    parts = ["cli", *path.relative_to(CLI).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(CLI.rglob("*.py"))}


def _imports(name: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import statement, at any depth, relative ones
    resolved; `from pkg import name` counts as pkg.name where that is a module."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.append((node.lineno, sub if sub in MODULES else module))
    return [(line, "cli" + m[len("memstore_cli"):] if m.startswith("memstore_cli") else m) for line, m in found]


def _graph() -> dict[str, set[str]]:
    return {name: {m for _line, m in _imports(name) if m in MODULES and m != name} for name in MODULES}


def test_the_cli_layer_is_scanned():
    assert {"cli.main", "cli.app", "cli.output", "cli.common", "cli.commands", "cli.commands.replay",
            "cli.commands.conflicts"} <= set(MODULES)
    graph = _graph()
    assert "cli.app" in graph["cli.main"] and "cli.app" in graph["cli.commands.replay"]
    assert "cli.output" in graph["cli.commands.replay"]


def test_imports_within_cli_are_acyclic():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_replay_does_not_reenter_the_cli_through_main():
    graph = _graph()
    reach, todo = set(), ["cli.commands.replay"]
    while todo:
        for nxt in graph[todo.pop()] - reach:
            reach.add(nxt)
            todo.append(nxt)
    assert "cli.main" not in reach
    source = MODULES["cli.commands.replay"].read_text()
    assert "sys.stdout =" not in source and "_GLOBAL" not in source


def test_the_registry_imports_no_command_module():
    """Command modules are loaded by name when their command is built (a fast `remember`)."""
    assert {m for _line, m in _imports("cli.commands")} == {"__future__", "importlib"}


def test_the_write_transaction_stays_in_the_library():
    bad = []
    for name in MODULES:
        for line, module in _imports(name):
            if module in ("memstore.store.log", "memstore.store.fs.exclusive_lock"):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: imports {module}")
        text = MODULES[name].read_text()
        if re.search(r"\bexclusive_lock\b", text):
            bad.append(f"{MODULES[name].relative_to(ROOT)}: uses exclusive_lock")
    assert bad == []


# Modules that still write to sys.stdout themselves: their output escapes output.capture(), so
# a replayed `export` line prints instead of being kept. Move them to output.write_bytes /
# output.write_text, then drop them here.
WRITES_STDOUT_ITSELF: set[str] = set()


def test_commands_print_through_cli_output():
    offenders = set()
    for name, path in MODULES.items():
        if name == "cli.output":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.add(str(path.relative_to(ROOT)))
            if isinstance(node, ast.Attribute) and node.attr in ("write", "buffer") and \
                    isinstance(node.value, ast.Attribute) and node.value.attr == "stdout":
                offenders.add(str(path.relative_to(ROOT)))
    assert offenders <= WRITES_STDOUT_ITSELF


def test_the_guard_resolves_relative_and_function_level_imports():
    sample = CLI / "commands" / "replay.py"
    imports = dict((m, line) for line, m in _imports("cli.commands.replay"))
    assert "cli.app" in imports  # `from .. import app`, inside run()
    tree = ast.parse(sample.read_text())
    func_level = [n for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)
                  if isinstance(n, ast.ImportFrom) and n.level == 2 and [a.name for a in n.names] == ["app"]]
    assert func_level


# --------------------------------------------------------------------------- 2. global options

@pytest.fixture
def store(tmp_path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    (store / "memstore.toml").write_text(HASHING)
    return store


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_store_and_quiet_after_the_command(store, capsys):
    text = "We decided to move billing to Postgres"
    rc, out, err = run(capsys, "--store", store, "remember", text, "--now", T1)
    assert (rc, err) == (0, "") and re.fullmatch(r"m[0-9a-f]{15}\n", out)
    again = run(capsys, "remember", text, "--now", T2, "--store", store)
    assert again == run(capsys, "--store", store, "remember", text, "--now", T2)
    assert again == (0, out, "reinforce: same text already remembered\n")
    assert run(capsys, "remember", text, "--now", T2, "--store", store, "-q") == (0, "", "")
    assert run(capsys, "remember", text, "-q", "--now", T2, "--store", store) == \
        run(capsys, "-q", "--store", store, "remember", text, "--now", T2)
    a = run(capsys, "--store", store, "recall", "billing", "--no-touch", "--now", T3)
    b = run(capsys, "recall", "billing", "--no-touch", "--now", T3, "--store", store)
    c = run(capsys, "recall", "--store", store, "billing", "--no-touch", "--now", T3)
    assert a == b == c
    assert a[1].endswith(f"  {out.strip()}  decision   2026-01-02  {text}\n")
    assert re.fullmatch(r"1 result\(s\); intent \w+; examined \d+ of 1\n", a[2])
    assert run(capsys, "recall", "billing", "--no-touch", "--now", T3, "--store", store, "--quiet") == (0, a[1], "")
    stats = run(capsys, "stats", f"--store={store}", "--json", "--now", T3)
    assert stats == run(capsys, f"--store={store}", "stats", "--json", "--now", T3)
    assert json.loads(stats[1])["memories"] == 1


def test_after_the_command_wins_over_before(store, tmp_path, capsys):
    other = tmp_path / "other"
    rc, out, err = run(capsys, "--store", other, "stats", "--json", "--now", T3, "--store", store)
    assert (rc, err) == (0, "") and not other.exists()
    assert json.loads(out)["memories"] == 0


def test_option_values_and_text_that_look_like_store(store, capsys):
    rc, out, _err = run(capsys, "remember", "about flags", "--subject", "--store", "--store", store, "--now", T1)
    assert rc == 0
    shown = json.loads(run(capsys, "--store", store, "show", out.strip(), "--json", "--now", T1)[1])["memory"]
    assert shown["subject"] == "--store"
    rc, out, _err = run(capsys, "--store", store, "remember", "--now", T2, "--kind", "fact", "--", "--store")
    assert rc == 0
    shown = json.loads(run(capsys, "--store", store, "show", out.strip(), "--json", "--now", T2)[1])["memory"]
    assert shown["text"] == "--store"
    assert run(capsys, "recall", "x", "--store") == (2, "", "Error: Option '--store' requires an argument.\n")


def test_global_options_are_listed_once(capsys):
    rc, out, _err = run(capsys, "recall", "--help")
    assert rc == 0 and "--store" not in out and "--quiet" not in out
    rc, out, _err = run(capsys, "--help")
    assert "  --store DIR " in out and "  -q, --quiet " in out


def test_replay_scripts_refuse_store_and_now(tmp_path, capsys):
    for line, flag in (("recall x --store /tmp/elsewhere", "--store"), ("stats --now=2026-01-01", "--now=")):
        script = tmp_path / "s.ms"
        script.write_text(f"{T1} {line}\n")
        assert run(capsys, "--store", tmp_path / "st", "replay", script) == (
            2, "", f"Error: {script}:1: do not pass --now or --store in a script: the line's time is its --now\n")
        assert flag in line


# --------------------------------------------------------------------------- 3. conflicts

@pytest.fixture
def conflicted(store, capsys) -> tuple[Path, str]:
    for text, now, extra in (("I prefer tea in the morning.", T1, ("--source", "agent")),
                             ("I prefer coffee in the morning.", T2, ())):
        assert run(capsys, "--store", store, "remember", text, "--subject", "drink", *extra, "--now", now)[0] == 0
    assert run(capsys, "--store", store, "consolidate", "--now", T3)[0] == 0
    listing = run(capsys, "--store", store, "conflicts", "--now", T3)
    return store, listing[1].split()[0]


def test_conflicts_plain_is_conflicts_list(conflicted, capsys):
    store, cid = conflicted
    plain = run(capsys, "--store", store, "conflicts", "--now", T3)
    assert plain == run(capsys, "--store", store, "conflicts", "list", "--now", T3)
    assert plain[1].startswith(f"{cid}  value (cosine ")
    assert run(capsys, "conflicts", "--json", "--all", "--now", T3, "--store", store) == \
        run(capsys, "conflicts", "list", "--all", "--json", "--now", T3, "--store", store)


def test_conflicts_resolve(conflicted, capsys):
    store, cid = conflicted
    later = "2026-01-04T09:00:00Z"
    assert run(capsys, "conflicts", "resolve", cid, "--keep", "new", "--store", store, "--now", later) == \
        (0, cid + "\n", "")
    assert run(capsys, "--store", store, "conflicts", "list", "--now", later) == (0, "", "no open conflicts\n")
    again = run(capsys, "--store", store, "conflicts", "resolve", cid, "--keep", "new", "--json", "--now", later)
    assert again == (0, json.dumps({"changed": False, "id": cid, "keep": "new"}, separators=(",", ":")) + "\n", "")


@pytest.mark.parametrize("argv, message", [
    (("frobnicate",), "unknown action 'frobnicate'; use `memstore conflicts` or "
                      "`memstore conflicts resolve ID --keep ...`"),
    (("--keep", "new"), "ID and --keep go with `resolve`: memstore conflicts resolve ID --keep new"),
    (("resolve",), "resolve needs a conflict ID: memstore conflicts resolve ID --keep new|old|both|dismiss"),
    (("resolve", "c0000000000000000"), "resolve needs --keep new, old, both or dismiss"),
    (("resolve", "c0000000000000000", "--keep", "maybe"), "--keep 'maybe' is not one of: new, old, both, dismiss"),
    (("--all", "list"), "options go after the subcommand: memstore conflicts list ..."),
])
def test_conflicts_usage_errors(store, capsys, argv, message):
    assert run(capsys, "--store", store, "conflicts", *argv, "--now", T3) == (2, "", f"Error: {message}\n")


def test_a_resolve_line_is_a_write_not_a_checkpoint():
    known = {("conflicts",), ("conflicts", "list"), ("conflicts", "resolve"), ("recall",), ("remember",)}
    steps = parse_script(f"{T1} conflicts --json\n{T1} conflicts list --all\n{T1} conflicts resolve c1 --keep new\n"
                         f"{T1} remember list\n{T1} recall resolve\n", "s.ms", known)
    assert [s.path for s in steps] == [("conflicts",), ("conflicts", "list"), ("conflicts", "resolve"),
                                       ("remember",), ("recall",)]
    assert [s.checkpoint for s in steps] == [True, True, False, False, True]
    assert ("conflicts", "resolve") not in READ_COMMANDS


# --------------------------------------------------------------------------- 4. capture and replay

def test_capture_collects_what_commands_print(capsys):
    with output.capture() as got:
        output.out("text")
        output.emit_json({"b": 1, "a": "é"})
        output.emit_jsonl([{"n": 1}, {"n": 2}])
        output.write_bytes(b"raw\n")
        output.note("a note")
        output.error("Error: x")
        assert not output.is_tty()
        with output.capture() as inner:
            output.out("inner")
        output.console().print("from rich")
    assert capsys.readouterr() == ("", "")
    assert got.stdout == 'text\n{"a":"é","b":1}\n{"n":1}\n{"n":2}\nraw\nfrom rich\n'.encode()
    assert got.stderr == "a note\nError: x\n"
    assert inner.stdout == b"inner\n"


def test_a_command_inside_capture_prints_nothing(store, capsys):
    with output.capture() as got:
        rc = main(["--store", str(store), "remember", "--now", T1, "We decided to move billing to Postgres"])
        bad = main(["--store", str(store), "stats", "--now", "garbage"])
    assert capsys.readouterr() == ("", "")
    assert (rc, bad) == (0, 2)
    assert re.fullmatch(rb"m[0-9a-f]{15}\n", got.stdout)
    assert got.stderr.startswith("Error: --now 'garbage' is not a date/time")


SCRIPT = f"""\
# a small script
{T1} remember "Deploy on Friday broke checkout" --subject friday-deploys --outcome negative --kind incident
{T1} remember "I prefer tea in the morning." --subject drink --source agent
2026-01-09T10:00:00Z remember "Friday deploy took down payments" --subject friday-deploys --outcome negative --kind incident
2026-01-09T11:00:00Z remember "I prefer coffee in the morning." --subject drink
2026-01-11T04:00:00Z distill
2026-01-11T05:00:00Z consolidate
2026-01-12T09:00:00Z recall "friday deploy" --k 2 --no-touch --json
2026-01-12T09:01:00Z judge "Can we deploy on Friday?" --json
2026-01-12T09:02:00Z stats --json
2026-01-12T09:03:00Z conflicts --json
2026-01-12T09:04:00Z recall "nothing like this at all" --kind fact --json
"""

CHECKPOINTS = [  # (time, the line's command, the same command in text form)
    ("2026-01-12T09:00:00Z", "recall 'friday deploy' --k 2 --no-touch --json", ["recall", "friday deploy", "--k", "2", "--no-touch"]),
    ("2026-01-12T09:01:00Z", "judge 'Can we deploy on Friday?' --json", ["judge", "Can we deploy on Friday?"]),
    ("2026-01-12T09:02:00Z", "stats --json", ["stats"]),
    ("2026-01-12T09:03:00Z", "conflicts --json", ["conflicts"]),
    ("2026-01-12T09:04:00Z", "recall 'nothing like this at all' --kind fact --json",
     ["recall", "nothing like this at all", "--kind", "fact"]),
]


def test_replay_shows_checkpoints_as_their_commands_print_them(store, tmp_path, capsys):
    script = tmp_path / "week.ms"
    script.write_text(SCRIPT)
    rc, out, err = run(capsys, "--store", store, "replay", script)
    assert rc == 0, err
    want_out, want_err = [], []
    for at, line, text_form in CHECKPOINTS:  # the replayed store is as it was at each read (no reads write)
        _rc, o, e = run(capsys, "--store", store, *text_form, "--now", at)
        if text_form[0] == "stats":  # replay shows stats without its histogram
            o = "".join(o.splitlines(keepends=True)[:6])
        want_out.append(f"{at}  {line}\n{o}\n")
        want_err.append(e)
    assert out == "".join(want_out)
    assert "1. [mitigate] Avoid: friday-deploys:" in out and "  text       I prefer tea in the morning." in out
    summary = err.splitlines()[-1]
    assert err[: -len(summary) - 1] == "".join(want_err)
    assert re.fullmatch(r"replayed 11 lines in \d+\.\d s: 1 conflicts, 1 consolidate, 1 distill, 1 judge, "
                        r"2 recall, 4 remember, 1 stats; 5 checkpoints; state [0-9a-f]{16} \(\d+ memories\)",
                        summary)


def test_replay_quiet_and_json_show_no_checkpoints(store, tmp_path, capsys):
    script = tmp_path / "week.ms"
    script.write_text(SCRIPT)
    assert run(capsys, "--store", store, "-q", "replay", script) == (0, "", "")
    rc, out, err = run(capsys, "replay", script, "--json", "--store", tmp_path / "second")
    assert (rc, err) == (0, "")
    assert json.loads(out)["checkpoints"] == 5
    from memstore.store import open as store_open

    assert store_open._ENABLED == [False]  # replay's memo of folded states ends with it


def test_a_failing_line_names_itself_and_leaves_no_options_behind(store, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMSTORE_DIR", str(tmp_path / "from-env"))  # replay's store wins over it for every line
    script = tmp_path / "bad.ms"
    script.write_text(f"{T1} remember 'hello there'\n{T2} show no-such-key\n")
    rc, out, err = run(capsys, "--store", store, "replay", script)
    assert (rc, out) == (1, "")
    assert err == (f"Error: {script}:2: show failed (exit 1): no memory with id or key 'no-such-key'; "
                   "list ids with `memstore export` or `memstore log`\n")
    assert not (tmp_path / "from-env").exists()
    from memstore_cli.common import current_globals

    assert current_globals().store is None and not current_globals().quiet


def test_help_reads_well(capsys):
    rc, out, _err = run(capsys, "conflicts", "--help")
    assert rc == 0
    assert out.startswith("Usage: memstore conflicts [OPTIONS] [COMMAND [ARGS]...]\n")
    assert re.search(r"^Commands:\n  list +List conflicts side by side.*\n  resolve +Record a person's decision",
                     out, re.M)
    rc, out, _err = run(capsys, "conflicts", "resolve", "--help")
    assert out.startswith("Usage: memstore conflicts resolve [OPTIONS] ID\n")
    assert "--keep new|old|both|dismiss" in out and "[required]" in out
    names = re.findall(r"^  (\w+) ", run(capsys, "--help")[1].split("Commands:")[1], re.M)
    assert names[names.index("distill") + 1] == "conflicts"  # the registry's order, groups included


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
