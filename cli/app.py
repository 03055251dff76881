"""The command tree: the root group, its global options, and every subcommand.

``tree()`` is the whole tree (--help, shell completion, man pages, replay);
``command_for(argv)`` is the root with only the subcommand argv names (a faster start:
building all of it costs time that a single ``remember`` does not need).

The global options (--store, --quiet) are real click options of the root group and,
hidden from --help, of every command below it, so they work before or after the
command name: ``memstore --store DIR recall q`` and ``memstore recall q --store DIR``.
Either way they end up in the click context's ``obj`` (common.Globals); a subcommand's
own value wins over the root's.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated

import typer

from memstore import __version__

from . import common
from .commands import COMMANDS, NAMES, load
from .output import error, out

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

STORE_HELP = "The store directory. Default: $XDG_DATA_HOME/memstore (~/.local/share/memstore)."
QUIET_HELP = ("Print nothing on success (for cron): no notes, and no ids from remember. A read still "
              "prints its answer, and --json its JSON.")


AGENT_HELP = ("The agent this command runs as (also $MEMSTORE_AGENT): stamped on what it writes; its "
              "role's grants limit what it reads (memstore(7), AGENTS). Default: none, the store's owner.")


def _version(value: bool) -> None:
    if value:
        out(f"memstore {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    store: Annotated[
        str | None,  # as typed: Path("") would read as "." and hide an empty --store=
        typer.Option("--store", envvar="MEMSTORE_DIR", show_envvar=True, metavar="DIR", help=STORE_HELP),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)] = False,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help=AGENT_HELP)] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    import click

    # $MEMSTORE_DIR is read by common.store_dir() itself: only a --store typed here overrides
    # what the caller passed in ctx.obj (replay passes its store to every script line).
    given = ctx.get_parameter_source("store") == click.core.ParameterSource.COMMANDLINE
    common.set_globals(ctx, store=store if given else None, quiet=quiet, agent=agent)


def make_app(names: list[str] | None = None) -> typer.Typer:
    """The Typer app with every command, or only the named ones."""
    application = typer.Typer(**_APP_SETTINGS)
    application.callback()(_root)
    for name, _module in COMMANDS:
        if names is not None and name not in names:
            continue
        module = load(name)
        kw = dict(help=module.HELP, epilog=getattr(module, "EPILOG", None),
                  short_help=" ".join(module.HELP.split("\n\n", 1)[0].split()))
        sub = getattr(module, "app", None)
        if sub is not None:  # a command with sub-commands of its own
            application.add_typer(sub, name=name, **kw)
        else:
            application.command(name, **kw)(module.run)
    return application


def build(names: list[str] | None = None):
    """The root click group of make_app(names), ready to run."""
    root = typer.main.get_command(make_app(names))
    order = [name for name, _module in COMMANDS]  # Typer puts groups last: keep the registry's order
    root.commands = dict(sorted(root.commands.items(), key=lambda item: order.index(item[0])))
    for command in _below(root):
        _plain_metavars(command)
        _add_global_options(command)
    _plain_metavars(root)
    return root


@cache
def tree():
    """The whole command tree, built once per process."""
    return build()


@cache
def _single(name: str):
    return build([name])


def command_for(argv: list[str]):
    """The root group for this argv: only the subcommand it names, or the whole tree."""
    name = subcommand(argv)
    return tree() if name is None else _single(name)


def invoke(root, argv: list[str] | None, *, obj: common.Globals | None = None) -> int:
    """Run one command line on ``root``; its exit status. A failure a user can cause (a
    MemstoreError, a click usage error) is one ``Error: ...`` line on stderr; anything
    else is a bug and propagates (with its traceback). ``obj``: the global options to
    start from (replay passes its store and --quiet to every script line)."""
    try:
        rc = root.main(args=argv, prog_name="memstore", standalone_mode=False, obj=obj)
    except Exception as exc:
        code = _failure(exc)
        if code is None:
            raise
        return code
    finally:
        _say_skipped(argv)
    return rc if isinstance(rc, int) else 0


def _say_skipped(argv: list[str] | None) -> None:
    """Damaged log lines the command's reads skipped: said once, on stderr, even with --quiet
    (an answer given without part of the log must not look like a whole one). verify lists
    them itself."""
    import sys

    log = sys.modules.get("memstore.store.log")  # not loaded: nothing was read (--help, --version)
    skipped = log.skipped_lines() if log is not None else []
    if not skipped or subcommand(argv or []) == "verify":
        return
    where = ", ".join(f"{p.path.parent.name}/{p.path.name}:{p.line}" for p in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    error(f"warning: skipped {len(skipped)} damaged log line(s) ({where}{more}); "
          "`memstore verify` names them")


def _failure(exc: Exception) -> int | None:
    from memstore.errors import MemstoreError

    if isinstance(exc, MemstoreError):
        error(f"Error: {exc}")
        return exc.exit_code
    if type(exc).__name__ == "NoArgsIsHelpError":  # plain `memstore`: the help, as click shows it
        error(exc.format_message())
        return exc.exit_code
    if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):  # click's, without importing click
        error(f"Error: {exc.format_message()}")
        return exc.exit_code
    if type(exc).__name__ == "Abort":
        error("Error: aborted")
        return 1
    return None


def subcommand(argv: list[str]) -> str | None:
    """The subcommand an argv names, skipping the global options before it."""
    args = iter(argv)
    for arg in args:
        if arg in ("--store", "--agent"):
            next(args, None)
        elif arg.startswith("-"):
            if arg in ("-h", "--help", "--version", "--install-completion", "--show-completion"):
                return None
        else:
            return arg if arg in NAMES else None
    return None


def paths(root=None) -> set[tuple[str, ...]]:
    """Every command path of the tree: ("recall",), ("conflicts",), ("conflicts", "resolve")."""
    found: set[tuple[str, ...]] = set()

    def walk(group, prefix):
        for name, command in getattr(group, "commands", {}).items():
            found.add((*prefix, name))
            walk(command, (*prefix, name))

    walk(tree() if root is None else root, ())
    return found


def _below(group):
    for command in getattr(group, "commands", {}).values():
        yield command
        yield from _below(command)


def _plain_metavars(command) -> None:
    """Show --kind KIND, not Typer's --kind <str>: name every value after its option."""
    for param in command.params:
        if param.metavar is None and not getattr(param, "is_flag", False):
            param.metavar = param.name.upper().rstrip("_")


def _store_given(ctx, _param, value) -> None:
    if value is not None:
        common.set_globals(ctx, store=value)


def _agent_given(ctx, _param, value) -> None:
    if value is not None:
        common.set_globals(ctx, agent=value)


def _quiet_given(ctx, _param, value) -> None:
    if value:
        common.set_globals(ctx, quiet=True)


def _add_global_options(command) -> None:
    """--store and --quiet after the command name too (hidden: --help lists them once, on
    the root; the man pages say they go before or after the command)."""
    import click

    taken = {opt for p in command.params for opt in getattr(p, "opts", ())}
    if taken & {"--store", "--quiet", "-q", "--agent"}:
        raise RuntimeError(f"memstore {command.name} defines its own --store, --quiet or --agent")
    command.params += [
        click.Option(["--store"], metavar="DIR", help=STORE_HELP, hidden=True, expose_value=False,
                     callback=_store_given),
        click.Option(["--quiet", "-q"], is_flag=True, help=QUIET_HELP, hidden=True, expose_value=False,
                     callback=_quiet_given),
        click.Option(["--agent"], metavar="NAME", help=AGENT_HELP, hidden=True, expose_value=False,
                     callback=_agent_given),
    ]
