"""Conversations as a shape: a turn's session and position, and recall
reading a strong match's neighbouring turns (a question and its short answer)."""

from __future__ import annotations

import json

from conftest import NOW
from memstore_cli.main import main
from reliability_support import make_store


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


CHAT = [  # (turn, speaker, text): the answer (t3) shares no word with the question asked later
    (1, "assistant", "Welcome back! How was Cornwall?"),
    (2, "user", "Amazing. We hiked the coast path every single day."),
    (3, "assistant", "Sounds lovely."),
]


def _chat(tmp_path, capsys, *, sessions: bool):
    store = make_store(tmp_path / ("with" if sessions else "without"))
    rows = []
    for turn, speaker, text in CHAT:
        row = {"text": text, "actor": speaker, "key": f"s1-t{turn}", "keep": True}
        if sessions:
            row.update(session="s1", turn=turn)
        rows.append(row)
    filler = [{"text": f"How was the weather on day {i} of the trip?", "keep": True,  # "how was", no Cornwall
               "session": "s0", "turn": i} for i in range(30)]
    bulk = tmp_path / ("with.jsonl" if sessions else "without.jsonl")
    bulk.write_text("".join(json.dumps(r) + "\n" for r in filler + rows))
    assert _run(capsys, "--store", store, "remember", "--jsonl", bulk, "--now", NOW)[0] == 0
    return store


def test_a_turn_records_its_session_and_position(tmp_path, capsys):
    store = _chat(tmp_path, capsys, sessions=True)
    rc, out, _ = _run(capsys, "--store", store, "show", "s1-t2", "--json", "--now", NOW)
    memory = json.loads(out)["memory"]
    assert (rc, memory["session"], memory["turn"], memory["actors"]) == (0, "s1", 2, ["user"])
    rc, out, _ = _run(capsys, "--store", store, "remember", "Plain note", "--session", "s9", "--turn", "4",
                      "--json", "--now", NOW)
    assert (json.loads(out)["memory"]["session"], json.loads(out)["memory"]["turn"]) == ("s9", 4)
    plain = _run(capsys, "--store", store, "remember", "No conversation here", "--now", NOW)
    assert plain[0] == 0
    last = json.loads((store / "log").glob("*.jsonl").__next__().read_text().splitlines()[-1])
    assert "session" not in last["memory"] and "turn" not in last["memory"]  # logs without them unchanged


def test_bad_turns_and_sessions_are_usage_errors(tmp_path, capsys):
    store = make_store(tmp_path / "s")
    assert _run(capsys, "--store", store, "remember", "x y z", "--turn", "-1", "--now", NOW) == (
        2, "", "Error: --turn '-1' must be a whole number from 0 (the turn's position in its session)\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "hello there friend", "turn": 1.5}\n{"text": "a b c", "session": "x\\ny"}\n')
    rc, out, err = _run(capsys, "--store", store, "remember", "--jsonl", bad, "--now", NOW)
    assert (rc, out) == (2, "")
    assert "turn 1.5 must be a whole number from 0" in err and "session 'x\\ny' must be one line" in err
    assert not (store / "log").exists() or not any((store / "log").glob("*.jsonl"))


def test_recall_reads_the_answer_next_to_the_matching_question(tmp_path, capsys):
    """The question matches the prompt (t1) only; the answer (t2) comes with it, and only when
    the turns carry their session: without, it is not found."""
    query = ["recall", "How was Cornwall?", "--k", "3", "--json", "--no-touch", "--now", NOW]
    found = {}
    for sessions in (True, False):
        store = _chat(tmp_path, capsys, sessions=sessions)
        rc, out, err = _run(capsys, "--store", store, *query)
        assert rc == 0, err
        found[sessions] = [r["key"] for r in json.loads(out)["results"]]
    assert found[True][0] == "s1-t1" and "s1-t2" in found[True]
    assert "s1-t2" not in found[False]


def test_context_turns_keep_the_requests_cues_and_grants(tmp_path, capsys):
    store = _chat(tmp_path, capsys, sessions=True)
    rc, out, _ = _run(capsys, "--store", store, "recall", "How was Cornwall?", "--actor", "assistant",
                      "--json", "--no-touch", "--now", NOW)
    keys = [r["key"] for r in json.loads(out)["results"]]
    assert "s1-t1" in keys and "s1-t2" not in keys  # the user's turn does not pass --actor assistant
