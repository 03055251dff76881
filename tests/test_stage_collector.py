"""A lifecycle run pauses Python's cycle collector (memstore.state.acyclic_build): a
first consolidate of 100k records spent 10 s of 90 in collections that found nothing. The
collector's setting must come back, and the events must not depend on it."""

from __future__ import annotations

import gc

import pytest

from memstore import writes
from memstore.config import load_config
from memstore.store.layout import Layout

NOW = "2026-03-07T00:00:00Z"


def _store(ms, store):
    for text in ("we deploy on Fridays", "we never deploy on Fridays", "billing uses Postgres",
                 "billing now uses MySQL instead of Postgres"):
        assert ms("remember", text, "--subject", "ops", now="2026-03-01T00:00:00Z").rc == 0
    layout = Layout(store)
    return layout, load_config(layout.read_config_text())


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_during_a_run_and_restored_after(ms, store, enabled):
    layout, config = _store(ms, store)
    seen = []

    def stage(state, **kw):
        seen.append(gc.isenabled())
        return []

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        writes.run_stage(layout, stage, now=NOW, config=config, dry_run=True)
        assert seen == [False]
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_the_collector_comes_back_when_a_run_fails(ms, store):
    layout, config = _store(ms, store)

    def stage(state, **kw):
        raise RuntimeError("boom")

    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="boom"):
        writes.run_stage(layout, stage, now=NOW, config=config, dry_run=True)
    assert gc.isenabled()


def test_the_events_do_not_depend_on_the_collector(ms, store, monkeypatch):
    import contextlib

    import memstore.state as opened

    layout, config = _store(ms, store)
    paused = writes.consolidate(layout, now=NOW, config=config, dry_run=True).events
    monkeypatch.setattr(opened, "acyclic_build", contextlib.nullcontext)
    assert writes.consolidate(layout, now=NOW, config=config, dry_run=True).events == paused
    assert any(e["op"] in ("supersede", "conflict") for e in paused)
