"""A write's lookups (``memstore.store.lookup.known_for``) search the log a window at a
time, handing each window's pages back: a token that straddles two windows must still be
found, and found first where it comes first; a bulk write's one pass must find what a
single write's search per token finds."""

from __future__ import annotations

import mmap

from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.store import lookup
from memstore.store.layout import Layout


def _every(buf: bytes, token: bytes, accept):
    """The reference: every occurrence in order, the first accepted."""
    pos = buf.find(token)
    while pos >= 0:
        value = accept(lookup._line_at(buf, pos))
        if value:
            return value
        pos = buf.find(token, pos + 1)
    return None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300).map(lambda b: bytes(b"ab\nc"[c % 4] for c in b)),
       st.sampled_from([b"a", b"ab", b"aba", b"bab\n"]), st.integers(1, 40))
def test_a_windowed_search_finds_what_a_whole_search_finds(buf, token, window):
    def accept(line):  # (a line accepted when it ends in c: not every occurrence is)
        return line if line.endswith(b"c") else None

    saved = lookup._WINDOW
    lookup._WINDOW = window
    try:
        assert lookup._find(buf, token, accept) == _every(buf, token, accept)
    finally:
        lookup._WINDOW = saved


def test_a_token_at_any_offset_is_found_whatever_the_window():
    """One occurrence, at every offset against every window size: straddling included."""
    def accept(line):
        return line if line.endswith(b"c") else None

    saved = lookup._WINDOW
    try:
        for window in range(1, 12):
            lookup._WINDOW = window
            for k in range(12):
                for token in (b"ab", b"abab\"x"):
                    buf = b"\n" + b"x" * k + token + b"yc\nzz"
                    assert lookup._find(buf, token, accept) == b"x" * k + token + b"yc", (window, k, token)
    finally:
        lookup._WINDOW = saved


def test_known_for_finds_ids_and_keys_across_windows_of_a_mapped_log(tmp_path, monkeypatch):
    from reliability_support import cli

    store = tmp_path / "s"
    ids = []
    for i in range(12):
        rc, out, err = cli("--store", store, "remember", f"note number {i} about the billing move", "--key", f"k{i}",
                           "--now", f"2026-03-{1 + i:02d}T09:00:00Z")
        assert rc == 0, err
        ids.append(out.strip())
    layout = Layout(store)
    for window in (mmap.PAGESIZE, 97, 1 << 26):  # (pages handed back as it goes; odd sizes; one window)
        monkeypatch.setattr(lookup, "_WINDOW", window)
        asked_ids, asked_keys = [*ids, "m0000000000000000"], [*(f"k{i}" for i in range(12)), "nope"]
        many = lookup.known_for(layout, asked_ids, asked_keys)  # (one pass: a bulk write's lookup)
        for mid in asked_ids:  # and token by token, as a single write looks up
            assert many.has_id(mid) == lookup.known_for(layout, [mid], []).has_id(mid) == (mid in ids)
        for key in asked_keys:
            assert many.key_id(key) == lookup.known_for(layout, [], [key]).key_id(key) == (
                ids[int(key[1:])] if key != "nope" else None)
