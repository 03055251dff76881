"""The subcommands: one module per command, imported only when its command is built.

Each module exposes HELP, EPILOG and either ``run()`` (a plain command) or ``app`` (a
``typer.Typer`` whose commands are the command's sub-commands, e.g. ``conflicts list`` and
``conflicts resolve``). A module may also expose ``render(result)``: the text form of its
``--json`` output, which ``replay`` uses to show checkpoints to a person.

The registry names modules instead of importing them: a single ``remember`` imports
only remember.py, and no module here imports the command tree (cli/app.py) that loads
them, so replay can build that tree without an import cycle.
"""

from __future__ import annotations

import importlib

# (command name, module name), in the order `memstore --help` lists them.
COMMANDS: list[tuple[str, str]] = [
    ("init", "init"),
    ("remember", "remember"),
    ("recall", "recall"),
    ("eval", "eval"),
    ("index", "index"),
    ("reindex", "reindex"),
    ("replay", "replay"),
    ("show", "show"),
    ("consolidate", "consolidate"),
    ("distill", "distill"),
    ("conflicts", "conflicts"),
    ("forget", "forget"),
    ("judge", "judge"),
    ("policy", "policy"),
    ("preamble", "preamble"),
    ("notes", "notes"),
    ("harmonize", "harmonize"),
    ("serve", "serve"),
    ("stats", "stats"),
    ("brief", "brief"),
    ("log", "log"),
    ("export", "export"),
    ("import", "import_"),
    ("snapshot", "snapshot"),
    ("verify", "verify"),
    ("fleet", "fleet"),
    ("config", "config"),
]

NAMES = frozenset(name for name, _module in COMMANDS)
_MODULES = dict(COMMANDS)


def load(name: str):
    """The module of command ``name`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{_MODULES[name]}")
