"""The agent-facing verbs, one function each, with their JSON schemas.

``memstore serve`` exposes them as MCP tools (and as JSON lines with ``--jsonl``); the
tests drive them through both. ``call(resident, name, args, now=..., agent=...)`` checks
the arguments against the tool's schema (unknown or mistyped arguments are a UsageError
naming the field) and returns a JSON-ready dict. ``now`` is the caller's: the server
reads the clock at its edge when a call carries none.

Every call runs as one agent (the call's ``agent``, else the server's): its writes carry
the name, its reads see what its grants allow (memstore.access), its working memory is
its own.
"""

from __future__ import annotations

from dataclasses import replace

from .access import access_for, check_agent, check_slug, repo_domain
from .errors import NonMonotonicTime, UsageError
from .timeutil import format_ts, parse_instant

_STR = {"type": "string"}
_NOW = {"type": "string", "description": "The time this call runs at (ISO 8601); default: the server's clock."}
_AGENT = {"type": "string", "description": "The agent making the call; default: the server's --agent."}
_REPO = {"type": "string", "description": "A repo slug: write to, or rank first, repo:<slug>/<domain>."}
_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def _schema(required: tuple[str, ...], **props) -> dict:
    return {"type": "object", "properties": {**props, "now": _NOW, "agent": _AGENT},
            "required": list(required), "additionalProperties": False}


TOOLS: dict[str, dict] = {
    "remember": {
        "description": "Write a memory to the hot tier (short-term): consolidate promotes it when it "
                       "is said again or matters, else it expires. The same text again reinforces it.",
        "schema": _schema(("text",), text=_STR, kind=_STR, subject=_STR, domain=_STR, repo=_REPO,
                          actors={"type": "array", "items": _STR}, outcome=_STR, occurred_at=_STR, key=_STR,
                          session=_STR, turn={"type": "integer", "minimum": 0, "maximum": 999_999_999}),
    },
    "propose_fact": {
        "description": "Record a durable fact (long-term) in a domain, on a topic. Contradicting facts "
                       "from different agents open a conflict (list_conflicts, harmonize).",
        "schema": _schema(("content",), content=_STR, domain=_STR, topic=_STR, repo=_REPO,
                          kind={"type": "string", "default": "fact"}, key=_STR,
                          confidence={"type": "number", "minimum": 0, "maximum": 1}),
    },
    "propose_policy": {
        "description": "Write a policy (a rule every preamble carries): direction avoid or repeat. "
                       "Needs a write grant on the domain.",
        "schema": _schema(("rule", "direction"), rule=_STR, direction={"enum": ["avoid", "repeat"]},
                          domain=_STR, topic=_STR, repo=_REPO),
    },
    "supersede_fact": {
        "description": "Replace a memory (by id or key) with a new statement in its domain; the old one "
                       "stops holding now and keeps its history (search_memory with as_of finds it).",
        "schema": _schema(("id", "content"), id=_STR, content=_STR, topic=_STR,
                          kind={"type": "string", "default": "fact"}),
    },
    "search_memory": {
        "description": "Find memories for a question. mode: keyword (lexical only), semantic (lexical "
                       "and vectors, fused) or hybrid (all four voices, the default).",
        "schema": _schema(("query",), query=_STR, mode={"enum": ["keyword", "semantic", "hybrid"]},
                          k={"type": "integer", "minimum": 1, "maximum": 100}, domain=_LIST, subject=_LIST,
                          kind=_LIST, actor=_LIST, during=_LIST, as_of=_STR, repo=_REPO,
                          touch={"type": "boolean", "description": "Record the use (it slows decay); "
                                                                   "default true."}),
    },
    "preamble": {
        "description": "The dispatch preamble for a task: every policy, your working memory, and up "
                       "to 5 keyword-matched facts (semantic: true to use vectors too), framed as data.",
        "schema": _schema(("task",), task=_STR, repo=_REPO, semantic={"type": "boolean"}),
    },
    "judge": {
        "description": "Which learned or written policies apply to a situation, with the outcomes "
                       "for and against each.",
        "schema": _schema(("situation",), situation=_STR, k={"type": "integer", "minimum": 1, "maximum": 100}),
    },
    "list_conflicts": {
        "description": "Conflicts between memories: the open ones (all: every one, with how it ended). "
                       "A conflict between two agents' beliefs names both.",
        "schema": _schema((), all={"type": "boolean"}),
    },
    "resolve_conflict": {
        "description": "Decide a conflict: keep new, old, both (they do not contradict) or dismiss.",
        "schema": _schema(("id", "keep"), id=_STR, keep={"enum": ["new", "old", "both", "dismiss"]}, note=_STR),
    },
    "harmonize": {
        "description": "Propose a resolution for each open conflict between two agents (by evidence, "
                       "then confidence, then recency); apply: true records them.",
        "schema": _schema((), apply={"type": "boolean"}),
    },
    "forget": {
        "description": "Invalidate a memory by id or key from now on (nothing is deleted).",
        "schema": _schema(("id",), id=_STR, reason=_STR),
    },
    "update_my_notes": {
        "description": "Write your private working memory (what you are in the middle of): mode set "
                       "(replace, the default), append (add a line) or clear. Shown verbatim in your "
                       "preamble, never to other agents.",
        "schema": _schema((), text=_STR, mode={"enum": ["set", "append", "clear"]}),
    },
    "read_my_notes": {
        "description": "Read your private working memory.",
        "schema": _schema(()),
    },
}


