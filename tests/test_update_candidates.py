"""consolidate compares each new record with the older ones sharing the most keys
(memstore.beliefs.candidates): the merge that stops early must give exactly the list that
counting every record gives, on regular logs and on logs written with --allow-past."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.beliefs import candidates, later
from memstore.beliefs.candidates import Postings
from memstore.beliefs.frame import keys, keys_of
from memstore.model import Memory
from memstore.nightcache import keycache
from memstore.nightcache.keycache import KeyCache

WORDS = ("billing", "postgres", "deploy", "friday", "office", "berlin", "paris", "lead", "alice", "bob",
         "tea", "coffee", "vegetarian", "fish", "plan", "rollback")


def _reference(pool: list[Memory], n: Memory, limit: int) -> list[str]:
    """The rule as consolidate first wrote it: count every record's shared keys."""
    shared: dict[str, int] = {}
    by_id = {m.id: m for m in pool}
    for word in keys(n.text):
        for o in pool:
            if word in keys(o.text) and o.id != n.id and later(o, n):
                shared[o.id] = shared.get(o.id, 0) + 1
    return sorted(shared, key=lambda i: (-shared[i], -by_id[i].seq, i))[:limit]


def _record(i: int, words: list[str], day: int) -> Memory:
    """Days past 336 fall in 2027 and 2028; every fifth record tells of a year before it was
    recorded (``later``'s year condition)."""
    at = f"{2026 + day // 336}-{1 + day % 336 // 28:02d}-{1 + day % 28:02d}T10:00:00Z"
    told = at if i % 5 else f"{int(at[:4]) - 1}{at[4:]}"
    return Memory(id=f"m{i:015x}", text=" ".join(words), kind="fact", recorded_at=at,
                  occurred_at=told[:16] + "Z", precision="minute", seq=i + 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
                          st.integers(0, 300)), min_size=1, max_size=60),
       st.booleans(), st.integers(1, 6), st.sets(st.integers(0, 59)),
       st.sampled_from([0, 8, 10**9]), st.sampled_from([(0, 64 << 20), (16, 64 << 20), (10**9, 64 << 20),
                                                         (10**9, 120)]))
def test_the_early_stopping_merge_equals_counting_every_record(rows, regular, limit, gone, sparse, dense):
    # sparse: how shared keys are counted (candidates._SPARSE): 0 always by sorting the
    # postings (np.unique), 10**9 always in a count array, 8 the default's mix; dense:
    # which keys are added as rows (_DENSE: 0 none, 10**9 all) and the bytes of rows kept
    # (_DENSE_BYTES: 120 is two rows of a 60-record pool, the other keys scattered)
    defaults = candidates._SPARSE, candidates._DENSE, candidates._DENSE_BYTES
    candidates._SPARSE, (candidates._DENSE, candidates._DENSE_BYTES) = sparse, dense
    try:
        _check(rows, regular, limit, gone)
    finally:
        candidates._SPARSE, candidates._DENSE, candidates._DENSE_BYTES = defaults


def _check(rows, regular, limit, gone):
    if regular:
        rows = [(w, d) for w, (_w, d) in zip((w for w, _d in rows), sorted(rows, key=lambda r: r[1]), strict=True)]
    rows = [(w, d * 3) for w, d in rows]  # up to 900 days: three record years
    pool = [_record(i, words, day) for i, (words, day) in enumerate(rows)]
    postings = Postings(pool)
    assert postings.regular or not regular
    for n in pool:
        assert [o.id for o in postings.ranked(n, limit)] == _reference(pool, n, limit)
    # postings gathered for some records' keys (a night's new ones): the others' when ranked
    wanted = [m.id for i, m in enumerate(pool) if i in gone]
    some = Postings(pool, wanted=wanted)
    for n in [*(m for m in pool if m.id in wanted), *pool]:
        assert [o.id for o in some.ranked(n, limit)] == _reference(pool, n, limit)
    # the pool's keys from the key cache (half of them there ahead, the rest derived), its
    # postings gathered from the file's text
    with tempfile.TemporaryDirectory() as d:
        keycache._LOADED.clear()
        KeyCache(Path(d)).keys([m.text for m in pool[::2]], keys_of)
        keycache._LOADED.clear()  # (as a new process)
        for want in (None, wanted):
            cached = Postings(pool, keyer=KeyCache(Path(d)).keys, wanted=want)
            for n in pool:
                assert [o.id for o in cached.ranked(n, limit)] == _reference(pool, n, limit)
        keycache._LOADED.clear()
    # records that left the pool since it was built (consolidate's later rounds) are passed over
    alive = postings.alive({m.id for i, m in enumerate(pool) if i not in gone})
    left = [m for i, m in enumerate(pool) if i not in gone]
    for n in left:
        assert [o.id for o in postings.ranked(n, limit, alive)] == _reference(left, n, limit)


