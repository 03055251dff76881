"""Policies follow the balance of evidence, through the CLI: the
Friday-deploy example end to end, revival on a new majority, a person's resolution
holding until new outcomes, a forgotten policy never revived, idempotent distill.

Every outcome is a plain note with --outcome (no flags): the classifier's note priors
(0.5 on every axis) and a human source (confidence 1.0) give each outcome a composite
salience of 0.5, so a side with n outcomes against m has the confidence
(n/(n+1) + 0.5n/(4n)) * n/(n+m) (memstore(7), POLICIES).
"""

from __future__ import annotations

import json

import pytest
from reliability_support import cli, make_store

from memstore.policies import policy_id

SUBJECT = "friday deploys"
CAUSE = ("subject", "", SUBJECT)
MITIGATE = policy_id(CAUSE, "mitigate")
REINFORCE = policy_id(CAUSE, "reinforce")
SITUATION = "Should we deploy the payment change on Friday?"

BAD = [
    "Friday deploy of the search service broke checkout",
    "Friday deploy of the billing job caused a weekend outage",
    "Friday deploy of the payment API failed and paged on-call",
    "Friday deploy of the mobile backend dropped push notifications",
]
GOOD = [
    "Friday deploy of the docs site went smoothly",
    "Friday deploy of the login fix went fine",
    "Friday deploy of the admin panel shipped without a hitch",
    "Friday deploy of the search tweak was uneventful",
    "Friday deploy of the billing copy change went fine",
]


def confidence(n: int, m: int) -> float:
    """A side's confidence with n outcomes for it and m against (see the module docstring)."""
    return round(round(n / (n + 1) + 0.5 * n / (n * 4), 6) * n / (n + m), 6)


class Store:
    def __init__(self, tmp_path):
        self.root = make_store(tmp_path / "store")

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        return cli("--store", str(self.root), *argv)

    def ok(self, *argv: str) -> str:
        rc, out, err = self(*argv)
        assert rc == 0, (argv, out, err)
        return out

    def json(self, *argv: str):
        return json.loads(self.ok(*argv, "--json"))

    def outcome(self, text: str, outcome: str, now: str) -> str:
        return self.ok("remember", text, "--subject", SUBJECT, "--outcome", outcome, "--now", now).strip()

    def distill(self, now: str) -> tuple[list[dict], str]:
        """The events the run appended (from the log) and its stderr."""
        before = self.events()
        rc, _, err = self("distill", "--now", now)
        assert rc == 0, err
        return self.events()[len(before):], err

    def events(self) -> list[dict]:
        return [json.loads(line) for f in sorted((self.root / "log").glob("*.jsonl"))
                for line in f.read_text().splitlines() if line.strip()]

    def record(self, mid: str, now: str) -> dict:
        return self.json("show", mid, "--now", now)["memory"]

    def conflicts(self, now: str, *flags: str) -> list[dict]:
        return self.json("conflicts", *flags, "--now", now)["conflicts"]


def ops(events: list[dict]) -> list[tuple]:
    """Each event as (op, the record it concerns): enough to read what a run decided."""
    out = []
    for e in events:
        if e["op"] == "policy":
            out.append(("policy", e["memory"]["id"]))
        elif e["op"] in ("supersede", "conflict"):
            out.append((e["op"], e["old"], e["new"]))
        else:
            out.append((e["op"], e.get("id")))
    return out


def seed(store: Store, negatives: int, positives: int, month: str = "2026-03") -> tuple[list[str], list[str]]:
    """negatives then positives, one a day from the 1st of the month at 18:00."""
    neg = [store.outcome(BAD[i], "negative", f"{month}-{i + 1:02d}T18:00:00Z") for i in range(negatives)]
    pos = [store.outcome(GOOD[i], "positive", f"{month}-{negatives + i + 1:02d}T18:00:00Z") for i in range(positives)]
    return neg, pos


