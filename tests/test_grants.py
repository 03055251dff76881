"""Access grants: the lookup order of a grant row, the [agents] and
[grants] tables of memstore.toml, and `none` holding on every surface an agent reads
through: recall (every format, --batch, the graph voice), the preamble, judge, show,
export, log, conflicts, brief, forget and the server's tools; with a property test over
random grant tables and stores."""

from __future__ import annotations

import json
import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from reliability_support import HASHING, cli, make_store

from memstore import tools
from memstore.access import Access, access_for
from memstore.config import load_config
from memstore.resident import Resident

T0 = "2026-06-01T09:00:00Z"
NOW = "2026-06-05T00:00:00Z"
GRANTS = HASHING + '[agents]\nbob = "intern"\n\n[grants.intern]\nhr = "none"\n'


def _config(text: str):
    return load_config(text)


# --------------------------------------------------------------------------- lookup order

LOOKUP = """
[grants.intern]
"repo:web/hr" = "read"
hr = "none"
"*" = "write"

[grants.temp]
eng = "read"

[grants."*"]
ops = "none"
eng = "write"
"*" = "read"
"""


@pytest.mark.parametrize(("role", "domain", "level"), [
    ("intern", "repo:web/hr", "read"),  # the exact row first
    ("intern", "repo:api/hr", "none"),  # then the repo domain's workspace name
    ("intern", "hr", "none"),
    ("intern", "ops", "write"),  # then the role's own "*", before any row of the role "*"
    ("intern", None, "write"),  # no domain: only "*" rows apply
    ("temp", "eng", "read"),  # the role's exact row beats the "*" role's
    ("temp", "repo:web/eng", "read"),
    ("temp", "ops", "none"),  # no row of its own: the "*" role's exact row
    ("temp", "repo:x/ops", "none"),
    ("temp", "hr", "read"),  # then the "*" role's "*"
    ("temp", "repo:web", "read"),  # a repo without a domain name
    ("nobody", "eng", "write"),
    ("nobody", "hr", "read"),
])
def test_a_grant_row_is_looked_up_most_specific_first(role, domain, level):
    config = _config(LOOKUP + f'\n[agents]\nagent-1 = "{role}"\n')
    access = access_for(config, "agent-1")
    assert (access.agent, access.role) == ("agent-1", role)
    assert access.level(domain) == level
    assert access.can_read(domain) is (level != "none")
    assert access.can_write_policy(domain) is (level == "write")


def test_without_a_row_reads_are_open_and_policies_allowed():
    access = access_for(_config('[grants.other]\nhr = "none"\n'), "bob")
    assert access.role == "bob"  # an agent not in [agents] has its own name as role
    assert [access.level(d) for d in ("hr", "repo:web/hr", None)] == [None, None, None]
    assert access.can_read("hr") and access.can_write_policy("hr")
    assert access_for(_config(""), None) is None  # no agent: the owner, no grants apply
    named = access_for(_config('[grants.bob]\nhr = "none"\n'), "bob")
    assert not named.can_read("repo:web/hr") and named.can_read("eng")
    assert Access("x", "x").level("hr") is None


def test_read_refuses_a_policy_and_none_refuses_both():
    access = access_for(_config('[grants.bob]\nhr = "read"\neng = "none"\nops = "write"\n'), "bob")
    assert (access.can_read("hr"), access.can_write_policy("hr")) == (True, False)
    assert (access.can_read("eng"), access.can_write_policy("eng")) == (False, False)
    assert (access.can_read("ops"), access.can_write_policy("ops")) == (True, True)


# --------------------------------------------------------------------------- the tables

