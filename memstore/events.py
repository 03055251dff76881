"""Facts about events that several commands need."""

from __future__ import annotations

_ID_FIELDS = ("id", "old", "new", "target")
_LIST_FIELDS = ("ids", "derived_from", "members", "abstracts")


def touched_ids(event: dict) -> list[str]:
    """The memory ids an event creates or changes, in a stable order."""
    ids: list[str] = []
    memory = event.get("memory")
    if isinstance(memory, dict) and memory.get("id"):
        ids.append(memory["id"])
        ids.extend(memory.get("derived_from") or ())
    for name in _ID_FIELDS:
        value = event.get(name)
        if isinstance(value, str):
            ids.append(value)
    for name in _LIST_FIELDS:
        ids.extend(v for v in event.get(name) or () if isinstance(v, str))
    seen: set[str] = set()
    return [i for i in ids if not (i in seen or seen.add(i))]


def summary(event: dict) -> str:
    """One line describing an event, for `memstore log` and `show`."""
    if event.get("op") == "notes":  # private to its agent: its size, never its text
        text = event.get("text")
        return f"working memory: {len(text) if isinstance(text, str) else 0} characters"
    if event.get("op") == "mark":
        return f"{event.get('stage')} examined the records through seq {event.get('through')}"
    memory = event.get("memory")
    if isinstance(memory, dict):
        text = memory.get("text", "")
        return f"{memory.get('id')} {text[:60]!r}"
    ids = touched_ids(event)
    head = " ".join(ids[:3]) + (f" (+{len(ids) - 3})" if len(ids) > 3 else "")
    extra = event.get("reason") or event.get("query") or ""
    return f"{head} {extra!r}".rstrip() if extra else head
