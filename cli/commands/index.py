from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note

HELP = """Catch the search indexes up with the log (for cron; reads do it too).

Applies the log events after each index's watermark: new memories are added to
the lexical (Tantivy) and vector (USearch) indexes, changed records are
replaced in the record/cue index. New texts are embedded in batches; the
embedding cache means no text is embedded twice."""

EPILOG = """\b
Examples:
  memstore index
  30 3 * * *  memstore --quiet index      # crontab: nightly, after consolidate"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from ..indexing import open_indexes

    e = env(now)
    ix = open_indexes(e)
    report = {"watermark": ix.watermark, "applied_events": ix.caught_up, "records": ix.records.count(),
              "vectors": len(ix.vectors), "embedder": ix.embedder.name}
    if json:
        emit_json(report)
    else:
        note(f"indexes at seq {ix.watermark} ({ix.caught_up} new events; {report['records']} records, "
             f"{report['vectors']} vectors, embedder {ix.embedder.name})")
