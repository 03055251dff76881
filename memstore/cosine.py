"""Similarities that come out as the same bits on every machine.

USearch's distance kernels and BLAS (numpy's ``@`` on floats) choose their SIMD code by
processor, AVX2 on one machine and AVX-512 on another, and sum in different orders. On the
year fixture's index USearch's cosines were up to 3.4e-7 from the exact value, and 0.79% of
them rounded apart at five decimals (`python bench/kernels.py --store DIR`): enough to swap
two near-tied memories in a ranking, and through the touches that recall writes, every
checkpoint after it. So what reaches a ranking or the log is computed here, exactly, and rounded once:

- half-precision rows (the vector index's) are integers once scaled by 2**24, their dot
  products are sums of integers (exact, in any order), and a cosine is one division of
  correctly rounded numbers;
- two float32 vectors (the embedding cache's) multiply exactly in float64, and
  ``math.fsum`` rounds the sum of those products once.

USearch and BLAS still choose candidates, where their error (1e-7) is far below the
margins used (``limit + 32`` hits, a 1e-5 band); only the order and the values are these.
"""

from __future__ import annotations

import math

_SCALE = 2.0**24  # every half-precision value times this is an integer (the smallest is 2**-24)
_UNSCALE = 2.0**-48  # a product of two scaled values, back to the unit


def _ints(vectors):
    import numpy as np

    return np.rint(np.asarray(vectors, dtype=np.float64) * _SCALE).astype(np.int64)


def half_cosines(rows, query):
    """Cosines (float64) of half-precision ``rows`` with a half-precision ``query``; a zero
    vector is 0 to everything. Rows must be unit length or zero (VectorIndex.check_rows), so
    that no sum leaves int64."""
    import numpy as np

    r, q = _ints(rows), _ints(query)
    dots = (r @ q).astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", r, r).astype(np.float64)) * math.sqrt(float(q @ q))
    out = np.zeros(len(r), dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


class Gram:
    """Dot products among half-precision vectors ({key: vector}) in integers: what recall's
    diversity and update checks compare with their floors. A key's row (its dots with every
    key, in the dict's order) is computed when first asked for."""

    def __init__(self, vectors: dict):
        import numpy as np

        self._at = {k: i for i, k in enumerate(vectors)}
        self._ints = _ints(list(vectors.values())) if vectors else np.zeros((0, 0), dtype=np.int64)
        self._rows: dict = {}

    def __contains__(self, key) -> bool:
        return key in self._at

    def row(self, key):
        """float64 dots of ``key``'s vector with every vector, in the dict's order."""
        import numpy as np

        got = self._rows.get(key)
        if got is None:
            got = self._rows[key] = (self._ints @ self._ints[self._at[key]]).astype(np.float64) * _UNSCALE
        return got

    def dot(self, a, b) -> float:
        return float(self.row(a)[self._at[b]])


def dot(a, b) -> float:
    """The dot product of two float32 vectors, rounded once (exact products in float64)."""
    import numpy as np

    return math.fsum((np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).tolist())
