from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, read_json_lines
from ..indexing import JobsOpt, job_count
from ..output import emit_json, note

HELP = """Import a memstore export, or a chat export as conversation turns.

--format auto (the default): FILE is an event log (`memstore export --history`)
or a state export (`memstore export`); the kind is detected. Events and records
keep the times they were recorded at, never today's date. Importing is
idempotent: events already in this store (same content) and records whose id or
key is already here are skipped, so running it twice changes nothing. An event
log imported into an empty store reproduces the source's state exactly, its
consolidate marks included; into a store with events of its own the marks are
left out (they name the source's log positions), so the next consolidate here
compares the whole lookback window once.

--format chat: FILE is a chat export, JSON or JSONL, its shape detected: a list
of messages ({"role", "content", "timestamp"}; content may be a list of parts, of
which the text parts are kept), one message a line (a "session" or
"conversation_id" field groups them), a conversation {"messages": [...], "id"} or
a list of them, Claude.ai's conversations.json, or ChatGPT's conversations.json
(the branch ending at current_node, the one kept, is read; other branches are
counted and left). Each message is remembered as one turn: its speaker is the
actor (--user and --assistant rename those roles), an assistant's words have
source agent (confidence 0.7: they are not the user's facts), the user's
memory.default_source (human, 1.0), its conversation's id the
session (given, else "chat-" and a hash of its first message), its position the
turn (1, 2, ...; skipped messages keep their place), its time the event time
(ISO 8601, or epoch seconds, read as milliseconds from 1e11; else the previous
message's time, else the conversation's, else --now), and the key
chat:SESSION:TURN, so importing the same file again changes nothing.
Empty, system, tool, hidden and non-text messages are skipped and counted, and
so are greetings, as remember skips them (--keep stores them). A message over
memory.max_text_chars, or anything malformed, refuses the whole file naming the
place: nothing is imported. --json prints the counts: read, imported, present
(imported before), reinforced (the same text as an earlier memory), skipped, and
skipped by reason.

The search indexes are then brought up to date, as `memstore index` does: new
texts are embedded on --jobs worker processes (default: the machine's cores), so
a large import is searchable at once rather than on the first recall, which would
embed on one core. Should that fail, the import stands and a note says so; the
next read or `memstore index` catches up."""

EPILOG = """\b
Examples:
  memstore --store old export --history > events.jsonl
  memstore --store new import events.jsonl
  memstore --store laptop export | memstore --store server import -
  memstore import --format chat conversations.json --user alice --assistant claude"""


