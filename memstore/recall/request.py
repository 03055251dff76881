"""Build a recall Request from options or a JSON line, validating every field."""

from __future__ import annotations

from ..errors import UsageError
from ..model import KINDS, LEVELS, OUTCOMES
from ..timeutil import format_ts, parse_instant
from .engine import Request
from .timecues import parse_during, validate_bucket

VOICES = ("lexical", "semantic", "temporal", "graph")
FIELDS = {"query", "k", "now", "actor", "kind", "outcome", "domain", "subject", "during", "level",
          "as_of", "explain", "voices", "keys", "category", "id", "repo"}


# A question, not a document: 10,000 characters is about 2,500 tokens, more than any prompt's
# question. Longer is refused rather than cut: a cut query silently answers a different
# question. (The embedder reads only a text's first 512 tokens anyway; memstore.embed.)
MAX_QUERY_CHARS = 10_000


def check_query(text: str, what: str = "query") -> None:
    """UsageError when a query (or judge's situation) is longer than MAX_QUERY_CHARS."""
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(f"{what} is {len(text)} characters long; the limit is {MAX_QUERY_CHARS:,} "
                         "(give the gist: memories are looked up for a question, not for a document)")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _list(obj: dict, name: str, where: str) -> tuple[str, ...]:
    value = obj.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}{name} must be a string or a list of strings")
    return tuple(value)


def _choices(values: tuple[str, ...], name: str, allowed, where: str) -> tuple[str, ...]:
    for v in values:
        if v not in allowed:
            raise UsageError(f"{where}{name} {v!r} is not one of: {', '.join(allowed)}")
    return values


def build_request(obj: dict, now: str, *, where: str = "", default_k: int = 10) -> Request:
    unknown = sorted(set(obj) - FIELDS)
    if unknown:
        raise UsageError(f"{where}unknown field {unknown[0]!r}; known: {', '.join(sorted(FIELDS))}")
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"{where}query is empty; say what to recall")
    check_query(query.strip(), f"{where}query")
    for name in ("category", "id"):  # eval's labels: ride along, but typed
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{where}{name} {_short(value)} must be a string")
    keys = obj.get("keys")
    if keys is not None and (not isinstance(keys, list)
                             or not all(isinstance(key, str) and key for key in keys)):
        raise UsageError(f"{where}keys {_short(keys)} must be a list of memory keys or ids (strings)")
    k = obj.get("k", default_k)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        raise UsageError(f"{where}k {k!r} must be a whole number from 1 to 1000")
    during = []
    for value in _list(obj, "during", where):
        bucket = parse_during(value, now)
        if not validate_bucket(bucket):
            raise UsageError(f"{where}during {value!r} is not a real date; use 2026-06 or 2026-W23")
        during.append(bucket)
    as_of = obj.get("as_of")
    if as_of is not None:
        as_of = format_ts(parse_instant(as_of, f"{where}as_of"))
    voices = _choices(_list(obj, "voices", where), "voices", VOICES, where) or VOICES
    repo = obj.get("repo")
    if repo is not None:
        from ..access import check_slug

        check_slug(repo, f"{where}repo")
    return Request(
        repo=repo,
        query=query.strip(),
        k=k,
        actors=_list(obj, "actor", where),
        kinds=_choices(_list(obj, "kind", where), "kind", KINDS, where),
        outcomes=_choices(_list(obj, "outcome", where), "outcome", OUTCOMES, where),
        domains=_list(obj, "domain", where),
        subjects=_list(obj, "subject", where),
        during=tuple(during),
        levels=_choices(_list(obj, "level", where), "level", LEVELS, where),
        as_of=as_of,
        explain=bool(obj.get("explain", False)),
        voices=voices,
    )
