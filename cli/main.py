"""The memstore command: global options, subcommand registry, error mapping.

Exit status: 0 success; 1 an error (or, for checking commands, a finding);
2 a usage error (a malformed option value or argument).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from memstore import __version__
from memstore.errors import MemstoreError

from . import common
from .commands import COMMANDS

app = typer.Typer(
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


@app.callback()
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


for _name, _module in COMMANDS:
    app.command(_name, help=_module.HELP, epilog=getattr(_module, "EPILOG", None),
                short_help=_module.HELP.split("\n", 1)[0])(_module.run)


_COMMAND = None


def invoke(argv: list[str]) -> int:
    """Run one memstore command line in this process (replay calls this per line)."""
    return main(argv)


def main(argv: list[str] | None = None) -> int:
    global _COMMAND
    if _COMMAND is None:  # building the click command tree is costly: once per process
        _COMMAND = typer.main.get_command(app)
    command = _COMMAND
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
