"""The composition root: resolves --store, --now and the config once per command."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from memstore.config import load_config
from memstore.errors import StoreError, UsageError
from memstore.store.layout import Layout, show_path
from memstore.timeutil import format_ts, parse_instant

NowOpt = Annotated[
    str | None,
    typer.Option("--now", envvar="MEMSTORE_NOW", show_envvar=True, metavar="TIME",
                 help="The time this command runs at (ISO 8601; no zone means UTC). Default: the clock."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print canonical JSON instead of text.")]


@dataclass(frozen=True)
class Globals:
    """The options every command takes, before or after its name (--store, --quiet).

    They travel with the click context of one command line (``ctx.obj``, which click
    hands down to the subcommand's context): a nested command line, such as a replayed
    script line, passes its own as ``obj=`` and cannot leak them into its caller's.
    """

    store: Path | None = None
    quiet: bool = False
    agent: str | None = None  # --agent; $MEMSTORE_AGENT is read by common.agent()


def current_globals() -> Globals:
    """The global options of the command line being run (defaults outside of one)."""
    import click  # loaded with typer already

    ctx = click.get_current_context(silent=True)
    obj = ctx.obj if ctx is not None else None
    return obj if isinstance(obj, Globals) else Globals()


def set_globals(ctx, *, store: str | Path | None = None, quiet: bool = False, agent: str | None = None) -> None:
    """Record --store/--quiet/--agent given to ctx's command on top of what its caller passed.
    ``store`` is best the string as typed: Path("") reads as "." and would hide an empty value."""
    if isinstance(store, str) and not store:
        raise UsageError("--store is empty; give the store directory (--store . for the current one)")
    if agent is not None:
        from memstore.access import check_agent

        check_agent(agent)
    base = ctx.obj if isinstance(ctx.obj, Globals) else Globals()
    ctx.obj = Globals(Path(store) if store is not None else base.store, bool(quiet) or base.quiet,
                      agent if agent is not None else base.agent)


def agent() -> str | None:
    """The agent this command runs as: --agent, else $MEMSTORE_AGENT, else none (the owner)."""
    given = current_globals().agent
    if given is not None:
        return given
    env = os.environ.get("MEMSTORE_AGENT")
    if env is None or env == "":
        return None
    from memstore.access import check_agent

    return check_agent(env, "MEMSTORE_AGENT")


def quiet() -> bool:
    return current_globals().quiet


def default_store_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "memstore"


def store_dir() -> Path:
    store = current_globals().store
    if store is not None:
        return store
    env = os.environ.get("MEMSTORE_DIR")
    if env == "":  # set but empty: a store in the current directory was surely not meant
        raise UsageError("MEMSTORE_DIR is set but empty; unset it or set it to the store directory")
    return Path(env) if env is not None else default_store_dir()


def resolve_now(value: str | None) -> str:
    """The command's time: --now / MEMSTORE_NOW, else the clock, read here and only here."""
    if value is None:
        return format_ts(datetime.now(UTC))
    return format_ts(parse_instant(value, "--now"))


@dataclass(frozen=True)
class Env:
    layout: Layout
    now: str
    config: object
    agent: str | None = None

    @property
    def access(self):
        """The agent's grants (memstore.access); None for the owner."""
        from memstore.access import access_for

        return access_for(self.config, self.agent)


def env(now: str | None) -> Env:
    layout = Layout(store_dir())
    layout.check_readable()
    if not layout.root_exists() and needs_store(command_path()):
        raise StoreError(f"no such store: {show_path(layout.root)} "
                         "(remember something first, or check --store / $MEMSTORE_DIR)")
    return Env(layout, resolve_now(now), load_config(layout.read_config_text()), agent())


def needs_store(path: tuple[str, ...]) -> bool:
    """Whether a command only makes sense on a store that exists: the reads (replay's
    checkpoints). On a typo'd --store they fail instead of creating the directory.
    (`index` may build a new store's empty indexes up front, as a replay script does.)"""
    from memstore.script import READ_COMMANDS  # only on a missing store: keeps shlex off start-up

    return path in READ_COMMANDS


def command_path() -> tuple[str, ...]:
    """The command path being run, e.g. ("conflicts", "list"); () outside of one."""
    import click  # loaded with typer already

    ctx = click.get_current_context(silent=True)
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:  # the root's name is the program's
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return tuple(names)


def output_format(format: str, json: bool) -> str:
    """The --format value (text, json or preamble), with --json as a shorthand for json."""
    if format not in ("text", "json", "preamble"):
        raise UsageError(f"--format {format!r} is not one of: text, json, preamble")
    return "json" if json else format


def read_stdin_text() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no text given; pass it as an argument or pipe it on stdin")
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"stdin is not valid UTF-8 (byte {exc.start}); convert it, e.g. with iconv") from None


def read_json_lines(path, what: str, suffix: str = ""):
    """[(where, object)] from a JSONL file or '-' (stdin); the first malformed line is an error
    naming the file and line. ``where`` is "FILE:LINE: " for messages about the object."""
    from memstore.codec import JSONDecodeError, loads

    name = "stdin" if str(path) == "-" else str(path)
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
    rows = []
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{n}: "
        try:
            obj = loads(line)
        except JSONDecodeError:
            raise UsageError(f"{where}not valid JSON{suffix}") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{where}expected a JSON object{what}{suffix}")
        rows.append((where, obj))
    return name, rows
