"""Chat exports as conversation turns: parse, validate, and build one remember draft a message.

``parse(data, name=..., now=..., max_chars=...)`` reads the bytes of a JSON or JSONL file in
one of the common chat export shapes (detected):

1. a list of messages ``[{"role", "content", "timestamp"}]`` (content a string or a list of
   parts ``[{"type": "text", "text": ...}]``), or the same one message a line (JSONL); a
   message's ``session``/``conversation_id`` groups it into its conversation;
2. a conversation ``{"messages": [...], "id"?, "title"?}``, a list of them, or one a line;
3. a Claude.ai ``conversations.json`` (``chat_messages`` with ``sender``/``text``);
4. a ChatGPT ``conversations.json`` (a ``mapping`` of nodes: the branch ending at
   ``current_node``, the one the user kept, is read; other branches are counted, not kept).

Each kept message becomes a draft as a ``remember --jsonl`` row would: the speaker is the
actor, an assistant's message has source ``agent`` (its confidence; a person's takes
memory.default_source), ``session`` the conversation's id (given, else derived from its first message),
``turn`` its 1-based position among all the conversation's messages (skipped ones count, so
positions match the source), ``occurred_at`` its time (else the time of the message before it,
else the conversation's, else now), and ``key`` ``chat:SESSION:TURN``: importing the same
file again is a no-op. Empty, system and tool, hidden and non-text messages are skipped and
counted; anything malformed is a UsageError naming the file and the place, and nothing is
returned. A message over max_chars refuses the file too (as remember --jsonl does): cutting
it would store a turn that was never said. Pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .codec import JSONDecodeError, dumps, loads
from .errors import UsageError
from .remember import Draft, validate
from .timeutil import format_ts, parse_occurred

# Skip reasons, in the order the summary names them.
EMPTY, SYSTEM, NON_TEXT, OTHER_BRANCH = "empty", "system_tool", "non_text", "other_branches"
SKIPS = (EMPTY, SYSTEM, NON_TEXT, OTHER_BRANCH)

_USER_ROLES = frozenset(("user", "human"))
_ASSISTANT_ROLES = frozenset(("assistant", "ai", "bot", "model"))
_SYSTEM_ROLES = frozenset(("system", "developer", "tool", "function", "ipython"))
_TEXT_PARTS = frozenset(("text", "input_text", "output_text"))
_TIME_FIELDS = ("timestamp", "created_at", "create_time", "time")
_ID_FIELDS = ("id", "session", "conversation_id", "uuid")
_ROLE_FIELDS = ("role", "sender", "author", "speaker")
_EPOCH_TEXT = re.compile(r"^-?\d{9,}(\.\d+)?$")  # "1717750000": seconds, not a year
_SHAPES = ('expected a list of messages ({"role", "content"}), a conversation ({"messages": [...]}), '
           "a list of conversations, JSONL with one message a line, or a Claude or ChatGPT "
           "conversations.json")


@dataclass
class ChatImport:
    """What a chat file holds: the drafts to remember and what was skipped, by reason."""

    drafts: list[Draft] = field(default_factory=list)
    conversations: int = 0
    read: int = 0  # every message seen, kept or skipped
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIPS, 0))


@dataclass
class _Message:
    role: str | None  # None: a ChatGPT node skipped before its role mattered (hidden, tool)
    text: str
    time: str | None
    skip: str | None  # a reason from SKIPS, or None to keep
    where: str


@dataclass
class _Conversation:
    given_id: str | None
    time: str | None
    messages: list[_Message]
    where: str
    label: str  # where it is, for messages about two conversations: "conversation 2", "line 7"
    other_branches: int = 0


def parse(data: bytes, *, name: str, now: str, max_chars: int, user: str = "user",
          assistant: str = "assistant", keep: bool = False) -> ChatImport:
    """The drafts a chat export's bytes hold (see the module doc); UsageError on malformed input."""
    if data.startswith(b"\xef\xbb\xbf"):  # a BOM, as some Windows tools write
        data = data[3:]
    if not data.strip():
        raise UsageError(f"{name} is empty; nothing was imported")
    try:
        conversations = _conversations(_json_or_jsonl(data, name), name)
    except UsageError as exc:
        raise UsageError(f"{exc}; nothing was imported") from None
    if not any(c.messages for c in conversations):
        raise UsageError(f"{name} holds no messages; nothing was imported")
    names = {"user": user, "assistant": assistant}
    found = ChatImport(conversations=len(conversations))
    sessions: dict[str, str] = {}
    for conv in conversations:
        session = _session(conv, sessions, name)
        found.skipped[OTHER_BRANCH] += conv.other_branches
        found.read += conv.other_branches
        last = conv.time  # a message without a time was said no earlier than the one before it
        for turn, msg in enumerate(conv.messages, start=1):
            found.read += 1
            last = msg.time or last
            if msg.skip is not None:
                found.skipped[msg.skip] += 1
                continue
            row = {"text": msg.text, "actor": [names.get(msg.role, msg.role)], "session": session,
                   "turn": turn, "key": f"chat:{session}:{turn}", "occurred_at": last or now}
            if msg.role == "assistant":  # an assistant's words are not the user's facts
                row["source"] = "agent"
            if keep:
                row["keep"] = True
            try:
                found.drafts.append(validate(row, max_chars=max_chars, where=msg.where))
            except UsageError as exc:
                raise UsageError(f"{exc}; nothing was imported") from None
    return found