def test_the_friday_example_end_to_end(tmp_path):
    s = Store(tmp_path)
    neg = [s.outcome(BAD[0], "negative", "2026-03-06T18:00:00Z"),
           s.outcome(BAD[1], "negative", "2026-03-13T18:00:00Z")]

    # Two negative outcomes: a mitigate policy, nothing against it yet.
    events, err = s.distill("2026-03-15T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE)]
    assert err == "distill: 1 policy appended (seq 3-3)\n"
    assert events[0]["memory"]["derived_from"] == neg and events[0]["memory"]["against"] == []
    assert events[0]["memory"]["confidence"] == confidence(2, 0) == 0.791667

    # Two positive ones later: both policies stand, in an open conflict (not the newest winning).
    pos = [s.outcome(GOOD[0], "positive", "2026-03-20T18:00:00Z"),
           s.outcome(GOOD[1], "positive", "2026-03-27T18:00:00Z")]
    events, _ = s.distill("2026-03-29T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("conflict", MITIGATE, REINFORCE)]
    assert events[2]["rule"] == "evidence"
    assert events[2]["detail"] == "evidence: 2 negative vs 2 positive outcomes"
    assert [s.record(p, "2026-03-29T09:00:00Z")["status"] for p in (MITIGATE, REINFORCE)] == ["active", "active"]
    (open_,) = s.conflicts("2026-03-29T09:00:00Z")
    assert (open_["rule"], open_["state"], open_["old"], open_["new"]) == ("evidence", "open", MITIGATE, REINFORCE)
    assert open_["id"] == events[2]["id"]
    rc, out, _ = s("conflicts", "--now", "2026-03-29T09:00:00Z")
    assert rc == 0
    assert out.splitlines()[0] == (f"{open_['id']}  evidence (evidence: 2 negative vs 2 positive outcomes)  "
                                   "detected 2026-03-29T09:00:00Z  open")

    # judge shows both, with the counts and the ids on both sides.
    result = s.json("judge", SITUATION, "--now", "2026-03-29T10:00:00Z")
    assert result["applies"] is True
    shown = {p["direction"]: p for p in result["policies"]}
    assert sorted(shown) == ["mitigate", "reinforce"]
    for direction, mine, theirs in (("mitigate", neg, pos), ("reinforce", pos, neg)):
        p = shown[direction]
        assert p["counts"] == {"supporting": 2, "against": 2}
        assert [e["id"] for e in p["evidence"]] == mine and [e["id"] for e in p["against"]] == theirs
        assert p["confidence"] == round(confidence(2, 2), 4) == 0.3958
    rc, out, _ = s("judge", SITUATION, "--now", "2026-03-29T10:00:00Z")
    assert rc == 0
    assert out.count("   evidence: 2 for, 2 against\n") == 2
    for mid in neg + pos:
        assert out.count(f"   + {mid} ") == 1 and out.count(f"   - {mid} ") == 1

    # A third negative: three against two keeps the mitigate policy; the reinforce one is superseded.
    neg.append(s.outcome(BAD[2], "negative", "2026-04-03T18:00:00Z"))
    events, err = s.distill("2026-04-05T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("supersede", REINFORCE, MITIGATE)]
    assert events[2]["reason"] == "evidence: 3 negative vs 2 positive outcomes"
    assert err == "distill: 2 policy, 1 supersede appended (seq 10-12)\n"
    reinforce = s.record(REINFORCE, "2026-04-05T09:00:00Z")
    assert (reinforce["status"], reinforce["superseded_by"], reinforce["invalid_at"]) == (
        "superseded", MITIGATE, "2026-04-05T09:00:00Z")

    result = s.json("judge", SITUATION, "--now", "2026-04-05T10:00:00Z")
    (first,) = result["policies"]  # the superseded side no longer applies
    assert (first["id"], first["direction"]) == (MITIGATE, "mitigate")
    assert first["counts"] == {"supporting": 3, "against": 2}
    assert [e["id"] for e in first["evidence"]] == neg and [e["id"] for e in first["against"]] == pos
    assert first["confidence"] == round(confidence(3, 2), 4) == 0.525
    assert first["rule"] == f"Avoid: {SUBJECT}: {BAD[0]} (3 negative outcomes, 2 positive)"
    rc, out, _ = s("judge", SITUATION, "--now", "2026-04-05T10:00:00Z")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == f"1. [mitigate] Avoid: {SUBJECT}: {BAD[0]} (3 negative outcomes, 2 positive)"
    assert lines[2] == "   evidence: 3 for, 2 against"
    assert [ln.split()[1] for ln in lines[3:]] == neg + pos
    assert [ln.split()[0] for ln in lines[3:]] == ["+"] * 3 + ["-"] * 2

    # The evidence conflict is settled: listed under --all, no longer open.
    assert s.conflicts("2026-04-05T10:00:00Z") == []
    (settled,) = s.conflicts("2026-04-05T10:00:00Z", "--all")
    assert (settled["id"], settled["rule"], settled["state"]) == (open_["id"], "evidence", "superseded")
    assert settled["records"]["new"]["status"] == "superseded"
    assert settled["records"]["old"]["status"] == "active"


def test_a_new_majority_brings_back_a_superseded_policy(tmp_path):
    s = Store(tmp_path)
    neg, pos = seed(s, 3, 2)
    events, _ = s.distill("2026-03-08T09:00:00Z")
    assert ops(events)[-1] == ("supersede", REINFORCE, MITIGATE)

    pos += [s.outcome(GOOD[i], "positive", f"2026-03-{i + 6:02d}T18:00:00Z") for i in (2, 3, 4)]
    events, _ = s.distill("2026-03-15T09:00:00Z")  # 3 against 5: 0.625 >= policy_majority
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("reinstate", REINFORCE),
                           ("supersede", MITIGATE, REINFORCE)]
    assert events[2]["reason"] == events[3]["reason"] == "evidence: 3 negative vs 5 positive outcomes"

    reinforce = s.record(REINFORCE, "2026-03-15T09:00:00Z")
    assert (reinforce["status"], reinforce["superseded_by"], reinforce["invalid_at"]) == ("active", None, None)
    assert reinforce["derived_from"] == pos and reinforce["against"] == neg
    assert reinforce["confidence"] == confidence(5, 3)
    mitigate = s.record(MITIGATE, "2026-03-15T09:00:00Z")
    assert (mitigate["status"], mitigate["superseded_by"]) == ("superseded", REINFORCE)
    assert mitigate["confidence"] == confidence(3, 5)

    (only,) = s.json("judge", SITUATION, "--now", "2026-03-15T10:00:00Z")["policies"]
    assert (only["id"], only["counts"]) == (REINFORCE, {"supporting": 5, "against": 3})


def test_near_balanced_evidence_is_a_conflict_not_the_newest_winning(tmp_path):
    s = Store(tmp_path)
    seed(s, 2, 2)
    events, _ = s.distill("2026-03-05T09:00:00Z")  # both created in one run: a conflict, no supersede
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("conflict", MITIGATE, REINFORCE)]
    # 3 against 3 later: still contested, the open conflict is not duplicated.
    s.outcome(BAD[2], "negative", "2026-03-06T18:00:00Z")
    s.outcome(GOOD[2], "positive", "2026-03-07T18:00:00Z")
    events, _ = s.distill("2026-03-08T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE)]
    assert len(s.conflicts("2026-03-08T09:00:00Z")) == 1


def test_a_persons_resolution_holds_until_new_outcomes(tmp_path):
    s = Store(tmp_path)
    neg, pos = seed(s, 2, 2)
    s.distill("2026-03-05T09:00:00Z")
    (c,) = s.conflicts("2026-03-05T09:00:00Z")
    rc, out, err = s("conflicts", "resolve", c["id"], "--keep", "old", "--now", "2026-03-06T09:00:00Z")
    assert (rc, out) == (0, c["id"] + "\n"), err
    assert s.record(REINFORCE, "2026-03-06T09:00:00Z")["status"] == "superseded"

    # No new outcome: the balance is not reopened, whatever the later --now.
    events, err = s.distill("2026-03-20T09:00:00Z")
    assert events == [], ops(events)
    assert err == "distill: nothing to do at 2026-03-20T09:00:00Z\n"
    assert s.conflicts("2026-03-20T09:00:00Z") == []
    assert s.record(MITIGATE, "2026-03-20T09:00:00Z")["status"] == "active"
    assert s.record(REINFORCE, "2026-03-20T09:00:00Z")["status"] == "superseded"

    # A new outcome reopens it: 2 against 3 is a majority for the side the person set aside.
    pos.append(s.outcome(GOOD[2], "positive", "2026-03-21T18:00:00Z"))
    events, _ = s.distill("2026-03-22T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("reinstate", REINFORCE),
                           ("supersede", MITIGATE, REINFORCE)]
    assert s.record(REINFORCE, "2026-03-22T09:00:00Z")["status"] == "active"


def test_keep_both_holds_until_new_outcomes(tmp_path):
    s = Store(tmp_path)
    seed(s, 2, 2)
    s.distill("2026-03-05T09:00:00Z")
    (c,) = s.conflicts("2026-03-05T09:00:00Z")
    s.ok("conflicts", "resolve", c["id"], "--keep", "both", "--now", "2026-03-06T09:00:00Z")
    events, err = s.distill("2026-03-20T09:00:00Z")
    assert (events, err) == ([], "distill: nothing to do at 2026-03-20T09:00:00Z\n")
    # Still balanced with new outcomes (3:3): both stand, and the pair a person reconciled is not flagged again.
    s.outcome(BAD[2], "negative", "2026-03-21T18:00:00Z")
    s.outcome(GOOD[2], "positive", "2026-03-22T18:00:00Z")
    events, _ = s.distill("2026-03-23T09:00:00Z")
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE)]
    assert s.conflicts("2026-03-23T09:00:00Z") == []


