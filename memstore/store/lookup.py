"""Existence checks for the write path without loading state (no pyarrow, no fold).

The log is scanned as bytes: canonical JSON makes ``"id":"<id>"`` an exact token.
"""

from __future__ import annotations

import mmap
import re

from ..codec import dumps, loads
from .layout import Layout
from .log import log_files

_ID = re.compile(rb'"id":"(m[0-9a-f]{15})"')


def _mapped(path):
    with open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            return None
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _line_at(buf, pos: int) -> bytes:
    start = buf.rfind(b"\n", 0, pos) + 1
    end = buf.find(b"\n", pos)
    return buf[start:end] if end >= 0 else b""


def _event_id(event: dict) -> str | None:
    return event.get("id") or (event.get("memory") or {}).get("id")


class Known:
    """Which ids and keys the log already holds."""

    def __init__(self, ids: set[str], keys: dict[str, str]):
        self.ids = ids
        self.keys = keys

    def has_id(self, mid: str) -> bool:
        return mid in self.ids

    def key_id(self, key: str) -> str | None:
        return self.keys.get(key)


def known_for(layout: Layout, ids: list[str], keys: list[str]) -> Known:
    """Look up a few ids and keys (single writes): one substring search per token."""
    found_ids: set[str] = set()
    found_keys: dict[str, str] = {}
    id_tokens = {mid: b'"id":"' + mid.encode() + b'"' for mid in ids}
    key_tokens = {k: b'"key":' + dumps(k) for k in keys}
    for path in log_files(layout):
        buf = _mapped(path)
        if buf is None:
            continue
        with buf:
            for mid, token in id_tokens.items():
                if mid not in found_ids and buf.find(token) >= 0:
                    found_ids.add(mid)
            for key, token in key_tokens.items():
                if key in found_keys:
                    continue
                pos = buf.find(token)
                if pos >= 0:
                    line = _line_at(buf, pos)
                    try:
                        mid = _event_id(loads(line))
                    except ValueError:
                        continue
                    if mid:
                        found_keys[key] = mid
    return Known(found_ids, found_keys)


def known_all(layout: Layout) -> Known:
    """Every id and key (bulk writes): one regex pass, and a parse of key-bearing lines only."""
    ids: set[str] = set()
    keys: dict[str, str] = {}
    for path in log_files(layout):
        data = path.read_bytes()
        ids.update(m.decode() for m in _ID.findall(data))
        if b'"key":"' not in data:
            continue
        for line in data.split(b"\n"):
            if b'"key":"' in line:
                try:
                    event = loads(line)
                except ValueError:
                    continue
                key = event.get("key") if "key" in event else (event.get("memory") or {}).get("key")
                mid = _event_id(event)
                if key is not None and mid:
                    keys.setdefault(key, mid)
    return Known(ids, keys)
