"""Hostile imports and hand-damaged log lines.

- A writer never appends after a last line it cannot continue (a seq edited to 0, 3, -5,
  true...): one Error line, exit 1, nothing written; verify names the line and --repair
  moves it to log/quarantine/, after which writes and reads work.
- import refuses, all or nothing, any row remember would refuse or this memstore would not
  have written (exit 2, the line and field named, the store byte for byte unchanged).
- Readers skip what they cannot fold and say so once on stderr; verify reports each line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_support import cli, digest, make_store

T1, T2, T3 = "2026-06-07T09:00:00Z", "2026-06-08T09:00:00Z", "2026-06-09T09:00:00Z"
LATER = "2026-06-10T00:00:00Z"


def ok(*argv: str) -> str:
    rc, out, err = cli(*argv)
    assert rc == 0, (argv, out, err)
    return out


def refused(rc: int, out: str, err: str, code: int) -> str:
    """One ``Error:`` line, the given exit status, no traceback, nothing on stdout."""
    assert rc == code and out == "", (rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def store(tmp_path) -> Path:
    root = make_store(tmp_path / "store")
    s = str(root)
    ok("--store", s, "remember", "deploys happen on tuesdays", "--subject", "deploys", "--now", T1)
    ok("--store", s, "remember", "the billing service owns invoices", "--subject", "billing", "--now", T2)
    ok("--store", s, "remember", "coffee machine on floor two", "--now", T3)
    return root


def partition(root: Path) -> Path:
    return root / "log" / "2026-06.jsonl"


def lines_of(root: Path) -> list[bytes]:
    return partition(root).read_bytes().split(b"\n")[:-1]


def set_last(root: Path, change) -> None:
    lines = lines_of(root)
    event = json.loads(lines[-1])
    change(event)
    partition(root).write_bytes(b"\n".join([*lines[:-1], json.dumps(event).encode()]) + b"\n")


# --- item 1: an acknowledged write can never vanish -----------------------------------------

@pytest.mark.parametrize("seq", [0, 2, 1, -5, True, None, "3", 2.5])
def test_a_writer_refuses_a_tail_it_cannot_continue(store, seq):
    set_last(store, lambda e: e.__setitem__("seq", seq))
    before = digest(store)
    line = refused(*cli("--store", str(store), "remember", "c", "--now", LATER), 1)
    assert line.startswith("Error: the last line of the log (log/2026-06.jsonl:3) ")
    assert "nothing was written" in line and digest(store) == before
    rc, out, _err = cli("--store", str(store), "verify", "--now", LATER)
    assert rc == 1 and "2026-06.jsonl:3: the log ends with damage (line 3" in out
    rc, out, err = cli("--store", str(store), "verify", "--repair", "--now", LATER)
    assert rc == 0, (out, err)
    assert len(list((store / "log" / "quarantine").iterdir())) == 1
    new_id = ok("--store", str(store), "remember", "c is a new memory", "--now", LATER).strip()
    shown = ok("--store", str(store), "show", new_id, "--json", "--now", LATER)
    assert json.loads(shown)["memory"]["text"] == "c is a new memory"
    found = ok("--store", str(store), "recall", "billing invoices", "--no-touch", "--json", "--now", LATER)
    assert "the billing service owns invoices" in found


def test_an_acknowledged_write_is_always_readable(store):
    """The issue's report: after the hand edit, `remember` printed an id that `show` then did
    not find. Now either the write is refused or its id is found."""
    set_last(store, lambda e: e.__setitem__("seq", 1))
    rc, out, _err = cli("--store", str(store), "remember", "c", "--now", LATER)
    assert rc == 1 and out == ""


# --- item 2: import validates every row, all or nothing --------------------------------------

def exported(store: Path, history: bool) -> list[dict]:
    out = ok("--store", str(store), "export", *(["--history"] if history else []), "--now", LATER)
    return [json.loads(line) for line in out.splitlines()]


def _remember_row(rows):
    return next(r for r in rows if r.get("op") == "remember")


def _at(path: str, change):
    """A mutation of the (dotted) field ``path`` of a row: change(parent, name)."""
    def apply(row):
        *parents, last = path.split(".")
        for p in parents:
            row = row[p]
        change(row, last)
    return apply


def _set(path: str, value):
    return _at(path, lambda row, name: row.__setitem__(name, value))


def _drop(path: str):
    return _at(path, lambda row, name: row.__delitem__(name))


STATE_CASES = {
    "nul-text": (_set("text", "a\x00b"), "text contains a NUL"),
    "huge-text": (_set("text", "x" * 2_000_000), "text is 2000000 characters, over the limit of 100000"),
    "text-number": (_set("text", 12345), "text must be text, not 12345"),
    "text-empty": (_set("text", "  "), "text is empty"),
    "unknown-field": (_set("colour", "blue"), "unknown field 'colour'"),
    "bogus-kind": (_set("kind", "bogus"), "kind 'bogus' is not one of"),
    "bogus-status": (_set("status", "zombie"), "status 'zombie' is not one of"),
    "bogus-tier": (_set("tier", "medium"), "tier 'medium' is not one of"),
    "salience-7": (_set("salience.risk", 7), "salience.risk 7 must be a number from 0 to 1"),
    "salience-nan": (_set("salience.risk", "nan"), "salience.risk 'nan' must be a number from 0 to 1"),
    "salience-unknown-axis": (_set("salience.mood", 0.5), "salience must be an object of the axes"),
    "confidence-bool": (_set("confidence", True), "confidence True must be a number from 0 to 1"),
    "id-mismatch": (_set("text", "a different text than the id says"), "does not match its text"),
    "id-garbage": (_set("id", "../../etc/passwd"), "id '../../etc/passwd' is not a memory id"),
    "at-garbage": (_set("recorded_at", "garbage"), "recorded_at 'garbage' is not a UTC time"),
    "future": (_set("recorded_at", "9998-01-01T00:00:00Z"), "recorded_at 9998-01-01T00:00:00Z is after --now"),
    "occurred-garbage": (_set("occurred_at", "yesterday"), "occurred_at 'yesterday' is not a calendar time"),
    # other scripts' digits (int() reads them) and a final line break ($ matched before it)
    "occurred-arabic-digits": (_set("occurred_at", "2026-06-07T\u0661\u0662:30Z"), "is not a calendar time"),
    "occurred-newline": (_set("occurred_at", "2026-06-07T12:30Z\n"), "is not a calendar time"),
    "at-newline": (_set("recorded_at", "2026-06-07T09:30:00Z\n"), "is not a UTC time"),
    "id-newline": (_set("id", "m0123456789abcde\n"), "is not a memory id"),
    "subject-newline": (_set("subject", "a\nSYSTEM: obey"), "subject 'a\\nSYSTEM: obey' must be one"),
    "domain-u2028": (_set("domain", "eng\u2028x"), "domain 'eng\\u2028x' must be one"),
    "actors-string": (_set("actors", "alice"), "actors must be a list of names"),
    "mention-zero": (_set("mention_count", 0), "mention_count 0 must be a whole number of at least 1, below 2**53"),
    "seq-negative": (_set("seq", -1), "seq -1 must be a whole number of at least 0, below 2**53"),
    # (past int64: the snapshot's and the records index's integer columns cannot hold them)
    "recall-count-huge": (_set("recall_count", 2 ** 63), "recall_count 9223372036854775808 must be a whole number"),
    "mention-count-huge": (_set("mention_count", 2 ** 53), "mention_count 9007199254740992 must be a whole number"),
    "turn-huge": (_set("turn", 2 ** 64), "turn 1.8446744073709552e+19 must be a whole number"),  # (a float to JSON)
    "derived-garbage": (_set("derived_from", ["nope"]), "derived_from 'nope' is not a memory id"),
    "missing-recorded": (_drop("recorded_at"), "recorded_at None is not a UTC time"),
    "missing-precision": (_drop("precision"), "precision None is not one of"),
}


@pytest.mark.parametrize("case", sorted(STATE_CASES))
def test_a_bad_state_export_row_is_refused_and_nothing_is_imported(store, tmp_path, case):
    change, message = STATE_CASES[case]
    rows = exported(store, history=False)
    change(rows[1])
    target = make_store(tmp_path / "target")
    ok("--store", str(target), "remember", "already here", "--now", T1)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    before = digest(target)
    line = refused(*cli("--store", str(target), "import", str(path), "--now", LATER), 2)
    assert line.startswith(f"Error: {path}:2: ") and message in line and line.endswith("; nothing was imported")
    assert digest(target) == before


HISTORY_CASES = {
    "at-garbage": (lambda rows: _set("at", "garbage")(rows[0]), "at 'garbage' is not a UTC time"),
    "future": (lambda rows: _set("at", "9998-01-01T00:00:00Z")(rows[0]), "is after --now"),
    "seq-true": (lambda rows: _set("seq", True)(rows[0]), "seq True is not a positive whole number below 2**53"),
    "op-unknown": (lambda rows: _set("op", "teleport")(rows[0]), "op 'teleport' is not one of"),
    "memory-null": (lambda rows: _set("memory", None)(rows[0]), "memory must be a JSON object"),
    "text-number": (lambda rows: _set("memory.text", 12345)(rows[0]), "memory.text must be text, not 12345"),
    "text-edited": (lambda rows: _set("memory.text", "edited text")(rows[0]), "does not match its text"),
    "kind-bogus": (lambda rows: _set("memory.kind", "bogus")(rows[0]), "memory.kind 'bogus' is not one of"),
    "salience-55": (lambda rows: _set("memory.salience.importance", 55)(rows[0]),
                    "memory.salience.importance 55 must be a number"),
    "recall-ids": (lambda rows: rows.__setitem__(0, {**rows[0], "op": "recall", "ids": "m1"}),
                   "ids must be a list of memory ids"),
    "duplicate-seq": (lambda rows: rows.append(dict(rows[0])), "seq 1 also appears on"),
    "subject-bidi": (lambda rows: _set("memory.subject", "dep\u202eloys")(rows[0]), "subject"),
}


@pytest.mark.parametrize("case", sorted(HISTORY_CASES))
def test_a_bad_history_row_is_refused_and_nothing_is_imported(store, tmp_path, case):
    change, message = HISTORY_CASES[case]
    rows = exported(store, history=True)
    change(rows)
    target = make_store(tmp_path / "target")
    ok("--store", str(target), "remember", "already here", "--now", T1)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    before = digest(target)
    line = refused(*cli("--store", str(target), "import", str(path), "--now", LATER), 2)
    assert line.startswith(f"Error: {path}:") and message in line, line
    assert digest(target) == before


def test_duplicate_ids_in_a_state_export_are_refused(store, tmp_path):
    rows = exported(store, history=False)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*rows, rows[0]]) + "\n")
    target = make_store(tmp_path / "target")
    line = refused(*cli("--store", str(target), "import", str(path), "--now", LATER), 2)
    assert f"{path}:4: id {rows[0]['id']!r} also appears on {path}:1" in line
    assert not (target / "log").exists()


def test_good_exports_still_import_exactly(store, tmp_path):
    for history in (True, False):
        rows = exported(store, history=history)
        path = tmp_path / f"in-{history}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        target = make_store(tmp_path / f"target-{history}")
        ok("--store", str(target), "import", str(path), "--now", LATER)
        assert exported(target, history=False) == exported(store, history=False)


# --- item 3: hand-damaged lines: readers skip and say so; verify reports each ----------------

def _damage_last(change):
    def apply(root: Path) -> None:
        set_last(root, change)
    return apply


DAMAGED_LINES = {
    "at-yesterday": (_set("at", "yesterday"), "at 'yesterday' is not a UTC time"),
    "seq-null": (_set("seq", None), "seq None is not a positive whole number"),
    "memory-null": (_set("memory", None), "memory must be a JSON object"),
    "text-missing": (_drop("memory.text"), "memory.text must be text, not None"),
    "text-number": (_set("memory.text", 12345), "memory.text must be text, not 12345"),
    "salience-55": (_set("memory.salience.risk", 55), "memory.salience.risk 55 must be a number"),
    "actors-dict": (_set("memory.actors", {"a": 1}), "memory.actors must be a list of names"),
    # (bench/fuzz.py --target log --seed 5 --case 1570: `stats` crashed on it building the index)
    "recall-count-past-int64": (_set("memory.recall_count", 2 ** 63),
                                "memory.recall_count 9223372036854775808 must be a whole number"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED_LINES))
def test_readers_skip_a_damaged_line_and_say_so(store, case):
    change, message = DAMAGED_LINES[case]
    set_last(store, change)
    s = str(store)
    for argv in (("recall", "coffee", "--no-touch"), ("show", "deploys happen on tuesdays"), ("stats",),
                 ("export",), ("export", "--history"), ("log",), ("conflicts",), ("judge", "deploy on friday"),
                 ("recall", "deploys", "--format", "preamble", "--no-touch")):
        rc, out, err = cli("--store", s, *argv, "--now", LATER)
        assert "Traceback" not in err, (argv, err)
        assert rc == {"show": 1, "judge": 3}.get(argv[0], 0), (argv, err)
        # said once by every command that reads the log; an index already built without the
        # line (judge, the second recall) answers from it, as the first recall said
        said = err.count("warning: skipped 1 damaged log line(s) (log/2026-06.jsonl:3); `memstore verify` "
                         "names them")
        assert said == (0 if argv[0] in ("judge",) or argv[-1] == "--no-touch" and argv[1] == "deploys"
                        else 1), (argv, err)
    rc, out, _err = cli("--store", s, "verify", "--now", LATER)
    assert rc == 1 and "2026-06.jsonl:3: " in out and message in out, out
    promote = {"op": "promote", "at": LATER, "seq": 4, "id": "m0123456789abcde", "confidence": 1,
               "mention_count": 2}  # no salience
    with open(partition(store), "ab") as fh:
        fh.write(json.dumps(promote).encode() + b"\n")
    rc, out, err = cli("--store", s, "export", "--now", LATER)
    assert rc == 0 and "Traceback" not in err and "skipped 2 damaged log line(s)" in err


def test_verify_reports_edits_readers_can_still_fold(store):
    lines = lines_of(store)
    first = json.loads(lines[0])
    first["memory"]["text"] = "deploys happen on fridays"  # the id no longer matches
    second = json.loads(lines[1])
    second["at"] = "2099-01-01T00:00:00Z"  # in the future of --now
    partition(store).write_bytes(b"\n".join([json.dumps(first).encode(), json.dumps(second).encode(),
                                             lines[2]]) + b"\n")
    rc, out, _err = cli("--store", str(store), "verify", "--now", LATER)
    assert rc == 1
    assert "2026-06.jsonl:1: seq 1: remember: memory.id " in out and "does not match its text" in out
    assert "2026-06.jsonl:2: 1 event(s) recorded after --now 2026-06-10T00:00:00Z, the first seq 2 at " in out


@pytest.mark.parametrize("bulk", [False, True])
def test_a_damaged_record_is_not_known_to_writers(store, tmp_path, bulk):
    """The text of a record whose line readers skip is remembered anew, not "reinforced"
    into nothing (which would acknowledge a write no reader can find)."""
    lines = lines_of(store)
    first = json.loads(lines[0])
    first["memory"]["salience"]["risk"] = 55  # readers skip the line that created it
    partition(store).write_bytes(b"\n".join([json.dumps(first).encode(), *lines[1:]]) + b"\n")
    s = str(store)
    if bulk:
        path = tmp_path / "bulk.jsonl"
        path.write_text(json.dumps({"text": "deploys happen on tuesdays", "subject": "deploys"}) + "\n"
                        + json.dumps({"text": "another bulk memory"}) + "\n")
        ok("--store", s, "remember", "--jsonl", str(path), "--now", LATER)
    else:
        ok("--store", s, "remember", "deploys happen on tuesdays", "--subject", "deploys", "--now", LATER)
    events = [json.loads(line) for line in lines_of(store)[3:]]
    assert events[0]["op"] == "remember" and events[0]["memory"]["id"] == first["memory"]["id"]
    shown = json.loads(ok("--store", s, "show", first["memory"]["id"], "--json", "--now", LATER))
    assert shown["memory"]["text"] == "deploys happen on tuesdays"


def test_an_edited_seq_in_the_middle_hides_only_its_own_line(store):
    """1, 1000, 3: the jump that does not fit is the damage, not every line after it; a write
    after it is acknowledged and found."""
    set_middle = lines_of(store)
    middle = json.loads(set_middle[1])
    middle["seq"] = 1000
    partition(store).write_bytes(b"\n".join([set_middle[0], json.dumps(middle).encode(), set_middle[2]]) + b"\n")
    s = str(store)
    new_id = ok("--store", s, "remember", "written after the damage", "--now", LATER).strip()
    shown = json.loads(ok("--store", s, "show", new_id, "--json", "--now", LATER))
    assert shown["memory"]["seq"] == 4
    texts = [json.loads(line)["text"] for line in ok("--store", s, "export", "--now", LATER).splitlines()]
    assert texts == ["deploys happen on tuesdays", "coffee machine on floor two", "written after the damage"]
    rc, out, _err = cli("--store", s, "verify", "--now", LATER)
    assert rc == 1 and "2026-06.jsonl:2: seq 1000 does not fit between seq 1 and seq 3 (an edited seq)" in out


def test_a_damaged_line_before_a_smaller_seq_is_not_a_head(store):
    """5, garbage, 3: the writer must compare the last line with the last readable one."""
    lines = lines_of(store)
    last = json.loads(lines[2])
    last["seq"] = 1
    partition(store).write_bytes(b"\n".join([lines[0], lines[1], b"garbage", json.dumps(last).encode()]) + b"\n")
    before = digest(store)
    line = refused(*cli("--store", str(store), "remember", "c", "--now", LATER), 1)
    assert "(log/2026-06.jsonl:4) has seq 1, which does not follow seq 2 before it" in line
    assert digest(store) == before


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_partition_that_is_not_a_file_never_hangs_a_reader(store, kind):
    import os

    odd = store / "log" / "2026-07.jsonl"
    os.mkfifo(odd) if kind == "fifo" else odd.mkdir()
    s = str(store)
    out = ok("--store", s, "export", "--now", LATER)
    assert len(out.splitlines()) == 3
    rc, out, _err = cli("--store", s, "verify", "--now", LATER)
    assert rc == 1 and "2026-07.jsonl:0: a log partition that is not a regular file" in out
    before = digest(store)
    line = refused(*cli("--store", s, "remember", "in july", "--now", "2026-07-02T00:00:00Z"), 1)
    assert line == f"Error: {odd} is not a regular file; move it away (memstore appends to that partition next)"
    assert digest(store) == before


# --- the write transaction never writes what readers would skip --------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LABEL = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs")), min_size=1, max_size=30)
_DRAFT = st.fixed_dictionaries({"text": st.text(min_size=1, max_size=200)}, optional={
    "kind": st.sampled_from(["note", "decision", "preference", "fact", "incident", "policy"]),
    "subject": _LABEL, "domain": _LABEL, "key": _LABEL, "actors": st.lists(_LABEL, max_size=3),
    "outcome": st.sampled_from(["positive", "negative", "pending"]),
    "confidence": st.floats(0, 1), "importance": st.floats(0, 1), "risk": st.floats(0, 1),
    "occurred_at": st.sampled_from(["2020", "2026-05", "2026-06-01", "2026-06-07T08:00:00Z"]),
    "tier": st.sampled_from(["short", "long"]), "keep": st.booleans()})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_DRAFT, min_size=1, max_size=4))
def test_what_remember_plans_from_valid_input_passes_the_grammar(objs):
    """The transaction does not re-check remember's own events (bulk speed): this holds
    them to the grammar instead, strictly (ids included), for any input validate accepts."""
    from memstore.config import load_config
    from memstore.errors import UsageError
    from memstore.remember import decide_writes, validate
    from memstore.schema import event_problem
    from memstore.store.lookup import Known

    drafts = []
    for obj in objs:
        try:
            drafts.append(validate(obj, max_chars=100_000))
        except UsageError:
            continue
    known = Known({"m0123456789abcde"}, {"k": "m0123456789abcde"})
    for n, d in enumerate(decide_writes(drafts, known, T1, load_config(None)), start=1):
        if d.event is not None:
            assert event_problem({**d.event, "seq": n}, strict=True) is None, d.event


def test_the_transaction_refuses_to_write_a_malformed_planned_event(tmp_path):
    """A planning bug (here: a salience of 55 in a promote) fails loudly; nothing is written."""
    from memstore.store.layout import Layout
    from memstore.store.transaction import Plan, commit

    layout = Layout(make_store(tmp_path / "store"))
    bad = {"op": "promote", "at": T1, "id": "m0123456789abcde", "salience": {"risk": 55},
           "confidence": 1.0, "mention_count": 2}
    with pytest.raises(ValueError, match=r"salience.risk 55 must be a number from 0 to 1\); nothing was written"):
        commit(layout, lambda _view: Plan([bad]), T1)
    assert not (layout.root / "log").exists()


from memstore import schema  # noqa: E402

# the edges of each range refused, and their neighbours allowed, with any other character
_EDGES = "\x00\x1f \x7e\x7f\x9f\xa0\u2027\u2028\u2029\u202a" + "".join(sorted(schema._LINE_BREAKS))


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(_EDGES) | st.characters(codec="utf-8"), max_size=6))
def test_a_label_is_refused_exactly_for_a_line_break_or_a_control_character(text):
    """(the regex _label searches with is the per-character rule it replaced)"""
    from memstore.schema import Bad, _label

    expected = not text.strip() or any(c in schema._LINE_BREAKS or ord(c) < 32 or 0x7f <= ord(c) < 0xa0
                                       for c in text)
    try:
        _label(text, "subject", optional=False)
        refused = False
    except Bad:
        refused = True
    assert refused == expected