# What each argument means, for the model reading the schema (MCP clients show it) and for
# memstore-serve(1). ("*", NAME): any tool's NAME without its own entry.
_ARGUMENT_DOCS: dict[tuple[str, str], str] = {
    ("*", "domain"): "Scope (e.g. eng); with repo it becomes repo:<slug>/<domain>. Grants are per domain.",
    ("*", "key"): "Your idempotency key or external id: the same key again changes nothing.",
    ("*", "kind"): "The memory's kind.",
    ("*", "topic"): "What it is about (stored as the subject).",
    ("*", "text"): "The memory's text.",
    ("remember", "kind"): "The memory's kind (one of KINDS); default: classified from the text.",
    ("remember", "subject"): "Topic label: memories on one subject are consolidated together.",
    ("remember", "actors"): "People or agents involved.",
    ("remember", "outcome"): "One of OUTCOMES: outcomes on one cause become policies (distill).",
    ("remember", "session"): "The conversation (session or thread) it was said in; recall then reads a "
                             "matching turn with its neighbours.",
    ("remember", "turn"): "Its position in that session (0, 1, 2, ...).",
    ("remember", "occurred_at"): "When it happened: 2020, 2020-06, 2020-W23 (a week), 2020-06-07 or a "
                                    "full time; default: the time the text states, else now.",
    ("propose_fact", "content"): "The fact, in words.",
    ("propose_fact", "confidence"): "Belief in it; default: the source's (an agent's 0.7).",
    ("propose_policy", "rule"): "The rule, in words.",
    ("propose_policy", "direction"): "avoid: a rule that prevents something (mitigate); repeat: a practice "
                                     "to keep (reinforce).",
    ("propose_policy", "domain"): "The policy's domain: the calling agent's role needs write on it.",
    ("propose_policy", "topic"): "What it is about (its cause, stored as the subject).",
    ("supersede_fact", "id"): "The memory to replace: its id or key (one the agent may read).",
    ("supersede_fact", "content"): "The new statement; it keeps the old one's domain.",
    ("supersede_fact", "topic"): "What it is about; default: the old one's subject.",
    ("search_memory", "query"): "The question.",
    ("search_memory", "mode"): "keyword: the lexical voice only; semantic: lexical and vectors, fused; "
                               "hybrid (the default): all four voices.",
    ("search_memory", "k"): "How many results; default: recall.k (10).",
    ("search_memory", "domain"): "Only these domains, exactly.",
    ("search_memory", "subject"): "Only these subjects.",
    ("search_memory", "kind"): "Only these kinds.",
    ("search_memory", "actor"): "Only memories involving these actors.",
    ("search_memory", "during"): "Only this time: 2026-06, 2026-W23, 2026-06-07, 'last week', 先週.",
    ("search_memory", "as_of"): "What was believed at this time (ISO 8601), superseded memories included.",
    ("preamble", "task"): "The task at hand; facts are looked up only for a task of at least "
                          "recall.preamble_min_query (20) characters.",
    ("preamble", "semantic"): "Find the facts with every voice, not by keyword alone; default false.",
    ("judge", "situation"): "The decision at hand.",
    ("judge", "k"): "At most this many policies; default: judge.k.",
    ("list_conflicts", "all"): "Every conflict, with how it ended; default false: the open ones.",
    ("resolve_conflict", "id"): "The conflict's id (list_conflicts).",
    ("resolve_conflict", "keep"): "new or old: the other side is superseded; both (they do not contradict) "
                                  "or dismiss: both stay, never flagged again.",
    ("resolve_conflict", "note"): "Why; stored as the resolution's reason.",
    ("harmonize", "apply"): "Record the proposals as resolutions; default false: only propose.",
    ("forget", "id"): "The memory: its id or key.",
    ("forget", "reason"): "Why; kept in the log.",
    ("update_my_notes", "text"): "The text; required unless mode is clear.",
    ("update_my_notes", "mode"): "set (replace; the default), append (add a line) or clear.",
}


