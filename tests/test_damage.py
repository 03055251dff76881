"""The damaged-file harness (tests/damage_support.py): one damage for every kind of file
under a store and the embedding cache. Every read must answer as a store rebuilt from the
damaged store's own log would, or refuse with one clear `Error:` line (a warning is
acceptable only when the log itself was damaged); nothing silently wrong, no crash, no hang;
and `verify --repair` must restore the exact answers. The full run (every damage on every
kind) is `python bench/damage.py`."""

from __future__ import annotations

import pytest
from damage_support import damage_run, prepare, run_damage, targets

SEED = 20260607


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return damage_run(tmp_path_factory.mktemp("damage"), seed=SEED, sample=1000)


def test_every_file_kind_is_damaged(report):
    kinds = {r.kind for r in report.results}
    for want in ("store:log/YYYY-MM.jsonl (first)", "store:log/YYYY-MM.jsonl (last)",
                 "store:snapshots/state-N.parquet", "store:index/vectors.usearch",
                 "store:index/vectors.usearch.keys", "store:index/vectors.json",
                 "store:index/records/manifest.json", "store:index/lexical/manifest.json",
                 "store:index/records/SEGMENT.store", "store:index/lexical/SEGMENT.store",
                 "cache:hashing-256.bin"):
        assert want in kinds, sorted(kinds)


def test_an_undamaged_store_answers_as_expected(tmp_path):
    """The harness's control: with no damage every read is EXACT (so a failure below is real)."""
    w = prepare(tmp_path / "w")
    kind, rel = targets(w.files)[0]
    r = run_damage(w, kind, rel, "none", SEED, 0)
    assert all(c == "EXACT" for _n, c in r.classes), r.classes
    assert all(c == "EXACT" for _n, c in r.after), r.after


def _cases(report, pred):
    return [line for line, r in zip(report.bad(), [r for r in report.results if _broke(r)], strict=True)
            if pred(r)]


def _broke(r):
    return (any(c in ("SILENT-WRONG", "CRASH", "HANG") or (c == "WARNED" and not r.log_damage)
                for _n, c in r.classes)
            or any(c != "EXACT" for _n, c in r.after) or r.repair != "OK")


def test_no_crash_or_hang(report):
    bad = _cases(report, lambda r: r.crashes or any(c == "HANG" for _n, c in r.classes + r.after))
    if bad:
        pytest.fail(f"{len(bad)} of {len(report.results)} damages:\n" + "\n".join(bad))


def test_no_silent_wrong_answer(report):
    bad = _cases(report, lambda r: any(c == "SILENT-WRONG" for _n, c in r.classes))
    if bad:
        pytest.fail(f"{len(bad)} of {len(report.results)} damages:\n" + "\n".join(bad))


def test_warnings_only_for_damage_to_the_log(report):
    bad = _cases(report, lambda r: not r.log_damage and any(c == "WARNED" for _n, c in r.classes))
    if bad:
        pytest.fail(f"{len(bad)} of {len(report.results)} damages:\n" + "\n".join(bad))


def test_repair_restores_exact_answers(report):
    bad = _cases(report, lambda r: r.repair != "OK" or any(c != "EXACT" for _n, c in r.after))
    if bad:
        pytest.fail(f"{len(bad)} of {len(report.results)} damages:\n" + "\n".join(bad))
