"""Distill from a snapshot builds only the records it can scan for (issue [6/6], item 3).

`writes.distill` opens the state with ``keep=distill.rows``: the snapshot's rows below the
floor (or that could be), the outcome evidence, the policies and the retired abstractions
are built, with the records the log after the snapshot touches; any other is built when a
run asks for it by id (``state.Partial``). Its events must be those of the whole state:
held here on a lived store whose snapshot has a tail of consolidations, distillations,
recalls, a forget and a person's resolution, at nows where little and where much decays;
and ``rows`` is held to the scans' own tests on any records.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import make_store
from test_reads_scale import _day, _live, _run  # (a lived store: beliefs, keys, conflicts)

from memstore import writes
from memstore.config import load_config
from memstore.distill import distill, rows
from memstore.model import AXES, KINDS, Memory, Salience
from memstore.policies import DIRECTION, EVIDENCE_STATUSES
from memstore.salience import effective, is_protected
from memstore.state import Partial, State
from memstore.store.layout import Layout
from memstore.store.snapshot import parquet_bytes, read_snapshot


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return snapshotted(tmp_path_factory.mktemp("partial") / "s")


def snapshotted(path: Path) -> Path:
    """A store snapshotted on day 70, then lived on to day 120 (a resolution and a forget last)."""
    path = make_store(path)
    _live(path, range(0, 70))
    assert _run(path, "snapshot", "--now", _day(70))[0] == 0
    _live(path, range(70, 120))
    code, out, _ = _run(path, "conflicts", "--json", "--now", _day(120))
    conflicts = json.loads(out)["conflicts"] if code == 0 and out.strip() else []
    if conflicts:
        assert _run(path, "conflicts", "resolve", conflicts[0]["id"], "--keep", "new", "--now", _day(120))[0] == 0
    code, out, _ = _run(path, "log", "--json", "--op", "remember", "--limit", "3")
    assert _run(path, "forget", json.loads(out.splitlines()[0])["memory"]["id"], "--now", _day(120))[0] == 0
    return path


def two_copies(store: Path, tmp_path: Path) -> tuple[list[Path], list[Layout], dict]:
    """Two copies of ``store`` (one for the partial state's writes, one for the whole's), their
    layouts, and the store's config."""
    copies = [tmp_path / "a", tmp_path / "b"]
    for c in copies:
        shutil.copytree(store, c)
    layout = [Layout(c) for c in copies]
    return copies, layout, load_config(layout[0].read_config_text())


@pytest.mark.parametrize("later", [0, 30, 90, 250, 700])
def test_a_partial_state_distills_as_the_whole_one(store, later):
    layout = Layout(store)
    config = load_config(layout.read_config_text())
    now = _day(120 + later)
    part = writes.distill(layout, now=now, config=config, dry_run=True)
    whole = writes.run_stage(layout, distill, now=now, config=config, dry_run=True)
    assert isinstance(part.state.memories, Partial) and not isinstance(whole.state.memories, Partial)
    assert part.events == whole.events
    if later == 0:
        assert len(part.state.memories) < len(whole.state.memories)  # (what it is for)
    if later == 700:
        assert len(part.events) >= 5  # (much decays: the ladder climbs)


def test_distill_writes_as_the_whole_state_would(store, tmp_path):
    """The events appended, and the next run's, as the whole state gives them."""
    copies, layout, config = two_copies(store, tmp_path)
    for now in (_day(400), _day(401)):
        part = writes.distill(layout[0], now=now, config=config)
        whole = writes.run_stage(layout[1], distill, now=now, config=config)
        assert part.events == whole.events
    assert _run(copies[0], "stats", "--json", "--now", _day(401)) == \
        _run(copies[1], "stats", "--json", "--now", _day(401))


def test_a_record_not_built_is_built_when_asked_for(store):
    layout = Layout(store)
    config = load_config(layout.read_config_text())
    part = writes.distill(layout, now=_day(120), config=config, dry_run=True).state
    whole = writes.run_stage(layout, distill, now=_day(120), config=config, dry_run=True).state
    missing = [i for i in whole.memories if not dict.__contains__(part.memories, i)]
    assert missing
    for i in missing[:50]:
        assert part.memories.get(i) == whole.memories[i] and i in part.memories
    assert part.memories.get("m" + "0" * 15) is None and "nonsense" not in part.memories
    assert part.copy().memories.get(missing[-1]) == whole.memories[missing[-1]]


