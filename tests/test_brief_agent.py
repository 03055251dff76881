"""An agent's `brief` from the records index (issue [6/6]: reads that cost what they return):
the records it may read are told from the lexical index's domains (``index.domains``), and
the page must be the one the fold gives for the same agent: for grant tables that hide a
domain, that open only one, that close repo domains by their workspace name, and none.
When the lexical index cannot be believed, the fold answers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reliability_support import HASHING, make_store
from test_reads_scale import _day, _live, _run, indexed, without_indexes

BELIEFS = {  # conflicts inside domains, before and after the index's watermark
    8: {"text": "We hold the standup on Mondays", "subject": "standup", "domain": "eng", "kind": "decision"},
    9: {"text": "We never hold the standup on Mondays", "subject": "standup", "domain": "eng",
        "kind": "decision"},
    20: {"text": "We pay contractors on Fridays", "subject": "payroll", "domain": "repo:web/hr",
         "kind": "decision"},
    21: {"text": "We never pay contractors on Fridays", "subject": "payroll", "domain": "repo:web/hr",
         "kind": "decision"},
    44: {"text": "Quarterly targets are due Friday", "subject": "targets", "domain": "sales", "kind": "decision",
         "outcome": "pending"},
    62: {"text": "The hiring freeze is over", "subject": "hiring", "domain": "repo:api/hr", "kind": "fact"},
    63: {"text": "The hiring freeze is not over", "subject": "hiring", "domain": "repo:api/hr", "kind": "fact"},
    66: {"text": "Expense reports are pending review", "domain": "repo:web/hr", "outcome": "pending"},
}
TABLES = {
    "hides eng": '[grants.r]\neng = "none"\n',
    "opens eng only": '[grants.r]\n"*" = "none"\neng = "read"\n',
    "hides hr by name": '[grants.r]\nhr = "none"\nsales = "none"\n',
    "repo row beats name": '[grants.r]\nhr = "none"\n"repo:web/hr" = "read"\n[grants."*"]\npersonal = "none"\n',
    "no grants": "",
}


def _days(store: Path, days) -> None:
    for d in days:
        _live(store, range(d, d + 1))
        if d in BELIEFS:
            writer = "a" if d % 2 == 0 else "b"  # (two writers: their conflicts stay open for a person)
            code, _out, err = _run(store, "--agent", writer, "remember", "--jsonl", "-", "--now", _day(d),
                                   stdin=json.dumps(BELIEFS[d]).encode())
            assert code == 0, err
            assert _run(store, "consolidate", "--now", _day(d))[0] == 0


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    """(a store indexed on day 50 with a tail after it, the same store without an index)."""
    base = tmp_path_factory.mktemp("agentbrief")
    store = indexed(base / "s", _days, 50, 75)
    return store, without_indexes(store, base / "bare")


def _configure(pair, table: str) -> None:
    for store in pair:
        (store / "memstore.toml").write_text(HASHING + '[agents]\nbot = "r"\n\n' + table)


def _brief(store: Path, day: int, *form: str) -> tuple[int, str, str]:
    return _run(store, "--agent", "bot", "brief", "--no-write", *form, "--now", _day(day))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_an_agents_brief_from_the_index_is_the_folds(pair, table, monkeypatch):
    from memstore import brief

    _configure(pair, TABLES[table])
    store, bare = pair
    seen: dict[str, int] = {}
    for day in (30, 45, 60, 72, 90):
        for form in ((), ("--json",)):
            want = _brief(bare, day, *form)
            with monkeypatch.context() as m:  # the index must answer: no fold
                m.setattr(brief, "brief_data", lambda *a: pytest.fail("the agent's brief folded"))
                got = _brief(store, day, *form)
            assert got == want, (table, day, form)
            if form:
                for section, items in json.loads(got[1]).items():
                    if isinstance(items, list):
                        seen[section] = seen.get(section, 0) + len(items)
    assert all(seen.get(s) for s in ("salient", "conflicts", "faded")), seen
    if table == "no grants":
        assert all(seen.get(s) for s in ("policies", "pending")), seen


def test_the_tables_hide_what_they_say(pair):
    """The comparison above is not between two empty pages: each table leaves some records
    out of the agent's page that the owner's shows, and keeps others."""
    store, _bare = pair
    _configure(pair, TABLES["opens eng only"])
    owner = _run(store, "brief", "--no-write", "--json", "--now", _day(72))[1]
    agent = _brief(store, 72, "--json")[1]
    assert "contractors" in owner and "contractors" not in agent
    assert "standup" in agent
    _configure(pair, TABLES["repo row beats name"])
    agent = _brief(store, 72, "--json")[1]
    assert "contractors" in agent and "hiring freeze" not in agent and "Quarterly targets" in agent


@pytest.mark.parametrize("damage", ["behind", "missing", "count"])
def test_a_lexical_index_that_cannot_be_believed_is_not_used(pair, damage, tmp_path):
    """The lexical index at another watermark, gone, or holding other than one document a
    record: the agent's brief folds, and says the same."""
    from memstore.access import Access
    from memstore.index import domains
    from memstore.index.current import open_current
    from memstore.store.layout import Layout

    _configure(pair, TABLES["hides eng"])
    store, bare = pair
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    manifest = Layout(copy).manifest_path("lexical")
    if damage == "missing":
        shutil.rmtree(Layout(copy).index_path("lexical"))
    else:
        data = json.loads(manifest.read_text())
        data["watermark" if damage == "behind" else "count"] -= 1
        manifest.write_text(json.dumps(data))
    current = open_current(Layout(copy))
    assert current is not None
    access = Access("bot", "r", (("r", (("eng", "none"),)),))
    assert domains.readable_rows(current.layout, current.mark, current.index.count(), access, [1, 2]) is None
    assert _brief(copy, 72, "--json") == _brief(bare, 72, "--json")


