"""The layers of memstore, held by its imports (an AST walk: no module is imported).

Every import statement in every .py under memstore/ and cli/ counts: at module level,
inside functions and methods, under ``if TYPE_CHECKING:``. Relative imports are resolved
to absolute names (cli/ is installed as ``memstore_cli``), and ``from pkg import name`` is
an import of ``pkg.name`` when that is a module of ours, else of ``pkg``. (A module named
in a string, ``importlib.import_module``, is not seen: cli/commands/__init__.py's registry
only, which imports the CLI's own commands.)

The rules, each a test below; a layer's rule holds for what it imports and for everything
that imports, however deep (a failure lists the chain, file:line each):

- the store layer (``memstore.store``) reaches no index, no lifecycle (consolidate, distill,
  beliefs, rowscan, the night's caches), no read path: the files the night keeps beside a
  snapshot are written through the hook its caller passes (``store.snapshot.Sidecars``;
  the night's: ``memstore.nightcache.snapshots.snapshot_sidecars``);
- the indexes (``memstore.index``) reach no belief rules, no consolidate nor the night's
  caches (which moved out of index/ to ``memstore.nightcache``), no read path;
- the read path (``memstore.recall``) reaches nothing of the nightly (the near-duplicate
  thresholds it shares with consolidate are ``config.thresholds``);
- the night's caches (``memstore.nightcache``) reach no lifecycle stage nor read path;
- the library never imports the CLI nor its terminal dependencies (typer, rich);
- no import cycle among our modules (an import in a function counts: a cycle through one
  is still two modules that cannot be understood, tested or moved one without the other).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (the directory in the repository, the package it installs as)
PACKAGES = (("memstore", "memstore"), ("cli", "memstore_cli"))


def _module_name(path: Path) -> tuple[str, bool]:
    """(the module's dotted name, whether it is a package's ``__init__``)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    for directory, installed in PACKAGES:
        if parts[0] == directory:
            parts[0] = installed
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


@cache
def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of ours: its name -> (its file, whether a package)."""
    found = {}
    for directory, _ in PACKAGES:
        for path in sorted((ROOT / directory).rglob("*.py")):
            name, package = _module_name(path)
            found[name] = (path, package)
    return found


def _resolve(name: str, package: bool, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in module ``name``."""
    if not level:
        return module or ""
    base = name.split(".") if package else name.split(".")[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([module] if module else []))


class Import:
    """One import: the module importing, the file and line, the module imported, and
    whether it runs when the module is imported (at module level) or when a function runs."""

    def __init__(self, importer: str, path: Path, line: int, target: str, statement: str,
                 in_function: bool):
        self.importer, self.path, self.line, self.target = importer, path, line, target
        self.statement, self.in_function = statement, in_function

    def __str__(self) -> str:
        where = " (in a function)" if self.in_function else ""
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.statement}{where}"


def _imports_of(name: str, path: Path, package: bool) -> list[Import]:
    modules = _modules()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(name, path, child.lineno, alias.name, ast.unparse(child), inside))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(name, package, child.level, child.module)
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in modules else base
                    found.append(Import(name, path, child.lineno, target, ast.unparse(child), inside))
            visit(child, inside)

    visit(tree, False)
    return found


@cache
def _all_imports() -> tuple[Import, ...]:
    out: list[Import] = []
    for name, (path, package) in _modules().items():
        out.extend(_imports_of(name, path, package))
    return tuple(out)


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@cache
def _by_importer() -> dict[str, tuple[Import, ...]]:
    found: dict[str, list[Import]] = {m: [] for m in _modules()}
    for i in _all_imports():
        found[i.importer].append(i)
    return {m: tuple(found[m]) for m in found}


def _packages_of(name: str) -> list[str]:
    """The packages above a module, whose ``__init__`` runs when it is imported."""
    parts = name.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def _breaking(importers, forbidden) -> list[str]:
    """Each way a module of ``importers`` reaches a module of ``forbidden``: an import of it,
    or one of it by a module of ours that they import, however deep (the chain of imports,
    file:line each). Every module reached is walked once, from the first import that reached
    it (breadth first: a shortest chain); the package ``__init__``s above a module imported
    are reached too, as Python runs them."""
    from collections import deque

    modules, imports = _modules(), _by_importer()
    start = sorted(m for m in modules if _within(m, importers))
    via: dict[str, Import | None] = dict.fromkeys(start)
    queue = deque(start)
    broken: list[str] = []
    while queue:
        module = queue.popleft()
        for i in imports[module]:
            if _within(i.target, forbidden):
                chain, step = [i], via[module]
                while step is not None:
                    chain.append(step)
                    step = via[step.importer]
                line = "\n      -> ".join(str(c) for c in reversed(chain))
                if line not in broken:
                    broken.append(line)
                continue
            for reached in (*_packages_of(i.target), i.target):
                if reached in modules and reached not in via:
                    via[reached] = i
                    queue.append(reached)
    return broken


def _report(rule: str, broken: list[str]) -> str:
    return f"{rule}: {len(broken)} import(s) break it\n  " + "\n  ".join(broken)


