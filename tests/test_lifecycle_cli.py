"""The lifecycle commands end to end: consolidate, distill, conflicts, forget, stats,
show --explain. Exact text where a person reads it; JSON where a program does."""

from __future__ import annotations

import json

import pytest

DAY1, DAY2, NIGHT = "2026-01-02T10:00:00Z", "2026-01-03T11:00:00Z", "2026-01-04T03:00:00Z"


@pytest.fixture
def hashing(store):
    store.mkdir(parents=True)
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n[conflicts]\nauto_supersede = false\n')


def remember(ms, text: str, now: str, *args: str) -> str:
    r = ms("remember", text, *args, now=now)
    assert r.rc == 0, r.err
    return r.out.strip()


def test_consolidate_reports_each_event_and_then_nothing(ms, hashing):
    a = remember(ms, "Checkout test flaked on CI", DAY1, "--subject", "flaky", "--domain", "eng")
    b = remember(ms, "Checkout test flaked on CI again", DAY2, "--subject", "flaky", "--domain", "eng")
    c = remember(ms, "The checkout suite timed out on the runner", DAY2, "--subject", "flaky", "--domain", "eng")
    r = ms("consolidate", now=NIGHT)
    assert r.rc == 0
    assert r.out == (f"merge      {b} into {a} 'Checkout test flaked on CI' (cosine 0.9052)\n"
                     f"promote    {a} 'Checkout test flaked on CI' (mentions 2)\n")
    assert r.err == "consolidate: 1 merge, 1 promote appended (seq 4-5), then its mark (seq 6)\n"
    again = ms("consolidate", now=NIGHT)
    assert (again.rc, again.out, again.err) == (0, "", f"consolidate: nothing to do at {NIGHT}\n")
    shown = ms("show", b, "--json").json()["memory"]
    assert (shown["status"], shown["merged_into"]) == ("archived", a)
    assert ms("show", c, "--json").json()["memory"]["status"] == "active"  # another statement: not merged


def test_consolidate_json_dry_run_and_quiet(ms, cli, store, hashing):
    remember(ms, "Lunch was late today", DAY1)
    dry = ms("consolidate", "--dry-run", "--json", now="2026-01-20T03:00:00Z").json()
    assert (dry["appended"], dry["dry_run"], dry["counts"], dry["examined_through"]) == (0, True, {"expire": 1}, 1)
    assert "seq" not in dry["events"][0]
    r = cli("--store", store, "--quiet", "consolidate", "--now", "2026-01-20T03:00:00Z")
    assert (r.rc, r.out, r.err) == (0, "", "")
    assert ms("log", "--op", "expire", "--json").jsonl()[0]["seq"] == 2
    mark = ms("log", "--op", "mark", "--json").jsonl()  # the run's watermark: seq 1 was compared
    assert [(e["seq"], e["stage"], e["through"]) for e in mark] == [(3, "consolidate", 1)]
    assert ms("log", "--op", "mark").out.endswith("consolidate examined the records through seq 1\n")


def test_distill_turns_outcomes_into_a_policy(ms, hashing):
    for day in ("2026-01-02", "2026-01-09"):
        remember(ms, f"Friday deploy on {day} broke checkout", f"{day}T10:00:00Z", "--subject", "friday-deploy",
                 "--domain", "eng", "--kind", "incident", "--outcome", "negative")
    r = ms("distill", "--json", now="2026-01-11T04:00:00Z")
    out = r.json()
    assert out["counts"] == {"policy": 1}
    policy = out["events"][0]["memory"]
    assert policy["text"] == "[eng] Avoid: friday-deploy: Friday deploy on 2026-01-02 broke checkout (2 negative outcomes)"
    assert (policy["direction"], policy["confidence"]) == ("mitigate", 0.791667)
    assert ms("distill", now="2026-01-11T04:00:00Z").out == ""


