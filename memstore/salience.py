"""The salience model: seven axes, a confidence gate, per-axis half-life decay by kind.

Used by recall (ranking), distill (the floor) and ``show --explain``. Pure
functions of (record, config, now); documented with a worked example in
memstore(7) (SALIENCE explains each line below, WORKED EXAMPLE works one through).

    composite = sum(weight[a] * axis[a]) * (0.6 + 0.4 * confidence)
    protected = risk >= 0.7 or importance >= 0.7
    half_life[a] = min(half_life_days[a], kind_half_life_days[kind])
    decayed axis[a] at now = axis[a] * 0.5 ** (days since last use / half_life[a])
    effective = min(1, composite(decayed) * (1 + ln(1 + recall_count)))
    key memories (importance >= floor_importance) never fall below importance_floor
    protected memories do not decay.
"""

from __future__ import annotations

import math

from .model import AXES, Memory, Salience
from .timeutil import days_between


def gate(confidence: float) -> float:
    """Uncertain memories lose up to 40% of their weight, never all of it
    (memstore(7), SALIENCE)."""
    return 0.6 + 0.4 * confidence


def composite(s: Salience, confidence: float, weights) -> float:
    return sum(weights[a] * getattr(s, a) for a in AXES) * gate(confidence)


def is_protected(s: Salience, threshold: float) -> bool:
    return s.risk >= threshold or s.importance >= threshold


def last_use(m: Memory) -> str:
    """Decay runs from the latest of creation, reinforcement and recall."""
    return max(t for t in (m.recorded_at, m.last_reinforced_at, m.last_recalled_at) if t)


def decay_factor(days: float, half_life: float) -> float:
    return 0.5 ** (max(days, 0.0) / half_life)


def half_lives(kind: str, cfg) -> tuple[float, ...]:
    """Each axis's half-life for a memory of ``kind`` (in AXES order): the kind caps how
    long anything about it lasts; an axis that fades sooner (urgency) keeps its own."""
    cap = cfg["kind_half_life_days"].get(kind)
    half = cfg["half_life_days"]
    if cap is None:  # a kind this version does not know (a newer log): axes alone
        return tuple(half[a] for a in AXES)
    return tuple(min(half[a], cap) for a in AXES)


def explain(m: Memory, now: str, config) -> dict:
    """Every term of the effective salience at ``now``, for `show --explain` and recall.

    Per axis, ``half_life_days`` is the half-life used: the shorter of the axis's own
    (``axis_half_life_days``) and the kind's (``kind_half_life_days``, also top-level)."""
    cfg = config["salience"]
    weights, half = cfg["weights"], cfg["half_life_days"]
    protected = is_protected(m.salience, cfg["protect_threshold"])
    days = days_between(last_use(m), now)
    kind_half = cfg["kind_half_life_days"].get(m.kind)
    axes = {}
    decayed = {}
    for a, h in zip(AXES, half_lives(m.kind, cfg), strict=True):
        value = getattr(m.salience, a)
        f = 1.0 if protected else decay_factor(days, h)
        decayed[a] = value * f
        axes[a] = {"value": value, "weight": weights[a], "half_life_days": h,
                   "axis_half_life_days": half[a], "decay": round(f, 6),
                   "decayed": round(value * f, 6)}
    base = composite(m.salience, m.confidence, weights)
    now_composite = composite(Salience(**decayed), m.confidence, weights)
    boost = 1.0 + math.log1p(m.recall_count)
    effective = min(1.0, now_composite * boost)
    floor = cfg["importance_floor"] if m.salience.importance >= cfg["floor_importance"] else 0.0
    effective = max(effective, floor)
    return {
        "kind": m.kind,
        "kind_half_life_days": kind_half,
        "axes": axes,
        "confidence": m.confidence,
        "gate": round(gate(m.confidence), 6),
        "composite": round(base, 6),
        "days_since_use": round(days, 4),
        "protected": protected,
        "decayed_composite": round(now_composite, 6),
        "recall_boost": round(boost, 6),
        "floor": floor,
        "effective": round(effective, 6),
    }


def effective(m: Memory, now: str, config) -> float:
    """Effective salience in [0, 1] at ``now`` (the value recall and distill use).

    The same arithmetic as ``explain`` without building the breakdown (hot path).
    """
    cfg = config["salience"]
    weights = cfg["weights"]
    s = m.salience
    if is_protected(s, cfg["protect_threshold"]):
        total = sum(weights[a] * getattr(s, a) for a in AXES)
    else:
        days = max(days_between(last_use(m), now), 0.0)
        total = sum(weights[a] * getattr(s, a) * 0.5 ** (days / h)
                    for a, h in zip(AXES, half_lives(m.kind, cfg), strict=True))
    value = min(1.0, total * gate(m.confidence) * (1.0 + math.log1p(m.recall_count)))
    if s.importance >= cfg["floor_importance"]:
        value = max(value, cfg["importance_floor"])
    return round(value, 6)
