"""`memstore import --format chat`: chat exports become conversation turns.

Each shape in fixtures/chat/ is imported into a real store (hashing embedder) and read back
with `export`: every kept message is one memory with its session, turn, speaker and time.
Importing again writes nothing; empty, system/tool, non-text and off-branch messages are
skipped and counted; bad input is one line, exit 2, and the store is left as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import NOW, store_digest
from reliability_support import make_store

CHAT = Path(__file__).resolve().parent.parent / "fixtures" / "chat"
T1 = "chat-027dc220322f"  # messages.json has no id: derived from its first message, pinned here
BAND = "chat-40359140ebf7"
CLAUDE = "5f1c1f0e-2b7a-4c1e-9d3a-0c2f9a1b7e01"
GPT = "6660b1a0-0000-4000-8000-000000000001"

# (session, turn, actors, occurred_at, text) of every memory each fixture leaves, in log order
EXPECTED = {
    "messages.json": [
        (T1, 2, ["assistant"], "2024-05-20T18:00Z", "Welcome back! How was Cornwall?"),
        (T1, 3, ["user"], "2024-05-20T18:02Z", "Amazing. We hiked the coast path every single day."),
        (T1, 4, ["assistant"], "2024-05-20T18:05Z", "Sounds lovely. Did you make it to St Ives?"),
        (T1, 8, ["user"], "2024-05-20T18:10Z", "Next I want to plan a week in the Dolomites in September."),
    ],
    "conversations.json": [
        ("dolomites-huts", 1, ["user"], "2024-06-01T08:00Z",  # no time: the conversation's
         "Can you suggest a hut for the first night near Cortina?"),
        ("dolomites-huts", 2, ["assistant"], "2024-06-01T08:00Z",
         "Rifugio Averau has great views and takes bookings by email."),
        ("dolomites-huts", 4, ["user"], "2024-06-01T08:05Z", "I booked Averau for the 14th of September."),
        (BAND, 1, ["Alice"], "2024-06-03T21:00Z", "Practice moves to Thursday because the drummer is away."),
        (BAND, 2, ["Bob"], "2024-06-03T21:04Z", "Thursday works for me, I will bring the new amp."),
    ],
    "messages.jsonl": [
        ("c-books", 1, ["user"], "2024-02-10T21:00Z", "I finished The Left Hand of Darkness last night."),
        ("c-books", 2, ["assistant"], "2024-02-10T21:00Z", "What did you think of Genly Ai as a narrator?"),
        ("c-books", 5, ["user"], "2024-02-10T21:03Z", "He felt distant at first but I warmed to him by the end."),
        ("c-garden", 1, ["user"], "2024-08-03T07:30Z", "The tomatoes on the balcony finally turned red."),
        ("c-garden", 2, ["assistant"], "2024-08-03T07:31Z", "Pick them when they give slightly to a gentle squeeze."),
    ],
    "claude_conversations.json": [
        (CLAUDE, 1, ["user"], "2024-04-02T09:15Z", "My sourdough starter smells like nail polish remover. Is it dead?"),
        (CLAUDE, 2, ["assistant"], "2024-04-02T09:15Z",
         "Not dead, just hungry: feed it twice a day at room temperature for a few days."),
    ],
    "chatgpt_conversations.json": [  # the branch ending at current_node; turn 1 is the hidden system message
        (GPT, 2, ["user"], "2024-06-07T08:46Z", "What is a good name for a grey cat?"),
        (GPT, 3, ["assistant"], "2024-06-07T08:46Z", "How about Pebble, Ash or Smokey?"),
        (GPT, 4, ["user"], "2024-06-07T08:48Z", "We went with Pebble in the end!"),
        (GPT, 7, ["assistant"], "2024-06-07T08:48Z",  # no create_time: the time of the message before
         "Pebble is a lovely name for a small grey cat."),
        (GPT, 9, ["assistant"], "2024-06-07T08:50Z", "What a handsome cat in that photo!"),
    ],
}

# the --json summary of each first import
SUMMARY = {
    "messages.json": dict(conversations=1, read=8, imported=4, skipped=4, empty=1, system_tool=1, non_text=1,
                          greetings=1),
    "conversations.json": dict(conversations=2, read=6, imported=5, skipped=1, empty=1),
    "messages.jsonl": dict(conversations=2, read=7, imported=5, skipped=2, empty=1, system_tool=1),
    "claude_conversations.json": dict(conversations=2, read=4, imported=2, skipped=2, empty=1, greetings=1),
    "chatgpt_conversations.json": dict(conversations=1, read=11, imported=5, skipped=6, system_tool=3,
                                       non_text=1, other_branches=2),
}


def _summary(**counts) -> dict:
    base = dict(kind="chat", reinforced=0, present=0, empty=0, system_tool=0, non_text=0, other_branches=0,
                greetings=0)
    return {**base, **counts}


def _rows(ms) -> list[tuple]:
    result = ms("export")
    assert result.rc == 0, result.err
    return [(m["session"], m["turn"], m["actors"], m["occurred_at"], m["text"]) for m in result.jsonl()]


def _log(store: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((store / "log").glob("*.jsonl")))


@pytest.fixture
def chat_store(store):
    return make_store(store)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_shape_becomes_turns_and_a_reimport_is_a_no_op(ms, chat_store, name):
    first = ms("import", "--format", "chat", CHAT / name, "--json")
    assert (first.rc, first.json()) == (0, _summary(**SUMMARY[name])), first.err
    rows = _rows(ms)
    assert rows == EXPECTED[name]
    keys = [m["key"] for m in ms("export").jsonl()]
    assert keys == [f"chat:{s}:{t}" for s, t, *_ in EXPECTED[name]]
    for m in ms("export").jsonl():
        assert m["recorded_at"] == NOW  # recorded at the import; occurred_at keeps the message's time
    log = _log(chat_store)
    again = ms("import", "--format", "chat", CHAT / name, "--json", now="2026-06-08T10:00:00Z")
    counts = SUMMARY[name]
    assert again.json() == _summary(**{**counts, "imported": 0, "present": counts["imported"]})
    assert _log(chat_store) == log  # not one byte written
    assert _rows(ms) == rows


def test_the_summary_line_names_what_was_skipped(ms, chat_store):
    first = ms("import", "--format", "chat", CHAT / "messages.json")
    assert (first.rc, first.out) == (0, "")
    assert first.err == ("imported 4 messages from 1 conversation "
                         "(4 skipped: 1 empty, 1 system/tool, 1 non-text, 1 greeting)\n")
    again = ms("import", "--format", "chat", CHAT / "messages.json")
    assert again.err == ("imported 0 messages from 1 conversation (4 already present; "
                         "4 skipped: 1 empty, 1 system/tool, 1 non-text, 1 greeting)\n")
    gpt = ms("import", "--format", "chat", CHAT / "chatgpt_conversations.json")
    assert gpt.err == ("imported 5 messages from 1 conversation "
                       "(6 skipped: 3 system/tool, 1 non-text, 2 on other branches)\n")


def test_chatgpt_keeps_only_the_branch_the_user_kept(ms, chat_store):
    assert ms("import", "--format", "chat", CHAT / "chatgpt_conversations.json").rc == 0
    texts = [r[4] for r in _rows(ms)]
    assert "We went with Pebble in the end!" in texts  # the edited message, on current_node's branch
    assert not {"Something more elegant please.", "Perhaps Duchess or Earl Grey."} & set(texts)
    # the tool call (code to the browser) and its result are not turns of the conversation
    assert not any("search(" in t or "small smooth stone" in t for t in texts)


def test_roles_are_renamed_and_keep_stores_greetings(ms, chat_store):
    result = ms("import", "--format", "chat", CHAT / "messages.json", "--user", "maya", "--assistant", "guide",
                "--keep", "--json")
    assert result.json() == _summary(conversations=1, read=8, imported=5, skipped=3, empty=1, system_tool=1,
                                     non_text=1)
    rows = _rows(ms)
    assert [(t, a) for _s, t, a, _o, _x in rows] == [(2, ["guide"]), (3, ["maya"]), (4, ["guide"]),
                                                     (7, ["maya"]), (8, ["maya"])]
    assert rows[3][4] == "thanks!"


def test_an_assistants_words_are_an_agents_not_the_users_facts(ms, chat_store):
    """The user's turns are the person's word (source human, 1.0); the assistant's are an
    agent's (source agent, its confidence 0.7), whatever --assistant names it."""
    assert ms("import", "--format", "chat", CHAT / "messages.json", "--assistant", "guide").rc == 0
    got = [(m["turn"], m["actors"], m["source"], m["confidence"]) for m in ms("export").jsonl()]
    assert got == [(2, ["guide"], "agent", 0.7), (3, ["user"], "human", 1.0), (4, ["guide"], "agent", 0.7),
                   (8, ["user"], "human", 1.0)]


