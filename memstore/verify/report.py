"""What verify found: findings (``path:line: message``, with the repair that fixes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Finding:
    """One problem: ``path:line: message``; ``fix`` names the repair, None when there is none."""

    path: Path
    line: int
    message: str
    check: str  # log | snapshot | index | files
    fix: str | None = None  # quarantine | delete | rebuild | chmod
    detail: tuple = ()  # what the repair needs (fragment offset and length, the wanted mode)

    def render(self) -> str:
        return f"{self.path}:{self.line}: {' '.join(self.message.split())}"  # always one line

    def to_dict(self) -> dict:
        return {"path": str(self.path), "line": self.line, "message": self.message,
                "check": self.check, "fix": self.fix}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)  # informational: never an exit status
    head: int = 0
    events: int = 0
    log_files: int = 0
    snapshots: int = 0

    @property
    def clean(self) -> bool:
        return not self.findings

    def needs_rebuild(self) -> bool:
        return any(f.fix == "rebuild" for f in self.findings)

