"""The key cache (memstore.nightcache.keycache): consolidate's update keys kept by text hash.
It must hand back exactly what ``keys`` derives, derive each text once, survive a torn or
damaged block, and never serve another rule's keys (KEYS_VERSION is pinned to the rule)."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.beliefs.frame import KEYS_VERSION, keys_of
from memstore.nightcache import keycache
from memstore.nightcache.keycache import KeyCache

DATA = Path(__file__).parent / "data" / "beliefs"
# sha256 of every text's sorted keys over tests/data/beliefs, under KEYS_VERSION
RULE_DIGEST = {1: "9a9045afb6ef882e9dc4594fd38312b40bceff9bd4973e9654fee156d9a73825",
               2: "a2ed77df11bc4f29455a8a927d0ab9925e0f9e724519ab0773bb52b91ef0231f"}  # 2: 暮らし, 越してきた say where one lives


def _texts() -> list[str]:
    found: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "text" and isinstance(x, str):
                    found.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                walk(json.loads(line))
    return found


def _digest(sets) -> str:
    h = hashlib.sha256()
    for s in sets:
        h.update("\x1e".join(sorted(s)).encode() + b"\n")
    return h.hexdigest()


def test_the_version_names_the_rule():
    """Changing ``keys`` changes this digest: then bump KEYS_VERSION (frame.py) and record
    the new digest here, so no store reads keys a former rule derived."""
    assert _digest(keys_of(_texts())) == RULE_DIGEST.get(KEYS_VERSION), (
        "keys() changed: bump KEYS_VERSION in memstore/beliefs/frame.py and record the new digest")


class _Counting:
    def __init__(self):
        self.asked: list[str] = []

    def __call__(self, texts):
        self.asked += texts
        return keys_of(texts)


def _fresh(path: Path) -> KeyCache:
    """A cache as a new process sees it (nothing read yet)."""
    keycache._LOADED.clear()
    return KeyCache(path)


def test_keys_come_back_as_derived_and_each_text_is_derived_once(tmp_path):
    texts = _texts()[:200] + ["", "café ☕ 設定は26度", _texts()[0]]  # an empty text, a repeat
    derive = _Counting()
    first = _fresh(tmp_path).keys(texts, derive)
    assert first == keys_of(texts)
    assert len(derive.asked) == len(set(texts))  # the repeat once
    again = _Counting()
    assert _fresh(tmp_path).keys(texts, again) == keys_of(texts)  # read back by another process
    assert again.asked == []
    more = texts[:5] + ["a text not seen before"]
    assert KeyCache(tmp_path).keys(more, again) == keys_of(more)  # this process: appended since
    assert again.asked == ["a text not seen before"]
    assert [p.name for p in tmp_path.iterdir()] == [f"keys-{KEYS_VERSION}.bin"]


def test_no_directory_keeps_nothing():
    derive = _Counting()
    assert KeyCache(None).keys(["x", "y"], derive) == keys_of(["x", "y"])
    assert KeyCache(None).keys(["x"], derive) == keys_of(["x"])
    assert derive.asked == ["x", "y", "x"]


def test_a_cache_that_cannot_be_written_costs_only_time(tmp_path):
    """A full disk or an unwritable cache directory: the keys are derived, nothing fails."""
    blocked = tmp_path / "not-a-directory"
    blocked.write_bytes(b"")
    texts = _texts()[:10]
    assert _fresh(blocked / "cache").keys(texts, keys_of) == keys_of(texts)


def _two_blocks(tmp_path: Path) -> tuple[list[str], list[str], Path, int]:
    """A cache of two blocks, written by two processes: (their texts, the file, the size of
    the first block)."""
    a, b = _texts()[:30], _texts()[30:60]
    _fresh(tmp_path).keys(a, keys_of)
    path = tmp_path / f"keys-{KEYS_VERSION}.bin"
    first = path.stat().st_size
    _fresh(tmp_path).keys(b, keys_of)
    return a, b, path, first


def test_a_torn_block_is_derived_again_and_cut_off(tmp_path):
    a, b, path, whole = _two_blocks(tmp_path)
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size - 7)  # a crash mid-append of the second block
    derive = _Counting()
    assert _fresh(tmp_path).keys(a + b, derive) == keys_of(a + b)
    assert sorted(set(derive.asked)) == sorted(set(b) - set(a))
    assert path.stat().st_size > whole  # the torn block cut, the new one after the first
    derive = _Counting()
    assert _fresh(tmp_path).keys(a + b, derive) == keys_of(a + b)
    assert derive.asked == []


def test_a_damaged_block_is_skipped_and_the_next_still_read(tmp_path):
    a, b, path, first = _two_blocks(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[first - 3] ^= 0x20  # a byte of the first block's keys text: its CRC fails
    path.write_bytes(bytes(raw))
    derive = _Counting()
    assert _fresh(tmp_path).keys(a + b, derive) == keys_of(a + b)
    assert sorted(set(derive.asked)) == sorted(set(a) - set(b))


def test_a_block_whose_offsets_do_not_add_up_is_not_believed_even_with_its_crc(tmp_path):
    import struct
    import zlib

    from memstore.index.embcache import text_hash

    texts = ["alpha beta", "gamma delta"]
    hashes = b"".join(text_hash(t) for t in texts)
    body = b"alpha\x1fbeta" + b"delta\x1fgamma"
    for offsets in ((0, 10, 999), (3, 10, 21), (0, 15, 10)):  # past the end, not from 0, falling
        payload = hashes + struct.pack("<3I", *offsets) + body
        path = tmp_path / f"keys-{KEYS_VERSION}.bin"
        path.write_bytes(struct.pack("<4sIII", b"MSK1", 2, len(payload), zlib.crc32(payload)) + payload)
        derive = _Counting()
        assert _fresh(tmp_path).keys(texts, derive) == keys_of(texts)
        assert derive.asked == texts


# (seeded noise: random bytes would name the test differently in each process, and
# pytest-xdist refuses workers that collected different tests)
@pytest.mark.parametrize("junk", [b"", b"MSK1", b"not a cache at all" * 10, random.Random(7).randbytes(300)],
                         ids=["empty", "magic-only", "text", "noise"])
def test_a_foreign_or_empty_file_is_never_believed(tmp_path, junk):
    path = tmp_path / f"keys-{KEYS_VERSION}.bin"
    path.write_bytes(junk)
    texts = _texts()[:20]
    derive = _Counting()
    assert _fresh(tmp_path).keys(texts, derive) == keys_of(texts)
    assert len(derive.asked) == len(set(texts))
    assert _fresh(tmp_path).keys(texts, _Counting()) == keys_of(texts)


def test_two_processes_appending_at_once_lose_nothing(tmp_path):
    texts = _texts()
    code = ("import sys; from memstore.beliefs.frame import keys_of; from memstore.nightcache.keycache import KeyCache;"
            "import json; t = json.loads(sys.stdin.read());"
            "[KeyCache(__import__('pathlib').Path(sys.argv[1])).keys(t[i:i + 7], keys_of) for i in range(0, len(t), 7)]")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE)
             for _ in range(2)]
    for i, p in enumerate(procs):
        p.communicate(json.dumps(texts[i::2]).encode())
        assert p.returncode == 0
    derive = _Counting()
    assert _fresh(tmp_path).keys(texts, derive) == keys_of(texts)
    assert derive.asked == []


def _store(tmp_path: Path) -> Path:
    """The belief set's old statements on one day and their updates five days later, with no
    consolidation yet: the night's run has every update to rank candidates for."""
    from reliability_support import cli, make_store

    store = make_store(tmp_path / "store")
    rows = [json.loads(line) for line in (DATA / "updates.jsonl").read_text(encoding="utf-8").splitlines() if line]
    for side, day in (("old", "2026-03-01"), ("new", "2026-03-06")):
        lines = "".join(json.dumps({"text": r[side]["text"]}, ensure_ascii=False) + "\n" for r in rows)
        rc, _out, err = cli("--store", store, "-q", "remember", "--jsonl", "-", "--now", f"{day}T10:00:00Z",
                            stdin=lines.encode())
        assert rc == 0, err
    return store


