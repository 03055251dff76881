"""Cue pruning without a full scan (memstore(7), RECALL).

Cues are unioned within a dimension and intersected across dimensions. The
intersection runs inside Tantivy, which drives it from the smallest posting
list and skips through the others, so the work follows the most selective cue
(``examined``: that list's length), not the store's size (``full_scan``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..index.lexical import LexicalIndex


@dataclass(frozen=True)
class Pruned:
    query: object | None  # the filter query; None: no cue given, everything is a candidate
    candidates: int  # records matching every cue
    examined: int  # length of the smallest posting list the intersection starts from
    full_scan: int  # what a scan of every record would have cost


def normalise_cues(cues: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop empty dimensions; lower-case the case-insensitive ones (domain is exact)."""
    out = {}
    for dim, values in cues.items():
        vals = [v if dim in ("domain", "bucket") else v.casefold() for v in values if v]
        if vals:
            out[dim] = sorted(set(vals))
    return out


def prune(lex: LexicalIndex, cues: dict[str, list[str]]) -> Pruned:
    total = lex.count()
    cues = normalise_cues(cues)
    if not cues:
        return Pruned(None, total, 0, total)
    lists = sorted((lex.posting_length(dim, vals), dim) for dim, vals in cues.items())
    query = lex.all_of([lex.term_set(dim, cues[dim]) for _n, dim in lists])
    return Pruned(query, lex.count(query) if len(lists) > 1 else lists[0][0], lists[0][0], total)
