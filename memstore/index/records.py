"""Current records, in a Tantivy index keyed by memory id (a small document store).

Each memory is one document: the record as canonical JSON (stored) plus raw
terms for the graph's subject edge and the fields that change over time
(subject, status, level, tier); the actor edge runs in the lexical index, bounded
by time. A changed record is replaced (delete by id, add).
Nothing here is scored, so deleted documents never skew a ranking.
"""

from __future__ import annotations

from pathlib import Path

from ..codec import dumps, loads
from ..model import AXES, KINDS, LEVELS, STATUSES, TIERS, Memory, memory_from_dict, memory_to_dict
from ..salience import last_use
from ..timeutil import parse_ts
from .lexical import time_order
from .terms import any_of

FORMAT = "memstore-records/9"  # /4: imported records at their import event's seq, agent, session;
# /5: key, open-conflict and outcome terms, the salience columns; /6: derived_from terms;
# /7: the seqs of the events that touched each record (``show`` reads just those lines);
# /8: the record stored as bytes, not indexed (indexed as one raw term, every record's JSON
# went into the term dictionary, slowing every commit); /9: invalid_periods (an older index's
# records lack them: it is rebuilt from the log)
# graph edges and the mutable fields; cue filtering itself runs in the lexical index
_BULK = 512  # records read between two hand-backs of the mapped pages (``RecordIndex.release``;
# the kernel's fault-around maps 64 KB with each)
DIMENSIONS = ("subject", "status", "level", "tier", "session", "key", "open", "outcome", "from")
# What `stats` aggregates over every record, as fast (columnar) fields: no record is decoded.
AXIS_FIELDS = tuple(f"a_{a}" for a in AXES)


def record_terms(m: Memory) -> dict[str, list[str]]:
    return {
        "subject": [m.subject.casefold()] if m.subject else [],
        "status": [m.status],
        "level": [m.level],
        "tier": [m.tier],
        "session": [m.session] if m.session else [],  # a turn's neighbours (recall's context step)
        "key": [m.key] if m.key is not None else [],  # show --key without reading the log
        "open": ["conflict"] if m.conflicts_with else [],  # `conflicts` lists these
        "outcome": [m.outcome] if m.outcome else [],  # the brief's pending outcomes
        "from": list(m.derived_from),  # what a person's resolve may bring back (``touched``)
    }


def touched(rec, events: list[dict]) -> list[str]:
    """The ids folding ``events`` onto records fetched from the index must start from: those
    each event names; for a person's resolve, the abstractions of its two records (the fold
    brings back the ones retired only because of the superseded side); for a forget, the
    records in open conflict with the forgotten one (the fold closes those conflicts)."""
    from ..events import touched_ids

    ids = dict.fromkeys(i for e in events for i in touched_ids(e))
    sides = sorted({e[k] for e in events if e.get("op") == "resolve" for k in ("old", "new")
                    if isinstance(e.get(k), str)})
    if sides:
        ids.update(dict.fromkeys(m.id for m in rec.posting("from", sides)))
    forgotten = sorted({e["id"] for e in events if e.get("op") == "forget" and isinstance(e.get("id"), str)})
    if forgotten:
        ids.update(dict.fromkeys(i for m in rec.get(forgotten).values() for i in m.conflicts_with))
    return list(ids)


def codes(m: Memory) -> int:
    """Status, tier, level and kind as their positions in the model's tuples, and the number
    of open conflicts, packed in one integer (one fast field instead of five)."""
    return (_pos(STATUSES, m.status) | _pos(TIERS, m.tier) << 4 | _pos(LEVELS, m.level) << 8
            | _pos(KINDS, m.kind) << 12 | min(len(m.conflicts_with), 0xFFFF) << 20)


def _pos(values: tuple, value: str) -> int:
    return values.index(value) if value in values else len(values)  # a value a newer log may hold


