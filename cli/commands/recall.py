from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env, output_format
from ..output import emit_json, emit_jsonl, is_tty, note, out, safe

HELP = """Find the memories that answer a question, best first.

Four voices rank candidates: lexical (Tantivy BM25, English stemming and CJK
bigrams, function words dropped), semantic (USearch over embeddings), temporal
(the query's time window, else the newest) and graph (two hops from the best
matches along shared subject, provenance, supersession, and actor on the same
day). They are fused with weighted reciprocal rank fusion (weights follow the
query's intent; a lexical hit counts by the share of the query's terms it
holds), scaled by effective salience at --now, and diversified with MMR. Cue
options filter exactly: values of one option are OR-ed, different options
AND-ed. Superseded and forgotten memories are hidden unless --as-of asks what
was believed at a past time; expired and faded ones are ranked lower but stay
findable. Indexes catch up with the log first. Unless --no-touch, the returned
memories' recall counts go up.

A query is at most 10,000 characters (longer is refused: a cut query would
answer another question); the semantic voice reads its first 512 tokens."""

EPILOG = """\b
Examples:
  memstore recall "what database did we pick for billing?"
  memstore recall "障害" --during 先週 --actor daiki
  memstore recall "coffee" --json --k 3
  memstore recall "prepare the release checklist for v2.5" --format preamble
  memstore recall --batch questions.jsonl > answers.jsonl"""


