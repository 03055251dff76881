"""Cue pruning without a full scan [000].

Cues are unioned within a dimension and intersected across dimensions, starting
from the smallest posting list: only that list's records are examined, so the
cost follows the most selective cue, not the store's size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..index.records import RecordIndex, cue_values
from ..model import Memory


@dataclass(frozen=True)
class Pruned:
    candidates: list[Memory] | None  # None: no cue given, every record is a candidate
    examined: int
    full_scan: int  # what a scan of every record would have cost


def normalise_cues(cues: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop empty dimensions; lower-case the case-insensitive ones (domain is exact)."""
    out = {}
    for dim, values in cues.items():
        vals = [v if dim in ("domain", "bucket") else v.casefold() for v in values if v]
        if vals:
            out[dim] = sorted(set(vals))
    return out


def prune(rec: RecordIndex, cues: dict[str, list[str]]) -> Pruned:
    total = rec.count()
    cues = normalise_cues(cues)
    if not cues:
        return Pruned(None, 0, total)
    sized = sorted((rec.posting_size(dim, vals), dim) for dim, vals in cues.items())
    _size, first = sized[0]
    postings = rec.posting(first, cues[first])
    rest = [(dim, set(cues[dim])) for _n, dim in sized[1:]]
    kept = []
    for m in postings:
        values = cue_values(m)
        if all(wanted.intersection(values[dim]) for dim, wanted in rest):
            kept.append(m)
    kept.sort(key=lambda m: m.seq)
    return Pruned(kept, len(postings), total)
