"""The night's caches: what a night's ``consolidate`` derives once and reads back instead.

- ``keycache``: each text's update keys (``beliefs.frame.keys``) by text hash, shared by
  stores beside the embedding cache;
- ``poolkeys``: the update pool's keys beside a snapshot, inverted (``state-<seq>.keys``);
- ``neargroups``: the near-duplicate groups beside a snapshot, with their vectors from the
  embedding cache (``state-<seq>.near``);
- ``snapshots``: the hook that writes those two beside a snapshot as `snapshot` takes it
  (``store.snapshot.Sidecars``).

They know the belief rules and consolidate's column scans (``rowscan``); the store layer,
the indexes and the read path know none of them (tests/test_layers.py). Every file here is
derived: deleting it changes no answer.
"""
