"""Hostile memstore.toml values: every numeric setting has a documented
range; NaN, infinities, out-of-range and fractional whole numbers are refused with one
`Error:` line naming the key (exit 2), no traceback, and the store left as it was."""

from __future__ import annotations

import pytest

from memstore.config import SETTINGS, load_config
from memstore.errors import UsageError
from tests.reliability_support import HASHING, T0, cli, digest, make_store


def _bad_values(setting) -> list:
    bad = [float("nan"), float("inf"), float("-inf"), setting.lo - 1, setting.hi * 10 + 1]
    if setting.integer:
        bad.append(setting.lo + 0.5)
    return bad


def _cases():
    for section, settings in SETTINGS.items():
        for key, setting in settings.items():
            if setting.lo is None:
                continue
            name = f"{section}.{key}"
            if isinstance(setting.value, dict):
                axis = next(iter(setting.value))
                yield pytest.param(f"[{section}.{key}]\n{axis} = {{v}}\n", f"{name}.{axis}", setting, id=name)
            else:
                yield pytest.param(f"[{section}]\n{key} = {{v}}\n", name, setting, id=name)


def _toml(v) -> str:
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def test_every_number_has_a_range():
    switches = lambda v: isinstance(v, dict) and all(isinstance(x, bool) for x in v.values())  # noqa: E731
    unranged = [f"{s}.{k}" for s, st in SETTINGS.items() for k, v in st.items()
                if isinstance(v.value, (int, float, dict)) and not isinstance(v.value, bool)
                and not switches(v.value) and v.lo is None]
    assert unranged == []
    for settings in SETTINGS.values():
        for s in settings.values():
            if s.lo is not None:
                assert "Range: " in s.doc
                values = s.value.values() if isinstance(s.value, dict) else [s.value]
                assert all(s.lo <= v <= s.hi for v in values)


@pytest.mark.parametrize("template,name,setting", list(_cases()))
def test_out_of_range_refused_by_load_config(template, name, setting):
    for v in _bad_values(setting):
        with pytest.raises(UsageError) as exc:
            load_config(template.format(v=_toml(v)))
        assert str(exc.value).startswith(f"memstore.toml: {name} "), str(exc.value)
        assert "is out of range; use a " in str(exc.value)


@pytest.mark.parametrize("template,name,setting", list(_cases()))
def test_out_of_range_refused_by_cli(tmp_path, template, name, setting):
    store = make_store(tmp_path / "s")
    assert cli("remember", "the first memory", "--store", store, "--now", T0)[0] == 0
    bad = template.format(v="nan")
    bad = bad.replace("[embedder]\n", HASHING) if "[embedder]" in bad else HASHING + bad
    (store / "memstore.toml").write_text(bad)
    before = digest(store)
    for argv in (("remember", "another one"), ("recall", "first"), ("consolidate",)):
        rc, out, err = cli(*argv, "--store", store, "--now", "2026-06-08T00:00:00Z")
        assert rc == 2, (argv, out, err)
        assert out == ""
        assert err.count("\n") == 1 and err.startswith(f"Error: memstore.toml: {name} nan is out of range")
        assert "Traceback" not in err
    assert digest(store) == before


@pytest.mark.parametrize("text,message", [
    ("[memory]\nmax_text_chars = inf", "memory.max_text_chars inf is out of range; "
                                       "use a whole number from 1 to 1000000"),
    ("[memory]\nshort_ttl_days = 1e308", "memory.short_ttl_days 1e+308 is out of range; "
                                         "use a number from 0.01 to 3650"),
    ("[salience.half_life_days]\nrisk = 0", "salience.half_life_days.risk 0 is out of range; "
                                            "use a number from 0.01 to 36500"),
    ("[recall]\nrrf_k = -5", "recall.rrf_k -5 is out of range; use a whole number from 0 to 1000"),
    ("[embedder]\nhashing_dim = 0", "embedder.hashing_dim 0 is out of range; "
                                    "use a whole number from 8 to 4096"),
    ("[embedder]\nhashing_dim = 1e8", "embedder.hashing_dim 100000000.0 is out of range; "
                                      "use a whole number from 8 to 4096"),
    ("[consolidate]\nlookback_days = inf", "consolidate.lookback_days inf is out of range; "
                                           "use a number from 0 to 36500"),
    ("[recall]\nk = 2.5", "recall.k 2.5 is out of range; use a whole number from 1 to 1000"),
    ("[salience.weights]\nrisk = nan", "salience.weights.risk nan is out of range; "
                                       "use a number from 0 to 1"),
    ("[consolidate]\ndup_lower = 0.98", "consolidate.dup_lower 0.98 is above consolidate.dup_upper "
                                        "0.97; make it at most 0.97"),
])
def test_issue_examples(text, message):
    with pytest.raises(UsageError, match="^memstore.toml: " + message.replace(".", r"\.")
                       .replace("(", r"\(").replace("+", r"\+") + "$"):
        load_config(text)


def test_whole_floats_and_edges_accepted():
    cfg = load_config("[embedder]\nhashing_dim = 512.0\n[recall]\nrrf_k = 0\n"
                      "[memory]\nshort_ttl_days = 3650\n")
    assert cfg["embedder"]["hashing_dim"] == 512 and type(cfg["embedder"]["hashing_dim"]) is int
    assert cfg["recall"]["rrf_k"] == 0
    assert cfg["memory"]["short_ttl_days"] == 3650.0 and type(cfg["memory"]["short_ttl_days"]) is float