def _schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_unsigned_field("seq", stored=True, indexed=True, fast=True)
    # event-time order with the seq as tie-breaker, so "newest" is the same in every build
    sb.add_integer_field("t", stored=False, indexed=False, fast=True)
    sb.add_bytes_field("record", stored=True, indexed=False)  # (read by id, never searched)
    sb.add_unsigned_field("ev", stored=True, indexed=False, fast=False)  # events that touched it
    for dim in DIMENSIONS:
        sb.add_text_field(dim, stored=False, tokenizer_name="raw", index_option="basic")
    for name in (*AXIS_FIELDS, "confidence"):
        sb.add_float_field(name, stored=False, indexed=False, fast=True)
    sb.add_unsigned_field("recalls", stored=False, indexed=False, fast=True)
    sb.add_integer_field("used", stored=False, indexed=False, fast=True)  # last use, epoch seconds
    sb.add_integer_field("recorded", stored=False, indexed=False, fast=True)  # epoch seconds
    sb.add_unsigned_field("codes", stored=False, indexed=False, fast=True)
    return sb.build()


class RecordIndex:
    def __init__(self, path: Path | None):
        """The index in ``path`` (created if need be), or a new one in memory (None)."""
        import tantivy

        self.schema = _schema()
        if path is None:
            self.index = tantivy.Index(self.schema)
        else:
            path.mkdir(parents=True, exist_ok=True)
            self.index = tantivy.Index(self.schema, path=str(path))
        self._t = tantivy
        self.path = path

    # -- writing --------------------------------------------------------------
    def put(self, memories: list[Memory], events: dict[str, list[int]] | None = None) -> None:
        """Insert or replace records, then commit. ``events``: each record's event seqs (all
        of them, oldest first: a replaced document keeps only what it is given)."""
        if not memories:
            return
        events = events or {}
        t = self._t
        writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        for m in memories:
            writer.delete_documents_by_term("id", m.id)
            doc = t.Document()
            doc.add_text("id", m.id)
            doc.add_unsigned("seq", m.seq)
            doc.add_integer("t", time_order(m))
            doc.add_bytes("record", dumps(memory_to_dict(m)))
            for q in events.get(m.id, ()):
                doc.add_unsigned("ev", q)
            for dim, values in record_terms(m).items():
                for v in values:
                    doc.add_text(dim, v)
            for name, a in zip(AXIS_FIELDS, AXES, strict=True):
                doc.add_float(name, float(getattr(m.salience, a)))
            doc.add_float("confidence", float(m.confidence))
            doc.add_unsigned("recalls", m.recall_count)
            doc.add_integer("used", int(parse_ts(last_use(m)).timestamp()))
            doc.add_integer("recorded", int(parse_ts(m.recorded_at).timestamp()))
            doc.add_unsigned("codes", codes(m))
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    # -- reading --------------------------------------------------------------
    def _docs(self, query, limit: int, order_by: str | None = None) -> list[Memory]:
        searcher = self.index.searcher()
        if limit <= 0:
            return []
        kwargs = {"order_by_field": order_by} if order_by else {}
        hits = searcher.search(query, limit, **kwargs).hits
        try:
            return [memory_from_dict(loads(doc.get_first("record"))) for doc in self._read(searcher, hits)]
        except (KeyError, TypeError, AttributeError) as exc:  # a stored record that is not one
            raise ValueError(f"a stored record cannot be read ({type(exc).__name__}: {exc})") from None

    def _read(self, searcher, hits):
        """The stored documents of ``hits`` ((score, address) pairs), in order, the mapped
        pages handed back every _BULK documents and after the last of a bulk read."""
        for n, (_s, a) in enumerate(hits, 1):
            yield searcher.doc(a)
            if n % _BULK == 0:
                self.release()
        if len(hits) >= _BULK:
            self.release()

    def release(self) -> None:
        """Hand back the pages of the index's files this process has mapped (``pages``): after
        reading thousands of records scattered over the doc store, most of it is mapped."""
        if self.path is not None:
            from .pages import release

            release(self.path)

    def ids(self, dim: str, value: str) -> list[str]:
        """The ids of the records under ``dim`` = ``value``, in no set order; no record is
        decoded."""
        q = self.dimension_query(dim, [value])
        searcher = self.index.searcher()
        hits = searcher.search(q, max(self.count(q), 1)).hits
        return [doc.get_first("id") for doc in self._read(searcher, hits)]

    def events_of(self, ids: list[str]) -> dict[str, list[int]]:
        """The seqs of the events that touched each record (``memstore.events.touched_ids``),
        oldest first, as far as the index is built."""
        if not ids:
            return {}
        searcher = self.index.searcher()
        hits = searcher.search(any_of(self._t, self.schema, "id", list(ids)), len(ids)).hits
        return {doc.get_first("id"): [int(q) for q in doc.get_all("ev")] for doc in self._read(searcher, hits)}

    def all(self) -> list[Memory]:
        """Every record (for verify: O(n))."""
        return self._docs(self._t.Query.all_query(), self.count())

    def count_after(self, seq: int) -> int:
        """Records created after ``seq``."""
        t = self._t
        q = t.Query.range_query(self.schema, "seq", t.FieldType.Unsigned, seq + 1, 2**63)
        return self.count(q)

    def get(self, ids: list[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        t = self._t
        q = any_of(t, self.schema, "id", list(ids))
        return {m.id: m for m in self._docs(q, len(ids))}

    def blocks(self, dim: str | None, value: str | None, size: int):
        """The records under ``dim`` = ``value`` (every record: None) in creation order (seq,
        then id), about ``size`` at a time: each decoded once, read by address (no search by
        id), with the mapped pages handed back after each block."""
        q = self._t.Query.all_query() if dim is None else self.dimension_query(dim, [value])
        searcher = self.index.searcher()
        hits = [a for _s, a in searcher.search(q, max(self.count(q), 1)).hits]
        seqs = searcher.fast_field_values("seq", hits)
        order = sorted(range(len(hits)), key=seqs.__getitem__)
        at = 0
        while at < len(order):
            end = min(at + size, len(order))
            while end < len(order) and seqs[order[end]] == seqs[order[end - 1]]:
                end += 1  # (records sharing a seq, an import's, stay in one block: ordered by id)
            try:
                block = [memory_from_dict(loads(searcher.doc(hits[i]).get_first("record"))) for i in order[at:end]]
            except (KeyError, TypeError, AttributeError) as exc:  # a stored record that is not one
                raise ValueError(f"a stored record cannot be read ({type(exc).__name__}: {exc})") from None
            self.release()
            yield sorted(block, key=lambda m: (m.seq, m.id))
            at = end

    def by_seqs(self, seqs: list[int]) -> dict[int, Memory]:
        if not seqs:
            return {}
        q = any_of(self._t, self.schema, "seq", list(seqs))
        return {m.seq: m for m in self._docs(q, len(seqs))}

    def dimension_query(self, dim: str, values: list[str]):
        t = self._t
        return any_of(t, self.schema, dim, list(values))

    def posting(self, dim: str, values: list[str]) -> list[Memory]:
        """Every record in the union of the dimension's posting lists (small lists only)."""
        q = self.dimension_query(dim, values)
        return self._docs(q, self.count(q))

    def session_turns(self, sessions: list[str], limit: int = 2_000) -> list[Memory]:
        """The records said in these sessions (a conversation's turns), at most ``limit``."""
        if not sessions:
            return []
        return self._docs(self.dimension_query("session", sessions), limit)

    def count(self, query=None) -> int:
        searcher = self.index.searcher()
        if query is None:
            return searcher.num_docs
        return searcher.search(query, 1, count=True).count

    def columns(self) -> dict:
        """Every record's seq and aggregate fields as numpy arrays, in one document order
        (``stats`` at a million records: no record is decoded)."""
        import numpy as np

        searcher = self.index.searcher()
        n = searcher.num_docs
        if n == 0:
            return {}
        addrs = [a for _s, a in searcher.search(self._t.Query.all_query(), n).hits]
        out = {"seq": np.array(searcher.fast_field_values("seq", addrs), dtype=np.int64)}
        for name in (*AXIS_FIELDS, "confidence"):
            out[name] = np.array(searcher.fast_field_values(name, addrs), dtype=np.float64)
        out["recalls"] = np.array(searcher.fast_field_values("recalls", addrs), dtype=np.int64)
        out["used"] = np.array(searcher.fast_field_values("used", addrs), dtype=np.int64)
        out["recorded"] = np.array(searcher.fast_field_values("recorded", addrs), dtype=np.int64)
        out["codes"] = np.array(searcher.fast_field_values("codes", addrs), dtype=np.int64)
        return out

    def neighbours(self, dim: str, value: str, limit: int) -> list[int]:
        """Seqs of the newest records (by event time) sharing a value; no record is decoded."""
        if limit <= 0:
            return []
        searcher = self.index.searcher()
        hits = searcher.search(self.dimension_query(dim, [value]), limit, order_by_field="t").hits
        return searcher.fast_field_values("seq", [a for _s, a in hits])
