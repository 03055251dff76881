import gc
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NamedTuple

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, quiet, read_stdin_text
from ..output import emit_jsonl, note, out

HELP = """Store a memory: text as an argument or on stdin.

The text is classified without a model (English and Japanese): decisions,
preferences, definitions, lasting facts (names and relations, birthdays, where
someone lives or works, health, hosts, ports, versions, settings, recurring
schedules), how-tos and scheduled plans become long-term memories;
disambiguations and everything else, such as what happened today, short-term
(14-day TTL); greetings are not stored (--keep stores them anyway). The kind
brings a prior for each salience axis: a person's preference has composite
salience 0.56, a decision 0.60, a plan 0.57, a procedure 0.58, a fact 0.52, a
definition and everything else 0.50. A rule
("never", "must", "Always ...", "Important: ...", 「絶対」, 「必ず」) or a risk
(an allergy, a security hole) raises importance (and risk, for a risk word) to
0.8, which protects a memory from decay and expiry. Options override the
classifier. The same text (with the same subject and domain) again reinforces
the existing memory instead of adding a copy; the same --key again is a no-op
that prints the same id.

--jsonl writes every line or none: one bad line refuses the file, naming each bad
line. A line whose text is empty or only white space (chat exports hold them) is not
an error: it is skipped and counted.

Prints the memory's id (one per input line with --jsonl; '-' for a skipped
greeting or empty message), or records with --json."""

EPILOG = """\b
Examples:
  memstore remember "We decided to move billing to Postgres" --subject billing-db --actor alice
  echo "コーヒーに砂糖は入れない" | memstore remember --domain personal
  memstore remember --jsonl notes.jsonl --now 2026-06-07T09:00:00Z"""


def _axis(name: str, what: str):
    return typer.Option(f"--{name}", metavar="0..1", help=f"Salience axis: {what}.")


