"""The dispatch preamble: what an agent's prompt is given before its task.

Exactly three parts, framed as user data (memstore.recall.preamble's wording):

1. every active policy the agent may read, as ``- [domain] "rule"`` (the repo's first);
2. the agent's own working memory, verbatim, each line behind ``> `` so that no line of
   it can pose as a policy or as the framing;
3. at most ``recall.preamble_max`` facts within ``recall.preamble_chars`` characters,
   only when the task is at least ``recall.preamble_min_query`` characters long, found by
   keyword alone unless ``semantic`` (the seed keeps the embedder off the dispatch path).

It ends telling the agent to verify what matters with ``search_memory``. Grants hold
here as everywhere: nothing from a domain the agent may not read appears.
"""

from __future__ import annotations

from dataclasses import replace

from .access import in_repo, readable
from .recall.preamble import FOOTER, HEADER, active_policies, fact_line, label, quote

VERIFY = ("Verify important items with search_memory before relying on them; this list is short "
          "by design and may be incomplete.")
NOTES_HEAD = "Your working memory (your own notes from earlier runs, verbatim):"


def dispatch(ix, task: str, *, now: str, config, notes: str = "", access=None, repo: str | None = None,
             semantic: bool = False) -> dict:
    """The preamble's parts and its text ("" when there is nothing to say)."""
    from .recall.engine import recall
    from .recall.request import build_request

    rc = config["recall"]
    policies = [p for p in active_policies(ix, now) if readable(access, p)]
    if repo is not None:  # the repo's policies first, the rest in their order
        policies.sort(key=lambda p: not in_repo(p.domain, repo))
    facts: list[dict] = []
    task = task.strip()
    if len(task) >= rc["preamble_min_query"]:
        req = build_request({"query": task, "k": max(rc["preamble_max"] * 2, 10)}, now)
        req = replace(req, access=access, repo=repo,
                      voices=req.voices if semantic else ("lexical",))
        used = 0
        for r in recall(req, ix, now=now, config=config)["results"]:
            if len(facts) >= rc["preamble_max"]:
                break
            if r["level"] == "policy":
                continue  # every policy is in the list above already
            line = fact_line(r)
            if used + len(line) > rc["preamble_chars"]:
                continue
            facts.append({**r, "line": line})
            used += len(line)
    lines: list[str] = []
    for p in policies:
        domain = p.domain or "general"
        rule = p.text.removeprefix(f"[{domain}] ")
        lines.append(f"- [{label(domain)}] {quote(rule)}")
    if notes:
        lines.append(NOTES_HEAD)
        lines.extend("> " + _plain(line) for line in notes.split("\n"))
    lines.extend(f["line"] for f in facts)
    text = "\n".join([HEADER, *lines, FOOTER, VERIFY]) if lines else ""
    return {"task": task, "now": now, "text": text,
            "policies": [{"id": p.id, "domain": p.domain, "rule": p.text, "direction": p.direction,
                          "confidence": round(p.confidence, 4)} for p in policies],
            "notes": notes,
            "facts": [{k: v for k, v in f.items() if k != "line"} for f in facts]}


def _plain(line: str) -> str:
    """A working-memory line as written, less what a terminal or a prompt parser would act on
    (control and format characters)."""
    from .textsafe import flat

    return flat(line) if line.strip() else ""
