"""Rule-based query intent: temporal, factual (exact) or conceptual (memstore(7), RECALL).

The intent picks the voice weights for fusion. No model: a query with a time cue
is temporal; quotes, ids, versions or numbers make it factual; else conceptual.
"""

from __future__ import annotations

import re

_FACTUAL = re.compile(r"[\"“”「」『』]|\b[A-Z]{2,}-\d+\b|\bv?\d+(?:\.\d+)+\b|\d{2,}|\bm[0-9a-f]{15}\b")

# voice -> weight per intent: semantic heaviest, then graph and lexical, then recency;
# factual leans lexical; temporal leans on the time voice (memstore(7), RECALL).
WEIGHTS = {
    "conceptual": {"semantic": 1.0, "lexical": 0.8, "graph": 0.4, "temporal": 0.2},
    "factual": {"lexical": 1.0, "semantic": 0.7, "graph": 0.3, "temporal": 0.2},
    "temporal": {"temporal": 1.0, "semantic": 0.8, "lexical": 0.6, "graph": 0.3},
}


def classify(query: str, time_cues: list[str]) -> str:
    if time_cues:
        return "temporal"
    if _FACTUAL.search(query):
        return "factual"
    return "conceptual"
