"""The store's health in numbers (``memstore stats``): counts by tier, level and status,
open conflicts, active policies, and a histogram of effective salience at ``now``.

Two roads to one result. ``tally`` takes records (the fold). ``tally_current`` reads the
records index's columns (no record decoded) and the records the log changed after its
watermark. Its salience arithmetic is numpy's version of ``salience.effective``, in the
same order of operations; where the two could round apart the record is fetched and
scored by ``effective`` itself (``Columns.effective``), so both roads give the same numbers
(a test holds them to it).
"""

from __future__ import annotations

from .model import AXES, KINDS, LEVELS, STATUSES, TIERS, Memory
from .salience import effective, half_lives, is_protected

BINS = 10
BLOCK = 1 << 17  # rows scored at a time (Columns.effective)


def _empty() -> dict:
    return {"tier": dict.fromkeys(TIERS, 0), "level": dict.fromkeys(LEVELS, 0), "status": dict.fromkeys(STATUSES, 0)}


def _result(now: str, config, counts: dict, total: int, conflicts: int, policies: int, values,
            protected: int) -> dict:
    """``values``: the active records' effective salience as a float64 array (``stats`` at a
    million records counts its bins without a Python loop)."""
    import numpy as np

    floor = config["distill"]["floor"]
    bins = np.bincount(np.minimum((values * BINS).astype(np.int64), BINS - 1), minlength=BINS).tolist()
    under = int((values < floor).sum())
    return {
        "at": now, "memories": total, **counts, "open_conflicts": conflicts // 2,
        "active_policies": policies,
        "effective": {
            "active": len(values), "bins": bins, "width": 1 / BINS, "protected": protected,
            "under_floor": under, "floor": floor,
        },
    }


def tally(memories: list[Memory], now: str, config) -> dict:
    import numpy as np

    counts = _empty()
    for m in memories:
        for name in counts:
            counts[name][getattr(m, name)] = counts[name].get(getattr(m, name), 0) + 1
    active = [m for m in memories if m.status == "active"]
    threshold = config["salience"]["protect_threshold"]
    return _result(now, config, counts, len(memories), sum(len(m.conflicts_with) for m in memories),
                   sum(m.level == "policy" for m in active),
                   np.array([effective(m, now, config) for m in active], dtype=np.float64),
                   sum(is_protected(m.salience, threshold) for m in active))


class Columns:
    """The records index's columns less the records the log changed after its watermark
    (``overlay``, scored by Python), with the exact effective salience of chosen rows."""

    def __init__(self, current):
        import numpy as np

        self.current = current
        full, overlay = current.columns()
        self.overlay = list(overlay.values())
        at = None  # the rows kept, as positions in ``full`` (None: all of them)
        if full and self.overlay:  # positions, not a copy of every column of a million rows
            at = np.flatnonzero(~np.isin(full["seq"], np.array([m.seq for m in self.overlay], dtype=np.int64)))
        self.cols = _Kept(full, at)
        code = self.cols["codes"] if full else np.zeros(0, dtype=np.int64)
        # small integers (a byte a row in a column, not 8)
        self.status, self.tier = (code & 0xF).astype(np.uint8), (code >> 4 & 0xF).astype(np.uint8)
        self.level = (code >> 8 & 0xF).astype(np.uint8)  # (kinds: read per block, from the codes)
        self.conflicts = (code >> 20 & 0xFFFF).astype(np.uint16)
        self.seq = self.cols["seq"] if full else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.seq)

    def effective(self, rows, now: str, config):
        """``salience.effective`` at ``now`` of the rows (a boolean mask), as Python computes it:
        numpy's arithmetic in effective's order, then Python's own value for each row where
        the two could round apart (within 1e-9 of a rounding half or of a clamp). Computed
        ``BLOCK`` rows at a time, so its temporaries stay small whatever the store's size."""
        import numpy as np

        from .timeutil import parse_ts

        if not len(self.seq):
            return np.zeros(0)
        at = np.flatnonzero(rows)
        value = np.zeros(len(at))
        unsure = []
        t = int(parse_ts(now).timestamp())
        for start in range(0, len(at), BLOCK):
            part = at[start:start + BLOCK]
            value[start:start + len(part)], doubt = self._effective(part, t, config)
            unsure.append(start + np.flatnonzero(doubt))
        unsure = np.concatenate(unsure) if unsure else np.zeros(0, dtype=np.int64)
        if len(unsure):
            seqs = self.seq[at[unsure]]
            exact = self.current.index.by_seqs([int(q) for q in seqs])
            value[unsure] = [effective(exact[int(q)], now, config) for q in seqs]
        return value

    def _effective(self, part, t: int, config):
        """(the rounded values of the rows at positions ``part``, where they could be off)."""
        c = self.cols
        part = c.positions(part)  # positions in the full columns
        return effective_arrays([c.full[f"a_{a}"][part] for a in AXES], t - c.full["used"][part],
                                c.full["codes"][part] >> 12 & 0xFF, c.full["confidence"][part],
                                c.full["recalls"][part], config)


