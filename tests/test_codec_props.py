"""Property tests: records survive the codec unchanged; validate() fails only with UsageError."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.codec import dumps, dumps_line, dumps_lines, dumps_pretty, loads
from memstore.config import load_config
from memstore.errors import UsageError
from memstore.model import AXES, Memory, Salience, memory_from_dict, memory_id, memory_to_dict
from memstore.remember import FIELDS, build, decide_writes, validate
from memstore.store.lookup import Known

NOW = "2026-06-07T09:30:00Z"
CONFIG = load_config(None)

# Text as people write it: ASCII, Japanese, emoji, combining marks, controls (no lone surrogates,
# which are not text and cannot be UTF-8).
SAMPLES = ["hello world", "私はコーヒーが好き", "リリースは金曜にすることに決めた", "🍣🍵👍🏽", "e\u0301", "a\tb\nc",
           "\u0000", "\"quoted\" \\ back", "  spaced  "]
text = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=80),
    st.sampled_from(SAMPLES),
    st.lists(st.sampled_from(SAMPLES), min_size=1, max_size=4).map(" ".join),
)
opt_text = st.none() | text
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
count = st.integers(min_value=0, max_value=2**63 - 1)
salience = st.builds(Salience, **{a: unit for a in AXES})

# One strategy per annotation, so fields added to Memory later are covered without edits here.
BY_TYPE = {
    "str": text,
    "str | None": opt_text,
    "tuple[str, ...]": st.lists(text, max_size=4).map(tuple),
    "int": count,
    "int | None": st.none() | count,
    "float": unit,
    "Salience": salience,
    "bool": st.booleans(),
}


def _memories():
    kwargs = {}
    for f in dataclasses.fields(Memory):
        strategy = BY_TYPE.get(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""))
        assert strategy is not None, f"no strategy for Memory.{f.name}: {f.type}"
        kwargs[f.name] = strategy
    return st.builds(Memory, **kwargs)


memories = _memories()


@given(memories)
@settings(suppress_health_check=[HealthCheck.too_slow])  # a record is a large draw; a loaded CI machine is slow
def test_memory_round_trips_through_canonical_json(m):
    data = dumps(memory_to_dict(m))
    back = memory_from_dict(loads(data))
    assert back == m
    assert dumps(memory_to_dict(back)) == data  # same value, same bytes


def _by_constructor(d: dict) -> Memory:
    """memory_from_dict as it was before it was generated: the frozen dataclass's constructor."""
    d = dict(d)
    d["salience"] = Salience(**d.get("salience") or {})
    for name in ("actors", "time_buckets", "invalid_periods", "derived_from", "conflicts_with", "reconciled_with",
                 "against"):
        d[name] = tuple(d.get(name) or ())
    return Memory(**{k: v for k, v in d.items() if k in {f.name for f in dataclasses.fields(Memory)}})


_REQUIRED = ("id", "text", "recorded_at", "occurred_at", "precision")


@given(memories, st.sets(st.sampled_from([f.name for f in dataclasses.fields(Memory)])),
       st.dictionaries(st.sampled_from(["op", "extra", "memory"]), st.integers()))
def test_a_dict_with_fields_left_out_or_unknown_keys_reads_as_the_constructor_reads_it(m, left_out, extra):
    d = {k: v for k, v in memory_to_dict(m).items() if k not in left_out} | extra
    if any(name in left_out for name in _REQUIRED):
        with pytest.raises(KeyError):
            memory_from_dict(d)
        with pytest.raises(TypeError):
            _by_constructor(d)
    else:
        assert memory_from_dict(d) == _by_constructor(d)


@given(memories)
def test_canonical_json_is_sorted_compact_utf8(m):
    d = memory_to_dict(m)
    data = dumps(d)
    assert dumps_line(d) == data + b"\n"
    assert b"\n" not in data
    assert list(loads(data)) == sorted(d)
    assert loads(dumps_pretty(d)) == loads(data)
    data.decode("utf-8")  # strict UTF-8, never escaped surrogates


@given(text, opt_text, opt_text)
def test_ids_are_content_derived(t, subject, domain):
    mid = memory_id(t, subject, domain)
    assert mid == memory_id(t, subject, domain)
    assert len(mid) == 16 and mid[0] == "m" and int(mid[1:], 16) >= 0
    assert memory_id("  " + t.upper() + "  ", subject, domain) == memory_id(t.upper(), subject, domain)


# --- validate() on arbitrary input ----------------------------------------------------------

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), text, st.text(max_size=20),
    st.sampled_from(["2020", "2020-06", "2020-13", "2026-06-07T09:30:00Z", "yesterday", "0000",
                     "note", "decision", "human", "long", "positive", "0.5", "nan", "-1", "1e999"]),
)
python_leaf = json_leaf | st.binary(max_size=8) | st.just(math.inf) | st.integers(min_value=2**70) \
    | st.just(object()) | st.complex_numbers(allow_nan=True) \
    | st.sampled_from(["caf\udce9", "\ud800", "ok \udcff"])  # undecodable bytes from argv
values = st.recursive(python_leaf, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3)
                      | st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=2), max_leaves=6)
keys = st.sampled_from(sorted(FIELDS)) | st.text(max_size=8)
requests = st.one_of(
    st.dictionaries(keys, values, max_size=8),
    st.fixed_dictionaries({"text": text | values}, optional={k: values for k in sorted(FIELDS - {"text"})}),
    st.fixed_dictionaries({"text": st.sampled_from(["caf\udce9 au lait", "fine text"])},
                          optional={"subject": st.just("\udcff"), "importance": st.integers()}),
    st.fixed_dictionaries({"text": text}, optional={
        "kind": st.sampled_from(["note", "decision", "fact", "memo"]), "subject": opt_text,
        "domain": opt_text, "actors": st.lists(text, max_size=3), "outcome": st.sampled_from(["positive", "x"]),
        "occurred_at": st.sampled_from(["2020", "2020-06-07", "2020-06-07T10:00:00+09:00", "x"]),
        "importance": unit, "urgency": st.floats(), "confidence": unit | st.integers(),
        "source": st.sampled_from(["human", "agent", "tool", "imported", "?"]), "key": opt_text,
        "tier": st.sampled_from(["short", "long", "mid"]), "keep": st.booleans()}),
    values,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(requests, st.booleans())
def test_validate_raises_only_usage_errors(obj, options):
    try:
        draft = validate(obj, max_chars=1000, where="x:1: ", options=options)
    except UsageError as exc:
        assert "\n" not in str(exc) or str(exc).startswith("x:1: ")
        return
    # whatever validates can be planned and written as canonical JSON
    [outcome] = decide_writes([draft], Known(set(), {}), NOW, CONFIG)
    if outcome.event is not None:
        line = dumps_line(outcome.event)
        assert memory_from_dict({**loads(line)["memory"], "seq": 0}) == dataclasses.replace(outcome.memory, seq=0)
    memory = build(draft, NOW, CONFIG)
    assert memory is None or 0.0 <= memory.confidence <= 1.0


@given(st.lists(st.dictionaries(text, st.one_of(text, count, st.lists(text, max_size=3)), max_size=5), max_size=6))
def test_lines_joined_are_each_line(objs):
    """``dumps_lines`` copies each line out of orjson's buffer: the same bytes as joining them."""
    assert dumps_lines(objs) == b"".join(dumps_line(o) for o in objs)
    assert dumps_lines(iter(objs)) == dumps_lines(objs)
