"""bench/bulk_night.py's generator: its ground truth holds for the notes it writes.

Runs the generator only (no store, no CLI): the benchmark's verdicts are only as good as
the pairs it records.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bulk_night.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_bulk_night", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up while it loads)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def gen(bench):
    return bench.generate(1500, seed=11, days=5)


def test_same_seed_same_notes(bench, gen):
    again = bench.generate(1500, seed=11, days=5)
    assert again.notes == gen.notes and again.updates == gen.updates and again.update_of == gen.update_of
    other = bench.generate(1500, seed=12, days=5)
    assert [n.text for n in other.notes] != [n.text for n in gen.notes]


def test_shape(gen):
    notes = gen.notes
    assert [n.index for n in notes] == list(range(1500))
    assert sorted({n.day for n in notes}) == [0, 1, 2, 3, 4]
    assert [n.day for n in notes] == sorted(n.day for n in notes)  # days in order, one file a day
    origins = Counter(n.origin for n in notes)
    assert 40 <= origins["repeat"] <= 110 and 40 <= origins["paraphrase"] <= 110 and origins["update"] >= 10
    assert 0.3 <= sum(n.subject is not None for n in notes) / len(notes) <= 0.5
    assert 0.2 <= sum(n.domain is not None for n in notes) / len(notes) <= 0.4
    assert len({n.family for n in notes}) >= 35


def test_repeats_are_exact_and_paraphrases_are_not(gen):
    notes = gen.notes
    for n in notes:
        if n.origin == "original":
            assert n.source is None
            continue
        src = notes[n.source]
        assert n.source < n.index and src.day <= n.day  # the pair points back to a note written before
        assert (n.subject, n.domain) == (src.subject, src.domain)
        if n.origin == "repeat":
            assert n.text == src.text and n.claim == src.claim
        elif n.origin == "paraphrase":
            assert src.origin == "original" and n.claim == src.claim
            assert n.text != src.text and n.phrasing != src.phrasing and n.slots == src.slots


def test_originals_are_distinct_claims(gen):
    originals = [n for n in gen.notes if n.origin == "original"]
    assert len({n.claim for n in originals}) == len(originals)
    assert len({(n.text, n.subject, n.domain) for n in originals}) == len(originals)
    # one text, one claim: a text with its labels never stands for two claims
    claim_of: dict = {}
    for n in gen.notes:
        assert claim_of.setdefault((n.text, n.subject, n.domain), n.claim) == n.claim


def test_updates_pair_real_notes(gen):
    notes = gen.notes
    assert len(gen.updates) == sum(n.origin == "update" for n in notes) == len(gen.update_of)
    olds = [o for o, _ in gen.updates]
    assert len(set(olds)) == len(olds)  # each fact is updated at most once
    for old, new in gen.updates:
        o, n = notes[old], notes[new]
        assert old < new and n.origin == "update" and n.source == old and o.origin == "original"
        assert gen.update_of[n.claim] == o.claim and n.claim != o.claim
        assert (n.subject, n.domain) == (o.subject, o.domain)  # updates stay within a domain
        assert n.text != o.text


def test_one_original_per_fact(bench, gen):
    # two originals of one fact (two ports for one service) would be an update the truth misses
    keys = [(n.family, *(dict(n.slots)[k] for k in bench.FAMILIES[n.family].key))
            for n in gen.notes if n.origin == "original" and bench.FAMILIES[n.family].key]
    assert keys and len(set(keys)) == len(keys)