def test_conflicts_side_by_side_then_resolved(ms, hashing):
    tea = remember(ms, "I prefer tea in the morning.", DAY1, "--subject", "drink", "--source", "agent")
    coffee = remember(ms, "I prefer coffee in the morning.", DAY2, "--subject", "drink")
    ms("consolidate", now=NIGHT)
    listing = ms("conflicts", now=NIGHT)
    cid = listing.out.split()[0]
    assert listing.rc == 0
    assert listing.out == (
        f"{cid}  value (cosine 0.7675)  detected {NIGHT}  open\n"
        "             old                                     new\n"
        f"  id         {tea}                        {coffee}\n"
        "  text       I prefer tea in the morning.            I prefer coffee in the morning.\n"
        "  source     agent                                   human\n"
        "  confidence 0.70                                    1.00\n"
        f"  recorded   {DAY1}                    {DAY2}\n"
        "  occurred   2026-01-02T10:00Z                       2026-01-03T11:00Z\n"
        "  status     active                                  active\n"
        "\n"
    )
    data = ms("conflicts", "--json", now=NIGHT).json()["conflicts"][0]
    assert (data["records"]["old"]["text"], data["records"]["new"]["confidence"]) == ("I prefer tea in the morning.", 1.0)
    r = ms("conflicts", "resolve", cid, "--keep", "new", "--note", "asked", now="2026-01-04T09:00:00Z")
    assert (r.rc, r.out) == (0, cid + "\n")
    assert ms("conflicts", now="2026-01-04T09:00:00Z").err == "no open conflicts\n"
    assert ms("show", tea, "--json").json()["memory"]["status"] == "superseded"
    again = ms("conflicts", "resolve", cid, "--keep", "new", now="2026-01-04T09:00:00Z")
    assert again.err == "already resolved: keep new\n"
    assert "resolved new" in ms("conflicts", "--all").out.splitlines()[0]


def test_recall_as_of_reads_every_spell_a_reinstated_memory_did_not_hold(ms, store):
    """Tea is superseded by coffee at NIGHT, then a person keeps tea (RESOLVED): between the
    two tea was not believed, and --as-of says so after the reinstatement as before it."""
    store.mkdir(parents=True)
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')
    tea = remember(ms, "I prefer tea in the morning.", DAY1, "--subject", "drink")
    coffee = remember(ms, "I prefer coffee in the morning.", DAY2, "--subject", "drink")
    ms("consolidate", now=NIGHT)
    assert ms("show", tea, "--json").json()["memory"]["status"] == "superseded"
    cid = ms("conflicts", "--all", "--json", now=NIGHT).json()["conflicts"][0]["id"]
    resolved = "2026-01-05T09:00:00Z"
    assert ms("conflicts", "resolve", cid, "--keep", "old", now=resolved).rc == 0

    def believed(at: str) -> list[str]:
        r = ms("recall", "what do I drink in the morning", "--subject", "drink", "--as-of", at, "--json",
               "--no-touch", now="2026-01-06T00:00:00Z")
        assert r.rc == 0, r.err
        return sorted(x["id"] for x in r.json()["results"])

    assert believed("2026-01-03T12:00:00Z") == sorted([tea, coffee])  # both said, neither replaced yet
    assert believed(NIGHT) == [coffee]  # superseded at NIGHT: from then on, not believed
    assert believed("2026-01-05T08:59:59Z") == [coffee]
    assert believed(resolved) == [tea]  # kept by a person: believed again, coffee no longer
    assert believed("2026-01-06T00:00:00Z") == [tea]
    shown = ms("show", tea, "--json").json()["memory"]
    assert (shown["status"], shown["invalid_at"], shown["invalid_periods"]) == ("active", None, [f"{NIGHT}/{resolved}"])
    ms("snapshot", now="2026-01-06T00:00:00Z")  # the spell survives the snapshot and a rebuilt index
    assert ms("reindex", now="2026-01-06T00:00:00Z").rc == 0
    assert believed("2026-01-05T08:59:59Z") == [coffee]
    assert ms("show", tea, "--json").json()["memory"]["invalid_periods"] == [f"{NIGHT}/{resolved}"]