def test_jsonl_on_stdin_and_a_conversation_that_grew(ms, chat_store, tmp_path):
    assert ms("import", "--format", "chat", "-", stdin=(CHAT / "messages.jsonl").read_bytes()).rc == 0
    assert len(_rows(ms)) == 5
    # exported again a day later with one more message: its id (from its first message) and the
    # earlier turns' keys are the same, so only the new turn is written
    grown = json.loads((CHAT / "messages.json").read_text())
    grown.append({"role": "assistant", "content": "September is a fine month for the Alta Via 1.",
                  "timestamp": "2024-05-21T08:00:00Z"})
    path = tmp_path / "grown.json"
    path.write_text(json.dumps(grown))
    assert ms("import", "--format", "chat", CHAT / "messages.json").rc == 0
    result = ms("import", "--format", "chat", path, "--json", now="2026-06-08T10:00:00Z")
    assert (result.json()["imported"], result.json()["present"]) == (1, 4)
    assert _rows(ms)[-1] == (T1, 9, ["assistant"], "2024-05-21T08:00Z",
                             "September is a fine month for the Alta Via 1.")


def test_a_repeated_text_reinforces_its_earlier_turn(ms, chat_store, tmp_path):
    """A memory's id is its text's: the same words in a second conversation reinforce the
    first turn's memory (its key points there), and a re-import writes nothing."""
    said = "Let us meet at the station at nine."
    path = _write(tmp_path, json.dumps([{"id": "a", "messages": [{"role": "user", "content": said}]},
                                        {"id": "b", "messages": [{"role": "user", "content": said}]}]))
    result = ms("import", "--format", "chat", path)
    assert result.err == ("imported 1 message from 2 conversations "
                          "(1 repeated an earlier memory's text and reinforced it)\n")
    assert [m["mention_count"] for m in ms("export").jsonl()] == [2]
    assert ms("show", "chat:b:1", "--json").json()["memory"]["key"] == "chat:a:1"
    log = _log(chat_store)
    again = ms("import", "--format", "chat", path, "--json")
    assert (again.json()["present"], again.json()["reinforced"], _log(chat_store)) == (2, 0, log)


