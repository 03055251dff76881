"""The lexical voice and the cue posting lists: one append-only Tantivy index.

Each memory is one immutable document: BM25 fields (English stemmed, CJK
bigrams) plus one raw term per cue value that never changes after the write
(actor, kind, outcome, domain, subject, time bucket, level). Documents are only
ever added (a memory's text and cues never change), so BM25 statistics are the
same after incremental catch-up as after a rebuild, and cue filters run inside
Tantivy's posting-list intersection. Mutable fields (status, tier) live in the
record index.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Memory
from .terms import any_of
from .text import cjk_tokens, latin_text, query_words

FORMAT = "memstore-lexical/3"
ANALYZER = "en_memstore"  # lower-case, English stop words removed, Porter stemming
CUE_DIMENSIONS = ("actor", "kind", "outcome", "domain", "subject", "bucket", "level")


def cue_values(m: Memory) -> dict[str, list[str]]:
    """Cue terms of a record: lower-cased except domain (scopes match exactly) and buckets."""
    return {
        "actor": [a.casefold() for a in m.actors],
        "kind": [m.kind],
        "outcome": [m.outcome] if m.outcome else [],
        "domain": [m.domain] if m.domain else [],
        "subject": [m.subject.casefold()] if m.subject else [],
        "bucket": list(m.time_buckets),
        "level": [m.level],
    }


def time_order(m: Memory) -> int:
    """Event-time order with the seq as tie-breaker: "newest" is the same in every build."""
    from ..timeutil import occurred_start

    return int(occurred_start(m.occurred_at).timestamp()) * 1_000_000 + m.seq % 1_000_000


def _schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("seq", stored=True, indexed=True, fast=True)
    sb.add_integer_field("t", stored=False, indexed=False, fast=True)
    sb.add_text_field("text_en", stored=False, tokenizer_name=ANALYZER)
    sb.add_text_field("text_cjk", stored=False, tokenizer_name="whitespace")
    for dim in CUE_DIMENSIONS:
        sb.add_text_field(dim, stored=False, tokenizer_name="raw", index_option="basic")
    return sb.build()


class LexicalIndex:
    def __init__(self, path: Path | None):
        """The index in ``path`` (created if need be), or a new one in memory (None)."""
        import tantivy

        self.schema = _schema()
        if path is None:
            self.index = tantivy.Index(self.schema)
        else:
            path.mkdir(parents=True, exist_ok=True)
            self.index = tantivy.Index(self.schema, path=str(path))
        # custom analyzers are not stored in the index: register on every open
        self._analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                          .filter(tantivy.Filter.remove_long(40))
                          .filter(tantivy.Filter.lowercase())
                          .filter(tantivy.Filter.stopword("english"))
                          .filter(tantivy.Filter.stemmer("english")).build())
        self.index.register_tokenizer(ANALYZER, self._analyzer)
        self._t = tantivy

    # -- writing --------------------------------------------------------------
    def add(self, memories: list[Memory]) -> None:
        if not memories:
            return
        writer = self.index.writer(heap_size=100_000_000, num_threads=1)
        for m in memories:
            text = f"{m.text} {m.subject}" if m.subject else m.text
            doc = self._t.Document()
            doc.add_unsigned("seq", m.seq)
            doc.add_integer("t", time_order(m))
            doc.add_text("text_en", latin_text(text))
            doc.add_text("text_cjk", " ".join(cjk_tokens(text)))
            for dim, values in cue_values(m).items():
                for v in values:
                    doc.add_text(dim, v)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    # -- queries --------------------------------------------------------------
    def term_set(self, dim: str, values: list[str]):
        return any_of(self._t, self.schema, dim, list(values))

    def all_of(self, queries: list):
        """Conjunction of queries (None entries ignored); None when there is nothing to require."""
        queries = [q for q in queries if q is not None]
        if not queries:
            return None
        if len(queries) == 1:
            return queries[0]
        return self._t.Query.boolean_query([(self._t.Occur.Must, q) for q in queries])

    def text_query(self, text: str):
        t = self._t
        parts = []
        latin = query_words(text)
        if latin:
            parts.append((t.Occur.Should, self.index.parse_query(latin, ["text_en"])))
        for token in dict.fromkeys(cjk_tokens(text)):
            parts.append((t.Occur.Should, t.Query.term_query(self.schema, "text_cjk", token)))
        return t.Query.boolean_query(parts) if parts else None

    def posting_length(self, dim: str, values: list[str]) -> int:
        """Documents holding any of a cue dimension's values: one value is read off the
        term dictionary; a union is counted (a memory may have two actors)."""
        if len(values) == 1:
            return self.index.searcher().doc_freq(dim, values[0])
        return self.count(self.term_set(dim, values))

    def count(self, query=None) -> int:
        searcher = self.index.searcher()
        if query is None:
            return searcher.num_docs
        return searcher.search(query, 1, count=True).count

    def count_after(self, seq: int) -> int:
        """Documents of memories created after ``seq``."""
        t = self._t
        return self.count(t.Query.range_query(self.schema, "seq", t.FieldType.Unsigned, seq + 1, 2**63))

    def terms(self, text: str) -> list[tuple[str, str]]:
        """The distinct (field, term) pairs a query text searches for, after analysis."""
        latin = query_words(text)
        pairs = [("text_en", t) for t in self._analyzer.analyze(latin)] if latin else []
        pairs += [("text_cjk", t) for t in cjk_tokens(text)]
        return list(dict.fromkeys(pairs))

    def search(self, text: str, limit: int, within=None) -> list[tuple[int, float]]:
        """[(seq, bm25)] best first, ties broken by seq; ``within`` is a filter query.

        Function words are not searched (``query_words``); how much of the query a
        hit holds is ``coverage``, which fusion weighs it by.
        """
        q = self.text_query(text)
        if q is None or limit <= 0:
            return []
        if within is not None:  # a filter must not add to the BM25 score
            q = self.all_of([q, self._t.Query.const_score_query(within, 0.0)])
        return self._ranked(q, limit)

    def coverage(self, text: str, seqs: list[int]) -> dict[int, float]:
        """Per seq, the share of the query's distinct terms its document holds."""
        terms = self.terms(text)
        if not terms or not seqs:
            return {}
        held = dict.fromkeys(seqs, 0)
        among = self.term_set("seq", list(seqs))
        for field, value in terms:
            has = self._t.Query.term_query(self.schema, field, value)
            for seq in self.seqs(self.all_of([among, has]), len(seqs)):
                held[seq] += 1
        return {s: n / len(terms) for s, n in held.items()}

    def _ranked(self, query, limit: int) -> list[tuple[int, float]]:
        searcher = self.index.searcher()
        hits = searcher.search(query, limit + 32).hits  # over-fetch: ties at the cut break by seq
        seqs = searcher.fast_field_values("seq", [a for _s, a in hits])
        out = sorted(((seq, round(float(s), 6)) for (s, _a), seq in zip(hits, seqs, strict=True)),
                     key=lambda h: (-h[1], h[0]))
        return out[:limit]

    def seqs(self, within, limit: int) -> list[int]:
        """Seqs of the documents matching a filter (unscored), ascending."""
        if limit <= 0:
            return []
        searcher = self.index.searcher()
        hits = searcher.search(within, limit).hits
        return sorted(searcher.fast_field_values("seq", [a for _s, a in hits]))

    def newest(self, within, limit: int, now: str | None = None) -> list[int]:
        """Seqs of the newest documents by event time (the temporal voice).

        With ``now`` and no filter, windows reaching back 7, 60 and 400 days are tried
        first: once one holds ``limit`` documents, the newest overall all lie in it,
        and sorting it costs a fraction of sorting the whole store. (A filter's
        posting list is cheaper to sort whole than to intersect with a window.)
        """
        if limit <= 0:
            return []
        searcher = self.index.searcher()
        windows: list = [None]
        if now is not None and within is None:
            from ..timeutil import parse_ts

            end = int(parse_ts(now).timestamp())
            windows = [self._t.Query.range_query(self.schema, "t", self._t.FieldType.Integer,
                                                 (end - days * 86400) * 1_000_000, None)
                       for days in (7, 60, 400)] + windows
        for window in windows:
            q = self.all_of([within, window]) or self._t.Query.all_query()
            hits = searcher.search(q, limit, order_by_field="t").hits
            if len(hits) >= limit or window is None:
                return searcher.fast_field_values("seq", [a for _s, a in hits])
        return []  # not reached: the last window is the whole store

    def keep(self, within, seqs: list[int]) -> set[int]:
        """The subset of seqs whose documents match a filter."""
        if within is None:
            return set(seqs)
        if not seqs:
            return set()
        q = self.all_of([within, self.term_set("seq", seqs)])
        return set(self.seqs(q, len(seqs)))