def test_consolidate_gives_the_same_events_with_the_cache_cold_warm_damaged_or_without(tmp_path, monkeypatch):
    """The CLI's consolidate with a cold cache, a warm one (read by a new process) and a
    damaged one, and the library's without any: the same events, byte for byte."""
    from reliability_support import cli

    from memstore import writes
    from memstore.config import load_config
    from memstore.store.layout import Layout

    store = _store(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(cache))
    outs = []
    for run in ("cold", "warm", "damaged"):
        if run == "damaged":
            path = cache / f"keys-{KEYS_VERSION}.bin"
            raw = bytearray(path.read_bytes())
            raw[len(raw) // 2] ^= 0x01
            path.write_bytes(bytes(raw))
        keycache._LOADED.clear()  # as a new process
        rc, out, err = cli("--store", store, "consolidate", "--json", "--dry-run", "--now", "2026-03-07T00:00:00Z")
        assert rc == 0, err
        outs.append(out)
    assert outs[0] == outs[1] == outs[2]
    report = json.loads(outs[0])
    assert report["counts"].get("supersede", 0) + report["counts"].get("conflict", 0) >= 10
    config = load_config((store / "memstore.toml").read_text())
    plain = writes.consolidate(Layout(store), now="2026-03-07T00:00:00Z", config=config, dry_run=True)
    assert json.loads(json.dumps(plain.lifecycle[0])) == report["events"]


def test_postings_gathered_from_the_file_equal_reading_each_texts_keys(tmp_path, monkeypatch):
    """``Keys.postings`` (a night's consolidate gathers the day's keys' postings over the
    whole pool from the file's text) against each text's keys read one by one: texts
    cached and derived, empty, repeated, across blocks, a few texts joined at a time; and a
    block whose keys text is not UTF-8 though its CRC holds, derived again."""
    import zlib

    monkeypatch.setattr(keycache, "_GATHER", 3)
    texts = _texts()[:60] + ["", "café ☕ 設定は26度", _texts()[0], ""]
    _fresh(tmp_path).keys(texts[:20], keys_of)  # a block
    _fresh(tmp_path).keys(texts[10:40], keys_of)  # another, overlapping
    # a hand-written block: the keys of texts[40] as bytes that do not decode, CRC and all
    bad = keycache.text_hash(texts[40])
    payload = bad + (0).to_bytes(4, "little") + (2).to_bytes(4, "little") + b"\xff\xfe"
    with open(tmp_path / f"keys-{KEYS_VERSION}.bin", "ab") as fh:
        fh.write(keycache._HEAD.pack(keycache.MAGIC, 1, len(payload), zlib.crc32(payload)) + payload)
    derive = _Counting()
    cache = _fresh(tmp_path)
    cache._append = lambda *a: None  # (nothing derived is kept: texts[41:] stay derived, below too)
    found = cache.keys(texts, derive)
    expected = keys_of(texts)
    assert list(found) == expected and found == expected
    assert texts[40] in derive.asked  # (the undecodable entry, derived again)
    for order in (texts, texts[::-1]):  # (reversed: the derived texts come before the cached)
        every: dict[str, list[int]] = {}
        for i, k in enumerate(keys_of(order)):
            for word in k:
                every.setdefault(word, []).append(i)
        some = frozenset(list(every)[::3]) | {"no such key"}
        for wanted in (None, some, frozenset()):
            keycache._LOADED.clear()
            cache = KeyCache(tmp_path)
            cache._append = lambda *a: None
            got = cache.keys(order, derive).postings(wanted)
            assert {w: a.tolist() for w, a in got.items()} == {
                w: p for w, p in every.items() if wanted is None or w in wanted}
        # ``Keys.words``: every text's keys with the position each belongs to (a snapshot's
        # keys file is built from them), the same pairs as reading each text's keys
        keycache._LOADED.clear()
        cache = KeyCache(tmp_path)
        cache._append = lambda *a: None
        words, owner = cache.keys(order, derive).words()
        assert len(words) == len(owner) and sorted(zip(owner.tolist(), words, strict=True)) == sorted(
            (i, w) for i, k in enumerate(keys_of(order)) for w in k)
