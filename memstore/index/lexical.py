"""The lexical voice: Tantivy BM25 over English (stemmed) and CJK bigrams.

Documents are immutable and only ever added (a memory's text never changes), so
BM25 statistics are the same after incremental catch-up as after a rebuild.
"""

from __future__ import annotations

from pathlib import Path

from .text import cjk_tokens, latin_text

FORMAT = "memstore-lexical/1"


def _schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("seq", stored=True, indexed=True, fast=True)
    sb.add_text_field("text_en", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("text_cjk", stored=False, tokenizer_name="whitespace")
    return sb.build()


class LexicalIndex:
    def __init__(self, path: Path):
        import tantivy

        path.mkdir(parents=True, exist_ok=True)
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(path))
        self._tantivy = tantivy

    def add(self, docs: list[tuple[int, str]]) -> None:
        """Add (seq, text) documents and commit."""
        if not docs:
            return
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        for seq, text in docs:
            doc = self._tantivy.Document()
            doc.add_unsigned("seq", seq)
            doc.add_text("text_en", latin_text(text))
            doc.add_text("text_cjk", " ".join(cjk_tokens(text)))
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    def query(self, text: str, restrict: list[int] | None = None):
        t = self._tantivy
        parts = []
        latin = latin_text(text)
        if latin:
            parts.append((t.Occur.Should, self.index.parse_query(latin, ["text_en"])))
        for token in dict.fromkeys(cjk_tokens(text)):
            parts.append((t.Occur.Should, t.Query.term_query(self.schema, "text_cjk", token)))
        if not parts:
            return None
        q = t.Query.boolean_query(parts)
        if restrict is not None:
            q = t.Query.boolean_query([(t.Occur.Must, q),
                                       (t.Occur.Must, t.Query.term_set_query(self.schema, "seq", restrict))])
        return q

    def search(self, text: str, limit: int, restrict: list[int] | None = None) -> list[tuple[int, float]]:
        """[(seq, bm25)] best first; ties broken by seq."""
        q = self.query(text, restrict)
        if q is None or limit <= 0:
            return []
        searcher = self.index.searcher()
        hits = searcher.search(q, limit + 32).hits  # over-fetch: ties at the cut break by seq
        out = []
        for score, address in hits:
            seq = searcher.doc(address).get_first("seq")
            out.append((seq, round(float(score), 6)))
        out.sort(key=lambda h: (-h[1], h[0]))
        return out[:limit]

    def count(self) -> int:
        return self.index.searcher().num_docs