def _describe() -> None:
    from .model import KINDS, OUTCOMES

    kinds = ", ".join(k for k in KINDS if k != "policy")  # a policy is propose_policy's
    for tool, spec in TOOLS.items():
        for arg, prop in spec["schema"]["properties"].items():
            doc = _ARGUMENT_DOCS.get((tool, arg)) or _ARGUMENT_DOCS.get(("*", arg))
            if doc and "description" not in prop:
                doc = doc.replace("KINDS", kinds).replace("OUTCOMES", ", ".join(OUTCOMES))
                spec["schema"]["properties"][arg] = {**prop, "description": doc}


_describe()


def _check(name: str, args: dict) -> None:
    """The arguments against the tool's schema: types, enums, ranges, unknown names."""
    schema = TOOLS[name]["schema"]
    props = schema["properties"]
    if not isinstance(args, dict):
        raise UsageError(f"{name}: arguments must be a JSON object")
    for key in args:
        if key not in props:
            raise UsageError(f"{name}: unknown argument {key!r}; known: {', '.join(sorted(props))}")
    for key in schema["required"]:
        if args.get(key) is None:
            raise UsageError(f"{name}: {key} is required")
    for key, value in args.items():
        if value is None:
            continue
        spec = props[key]
        if "enum" in spec and value not in spec["enum"]:
            raise UsageError(f"{name}: {key} {value!r} is not one of: {', '.join(spec['enum'])}")
        kind = spec.get("type")
        if not _typed(spec, value):
            raise UsageError(f"{name}: {key} {value!r} must be {_KIND_WORDS[kind]}")
        if kind in ("integer", "number") and not spec.get("minimum", value) <= value <= spec.get("maximum", value):
            raise UsageError(f"{name}: {key} {value!r} must be from {spec['minimum']} to {spec['maximum']}")


_KIND_WORDS = {"string": "a string", "boolean": "a boolean", "integer": "an integer", "number": "a number",
               "array": "a list of strings", None: "a string or a list of strings"}
_TYPES = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
}


def _typed(spec: dict, value) -> bool:
    if "enum" in spec:
        return True  # checked against its values
    if "anyOf" in spec:
        return _TYPES["string"](value) or _TYPES["array"](value)
    return _TYPES[spec["type"]](value)


def call(resident, name: str, args: dict, *, now: str, agent: str | None = None) -> dict:
    """Run one tool as ``agent`` at ``now``; the result object (UsageError, NotFound,
    PermissionDenied: the caller's to report)."""
    if name not in TOOLS:
        raise UsageError(f"unknown tool {name!r}; known: {', '.join(TOOLS)}")
    _check(name, args)
    args = {k: v for k, v in args.items() if v is not None}
    now = format_ts(parse_instant(args.pop("now", now), "now"))
    agent = args.pop("agent", agent)
    if agent is not None:
        check_agent(agent, "agent")
    if args.get("kind") == "policy" and name in ("remember", "propose_fact", "supersede_fact"):
        raise UsageError(f"{name}: a policy is written with propose_policy (a rule and a direction)")
    config = resident.config
    try:
        return _HANDLERS[name](_Call(resident, config, now, agent, access_for(config, agent)), args)
    except NonMonotonicTime:  # the CLI's wording names --allow-past, which no tool takes
        raise NonMonotonicTime(f"{name}: now {now} is earlier than the store's latest record; a write "
                               "moves forward in time (give a later now, or none for the clock)") from None


