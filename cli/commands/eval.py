from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, out

HELP = """Measure recall quality on labelled questions: recall@k, hit@k and MRR.

FILE has one JSON object per line: the recall fields ({"query", "now", "k",
cues...}) plus "keys", the caller keys (or ids) of the memories that should be
found. Results are retrieved at k = 20 and scored at k = 1, 5, 10 and 20, overall
and per "category" if lines carry one. Nothing is recorded as usage."""

EPILOG = """\b
Examples:
  memstore eval tests/data/relevance/queries.jsonl
  memstore eval questions.jsonl --voice lexical --json"""


def run(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Labelled questions (JSONL; '-' for stdin).")],
    voice: Annotated[list[str] | None, typer.Option(help="Use only these voices (ablation).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from dataclasses import replace

    from memstore.recall.engine import recall
    from memstore.recall.evaluate import KS, score_one, summarise
    from memstore.recall.request import VOICES

    from ..indexing import open_indexes
    from .recall import read_requests

    for v in voice or ():
        if v not in VOICES:
            raise UsageError(f"--voice {v!r} is not one of: {', '.join(VOICES)}")
    e = env(now)
    requests = read_requests(file, e.now, 20)
    ix = open_indexes(e)
    rows: dict[str, list[dict]] = {}
    for req_now, req, obj in requests:
        expected = obj.get("keys") or []
        if not isinstance(expected, list) or not expected:
            raise UsageError(f"{file}: question {req.query[:40]!r} has no \"keys\" to score against")
        req = replace(req, k=max(KS), voices=tuple(voice) if voice else req.voices)
        result = recall(req, ix, now=req_now, config=e.config)
        ranked = [r["key"] if r["key"] in expected else r["id"] for r in result["results"]]
        row = score_one(ranked, expected)
        rows.setdefault("all", []).append(row)
        if obj.get("category"):
            rows.setdefault(obj["category"], []).append(row)
    report = {name: summarise(r) for name, r in sorted(rows.items(), key=lambda kv: (kv[0] != "all", kv[0]))}
    if json:
        emit_json(report)
        return
    cols = ["questions", "mrr"] + [f"recall@{k}" for k in KS] + [f"hit@{k}" for k in KS]
    out("category      " + " ".join(f"{c:>9}" for c in cols))
    for name, summary in report.items():
        out(f"{name:<13} " + " ".join(f"{summary[c]:>9}" if c == "questions" else f"{summary[c]:>9.3f}"
                                      for c in cols))
