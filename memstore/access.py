"""Who is asking: agent names, their roles, repo-scoped domains and access grants.

An agent is a name (``--agent``, ``MEMSTORE_AGENT``, the server's ``agent``); its role
comes from ``[agents]`` in memstore.toml (an agent not listed there has its own name as
role). ``[grants.ROLE]`` maps domains to ``none``, ``read`` or ``write``.

Reads fail open, as the seed decides on purpose: a domain without a grant row for the
role is readable. ``none`` holds everywhere (recall, preamble, judge, show, export, log,
conflicts, the server). ``propose_policy`` needs ``write``; a domain without a row counts
as ``write`` for it (the seed seeds ``write`` for every role on a new domain), so only an
explicit ``read`` or ``none`` refuses it. Why the asymmetry: memstore(7), AGENTS.

Rows are looked up most specific first: the role's row for the domain, for the domain's
workspace name (a ``none`` on ``hr`` also holds for ``repo:web/hr``), for ``*``; then the
same under the role ``*``. The caller without an agent (a person at the shell, cron) is
the store's owner: grants do not apply to them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .errors import UsageError

LEVELS = ("none", "read", "write")
REPO_PREFIX = "repo:"
_NAME = re.compile(r"^\w[\w.@:+-]{0,63}$")
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_agent(name: str, what: str = "--agent") -> str:
    """The agent name, or UsageError: a word character, then up to 63 of word characters
    and . @ : + - (it is shown in listings and stored on every event the agent writes)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(f"{what} {name!r} is not an agent name; use up to 64 letters, digits and "
                         ". _ @ : + - (e.g. --agent reviewer-bot)")
    return name


def check_slug(slug: str, what: str = "--repo") -> str:
    if not isinstance(slug, str) or not _SLUG.fullmatch(slug):
        raise UsageError(f"{what} {slug!r} is not a repo slug; use letters, digits, . _ - "
                         "(e.g. --repo web-app)")
    return slug


def repo_domain(slug: str, domain: str | None) -> str:
    """The repo-scoped form of a domain: ``repo:<slug>/<domain>`` (``repo:<slug>`` alone)."""
    return f"{REPO_PREFIX}{slug}/{domain}" if domain else f"{REPO_PREFIX}{slug}"


def split_domain(domain: str | None) -> tuple[str | None, str | None]:
    """(repo slug or None, the workspace domain name or None)."""
    if not domain or not domain.startswith(REPO_PREFIX):
        return None, domain
    slug, _, name = domain[len(REPO_PREFIX):].partition("/")
    return slug or None, name or None


def in_repo(domain: str | None, slug: str) -> bool:
    return split_domain(domain)[0] == slug


@dataclass(frozen=True)
class Access:
    """What one agent may see and write. ``grants``: {role: {domain: level}} from the config."""

    agent: str
    role: str
    grants: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # domain -> level, filled as asked: recall checks every candidate, log and export every record
    _memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def level(self, domain: str | None) -> str | None:
        """The grant row that applies to ``domain`` (None: no row)."""
        if domain not in self._memo:
            self._memo[domain] = self._lookup(domain)
        return self._memo[domain]

    def _lookup(self, domain: str | None) -> str | None:
        table = dict(self.grants)
        _slug, base = split_domain(domain)
        names = [n for n in dict.fromkeys((domain or "", base or "", "*")) if n]
        for role in (self.role, "*"):
            rows = dict(table.get(role, ()))
            for n in names:
                if n in rows:
                    return rows[n]
        return None

    def can_read(self, domain: str | None) -> bool:
        return self.level(domain) != "none"

    def can_write_policy(self, domain: str | None) -> bool:
        return self.level(domain) in (None, "write")


def access_for(config, agent: str | None) -> Access | None:
    """The agent's Access under this config; None for the owner (no agent)."""
    if agent is None:
        return None
    role = config.get("agents", {}).get(agent, agent)
    grants = tuple(sorted((r, tuple(sorted(rows.items()))) for r, rows in config.get("grants", {}).items()))
    return Access(agent, role, grants)


def readable(access: Access | None, memory) -> bool:
    """May this caller see this record? (The owner sees everything.)"""
    return access is None or access.can_read(memory.domain)


