"""`lookup.lines_at`: log lines found by seq, by bisecting the partitions (what `show` reads
for the events the records index names). It must give exactly the lines holding the seqs
asked for, or None (the caller scans) — never another line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.store.layout import Layout
from memstore.store.log import line_seq
from memstore.store.lookup import _probe, lines_at


def _line(seq: int, pad: int) -> bytes:
    return json.dumps({"at": "2026-01-01T00:00:00Z", "op": "touch", "pad": "x" * pad, "seq": seq},
                      separators=(",", ":"), sort_keys=True).encode()


def _write(root: Path, parts: list[list[bytes]], torn: bytes = b"") -> Layout:
    log = root / "log"
    log.mkdir(parents=True)
    for i, lines in enumerate(parts):
        data = b"".join(line + b"\n" for line in lines)
        if i == len(parts) - 1:
            data += torn
        (log / f"2026-{i + 1:02d}.jsonl").write_bytes(data)
    return Layout(root)


@settings(max_examples=60, deadline=None)
@given(pads=st.lists(st.integers(0, 300), min_size=1, max_size=120), cuts=st.lists(st.integers(1, 119), max_size=3),
       ask=st.lists(st.integers(0, 119), max_size=12), torn=st.booleans())
def test_every_seq_is_found_in_a_regular_log(pads, cuts, ask, torn):
    lines = [_line(i + 1, pad) for i, pad in enumerate(pads)]
    bounds = sorted({c for c in cuts if c < len(lines)})
    parts = [lines[a:b] for a, b in zip([0, *bounds], [*bounds, len(lines)], strict=True)]
    seqs = sorted({a % len(lines) + 1 for a in ask})
    with tempfile.TemporaryDirectory() as d:
        layout = _write(Path(d), parts, b'{"seq": 99' if torn else b"")
        assert lines_at(layout, seqs) == [lines[q - 1] for q in seqs]
        assert lines_at(layout, [len(lines) + 1]) is None  # not written yet


@settings(max_examples=60, deadline=None)
@given(pads=st.lists(st.integers(0, 200), min_size=2, max_size=80), bad=st.integers(0, 79),
       ask=st.lists(st.integers(0, 79), min_size=1, max_size=8),
       damage=st.sampled_from([b"", b"not json", b'{"seq": "7"}', b"[1, 2]", b'{"op":"x","seq":3',
                               b'{"x":{"seq":1},"seq":999}', b'{"seq":0012}']))
def test_a_damaged_log_gives_the_right_lines_or_none(pads, bad, ask, damage):
    lines = [_line(i + 1, pad) for i, pad in enumerate(pads)]
    bad %= len(lines)
    written = [*lines[:bad], damage, *lines[bad + 1:]]
    seqs = sorted({a % len(lines) + 1 for a in ask})
    with tempfile.TemporaryDirectory() as d:
        found = lines_at(_write(Path(d), [written]), seqs)
    if bad + 1 in seqs:
        assert found is None
    elif found is not None:
        assert found == [lines[q - 1] for q in seqs]


def test_a_gap_or_an_edited_seq_is_none_not_a_neighbour(tmp_path):
    lines = [_line(q, 10) for q in (1, 2, 3, 5, 6, 4, 7)]  # 4 lost, then a stray 4 after 6
    layout = _write(tmp_path, [lines])
    # (out of order, a search may probe the stray 4 and give up: None, and the caller scans)
    assert lines_at(layout, [1, 2, 3, 5, 7]) in (None, [lines[0], lines[1], lines[2], lines[3], lines[6]])
    assert lines_at(layout, [1, 2, 3]) == lines[:3] and lines_at(layout, [7]) == [lines[6]]
    assert lines_at(layout, [4]) is None or lines_at(layout, [4]) == [lines[5]]
    assert lines_at(layout, [8]) is None
    assert lines_at(Layout(tmp_path / "none"), [1]) is None


@settings(max_examples=40, deadline=None)
@given(pads=st.lists(st.integers(0, 3000), min_size=1, max_size=400), cuts=st.lists(st.integers(1, 399), max_size=3),
       ask=st.lists(st.integers(0, 399), max_size=40))
def test_seqs_in_any_order_and_repeated_are_found_in_that_order(pads, cuts, ask):
    """Many seqs at once (a listing's): found in seq order, each search galloping on from the
    line the last one found, and given back in the order asked."""
    lines = [_line(i + 1, pad) for i, pad in enumerate(pads)]
    bounds = sorted({c for c in cuts if c < len(lines)})
    parts = [lines[a:b] for a, b in zip([0, *bounds], [*bounds, len(lines)], strict=True)]
    seqs = [a % len(lines) + 1 for a in ask]
    with tempfile.TemporaryDirectory() as d:
        layout = _write(Path(d), parts)
        assert lines_at(layout, seqs) == [lines[q - 1] for q in seqs]
        assert lines_at(layout, [*seqs, len(lines) + 1]) is None


_KEYS = st.sampled_from(["seq", "a", "text", 'x"seq', "seq\\", "z"])
_VALUES = st.recursive(
    st.integers(-5, 10**19) | st.text(alphabet='seq":\\{},x ', max_size=12) | st.none(),
    lambda inner: st.dictionaries(_KEYS, inner, max_size=3) | st.lists(inner, max_size=3), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(event=st.dictionaries(_KEYS, _VALUES, max_size=5),
       seq=st.integers(-5, 10**20) | st.sampled_from(["7", 1.5, True, None, [3]]), pad=st.binary(max_size=3))
def test_a_probe_reads_the_seq_the_parser_reads(event, seq, pad):
    """A search's probe reads ``"seq":N`` without parsing the line. On a JSON line with a seq
    of its own (every event's), whatever else it holds (nested objects with their own seq,
    keys and texts spelling it), it says what ``line_seq`` says; on a line without one (not
    an event) it may read a nested one: it only steers, and the line found is parsed."""
    line = json.dumps({**event, "seq": seq}, separators=(",", ":"), sort_keys=True).encode()
    buf = pad + line + b"\n"
    assert _probe(buf, len(pad), len(pad) + len(line)) == line_seq(line)
    bare = json.dumps(event, separators=(",", ":"), sort_keys=True).encode()
    assert _probe(bare + b"\n", 0, len(bare)) in (line_seq(bare), *_nested_seqs(event))


def _nested_seqs(value) -> list:
    if isinstance(value, dict):
        return [*(value[k] for k in value if k.endswith("seq")), *(q for v in value.values() for q in _nested_seqs(v))]
    if isinstance(value, list):
        return [q for v in value for q in _nested_seqs(v)]
    return []
