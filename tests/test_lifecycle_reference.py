"""The engine (memstore.consolidate) appends the reference's events (memstore.lifecycle.reference)
on every path it can take.

The reference reads every record every round and shares nothing with the engine but the
rules (memstore.lifecycle.rules). The engine switches code paths on sizes: batches of groups
looked up together, nearest members found ahead, bulk and nightly blocks, warmed workers, a
bounded vector memo, sparse or dense key counts, keys derived or looked up, groups with or
without vectors in the snapshot's groups file, records built one by one or all at once. Here
every such size is lowered (``LOWERED``) to where random histories of a few dozen records
cross it both ways, and each night of a random nightly history is computed three ways:

- the reference, over the whole state;
- the engine over the whole state (a plain mapper);
- on the last night, the engine opened from a snapshot as a night opens it (a partial state
  of the rows it scans), with the snapshot's keys file and groups file, a key cache, an
  embedding cache holding any part of the vectors, and a mapper that can warm (so the
  update checks go through the prefetching blocks).

All three must be the same events, in the same order.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore import consolidate as engine
from memstore import state as state_module
from memstore.beliefs import candidates
from memstore.config import load_config
from memstore.index.embcache import CachedEmbedder, EmbeddingCache
from memstore.lifecycle import reference, rules
from memstore.memlog import MemLog
from memstore.nightcache import keycache, neargroups, poolkeys
from memstore.nightcache.keycache import KeyCache
from memstore.store.open import _fold_partial
from memstore.store.snapshot import parquet_bytes, read_snapshot
from memstore.timeutil import ts_after

sys.path.insert(0, str(Path(__file__).parent))
from test_consolidate_incremental import HASH, _history, request  # noqa: E402

CONFIG = load_config(None)
# long-term more often than not: short-term records of one subject are promoted into one,
# and the near-duplicate groups the snapshot's file holds need two active members or more
requests = st.lists(st.tuples(request, st.sampled_from(("long", "long", "short"))).map(
    lambda pair: {**pair[0], "tier": pair[1]}), min_size=2, max_size=28)
MANUAL = load_config("[conflicts]\nauto_supersede = false\n")

# module -> {name: value}: each size lowered to where these histories cross it both ways
LOWERED = {
    engine: {"_PREFETCH": 3,  # group texts looked up in one call: several batches a night
             "_AHEAD": 1,  # groups of one fresh member planned ahead, others not
             "_BLOCK": 2, "_FRAMES": 2, "_BULK": 4, "_BLOCK_BULK": 3, "_FRAMES_BULK": 3,  # nightly and bulk blocks
             "_WARM": 2, "_WARM_STORE": 4,  # a warmable mapper warmed on some nights, not others
             "_CAP": 4},  # the vector memo cleared within a run
    candidates: {"CHUNK": 2,  # keys and frames sent in many chunks
                 "_SPARSE": 2,  # shared keys counted by sorting on some rankings, in an array on others
                 "_DENSE": 3, "_DENSE_BYTES": 16,  # a few keys counted by rows, the rest scattered
                 "DERIVE_FEW": 2},  # uncovered pool keys derived when few, else looked up in the key cache
    poolkeys: {"DERIVE_MOST": 12},  # some snapshots' keys files left out: too many keys to derive
    neargroups: {"LEAST": 2, "_BLOCK": 2},  # groups of one member listed without vectors (or, drawn, with)
    keycache: {"_GATHER": 2},
    state_module: {"_FILL_AFTER": 2},  # a lazy state's records built one by one, then all at once
}


@pytest.fixture
def lowered(monkeypatch):
    for module, values in LOWERED.items():
        for name, value in values.items():
            assert hasattr(module, name), f"{module.__name__}.{name} is gone: update LOWERED"
            monkeypatch.setattr(module, name, value)


class _Mapper:
    """A mapper that can warm (as the CLI's worker pool): the update checks' gists and frames
    are then prefetched in blocks; here they run in this process."""

    def __call__(self, fn, chunks):
        return map(fn, chunks)

    def warm(self) -> None:
        pass


def _reference_night(state, *, now, config, embedder):
    mark = rules.watermark(state, now)
    return reference.consolidate(state, now=now, config=config, embedder=embedder) + ([mark] if mark else [])


def _engine_night(state, *, now, config, embedder, **kw):
    mark = rules.watermark(state, now)
    return engine.consolidate(state, now=now, config=config, embedder=embedder, **kw) + ([mark] if mark else [])


def _from_snapshot(log: MemLog, taken: tuple[bytes, int], now: str, cached: list[str], tmp: Path, config):
    """The last night as the CLI runs it: the snapshot opened as a night opens it, its keys
    and groups files, a key cache, an embedding cache holding ``cached``, a warmable mapper."""
    path = tmp / "state-000000000001.parquet"
    path.write_bytes(taken[0])
    base, meta = read_snapshot(path, keep=lambda table, marks: engine.rows(table, marks, now))
    cache = KeyCache(tmp / "keys")
    (tmp / "keys").mkdir(exist_ok=True)
    table = base.memories.source.table
    poolkeys.write(path, table, meta["checksum"], keyer=cache.keys)
    embedder = CachedEmbedder(HASH, EmbeddingCache(None, HASH.name, HASH.dim))
    if cached:
        embedder.embed(sorted(cached))
    neargroups.write(path, table, meta["checksum"], embedder)
    part = _fold_partial(iter(log.events[taken[1]:]), base)
    return _engine_night(part, now=now, config=config, embedder=embedder, mapper=_Mapper(), keyer=cache.keys,
                         filed=poolkeys.read(path, meta["checksum"]), near=neargroups.read(path, meta["checksum"], embedder))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(requests, st.integers(min_value=1, max_value=3),
       st.integers(min_value=0, max_value=3), st.booleans(), st.integers(min_value=1, max_value=8),
       st.integers(min_value=0, max_value=3), st.booleans(), st.data())
def test_the_engine_appends_the_references_events_on_every_path(lowered, asked, every, back, before, day, later,
                                                               auto, data):
    """Nights of records, each consolidated by the reference and the engine (the same events,
    the reference's appended); a snapshot ``back`` nights before the last, taken before or
    after that night's run; then the last ``day`` records, most in groups the snapshot has
    members of, and the last night three ways."""
    config = CONFIG if auto else MANUAL
    log, history = MemLog(), _history(asked)
    last = history[-day:] if day < len(history) else history[-1:]
    history = history[:len(history) - len(last)]
    night, n, snapshots = ts_after((history or last)[0][0], 0.125), 0, []
    while history:
        for at, req in (h for h in history if h[0] <= night):
            log.remember([req], at, config)
        history = [h for h in history if h[0] > night]
        if before:
            snapshots.append((parquet_bytes(log.state), len(log.events)))
        want = _reference_night(log.state, now=night, config=config, embedder=HASH)
        assert _engine_night(log.state, now=night, config=config, embedder=HASH) == want, f"night {n}"
        log.append(want, night)
        if not before:
            snapshots.append((parquet_bytes(log.state), len(log.events)))
        night, n = ts_after(night, every), n + 1
    taken = snapshots[max(0, len(snapshots) - 1 - back)] if snapshots else (parquet_bytes(log.state), len(log.events))
    groups = sorted({(m.domain or "", m.subject) for m in log.state.memories.values()
                     if m.status == "active" and m.level == "raw" and m.subject is not None})
    for k, (_at, req) in enumerate(last):
        if groups and data.draw(st.integers(0, 3)):  # (most of the day's records in the snapshot's groups)
            domain, subject = data.draw(st.sampled_from(groups))
            req = {key: v for key, v in req.items() if key != "domain"} | {"subject": subject} | \
                ({"domain": domain} if domain else {})
        log.remember([req], ts_after(night, k / 10_000), config)
    now = ts_after(night, 0.5 + later)
    want = _reference_night(log.state, now=now, config=config, embedder=HASH)
    assert _engine_night(log.state, now=now, config=config, embedder=HASH) == want
    texts = sorted({m.text for m in log.state.memories.values()})
    cached = texts if data.draw(st.booleans()) else data.draw(st.lists(st.sampled_from(texts), unique=True))
    neargroups.LEAST = data.draw(st.sampled_from((1, 2)))  # (these histories' groups are small)
    with tempfile.TemporaryDirectory() as tmp:
        assert _from_snapshot(log, taken, now, cached, Path(tmp), config) == want


def test_the_reference_runs_a_store_through_the_cli(tmp_path):
    """``consolidate --engine reference`` (and MEMSTORE_CONSOLIDATE=reference) prints what the
    engine prints, and appends the same events."""
    from reliability_support import cli, make_store

    runs = {}
    for name, extra in (("engine", ()), ("reference", ("--engine", "reference"))):
        store = make_store(tmp_path / name)
        for day, (text, subject) in enumerate([("We deploy on Fridays", "deploys"), ("We deploy on Fridays!", "deploys"),
                                               ("We never deploy on Fridays", "deploys"), ("Lunch was pizza", None),
                                               ("Lunch was pizza", None)]):
            args = ["--subject", subject] if subject else []
            assert cli("--store", str(store), "remember", text, *args, "--kind", "decision",
                       "--now", f"2026-03-0{day + 1}T10:00:00Z")[0] == 0
        runs[name] = cli("--store", str(store), "consolidate", "--json", *extra, "--now", "2026-03-07T03:00:00Z")
        assert runs[name][0] == 0, runs[name]
        runs[name] += ((store / "log").read_bytes() if (store / "log").is_file() else
                       b"".join(p.read_bytes() for p in sorted((store / "log").glob("*.jsonl"))),)
    assert runs["engine"] == runs["reference"]
    assert '"op":"merge"' in runs["engine"][1] or '"op":"conflict"' in runs["engine"][1]


def test_an_unknown_engine_is_refused_with_one_line(tmp_path):
    from reliability_support import cli, make_store

    store = make_store(tmp_path / "s")
    code, out, err = cli("--store", str(store), "consolidate", "--engine", "fast", "--now", "2026-03-07T03:00:00Z")
    assert (code, out, err) == (2, "", "Error: --engine 'fast' is not one of: engine, reference\n")


def test_from_a_snapshot_the_pool_holds_what_the_rules_pool(lowered, tmp_path):
    """Lookalikes the update pool leaves out (an incident, an outcome, a summary) or holds
    (an expired note, a fact of another domain), in the snapshot; then updates of each: the
    engine, reading the pool from columns, appends the reference's events."""
    config = CONFIG
    log = MemLog()
    older = [{"text": "We deploy on Fridays.", "subject": "deploys", "kind": "incident", "tier": "long"},
             {"text": "We deploy on Fridays.", "subject": "deploys", "kind": "decision", "tier": "long",
              "outcome": "positive"},
             {"text": "The rate limit is 100 per minute.", "subject": "limits", "kind": "fact", "tier": "long",
              "domain": "eng"},
             {"text": "The rate limit is 100 per minute.", "subject": "limits", "kind": "fact", "tier": "long",
              "domain": "personal"},
             {"text": "Ken lives in Osaka.", "subject": "ken", "tier": "short"}]
    log.remember(older, "2026-01-01T10:00:00Z", config)
    log.append(_reference_night(log.state, now="2026-01-02T00:00:00Z", config=config, embedder=HASH),
               "2026-01-02T00:00:00Z")
    log.append(_reference_night(log.state, now="2026-02-01T00:00:00Z", config=config, embedder=HASH),
               "2026-02-01T00:00:00Z")  # (the short-term note expires)
    taken = (parquet_bytes(log.state), len(log.events))
    log.remember([{"text": "We never deploy on Fridays.", "subject": "deploys", "kind": "decision"},
                  {"text": "The rate limit is now 300.", "subject": "limits", "kind": "fact", "domain": "eng"},
                  {"text": "Ken moved to Tokyo.", "subject": "ken"}], "2026-02-01T10:00:00Z", config)
    now = "2026-02-02T00:00:00Z"
    want = _reference_night(log.state, now=now, config=config, embedder=HASH)
    assert {e["op"] for e in want} >= {"conflict", "mark"}
    assert _engine_night(log.state, now=now, config=config, embedder=HASH) == want
    assert _from_snapshot(log, taken, now, [], tmp_path, config) == want