def check_tables(data: dict) -> tuple[dict, dict]:
    """Validate ``[agents]`` and ``[grants]`` of memstore.toml; (agents, grants), or UsageError."""
    agents = data.get("agents", {})
    if not isinstance(agents, dict):
        raise UsageError("memstore.toml: [agents] must be a table of NAME = \"role\"")
    for name, role in agents.items():
        check_agent(name, "memstore.toml: [agents] name")
        if not isinstance(role, str) or not _NAME.fullmatch(role):
            raise UsageError(f"memstore.toml: agents.{name} {role!r} must be a role name (letters, digits, "
                             ". _ @ : + -)")
    grants = data.get("grants", {})
    if not isinstance(grants, dict):
        raise UsageError("memstore.toml: [grants] must hold tables [grants.ROLE] of DOMAIN = \"none\"|\"read\"|\"write\"")
    for role, rows in grants.items():
        if role != "*" and not _NAME.fullmatch(role):
            raise UsageError(f"memstore.toml: grants.{role!r} is not a role name")
        if not isinstance(rows, dict):
            raise UsageError(f"memstore.toml: grants.{role} must be a table of DOMAIN = \"none\"|\"read\"|\"write\"")
        for domain, level in rows.items():
            if not domain.strip() or any(ord(c) < 32 for c in domain):
                raise UsageError(f"memstore.toml: grants.{role} has an empty or control-character domain")
            if level not in LEVELS:
                raise UsageError(f"memstore.toml: grants.{role}.{domain} {level!r} is not one of: "
                                 "none, read, write")
    return dict(agents), {r: dict(rows) for r, rows in grants.items()}


def hidden_ids(state, access: Access | None) -> frozenset[str]:
    """The ids of the records this caller may not read (none for the owner)."""
    if access is None:
        return frozenset()
    return frozenset(m.id for m in state.memories.values() if not access.can_read(m.domain))


def hidden_in(state, access: Access | None, events: list[dict]) -> frozenset[str]:
    """``hidden_ids`` among the records ``events`` name (``event_ids``), each looked up by id:
    for a lifecycle run's report, whose state may be partial (``state.Partial`` lists only
    the records built, and builds any other when asked for it)."""
    if access is None:
        return frozenset()
    ids = {i for e in events for i in event_ids(e)}
    return frozenset(i for i in ids if (m := state.memories.get(i)) is not None and not access.can_read(m.domain))


LINK_LISTS = ("derived_from", "against", "conflicts_with", "reconciled_with")
LINK_FIELDS = ("superseded_by", "merged_into", "abstracted_by")


def redacted(memory, hidden: frozenset[str]):
    """The record as a caller sees it: its links to records it may not read left out. The
    stages link within one domain, but a hand-edited or imported log can link across, and
    an id alone says that a record exists."""
    if not hidden:
        return memory
    changes = {f: tuple(i for i in getattr(memory, f) if i not in hidden) for f in LINK_LISTS}
    changes.update({f: None for f in LINK_FIELDS if getattr(memory, f) in hidden})
    return replace(memory, **changes)


def linked_ids(item) -> list[str]:
    """The ids a record links to, or an event touches and links to: all that ``redacted``
    and ``event_visible`` look up in ``hidden`` (a reader can fetch just these)."""
    from .events import touched_ids

    if isinstance(item, dict):
        ids = touched_ids(item)
        memory = item.get("memory")
        if isinstance(memory, dict):
            ids += [i for f in LINK_LISTS for i in memory.get(f) or () if isinstance(i, str)]
            ids += [v for f in LINK_FIELDS if isinstance(v := memory.get(f), str)]
        return ids
    return [i for f in LINK_LISTS for i in getattr(item, f)] + [v for f in LINK_FIELDS if (v := getattr(item, f))]


def event_visible(event: dict, access: Access | None, hidden: frozenset[str]) -> bool:
    """May this caller see this log event? Not one that creates or touches a record it may
    not read, nor another agent's working memory."""
    if access is None:
        return True
    if event.get("op") == "notes":
        return event.get("agent") == access.agent
    memory = event.get("memory")
    if isinstance(memory, dict) and not access.can_read(memory.get("domain")):
        return False
    if not hidden:
        return True
    return not any(i in hidden for i in event_ids(event))


def event_ids(event: dict) -> list[str]:
    """The records an event creates or touches, and those a record it holds links to (see
    redacted)."""
    from .events import touched_ids

    ids = touched_ids(event)
    memory = event.get("memory")
    if isinstance(memory, dict):
        ids += [i for f in LINK_LISTS for i in memory.get(f) or () if isinstance(i, str)]
        ids += [v for f in LINK_FIELDS if isinstance(v := memory.get(f), str)]
    return ids
