"""The fuzz harness (tests/fuzz_support.py) for a short fixed number of seeded cases per
target: `import` files, hand-damaged log lines, memstore.toml files and command lines. No
command may crash or hang; a refusal is one `Error:` line with the log unchanged. The long
run is `python bench/fuzz.py --budget-seconds 600 --seed N`."""

from __future__ import annotations

import pytest
from fuzz_support import TARGETS, fuzz

SEED = 20260607
ROUNDS = 25  # cases per target (about 30 s in all on 2 cores)
# cases the long run (bench/fuzz.py) found crashing, kept as regressions: (target, seed, case)
FOUND = [("import", 1, 17), ("import", 1, 50), ("import", 1, 230), ("log", 1, 37)]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return fuzz(tmp_path_factory.mktemp("fuzz"), seed=SEED, cases=ROUNDS)


@pytest.mark.parametrize("target", TARGETS)
def test_no_crash_or_hang(report, target):
    assert report.cases[target] == ROUNDS
    found = [sig for t, sig in report.signatures if t == target]
    if found:
        pytest.fail(f"{len(found)} crash signature(s) fuzzing {target}:\n" + report.details(target))


def test_cases_reach_both_outcomes(report):
    """The corpus is not all refusals: some mutated inputs are accepted (and then read back)."""
    for target in ("import", "log"):
        assert report.steps[(target, "OK")] > 0
        assert report.steps[(target, "REFUSED")] + report.steps[(target, "CRASH")] > 0


def test_cases_are_deterministic(tmp_path):
    """A case depends only on target, seed and number: its reproducer replays it."""
    from fuzz_support import make_case, prepare

    fx = prepare(tmp_path / "w")
    for target in TARGETS:
        a = make_case(fx, target, SEED, 3)
        b = make_case(fx, target, SEED, 3)
        assert (a.what, [s.argv for s in a.steps], a.files) == (b.what, [s.argv for s in b.steps], b.files)


@pytest.mark.parametrize(("target", "seed", "number"), FOUND)
def test_cases_found_by_the_long_run(tmp_path, target, seed, number):
    report = fuzz(tmp_path / "w", seed=seed, targets=(target,), only=number)
    if report.signatures:
        pytest.fail(report.details())