class _Call:
    __slots__ = ("resident", "config", "now", "agent", "access")

    def __init__(self, resident, config, now, agent, access):
        self.resident, self.config, self.now, self.agent, self.access = resident, config, now, agent, access

    @property
    def layout(self):
        return self.resident.layout

    def source(self) -> str:
        return "agent" if self.agent else self.config["memory"]["default_source"]

    def need_agent(self, tool: str) -> str:
        if self.agent is None:
            raise UsageError(f"{tool}: working memory is an agent's own; give agent (or serve --agent NAME)")
        return self.agent


def _domain(args: dict) -> str | None:
    domain = args.get("domain")
    if args.get("repo") is not None:
        return repo_domain(check_slug(args["repo"], "repo"), domain)
    return domain


def _draft(c: _Call, fields: dict):
    from .remember import validate

    return validate(fields, max_chars=c.config["memory"]["max_text_chars"])


def _remember(c: _Call, a: dict) -> dict:
    from . import writes

    fields = {k: a[k] for k in ("text", "kind", "subject", "actors", "outcome", "occurred_at", "key", "session",
                                "turn") if k in a}
    draft = _draft(c, {**fields, "domain": _domain(a), "source": c.source()})
    (d,) = writes.remember(c.layout, [draft], now=c.now, config=c.config, agent=c.agent)
    return {"action": d.action, "id": d.id, "reason": d.reason}


def _propose_fact(c: _Call, a: dict) -> dict:
    from . import writes

    draft = _draft(c, {"text": a["content"], "kind": a.get("kind", "fact"), "subject": a.get("topic"),
                       "domain": _domain(a), "key": a.get("key"), "confidence": a.get("confidence"),
                       "source": c.source(), "tier": "long"})
    (d,) = writes.remember(c.layout, [draft], now=c.now, config=c.config, agent=c.agent)
    return {"action": d.action, "id": d.id, "domain": draft.domain, "topic": draft.subject}


def _propose_policy(c: _Call, a: dict) -> dict:
    from . import writes

    done = writes.add_policy(c.layout, a["rule"], direction=a["direction"], author=c.agent or "human",
                             now=c.now, config=c.config, subject=a.get("topic"), domain=_domain(a),
                             source=c.source(), agent=c.agent, access=c.access)
    return {"id": done.id, "changed": done.changed}


def _supersede_fact(c: _Call, a: dict) -> dict:
    from . import writes
    from .access import readable
    from .errors import NotFound

    old = c.resident.state().resolve(a["id"])
    if old is None or not readable(c.access, old):
        raise NotFound(f"no memory with id or key {a['id']!r}; find it with search_memory")
    draft = _draft(c, {"text": a["content"], "kind": a.get("kind", "fact"), "subject": a.get("topic", old.subject),
                       "domain": old.domain, "source": c.source(), "tier": "long"})
    done = writes.supersede_fact(c.layout, a["id"], draft, now=c.now, config=c.config, agent=c.agent,
                                 access=c.access)
    return {"old": done.old, "new": done.new}


_MODES = {"keyword": ("lexical",), "semantic": ("lexical", "semantic"), "hybrid": None}