def test_recall_finds_an_imported_turn_and_its_neighbour(ms, chat_store, tmp_path):
    """The question matches turn 2 ("How was Cornwall?"); the answer, turn 3, shares no word
    with it and comes as its neighbour in the session, ahead of 30 turns that do share words."""
    filler = tmp_path / "weather.jsonl"
    filler.write_text("".join(json.dumps({"session": "weather", "role": "user", "timestamp": "2024-05-01",
                                          "content": f"How was the weather on day {i} of the trip?"}) + "\n"
                              for i in range(30)))
    assert ms("import", "--format", "chat", filler).rc == 0
    assert ms("import", "--format", "chat", CHAT / "messages.json").rc == 0
    result = ms("recall", "How was Cornwall?", "--k", "3", "--json", "--no-touch")
    assert result.rc == 0, result.err
    keys = [r["key"] for r in result.json()["results"]]
    assert keys[0] == f"chat:{T1}:2" and f"chat:{T1}:3" in keys


def _write(tmp_path: Path, text: str, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


BAD = [  # (file text, the one-line error after "Error: FILE")
    ('{"hello": 1}', ': not a chat export: expected a list of messages ({"role", "content"}), a conversation '
     '({"messages": [...]}), a list of conversations, JSONL with one message a line, or a Claude or ChatGPT '
     'conversations.json'),
    ('[{"role": "user"}]', ': message 1: a message needs its text: add "content" (or "text")'),
    ('[{"content": "Where did we park?"}]', ': message 1: a message needs its speaker: add "role" '
     '(user, assistant, ...)'),
    ('[{"role": "user", "content": 42}]', ": message 1: content must be text or a list of parts, not 42"),
    ('[{"role": "user", "content": [{"type": "text", "text": 5}]}]',
     ': message 1: content[1]: a text part\'s "text" must be text, not 5'),
    ('[{"role": "user", "content": "We parked on level 3.", "timestamp": "yesterday"}]',
     ": message 1: timestamp 'yesterday' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z"),
    ('[{"role": "user", "content": "We parked on level 3.", "timestamp": true}]',
     ": message 1: timestamp True is not a time; use ISO 8601 (2026-06-07T09:30:00Z) or epoch seconds"),
    ('{"role": "user", "content": "We parked on level 3."}\n{"role": "user",\n',
     ":2: not valid JSON (each line of a JSONL file is one object)"),
    ('[{"role": "user", "content": "We parked', ": not valid JSON (unexpected end of data at line 1, column 40) "
     "nor JSONL"),
    ('[{"id": "x\\ny", "messages": []}]', ": conversation 1: id 'x\\ny' must be one line of at most 150 "
     "visible characters"),
    ('[{"id": "a", "messages": [{"role": "user", "content": "Hello there"}]},'
     ' {"id": "a", "messages": [{"role": "user", "content": "Hello again"}]}]',
     ": conversation 1 and conversation 2 have the same id 'a': give each conversation its own id"),
    ('[{"messages": [{"role": "user", "content": "Where did we park?"}]},'
     ' {"messages": [{"role": "user", "content": "Where did we park?"}]}]',
     ': conversation 1 and conversation 2 start with the same message and have no id: give each '
     'conversation an "id"'),
    ('[{"title": "t", "mapping": {"r": {"message": null, "parent": null}}, "current_node": "q"}]',
     ": conversation 1: current_node 'q' is not a node of its mapping; export the conversation again "
     "(it names the branch to import)"),
    ("[]", " holds no messages"),
]


@pytest.mark.parametrize(("text", "error"), BAD)
def test_bad_input_is_one_line_and_writes_nothing(ms, chat_store, tmp_path, text, error):
    assert ms("import", "--format", "chat", CHAT / "messages.json").rc == 0
    before = store_digest(chat_store)
    path = _write(tmp_path, text)
    result = ms("import", "--format", "chat", path)
    assert (result.rc, result.out, result.err) == (2, "", f"Error: {path}{error}; nothing was imported\n")
    assert store_digest(chat_store) == before


def test_a_message_over_the_limit_refuses_the_file_naming_its_turn(ms, chat_store, tmp_path):
    (chat_store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n[memory]\nmax_text_chars = 40\n')
    path = _write(tmp_path, json.dumps({"id": "long", "messages": [
        {"role": "user", "content": "A short one."},
        {"role": "assistant", "content": "This answer runs on well past forty characters."}]}))
    result = ms("import", "--format", "chat", path)
    assert (result.rc, result.err) == (2, f"Error: {path} (long): message 2: text is 47 characters, over the "
                                          "limit of 40; split it into smaller memories (or raise "
                                          "memory.max_text_chars); nothing was imported\n")
    assert not (chat_store / "log").exists()


def test_format_options_are_checked(ms, chat_store, tmp_path):
    messages = CHAT / "messages.json"
    assert ms("import", messages, "--format", "xml").err == "Error: --format 'xml' is not one of: auto, chat\n"
    assert ms("import", messages, "--user", "maya").err == (
        "Error: --user applies to --format chat only; add --format chat or drop --user\n")
    assert ms("import", messages, "--format", "chat", "--assistant", " ").err == (
        "Error: --assistant is empty; give the name to record those messages under\n")
    # auto (the default) reads memstore exports only; it says when a file is a chat export
    result = ms("import", messages)
    assert (result.rc, result.err) == (2, f"Error: {messages}:1: not valid JSON; nothing was imported "
                                          "(it reads as a chat export: add --format chat)\n")
    assert not (chat_store / "log").exists()


def test_times_and_parts_in_the_pure_parser():
    """Epoch seconds and milliseconds, offsets, zone-less and date-only times; text parts kept
    (a transcript's too), other parts dropped, a message of other parts only counted."""
    from memstore.chatimport import parse

    messages = [
        {"role": "user", "content": "Seconds.", "timestamp": 1717750000},
        {"role": "user", "content": "Milliseconds.", "timestamp": 1717750060000},
        {"role": "user", "content": "Offset.", "created_at": "2024-06-07T10:48:00+02:00"},
        {"role": "user", "content": "No zone is UTC.", "time": "2024-06-07T08:49:00"},
        {"role": "user", "content": "A day.", "timestamp": "2024-06-08"},
        {"role": "user", "content": [{"content_type": "audio_transcription", "text": "Spoken words."},
                                     {"content_type": "audio_asset_pointer", "text": None}]},
        {"role": "user", "content": [{"type": "image", "source": {}}, {"type": "text", "text": "  "}]},
        {"role": "model", "content": [{"type": "output_text", "text": "Part one."}, {"type": "tool_use"},
                                      {"type": "text", "text": "Part two."}]},
    ]
    found = parse(json.dumps(messages).encode(), name="m.json", now=NOW, max_chars=1000)
    assert [(d.text, d.occurred_at, d.actors) for d in found.drafts] == [
        ("Seconds.", ("2024-06-07T08:46Z", "minute"), ("user",)),
        ("Milliseconds.", ("2024-06-07T08:47Z", "minute"), ("user",)),
        ("Offset.", ("2024-06-07T08:48Z", "minute"), ("user",)),
        ("No zone is UTC.", ("2024-06-07T08:49Z", "minute"), ("user",)),
        ("A day.", ("2024-06-08", "day"), ("user",)),
        ("Spoken words.", ("2024-06-08", "day"), ("user",)),  # no time: the message before's
        ("Part one.\nPart two.", ("2024-06-08", "day"), ("assistant",)),
    ]
    assert (found.read, found.skipped["non_text"]) == (8, 1)
