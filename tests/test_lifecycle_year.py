"""A year of memory, in process: a few hundred memories through 365 daily
consolidations and 52 weekly distillations (bench/lifecycle_year.py times it).

The scenario is generated here, deterministically, from a handful of storylines:
standups, throwaway notes, outages, Friday deploys that keep breaking, code
reviews that keep paying off, deals with two customers, a hackathon that turned
sour, a preference that changed twice, facts that were negated or renumbered, a
paraphrase, and hiring decisions that fade into a principle.
"""

from __future__ import annotations

from datetime import date, timedelta

from memstore.config import load_config
from memstore.conflicts import records, resolve_event
from memstore.consolidate import consolidate
from memstore.distill import distill
from memstore.embed import HashingEmbedder
from memstore.fold import fold
from memstore.memlog import MemLog
from memstore.policies import active_policies
from memstore.salience import effective

START = date(2026, 1, 1)
PEOPLE = ("alice", "bob", "carol", "dan")
TASKS = ("billing export", "search index", "login flow", "invoice emails", "mobile sync", "audit log")
TOPICS = ("rust async", "postgres vacuum", "css grid", "llm evals", "kubernetes", "sqlite wal")
BROKE = ("checkout", "the login page", "invoice emails", "search", "the mobile API")
CAUGHT = ("a race in the cache", "an off-by-one in paging", "a leaked token", "a slow query", "a missing index")
ROLES = ("backend engineer", "designer", "data analyst", "support lead", "SRE")


def ts(day: int, hour: int = 12, minute: int = 0) -> str:
    d = START + timedelta(days=day)
    return f"{d.isoformat()}T{hour:02d}:{minute:02d}:00Z"


def day_of(iso: str) -> int:
    return (date.fromisoformat(iso) - START).days


def requests() -> dict[int, list[dict]]:
    """Day -> the remember requests of that day (JSONL objects, as `remember --jsonl` takes)."""
    days: dict[int, list[dict]] = {}

    def on(day: int, **req) -> None:
        days.setdefault(day, []).append(req)

    for d in range(365):
        wd = (START + timedelta(days=d)).weekday()
        if wd in (0, 3):  # standups, Mondays and Thursdays: short-term meetings on one subject
            p = PEOPLE[d % 4]
            on(d, text=f"Standup {START + timedelta(days=d)}: {p} is working on {TASKS[d % 6]}",
               subject="standup", domain="eng", kind="meeting", actors=[p])
        if d % 5 == 2:  # throwaway notes: never repeated, they expire
            on(d, text=f"Note {d}: skimmed an article about {TOPICS[d % 6]}", kind="note")
        if wd == 4 and d % 28 == 1:  # every fourth Friday the deploy breaks something
            on(d, text=f"Friday deploy on {START + timedelta(days=d)} broke {BROKE[d % 5]}; rolled back",
               subject="friday-deploy",
               domain="eng", kind="incident", outcome="negative", actors=["ops"], importance=0.6, risk=0.6)
    for i, d in enumerate(range(10, 365, 42)):  # code reviews that catch bugs: long-term lessons
        on(d, text=f"Pairing on code review {i + 1} caught {CAUGHT[i % 5]} before release.",
           subject="code-review", domain="eng", kind="note", tier="long", outcome="positive")
    for d in (40, 160, 290):  # outages: intense, promoted at once, protected from decay
        on(d, text=f"Production database outage on day {d}; failover to the replica", domain="eng",
           kind="incident", tier="short", **dict.fromkeys(("importance", "urgency", "risk", "novelty",
                                                         "emotion", "recurrence", "actionability"), 0.9))
    for d in (20, 27):  # the same note twice within the TTL: promoted by repetition
        on(d, text="Look into the flaky checkout test", domain="eng")
    for d, role in zip((15, 45, 75, 105, 135), ROLES, strict=True):  # hiring decisions: fade, then a principle
        on(d, text=f"We decided to hire a {role} after a paid trial project.", domain="people",
           kind="decision", actors=["dana"], importance=0.5, risk=0.3)
    for d, outcome in ((60, "positive"), (150, "positive"), (240, "positive"), (100, "negative"), (200, "negative")):
        who = "acme" if outcome == "positive" else "globex"
        on(d, text=f"Deal with {who} {'closed' if outcome == 'positive' else 'fell through'} on day {d}",
           domain="sales", kind="deal", actors=[who], outcome=outcome)
    for d, outcome in ((35, "positive"), (95, "positive"), (185, "negative"), (245, "negative"), (305, "negative")):
        on(d, text=f"Hackathon on day {d} {'shipped a demo' if outcome == 'positive' else 'burned the team out'}",
           subject="hackathon", domain="eng", kind="meeting", outcome=outcome)
    for d, drink in ((5, "tea"), (120, "coffee"), (250, "green tea")):  # a single-valued subject
        on(d, text=f"I prefer {drink} in the morning.", subject="morning-drink", domain="personal")
    on(32, text="We use feature flags for releases.", subject="feature-flags", domain="eng", kind="fact")
    on(214, text="We no longer use feature flags for releases.", subject="feature-flags", domain="eng", kind="fact")
    on(70, text="The API rate limit is 100 requests per minute.", subject="rate-limit", domain="eng", kind="fact")
    on(170, text="The API rate limit is 250 requests per minute.", subject="rate-limit", domain="eng", kind="fact")
    on(130, text="Billing runs on Postgres.", subject="billing-db", domain="eng", kind="fact")
    on(140, text="Billing now runs on Postgres.", subject="billing-db", domain="eng", kind="fact")
    return days


