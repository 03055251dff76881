from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out

HELP = """Check the store: log, snapshots, indexes and file permissions.

The log: every line is a well-formed event (the shapes and ranges memstore
writes; readers skip any other line and say so), seqs rise by one across all
partitions, every op is known and folds, remembered ids match their text, no
record time after --now, no torn or damaged final line. Snapshots: bound to
this log (the line at their seq), row count and checksum, and the rows against
the log folded to that seq. Indexes: manifest format, embedder and the log line
at the watermark (ahead of the log head is a finding; behind is only a note,
since every read catches up), Tantivy's file checksums, the records against the
log, the seqs each index holds, sampled texts and vector norms. Files: only
memstore's own paths; directories 0700, files 0600, no temporary file left by an
interrupted write.

Prints each finding as `path:line: message` (line 0 when it is about a whole
file), or JSON with --json. --repair moves a torn final line, or a damaged run
of lines that ends the log, into log/quarantine/ (the bytes are kept), deletes
bad snapshots and leftover temporary files, rebuilds stale or damaged indexes
from the log and sets the modes; it never edits any other log line. Exit status:
0 clean, 1 findings (with --repair: findings that remain after repairing)."""

EPILOG = """\b
Examples:
  memstore verify
  memstore verify --repair && echo ok
  memstore verify --json | jq '.findings[].message'"""


def run(
    repair: Annotated[bool, typer.Option("--repair", help="Fix what is safe to fix (never a log line readers use).")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.errors import StoreError
    from memstore.verify import fix_modes, verify
    from memstore.verify import repair as repair_store

    e = env(now)
    if not e.layout.root.exists():
        raise StoreError(f"no store at {e.layout.root}; create one with `memstore init` or a first remember")
    report = verify(e.layout, e.config, now=e.now)
    done: dict = {}
    after = report
    if repair and report.findings:
        done.update(repair_store(e.layout, report))
        if report.needs_rebuild():
            from ..indexing import open_indexes

            open_indexes(e, rebuild=True)
            for f in report.findings:
                if f.fix == "rebuild":
                    done[f] = "rebuilt the indexes from the log"
        done.update(fix_modes(e.layout, report))
        after = verify(e.layout, e.config, now=e.now)
    before = {(f.path, f.line, f.message) for f in report.findings}
    new = [f for f in after.findings if (f.path, f.line, f.message) not in before] if after is not report else []
    if json:
        emit_json({
            "store": str(e.layout.root), "clean": after.clean, "head": after.head, "events": after.events,
            "log_files": after.log_files, "snapshots": after.snapshots, "repair": repair,
            "findings": [{**f.to_dict(), "repaired": done.get(f)} for f in report.findings + new],
            "remaining": len(after.findings),
            "notes": [f.to_dict() for f in after.notes],
        })
    else:
        for f in report.findings + new:
            out(f.render() + (f" [repaired: {done[f]}]" if f in done else ""))
        for n in after.notes:
            note(f"note: {n.render()}")
        if after.clean and not report.findings:
            note(f"verify: {e.layout.root} is clean ({after.events} events to seq {after.head}, "
                 f"{after.log_files} log file(s), {after.snapshots} snapshot(s))")
        elif after.clean:
            note(f"verify: {len(report.findings)} finding(s), all repaired; {e.layout.root} is now clean")
        else:
            fixable = "" if repair else "; `memstore verify --repair` fixes what is safe to fix"
            note(f"verify: {len(after.findings)} finding(s) in {e.layout.root}{fixable}")
    if not after.clean:
        raise typer.Exit(1)
