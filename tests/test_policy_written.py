"""Policies written directly and confidence that means something,
through the CLI: `memstore policy add|list|retire`, `remember --kind policy` refused, a
written policy in judge, the preamble and stats; a re-mention raising confidence by a step
that depends on the source, and a person's resolution making the kept belief certain."""

from __future__ import annotations

import json

from reliability_support import cli, digest, make_store

from memstore.policies import DIRECTION_WORDS, written_id

T = "2026-03-01T10:00:00Z"
LATER = "2026-03-02T10:00:00Z"
RULE = "Never deploy the payment service on Fridays"


def _add(store, *extra: str, rule: str = RULE, now: str = T) -> tuple[int, str, str]:
    return cli("--store", store, "policy", "add", rule, "--now", now, *extra)


def test_a_written_policy_is_used_like_a_learned_one(tmp_path):
    store = make_store(tmp_path / "s")
    rc, out, err = _add(store, "--direction", "avoid", "--author", "maria", "--subject", "payments",
                        "--domain", "eng")
    pid = written_id(RULE, "mitigate", "payments", "eng")
    assert (rc, out, err) == (0, pid + "\n", "")
    rc, out, err = _add(store, "--direction", "avoid", "--author", "maria", "--subject", "payments",
                        "--domain", "eng")
    assert (rc, out, err) == (0, pid + "\n", "this policy was written already\n")
    listed = json.loads(cli("--store", store, "policy", "list", "--json", "--now", LATER)[1])
    assert listed["policies"] == [{"id": pid, "rule": RULE, "direction": "mitigate", "status": "active",
                                   "confidence": 1.0, "domain": "eng", "subject": "payments",
                                   "author": "maria", "supporting": 0, "against": 0}]
    rc, out, err = cli("--store", store, "judge", "Can we deploy the payment service this Friday?",
                       "--now", LATER)
    assert rc == 0, err
    assert out.splitlines()[0] == f"1. [mitigate] {RULE}"
    assert "   written by maria" in out.splitlines()
    judged = json.loads(cli("--store", store, "judge", "payment service deploy on Friday", "--json",
                            "--now", LATER)[1])
    (p,) = judged["policies"]
    assert (p["id"], p["author"], p["counts"], p["evidence"], p["against"]) == (pid, "maria",
                                                                             {"supporting": 0, "against": 0}, [], [])
    preamble = cli("--store", store, "recall", "what should we know before a payment deploy on Friday?",
                   "--format", "preamble", "--now", LATER)[1]
    assert f'- [eng] "{RULE}" (confidence 1.00)' in preamble.splitlines()
    stats = json.loads(cli("--store", store, "stats", "--json", "--now", LATER)[1])
    assert stats["active_policies"] == 1


def test_an_agent_proposal_starts_at_the_agents_confidence(tmp_path):
    store = make_store(tmp_path / "s")
    rc, out, _ = _add(store, "--direction", "repeat", "--author", "review-bot", "--source", "agent",
                      rule="Pair on every schema migration")
    assert rc == 0
    listed = json.loads(cli("--store", store, "policy", "list", "--json", "--now", LATER)[1])
    assert [(p["direction"], p["confidence"], p["author"]) for p in listed["policies"]] == [
        ("reinforce", 0.7, "review-bot")]
    assert DIRECTION_WORDS["repeat"] == "reinforce"


def test_retired_by_a_person_and_never_back(tmp_path):
    store = make_store(tmp_path / "s")
    pid = _add(store, "--direction", "avoid", "--author", "maria")[1].strip()
    rc, out, err = cli("--store", store, "policy", "retire", pid, "--reason", "canary deploys now", "--now", LATER)
    assert (rc, out, err) == (0, pid + "\n", "")
    assert json.loads(cli("--store", store, "policy", "list", "--json", "--now", LATER)[1])["policies"] == []
    everything = json.loads(cli("--store", store, "policy", "list", "--all", "--json", "--now", LATER)[1])
    assert [(p["id"], p["status"]) for p in everything["policies"]] == [(pid, "invalidated")]
    rc, out, err = cli("--store", store, "judge", "Can we deploy the payment service on Friday?", "--now", LATER)
    assert (rc, out, err) == (3, "", "no learned policy applies to this situation\n")
    before = digest(store)
    rc, out, err = _add(store, "--direction", "avoid", "--author", "maria", now=LATER)
    assert rc == 2 and out == ""
    assert err == (f"Error: policy {pid} was retired at {LATER}; a retired policy stays retired "
                   "(write the rule in other words to record it again)\n")
    assert digest(store) == before