def by_text(state, text: str):
    return next(m for m in state.ordered() if m.text == text)


def run_year(config=None) -> tuple[MemLog, dict]:
    """Drive the year; returns the log and the per-stage event counts."""
    config = config or load_config(None)
    embedder = HashingEmbedder(config["embedder"]["hashing_dim"])
    log = MemLog()
    plan = requests()
    counts = {"consolidate": 0, "distill": 0, "consolidations": 0, "distillations": 0}
    for d in range(365):
        for i, req in enumerate(plan.get(d, [])):
            log.remember([req], ts(d, 9, i), config)
        if d == 175:  # a person overrides the automatic choice on the rate limit
            new = by_text(log.state, "The API rate limit is 250 requests per minute.")
            conflict = next(e for e in log.events if e["op"] == "conflict" and e["new"] == new.id)
            log.append([resolve_event(conflict, "old", ts(d, 18), "the 250 limit was only a trial")], ts(d, 18))
        if d == 320:  # and forgets a note that stopped being true
            m = by_text(log.state, "Look into the flaky checkout test")
            log.append([{"op": "forget", "id": m.id, "reason": "test fixed"}], ts(d, 18))
        counts["consolidate"] += len(log.run(consolidate, ts(d + 1, 3), config, embedder=embedder))
        counts["consolidations"] += 1
        if (START + timedelta(days=d + 1)).weekday() == 6:
            counts["distill"] += len(log.run(distill, ts(d + 1, 4), config))
            counts["distillations"] += 1
    return log, counts