# --------------------------------------------------------------------------- reading the file

def _json_or_jsonl(data: bytes, name: str):
    """("json", value) for a JSON document, else ("jsonl", [(line number, object)])."""
    try:
        return "json", loads(data)
    except JSONDecodeError as exc:
        whole = exc
    rows = []
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except JSONDecodeError:
            if not rows:  # the first line is not JSON either: a JSON document with an error
                raise UsageError(f"{name}: not valid JSON ({whole.msg} at line {whole.lineno}, "
                                 f"column {whole.colno}) nor JSONL") from None
            raise UsageError(f"{name}:{n}: not valid JSON (each line of a JSONL file is one object)") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{name}:{n}: expected a JSON object (a message or a conversation)")
        rows.append((n, obj))
    return "jsonl", rows


def _conversations(doc, name: str) -> list[_Conversation]:
    kind, value = doc
    if kind == "jsonl":
        first = value[0][1]
        if _is_conversation(first):
            return [_conversation(obj, f"{name}:{n}: ", f"line {n}") for n, obj in value]
        return _grouped([(f"{name}:{n}: ", obj) for n, obj in value])
    if isinstance(value, dict):
        if _is_conversation(value):
            return [_conversation(value, f"{name}: ", "the conversation")]
        if _is_message(value):  # a JSONL file of one line
            return _grouped([(f"{name}: ", value)])
        raise UsageError(f"{name}: not a chat export: {_SHAPES}")
    if not isinstance(value, list):
        raise UsageError(f"{name}: not a chat export: {_SHAPES}")
    if not value:
        return []
    for i, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise UsageError(f"{name}: item {i}: expected a JSON object (a message or a conversation), "
                             f"not {_show(item)}")
    if _is_conversation(value[0]):
        return [_conversation(obj, f"{name}: conversation {i}: ", f"conversation {i}")
                for i, obj in enumerate(value, start=1)]
    if _is_message(value[0]):
        return _grouped([(f"{name}: message {i}: ", obj) for i, obj in enumerate(value, start=1)])
    raise UsageError(f"{name}: not a chat export: item 1 has none of the fields role, content, messages, "
                     f"chat_messages, mapping; {_SHAPES}")


def _is_conversation(obj: dict) -> bool:
    return any(k in obj for k in ("messages", "chat_messages", "mapping"))


def _is_message(obj: dict) -> bool:
    return any(k in obj for k in (*_ROLE_FIELDS, "content", "text"))


def _grouped(rows: list[tuple[str, dict]]) -> list[_Conversation]:
    """Flat messages, grouped by their session field (in order of first appearance)."""
    groups: dict[str | None, _Conversation] = {}
    for where, obj in rows:
        if _is_conversation(obj):
            raise UsageError(f"{where}a conversation among messages; give either messages or conversations")
        sid = _id(obj, ("session", "conversation_id"), where)
        conv = groups.get(sid)
        if conv is None:
            conv = groups[sid] = _Conversation(sid, None, [], where, f"session {sid}")
        conv.messages.append(_message(obj, where))
    return list(groups.values())


# --------------------------------------------------------------------------- conversations

