from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note

HELP = """Rebuild every search index from the log alone.

Deletes index/ content and builds it again; answers are the same as before.
Use it after changing the embedder in memstore.toml (it is also done
automatically when the vector manifest names another embedder)."""

EPILOG = """\b
Examples:
  memstore reindex"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from ..indexing import open_indexes

    e = env(now)
    ix = open_indexes(e, rebuild=True)
    report = {"watermark": ix.watermark, "records": ix.records.count(), "vectors": len(ix.vectors),
              "embedder": ix.embedder.name}
    if json:
        emit_json(report)
    else:
        note(f"rebuilt indexes at seq {ix.watermark}: {report['records']} records, "
             f"{report['vectors']} vectors ({ix.embedder.name})")