def _search(c: _Call, a: dict) -> dict:
    from . import writes
    from .errors import StoreBusy
    from .recall.engine import recall
    from .recall.request import build_request

    fields = {k: a[k] for k in ("query", "k", "domain", "subject", "kind", "actor", "during", "as_of", "repo")
              if k in a}
    req = build_request(fields, c.now)
    voices = _MODES[a.get("mode", "hybrid")]
    req = replace(req, access=c.access, **({"voices": voices} if voices else {}))
    ix = c.resident.indexes()
    result = recall(req, ix, now=c.now, config=c.config)
    ids = [r["id"] for r in result["results"]]
    held = ix.records.get(ids)
    for r in result["results"]:  # an agent needs the scope (its repo's or the workspace's) and the writer
        m = held.get(r["id"])
        r["domain"], r["agent"] = (m.domain, m.agent) if m is not None else (None, None)
    if ids and a.get("touch", True) and req.as_of is None:
        try:  # best effort, as the CLI's: a busy store or a past now costs the usage record, not the answer
            writes.record_usage(c.layout, ids, req.query, now=c.now, lock_wait=1.0, agent=c.agent)
        except (StoreBusy, NonMonotonicTime):
            pass
    return result


def _preamble(c: _Call, a: dict) -> dict:
    from .dispatch import dispatch

    notes = c.resident.notes_of(c.agent).get("text", "")
    repo = check_slug(a["repo"], "repo") if "repo" in a else None
    return dispatch(c.resident.indexes(), a["task"], now=c.now, config=c.config, notes=notes, access=c.access,
                    repo=repo, semantic=a.get("semantic", False))


def _judge(c: _Call, a: dict) -> dict:
    from .judge import judge

    return judge(c.resident.indexes(), a["situation"], now=c.now, config=c.config, k=a.get("k"), access=c.access)


def _conflicts(c: _Call, a: dict) -> dict:
    from .conflict_list import listed, shown
    from .conflicts import records
    from .index.current import read_or_fold
    from .store.log import LogReader

    def texts(found: list[dict], sides) -> list[dict]:
        for r in found:
            for side in ("old", "new"):
                m = sides.get(r[side])
                r[f"{side}_text"] = None if m is None else m.text
        return found

    def from_index():  # as `memstore conflicts`: the records index and the log's conflict events
        got = listed(c.layout, bool(a.get("all")), c.access)
        return None if got is None else texts(*got)

    found = read_or_fold(from_index, lambda: None)
    if found is None:  # no usable records index: the fold's
        state = c.resident.state()
        found = texts(shown(records(LogReader(c.layout).events(), state, c.access), bool(a.get("all"))),
                      state.memories)
    return {"conflicts": found}


def _resolve(c: _Call, a: dict) -> dict:
    from . import writes

    done = writes.resolve_conflict(c.layout, a["id"], a["keep"], now=c.now, note=a.get("note"), agent=c.agent,
                                   access=c.access)
    return {"conflict": done.conflict, "keep": done.keep, "changed": done.changed}


def _harmonize(c: _Call, a: dict) -> dict:
    from . import writes

    done = writes.harmonize(c.layout, now=c.now, apply=a.get("apply", False), agent=c.agent, access=c.access)
    return {"proposals": done.proposals, "applied": done.applied}


def _forget(c: _Call, a: dict) -> dict:
    from . import writes

    done = writes.forget(c.layout, a["id"], now=c.now, reason=a.get("reason"), agent=c.agent, access=c.access)
    return {"id": done.memory.id, "changed": done.changed}


def _update_notes(c: _Call, a: dict) -> dict:
    from . import writes

    agent = c.need_agent("update_my_notes")
    mode = a.get("mode", "set")
    if mode != "clear" and "text" not in a:
        raise UsageError(f"update_my_notes: text is required for mode {mode}")
    done = writes.set_notes(c.layout, agent, a.get("text", ""), mode=mode, now=c.now)
    return {"agent": agent, "notes": done.text, "changed": done.changed}


def _read_notes(c: _Call, a: dict) -> dict:
    agent = c.need_agent("read_my_notes")
    held = c.resident.notes_of(agent)
    return {"agent": agent, "notes": held.get("text", ""), "updated_at": held.get("at")}


_HANDLERS = {
    "remember": _remember, "propose_fact": _propose_fact, "propose_policy": _propose_policy,
    "supersede_fact": _supersede_fact, "search_memory": _search, "preamble": _preamble, "judge": _judge,
    "list_conflicts": _conflicts, "resolve_conflict": _resolve, "harmonize": _harmonize, "forget": _forget,
    "update_my_notes": _update_notes, "read_my_notes": _read_notes,
}
assert set(_HANDLERS) == set(TOOLS)
