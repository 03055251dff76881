"""`memstore remember`: exact output and exit codes, round-trips, the four write outcomes, bulk."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import (
    BAD_NOW,
    EARLIER,
    LATER,
    MEMSTORE,
    NOW,
    log_lines,
    run_memstore,
    store_digest,
    write_jsonl,
)

from memstore.model import AXES, Salience, memory_id

HELLO_ID = "mc30813bab1ad9c7"  # memory_id("hello world note", None, None): pinned, ids must not drift


def fails(ms, store, *args, rc: int, err: str, now: str | None = NOW, stdin: bytes | None = None):
    """Run a command that must fail: exact stderr, nothing on stdout, the store untouched."""
    before = store_digest(store)
    r = ms(*args, now=now, stdin=stdin)
    assert (r.rc, r.out, r.err) == (rc, "", err)
    assert store_digest(store) == before
    return r


@pytest.fixture
def seeded(ms, store):
    """A store holding one memory, so failures have something to leave unchanged."""
    assert ms("remember", "hello world note").rc == 0
    return store


# --- the happy path -------------------------------------------------------------------------

def test_remember_prints_the_content_derived_id(ms, store):
    r = ms("remember", "hello world note")
    assert (r.rc, r.out, r.err) == (0, HELLO_ID + "\n", "")
    assert HELLO_ID == memory_id("hello world note", None, None)
    [event] = log_lines(store)
    assert event["op"] == "remember" and event["seq"] == 1 and event["at"] == NOW
    m = event["memory"]
    assert (m["id"], m["text"], m["kind"], m["tier"], m["precision"]) == (
        HELLO_ID, "hello world note", "note", "short", "minute")
    assert m["occurred_at"] == "2026-06-07T09:30Z"
    assert m["recorded_at"] == m["valid_from"] == m["last_reinforced_at"] == NOW
    assert m["expires_at"] == "2026-06-21T09:30:00Z"  # short-term: 14-day TTL
    assert m["time_buckets"] == ["2026", "2026-06", "2026-06-07", "2026-W23"]
    assert m["salience"] == dict.fromkeys(AXES, 0.5)
    assert (m["confidence"], m["source"], m["mention_count"]) == (1.0, "human", 1)


def test_text_is_stripped_and_whitespace_case_insensitive_for_the_id(ms, store):
    assert ms("remember", "  hello world note \n").out == HELLO_ID + "\n"
    r = ms("remember", "Hello   WORLD note")
    assert (r.rc, r.out, r.err) == (0, HELLO_ID + "\n", "reinforce: same text already remembered\n")
    assert [e["op"] for e in log_lines(store)] == ["remember", "reinforce"]
    assert log_lines(store)[0]["memory"]["text"] == "hello world note"


def test_stdin_text_and_dash(ms, store):
    r = ms("remember", stdin="コーヒーに砂糖は入れない\n".encode())
    assert r.rc == 0 and r.err == ""
    mid = r.out.strip()
    assert mid == memory_id("コーヒーに砂糖は入れない", None, None)
    assert ms("remember", "-", stdin="コーヒーに砂糖は入れない".encode()).out == mid + "\n"
    assert log_lines(store)[0]["memory"]["text"] == "コーヒーに砂糖は入れない"


def test_now_from_environment_and_timezones(ms, store, monkeypatch):
    monkeypatch.setenv("MEMSTORE_NOW", "2026-06-07T18:30:00+09:00")
    assert ms("remember", "a note from the environment", now=None).rc == 0
    assert ms("remember", "a note without a zone", now="2026-06-07T09:30:00").rc == 0
    assert ms("remember", "a note with fractions", now="2026-06-07T09:30:00.999Z").rc == 0
    assert [e["at"] for e in log_lines(store)] == [NOW, NOW, NOW]


def test_json_output(ms):
    r = ms("remember", "We decided to ship on Fridays", "--key", "K-1", "--json")
    [result] = r.jsonl()
    assert r.rc == 0 and r.err == ""
    assert (result["action"], result["key"]) == ("add", "K-1")
    assert result["id"] == result["memory"]["id"]
    assert "seq" not in result["memory"]
    assert result["memory"]["kind"] == "decision"
    again = ms("remember", "We decided to ship on Fridays", "--key", "K-1", "--json").jsonl()
    assert again == [{"action": "noop", "id": result["id"], "key": "K-1"}]


# --- round-trips ----------------------------------------------------------------------------

FULL = [
    "Billing moved to Postgres after the outage",
    "--kind", "incident", "--subject", "billing-db", "--domain", "eng",
    "--actor", "alice", "--actor", "bob", "--outcome", "negative", "--occurred-at", "2026-05",
    "--importance", "0.9", "--urgency", "0.1", "--risk", "0.75", "--novelty", "0.2",
    "--emotion", "0", "--recurrence", "1", "--actionability", "0.33",
    "--confidence", "0.85", "--source", "tool", "--key", "INC-1423", "--tier", "long",
]
FULL_EXPECT = {
    "text": "Billing moved to Postgres after the outage", "kind": "incident", "subject": "billing-db",
    "domain": "eng", "actors": ["alice", "bob"], "outcome": "negative", "occurred_at": "2026-05",
    "precision": "month", "time_buckets": ["2026", "2026-05"], "tier": "long",
    "salience": {"importance": 0.9, "urgency": 0.1, "risk": 0.75, "novelty": 0.2, "emotion": 0.0,
                 "recurrence": 1.0, "actionability": 0.33},
    "confidence": 0.85, "source": "tool", "key": "INC-1423", "expires_at": None,
    "recorded_at": NOW, "status": "active", "level": "raw", "mention_count": 1, "seq": 1,
}


def test_every_field_round_trips_through_show_and_export(ms):
    r = ms("remember", *FULL)
    assert r.rc == 0
    mid = r.out.strip()
    assert mid == memory_id(FULL[0], "billing-db", "eng")
    shown = ms("show", mid, "--json").json()
    by_key = ms("show", "INC-1423", "--json").json()
    [exported] = ms("export").jsonl()
    assert shown == by_key
    assert shown["memory"] == exported
    for name, value in FULL_EXPECT.items():
        assert exported[name] == value, name
    assert [e["op"] for e in shown["events"]] == ["remember"]


@pytest.mark.parametrize("given,stored,precision,buckets", [
    ("2020", "2020", "year", ["2020"]),
    ("2020-06", "2020-06", "month", ["2020", "2020-06"]),
    ("2020-06-07", "2020-06-07", "day", ["2020", "2020-06", "2020-06-07", "2020-W23"]),
    ("2020-06-07T10:15:00+02:00", "2020-06-07T08:15Z", "minute",
     ["2020", "2020-06", "2020-06-07", "2020-W23"]),
    ("2021-01-03", "2021-01-03", "day", ["2021", "2021-01", "2021-01-03", "2020-W53"]),
    ("2020-W23", "2020-06-01", "week", ["2020", "2020-06", "2020-W23"]),  # a week: its Monday
])
def test_occurred_at_keeps_its_precision(ms, given, stored, precision, buckets):
    mid = ms("remember", "the migration happened", "--occurred-at", given).out.strip()
    memory = ms("show", mid, "--json").json()["memory"]
    assert (memory["occurred_at"], memory["precision"], memory["time_buckets"]) == (stored, precision, buckets)
    assert memory["recorded_at"] == NOW


@pytest.mark.parametrize("source,confidence", [("human", 1.0), ("agent", 0.7), ("tool", 0.5), ("imported", 0.6)])
def test_source_sets_initial_confidence(ms, source, confidence):
    [m] = ms("remember", f"a note from a {source}", "--source", source, "--json").jsonl()
    assert (m["memory"]["source"], m["memory"]["confidence"]) == (source, confidence)


def test_explicit_confidence_overrides_source(ms):
    [m] = ms("remember", "an agent's guess", "--source", "agent", "--confidence", "0.2", "--json").jsonl()
    assert (m["memory"]["source"], m["memory"]["confidence"]) == ("agent", 0.2)


# The per-kind priors (memstore.classify.PRIORS, memstore(7) SALIENCE), in AXES order:
# importance, urgency, risk, novelty, emotion, recurrence, actionability. Importance and
# risk stay under protect_threshold (0.7): no kind alone protects a memory from decay.
PRIOR = {
    "decision": (0.65, 0.6, 0.5, 0.6, 0.4, 0.5, 0.85),
    "preference": (0.6, 0.2, 0.4, 0.5, 0.7, 0.8, 0.6),
    "definition": (0.65, 0.2, 0.4, 0.6, 0.2, 0.7, 0.5),
    "fact": (0.65, 0.3, 0.5, 0.6, 0.3, 0.6, 0.5),
    "procedure": (0.65, 0.3, 0.5, 0.4, 0.2, 0.8, 0.9),
    "plan": (0.6, 0.8, 0.4, 0.6, 0.3, 0.4, 0.85),
    "disambiguation": (0.5,) * 7,
    "note": (0.5,) * 7,
}


@pytest.mark.parametrize("text,kind,tier", [
    ("We decided to move billing to Postgres", "decision", "long"),
    ("I prefer tea over coffee", "preference", "long"),
    ("私は辛いものが好き", "preference", "long"),
    ("リリースは金曜にすることに決めた", "decision", "long"),
    ("Kafka is a distributed log", "definition", "long"),
    ("SLOとはサービスレベル目標のことである", "definition", "long"),
    ("Here prod means the EU cluster", "disambiguation", "short"),
    ("Call the plumber about the leak", "note", "short"),
    # a lasting fact said once is long-term; what happened today is a note
    ("The staging DB listens on port 5433", "fact", "long"),
    ("妹の名前はアナです", "fact", "long"),
    ("To rotate the keys, run rotate.sh then restart the gateway", "procedure", "long"),
    ("We are planning to hire two engineers next quarter", "plan", "long"),
    ("Met Maria about billing today", "note", "short"),
])
def test_classifier_sets_kind_tier_and_salience(ms, text, kind, tier):
    [m] = ms("remember", text, "--json").jsonl()
    memory = m["memory"]
    assert (memory["kind"], memory["tier"]) == (kind, tier)
    assert memory["salience"] == dict(zip(AXES, PRIOR[kind], strict=True))
    assert memory["expires_at"] == ("2026-06-21T09:30:00Z" if tier == "short" else None)


def test_help_states_the_composite_salience_each_kind_gets(ms, cli):
    """remember --help's numbers are those a person's memory of each kind is written with."""
    from memstore.config import load_config
    from memstore.salience import composite, is_protected

    config = load_config(None)
    weights = config["salience"]["weights"]
    said = {}
    for text, kind in (("I prefer tea over coffee", "preference"), ("We decided to move billing to Postgres",
                                                                      "decision"),
                       ("Kafka is a distributed log", "definition"), ("Call the plumber about the leak", "note"),
                       ("The staging DB listens on port 5433", "fact")):
        [m] = ms("remember", text, "--json").jsonl()
        assert m["memory"]["kind"] == kind
        said[kind] = f"{composite(Salience(**m['memory']['salience']), m['memory']['confidence'], weights):.2f}"
    assert said == {"preference": "0.56", "decision": "0.60", "definition": "0.50", "note": "0.50", "fact": "0.52"}
    text = " ".join(cli("remember", "--help").out.split())
    assert ("a person's preference has composite salience 0.56, a decision 0.60, a plan 0.57, a procedure "
            "0.58, a fact 0.52, a definition and everything else 0.50") in text
    assert "raises importance (and risk, for a risk word) to 0.8" in text
    [m] = ms("remember", "Never deploy on Fridays", "--json").jsonl()
    assert m["memory"]["salience"]["importance"] == 0.8
    assert is_protected(Salience(**m["memory"]["salience"]), config["salience"]["protect_threshold"])


def test_explicit_options_override_the_classifier(ms):
    [m] = ms("remember", "I prefer tea over coffee", "--kind", "fact", "--tier", "short",
             "--importance", "0.1", "--json").jsonl()
    memory = m["memory"]
    assert (memory["kind"], memory["tier"]) == ("fact", "short")
    # an explicit --kind gets its kind's prior; the explicit axis wins over it
    assert memory["salience"] == {**dict(zip(AXES, PRIOR["fact"], strict=True)), "importance": 0.1}


# --- the four write outcomes ----------------------------------------------------------------

def test_greeting_is_not_stored(ms, store):
    for text in ("hello", "Thanks!", "ありがとうございます", "了解です"):
        r = ms("remember", text)
        assert (r.rc, r.out, r.err) == (
            0, "-\n", "not stored: looks like a greeting or acknowledgement (use --keep to store it)\n")
    assert store_digest(store) == "absent"


def test_greeting_kept_with_keep(ms, store):
    r = ms("remember", "thanks", "--keep")
    assert r.rc == 0 and r.out == memory_id("thanks", None, None) + "\n"
    assert log_lines(store)[0]["memory"]["kind"] == "note"


def test_same_text_reinforces(ms, store):
    first = ms("remember", "hello world note")
    second = ms("remember", "hello world note", "--importance", "0.9", now=LATER)
    assert first.out == second.out == HELLO_ID + "\n"
    assert second.err == "reinforce: same text already remembered\n"
    events = log_lines(store)
    assert [(e["op"], e["seq"]) for e in events] == [("remember", 1), ("reinforce", 2)]
    memory = ms("show", HELLO_ID, "--json", now=LATER).json()["memory"]
    assert memory["mention_count"] == 2
    assert memory["last_reinforced_at"] == LATER
    assert memory["salience"]["importance"] == 0.9
    assert memory["salience"]["recurrence"] == 0.5
    assert len(ms("export", now=LATER).lines) == 1


def test_same_subject_different_text_is_a_new_memory_and_subject_changes_the_id(ms):
    a = ms("remember", "hello world note").out
    b = ms("remember", "hello world note", "--subject", "greetings-test").out
    assert a != b


def test_same_key_is_a_noop_returning_the_same_id(ms, store):
    first = ms("remember", "ticket 1423: the invoice export times out", "--key", "T-1423")
    before = store_digest(store)
    again = ms("remember", "a completely different text", "--key", "T-1423", now=LATER)
    assert (again.rc, again.out, again.err) == (0, first.out, "noop: key already remembered\n")
    assert store_digest(store) == before


def test_key_given_on_reinforce_is_remembered(ms, store):
    ms("remember", "hello world note")
    assert ms("remember", "hello world note", "--key", "greet").out == HELLO_ID + "\n"
    r = ms("remember", "something else entirely", "--key", "greet")
    assert (r.out, r.err) == (HELLO_ID + "\n", "noop: key already remembered\n")
    assert ms("show", "greet", "--json").json()["memory"]["id"] == HELLO_ID


# --- bad input: exact message, exit code, store unchanged -----------------------------------

def test_malformed_now(ms, seeded):
    fails(ms, seeded, "remember", "another note", rc=2, err=BAD_NOW, now="garbage")


def test_malformed_now_on_a_fresh_store_creates_nothing(ms, store):
    fails(ms, store, "remember", "another note", rc=2, err=BAD_NOW, now="garbage")
    assert not store.exists()


def test_malformed_now_from_environment(ms, seeded, monkeypatch):
    monkeypatch.setenv("MEMSTORE_NOW", "garbage")
    fails(ms, seeded, "remember", "another note", rc=2, err=BAD_NOW, now=None)


@pytest.mark.parametrize("now,err", [
    ("", "Error: --now '' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z\n"),
    ("2026-13-01", "Error: --now '2026-13-01' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z\n"),
    ("1", "Error: --now '1' is not a date/time; use ISO 8601, e.g. 2026-06-07T09:30:00Z\n"),
    ("9999-12-31T00:00:00Z", "Error: --now '9999-12-31T00:00:00Z' is out of range; "
                             "use a time from year 0001 to 9998\n"),
])
def test_other_bad_now_values(ms, seeded, now, err):
    fails(ms, seeded, "remember", "another note", rc=2, err=err, now=now)


@pytest.mark.parametrize("args,err", [
    (["--importance", "1.5"], "Error: --importance 1.5 is out of range; use a number from 0 to 1\n"),
    (["--urgency", "-0.1"], "Error: --urgency -0.1 is out of range; use a number from 0 to 1\n"),
    (["--risk", "nan"], "Error: --risk nan is out of range; use a number from 0 to 1\n"),
    (["--novelty", "inf"], "Error: --novelty inf is out of range; use a number from 0 to 1\n"),
    (["--emotion", "high"], "Error: --emotion must be a number from 0 to 1\n"),
    (["--confidence", "2"], "Error: --confidence 2.0 is out of range; use a number from 0 to 1\n"),
    (["--kind", "bogus"], "Error: --kind 'bogus' is not one of: note, meeting, decision, incident, deal, "
                          "preference, definition, fact, plan, procedure, disambiguation, policy\n"),
    (["--outcome", "great"], "Error: --outcome 'great' is not one of: positive, negative, pending\n"),
    (["--source", "rumour"], "Error: --source 'rumour' is not one of: human, agent, tool, imported\n"),
    (["--tier", "medium"], "Error: --tier 'medium' is not one of: short, long\n"),
    (["--occurred-at", "2020-13"], "Error: --occurred-at '2020-13' has no month 13; use YYYY-MM with 01..12\n"),
    (["--occurred-at", "2020-02-30"], "Error: --occurred-at '2020-02-30' is not a calendar day; use YYYY-MM-DD\n"),
    (["--occurred-at", "0000"], "Error: --occurred-at '0000' is out of range; use a year from 0001 to 9999\n"),
    (["--occurred-at", "soon"], "Error: --occurred-at 'soon' is not a date/time; use ISO 8601, "
                                "e.g. 2026-06-07T09:30:00Z\n"),
    (["--subject", "x" * 201], f"Error: --subject '{'x' * 40}' must be one line of at most 200 characters\n"),
    (["--actor", "a\tb"], "Error: --actor 'a\\tb' must be one line of at most 100 characters\n"),
])
def test_bad_option_values(ms, seeded, args, err):
    fails(ms, seeded, "remember", "a valid note text", *args, rc=2, err=err)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text(ms, seeded, text):
    fails(ms, seeded, "remember", text, rc=2,
          err="Error: text is empty; give the memory's text as an argument or on stdin\n")


def test_empty_stdin(ms, seeded):
    fails(ms, seeded, "remember", rc=2, stdin=b"",
          err="Error: text is empty; give the memory's text as an argument or on stdin\n")


def test_nul_byte_on_stdin(ms, seeded):
    fails(ms, seeded, "remember", rc=2, stdin=b"abc\x00def",
          err="Error: text contains a NUL byte; memories are text, not binary data\n")


def test_text_over_the_configured_limit(ms, seeded):
    (seeded / "memstore.toml").write_text("[memory]\nmax_text_chars = 10\n")
    fails(ms, seeded, "remember", "twelve chars", rc=2,
          err="Error: text is 12 characters, over the limit of 10; split it into smaller memories "
              "(or raise memory.max_text_chars)\n")


def test_bad_config_file(ms, seeded):
    (seeded / "memstore.toml").write_text("[memory]\nbogus = 1\n")
    fails(ms, seeded, "remember", "a valid note text", rc=2,
          err="Error: memstore.toml: unknown setting 'memory.bogus'; see `memstore config` for the valid ones\n")


def test_text_and_jsonl_together(ms, seeded, tmp_path):
    bulk = write_jsonl(tmp_path / "b.jsonl", {"text": "one"})
    fails(ms, seeded, "remember", "two", "--jsonl", str(bulk), rc=2,
          err="Error: give either TEXT or --jsonl FILE, not both\n")


def test_unknown_option_is_a_usage_error(ms, seeded):
    fails(ms, seeded, "remember", "x", "--bogus", rc=2, err="Error: No such option '--bogus'.\n")


def test_store_is_a_file(ms, tmp_path, cli):
    path = tmp_path / "afile"
    path.write_text("not a store")
    r = cli("--store", str(path), "remember", "a note", "--now", NOW)
    assert (r.rc, r.out) == (1, "")
    assert r.err == f"Error: store {path} is a file, not a directory; choose another --store\n"
    assert path.read_text() == "not a store"


def test_backdated_now_is_rejected_unless_allowed(ms, seeded):
    fails(ms, seeded, "remember", "an older note", rc=1, now=EARLIER,
          err=f"Error: --now {EARLIER} is earlier than the store's latest record time {NOW}; replay must "
              "move forward in time (pass --allow-past to record it anyway)\n")
    r = ms("remember", "an older note", "--allow-past", now=EARLIER)
    assert r.rc == 0 and r.out.strip() == memory_id("an older note", None, None)
    assert [e["at"] for e in log_lines(seeded)] == [NOW, EARLIER]


def test_same_now_is_not_backdated(ms, seeded):
    assert ms("remember", "a second note at the same instant").rc == 0


# --- stdin and argv encodings, through the real console script ------------------------------

def test_invalid_utf8_on_stdin(store):
    r = run_memstore("--store", str(store), "remember", "--now", NOW, stdin=b"caf\xe9 au lait")
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr == b"Error: stdin is not valid UTF-8 (byte 3); convert it, e.g. with iconv\n"
    assert store_digest(store) == "absent"


def test_invalid_utf8_in_argv(store):
    r = subprocess.run([bytes(MEMSTORE), b"--store", bytes(store), b"remember", b"caf\xe9 au lait",
                        b"--now", NOW.encode()], capture_output=True, input=b"", timeout=60)
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr == b"Error: text is not valid UTF-8; convert it, e.g. with iconv\n"
    assert store_digest(store) == "absent"


def test_japanese_through_stdin_and_back_out_in_a_c_locale(store):
    text = "私はコーヒーよりお茶が好き 🍵"
    r = run_memstore("--store", str(store), "remember", "--now", NOW, stdin=text.encode(), env={"LC_ALL": "C"})
    assert r.returncode == 0, r.stderr
    mid = r.stdout.decode().strip()
    shown = run_memstore("--store", str(store), "show", mid, "--now", NOW, env={"LC_ALL": "C"})
    assert shown.returncode == 0
    assert f"text               {text}\n".encode() in shown.stdout
    assert b"kind               preference\n" in shown.stdout


# --- bulk -----------------------------------------------------------------------------------

def test_bulk_prints_one_id_per_line(ms, store, tmp_path):
    bulk = write_jsonl(
        tmp_path / "notes.jsonl",
        {"text": "hello world note"},
        {"text": "We decided to use Postgres", "subject": "db", "actors": ["alice"], "key": "D-1"},
        "",
        {"text": "ok thanks"},
        {"text": "hello world note"},
        {"text": "次のリリースは金曜日", "occurred_at": "2026-06", "importance": 0.9},
    )
    r = ms("remember", "--jsonl", str(bulk))
    ids = [HELLO_ID, memory_id("We decided to use Postgres", "db", None), "-", HELLO_ID,
           memory_id("次のリリースは金曜日", None, None)]
    assert (r.rc, r.out, r.err) == (0, "".join(i + "\n" for i in ids), "3 add, 1 reinforce, 1 skip\n")
    events = log_lines(store)
    assert [(e["op"], e["seq"]) for e in events] == [("remember", 1), ("remember", 2), ("reinforce", 3),
                                                       ("remember", 4)]
    assert events[3]["memory"]["occurred_at"] == "2026-06"
    assert ms("show", "D-1", "--json").json()["memory"]["actors"] == ["alice"]


def test_bulk_from_stdin(ms):
    data = b'{"text": "first bulk note"}\n{"text": "second bulk note", "actor": "bob"}\n'
    r = ms("remember", "--jsonl", "-", stdin=data)
    assert r.rc == 0 and r.err == "2 add\n"
    assert r.lines == [memory_id("first bulk note", None, None), memory_id("second bulk note", None, None)]


def test_bulk_same_key_twice_in_one_file(ms, tmp_path):
    bulk = write_jsonl(tmp_path / "k.jsonl", {"text": "one", "key": "K"}, {"text": "two", "key": "K"})
    r = ms("remember", "--jsonl", str(bulk))
    assert r.lines == [memory_id("one", None, None)] * 2 and r.err == "1 add, 1 noop\n"


def test_bulk_json_output(ms, tmp_path):
    bulk = write_jsonl(tmp_path / "j.jsonl", {"text": "first bulk note", "key": "a"}, {"text": "hi"})
    results = ms("remember", "--jsonl", str(bulk), "--json").jsonl()
    assert [(r["action"], r["key"]) for r in results] == [("add", "a"), ("skip", None)]
    assert results[1] == {"action": "skip", "id": None, "key": None}


def test_bulk_malformed_line_in_the_middle_writes_nothing(ms, seeded, tmp_path):
    bulk = write_jsonl(tmp_path / "bad.jsonl", {"text": "line one"}, {"text": "line two"},
                       '{"text": "line three"', {"text": "line four"})
    fails(ms, seeded, "remember", "--jsonl", str(bulk), rc=2,
          err=f"Error: {bulk}:3: not valid JSON; nothing was written\n")


def test_bulk_every_error_is_listed_with_its_line_number(ms, seeded, tmp_path):
    bulk = write_jsonl(
        tmp_path / "bad.jsonl",
        {"text": "fine"},
        b'{"text": "caf\xe9"}',
        {"text": "a\u0000b"},
        {"text": "fine too", "importance": 5},
        {"txt": "typo"},
        [1, 2],
        {"text": "", "kind": "memo"},
        {"text": "x", "kind": "memo"},
    )
    known = ("text, kind, subject, domain, actors, outcome, occurred_at, confidence, source, key, tier, "
             "keep, session, turn, importance, urgency, risk, novelty, emotion, recurrence, actionability")
    fails(ms, seeded, "remember", "--jsonl", str(bulk), rc=2, err=(
        f"Error: {bulk}:2: not valid UTF-8; nothing was written (6 more line(s) with errors below)\n"
        f"  {bulk}:3: text contains a NUL byte; memories are text, not binary data\n"
        f"  {bulk}:4: importance 5 is out of range; use a number from 0 to 1\n"
        f"  {bulk}:5: unknown field 'txt'; known fields: {known}\n"
        f"  {bulk}:6: expected a JSON object with a \"text\" field\n"
        f"  {bulk}:7: kind 'memo' is not one of: note, meeting, decision, incident, deal, preference, "
        "definition, fact, plan, procedure, disambiguation, policy\n"
        f"  {bulk}:8: kind 'memo' is not one of: note, meeting, decision, incident, deal, preference, "
        "definition, fact, plan, procedure, disambiguation, policy\n"))


def test_bulk_skips_empty_messages_with_a_count(ms, seeded, tmp_path):
    """Chat exports hold empty and white-space messages: each is answered '-' (skip) and
    counted, the rest is written; a file of nothing else writes nothing."""
    bulk = write_jsonl(tmp_path / "chat.jsonl", {"text": "We met Dana at the lake", "key": "t1"},
                       {"text": "  \n ", "key": "t2"}, {"text": ""}, {"text": "She loves kayaking", "key": "t3"})
    r = ms("remember", "--jsonl", str(bulk))
    assert (r.rc, r.err) == (0, "2 add, 2 skip (2 empty message(s))\n")
    ids = r.out.splitlines()
    assert ids[1:3] == ["-", "-"] and ids[0] == memory_id("We met Dana at the lake", None, None)
    assert len(log_lines(seeded)) == 3  # the seeded memory and the two messages with words
    r = ms("remember", "--jsonl", str(bulk), "--json", now=LATER)
    assert [(row["action"], row["key"]) for row in map(json.loads, r.out.splitlines())] == [
        ("noop", "t1"), ("skip", "t2"), ("skip", None), ("noop", "t3")]  # the same keys again
    only = write_jsonl(tmp_path / "blank.jsonl", {"text": " "}, {"text": ""})
    fails(ms, seeded, "remember", "--jsonl", str(only), rc=2,
          err=f"Error: --jsonl {only} holds no memories (2 empty message(s) skipped); nothing was written\n")


def test_bulk_empty_and_missing_files(ms, seeded, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    fails(ms, seeded, "remember", "--jsonl", str(empty), rc=2,
          err=f"Error: --jsonl {empty} holds no memories; nothing was written\n")
    missing = tmp_path / "missing.jsonl"
    fails(ms, seeded, "remember", "--jsonl", str(missing), rc=2,
          err=f"Error: cannot read --jsonl {missing}: No such file or directory\n")


def test_bulk_backdated_writes_nothing(ms, seeded, tmp_path):
    bulk = write_jsonl(tmp_path / "b.jsonl", {"text": "one new note"}, {"text": "two new notes"})
    fails(ms, seeded, "remember", "--jsonl", str(bulk), rc=1, now=EARLIER,
          err=f"Error: --now {EARLIER} is earlier than the store's latest record time {NOW}; replay must "
              "move forward in time (pass --allow-past to record it anyway)\n")


def test_bulk_equals_single_writes(ms, cli, tmp_path, store):
    objs = [{"text": "We decided to use Postgres", "subject": "db"}, {"text": "Kafka is a log"},
            {"text": "hello world note", "actors": ["alice", "bob"], "outcome": "pending"}]
    bulk = ms("remember", "--jsonl", str(write_jsonl(tmp_path / "b.jsonl", *objs))).lines
    other = tmp_path / "other"
    singles = []
    for o in objs:
        args = [o["text"]] + (["--subject", o["subject"]] if "subject" in o else [])
        args += [a for actor in o.get("actors", []) for a in ("--actor", actor)]
        args += ["--outcome", o["outcome"]] if "outcome" in o else []
        singles.append(cli("--store", str(other), "remember", *args, "--now", NOW).out.strip())
    assert bulk == singles
    assert ms("export").out == cli("--store", str(other), "export", "--now", NOW).out


# --- determinism ----------------------------------------------------------------------------

def _session(cli, root, tmp_path) -> list[str]:
    bulk = write_jsonl(tmp_path / f"{root.name}.jsonl", {"text": "bulk one", "key": "b1"},
                       {"text": "私は朝型が好き"}, {"text": "hello world note"})
    steps = [
        ("remember", "hello world note", "--now", NOW),
        ("remember", "We decided to use Postgres", "--subject", "db", "--actor", "alice", "--now", NOW),
        ("remember", "--jsonl", str(bulk), "--now", "2026-06-07T10:00:00Z"),
        ("remember", "hello world note", "--importance", "0.9", "--now", "2026-06-30T23:59:59Z"),
        ("remember", "a July note", "--occurred-at", "2026", "--key", "jul", "--now", "2026-07-01T00:00:00Z"),
        ("remember", "another text", "--key", "jul", "--now", "2026-07-02T00:00:00Z"),
        ("remember", "thanks!", "--now", "2026-07-02T00:00:00Z"),
        ("remember", "late entry", "--allow-past", "--json", "--now", "2026-06-15T00:00:00Z"),
        ("show", HELLO_ID, "--json", "--now", "2026-07-03T00:00:00Z"),
        ("show", "jul", "--now", "2026-07-03T00:00:00Z"),
        ("log", "--now", "2026-07-03T00:00:00Z"),
        ("log", "--json", "--op", "reinforce", "--now", "2026-07-03T00:00:00Z"),
        ("export", "--now", "2026-07-03T00:00:00Z"),
        ("export", "--history", "--now", "2026-07-03T00:00:00Z"),
    ]
    outputs = []
    for step in steps:
        r = cli("--store", str(root), *step)
        assert r.rc == 0, (step, r.err)
        outputs.append(r.out + "\x00" + r.err)
    return outputs


def test_same_commands_give_byte_identical_logs_and_output(cli, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _session(cli, a, tmp_path) == _session(cli, b, tmp_path)
    names = sorted(p.relative_to(a / "log") for p in (a / "log").rglob("*"))
    assert names == sorted(p.relative_to(b / "log") for p in (b / "log").rglob("*"))
    assert [str(n) for n in names] == ["2026-06.jsonl", "2026-07.jsonl"]
    for name in names:
        assert (a / "log" / name).read_bytes() == (b / "log" / name).read_bytes()


def test_log_lines_are_canonical_json(ms, store):
    ms("remember", *FULL)
    raw = (store / "log" / "2026-06.jsonl").read_bytes()
    event = json.loads(raw)
    assert raw == json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