BAD_TABLES = [
    ('[agents]\n"a b" = "x"\n',
     "memstore.toml: [agents] name 'a b' is not an agent name; use up to 64 letters, digits and "
     ". _ @ : + - (e.g. --agent reviewer-bot)"),
    ('[agents]\n"bob\\n" = "x"\n',
     "memstore.toml: [agents] name 'bob\\n' is not an agent name; use up to 64 letters, digits and "
     ". _ @ : + - (e.g. --agent reviewer-bot)"),
    ('[agents]\n"*" = "x"\n',
     "memstore.toml: [agents] name '*' is not an agent name; use up to 64 letters, digits and "
     ". _ @ : + - (e.g. --agent reviewer-bot)"),
    ('[agents]\nbob = 3\n', "memstore.toml: agents.bob 3 must be a role name (letters, digits, . _ @ : + -)"),
    ('[agents]\nbob = "a b"\n',
     "memstore.toml: agents.bob 'a b' must be a role name (letters, digits, . _ @ : + -)"),
    ('[agents]\nbob = "intern\\n"\n',
     "memstore.toml: agents.bob 'intern\\n' must be a role name (letters, digits, . _ @ : + -)"),
    ("agents = 3\n", 'memstore.toml: [agents] must be a table of NAME = "role"'),
    ("grants = 3\n",
     'memstore.toml: [grants] must hold tables [grants.ROLE] of DOMAIN = "none"|"read"|"write"'),
    ("[grants]\nintern = 3\n",
     'memstore.toml: grants.intern must be a table of DOMAIN = "none"|"read"|"write"'),
    ('[grants."a b"]\nhr = "none"\n', "memstore.toml: grants.'a b' is not a role name"),
    ('[grants.intern]\nhr = "maybe"\n',
     "memstore.toml: grants.intern.hr 'maybe' is not one of: none, read, write"),
    ('[grants.intern]\nhr = 1\n', "memstore.toml: grants.intern.hr 1 is not one of: none, read, write"),
    ('[grants.intern]\n"" = "none"\n', "memstore.toml: grants.intern has an empty or control-character domain"),
    ('[grants.intern]\n" " = "none"\n', "memstore.toml: grants.intern has an empty or control-character domain"),
    ('[grants.intern]\n"a\\u0001" = "none"\n',
     "memstore.toml: grants.intern has an empty or control-character domain"),
]


@pytest.mark.parametrize(("toml", "message"), BAD_TABLES)
def test_a_bad_agents_or_grants_table_is_a_usage_error(tmp_path, toml, message):
    store = make_store(tmp_path / "s", toml + HASHING)
    assert cli("--store", store, "config") == (2, "", f"Error: {message}\n")


def test_config_prints_the_tables_back_as_toml(tmp_path):
    tables = ('[agents]\nbob = "intern"\n"carol.x" = "lead"\n\n[grants.intern]\nhr = "none"\n'
              '"repo:web/hr" = "read"\n"*" = "read"\n\n[grants."*"]\neng = "write"\n')
    store = make_store(tmp_path / "s", HASHING + tables)
    rc, out, err = cli("--store", store, "config")
    assert (rc, err) == (0, "")
    tail = out[out.index("[agents]\n"):]
    assert tail == ('[agents]\nbob = "intern"\n"carol.x" = "lead"\n\n[grants]\n\n[grants.intern]\nhr = "none"\n'
                    '"repo:web/hr" = "read"\n"*" = "read"\n\n[grants."*"]\neng = "write"\n')
    parsed = tomllib.loads(out)
    assert parsed["agents"] == {"bob": "intern", "carol.x": "lead"}
    assert parsed["grants"] == {"intern": {"hr": "none", "repo:web/hr": "read", "*": "read"},
                                "*": {"eng": "write"}}
    # what it prints is a memstore.toml that gives the same configuration
    again = make_store(tmp_path / "again", out)
    assert cli("--store", again, "config") == (0, out, "")


def test_config_output_with_a_del_character_in_a_domain_is_valid_toml(tmp_path):
    store = make_store(tmp_path / "s", HASHING + '[grants.intern]\n"a\\u007f" = "none"\n')
    rc, out, _ = cli("--store", store, "config")
    assert rc == 0
    assert tomllib.loads(out)["grants"] == {"intern": {"a\x7f": "none"}}


# --------------------------------------------------------------------------- every surface

