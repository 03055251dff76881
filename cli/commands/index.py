from ..common import JsonOpt, NowOpt, env
from ..indexing import JobsOpt, job_count
from ..output import emit_json, note

HELP = """Catch the search indexes up with the log (for cron; reads do it too).

Applies the log events after each index's watermark: new memories are added to
the lexical (Tantivy) and vector (USearch) indexes, changed records are
replaced in the record/cue index. New texts are embedded in batches; the
embedding cache means no text is embedded twice. A large catch-up embeds on
--jobs worker processes (default: the machine's cores), one thread each, so the
vectors are the same whatever the number of workers."""

EPILOG = """\b
Examples:
  memstore index
  memstore index --jobs 4
  30 3 * * *  memstore --quiet index      # crontab: nightly, after consolidate"""


def run(now: NowOpt = None, json: JsonOpt = False, jobs: JobsOpt = None) -> None:
    from ..indexing import open_indexes

    n = job_count(jobs)
    e = env(now)
    ix = open_indexes(e, jobs=n)
    report = {"watermark": ix.watermark, "applied_events": ix.caught_up, "records": ix.records.count(),
              "vectors": len(ix.vectors), "embedder": ix.embedder.name}
    if json:
        emit_json(report)
    else:
        note(f"indexes at seq {ix.watermark} ({ix.caught_up} new events; {report['records']} records, "
             f"{report['vectors']} vectors, embedder {ix.embedder.name})")