def test_what_a_policy_needs_is_an_error_not_an_inert_record(tmp_path):
    store = make_store(tmp_path / "s")
    before = digest(store)
    rc, out, err = cli("--store", store, "remember", "Deploys on Fridays are risky", "--kind", "policy", "--now", T)
    assert (rc, out) == (2, "")
    assert err == ("Error: a policy needs a rule, a direction and an author, which remember does not take: "
                   "use memstore policy add RULE --direction avoid|repeat --author NAME\n")
    rc, out, err = _add(store, "--direction", "sideways", "--author", "maria")
    assert (rc, err) == (2, "Error: --direction 'sideways' is not one of: avoid, repeat (or mitigate, reinforce)\n")
    rc, out, err = _add(store, "--author", "maria")
    assert (rc, err) == (2, 'Error: policy add needs a rule, --direction avoid|repeat and --author NAME (or --agent): '
                            'memstore policy add "RULE" --direction avoid --author NAME\n')
    rc, out, err = cli("--store", store, "policy", "retire", "m0000000000000000", "--now", T)
    assert (rc, err) == (1, "Error: no policy with id 'm0000000000000000'; list them with `memstore policy list`\n")
    rc, out, err = cli("--store", store, "policy", "--now", T)
    assert rc == 2 and err.startswith("Error: ")
    assert digest(store) == before


def test_a_written_and_a_learned_policy_pointing_opposite_ways_ask_a_person(tmp_path):
    store = make_store(tmp_path / "s")
    for day, text in ((2, "Friday deploy of the docs site went smoothly"), (9, "Friday deploy of the login fix went fine")):
        cli("--store", store, "remember", text, "--subject", "friday deploys", "--outcome", "positive",
            "--now", f"2026-03-0{day}T18:00:00Z")
    assert cli("--store", store, "distill", "--now", "2026-03-10T04:00:00Z")[0] == 0
    pid = _add(store, "--direction", "avoid", "--author", "maria", "--subject", "friday deploys",
               now="2026-03-10T09:00:00Z", rule="No deploys on Fridays")[1].strip()
    rc, out, err = cli("--store", store, "distill", "--now", "2026-03-11T04:00:00Z")
    assert rc == 0
    conflicts = json.loads(cli("--store", store, "conflicts", "--json", "--now", "2026-03-11T05:00:00Z")[1])
    assert [(c["rule"], c["state"], c["new"]) for c in conflicts["conflicts"]] == [("direction", "open", pid)]
    listed = json.loads(cli("--store", store, "policy", "list", "--json", "--now", "2026-03-11T05:00:00Z")[1])
    assert {p["status"] for p in listed["policies"]} == {"active"}  # neither wins by being newer


# --- confidence ----------------------------------------------------------------------------------

def _confidence(store, mid: str) -> float:
    return json.loads(cli("--store", store, "show", mid, "--json", "--now", "2026-04-01T00:00:00Z")[1])["memory"]["confidence"]


def test_a_re_mention_raises_confidence_by_a_step_that_depends_on_the_source(tmp_path):
    store = make_store(tmp_path / "s")
    text = "The build cache lives on the NFS share"
    seen = []
    for day in (1, 2, 3):
        mid = cli("--store", store, "remember", text, "--source", "agent", "--now", f"2026-03-0{day}T10:00:00Z")[1].strip()
        seen.append(_confidence(store, mid))
    # 0.7, then 0.7 + 0.3 * 0.7 * 0.3, then the same step again (confidence.reinforce_step 0.3)
    assert seen == [0.7, 0.763, 0.8128]
    tool = cli("--store", store, "remember", "Disk usage on build-01 is 61%", "--source", "tool",
               "--now", "2026-03-04T10:00:00Z")[1].strip()
    cli("--store", store, "remember", "Disk usage on build-01 is 61%", "--source", "tool", "--now", "2026-03-05T10:00:00Z")
    assert _confidence(store, tool) == 0.575  # 0.5 + 0.3 * 0.5 * 0.5: a tool's word counts for less


def test_a_persons_resolution_makes_the_kept_belief_certain(tmp_path):
    store = make_store(tmp_path / "s", config='[embedder]\nname = "hashing"\n[conflicts]\nauto_supersede = false\n')
    old = cli("--store", store, "remember", "I am vegetarian", "--source", "agent", "--now", T)[1].strip()
    new = cli("--store", store, "remember", "Actually I am not vegetarian anymore, I eat fish now", "--source", "agent",
              "--now", "2026-03-20T10:00:00Z")[1].strip()
    assert cli("--store", store, "consolidate", "--now", "2026-03-21T03:00:00Z")[0] == 0
    (c,) = json.loads(cli("--store", store, "conflicts", "--json", "--now", "2026-03-21T04:00:00Z")[1])["conflicts"]
    assert (c["old"], c["new"], c["rule"]) == (old, new, "negation")
    assert cli("--store", store, "conflicts", "resolve", c["id"], "--keep", "new", "--now", "2026-03-21T09:00:00Z")[0] == 0
    assert _confidence(store, new) == 1.0
    gone = json.loads(cli("--store", store, "show", old, "--json", "--now", "2026-04-01T00:00:00Z")[1])["memory"]
    assert (gone["status"], gone["superseded_by"], gone["confidence"]) == ("superseded", new, 0.7)
