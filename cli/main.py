"""The memstore command: global options, subcommand registry, error mapping.

Exit status: 0 success; 1 an error (or, for checking commands, a finding);
2 a usage error (a malformed option value or argument).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from memstore import __version__
from memstore.errors import MemstoreError

from . import common
from .commands import COMMANDS

_APP_SETTINGS = dict(
    name="memstore",
    help="Long-term memory for AI agents, kept in one directory of plain files.\n\n"
    "Remember cheaply, recall with hybrid search, and let consolidation, decay and "
    "distillation manage the value of memories over time. Every command takes --now, "
    "so a year of memory replays deterministically.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"memstore {__version__}")
        raise typer.Exit()


def _root(
    store: Annotated[
        Path | None,
        typer.Option("--store", envvar="MEMSTORE_DIR", show_envvar=True, metavar="DIR",
                     help="The store directory. Default: $XDG_DATA_HOME/memstore (~/.local/share/memstore)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success (for cron).")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    common.set_globals(store, quiet)


def make_app(names: list[str] | None = None) -> typer.Typer:
    """The Typer app with every command, or only the named ones (a faster start)."""
    application = typer.Typer(**_APP_SETTINGS)
    application.callback()(_root)
    for name, module in COMMANDS:
        if names is None or name in names:
            application.command(name, help=module.HELP, epilog=getattr(module, "EPILOG", None),
                                short_help=" ".join(module.HELP.split("\n\n", 1)[0].split()))(module.run)
    return application


app = make_app()  # the whole tree: --help, shell completion, man page generation
_NAMES = {name for name, _module in COMMANDS}
_BUILT: dict[str | None, object] = {}


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand an argv names, skipping the global options before it."""
    args = iter(argv)
    for arg in args:
        if arg == "--store":
            next(args, None)
        elif arg.startswith("-"):
            if arg in ("-h", "--help", "--version", "--install-completion", "--show-completion"):
                return None
        else:
            return arg if arg in _NAMES else None
    return None


def _command(argv: list[str]):
    """The click command for this argv, built once per process and subcommand: building
    the whole tree costs ~20 ms that a single `remember` does not need."""
    name = _subcommand(argv)
    if name not in _BUILT:
        source = app if name is None else make_app([name])
        _BUILT[name] = _plain_metavars(typer.main.get_command(source))
    return _BUILT[name]


def invoke(argv: list[str]) -> int:
    """Run one memstore command line in this process (replay calls this per line)."""
    return main(argv)


def main(argv: list[str] | None = None) -> int:
    # private data: whatever gets created, by memstore or by a library it calls (Tantivy and
    # USearch create their files 0644), is 0600 / 0700. Restored for in-process callers.
    umask = os.umask(0o077)
    try:
        return _main(argv)
    finally:
        os.umask(umask)


def _plain_metavars(root):
    """Show --kind KIND, not Typer's --kind <str>: name every value after its option."""
    for command in [root, *getattr(root, "commands", {}).values()]:
        for param in command.params:
            if param.metavar is None and not getattr(param, "is_flag", False):
                param.metavar = param.name.upper().rstrip("_")
    return root


def _main(argv: list[str] | None) -> int:
    command = _command(sys.argv[1:] if argv is None else argv)
    try:
        rc = command.main(args=argv, prog_name="memstore", standalone_mode=False)
    except MemstoreError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("Error: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # click's own usage errors and exits, without importing click
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            sys.stderr.write(f"Error: {exc.format_message()}\n")
            return exc.exit_code
        if type(exc).__name__ == "Abort":
            sys.stderr.write("Error: aborted\n")
            return 1
        raise
    return rc if isinstance(rc, int) else 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
