"""Contradictions between memories: detection rules, conflict events, resolutions.

Rules (memstore(7), CONFLICTS), all lexical and deterministic:

- negation: one text denies and the other does not (a clause of it holds an odd number
  of negations; English and Japanese);
- number: both texts carry numbers or dates and the sets differ;
- value: a newer record on a single-valued subject (two preferences on one
  subject cannot both hold);
- direction: two active policies on the same cause point opposite ways.

A conflict is recorded (op ``conflict``, id from the pair) and, unless
``conflicts.auto_supersede`` is false, the newer record supersedes the older
(op ``supersede``: status, ``invalid_at``, ``superseded_by``; history kept, memstore(7) FORGETTING).
``resolve`` records a person's decision. Detection runs inside ``consolidate``
and ``distill``; nothing is checked at write time (remember stays model- and fold-free).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

from .model import Memory, normalize_text

# English: a negator word or an n't contraction. "no longer" is one negator, not two.
_EN_NEG = re.compile(
    r"\bno\s+longer\b|\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot|without|"
    r"stopped|quit|zero)\b|n['’]t\b",
    re.IGNORECASE,
)
# Japanese: negative auxiliaries and verbs of stopping. Listed longest first so しない
# counts once; adjectives that merely end in ない (少ない, 危ない) are excluded, and ず
# only counts after a verb stem (not in まず, 必ず, ずつ, はず).
_JA_NEG = re.compile(
    r"(?<![少危])(?:ません|やめた|やめる|辞めた|止めた|なかった|なければ|しない|ない|なし|なく)"
    r"|(?:(?<=[かがさざたなばらわけげせてねべめれ])|(?<=[\u4e00-\u9fffー]ま))ず(?![つっれいぶか])"
)
_NUMBER = re.compile(r"\d+(?:[.:/-]\d+)*")
# consolidate asks these of each text once per record it is compared with (a subject group's
# near-duplicates): pure functions of the text, cached
_TEXTS = 1 << 17


# Clauses: parity is counted in each ("no sugar, no milk" denies twice, it does not affirm)
_CLAUSE = re.compile(r"[,;:.!?、。，；：！？—–]|\b(?:and|but)\b|けど|ので|から、", re.IGNORECASE)


def negation_count(text: str) -> int:
    text = unicodedata.normalize("NFKC", text)
    return len(_EN_NEG.findall(text)) + len(_JA_NEG.findall(text))


@lru_cache(maxsize=_TEXTS)
def negated(text: str) -> bool:
    """Some clause of the text denies: its negations are odd in number ("not never" and
    なければならない affirm again). Counted per clause, so that "no sugar, no milk" and
    "doesn't use Vim and isn't on call" are denials, not two negations that cancel."""
    return any(negation_count(c) % 2 == 1 for c in _CLAUSE.split(unicodedata.normalize("NFKC", text)))


@lru_cache(maxsize=_TEXTS)
def numbers(text: str) -> frozenset[str]:
    """Numbers and dates as written (NFKC folds full-width digits)."""
    return frozenset(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


def contradiction(old: str, new: str) -> str | None:
    """The lexical rule two texts on one topic break, or None: "negation" or "number"."""
    if negated(old) != negated(new):
        return "negation"
    a, b = numbers(old), numbers(new)
    # another value, not more of them: "the quote is 400 seats" is not contradicted by "50
    # seats in September, all 400 in October"
    if a and b and not (a <= b or b <= a):
        return "number"
    return None


def single_valued(old: Memory, new: Memory, config) -> bool:
    """Both records give a value for the same subject of a single-valued kind."""
    kinds = {k.strip() for k in config["conflicts"]["single_valued_kinds"].split(",") if k.strip()}
    return (old.kind in kinds and new.kind == old.kind and old.subject is not None
            and old.subject == new.subject and old.domain == new.domain
            and normalize_text(old.text) != normalize_text(new.text))


def _tokens(text: str) -> set[str]:
    from .index.text import cjk_tokens, latin_text

    return set(latin_text(text).split()) | set(cjk_tokens(text))


def value_swap(old: str, new: str) -> bool:
    """Each text has words the other lacks: a value was replaced ("英語で" -> "日本語で"),
    not merely restated or extended ("I like tea" -> "I really like tea")."""
    a, b = _tokens(old), _tokens(new)
    return bool(a - b) and bool(b - a)


def one_slot(old: str, new: str) -> bool:
    """A value swapped in one place of the same statement ("The team uses Jenkins for CI" ->
    "... GitHub Actions for CI"): each text has words the other lacks, and far fewer than
    the words they share. Two different facts on one subject ("Billing uses Stripe", "The
    billing service is written in Go") share too little to be one statement."""
    a, b = _tokens(old), _tokens(new)
    shared = a & b
    return value_swap(old, new) and len(shared) >= 2 * len(a - b) and len(shared) >= len(b - a)


def one_statement(old: str, new: str) -> bool:
    """Two texts that are mostly one statement: they share at least as many words as either
    has that the other lacks ("Standup is at 9:30", "Standup is at 10:00"). Monthly figures
    of two months, or a quote and a rollout plan, share a number but not a statement."""
    a, b = _tokens(old), _tokens(new)
    return len(a & b) >= max(len(a - b), len(b - a))


def settled(a: Memory, b: Memory) -> bool:
    """The pair already has an open conflict, or a person ruled on it."""
    return b.id in a.conflicts_with or b.id in a.reconciled_with


def conflict_id(old: str, new: str) -> str:
    return "c" + hashlib.sha256(f"conflict\x1f{old}\x1f{new}".encode()).hexdigest()[:15]


def between_agents(old: Memory, new: Memory) -> bool:
    """Two different agents wrote the two sides: neither wins by being newer; the conflict
    stays open for harmonize or a person."""
    return bool(old.agent and new.agent and old.agent != new.agent)


def conflict_events(old: Memory, new: Memory, rule: str, now: str, config, detail: str = "") -> list[dict]:
    cid = conflict_id(old.id, new.id)
    events = [{"op": "conflict", "at": now, "id": cid, "old": old.id, "new": new.id,
               "rule": rule, "detail": detail}]
    if config["conflicts"]["auto_supersede"] and not between_agents(old, new):
        events.append({"op": "supersede", "at": now, "old": old.id, "new": new.id, "conflict": cid,
                       "reason": f"conflict {cid} ({rule})"})
    return events


def policy_conflicts(state, now: str, config, records=None) -> list[dict]:
    """Active policies on one cause with opposite directions, one of them written by a person:
    a conflict for a person (memstore(7), POLICIES). Two learned ones are settled by the
    balance of their evidence instead (memstore.distill). ``records``: the state's records
    to look at, in canonical order (those it holds no policy among may be left out); default
    all."""
    from .policies import cause_key

    by_cause: dict[tuple, list[Memory]] = {}
    for m in (state.ordered() if records is None else records):
        if m.level == "policy" and m.status == "active" and (key := cause_key(m)) is not None:
            by_cause.setdefault(key, []).append(m)  # a rule with no subject has no cause to share
    events: list[dict] = []
    for group in by_cause.values():
        for i, old in enumerate(group):
            for new in group[i + 1:]:
                if (old.direction != new.direction and not settled(old, new)
                        and (old.author is not None or new.author is not None)):
                    events.append({"op": "conflict", "at": now, "id": conflict_id(old.id, new.id), "old": old.id,
                                   "new": new.id, "rule": "direction",
                                   "detail": f"{old.direction} vs {new.direction}"})
    return events


def records(events, state, access=None) -> list[dict]:
    """Every recorded conflict with its current standing, oldest first.

    ``events`` is the log (the CLI reads it); standing comes from the state:
    open (waiting for a person), superseded (settled automatically) or resolved.
    ``access``: an agent's (memstore.access); a conflict with a side it may not read is left
    out. A conflict between memories two different agents wrote names both (``agents``).
    """
    out: dict[str, dict] = {}
    for e in events:
        if e["op"] == "conflict":
            out.setdefault(e["id"], {"id": e["id"], "old": e["old"], "new": e["new"], "rule": e["rule"],
                                     "detail": e.get("detail", ""), "detected_at": e["at"],
                                     "state": "open", "resolution": None})
        elif e["op"] == "resolve" and e["id"] in out:
            out[e["id"]].update(state="resolved", resolution=e["keep"], resolved_at=e["at"])
        elif e["op"] == "supersede":
            cid = _settled_conflict(e)
            if cid is None:  # a supersede that names no conflict settles the pair's open one
                cid = next((r["id"] for r in out.values() if r["state"] == "open"
                            and {r["old"], r["new"]} == {e["old"], e["new"]}), None)
            if cid in out and out[cid]["state"] == "open":
                out[cid].update(state="superseded", resolved_at=e["at"])
    from .access import readable

    build = getattr(state.memories, "build", None)
    if build is not None:  # (a state opened from a snapshot: every side built in one pass, not one each:
        # a take of the snapshot's table for every side)
        build(sorted({i for rec in out.values() for i in (rec["old"], rec["new"])}))
    kept = []
    for rec in out.values():
        old, new = state.memories.get(rec["old"]), state.memories.get(rec["new"])
        if access is not None and any(m is None or not readable(access, m) for m in (old, new)):
            continue
        if rec["state"] == "open" and (old is None or new is None or new.id not in old.conflicts_with):
            rec["state"] = "closed"  # one side was forgotten or otherwise settled
        if old is not None and new is not None and old.agent and new.agent and old.agent != new.agent:
            rec["agents"] = {"old": old.agent, "new": new.agent}
        kept.append(rec)
    return kept


def _settled_conflict(e: dict) -> str | None:
    """The conflict a supersede event settled: its "conflict" field. Logs written before
    that field existed named it only in the reason ("conflict <id> (<rule>)")."""
    if "conflict" in e:
        return e["conflict"] if isinstance(e["conflict"], str) else None
    reason = e.get("reason")
    if isinstance(reason, str) and reason.startswith("conflict "):
        return reason.split()[1]
    return None


KEEP = ("new", "old", "both", "dismiss")


def resolve_event(record: dict, keep: str, now: str, note: str | None = None, *, person: bool = True) -> dict:
    """``person``: a person decided (the kept belief becomes certain); an agent's decision or
    an applied harmonize proposal keeps the kept side's confidence as it is."""
    event = {"op": "resolve", "at": now, "id": record["id"], "old": record["old"],
             "new": record["new"], "keep": keep}
    if keep in ("new", "old") and person:
        event["confidence"] = 1.0  # a person's word makes the kept belief certain (memstore(7), CONFLICTS)
    if note:
        event["reason"] = note
    return event
