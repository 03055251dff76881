"""Canonical JSON: sorted keys, compact, UTF-8. Same value -> same bytes, everywhere."""

from __future__ import annotations

import orjson

_OPTS = orjson.OPT_SORT_KEYS


def dumps(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS)


def dumps_line(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_APPEND_NEWLINE)


def dumps_pretty(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_INDENT_2)


def loads(data: bytes | str):
    return orjson.loads(data)


JSONDecodeError = orjson.JSONDecodeError
