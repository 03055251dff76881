"""The fleet's JSON report, and reading one back for --retry."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError

FORMAT = "memstore-fleet/1"
MAX_REPORT = 64 << 20  # a report of a million stores is ~300 MB; more than this is not ours


def make_report(stage: str, root: str, now: str, engine: str, entries: list[dict]) -> dict:
    failed = sum(e["status"] != "ok" for e in entries)
    return {"format": FORMAT, "command": "fleet", "stage": stage, "root": root, "at": now, "engine": engine,
            "stores": len(entries), "ok": len(entries) - failed, "failed": failed,
            "results": sorted(entries, key=lambda e: e["path"])}


def failed_paths(path: Path, stage: str) -> list[str]:
    """The stores that failed in the report at ``path`` (a fleet report of ``stage``), as paths
    relative to the fleet root; a file that is not such a report is a usage error."""
    from ..codec import JSONDecodeError, loads

    where = f"--retry {path}"
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_REPORT + 1)
    except OSError as exc:
        raise UsageError(f"{where}: cannot read it ({exc.strerror}); give the file --report wrote") from None
    if len(data) > MAX_REPORT:
        raise UsageError(f"{where}: larger than {MAX_REPORT >> 20} MB; not a fleet report")
    try:
        report = loads(data)
    except JSONDecodeError:
        raise UsageError(f"{where}: not valid JSON; give the file --report wrote") from None
    if not isinstance(report, dict) or report.get("format") != FORMAT or not isinstance(report.get("results"), list):
        raise UsageError(f"{where}: not a memstore fleet report ({FORMAT}); give the file --report wrote")
    if report.get("stage") != stage:
        raise UsageError(f"{where}: a report of `fleet {report.get('stage')}`, not of `fleet {stage}`; "
                         f"retry it with `memstore fleet {report.get('stage')} --retry`")
    found = []
    for n, entry in enumerate(report["results"]):
        if not isinstance(entry, dict) or entry.get("status") not in ("ok", "failed"):
            raise UsageError(f"{where}: results[{n}] is not a store's result")
        name = entry.get("path")
        if not isinstance(name, str) or not _relative(name):
            raise UsageError(f"{where}: results[{n}].path {name!r} is not a path under the fleet root")
        if entry["status"] == "failed":
            found.append(name)
    return sorted(set(found))


def _relative(name: str) -> bool:
    if not name or "\0" in name or os.path.isabs(name):
        return False
    return ".." not in Path(name).parts and os.path.normpath(name) == name