def test_conflicts_errors(ms, hashing):
    remember(ms, "x note", DAY1)
    assert ms("conflicts", "resolve", "c000000000000000", "--keep", "new").err == \
        "Error: no conflict 'c000000000000000'; list them with `memstore conflicts --all`\n"
    bad = ms("conflicts", "resolve", "c000000000000000", "--keep", "maybe")
    assert (bad.rc, bad.err) == (2, "Error: --keep 'maybe' is not one of: new, old, both, dismiss\n")
    assert ms("conflicts", "frobnicate").rc == 2


def test_forget_keeps_the_record(ms):
    mid = remember(ms, "The office wifi password is on the fridge", DAY1, "--key", "wifi")
    r = ms("forget", "wifi", "--reason", "moved office", now=DAY2)
    assert (r.rc, r.out, r.err) == (0, mid + "\n", "")
    shown = ms("show", mid, "--json").json()["memory"]
    assert (shown["status"], shown["invalid_at"], shown["reason"]) == ("invalidated", DAY2, "moved office")
    assert ms("forget", mid, now=DAY2).err == f"already forgotten at {DAY2}\n"
    assert ms("forget", "nope").rc == 1


def test_stats_counts_and_histogram(ms, hashing):
    remember(ms, "Lunch was late today", DAY1)
    remember(ms, "We decided to move billing to Postgres", DAY1, "--subject", "billing")
    remember(ms, "We decided we must never deploy on Fridays", DAY1, "--subject", "deploys")
    out = ms("stats", "--json", now="2026-03-01T00:00:00Z").json()
    assert (out["memories"], out["tier"], out["open_conflicts"]) == (3, {"short": 1, "long": 2}, 0)
    assert out["status"]["active"] == 3 and sum(out["effective"]["bins"]) == 3
    # Only the decision with cue words ("must", "never": importance 0.8) is protected; a plain
    # decision's prior importance is 0.65, under protect_threshold 0.7 (classify.PRIORS).
    assert out["effective"]["protected"] == 1
    text = ms("stats", now="2026-03-01T00:00:00Z").out.splitlines()
    assert text[0] == "memories   3"
    assert text[1] == "tier       short 1  long 2"
    assert len([line for line in text if line.startswith("  0.")]) == 10


def test_show_explain(ms):
    mid = remember(ms, "Lunch was late today", DAY1)
    out = ms("show", mid, "--explain", now="2026-01-09T10:00:00Z").out
    assert "salience at 2026-01-09T10:00:00Z: 7 days since last use\n" in out
    # A note's kind half-life (3 days) caps every axis, urgency's own 7 days too: 0.5 ** (7/3).
    assert "  urgency         0.500    0.10         3d    0.1984    0.0992\n" in out
    data = ms("show", mid, "--explain", "--json", now="2026-01-09T10:00:00Z").json()["explain"]
    assert data["at"] == "2026-01-09T10:00:00Z"
    assert data["axes"]["urgency"] == {"value": 0.5, "weight": 0.1, "half_life_days": 3.0, "axis_half_life_days": 7.0,
                                       "decay": round(0.5 ** (7 / 3), 6), "decayed": round(0.5 * 0.5 ** (7 / 3), 6)}
    assert f"  effective {data['effective']:.4f}\n" in out


@pytest.mark.parametrize("command", ["consolidate", "distill", "conflicts", "forget", "stats"])
def test_help_has_a_summary_and_examples(cli, command):
    r = cli(command, "--help")
    assert r.rc == 0 and "Examples:" in r.out and "--now" in r.out


