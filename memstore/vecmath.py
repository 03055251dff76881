"""An embedder's vectors as they leave it: float32, L2-normalised, rounded to ``ROUND``
decimals, so that results do not hinge on the last bits of floating point (goldens stay
stable across machines). Shared by every embedder (``embed``, ``static_embed``); numpy is
imported on first use."""

from __future__ import annotations

ROUND = 5


def finish(matrix):
    """The rows of ``matrix`` (float64) as an embedder returns them: each divided by its
    L2 norm (a zero row stays zero), rounded to ``ROUND`` decimals, as float32."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.round(matrix / norms, ROUND).astype(np.float32)
