"""The store's health in numbers (``memstore stats``): counts by tier, level and status,
open conflicts, active policies, and a histogram of effective salience at ``now``.

Two roads to one result. ``tally`` takes records (the fold). ``tally_current`` reads the
records index's columns (no record decoded: ~1 s instead of ~100 s at a million) and the
records the log changed after its watermark. Its salience arithmetic is numpy's version of
``salience.effective``, in the same order of operations; where the two could round apart
(a value within 1e-6 of a bin edge or the floor) the record is fetched and scored by
``effective`` itself, so both roads give the same numbers (a test holds them to it).
"""

from __future__ import annotations

from .model import AXES, KINDS, LEVELS, STATUSES, TIERS, Memory
from .salience import effective, half_lives, is_protected

BINS = 10
_EDGE = 1e-6


def _empty() -> dict:
    return {"tier": dict.fromkeys(TIERS, 0), "level": dict.fromkeys(LEVELS, 0), "status": dict.fromkeys(STATUSES, 0)}


def _result(now: str, config, counts: dict, total: int, conflicts: int, policies: int, values: list[float],
            protected: int) -> dict:
    bins = [0] * BINS
    for v in values:
        bins[min(BINS - 1, int(v * BINS))] += 1
    floor = config["distill"]["floor"]
    return {
        "at": now, "memories": total, **counts, "open_conflicts": conflicts // 2,
        "active_policies": policies,
        "effective": {
            "active": len(values), "bins": bins, "width": 1 / BINS, "protected": protected,
            "under_floor": sum(v < floor for v in values), "floor": floor,
        },
    }


def tally(memories: list[Memory], now: str, config) -> dict:
    counts = _empty()
    for m in memories:
        for name in counts:
            counts[name][getattr(m, name)] = counts[name].get(getattr(m, name), 0) + 1
    active = [m for m in memories if m.status == "active"]
    threshold = config["salience"]["protect_threshold"]
    return _result(now, config, counts, len(memories), sum(len(m.conflicts_with) for m in memories),
                   sum(m.level == "policy" for m in active), [effective(m, now, config) for m in active],
                   sum(is_protected(m.salience, threshold) for m in active))


def tally_current(current, now: str, config) -> dict:
    """``tally`` of every record, from the records index (``index.current``)."""
    import numpy as np

    from .timeutil import parse_ts

    cols = current.index.columns()
    overlay = list(current.overlay.values())
    if not cols:
        return tally(overlay, now, config)
    keep = ~np.isin(cols["seq"], np.array([m.seq for m in overlay], dtype=np.int64))
    cols = {k: v[keep] for k, v in cols.items()}
    code = cols["codes"]
    status, tier, level, kind, conflicts = (code & 0xF, code >> 4 & 0xF, code >> 8 & 0xF, code >> 12 & 0xFF,
                                            code >> 20 & 0xFFFF)
    counts = _empty()
    for name, known, column in (("tier", TIERS, tier), ("level", LEVELS, level), ("status", STATUSES, status)):
        found = np.bincount(column, minlength=len(known) + 1)
        for i, value in enumerate(known):
            counts[name][value] += int(found[i])
        if found[len(known):].any():  # a value this version does not know: only the fold can name it
            return tally([*current.index.all(), *overlay], now, config)
    active = status == STATUSES.index("active")
    cfg = config["salience"]
    axes = [cols[f"a_{a}"][active] for a in AXES]
    conf, recalls, used, kinds = cols["confidence"][active], cols["recalls"][active], cols["used"][active], kind[active]
    seqs = cols["seq"][active]
    threshold = cfg["protect_threshold"]
    protected = (axes[AXES.index("risk")] >= threshold) | (axes[AXES.index("importance")] >= threshold)
    days = np.maximum((int(parse_ts(now).timestamp()) - used) / 86400.0, 0.0)
    weights = cfg["weights"]
    total = np.zeros(len(seqs))
    for i, a in enumerate(AXES):  # the order of effective's sum, axis by axis
        half = np.array([h[i] for h in _half_lives(cfg)], dtype=np.float64)[kinds]
        total = total + np.where(protected, weights[a] * axes[i], weights[a] * axes[i] * 0.5 ** (days / half))
    raw = total * (0.6 + 0.4 * conf) * (1.0 + np.log1p(recalls))
    value = np.minimum(1.0, raw)
    floored = axes[AXES.index("importance")] >= cfg["floor_importance"]
    value = np.where(floored, np.maximum(value, cfg["importance_floor"]), value)
    value = np.round(value, 6)
    edges = np.append(np.arange(1, BINS) / BINS, config["distill"]["floor"])
    clamped = (raw > 1.0 + _EDGE) | (floored & (np.minimum(1.0, raw) < cfg["importance_floor"] - _EDGE))
    near = ~clamped & (np.abs(value[:, None] - edges[None, :]).min(axis=1) < _EDGE)
    values = value.tolist()
    if near.any():  # where numpy and Python could round apart: Python's own answer
        at = np.flatnonzero(near)
        exact = current.index.by_seqs([int(seqs[i]) for i in at])
        for i in at:
            values[i] = effective(exact[int(seqs[i])], now, config)
    live = [m for m in overlay if m.status == "active"]
    for name in counts:
        for m in overlay:
            counts[name][getattr(m, name)] = counts[name].get(getattr(m, name), 0) + 1
    return _result(
        now, config, counts, len(code) + len(overlay),
        int(conflicts.sum()) + sum(len(m.conflicts_with) for m in overlay),
        int(((level == LEVELS.index("policy")) & active).sum()) + sum(m.level == "policy" for m in live),
        values + [effective(m, now, config) for m in live],
        int(protected.sum()) + sum(is_protected(m.salience, threshold) for m in live),
    )


def _half_lives(cfg) -> list[tuple[float, ...]]:
    """Per kind position (KINDS, then one for a kind this version does not know), each axis's
    half-life."""
    return [half_lives(k, cfg) for k in KINDS] + [half_lives("", cfg)]