# --- rows: a superset of what the scans keep -------------------------------------------

CONFIG = load_config(None)
NOW = "2027-06-01T00:00:00Z"
times = st.sampled_from(["2026-01-05T10:00:00Z", "2026-06-30T23:59:59Z", "2027-05-31T00:00:00Z",
                         "2027-06-01T00:00:00Z", "2028-01-01T00:00:00Z"])
record = st.fixed_dictionaries({
    "status": st.sampled_from(["active", "expired", "archived", "superseded", "invalidated"]),
    "tier": st.sampled_from(["short", "long"]),
    "level": st.sampled_from(["raw", "summary", "pattern", "principle", "policy"]),
    "kind": st.sampled_from(KINDS),
    "outcome": st.sampled_from([None, None, "positive", "negative", "pending"]),
    "abstracted_by": st.sampled_from([None, None, "m0000000000000ab"]),
    "retired": st.booleans(),
    "recorded_at": times, "last_reinforced_at": st.one_of(st.none(), times),
    "last_recalled_at": st.one_of(st.none(), times),
    "axes": st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.5, 0.8, 0.95, 1.0]), min_size=len(AXES),
                     max_size=len(AXES)),
    "confidence": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
    "recall_count": st.integers(min_value=0, max_value=5),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_rows_keeps_every_record_a_scan_keeps(tmp_path_factory, records, rng):
    memories = {}
    for i, r in enumerate(records):
        m = Memory(id=f"m{i:015x}", text=f"memory {i}", recorded_at=r["recorded_at"], occurred_at="2026",
                   precision="year", kind=r["kind"], subject=random.Random(i).choice([None, "deploys"]),
                   outcome=r["outcome"], tier=r["tier"], status=r["status"], level=r["level"],
                   salience=Salience(**dict(zip(AXES, r["axes"], strict=True))), confidence=r["confidence"],
                   abstracted_by=r["abstracted_by"], retired=r["retired"], recall_count=r["recall_count"],
                   last_reinforced_at=r["last_reinforced_at"], last_recalled_at=r["last_recalled_at"], seq=i + 1)
        memories[m.id] = m
    path = tmp_path_factory.mktemp("rows") / "state.parquet"
    path.write_bytes(parquet_bytes(State(memories=memories, seq=len(memories), at=NOW)))
    import pyarrow.parquet as pq

    kept = rows(pq.read_table(path), NOW, CONFIG)
    floor, threshold = CONFIG["distill"]["floor"], CONFIG["salience"]["protect_threshold"]
    for m, k in zip(memories.values(), kept.tolist(), strict=True):
        climbs = (m.status == "active" and m.tier == "long" and m.level != "policy" and m.abstracted_by is None
                  and m.recorded_at < NOW and not is_protected(m.salience, threshold)
                  and effective(m, NOW, CONFIG) < floor)
        evidence = m.level == "raw" and m.outcome in DIRECTION and m.status in EVIDENCE_STATUSES
        assert k or not (climbs or evidence or m.level == "policy" or m.retired), m
    part, _meta = read_snapshot(path, keep=lambda table, _marks: rows(table, NOW, CONFIG))
    assert [m.id for m in part.memories.values()] == [m.id for m, k in zip(memories.values(), kept, strict=True)
                                                     if k]
    assert all(part.memories[i] == m for i, m in memories.items())


def test_a_state_kept_between_opens_is_built_whole(store):
    """replay keeps the last state for the next open (``remember_states``), which may be a
    consolidate's: a distill opening it first must not leave it partial."""
    from memstore.store import open as opening

    layout = Layout(store)
    config = load_config(layout.read_config_text())
    opening.remember_states(True)
    try:
        done = writes.distill(layout, now=_day(120), config=config, dry_run=True)
        kept, _position = opening._MEMO[layout.root]
        assert not isinstance(kept.memories, Partial) and not isinstance(done.state.memories, Partial)
    finally:
        opening.remember_states(False)