def test_a_resolution_then_balanced_new_outcomes_open_a_new_conflict(tmp_path):
    s = Store(tmp_path)
    seed(s, 2, 2)
    s.distill("2026-03-05T09:00:00Z")
    (c,) = s.conflicts("2026-03-05T09:00:00Z")
    s.ok("conflicts", "resolve", c["id"], "--keep", "new", "--now", "2026-03-06T09:00:00Z")
    assert s.record(MITIGATE, "2026-03-06T09:00:00Z")["status"] == "superseded"
    s.outcome(BAD[2], "negative", "2026-03-07T18:00:00Z")
    s.outcome(GOOD[2], "positive", "2026-03-08T18:00:00Z")
    events, _ = s.distill("2026-03-09T09:00:00Z")  # 3 against 3: both stand again, for a person
    assert ops(events) == [("policy", MITIGATE), ("policy", REINFORCE), ("reinstate", MITIGATE),
                           ("conflict", MITIGATE, REINFORCE)]
    (again,) = s.conflicts("2026-03-09T09:00:00Z")
    assert again["id"] != c["id"] and again["detail"] == "evidence: 3 negative vs 3 positive outcomes"


@pytest.mark.parametrize("forgotten", ["superseded side", "standing side"])
def test_a_policy_a_person_forgot_is_never_revived_by_evidence(tmp_path, forgotten):
    s = Store(tmp_path)
    seed(s, 3, 2)
    s.distill("2026-03-08T09:00:00Z")  # mitigate stands, reinforce superseded
    gone = REINFORCE if forgotten == "superseded side" else MITIGATE
    s.ok("forget", gone, "--reason", "not how we work", "--now", "2026-03-09T09:00:00Z")
    # Evidence that would favour the forgotten side: five positives (3:7) or two negatives (5:2).
    if gone == REINFORCE:
        for i in range(5):
            s.outcome(f"Friday deploy {i} of the status page went fine", "positive", f"2026-03-{i + 10:02d}T18:00:00Z")
    else:
        for i in range(2):
            s.outcome(f"Friday deploy {i} of the status page broke it", "negative", f"2026-03-{i + 10:02d}T18:00:00Z")
    events, _ = s.distill("2026-03-20T09:00:00Z")
    assert all(e.get("id") != gone and e.get("memory", {}).get("id") != gone for e in events), ops(events)
    assert "reinstate" not in [e["op"] for e in events]
    record = s.record(gone, "2026-03-20T09:00:00Z")
    assert (record["status"], record["reason"]) == ("invalidated", "not how we work")
    rc, out, _ = s("judge", SITUATION, "--now", "2026-03-20T10:00:00Z", "--json")
    assert gone not in [p["id"] for p in json.loads(out)["policies"]]
    # Forgotten the standing side, what is left is the superseded one: nothing applies (exit 3).
    assert rc == (0 if gone == REINFORCE else 3)


def test_distill_twice_at_the_same_now_appends_nothing(tmp_path):
    s = Store(tmp_path)
    seed(s, 3, 2)
    first, _ = s.distill("2026-03-08T09:00:00Z")
    assert first
    log = (s.root / "log" / "2026-03.jsonl").read_bytes()
    rc, out, err = s("distill", "--now", "2026-03-08T09:00:00Z")
    assert (rc, out, err) == (0, "", "distill: nothing to do at 2026-03-08T09:00:00Z\n")
    assert (s.root / "log" / "2026-03.jsonl").read_bytes() == log