def test_records_across_domains_from_an_import(tmp_path, monkeypatch):
    """A state export can hold what consolidate and distill never write: a conflict between
    records of two domains, and a policy whose evidence lies partly in a domain the agent
    may not read. The index's page leaves out the pair and that evidence, as the fold's."""
    src = make_store(tmp_path / "src")
    texts = [("We ship on Mondays", "eng"), ("We never ship on Mondays", "repo:web/hr"),
             ("Payroll closes on Fridays", "repo:web/hr"), ("Payroll never closes on Fridays", "eng"),
             ("The deploy broke billing", "eng"), ("The deploy broke payroll", "repo:web/hr"),
             ("Avoid deploys before payroll", "eng")]
    for n, (text, domain) in enumerate(texts):
        body = json.dumps({"text": text, "domain": domain, "kind": "incident" if n in (4, 5) else "decision",
                           "outcome": "negative" if n in (4, 5) else None}).encode()
        assert _run(src, "remember", "--jsonl", "-", "--now", _day(n), stdin=body)[0] == 0
    rows = [json.loads(line) for line in _run(src, "export", "--now", _day(9))[1].splitlines()]
    by_text = {r["text"]: r for r in rows}

    def pair(a: str, b: str) -> None:
        by_text[a]["conflicts_with"], by_text[b]["conflicts_with"] = [by_text[b]["id"]], [by_text[a]["id"]]

    pair("We ship on Mondays", "We never ship on Mondays")  # the later side hidden
    pair("Payroll closes on Fridays", "Payroll never closes on Fridays")  # the earlier side hidden
    rule = by_text["Avoid deploys before payroll"]
    rule.update(level="policy", direction="mitigate", tier="long", confidence=0.8,
                derived_from=[by_text["The deploy broke billing"]["id"], by_text["The deploy broke payroll"]["id"]])
    store = make_store(tmp_path / "s", HASHING + '[agents]\nbot = "r"\n\n[grants.r]\nhr = "none"\n')
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    code, _out, err = _run(store, "import", "-", "--now", _day(10), stdin=body)
    assert code == 0, err
    bare = tmp_path / "bare"
    shutil.copytree(store, bare)
    assert _run(store, "index", "--now", _day(10))[0] == 0
    owner = json.loads(_run(store, "brief", "--no-write", "--json", "--now", _day(11))[1])
    assert len(owner["conflicts"]) == 2 and owner["policies"][0]["evidence"] == 2
    wants = [_brief(bare, 11, *form) for form in ((), ("--json",))]
    from memstore import brief

    monkeypatch.setattr(brief, "brief_data", lambda *a: pytest.fail("the agent's brief folded"))
    assert [_brief(store, 11, *form) for form in ((), ("--json",))] == wants
    page = json.loads(_brief(store, 11, "--json")[1])
    assert page["conflicts"] == [] and page["policies"][0]["evidence"] == 1
