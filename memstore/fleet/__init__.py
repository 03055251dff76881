"""A fleet of stores: one maintenance stage run over every store under a directory.

``find_stores(root)`` lists the stores; ``runner.run_one`` runs one stage on one store
and reports what happened as a plain dict (never raising for that store's failure);
``engines`` fans the stores out to worker processes, or to a Dask cluster. Nothing here
reads the clock for a store's work: the caller passes one ``now`` to every run.
"""

from __future__ import annotations

from .discover import find_stores
from .runner import STAGES, run_one

__all__ = ["STAGES", "find_stores", "run_one"]
