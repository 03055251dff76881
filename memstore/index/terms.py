"""Matching any of a field's values: the cheapest Tantivy query for the job.

Tantivy's TermSetQuery walks the term dictionary with an automaton: for one cue value it
is slower than a term query, and for tens or hundreds of seqs slower than a disjunction of
term queries (`python bench/tantivy_terms.py`). Only very long lists go to the term set.
"""

from __future__ import annotations

DISJUNCTION_LIMIT = 1_000


def any_of(tantivy, schema, field: str, values: list):
    """Documents holding any of the values (a filter: callers never rank by its score)."""
    q = tantivy.Query
    if len(values) == 1:
        return q.term_query(schema, field, values[0])
    if len(values) > DISJUNCTION_LIMIT:
        return q.term_set_query(schema, field, list(values))
    return q.boolean_query([(tantivy.Occur.Should, q.term_query(schema, field, v)) for v in values])