def _conversation(obj: dict, where: str, label: str) -> _Conversation:
    if not isinstance(obj, dict) or not _is_conversation(obj):
        raise UsageError(f"{where}expected a conversation (an object with messages, chat_messages or mapping)")
    cid = _id(obj, _ID_FIELDS, where)
    if cid is not None:
        where = f"{where[:-2]} ({cid}): "
    time = _time_of(obj, where, "conversation ")
    if "mapping" in obj:
        return _chatgpt(obj, cid, time, where, label)
    field_name = "chat_messages" if "chat_messages" in obj else "messages"
    messages = obj[field_name]
    if not isinstance(messages, list):
        raise UsageError(f"{where}{field_name} must be a list of messages, not {_show(messages)}")
    parsed = []
    for i, m in enumerate(messages, start=1):
        at = f"{where}message {i}: "
        if not isinstance(m, dict):
            raise UsageError(f"{at}expected a message object, not {_show(m)}")
        parsed.append(_message(m, at))
    return _Conversation(cid, time, parsed, where, label)


def _chatgpt(obj: dict, cid: str | None, time: str | None, where: str, label: str) -> _Conversation:
    """The branch the user kept: from current_node back to the root, then read forwards."""
    mapping = obj["mapping"]
    if not isinstance(mapping, dict):
        raise UsageError(f"{where}mapping must be an object of nodes, not {_show(mapping)}")
    node_id = obj.get("current_node")
    if not isinstance(node_id, str) or node_id not in mapping:
        raise UsageError(f"{where}current_node {_show(node_id)} is not a node of its mapping; "
                         "export the conversation again (it names the branch to import)")
    chain: list[str] = []
    seen: set[str] = set()
    while node_id is not None:
        if node_id in seen:
            raise UsageError(f"{where}node {node_id!r}: its parents form a cycle; export the conversation again")
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise UsageError(f"{where}node {node_id!r} is missing from mapping or not an object; "
                             "export the conversation again")
        seen.add(node_id)
        chain.append(node_id)
        node_id = node.get("parent")
        if node_id is not None and not isinstance(node_id, str):
            raise UsageError(f"{where}node {chain[-1]!r}: parent must be a node id, not {_show(node_id)}")
    messages = []
    for nid in reversed(chain):
        message = mapping[nid].get("message")
        if message is None:  # the root holds no message: not a turn
            continue
        at = f"{where}message {len(messages) + 1}: "
        if not isinstance(message, dict):
            raise UsageError(f"{at}node {nid!r}: message must be an object, not {_show(message)}")
        messages.append(_chatgpt_message(message, at))
    off = sum(1 for nid, node in mapping.items()
              if nid not in seen and isinstance(node, dict) and isinstance(node.get("message"), dict))
    return _Conversation(cid, time, messages, where, label, other_branches=off)


def _chatgpt_message(m: dict, where: str) -> _Message:
    author = m.get("author")
    if not isinstance(author, dict) or not isinstance(author.get("role"), str):
        raise UsageError(f"{where}author must be an object with a role, not {_show(author)}")
    role = author["role"]
    time = _time_of(m, where)
    metadata = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
    to_tool = m.get("recipient") not in (None, "all")  # the assistant calling a tool (browser, python)
    if metadata.get("is_visually_hidden_from_conversation") is True or to_tool:
        return _Message(None, "", time, SYSTEM, where)
    content = m.get("content")
    if not isinstance(content, dict):
        raise UsageError(f"{where}content must be an object with content_type and parts, not {_show(content)}")
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts = content.get("parts")
        if not isinstance(parts, list):
            raise UsageError(f"{where}content.parts must be a list, not {_show(parts)}")
        text, skip = _parts(parts, where + "content.parts")
    elif isinstance(kind, str):
        text, skip = "", NON_TEXT  # code, execution_output, thoughts, user_editable_context ...
    else:
        raise UsageError(f"{where}content.content_type must be text, not {_show(kind)}")
    return _finish(role, text, skip, time, where)


# --------------------------------------------------------------------------- messages