def run(
    text: Annotated[str | None, typer.Argument(help="The memory's text; '-' or absent reads stdin.")] = None,
    kind: Annotated[str | None, typer.Option(help="note, meeting, decision, incident, deal, preference, "
                                             "definition, fact, plan, procedure or disambiguation (policies: "
                                             "memstore policy add).")] = None,
    subject: Annotated[str | None, typer.Option(help="Topic label; groups memories for consolidation.")] = None,
    domain: Annotated[str | None, typer.Option(help="Scope (e.g. eng, personal); recall can filter on it.")] = None,
    repo: Annotated[str | None, typer.Option("--repo", metavar="SLUG", help="Scope it to one repo: the domain "
                                             "becomes repo:SLUG/DOMAIN (never overwrites the workspace one).")] = None,
    actor: Annotated[list[str] | None, typer.Option(help="A person or agent involved (repeatable).")] = None,
    outcome: Annotated[str | None, typer.Option(help="positive, negative or pending.")] = None,
    occurred_at: Annotated[str | None, typer.Option(
        "--occurred-at", metavar="TIME", help="When it happened: 2020, 2020-06, 2020-W23 "
        "(a week), 2020-06-07 or a full time. Default: the time the text states, else --now.")] = None,
    importance: Annotated[str | None, _axis("importance", "how much it matters")] = None,
    urgency: Annotated[str | None, _axis("urgency", "how soon it matters (half-life 7 days)")] = None,
    risk: Annotated[str | None, _axis("risk", "cost of forgetting it")] = None,
    novelty: Annotated[str | None, _axis("novelty", "how new it is")] = None,
    emotion: Annotated[str | None, _axis("emotion", "emotional intensity")] = None,
    recurrence: Annotated[str | None, _axis("recurrence", "how often it comes up")] = None,
    actionability: Annotated[str | None, _axis("actionability", "whether it changes what to do")] = None,
    confidence: Annotated[str | None, typer.Option(metavar="0..1", help="Belief in it. Default: set by --source.")] = None,
    source: Annotated[str | None, typer.Option(help="human (1.0), agent (0.7), tool (0.5) or imported (0.6).")] = None,
    key: Annotated[str | None, typer.Option(help="Your idempotency key or external id; echoed in outputs.")] = None,
    session: Annotated[str | None, typer.Option(metavar="ID", help="The conversation (session or thread) it was "
                                                "said in; recall reads a turn with its neighbours.")] = None,
    turn: Annotated[str | None, typer.Option(metavar="N", help="Its position in that session (0, 1, 2, ...).")] = None,
    tier: Annotated[str | None, typer.Option(help="short or long; overrides the classifier.")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Store greetings and acknowledgements too.")] = False,
    jsonl: Annotated[Path | None, typer.Option("--jsonl", metavar="FILE",
                                               help="Bulk: one JSON object per line ('-' for stdin); all or nothing.")] = None,
    allow_past: Annotated[bool, typer.Option("--allow-past",
                                             help="Accept a --now earlier than the store's latest record.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.remember import validate

    e = env(now)
    max_chars = e.config["memory"]["max_text_chars"]
    if jsonl is not None:
        if text is not None:
            raise UsageError("give either TEXT or --jsonl FILE, not both")
        with _gc_paused():
            drafts = _read_bulk(jsonl, max_chars)
            _commit(e, drafts, allow_past, json)
        return
    if repo is not None:
        from memstore.access import check_slug, repo_domain

        domain = repo_domain(check_slug(repo), domain)
    if text is None or text == "-":
        text = read_stdin_text()
    fields = {
        "text": text, "kind": kind, "subject": subject, "domain": domain, "actors": actor or [],
        "outcome": outcome, "occurred_at": occurred_at, "importance": importance, "urgency": urgency,
        "risk": risk, "novelty": novelty, "emotion": emotion, "recurrence": recurrence,
        "actionability": actionability, "confidence": confidence, "source": source, "key": key,
        "tier": tier, "keep": keep, "session": session, "turn": turn,
    }
    drafts = [validate({k: v for k, v in fields.items() if v is not None}, max_chars=max_chars, options=True)]
    _commit(e, drafts, allow_past, json)


def _commit(e, drafts, allow_past: bool, json: bool) -> None:
    """Remember the drafts (all or nothing) and print the ids or records."""
    from dataclasses import replace

    from memstore import writes
    from memstore.model import memory_to_dict

    rows = drafts
    drafts = [d for d in rows if not isinstance(d, EmptyRow)]
    if e.agent is not None:  # an agent's word starts at the agent's veracity unless it says otherwise
        drafts = [d if d.source else replace(d, source="agent") for d in drafts]
    written = iter(writes.remember(e.layout, drafts, now=e.now, config=e.config, allow_past=allow_past,
                                   agent=e.agent))
    decisions = [_SKIPPED_EMPTY if isinstance(d, EmptyRow) else next(written) for d in rows]
    drafts = rows
    if json:
        emit_jsonl(_result(o, d.key, memory_to_dict) for o, d in zip(decisions, drafts, strict=True))
        return
    if quiet():  # --quiet prints nothing on success (cron mails only failures)
        return
    out("\n".join(o.id or "-" for o in decisions))
    if len(decisions) == 1:
        o = decisions[0]
        if o.action == "skip":
            note("not stored: looks like a greeting or acknowledgement (use --keep to store it)")
        elif o.action in ("reinforce", "noop"):
            note(f"{o.action}: {o.reason}")
    else:
        counts = {}
        for o in decisions:
            counts[o.action] = counts.get(o.action, 0) + 1
        empty = sum(o is _SKIPPED_EMPTY for o in decisions)
        note(", ".join(f"{n} {a}" for a, n in sorted(counts.items()))
             + (f" ({empty} empty message(s))" if empty else ""))


@contextmanager
def _gc_paused():
    """A bulk run builds ~10 acyclic objects per line: the cyclic collector would only
    re-scan them (much of the run time). Restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Skipped(NamedTuple):
    """What an empty row is answered with (shaped as memstore.remember.WriteDecision)."""

    action: str = "skip"
    id: None = None
    memory: None = None
    reason: str = "empty message"


_SKIPPED_EMPTY = _Skipped()


def _result(o, key, to_dict) -> dict:
    result = {"action": o.action, "id": o.id, "key": key}
    if o.action == "add":
        record = to_dict(o.memory)
        del record["seq"]
        result["memory"] = record
    return result


def _read_bulk(path: Path, max_chars: int):
    import sys

    from memstore.codec import JSONDecodeError, loads
    from memstore.remember import validate

    name = "stdin" if str(path) == "-" else str(path)
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read --jsonl {name}: {exc.strerror}") from None
    drafts, errors = [], []
    empty = 0
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{n}: "
        try:
            line.decode("utf-8")
            obj = loads(line)
            if _empty_message(obj):  # chat exports hold them: skipped and counted, never fatal
                validate({**obj, "text": "-"}, max_chars=max_chars, where=where)  # its other fields still count
                drafts.append(EmptyRow(obj.get("key")))
                empty += 1
                continue
            drafts.append(validate(obj, max_chars=max_chars, where=where))
        except UnicodeDecodeError:
            errors.append(f"{where}not valid UTF-8")
        except JSONDecodeError:
            errors.append(f"{where}not valid JSON")
        except UsageError as exc:
            errors.append(str(exc))
    if errors:
        more = f" ({len(errors) - 1} more line(s) with errors below)" if len(errors) > 1 else ""
        rest = "".join(f"\n  {extra}" for extra in errors[1:20])
        raise UsageError(f"{errors[0]}; nothing was written{more}{rest}")
    if len(drafts) == empty:
        skipped = f" ({empty} empty message(s) skipped)" if empty else ""
        raise UsageError(f"--jsonl {name} holds no memories{skipped}; nothing was written")
    return drafts


class EmptyRow(NamedTuple):
    """A bulk row whose text is empty or white space: answered as skipped, written nowhere."""

    key: str | None


def _empty_message(obj) -> bool:
    """A row that is a message with nothing in it (every other field is checked as usual)."""
    return isinstance(obj, dict) and isinstance(obj.get("text"), str) and not obj["text"].strip()
