from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out

HELP = """Check the store: log, snapshots, indexes and file permissions.

The log: every line parses, seqs rise by one across all partitions (no gap, no
duplicate), every op is known and folds, no torn final line. Snapshots: row
count and checksum against their metadata and against the log folded to the
seq they claim. Indexes: manifest format and embedder, watermarks (ahead of the
log head is a finding; behind is only a note, since every read catches up) and
document counts. Files: directories 0700, files 0600, no temporary file left
by an interrupted write.

Prints each finding as `path:line: message` (line 0 when it is about a whole
file), or JSON with --json. --repair moves a torn final line into
log/quarantine/ (the bytes are kept), deletes bad snapshots and leftover
temporary files, rebuilds stale or damaged indexes from the log and sets the
modes; it never edits a complete log line. Exit status: 0 clean, 1 findings
(with --repair: findings that remain after repairing)."""

EPILOG = """\b
Examples:
  memstore verify
  memstore verify --repair && echo ok
  memstore verify --json | jq '.findings[].message'"""


def run(
    repair: Annotated[bool, typer.Option("--repair", help="Fix what is safe to fix (never a complete log line).")] = False,
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