def _message(m: dict, where: str) -> _Message:
    role = next((m[k] for k in _ROLE_FIELDS if k in m), None)
    if isinstance(role, dict):  # {"author": {"role": "user"}}
        role = role.get("role")
    if not isinstance(role, str) or not role.strip():
        raise UsageError(f"{where}a message needs its speaker: add \"role\" (user, assistant, ...)"
                         + (f", not {_show(role)}" if role is not None else ""))
    time = _time_of(m, where)
    content = m.get("content")
    if content not in (None, []) or (content == [] and not isinstance(m.get("text"), str)):
        if isinstance(content, str):
            text, skip = content, None
        elif isinstance(content, list):
            text, skip = _parts(content, where + "content")
        else:
            raise UsageError(f"{where}content must be text or a list of parts, not {_show(content)}")
    elif "content" in m or "text" in m:
        text = m.get("text")
        if text is None:  # content null: a tool call, no text
            text, skip = "", NON_TEXT
        elif isinstance(text, str):
            skip = None
        else:
            raise UsageError(f"{where}text must be text, not {_show(text)}")
    else:
        raise UsageError(f"{where}a message needs its text: add \"content\" (or \"text\")")
    return _finish(role.strip(), text, skip, time, where)


def _parts(parts: list, where: str) -> tuple[str, str | None]:
    """The text parts joined; NON_TEXT when there are only others (images, tool calls)."""
    texts, others = [], 0
    for i, part in enumerate(parts, start=1):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            text = part.get("text")
            if kind in _TEXT_PARTS or (kind is None and isinstance(text, str)):  # ChatGPT's transcripts
                if not isinstance(text, str):
                    raise UsageError(f"{where}[{i}]: a text part's \"text\" must be text, not {_show(text)}")
                texts.append(text)
            else:
                others += 1
        else:
            raise UsageError(f"{where}[{i}]: a part must be text or an object, not {_show(part)}")
    text = "\n".join(t for t in texts if t.strip())
    return text, (NON_TEXT if others and not text.strip() else None)


def _finish(role: str, text: str, skip: str | None, time: str | None, where: str) -> _Message:
    low = role.lower()
    if low in _SYSTEM_ROLES:
        skip = SYSTEM
    elif skip is None and not text.strip():
        skip = EMPTY
    canon = "user" if low in _USER_ROLES else "assistant" if low in _ASSISTANT_ROLES else role
    return _Message(canon, text, time, skip, where)


# --------------------------------------------------------------------------- ids and times

def _id(obj: dict, fields: tuple[str, ...], where: str) -> str | None:
    for k in fields:
        value = obj.get(k)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise UsageError(f"{where}{k} must be text or a whole number, not {_show(value)}")
        value = str(value).strip()
        if not value:
            continue
        # it is the session label and part of each turn's key (at most 200): one visible line
        if len(value) > 150 or not value.isprintable():
            raise UsageError(f"{where}{k} {_show(value)} must be one line of at most 150 visible characters")
        return value
    return None


def _session(conv: _Conversation, seen: dict[str, str], name: str) -> str:
    """The conversation's id: given, else "chat-" and 12 hex of its first message (role, time,
    text): a conversation that grew since the last export keeps its id and its turns' keys."""
    if conv.given_id is not None:
        session = conv.given_id
    else:
        first = conv.messages[0] if conv.messages else None
        basis = [first.role, first.time, first.text] if first else [None, conv.time, ""]
        session = "chat-" + hashlib.sha256(dumps(basis)).hexdigest()[:12]
    if session in seen:
        both = f"{name}: {seen[session]} and {conv.label}"
        if conv.given_id is not None:
            raise UsageError(f"{both} have the same id {session!r}: give each conversation its own id; "
                             "nothing was imported")
        raise UsageError(f"{both} start with the same message and have no id: give each conversation "
                         "an \"id\"; nothing was imported")
    seen[session] = conv.label
    return session


def _time_of(obj: dict, where: str, what: str = "") -> str | None:
    for k in _TIME_FIELDS:
        if obj.get(k) is not None:
            return _instant(obj[k], f"{where}{what}{k}")
    return None


def _instant(value, what: str) -> str:
    """ISO 8601 text, or epoch seconds (milliseconds from 1e11 on, past year 5138 as seconds)."""
    if isinstance(value, str) and _EPOCH_TEXT.match(value.strip()):
        value = float(value)
    if isinstance(value, str):
        return parse_occurred(value, what)[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{what} {_show(value)} is not a time; use ISO 8601 (2026-06-07T09:30:00Z) "
                         "or epoch seconds")
    seconds = value / 1000 if abs(value) >= 1e11 else value
    try:
        dt = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        dt = None
    if dt is None or not 1 <= dt.year <= 9998:
        raise UsageError(f"{what} {_show(value)} is out of range; use epoch seconds from year 0001 to 9998")
    return format_ts(dt)


def _show(value) -> str:
    """A value for a message: short, one line (it came from an untrusted file)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