H_FACT = "Payroll salary bands for engineers are confidential"
H_FACT2 = "Payroll salary bands for engineers are not confidential"
H_CASE = "Payroll export failed after the friday deploy"
H_RULE = "Never email salary data"
R_FACT = "Payroll page of the web app lists salary bands"
E_FACT = "Payroll runs on the billing cluster every Friday"
BULK = [
    {"text": E_FACT, "domain": "eng", "kind": "fact", "subject": "payroll-cluster", "actors": ["dana"]},
    {"text": R_FACT, "domain": "repo:web/hr", "kind": "fact"},
    {"text": "Payroll questions go to the finance channel", "kind": "note"},
    {"text": H_CASE, "domain": "hr", "kind": "incident", "subject": "friday-deploy", "outcome": "negative"},
    {"text": "Payroll deploy broke on friday again", "domain": "eng", "kind": "incident",
     "subject": "friday-deploy", "outcome": "negative"},
    {"text": "Payroll friday deploy failed once more", "domain": "eng", "kind": "incident",
     "subject": "friday-deploy", "outcome": "negative"},
]


def _ok(*argv: str, stdin: bytes = b"") -> str:
    rc, out, err = cli(*argv, stdin=stdin)
    assert rc == 0, (argv, err)
    return out


def _ids(store: Path) -> dict[str, str]:
    """text -> id of every record (the owner's export)."""
    return {r["text"]: r["id"] for r in map(json.loads, _ok("--store", store, "export").splitlines())}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """One store for the surface tests (each test works on a copy): hr (two agents' contradicting
    facts sharing the actor dana with an eng fact; an outcome; a written policy), eng (two agents'
    contradicting facts, a policy learned from two outcomes whose evidence a crafted log extends
    with the hr outcome), repo:web/hr, and no domain. The role intern has hr = "none"."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MEMSTORE_AGENT", raising=False)
        mp.delenv("MEMSTORE_NOW", raising=False)
        src = make_store(tmp_path_factory.mktemp("grants") / "src", GRANTS)
        s = ("--store", str(src))
        bulk = "".join(json.dumps(r) + "\n" for r in BULK).encode()
        _ok(*s, "remember", "--jsonl", "-", "--now", T0, stdin=bulk)
        _ok(*s, "--agent", "a", "remember", H_FACT, "--domain", "hr", "--kind", "fact", "--subject",
            "salary-bands", "--actor", "dana", "--now", "2026-06-01T10:00:00Z")
        _ok(*s, "--agent", "b", "remember", H_FACT2, "--domain", "hr", "--kind", "fact", "--subject",
            "salary-bands", "--now", "2026-06-02T10:00:00Z")
        _ok(*s, "--agent", "a", "remember", "The payroll pipeline uses Jenkins", "--domain", "eng", "--kind",
            "fact", "--subject", "ci", "--now", "2026-06-02T11:00:00Z")
        _ok(*s, "--agent", "b", "remember", "The payroll pipeline does not use Jenkins", "--domain", "eng",
            "--kind", "fact", "--subject", "ci", "--now", "2026-06-03T11:00:00Z")
        _ok(*s, "policy", "add", H_RULE, "--domain", "hr", "--direction", "avoid", "--author", "maria",
            "--now", "2026-06-03T12:00:00Z")
        _ok(*s, "consolidate", "--now", "2026-06-04T00:00:00Z")
        _ok(*s, "distill", "--now", "2026-06-04T00:00:00Z")
        ids = _ids(src)
        # a log can link across domains (a hand-edited or imported one): the eng policy's evidence
        # names the hr outcome too, and the eng fact has a repo:web/hr fact against it; none must
        # still hold for their readers
        events = []
        for line in _ok(*s, "export", "--history").splitlines():
            ev = json.loads(line)
            if ev["op"] == "policy" and ev["memory"]["domain"] == "eng":
                ev["memory"]["derived_from"].insert(0, ids[H_CASE])
            if ev.get("memory", {}).get("text") == E_FACT:
                ev["memory"]["against"].append(ids[R_FACT])
            events.append(json.dumps(ev))
        store = make_store(src.parent / "store", GRANTS)
        _ok("--store", store, "import", "-", "--now", NOW, stdin=("\n".join(events) + "\n").encode())
        return store


@pytest.fixture
def gs(built, tmp_path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(built, store)
    return store


def _hidden(store: Path) -> tuple[set[str], set[str]]:
    """(ids, texts) of every record in hr or repo:web/hr."""
    rows = [json.loads(line) for line in _ok("--store", store, "export").splitlines()]
    hidden = [r for r in rows if r["domain"] in ("hr", "repo:web/hr")]
    return {r["id"] for r in hidden}, {r["text"] for r in hidden}


def _leaks(text: str, ids: set[str], texts: set[str]) -> list[str]:
    return sorted(x for x in ids | texts if x in text)


def test_the_fixture_has_what_the_surfaces_hide(gs):
    ids = _ids(gs)
    rows = {r["id"]: r for r in map(json.loads, _ok("--store", gs, "export").splitlines())}
    hidden_ids, hidden_texts = _hidden(gs)
    assert len(hidden_ids) == 5 and {H_FACT, H_FACT2, H_CASE, H_RULE, R_FACT} == hidden_texts
    policy = next(r for r in rows.values() if r["level"] == "policy" and r["domain"] == "eng")
    assert policy["derived_from"][0] == ids[H_CASE]
    assert rows[ids[E_FACT]]["against"] == [ids[R_FACT]]
    conflicts = json.loads(_ok("--store", gs, "conflicts", "--json", "--now", NOW))["conflicts"]
    assert sorted(rows[c["old"]]["domain"] for c in conflicts) == ["eng", "hr"]
    assert all(c["agents"] == {"old": "a", "new": "b"} for c in conflicts)


def _as(store: Path, agent: str | None, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    who = ("--agent", agent) if agent else ()
    return cli("--store", store, *who, *argv, stdin=stdin)


def _read(store: Path, agent: str | None, *argv: str, stdin: bytes = b"") -> str:
    rc, out, err = _as(store, agent, *argv, stdin=stdin)
    assert rc == 0, (argv, err)
    return out + err


def test_recall_in_every_format_and_voice_leaves_out_a_none_domain(gs):
    ids = _ids(gs)
    hidden, texts = _hidden(gs)
    for argv in (["payroll salary bands"], ["payroll salary bands", "--json"],
                 ["payroll salary bands for engineers", "--format", "preamble"],
                 ["payroll salary bands", "--json", "--explain", "--k", "20"],
                 ["payroll", "--domain", "hr", "--json"], ["salary bands", "--repo", "web", "--json"],
                 ["never email salary data", "--json", "--level", "policy"]):
        owner = _read(gs, None, "recall", *argv, "--no-touch", "--now", NOW)
        assert _leaks(owner, hidden, texts), argv  # the owner sees them: the query does reach them
        assert _leaks(_read(gs, "bob", "recall", *argv, "--no-touch", "--now", NOW), hidden, texts) == [], argv
    got = json.loads(_read(gs, "bob", "recall", "payroll salary bands", "--json", "--k", "20", "--now", NOW))
    assert {r["domain"] if "domain" in r else None for r in got["results"]} >= {None}
    assert ids[E_FACT] in [r["id"] for r in got["results"]]
    # the recall bob made is usage that names only what it saw
    (usage,) = [json.loads(x) for x in _read(gs, None, "log", "--json", "--op", "recall").splitlines()]
    assert usage["agent"] == "bob" and not set(usage["ids"]) & hidden


def test_the_graph_voice_does_not_reach_a_none_domain_through_a_shared_actor(gs):
    ids = _ids(gs)
    argv = ("recall", "billing cluster", "--voice", "lexical", "--voice", "semantic", "--voice", "graph",
            "--explain", "--k", "20", "--json", "--no-touch", "--now", NOW)
    owner = {r["id"]: r["explain"]["ranks"] for r in json.loads(_read(gs, None, *argv))["results"]}
    assert owner[ids[E_FACT]]["lexical"] == 1  # the seed
    assert owner[ids[H_FACT]]["graph"] == 1  # its neighbour by the actor dana, in hr
    bob = {r["id"]: r["explain"]["ranks"] for r in json.loads(_read(gs, "bob", *argv))["results"]}
    assert bob[ids[E_FACT]]["lexical"] == 1
    hidden, _ = _hidden(gs)
    assert not set(bob) & hidden


def test_recall_batch_leaves_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    batch = b"".join(json.dumps(q).encode() + b"\n" for q in (
        {"query": "payroll salary bands"}, {"query": "billing cluster", "voices": ["lexical", "semantic", "graph"]},
        {"query": "payroll", "domain": ["hr", "repo:web/hr"]}, {"query": "salary bands", "repo": "web"}))
    owner = _read(gs, None, "recall", "--batch", "-", "--now", NOW, stdin=batch)
    assert _leaks(owner, hidden, texts)
    bob = _read(gs, "bob", "recall", "--batch", "-", "--now", NOW, stdin=batch)
    answers = [json.loads(line) for line in bob.splitlines()]
    assert len(answers) == 4 and answers[2]["results"] == []
    assert _leaks(bob, hidden, texts) == []


def test_the_preamble_leaves_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    task = "payroll salary bands and the friday deploy"
    for argv in ((task,), (task, "--json"), (task, "--semantic"), (task, "--repo", "web", "--json")):
        assert _leaks(_read(gs, None, "preamble", *argv, "--now", NOW), hidden, texts)
        bob = _read(gs, "bob", "preamble", *argv, "--now", NOW)
        assert E_FACT in bob or "friday" in bob
        assert _leaks(bob, hidden, texts) == []
    policies = json.loads(_read(gs, "bob", "preamble", task, "--json", "--now", NOW))["policies"]
    assert [p["domain"] for p in policies] == ["eng"]


def test_judge_leaves_out_a_none_policy_and_a_none_case_from_evidence(gs):
    ids = _ids(gs)
    owner = json.loads(_read(gs, None, "judge", "email the salary data after a deploy on friday", "--json",
                             "--k", "10", "--now", NOW))
    assert {p["rule"] for p in owner["policies"]} >= {H_RULE}
    (eng,) = [p for p in owner["policies"] if p["domain"] == "eng"]
    assert ids[H_CASE] in [e["id"] for e in eng["evidence"]]
    for argv in (("--json",), (), ("--format", "preamble")):
        out = _read(gs, "bob", "judge", "email the salary data after a deploy on friday", *argv, "--k", "10",
                    "--now", NOW)
        hidden, texts = _hidden(gs)
        assert _leaks(out, hidden, texts) == [], argv
    bob = json.loads(_read(gs, "bob", "judge", "email the salary data after a deploy on friday", "--json",
                           "--k", "10", "--now", NOW))
    (eng,) = bob["policies"]
    assert eng["domain"] == "eng"
    assert [e["id"] for e in eng["evidence"]] == [ids["Payroll deploy broke on friday again"],
                                                 ids["Payroll friday deploy failed once more"]]


def test_judge_counts_only_the_evidence_the_agent_may_read(gs):
    bob = json.loads(_read(gs, "bob", "judge", "deploy on friday", "--json", "--now", NOW))
    (eng,) = bob["policies"]
    assert eng["counts"]["supporting"] == len(eng["evidence"]) == 2


def test_show_and_forget_treat_a_none_record_as_missing(gs):
    ids = _ids(gs)
    hidden, texts = _hidden(gs)
    before = sorted(p.read_bytes() for p in (gs / "log").glob("*.jsonl"))
    for ref in sorted(hidden):
        missing = f"Error: no memory with id or key {ref!r}; list ids with `memstore export` or `memstore log`\n"
        assert _as(gs, "bob", "show", ref, "--now", NOW) == (1, "", missing)
        assert _as(gs, "bob", "show", ref, "--json", "--now", NOW) == (1, "", missing)
        assert _as(gs, "bob", "forget", ref, "--now", NOW) == (1, "", missing)
        assert _as(gs, None, "show", ref, "--json", "--now", NOW)[0] == 0
    assert sorted(p.read_bytes() for p in (gs / "log").glob("*.jsonl")) == before
    for ref in set(ids.values()) - hidden:  # what bob may read names nothing it may not
        for argv in ((), ("--json",), ("--explain",)):
            out = _read(gs, "bob", "show", ref, *argv, "--now", NOW)
            assert _leaks(out, hidden, texts) == [], (ref, argv)


def test_export_leaves_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    for argv in ((), ("--format", "markdown"), ("--history",)):
        assert _leaks(_read(gs, None, "export", *argv, "--now", NOW), hidden, texts)
        assert _leaks(_read(gs, "bob", "export", *argv, "--now", NOW), hidden, texts) == [], argv
    rows = [json.loads(x) for x in _read(gs, "bob", "export", "--now", NOW).splitlines()]
    assert {r["domain"] for r in rows} == {None, "eng"}
    parquet = gs.parent / "bob.parquet"
    _read(gs, "bob", "export", "--format", "parquet", "--output", str(parquet), "--now", NOW)
    data = parquet.read_bytes()
    assert [x for x in sorted(hidden | texts) if x.encode() in data] == []


def test_log_leaves_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    for argv in ((), ("--json",), ("--op", "conflict", "--json")):
        assert _leaks(_read(gs, None, "log", *argv, "--now", NOW), hidden, texts)
        assert _leaks(_read(gs, "bob", "log", *argv, "--now", NOW), hidden, texts) == [], argv
    assert len(_read(gs, "bob", "log", "--op", "conflict", "--json").splitlines()) == 1


def test_conflicts_brief_and_harmonize_leave_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    seen = _ids(gs)["The payroll pipeline does not use Jenkins"]
    for argv in (("conflicts",), ("conflicts", "--json"), ("conflicts", "list", "--all", "--json"),
                 ("brief", "--no-write", "--json"), ("brief", "--no-write"), ("harmonize", "--json")):
        assert _leaks(_read(gs, None, *argv, "--now", NOW), hidden, texts), argv
        bob = _read(gs, "bob", *argv, "--now", NOW)
        assert seen in bob, argv
        assert _leaks(bob, hidden, texts) == [], argv
    (c,) = json.loads(_read(gs, "bob", "conflicts", "--json", "--now", NOW))["conflicts"]
    assert c["agents"] == {"old": "a", "new": "b"}
    hr = next(x for x in json.loads(_read(gs, None, "conflicts", "--json", "--now", NOW))["conflicts"]
              if x["id"] != c["id"])
    for keep in ("new", "dismiss"):
        rc, out, err = _as(gs, "bob", "conflicts", "resolve", hr["id"], "--keep", keep, "--now", NOW)
        assert (rc, out) == (1, "") and hr["id"] in err
    applied = json.loads(_read(gs, "bob", "harmonize", "--apply", "--json", "--now", NOW))
    assert [p["conflict"] for p in applied["proposals"]] == [c["id"]]
    assert [x["state"] for x in json.loads(_read(gs, None, "conflicts", "--json", "--now", NOW))["conflicts"]
            ] == ["open"]  # the hr one, which bob could not touch


def test_the_server_tools_leave_out_a_none_domain(gs, tmp_path):
    from memstore.errors import NotFound

    hidden, texts = _hidden(gs)
    resident = Resident(gs, cache_dir=tmp_path / "cache")

    def call(name, agent, **args):
        return json.dumps(tools.call(resident, name, args, now=NOW, agent=agent))

    reads = [("search_memory", {"query": "payroll salary bands", "mode": mode, "touch": False, "k": 20})
             for mode in ("keyword", "semantic", "hybrid")]
    reads += [("search_memory", {"query": "billing cluster", "touch": False, "k": 20}),
              ("search_memory", {"query": "salary bands", "repo": "web", "touch": False}),
              ("preamble", {"task": "payroll salary bands and the friday deploy"}),
              ("preamble", {"task": "payroll salary bands", "semantic": True, "repo": "web"}),
              ("judge", {"situation": "email the salary data after a deploy on friday", "k": 10}),
              ("list_conflicts", {"all": True}), ("harmonize", {})]
    for name, args in reads:
        assert _leaks(call(name, None, **args), hidden, texts), name
        assert _leaks(call(name, "bob", **args), hidden, texts) == [], (name, args)
    for ref in sorted(hidden):
        for name, args in (("forget", {"id": ref}), ("supersede_fact", {"id": ref, "content": "x y z"})):
            with pytest.raises(NotFound):
                tools.call(resident, name, args, now=NOW, agent="bob")
    conflict = next(c for c in json.loads(call("list_conflicts", None))["conflicts"] if c["old"] in hidden)
    with pytest.raises(NotFound, match=conflict["id"]):
        tools.call(resident, "resolve_conflict", {"id": conflict["id"], "keep": "old"}, now=NOW, agent="bob")
    assert [c["state"] for c in json.loads(call("list_conflicts", None))["conflicts"]
            if c["id"] == conflict["id"]] == ["open"]


def test_policy_list_leaves_out_a_none_domain(gs):
    hidden, texts = _hidden(gs)
    assert _leaks(_read(gs, "bob", "policy", "list", "--all", "--json", "--now", NOW), hidden, texts) == []


def test_policy_retire_treats_a_none_policy_as_missing(gs):
    ref = _ids(gs)[H_RULE]
    before = sorted(p.read_bytes() for p in (gs / "log").glob("*.jsonl"))
    assert _as(gs, "bob", "policy", "retire", ref, "--now", NOW)[0] == 1
    assert sorted(p.read_bytes() for p in (gs / "log").glob("*.jsonl")) == before


def test_consolidate_run_by_an_agent_reports_nothing_from_a_none_domain(gs):
    _read(gs, "bob", "remember", H_FACT + " again", "--domain", "hr", "--kind", "fact", "--subject",
          "salary-bands", "--now", NOW)
    hidden, texts = _hidden(gs)
    out = _read(gs, "bob", "consolidate", "--now", "2026-06-06T00:00:00Z")
    assert _leaks(out, hidden, texts) == []


# --------------------------------------------------------------------------- property

PROP_DOMAINS = ("hr", "eng", "repo:web/hr", "repo:web/eng", "repo:api", None)
ROW_DOMAINS = ("hr", "eng", "repo:web/hr", "repo:api", "*")
ROLES = ("r1", "r2", "*")
CHECKED = {"ag1": "r1", "r2": "r2", "zed": "zed"}  # agent -> role (ag1 through [agents])
TEXTS = tuple(f"The {svc} service {verb} {tech}." for svc in ("billing", "payroll")
              for verb in ("uses", "does not use") for tech in ("MySQL", "Redis"))
TEXTS += tuple(f"The {svc} deploy failed on {day}." for svc in ("billing", "payroll") for day in ("Friday", "Monday"))
QUERIES = ("billing service MySQL", "payroll deploy failed on Friday", "which service uses Redis")

tables = st.dictionaries(st.sampled_from(ROLES),
                         st.dictionaries(st.sampled_from(ROW_DOMAINS), st.sampled_from(("none", "read", "write")),
                                         min_size=1, max_size=3), max_size=3)
memories = st.lists(st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "domain": st.sampled_from(PROP_DOMAINS),
     "writer": st.sampled_from((None, "w1", "w2"))},
    optional={"subject": st.sampled_from(("billing", "deploys")), "kind": st.sampled_from(("fact", "incident")),
              "outcome": st.sampled_from(("negative", "positive")), "actors": st.just(["dana"])}),
    min_size=2, max_size=10)


def _ref_level(table: dict, role: str, domain: str | None) -> str | None:
    """The seed's lookup, written out again: the role's rows for the domain, for its
    workspace name, for "*"; then the same rows of the role "*"."""
    base = domain
    if domain and domain.startswith("repo:"):
        base = domain.partition("/")[2] or None
    for r in (role, "*"):
        for name in dict.fromkeys(n for n in (domain, base, "*") if n):
            if name in table.get(r, {}):
                return table[r][name]
    return None


def _toml(table: dict) -> str:
    lines = [HASHING, "[agents]", 'ag1 = "r1"', ""]
    for role, rows in table.items():
        lines.append(f'[grants."{role}"]')
        lines += [f'"{d}" = "{level}"' for d, level in rows.items()]
        lines.append("")
    return "\n".join(lines)


def _build(root: Path, table: dict, mems: list[dict]) -> Path:
    store = make_store(root, _toml(table))
    for n, writer in enumerate((None, "w1", "w2")):
        rows = [{k: v for k, v in m.items() if k != "writer" and v is not None}
                for m in mems if m["writer"] == writer]
        if rows:
            who = ("--agent", writer) if writer else ()
            body = "".join(json.dumps(r) + "\n" for r in rows).encode()
            _ok("--store", store, *who, "remember", "--jsonl", "-", "--now", f"2026-06-01T0{n}:00:00Z", stdin=body)
    _ok("--store", store, "consolidate", "--now", "2026-06-02T00:00:00Z")
    _ok("--store", store, "distill", "--now", "2026-06-02T00:00:00Z")
    return store


def _surfaces(store: Path, agent: str, resident: Resident, shown: list[str]) -> list[tuple[str, str]]:
    """(what, output) of every read an agent can make of the store."""
    s = ("--store", str(store), "--agent", agent)
    got = []

    def read(*argv: str, stdin: bytes = b"") -> None:
        rc, out, err = cli(*s, *argv, "--now", NOW, stdin=stdin)
        assert rc == 0 or (rc, argv[0]) == (3, "judge"), (argv, err)  # 3: no policy applies
        got.append((" ".join(argv), out + err))

    batch = "".join(json.dumps({"query": q, **v}) + "\n" for q in QUERIES
                    for v in ({}, {"voices": ["lexical", "semantic", "graph"]}, {"voices": ["temporal"]}))
    read("recall", "--batch", "-", stdin=batch.encode())
    read("recall", QUERIES[0], "--format", "preamble")
    read("recall", QUERIES[1], "--explain")
    read("preamble", QUERIES[1], "--json")
    read("preamble", QUERIES[0], "--semantic", "--repo", "web")
    read("judge", QUERIES[1], "--json", "--k", "20")
    for argv in ((), ("--history",), ("--format", "markdown")):
        read("export", *argv)
    read("log", "--json")
    read("log")
    read("conflicts", "list", "--all", "--json")
    read("brief", "--no-write", "--json")
    read("harmonize", "--json")
    for ref in shown:
        read("show", ref, "--json")
    for q in QUERIES[:2]:
        for mode in ("keyword", "semantic", "hybrid"):
            got.append((f"search_memory {mode}", json.dumps(tools.call(
                resident, "search_memory", {"query": q, "mode": mode, "k": 20}, now=NOW, agent=agent))))
    for name, args in (("preamble", {"task": QUERIES[1]}), ("judge", {"situation": QUERIES[1], "k": 20}),
                       ("list_conflicts", {"all": True}), ("harmonize", {})):
        got.append((name, json.dumps(tools.call(resident, name, args, now=NOW, agent=agent))))
    return got


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(tables, memories)
def test_nothing_in_a_none_domain_reaches_the_role(table, mems):
    # (the resident keeps its Tantivy indexes open, and their own threads may still add a file
    # under index/records/ while the directory is removed: a full suite under load once failed
    # so, "Directory not empty"; the store's removal is not what this tests)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        store = _build(Path(tmp) / "store", table, mems)
        rows = [json.loads(x) for x in _ok("--store", store, "export").splitlines()]
        resident = Resident(store, cache_dir=Path(tmp) / "cache")
        for agent, role in CHECKED.items():
            hidden = [r for r in rows if _ref_level(table, role, r["domain"]) == "none"]
            if not hidden:
                continue
            event(f"{agent} has hidden records")  # --hypothesis-show-statistics: how often each is checked
            seen = [r for r in rows if r not in hidden]
            ids = {r["id"] for r in hidden}
            texts = {r["text"] for r in hidden} - {r["text"] for r in seen}  # the same words elsewhere are no leak
            for ref in sorted(ids):
                assert _as(store, agent, "show", ref, "--now", NOW)[0] == 1
            for what, out in _surfaces(store, agent, resident, [r["id"] for r in seen][:3]):
                assert _leaks(out, ids, texts) == [], (agent, what)


# --------------------------------------------------------------------------- found on the way

def test_a_state_export_imports_into_a_store_that_holds_records(tmp_path):
    a, b = make_store(tmp_path / "a"), make_store(tmp_path / "b")
    for text in ("alpha one fact here", "alpha two fact here"):
        _ok("--store", a, "remember", text, "--now", "2026-06-01T00:00:00Z")
    for text in ("beta one thing", "beta two thing", "beta three thing"):
        _ok("--store", b, "remember", text, "--now", "2026-06-02T00:00:00Z")
    _ok("--store", b, "recall", "beta", "--now", "2026-06-02T00:00:00Z")  # indexes built
    _ok("--store", b, "import", "-", "--now", "2026-06-03T00:00:00Z", stdin=_ok("--store", a, "export").encode())
    for text in ("alpha one fact here", "alpha two fact here"):
        rc, out, err = cli("--store", b, "recall", text, "--json", "--now", "2026-06-03T00:00:00Z")
        assert rc == 0, err
        assert json.loads(out)["results"][0]["text"] == text
