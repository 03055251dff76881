"""Canonical JSON: sorted keys, compact, UTF-8. Same value -> same bytes, everywhere."""

from __future__ import annotations

import orjson

_OPTS = orjson.OPT_SORT_KEYS


def dumps(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS)


def dumps_line(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_APPEND_NEWLINE)


def dumps_lines(objs) -> bytes:
    """The canonical JSON lines of ``objs``, joined. orjson hands back its working buffer as
    the result (4 KB at least, ~8 KB for a 1 KB line), so results held together, as
    ``b"".join`` holds them, take ~8 times their text: each is copied out and let go."""
    out = bytearray()
    for obj in objs:
        out += orjson.dumps(obj, option=_OPTS | orjson.OPT_APPEND_NEWLINE)
    return bytes(out)


def dumps_pretty(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_INDENT_2)


def loads(data: bytes | str):
    return orjson.loads(data)


JSONDecodeError = orjson.JSONDecodeError