def run(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The export ('-' for stdin).")],
    format: Annotated[str, typer.Option("--format", help="auto (a memstore export: event log or state, "
                                        "detected) or chat (a chat export: conversation turns).")] = "auto",
    user: Annotated[str | None, typer.Option("--user", metavar="NAME", help="With --format chat: the actor "
                                             "for the user's messages. Default: user.")] = None,
    assistant: Annotated[str | None, typer.Option("--assistant", metavar="NAME", help="With --format chat: "
                                                  "the actor for the assistant's. Default: assistant.")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="With --format chat: store greetings and "
                                       "acknowledgements too.")] = False,
    allow_past: Annotated[bool, typer.Option("--allow-past", help="With --format chat: accept a --now earlier "
                                             "than the store's latest record.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
    jobs: JobsOpt = None,
) -> None:
    if format not in ("auto", "chat"):
        raise UsageError(f"--format {format!r} is not one of: auto, chat")
    n = job_count(jobs)
    if format == "chat":
        e, added = _chat(file, now, json, user=user, assistant=assistant, keep=keep, allow_past=allow_past)
        _catch_up(e, added, n)
        return
    given = [opt for opt, v in (("--user", user), ("--assistant", assistant), ("--keep", keep),
                                ("--allow-past", allow_past)) if v]
    if given:
        raise UsageError(f"{given[0]} applies to --format chat only; add --format chat or drop {given[0]}")
    e, added = _memstore_export(file, now, json)
    _catch_up(e, added, n)


def _catch_up(e, added: int, jobs: int) -> None:
    """Index what the import appended now, on ``jobs`` workers; the import stands if it fails."""
    if not added:
        return
    from memstore.errors import StoreError

    from ..indexing import open_indexes

    try:
        open_indexes(e, jobs=jobs)
    except StoreError as exc:
        note(f"memstore: imported, but the indexes were not brought up to date ({exc}); the next read "
             "or `memstore index` catches them up")


def _memstore_export(file: Path, now, json: bool):
    from memstore import writes
    from memstore.exchange import HISTORY

    try:
        name, lines = read_json_lines(file, "", "; nothing was imported")
    except UsageError as exc:
        raise UsageError(f"{exc}{_chat_hint(file)}") from None
    e = env(now)
    try:
        done = writes.import_rows(e.layout, [obj for _where, obj in lines], name=name, now=e.now,
                                  config=e.config, where=[where for where, _obj in lines])
    except UsageError as exc:
        raise UsageError(f"{exc}{_chat_hint(file)}") from None
    imported = len(done.events)
    summary = {"kind": done.kind, "read": done.read, "imported": imported,
               "skipped": done.read - imported - done.marks}
    if done.marks:
        summary["marks_left_out"] = done.marks
    if json:
        emit_json(summary)
    else:
        marks = f"; {done.marks} consolidate mark(s) left out: they name the source's log positions" \
            if done.marks else ""
        note(f"imported {imported} of {done.read} {'events' if done.kind == HISTORY else 'records'} "
             f"({summary['skipped']} already present{marks})")
    return e, imported


def _chat_hint(file: Path) -> str:
    """A file auto refuses that reads as a chat export: say so (it is likely what was meant)."""
    if str(file) == "-":  # stdin was read already
        return ""
    from memstore.chatimport import parse

    try:
        parse(file.read_bytes(), name=str(file), now="2000-01-01T00:00:00Z", max_chars=10**9)
    except (OSError, UsageError):
        return ""
    return " (it reads as a chat export: add --format chat)"


def _chat(file: Path, now, json: bool, *, user, assistant, keep: bool, allow_past: bool):
    from dataclasses import replace

    from memstore import writes
    from memstore.chatimport import SKIPS, parse
    from memstore.remember import validate

    names = {"--user": "user" if user is None else user,
             "--assistant": "assistant" if assistant is None else assistant}
    for option, value in names.items():
        if not value.strip():
            raise UsageError(f"{option} is empty; give the name to record those messages under")
    e = env(now)
    max_chars = e.config["memory"]["max_text_chars"]
    for option, value in names.items():  # a name is an actor: held to the same rules
        try:
            validate({"text": "x", "actor": [value]}, max_chars=max_chars, where=f"{option}: ")
        except UsageError as exc:
            raise UsageError(f"{exc}; nothing was imported") from None
    name, data = _read(file)
    found = parse(data, name=name, now=e.now, max_chars=max_chars, user=names["--user"].strip(),
                  assistant=names["--assistant"].strip(), keep=keep)
    drafts = found.drafts
    if e.agent is not None:  # as remember: an agent's word starts at the agent's veracity
        drafts = [d if d.source else replace(d, source="agent") for d in drafts]
    decisions = writes.remember(e.layout, drafts, now=e.now, config=e.config, allow_past=allow_past,
                                agent=e.agent) if drafts else []
    actions = {a: sum(d.action == a for d in decisions) for a in ("add", "reinforce", "noop", "skip")}
    skipped = {**found.skipped, "greetings": actions["skip"]}
    summary = {"kind": "chat", "conversations": found.conversations, "read": found.read,
               "imported": actions["add"], "reinforced": actions["reinforce"], "present": actions["noop"],
               "skipped": sum(skipped.values()), **skipped}
    if json:
        emit_json(summary)
        return e, sum(actions[a] for a in ("add", "reinforce"))
    labels = dict(zip((*SKIPS, "greetings"),
                      ("empty", "system/tool", "non-text", "on other branches", "greetings"), strict=True))
    why = [f"{n} {labels[k] if k != 'greetings' or n != 1 else 'greeting'}" for k, n in skipped.items() if n]
    more = [f"{actions['noop']} already present"] if actions["noop"] else []
    if actions["reinforce"]:
        more.append(f"{actions['reinforce']} repeated an earlier memory's text and reinforced it")
    if why:
        more.append(f"{summary['skipped']} skipped: {', '.join(why)}")
    note(f"imported {_count(actions['add'], 'message')} from {_count(found.conversations, 'conversation')}"
         + (f" ({'; '.join(more)})" if more else ""))
    return e, sum(actions[a] for a in ("add", "reinforce"))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _read(file: Path) -> tuple[str, bytes]:
    import sys

    name = "stdin" if str(file) == "-" else str(file)
    try:
        return name, sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}; nothing was imported") from None