def test_the_walk_sees_imports_at_every_depth():
    """The walk itself: relative imports resolved, ``from . import x`` to the submodule,
    imports inside functions and methods found, chains followed (a guard against a rule that
    holds only because the walk found nothing)."""
    modules = _modules()
    assert "memstore.store.snapshot" in modules and "memstore_cli.commands.snapshot" in modules
    assert _resolve("memstore.store.open", False, 2, "fold") == "memstore.fold"
    assert _resolve("memstore.store", True, 1, None) == "memstore.store"
    assert _resolve("memstore_cli.commands.init", False, 2, "common") == "memstore_cli.common"
    found = {(i.importer, i.target, i.in_function) for i in _all_imports()}
    # (``from . import idorder`` at module level; ``from ..state import acyclic_build`` in a method)
    assert ("memstore.store.snapshot", "memstore.store.idorder", False) in found
    assert ("memstore.store.snapshot", "memstore.state", True) in found
    assert any(i.in_function for i in _all_imports() if i.importer.startswith("memstore_cli."))
    # (the store reaches the events through the fold: memstore.store.open -> memstore.fold -> ...)
    assert _breaking(STORE, ("memstore.model",))
    assert any("\n      -> " in line for line in _breaking(STORE, ("memstore.events",)))
    assert _packages_of("memstore.store.snapshot") == ["memstore", "memstore.store"]


STORE = ("memstore.store",)
INDEX = ("memstore.index",)
RECALL = ("memstore.recall",)
NIGHTCACHE = ("memstore.nightcache",)
LIFECYCLE = ("memstore.consolidate", "memstore.lifecycle", "memstore.distill")


def test_the_store_layer_knows_no_index_nor_lifecycle():
    """The store layer (the log, snapshots, the files beside them) knows no index, no
    lifecycle, no belief rules, no read path: the files the night keeps beside a snapshot
    are written through the hook its caller passes (``store.snapshot.Sidecars``)."""
    broken = _breaking(STORE, ("memstore.index", *LIFECYCLE, "memstore.beliefs", "memstore.recall",
                               "memstore.rowscan", "memstore.nightcache"))
    assert not broken, _report("memstore.store reaches no index, lifecycle nor read path", broken)


def test_the_indexes_know_no_belief_rules_nor_consolidate():
    broken = _breaking(INDEX, ("memstore.beliefs", *LIFECYCLE, "memstore.rowscan", "memstore.recall",
                               "memstore.nightcache"))
    assert not broken, _report("memstore.index reaches no belief rules, lifecycle nor read path", broken)


def test_the_read_path_does_not_import_the_nightly():
    """Recall shares with the night only what config holds (``config.thresholds``)."""
    broken = _breaking(RECALL, LIFECYCLE)
    assert not broken, _report("memstore.recall reaches nothing of the nightly", broken)


def test_the_nights_caches_are_not_the_night():
    """The night's caches (keys, pool keys, near-duplicate groups) know the belief rules and
    consolidate's column scans, not consolidate itself nor the read path."""
    broken = _breaking(NIGHTCACHE, (*LIFECYCLE, "memstore.recall"))
    assert not broken, _report("memstore.nightcache reaches no lifecycle nor read path", broken)


def test_the_library_knows_no_cli():
    broken = _breaking(("memstore",), ("memstore_cli", "cli", "typer", "rich"))
    assert not broken, _report("memstore imports neither the CLI nor typer nor rich", broken)


def test_the_store_drops_the_sidecars_by_the_names_they_are_written_under():
    """The store removes a snapshot's companions by the names the layout gives them, without
    knowing what they hold: they are the names the night's hook writes them under."""
    from memstore.nightcache import neargroups, poolkeys
    from memstore.store import idorder
    from memstore.store.snapshot import companions

    snapshot = Path("snapshots/state-000000000007.parquet")
    assert set(companions(snapshot)) == {idorder.path_of(snapshot), poolkeys.path_of(snapshot),
                                         neargroups.path_of(snapshot)}


# Cycles allowed, each with its reason. Empty: every cycle found was removed (on 0.12.16:
# memstore.store.open <-> memstore.store.snapshot, and memstore.embed -> memstore.static_embed
# <-> memstore.static_build, static_embed -> embed._finish). A cycle
# added here must be one through a package's ``__init__`` only (it re-exports a submodule
# that imports the package back for something the package defines first), never one
# between two modules that need each other.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}


def _graph() -> dict[str, dict[str, list[Import]]]:
    """Our modules (memstore's and the CLI's) -> those of ours each imports -> the imports
    that do. A package is its ``__init__`` only: importing a submodule is an edge to it
    alone, not to the packages above it (an ``__init__`` that re-exports its submodules
    would otherwise be in a cycle with each of them)."""
    graph: dict[str, dict[str, list[Import]]] = {m: {} for m in _modules()}
    for i in _all_imports():
        if i.importer in graph and i.target in graph and i.target != i.importer:
            graph[i.importer].setdefault(i.target, []).append(i)
    return graph


def _components(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(graph, component: list[str]) -> str:
    inside = set(component)
    lines = [" <-> ".join(component)]
    for m in component:
        for target, imports in sorted(graph[m].items()):
            if target in inside:
                lines += [f"    {i}" for i in imports if f"    {i}" not in lines]
    return "\n".join(lines)


def test_no_import_cycles():
    """No two of our modules import each other, directly or through others: the strongly
    connected components of the import graph (imports in functions, and under
    ``TYPE_CHECKING``, count) are single modules, but for ``ALLOWED_CYCLES``."""
    graph = _graph()
    cycles = [c for c in _components(graph) if frozenset(c) not in ALLOWED_CYCLES]
    assert not cycles, f"{len(cycles)} import cycle(s) among our modules:\n  " + \
        "\n  ".join(_describe(graph, c) for c in cycles)


def test_the_cycle_check_finds_a_cycle():
    """Tarjan's walk on a small graph: a cycle through a function-level import is found."""
    graph = {"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}, "e": {}}
    assert _components(graph) == [["a", "b", "c"]]
    assert _components({"a": {"b": []}, "b": {}}) == []
