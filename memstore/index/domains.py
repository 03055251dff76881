"""Which of the records index's rows an agent may read, without decoding a record.

What an agent may read is decided by each record's domain (``access.readable``), and the
records index has no domain. The lexical index has it: a cue term on each record's
document, keyed by the record's seq (every record is created by its own event, so a seq
names one record), and a domain never changes after the write. So the grants are applied
to the store's few distinct domains (the lexical term dictionary), and only the documents
of the domains whose answer differs from that for a record without a domain are listed.

Believed only when the lexical index stands at the records index's watermark with its
manifest's checks passing and as many documents (one per record); otherwise None, and
the caller folds the log: a derived file that disagrees with the log never answers.
"""

from __future__ import annotations

from ..store.layout import Layout
from . import lexical


def readable_rows(layout: Layout, mark: int, count: int, access, seqs):
    """A boolean array: whether ``access`` may read the record of each of ``seqs`` (records
    the records index holds at watermark ``mark``, ``count`` of them); None when the
    lexical index cannot tell."""
    import numpy as np

    seqs = np.asarray(seqs, dtype=np.int64)
    if access is None:
        return np.ones(len(seqs), dtype=bool)
    lex = _lexical(layout, mark, count)
    if lex is None:
        return None
    searcher = lex.index.searcher()
    if not hasattr(searcher, "terms_with_prefix"):  # (tantivy-py before its term walk)
        return None
    default = access.can_read(None)  # a record without a domain, or in one no grant names
    deciding = sorted(d for d, _n in searcher.terms_with_prefix("domain", "") if access.can_read(d) != default)
    if not deciding:
        return np.full(len(seqs), default, dtype=bool)
    query = lex.term_set("domain", deciding)
    listed = np.array(lex.seqs(query, lex.count(query)), dtype=np.int64)
    inside = np.isin(seqs, listed)
    return ~inside if default else inside


def _lexical(layout: Layout, mark: int, count: int) -> lexical.LexicalIndex | None:
    from .current import believed_manifest, read_path

    manifest = believed_manifest(layout, "lexical", lexical.FORMAT, mark)
    if manifest is None or manifest["watermark"] != mark or manifest.get("count") != count:
        return None
    lex = lexical.LexicalIndex(read_path(layout.index_path("lexical")))
    return lex if lex.count() == count else None