def test_a_year_of_memory():
    config = load_config(None)
    log, counts = run_year(config)
    s = log.state
    assert (counts["consolidations"], counts["distillations"]) == (365, 52)
    assert fold(log.events).memories == s.memories  # the stages' own bookkeeping equals the real fold

    tally: dict[tuple[str, str], int] = {}
    for m in s.memories.values():
        tally[(m.level, m.status)] = tally.get((m.level, m.status), 0) + 1
    # (each standup is its own meeting, said once: none is promoted on the others' count, so
    # they expire and never fade into summaries)
    assert tally == {
        ("raw", "active"): 28, ("raw", "archived"): 1, ("raw", "expired"): 194, ("raw", "superseded"): 4,
        ("raw", "invalidated"): 1, ("summary", "active"): 18, ("summary", "invalidated"): 4,
        ("pattern", "active"): 2, ("principle", "active"): 2, ("policy", "active"): 5, ("policy", "superseded"): 1,
    }

    # promoted: by intensity (outages, protected: no decay all year) and by repetition
    outages = [m for m in s.ordered() if m.text.startswith("Production database outage")]
    assert [(m.tier, m.status) for m in outages] == [("long", "active")] * 3
    assert {effective(m, "2027-01-01T04:00:00Z", config) for m in outages} == {0.9}
    flaky = by_text(s, "Look into the flaky checkout test")
    assert (flaky.tier, flaky.mention_count, flaky.status, flaky.reason) == ("long", 2, "invalidated", "test fixed")
    assert s.memories[flaky.abstracted_by].status == "invalidated"  # its summary went with it
    standups = [m for m in s.ordered() if m.subject == "standup" and m.level == "raw"]
    assert {(m.tier, m.status) for m in standups} == {("short", "expired"), ("short", "active")}

    # expired: every throwaway note but the last three, still inside their 14 days
    notes = [m for m in s.ordered() if m.text.startswith("Note ")]
    assert [m.status for m in notes] == ["expired"] * 70 + ["active"] * 3

    # abstracted: hiring decisions fade into summaries, a pattern, a principle; code reviews climb to the policy
    hiring = [m for m in s.ordered() if m.domain == "people" and m.level == "raw"]
    summaries = [s.memories[m.abstracted_by] for m in hiring]
    assert {m.level for m in summaries} == {"summary"} and len(hiring) == 5
    pattern = s.memories[summaries[0].abstracted_by]
    assert pattern.text == ("[people] decision with dana: We decided to hire a designer after a paid trial project. "
                            "[pattern across 5 independent sources, 2026-01..2026-05]")
    assert list(pattern.derived_from) == [m.id for m in summaries]
    principle = s.memories[pattern.abstracted_by]
    assert (principle.level, principle.abstracted_by) == ("principle", None)  # no outcomes: no policy
    review = next(m for m in s.ordered() if m.level == "principle" and m.subject == "code-review")
    assert s.memories[review.abstracted_by].text.startswith("[eng] Repeat: code-review:")

    # policies, with their confidence
    assert [(v.policy.text.split(":")[0] + ":" + v.policy.text.split(":")[1], v.direction, v.confidence,
             len(v.evidence)) for v in active_policies(s)] == [
        ("[eng] Avoid: friday-deploy", "mitigate", 1.0, 13),
        ("[eng] Repeat: code-review", "reinforce", 1.0, 9),
        ("[sales] Repeat: deal with acme", "reinforce", 0.875, 3),
        ("[sales] Avoid: deal with globex", "mitigate", 0.791667, 2),
        ("[eng] Avoid: hackathon", "mitigate", round(0.875 * 3 / 5, 6), 3),  # 3 negative outcomes against 2
    ]
    friday = [(e["at"][:10], e["memory"]["confidence"]) for e in log.events
              if e["op"] == "policy" and e["memory"]["subject"] == "friday-deploy"]
    assert friday[:6] == [("2026-02-01", 0.801667), ("2026-03-01", 0.885), ("2026-03-29", 0.935),
                          ("2026-04-26", 0.968333), ("2026-05-24", 0.992143), ("2026-06-21", 1.0)]

    # conflicts: what was detected, and how each ended
    found = [(r["rule"], s.memories[r["old"]].text[:40], s.memories[r["new"]].text[:40], r["state"],
              r["resolution"]) for r in records(log.events, s)]
    assert found == [
        ("value", "I prefer tea in the morning.", "I prefer coffee in the morning.", "superseded", None),
        ("number", "The API rate limit is 100 requests per m", "The API rate limit is 250 requests per m",
         "resolved", "old"),
        ("negation", "We use feature flags for releases.", "We no longer use feature flags for relea",
         "superseded", None),
        ("evidence", "[eng] Repeat: hackathon: Hackathon on da", "[eng] Avoid: hackathon: Hackathon on day",
         "superseded", None),
        ("value", "I prefer coffee in the morning.", "I prefer green tea in the morning.", "superseded", None),
    ]
    limit = by_text(s, "The API rate limit is 100 requests per minute.")
    assert (limit.status, s.memories[limit.abstracted_by].status) == ("active", "active")  # reinstated with it
    assert by_text(s, "Billing now runs on Postgres.").merged_into == by_text(s, "Billing runs on Postgres.").id

    # and the last night's run, repeated, has nothing more to say
    assert consolidate(s, now="2027-01-01T03:00:00Z", config=config, embedder=HashingEmbedder(256)) == []