def test_json_output_is_canonical(ms, hashing):
    remember(ms, "Lunch was late today", DAY1)
    raw = ms("stats", "--json", now=DAY2).out
    assert raw == json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def test_the_consolidate_mark_survives_a_snapshot_and_the_next_night_compares_only_the_new(ms, store, hashing):
    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    remember(ms, "We deploy on Fridays", DAY1, "--kind", "decision", "--subject", "deploys")
    assert ms("consolidate", now=NIGHT).rc == 0
    assert ms("snapshot", now=NIGHT).rc == 0
    assert ms("consolidate", now="2026-01-05T03:00:00Z").err == "consolidate: nothing to do at 2026-01-05T03:00:00Z\n"
    opened = load_state(Layout(store))[0]  # from the snapshot, which carries the mark
    assert opened.marks == load_state(Layout(store), use_snapshots=False)[0].marks == {"consolidate": 1}
    b = remember(ms, "We never deploy on Fridays", "2026-01-05T09:00:00Z", "--kind", "decision", "--subject", "deploys")
    got = ms("consolidate", "--json", now="2026-01-06T03:00:00Z").json()
    assert [e["op"] for e in got["events"]][:1] == ["conflict"] and got["events"][0]["new"] == b
    assert got["examined_through"] == opened.seq + 1  # the remember after the snapshot


def test_a_history_import_leaves_the_sources_marks_out(ms, cli, store, tmp_path, hashing):
    """A mark names the source's log positions; appended elsewhere they would claim
    records as compared that were not. The target's next consolidate compares them."""
    remember(ms, "We deploy on Fridays", DAY1, "--kind", "decision", "--subject", "deploys")
    assert ms("consolidate", now=NIGHT).rc == 0
    remember(ms, "We never deploy on Fridays", "2026-01-05T09:00:00Z", "--kind", "decision", "--subject", "deploys")
    history = tmp_path / "history.jsonl"
    history.write_text(ms("export", "--history", now="2026-01-05T10:00:00Z").out)
    other = tmp_path / "other"
    assert cli("--store", other, "init").rc == 0
    (other / "memstore.toml").write_text('[embedder]\nname = "hashing"\n')
    cli("--store", other, "remember", "Unrelated note from before", "--now", "2026-01-01T09:00:00Z")
    got = cli("--store", other, "import", history, "--json", "--now", "2026-01-05T10:00:00Z")
    assert json.loads(got.out) == {"kind": "history", "read": 3, "imported": 2, "skipped": 0, "marks_left_out": 1}
    assert cli("--store", other, "log", "--op", "mark", "--now", "2026-01-05T10:00:00Z").out == ""
    night = cli("--store", other, "consolidate", "--json", "--now", "2026-01-06T03:00:00Z")
    assert [e["op"] for e in json.loads(night.out)["events"]][:1] == ["conflict"]


def test_verify_reports_a_snapshot_whose_mark_disagrees_with_the_log(ms, store, hashing):
    """A snapshot's metadata is not under its checksum; a mark edited there would make the
    next consolidate skip records, so verify compares it with the log's."""
    import pyarrow.parquet as pq

    from memstore.codec import dumps, loads

    remember(ms, "We deploy on Fridays", DAY1, "--kind", "decision", "--subject", "deploys")
    assert ms("consolidate", now=NIGHT).rc == 0
    assert ms("snapshot", now=NIGHT).rc == 0
    assert "marks" not in ms("verify", now=NIGHT).out
    [path] = (store / "snapshots").glob("*.parquet")
    table = pq.read_table(path)
    meta = loads(pq.read_metadata(path).metadata[b"memstore"])
    # (written as memstore writes it: the bytes before the footer, under the checksum, are the same)
    pq.write_table(table.replace_schema_metadata({b"memstore": dumps({**meta, "marks": {"consolidate": 2}})}), path,
                   compression="zstd", write_page_checksum=True)
    r = ms("verify", now=NIGHT)
    assert r.rc == 1 and "its consolidate marks {'consolidate': 2} differ from the log's at seq" in r.out
