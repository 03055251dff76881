from pathlib import Path
from typing import Annotated

import typer

from ..common import JsonOpt, NowOpt

HELP = """Run one maintenance stage over every store under a directory, in parallel.

STAGE is consolidate, distill, index, snapshot, brief or verify: what `memstore
STAGE` does to one store. A store is a directory holding log/ (with a log
partition, or memstore.toml beside it); fleet never looks inside a store for more
and follows no symbolic link. Each store runs in a worker process (--jobs, default
the machine's cores) or, with --address, on a Dask distributed cluster (pip install
'memstore[fleet]'; every worker needs memstore and must see the stores at the same
paths). Every store runs at the same --now, read once. Each store's run is that
stage's own write: a store whose run fails is left as it was, and the others go on.

Prints one line per store in path order (its path, ok or failed, seconds, what it
did or the error), then a count on stderr. --json prints the report instead;
--report FILE writes it too: per store its path, stage, status, seconds, error
and the stage's result. --retry REPORT runs the stage again only on the stores
that failed in REPORT. Exit status: 0 every store succeeded, 1 any store failed
(for verify: has findings), 2 a usage error. The global --store and --agent do not
apply (fleet runs as each store's owner)."""

EPILOG = """\b
Examples:
  memstore fleet consolidate --root /srv/memstores --report /tmp/night.json
  memstore fleet consolidate --root /srv/memstores --retry /tmp/night.json
  memstore fleet index --root /srv/memstores --address tcp://10.0.0.5:8786
  0 3 * * *  memstore --quiet fleet consolidate --root /srv/memstores   # crontab"""


def run(
    stage: Annotated[str, typer.Argument(metavar="STAGE",
                                         help="consolidate, distill, index, snapshot, brief or verify.")],
    root: Annotated[str, typer.Option("--root", metavar="DIR", help="The directory holding the stores.")],
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, metavar="N",
                                             help="Worker processes on this machine. Default: its cores.")] = None,
    address: Annotated[str | None, typer.Option(
        "--address", metavar="ADDR", help="Run on the Dask scheduler at ADDR (e.g. tcp://HOST:8786).")] = None,
    retry: Annotated[Path | None, typer.Option(
        "--retry", metavar="REPORT", help="Only the stores that failed in REPORT (a --report file).")] = None,
    report: Annotated[Path | None, typer.Option("--report", metavar="FILE",
                                                help="Also write the JSON report to FILE.")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    import os

    from memstore.errors import UsageError
    from memstore.fleet import STAGES, find_stores
    from memstore.fleet.report import failed_paths, make_report
    from memstore.store.layout import show_path

    from ..common import current_globals, quiet, resolve_now
    from ..indexing import cache_dir
    from ..output import emit_json, note

    if stage not in STAGES:
        raise UsageError(f"fleet stage {stage!r} is not one of: {', '.join(STAGES)}")
    given = current_globals()
    if given.store is not None or given.agent is not None:
        raise UsageError("fleet takes --root DIR, and runs as each store's owner: drop --store/--agent")
    if address is not None and jobs is not None:
        raise UsageError("--jobs is for the local pool; with --address the cluster's workers run the stores")
    if not root:
        raise UsageError("--root is empty; give the directory holding the stores")
    base = Path(root)
    if not base.is_dir():
        raise UsageError(f"--root {show_path(root)} is not a directory; give the directory holding the stores")
    if report is not None and not report.parent.is_dir():
        raise UsageError(f"--report {show_path(report)}: no directory {show_path(report.parent)}; "
                         "choose a path in an existing directory")
    if address is not None:
        from memstore.fleet.engines import check_address

        check_address(address)
    at = resolve_now(now)  # read once: every store runs at the same time
    if retry is not None:  # only those: no walk of the whole root (one no longer a store says so when run)
        names = failed_paths(retry, stage)
    else:
        names, unreadable = find_stores(base)
        for name in unreadable:
            note(f"fleet: cannot list {show_path(base / name)}; skipped")
    stores = [(_shown(name), os.path.normpath(os.path.abspath(base / name))) for name in names]
    cache = str(cache_dir())
    if address is not None:
        from memstore.fleet.engines import run_dask

        entries, engine = run_dask(stores, stage, at, cache, address), f"dask {address}"
    else:
        from memstore.fleet.engines import run_local

        workers = jobs or os.cpu_count() or 1
        entries, engine = run_local(stores, stage, at, cache, workers), f"local {workers} jobs"
    done = make_report(stage, os.path.abspath(base), at, engine, entries)
    if report is not None:
        _write_report(report, done)
    if json:
        emit_json(done)
    else:
        _print(done, quiet())
    if not stores:
        note(f"fleet {stage}: " + ("no failed store in the report; nothing to retry" if retry is not None
                                   else f"no store under {show_path(base)}"))
    if done["failed"]:
        raise typer.Exit(1)


def _shown(name: str) -> str:
    """A store's name for the report: as it is, unless it is not UTF-8 (JSON cannot hold it;
    such a store fails anyway, since memstore needs a UTF-8 path), then with \\xNN escapes."""
    import os

    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def _print(done: dict, quiet: bool) -> None:
    from memstore.fleet.runner import summary

    from ..output import note, out, safe

    rows = done["results"]
    width = max((len(safe(e["path"])) for e in rows), default=0)
    for e in rows:
        if quiet and e["status"] == "ok":
            continue
        what = summary(e) if e["status"] == "ok" else safe(e["error"])
        out(f"{safe(e['path']):<{width}}  {e['status']:<6}  {e['seconds']:7.2f}s  {what}")
    if rows:
        seconds = sum(e["seconds"] for e in rows)
        note(f"fleet {done['stage']}: {done['ok']} ok, {done['failed']} failed of {done['stores']} store(s) "
             f"at {done['at']} ({done['engine']}, {seconds:.1f} s of work)")


def _write_report(path: Path, done: dict) -> None:
    """Atomically (a reader never sees half a report), 0600 like everything memstore writes."""
    import os

    from memstore.codec import dumps
    from memstore.errors import MemstoreError

    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(dumps(done) + b"\n")
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise MemstoreError(f"--report {path}: cannot write it ({exc.strerror}); the stages ran: "
                            "choose a writable path and retry") from None
