from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, output_format
from ..output import emit_json, note, out, safe

HELP = """Apply learned policies to a new situation, with the evidence behind them.

Policies are distilled from outcomes (`memstore distill`): repeated negative
outcomes of a shared cause become 'mitigate' rules, repeated positive ones
'reinforce' rules; `memstore policy add` writes one directly. judge matches the situation against the active policies
and the cases it was learned from (lexically and semantically, optionally
narrowed by --domain/--subject) and
prints the ones that apply, ranked by match x confidence (then confidence), each
with the outcomes for it (+) and against it (-), or who wrote it. Exit status 3
means no policy applies."""

EPILOG = """\b
Examples:
  memstore judge "We want to deploy the checkout change on Friday afternoon"
  memstore judge "アクメ社から値引きの依頼" --domain sales --json
  memstore judge "ship the mobile build" --format preamble"""

NOTHING_APPLIES = 3


def run(
    situation: Annotated[str | None, typer.Argument(help="The situation; '-' reads stdin.")] = None,
    domain: Annotated[list[str] | None, typer.Option(help="Only policies of this domain (repeatable).")] = None,
    subject: Annotated[list[str] | None, typer.Option(help="Only policies on this subject (repeatable).")] = None,
    k: Annotated[int | None, typer.Option("--k", min=1, max=100, help="At most this many policies.")] = None,
    format: Annotated[str, typer.Option("--format", help="text, json or preamble.")] = "text",
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.judge import judge

    from ..indexing import open_indexes

    format = output_format(format, json)
    if situation is None or situation == "-":
        from ..common import read_stdin_text

        situation = read_stdin_text()
    situation = situation.strip()
    if not situation:
        raise UsageError("the situation is empty; describe what is about to be decided")
    from memstore.recall.request import check_query

    check_query(situation, "the situation")  # before the indexes are opened (and caught up)
    e = env(now)
    result = judge(open_indexes(e), situation, now=e.now, config=e.config, domains=domain, subjects=subject, k=k,
                   access=e.access)
    if format == "json":
        emit_json(result)
    elif format == "preamble":
        _preamble(result)
    else:
        render(result)
    if not result["applies"]:
        raise typer.Exit(NOTHING_APPLIES)


def render(result: dict) -> None:
    """The text form of a judgement (also what replay shows for a `judge --json` line)."""
    if not result["applies"]:
        note("no learned policy applies to this situation")
        return
    for i, p in enumerate(result["policies"], start=1):
        out(safe(f"{i}. [{p['direction']}] {p['rule']}"))
        out(f"   confidence {p['confidence']:.2f}, match {p['match']:.2f}, score {p['score']:.2f}")
        if p.get("author"):
            out(safe(f"   written by {p['author']}"))
        counts = p.get("counts") or {}
        if counts.get("supporting"):
            out(f"   evidence: {counts['supporting']} for, {counts['against']} against")
        for ev in p["evidence"]:
            out(safe(f"   + {ev['id']} {ev['occurred_at'][:10]} {ev['outcome'] or '-'}: {ev['text']}"))
        for ev in p.get("against", []):
            out(safe(f"   - {ev['id']} {ev['occurred_at'][:10]} {ev['outcome'] or '-'}: {ev['text']}"))


def _preamble(result: dict) -> None:
    from memstore.recall.preamble import judge_preamble

    text = judge_preamble(result)
    if text:
        out(text)