def run(
    query: Annotated[str | None, typer.Argument(help="The question; '-' reads stdin.")] = None,
    k: Annotated[int | None, typer.Option("--k", min=1, max=1000,
                                          help="How many results. Default: recall.k (10).")] = None,
    actor: Annotated[list[str] | None, typer.Option(help="Only memories involving this actor (repeatable).")] = None,
    kind: Annotated[list[str] | None, typer.Option(help="Only this kind (repeatable).")] = None,
    outcome: Annotated[list[str] | None, typer.Option(help="Only this outcome (repeatable).")] = None,
    domain: Annotated[list[str] | None, typer.Option(help="Only this domain, exactly (repeatable).")] = None,
    subject: Annotated[list[str] | None, typer.Option(help="Only this subject (repeatable).")] = None,
    during: Annotated[list[str] | None, typer.Option(
        metavar="WHEN", help="Only this time: 2026-06, 2026-W23, 2026-06-07, 'last week', 先週 (repeatable).")] = None,
    level: Annotated[list[str] | None, typer.Option(help="Only this ladder level (repeatable).")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="TIME",
                                              help="Recall what was believed at TIME (includes since-superseded memories).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show per-voice ranks, salience and demotions.")] = False,
    format: Annotated[str, typer.Option("--format", help="text, json or preamble (for an agent's prompt).")] = "text",
    voice: Annotated[list[str] | None, typer.Option(help="Use only these voices (for evaluation).")] = None,
    batch: Annotated[Path | None, typer.Option("--batch", metavar="FILE",
                                               help="Many questions: one JSON object per line ('-' for stdin).")] = None,
    no_touch: Annotated[bool, typer.Option("--no-touch", help="Do not record this recall as usage.")] = False,
    repo: Annotated[str | None, typer.Option("--repo", metavar="SLUG",
                                             help="Rank this repo's memories (domain repo:SLUG/...) first; "
                                                  "nothing is excluded.")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from dataclasses import replace

    from memstore.recall.engine import recall
    from memstore.recall.request import build_request

    from ..indexing import open_indexes

    format = output_format(format, json)
    if repo is not None:
        from memstore.access import check_slug

        check_slug(repo)
    e = env(now)
    if batch is not None:
        if query is not None:
            raise UsageError("give either QUERY or --batch FILE, not both")
        requests = read_requests(batch, e.now, e.config["recall"]["k"])
        ix = open_indexes(e)
        emit_jsonl(recall(replace(req, access=e.access, repo=req.repo or repo), ix, now=req_now, config=e.config)
                   for req_now, req, _obj in requests)
        return
    if query is None or query == "-":
        from ..common import read_stdin_text

        query = read_stdin_text()
    obj = {"query": query, "k": k or e.config["recall"]["k"], "actor": actor, "kind": kind, "outcome": outcome, "domain": domain,
           "subject": subject, "during": during, "level": level, "as_of": as_of, "explain": explain,
           "voices": voice, "repo": repo}
    req = build_request({n: v for n, v in obj.items() if v not in (None, [])}, e.now)
    req = replace(req, access=e.access)
    ix = open_indexes(e)
    result = recall(req, ix, now=e.now, config=e.config)
    if not no_touch and result["results"]:
        _touch(e, [r["id"] for r in result["results"]], req.query)
    if format == "json":
        emit_json(result)
    elif format == "preamble":
        from memstore.access import readable
        from memstore.recall.preamble import active_policies, preamble

        text = preamble(result, [p for p in active_policies(ix, e.now) if readable(e.access, p)], e.config)
        if text:
            out(text)
    else:
        render(result, explain)


def _touch(e, ids: list[str], query: str) -> None:
    from memstore import writes
    from memstore.errors import NonMonotonicTime, StoreBusy

    try:  # usage is best effort: a reader never waits long on a writer
        writes.record_usage(e.layout, ids, query, now=e.now, lock_wait=1.0, agent=e.agent)
    except NonMonotonicTime:
        note("usage not recorded: --now is before the store's latest record")
    except StoreBusy:
        note("usage not recorded: another writer held the store lock for over a second")


def read_requests(path: Path, now: str, default_k: int):
    """[(now, Request, raw object)] from a JSONL file; every line checked before any runs."""
    from memstore.recall.request import build_request
    from memstore.timeutil import format_ts, parse_instant

    from ..common import read_json_lines

    _name, rows = read_json_lines(path, ' with a "query"')
    requests = []
    for where, obj in rows:
        req_now = format_ts(parse_instant(obj["now"], f"{where}now")) if obj.get("now") else now
        requests.append((req_now, build_request(obj, req_now, where=where, default_k=default_k), obj))
    return requests


def render(result: dict, explain: bool | None = None) -> None:
    """The text form of a recall result (also what replay shows for a `recall --json` line);
    explain: show the per-voice lines (default: when the results carry them)."""
    rows = result["results"]
    if explain is None:
        explain = any("explain" in r for r in rows)
    if not rows:
        note("no memories match")
        return
    if is_tty():
        from rich.table import Table
        from rich.text import Text

        from ..output import console

        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("#", "score", "id", "kind", "when", "text"):
            table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
        for i, r in enumerate(rows, start=1):
            # Text(): a stored "[link=...]" or "[bold]" stays text, not rich markup
            table.add_row(str(i), f"{r['score']:.2f}", *(Text(safe(v)) for v in (
                r["id"], r["kind"], r["occurred_at"][:10], r["text"])))
        console().print(table)
    else:
        for i, r in enumerate(rows, start=1):
            out(safe(f"{i:>2}  {r['score']:7.2f}  {r['id']}  {r['kind']:<10} {r['occurred_at'][:10]}  {r['text']}"))
    if explain:
        for r in rows:
            ex = r["explain"]
            ranks = " ".join(f"{v}={n}" for v, n in ex["ranks"].items())
            if "coverage" in ex:  # the share of the query's terms a lexical hit holds
                ranks += f" coverage={ex['coverage']}"
            out(safe(f"    {r['id']}: {ranks}; rrf={ex['rrf']} salience={ex['salience']} decay={ex['decay']}"
                     + (f"; demoted: {ex['demoted']}" if ex["demoted"] else "")
                     + (f"; ranks in place of {ex['lifted_by']}" if "lifted_by" in ex else "")))
    s = result["stats"]
    note(f"{len(rows)} result(s); intent {s['intent']}; examined {s['examined']} of {s['full_scan']}")