def effective_arrays(axes: list, seconds, kinds, confidence, recalls, config):
    """numpy's ``salience.effective``, in its order of operations: the rounded values and
    where they could round apart from Python's (within 1e-3 of a rounding half at the sixth
    decimal, or within 1e-9 of a clamp). ``axes``: one array per axis (AXES order);
    ``seconds``: since last use; ``kinds``: positions in KINDS (len(KINDS): one this version
    does not know)."""
    import numpy as np

    cfg = config["salience"]
    threshold = cfg["protect_threshold"]
    protected = (axes[AXES.index("risk")] >= threshold) | (axes[AXES.index("importance")] >= threshold)
    days = np.maximum(seconds / 86400.0, 0.0)
    table = np.array(_half_lives(cfg), dtype=np.float64)
    total = np.zeros(len(days))
    for i, a in enumerate(AXES):  # the order of effective's sum, axis by axis
        w = cfg["weights"][a]
        total = total + np.where(protected, w * axes[i], w * axes[i] * 0.5 ** (days / table[kinds, i]))
    raw = total * (0.6 + 0.4 * confidence) * (1.0 + np.log1p(recalls))
    value = np.minimum(1.0, raw)
    floored = axes[AXES.index("importance")] >= cfg["floor_importance"]
    value = np.where(floored, np.maximum(value, cfg["importance_floor"]), value)
    scaled = value * 1e6
    unsure = ((np.abs(scaled - np.floor(scaled) - 0.5) < 1e-3) | (np.abs(raw - 1.0) < 1e-9)
              | (floored & (np.abs(np.minimum(1.0, raw) - cfg["importance_floor"]) < 1e-9)))
    return np.round(value, 6), unsure


def effective_of(memories: list[Memory], now: str, config) -> list[float]:
    """``[salience.effective(m, now, config) for m in memories]``, the same numbers, by numpy
    (``effective_arrays``) with Python's own value where the two could round apart: distill's
    floor test over a million records."""
    import numpy as np

    from .salience import last_use
    from .timeutil import parse_ts

    if not memories:
        return []
    n = len(memories)
    axes = [np.fromiter((getattr(m.salience, a) for m in memories), dtype=np.float64, count=n) for a in AXES]
    seconds: dict[str, int] = {}  # last-use times repeat: each parsed once
    t = int(parse_ts(now).timestamp())
    used = np.fromiter((seconds.get(u) or seconds.setdefault(u, t - int(parse_ts(u).timestamp()))
                        for u in map(last_use, memories)), dtype=np.int64, count=n)
    code = {k: i for i, k in enumerate(KINDS)}
    kinds = np.fromiter((code.get(m.kind, len(KINDS)) for m in memories), dtype=np.int64, count=n)
    confidence = np.fromiter((m.confidence for m in memories), dtype=np.float64, count=n)
    recalls = np.fromiter((m.recall_count for m in memories), dtype=np.int64, count=n)
    value, unsure = effective_arrays(axes, used, kinds, confidence, recalls, config)
    out = value.tolist()
    for i in np.flatnonzero(unsure).tolist():
        out[i] = effective(memories[i], now, config)
    return out


class _Kept:
    """Columns less the rows an overlay replaces, read without copying a million rows: a
    column asked for by name is the kept rows' copy; ``full`` and ``positions`` let a block
    of kept rows be read from the full columns directly."""

    def __init__(self, full: dict, at):
        self.full, self.at = full, at

    def __bool__(self) -> bool:
        return bool(self.full)

    def __getitem__(self, name: str):
        column = self.full[name]
        return column if self.at is None else column[self.at]

    def positions(self, part):
        return part if self.at is None else self.at[part]


def tally_current(current, now: str, config) -> dict:
    """``tally`` of every record, from the records index (``index.current``)."""
    import numpy as np

    cols = Columns(current)
    overlay = cols.overlay
    counts = _empty()
    for name, known, column in (("tier", TIERS, cols.tier), ("level", LEVELS, cols.level),
                                ("status", STATUSES, cols.status)):
        found = np.bincount(column, minlength=len(known) + 1)
        for i, value in enumerate(known):
            counts[name][value] += int(found[i])
        if found[len(known):].any():  # a value this version does not know: only the fold can name it
            every = {m.id: m for m in current.index.all()} | {m.id: m for m in overlay}
            return tally(sorted(every.values(), key=lambda m: (m.seq, m.id)), now, config)
    for name in counts:
        for m in overlay:
            counts[name][getattr(m, name)] = counts[name].get(getattr(m, name), 0) + 1
    active = cols.status == STATUSES.index("active")
    threshold = config["salience"]["protect_threshold"]
    live = [m for m in overlay if m.status == "active"]
    protected = 0
    if len(cols):
        c = cols.cols
        protected = int(((c["a_risk"] >= threshold) | (c["a_importance"] >= threshold))[active].sum())
    return _result(
        now, config, counts, len(cols) + len(overlay),
        int(cols.conflicts.sum()) + sum(len(m.conflicts_with) for m in overlay),
        int(((cols.level == LEVELS.index("policy")) & active).sum()) + sum(m.level == "policy" for m in live),
        np.concatenate([cols.effective(active, now, config), np.array([effective(m, now, config) for m in live],
                                                                        dtype=np.float64)]),
        protected + sum(is_protected(m.salience, threshold) for m in live),
    )


def _half_lives(cfg) -> list[tuple[float, ...]]:
    """Per kind position (KINDS, then one for a kind this version does not know), each axis's
    half-life."""
    return [half_lives(k, cfg) for k in KINDS] + [half_lives("", cfg)]
