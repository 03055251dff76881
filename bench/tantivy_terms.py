"""Why memstore/index/terms.py avoids Tantivy's TermSetQuery: time both on a kept store.

    python bench/recall.py --sizes 1000000 --keep DIR     # once (builds the store, ~25 min)
    python bench/tantivy_terms.py DIR/s1000000

Prints, for one cue value and for 30/100/300 seqs, the median time to count the
matching documents with a TermSetQuery and with memstore's choice (a term query,
or a disjunction of term queries), measured interleaved in the same run.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path


def timed(fn, runs: int = 15) -> float:
    fn()  # warm
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    from memstore.index.lexical import LexicalIndex
    from memstore.index.terms import any_of

    lex = LexicalIndex(Path(sys.argv[1]) / "index" / "lexical")
    tantivy, schema, searcher = lex._t, lex.schema, lex.index.searcher()
    n = searcher.num_docs
    print(f"{n:,} documents in {sys.argv[1]}")
    cases = [("actor", ["alice"]), *(("seq", random.Random(k).sample(range(1, n + 1), k)) for k in (30, 100, 300))]
    for field, values in cases:
        term_set = tantivy.Query.term_set_query(schema, field, values)
        chosen = any_of(tantivy, schema, field, values)
        a = timed(lambda q=term_set: searcher.search(q, 1, count=True))
        b = timed(lambda q=chosen: searcher.search(q, 1, count=True))
        print(f"{field} x {len(values):>3}: TermSetQuery {a:6.2f} ms, any_of {b:6.2f} ms ({a / b:.1f}x)")


if __name__ == "__main__":
    main()