def test_a_templated_bulk_reads_little():
    """100k-style templated texts: every key in every record; the merge stops after the
    newest few instead of counting the whole pool for each new record."""
    pool = [_record(i, ["catchup", "probe", f"zqx{i}", "rollback", "plan"], i // 200) for i in range(4000)]
    postings = Postings(pool)
    assert postings.regular
    n = pool[-1]
    assert [o.id for o in postings.ranked(n, 20)] == [m.id for m in pool[-21:-1][::-1]]



def test_records_sharing_more_keys_than_a_byte_counts_are_ranked_by_their_count():
    """A count array of bytes would wrap past 255 shared keys: long texts count in 64 bits."""
    many = [f"qz{i}x" for i in range(300)]
    assert len(keys(" ".join(many))) >= 256
    pool = [_record(i, many[:cut], i) for i, cut in enumerate((300, 260, 10, 290, 300, 5))]
    for dense, sparse in ((16, 0), (10**9, 0), (0, 0), (16, 10**9)):
        defaults = candidates._DENSE, candidates._SPARSE
        candidates._DENSE, candidates._SPARSE = dense, sparse
        try:
            postings = Postings(pool)
            for n in pool:
                assert [o.id for o in postings.ranked(n, 4)] == _reference(pool, n, 4)
        finally:
            candidates._DENSE, candidates._SPARSE = defaults

def _pairs() -> list[tuple[str, str]]:
    """(older, newer) texts of the belief-update set: updates, and stable facts with their lookalikes."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parent / "data" / "beliefs"
    rows = [json.loads(line) for name in ("updates.jsonl", "stable.jsonl")
            for line in (data / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["old"]["text"], r["new"]["text"]) if "old" in r else (r["fact"]["text"], r["lookalike"]["text"])
            for r in rows]


def test_texts_relation_links_share_a_key():
    """consolidate compares only records sharing a key, so every pair the rules link must
    share one: a loanword across scripts too (hackathon / ハッカソン), or it is never compared."""
    from memstore.beliefs import relation

    linked = [(o, n) for o, n in _pairs() if relation(o, n) is not None]
    assert len(linked) >= 60
    assert [(o, n) for o, n in linked if not keys(o) & keys(n)] == []
    assert keys("Hackathon is on April 25-26.") & keys("ハッカソンは中止になりました。")


def test_a_cancellation_in_the_other_language_opens_a_conflict(tmp_path):
    from reliability_support import cli, log_events, make_store

    store = make_store(tmp_path / "s")
    assert cli("--store", store, "-q", "remember", "Hackathon is on April 25-26.", "--now", "2026-03-13T10:00:00Z")[0] == 0
    assert cli("--store", store, "-q", "remember", "ハッカソンは中止になりました。", "--now", "2026-04-10T10:00:00Z")[0] == 0
    assert cli("--store", store, "-q", "consolidate", "--now", "2026-04-11T00:00:00Z")[0] == 0
    conflicts = [e for e in log_events(store)[0] if e["op"] == "conflict"]
    assert [(c["rule"], c["detail"]) for c in conflicts] == [("cancel", "unsure: across languages: cancel of '~ksn'")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=20), max_size=200), st.integers(min_value=1, max_value=30))
def test_the_least_count_the_best_reach_is_found_by_halving_as_going_down(counts, limit):
    """``_least``: the largest count at least ``limit`` of the counts reach (0 when fewer
    than ``limit`` are above 0; None when none is), as going down from the top finds it."""
    import numpy as np

    from memstore.beliefs.candidates import _least

    shared = np.array(counts, dtype=np.uint8)
    top = max(counts, default=0)
    want = None if top == 0 else next((level for level in range(top, 0, -1)
                                       if sum(c >= level for c in counts) >= limit), 0)
    assert _least(shared, limit) == want
