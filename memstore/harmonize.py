"""Harmonize: settle beliefs that two agents hold against each other.

For every open conflict whose sides were written by two different agents, propose
which to keep: the side with more evidence (times it was said, plus the outcomes
behind a policy, less those against it), then the surer one (confidence), then the
newer. A proposal is only a proposal: ``memstore harmonize --apply`` (or the tool's
``apply``) records it as a resolution, which a person can still overturn.
"""

from __future__ import annotations

from .model import Memory


def evidence(m: Memory) -> int:
    return m.mention_count + len(m.derived_from) - len(m.against)


def _standing(m: Memory) -> tuple:
    return (evidence(m), round(m.confidence, 4))


def proposals(conflicts: list[dict], state) -> list[dict]:
    """One proposal per open conflict between two agents, in the conflicts' order."""
    out = []
    for rec in conflicts:
        if rec["state"] != "open" or "agents" not in rec:
            continue
        old, new = state.memories[rec["old"]], state.memories[rec["new"]]
        a, b = _standing(old), _standing(new)
        keep = "old" if a > b else "new"  # equal standing: the newer statement
        won, lost = (old, new) if keep == "old" else (new, old)
        why = (f"harmonize: {won.agent}'s belief has evidence {evidence(won)} and confidence "
               f"{won.confidence:.2f} against {lost.agent}'s {evidence(lost)} and {lost.confidence:.2f}"
               + (" (equal: the newer is kept)" if a == b else ""))
        out.append({"conflict": rec["id"], "old": old.id, "new": new.id, "agents": rec["agents"],
                    "keep": keep, "kept": won.id, "why": why,
                    "sides": {side: {"id": m.id, "agent": m.agent, "text": m.text, "evidence": evidence(m),
                                     "confidence": round(m.confidence, 4), "recorded_at": m.recorded_at}
                              for side, m in (("old", old), ("new", new))}})
    return out
