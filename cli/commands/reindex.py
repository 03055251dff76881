from ..common import JsonOpt, NowOpt, env
from ..indexing import JobsOpt, job_count
from ..output import emit_json, note

HELP = """Rebuild every search index from the log alone.

Deletes index/ content and builds it again; answers are the same as before.
Use it after changing the embedder in memstore.toml (it is also done
automatically when the vector manifest names another embedder). Texts not in the
embedding cache are embedded on --jobs worker processes (default: the machine's
cores), one thread each: the vectors are the same whatever the number."""

EPILOG = """\b
Examples:
  memstore reindex
  memstore reindex --jobs 1               # embed in this process only"""


def run(now: NowOpt = None, json: JsonOpt = False, jobs: JobsOpt = None) -> None:
    from ..indexing import open_indexes

    n = job_count(jobs)
    e = env(now)
    ix = open_indexes(e, rebuild=True, jobs=n)
    report = {"watermark": ix.watermark, "records": ix.records.count(), "vectors": len(ix.vectors),
              "embedder": ix.embedder.name}
    if json:
        emit_json(report)
    else:
        note(f"rebuilt indexes at seq {ix.watermark}: {report['records']} records, "
             f"{report['vectors']} vectors ({ix.embedder.name})")
