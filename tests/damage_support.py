"""Damaged files: for every kind of file under a store (and the embedding cache), damage one
and check what the read commands answer.

A store is built over four months (remember, recall, consolidate, distill, snapshot, index) so
that every file kind exists; a second store is built the same way with other texts (for
"swap"), and a copy of the first is kept from earlier in its life (for "set back"). Damages:
trunc0, trunc-half, flip (XOR 16 seeded bytes), swap (the same file of the other store), setback
(the same file from the earlier copy).

EXPECTED is what a pristine store answers when rebuilt from the damaged store's own log and
memstore.toml (only log/ and memstore.toml copied to a fresh directory, fresh cache), so damage
to the log itself is well defined. Each read on the damaged store is:

- EXACT: same exit status and stdout as expected;
- AS-UNDAMAGED: (damage to the log only) same as the undamaged store answered: a snapshot or
  index still answers for lines the log lost; reported, not counted as wrong;
- REFUSED: non-zero exit, exactly one ``Error:`` line, no traceback;
- WARNED: exit 0, other stdout, and stderr says something is damaged or skipped (acceptable
  only for damage to the log itself);
- SILENT-WRONG: exit 0, other stdout, nothing said (must never happen);
- CRASH: an uncaught exception, a traceback, or a non-zero exit without one ``Error:`` line;
- HANG: past the per-command timeout.

Then ``verify --repair`` runs and every read must answer EXACT-ly what the expected store
answers after its own ``verify --repair`` (NOT-RESTORED otherwise).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_support import _innermost, run_cli
from reliability_support import cache_env, cli, make_store

NOW = "2026-05-10T09:00:00Z"
DAMAGES = ("trunc0", "trunc-half", "flip", "swap", "setback")
WORDS = [("deploy on friday broke billing", "coffee machine note"),
         ("outage on monday broke payroll", "tea kettle remark")]
QUERIES = ["deploy billing friday", "coffee machine", "outage payroll"]
WARN = re.compile(r"damag|corrupt|skip|unreadable|invalid|rebuil|mismatch|could not|cannot|quarantin|"
                  r"ignor|stale|warning|not match|differ|repair", re.I)
SKIPPED = re.compile(r"warning: skipped \d+ damaged log line")
TIMEOUT = 30.0


def _run(store: Path, cache: Path, argv: list[str]):
    os.environ["MEMSTORE_CACHE_DIR"] = str(cache)
    return run_cli(["--store", str(store), *argv], timeout=TIMEOUT)


def build(root: Path, cache: Path, variant: int, older: Path | None = None) -> list[str]:
    """The store; returns a few ids to `show` (a promoted memory, an expired one, the policy)."""
    incident, note = WORDS[variant]
    make_store(root)
    with cache_env(cache):
        def ms(*argv):
            rc, out, err = cli("--store", root, *argv)
            assert rc == 0, (argv, err)
            return out

        for m in range(1, 5):
            for d in range(1, 8):
                now = f"2026-{m:02d}-{d * 3:02d}T09:00:00Z"
                ms("remember", f"{incident} month {m} day {d}", "--subject", "deploys", "--kind", "incident",
                   "--outcome", "negative", "--now", now)
                ms("remember", f"{note} {m} {d}", "--domain", "eng", "--now", now)
                if m == 4 and d == 4 and older is not None:  # the set-back copy: mid-month, all kinds
                    shutil.copytree(root, older / "store")
                    shutil.copytree(cache, older / "cache")
            ms("recall", f"{incident} month {m}", "--k", "3", "--now", f"2026-{m:02d}-22T09:00:00Z")
            ms("consolidate", "--now", f"2026-{m:02d}-28T10:00:00Z")
            ms("distill", "--now", f"2026-{m:02d}-28T11:00:00Z")
            ms("snapshot", "--now", f"2026-{m:02d}-28T12:00:00Z")
            ms("index", "--now", f"2026-{m:02d}-28T12:00:00Z")
        state = [json.loads(line) for line in ms("export", "--now", NOW).splitlines()]
    pick = [next(m["id"] for m in state if m["status"] == s) for s in ("active", "expired")]
    pick += [m["id"] for m in state if m["level"] == "policy"][:1]
    return pick


def reads(ids: list[str]) -> list[list[str]]:
    n = ["--now", NOW]
    return ([["recall", q, "--no-touch", "--k", "5", *n] for q in QUERIES]
            + [["recall", QUERIES[0], "--json", "--no-touch", *n]]
            + [["show", i, *n] for i in ids]
            + [["stats", *n], ["export", *n], ["export", "--history", *n], ["judge", "deploy on friday", *n],
               ["log", *n], ["conflicts", "--all", *n], ["consolidate", "--dry-run", "--json", *n],
               ["verify", "--json", *n]])


# --- file kinds and damages -----------------------------------------------------------------

SEGMENT = re.compile(r"^[0-9a-f]{32}\.(.+)$")


def kind_of(rel: str) -> str:
    parts = rel.split("/")
    if parts[0] == "log":
        return "log/YYYY-MM.jsonl"
    if parts[0] == "snapshots":
        return "snapshots/state-N" + rel[rel.rindex("."):]  # (.parquet, .keys, .order)
    if parts[0] == "index" and len(parts) == 3:
        m = SEGMENT.match(parts[2])
        if m:
            ext = re.sub(r"^\d+\.", "N.", m.group(1))
            return f"index/{parts[1]}/SEGMENT.{ext}"
    return rel


def files_of(root: Path, cache: Path) -> dict[str, Path]:
    """Every damageable file: 'store/<rel>' or 'cache/<rel>' -> path (lock files are empty: skipped)."""
    out = {}
    for base, tag in ((root, "store"), (cache, "cache")):
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.stat().st_size > 0 and not p.name.endswith(".lock"):
                out[f"{tag}/{p.relative_to(base)}"] = p
    return out


def targets(files: dict[str, Path]) -> list[tuple[str, str]]:
    """(kind, file) pairs to damage: one file per kind (the largest: most content), and for the
    log both its first and its last partition, for snapshots the newest."""
    by_kind: dict[str, list[str]] = {}
    for rel in files:
        tag, _, inner = rel.partition("/")
        by_kind.setdefault(f"{tag}:{kind_of(inner)}", []).append(rel)
    out = []
    for kind, rels in sorted(by_kind.items()):
        if kind.endswith("log/YYYY-MM.jsonl"):
            out += [(kind + " (first)", rels[0]), (kind + " (last)", rels[-1])]
        elif "snapshots/" in kind:
            out.append((kind, rels[-1]))
        else:
            out.append((kind, max(rels, key=lambda r: (files[r].stat().st_size, r))))
    return out


def same_kind(rel: str, files: dict[str, Path]) -> Path | None:
    """The same file in another tree, else the largest file of the same kind there."""
    if rel in files:
        return files[rel]
    tag, _, inner = rel.partition("/")
    kind = kind_of(inner)
    cands = [r for r in files if r.startswith(tag + "/") and kind_of(r.partition("/")[2]) == kind]
    return files[max(cands, key=lambda r: (files[r].stat().st_size, r))] if cands else None


def apply(damage: str, path: Path, rng: random.Random, other: dict[str, Path], older: dict[str, Path],
          rel: str) -> str | None:
    """Damage ``path``; returns what was done, or None when this damage does not apply."""
    data = path.read_bytes()
    if damage == "none":  # the control: the harness itself must find every read EXACT
        return "no damage"
    if damage == "trunc0":
        new = b""
    elif damage == "trunc-half":
        new = data[: len(data) // 2]
    elif damage == "flip":
        new = bytearray(data)
        offsets = sorted(rng.sample(range(len(data)), min(16, len(data))))
        for o in offsets:
            new[o] ^= rng.randrange(1, 256)
        new = bytes(new)
        path.write_bytes(new)
        return f"XOR at offsets {offsets}"
    else:
        src = same_kind(rel, other if damage == "swap" else older)
        if src is None:
            return None
        new = src.read_bytes()
        if new == data:
            return None
        path.write_bytes(new)
        return f"{damage} with {src.name} ({len(new)} bytes)"
    path.write_bytes(new)
    return f"{damage}: {len(data)} -> {len(new)} bytes"


# --- expected answers -----------------------------------------------------------------------

def _norm(text: str, store: Path, cache: Path) -> str:
    return text.replace(str(store), "STORE").replace(str(cache), "CACHE")


def _verify_view(out: str) -> tuple:
    try:
        report = json.loads(out)
    except ValueError:
        return ("unparsed",)
    return (report.get("clean"),)


@dataclass
class Answer:
    rc: int | None
    out: str
    err: str
    crash: str | None = None  # signature
    hang: bool = False


def answer(store: Path, cache: Path, argv: list[str]) -> Answer:
    o = _run(store, cache, argv)
    if o.hang:
        return Answer(None, "", "", f"HANG in {argv[0]}", True)
    if o.exc is not None:
        return Answer(None, "", "", f"{type(o.exc).__name__} at {_innermost(o.frames)}")
    out, err = _norm(o.out, store, cache), _norm(o.err, store, cache)
    if "Traceback" in err:
        return Answer(o.rc, out, err, "traceback on stderr: " + err.strip().splitlines()[-1][:80])
    if argv[0] == "verify":
        out = repr(_verify_view(out))
        if o.rc in (0, 1) and "Error:" not in err:  # exit 1: findings, an answer
            return Answer(o.rc, out, err)
    if argv[0] == "judge" and o.rc == 3 and "Error:" not in err:  # documented: no policy applies
        return Answer(o.rc, out, err)
    if o.rc != 0 and sum(1 for line in err.splitlines() if line.startswith("Error:")) != 1:
        return Answer(o.rc, out, err, f"exit {o.rc} without one Error: line in {argv[0]}")
    return Answer(o.rc, out, err)


def all_answers(store: Path, cache: Path, argvs: list[list[str]]) -> list[Answer]:
    return [answer(store, cache, a) for a in argvs]


def log_key(store: Path) -> str:
    h = hashlib.sha256()
    for p in sorted((store / "log").rglob("*")) if (store / "log").is_dir() else []:
        h.update(str(p.relative_to(store)).encode() + b"\0")
        if p.is_file():
            h.update(p.read_bytes())
    cfg = store / "memstore.toml"
    h.update(cfg.read_bytes() if cfg.is_file() else b"-")
    return h.hexdigest()


class Expected:
    """Expected answers, before and after repair, per distinct log + config."""

    def __init__(self, work: Path, argvs: list[list[str]]):
        self.work, self.argvs, self.memo = work, argvs, {}

    def get(self, store: Path) -> tuple[list[Answer], list[Answer]]:
        key = log_key(store)
        if key not in self.memo:
            d = self.work / f"expected-{len(self.memo)}"
            shutil.rmtree(d, ignore_errors=True)
            fresh, cache = d / "store", d / "cache"
            fresh.mkdir(parents=True, mode=0o700)
            if (store / "log").is_dir():
                shutil.copytree(store / "log", fresh / "log")
            shutil.copy2(store / "memstore.toml", fresh / "memstore.toml")
            before = all_answers(fresh, cache, self.argvs)
            answer(fresh, cache, ["verify", "--repair", "--now", NOW])
            after = all_answers(fresh, cache, self.argvs)
            self.memo[key] = (before, after)
        return self.memo[key]


# --- one damage -----------------------------------------------------------------------------

def classify(got: Answer, exp: Answer, pristine: Answer, log_damage: bool) -> str:
    if got.hang:
        return "HANG"
    if got.crash:
        return "CRASH"
    if got.rc == exp.rc and got.out == exp.out:
        return "EXACT"
    if log_damage and (got.rc, got.out) == (pristine.rc, pristine.out):
        return "AS-UNDAMAGED"  # the log lost or changed lines; a derived file still answers for them
    if got.rc != 0:
        return "REFUSED"
    if WARN.search(got.err) and got.err != exp.err:
        return "WARNED"
    if log_damage and SKIPPED.search(got.err):
        # the log itself lost lines and the read says so (as a rebuilt store would): a derived
        # file may still answer for a line the log no longer holds, but not silently
        return "WARNED"
    return "SILENT-WRONG"


@dataclass
class CaseResult:
    kind: str
    rel: str
    damage: str
    how: str
    classes: list[tuple[str, str]]  # (read, class) on the damaged store
    repair: str  # verify --repair: OK or a crash signature
    after: list[tuple[str, str]]  # (read, EXACT | NOT-RESTORED | CRASH | HANG) after the repair
    verify_clean: bool
    crashes: list[str] = field(default_factory=list)

    @property
    def log_damage(self) -> bool:
        return self.rel.startswith("store/log/")


@dataclass
class World:
    work: Path
    store: Path
    cache: Path
    ids: list[str]
    files: dict[str, Path]
    other: dict[str, Path]
    older: dict[str, Path]
    argvs: list[list[str]]
    expected: Expected
    pristine: list[Answer]  # the undamaged store's answers


def prepare(work: Path) -> World:
    work.mkdir(parents=True, exist_ok=True)
    a, b, old = work / "a", work / "b", work / "older"
    old.mkdir()
    ids = build(a / "store", a / "cache", 0, older=old)
    build(b / "store", b / "cache", 1)
    argvs = reads(ids)
    # the pristine store answers once first, so that every damage finds the indexes current
    all_answers(a / "store", a / "cache", argvs)
    pristine = all_answers(a / "store", a / "cache", argvs)
    return World(work, a / "store", a / "cache", ids, files_of(a / "store", a / "cache"),
                 files_of(b / "store", b / "cache"), files_of(old / "store", old / "cache"), argvs,
                 Expected(work, argvs), pristine)


def all_cases(w: World) -> list[tuple[str, str, str]]:
    return [(kind, rel, d) for kind, rel in targets(w.files) for d in DAMAGES]


def run_damage(w: World, kind: str, rel: str, damage: str, seed: int, number: int) -> CaseResult | None:
    d = w.work / "case"
    shutil.rmtree(d, ignore_errors=True)
    store, cache = d / "store", d / "cache"
    shutil.copytree(w.store, store)
    shutil.copytree(w.cache, cache)
    tag, _, inner = rel.partition("/")
    path = (store if tag == "store" else cache) / inner
    rng = random.Random(f"{seed}:{number}:{rel}:{damage}")
    how = apply(damage, path, rng, w.other, w.older, rel)
    if how is None:
        return None
    exp_before, exp_after = w.expected.get(store)
    got = all_answers(store, cache, w.argvs)
    classes, crashes = [], []
    log_damage = rel.startswith("store/log/")
    for argv, g, e, p in zip(w.argvs, got, exp_before, w.pristine, strict=True):
        name = " ".join(argv[:2]) if argv[0] in ("recall", "show") else argv[0]
        if argv[0] == "verify" and not g.crash and not g.hang and g.rc in (0, 1):
            c = "EXACT" if g.out == e.out else "FLAGGED"
        else:
            c = classify(g, e, p, log_damage)
        classes.append((name, c))
        if g.crash:
            crashes.append(f"{g.crash} [{name}]")
    verify_clean = got[-1].out == repr((True,))
    rep = answer(store, cache, ["verify", "--repair", "--now", NOW])
    repair = rep.crash or "OK"
    if rep.crash:
        crashes.append(f"{rep.crash} [verify --repair]")
    after = []
    for argv, g, e in zip(w.argvs, all_answers(store, cache, w.argvs), exp_after, strict=True):
        name = " ".join(argv[:2]) if argv[0] in ("recall", "show") else argv[0]
        c = "HANG" if g.hang else "CRASH" if g.crash else "EXACT" if (g.rc, g.out) == (e.rc, e.out) \
            else "NOT-RESTORED"
        after.append((name, c))
        if g.crash:
            crashes.append(f"{g.crash} [{name}, after repair]")
    return CaseResult(kind, rel, damage, how, classes, repair, after, verify_clean, crashes)


# --- a run ----------------------------------------------------------------------------------

@dataclass
class Report:
    results: list[CaseResult] = field(default_factory=list)

    def counts(self) -> Counter:
        c = Counter()
        for r in self.results:
            for _n, cls in r.classes:
                c[cls] += 1
                if cls == "WARNED" and not r.log_damage:
                    c["WARNED-DERIVED"] += 1
            for _n, cls in r.after:
                if cls != "EXACT":
                    c["AFTER-REPAIR-" + cls] += 1
            if r.repair != "OK":
                c["REPAIR-CRASH"] += 1
        return c

    def bad(self) -> list[str]:
        """Every case that broke a promise, one line each."""
        out = []
        for r in self.results:
            wrong = [f"{n}: {c}" for n, c in r.classes
                     if c in ("SILENT-WRONG", "CRASH", "HANG") or (c == "WARNED" and not r.log_damage)]
            wrong += [f"{n}: {c} after repair" for n, c in r.after if c != "EXACT"]
            if r.repair != "OK":
                wrong.append(f"verify --repair: {r.repair}")
            if wrong:
                out.append(f"{r.damage} {r.rel} ({r.how[:70]}){' [verify clean]' if r.verify_clean else ''}: "
                           + "; ".join(wrong) + ("\n      crashes: " + "; ".join(r.crashes) if r.crashes else ""))
        return out

    def table(self) -> str:
        c = self.counts()
        classes = ("EXACT", "AS-UNDAMAGED", "REFUSED", "WARNED", "FLAGGED", "SILENT-WRONG", "CRASH", "HANG")
        rows = [f"damages tried: {len(self.results)}; reads per damage: "
                f"{len(self.results[0].classes) if self.results else 0}",
                "reads on the damaged store: " + ", ".join(f"{k} {c[k]}" for k in classes),
                f"WARNED on damage to a derived file (not acceptable): {c['WARNED-DERIVED']}",
                f"after verify --repair: not restored {c['AFTER-REPAIR-NOT-RESTORED']}, "
                f"crash {c['AFTER-REPAIR-CRASH'] + c['REPAIR-CRASH']}, hang {c['AFTER-REPAIR-HANG']}",
                f"damages with a silent wrong answer: "
                f"{sum(1 for r in self.results if any(x == 'SILENT-WRONG' for _n, x in r.classes))}"]
        per_kind: dict[str, Counter] = {}
        for r in self.results:
            k = per_kind.setdefault(r.kind, Counter())
            k["tried"] += 1
            k["bad"] += any(x in ("SILENT-WRONG", "CRASH", "HANG") for _n, x in r.classes) \
                or any(x != "EXACT" for _n, x in r.after) or r.repair != "OK"
        rows.append(f"\n{'file kind':48} {'tried':>5} {'broken':>6}")
        rows += [f"{k:48} {v['tried']:5} {v['bad']:6}" for k, v in sorted(per_kind.items())]
        return "\n".join(rows)


def damage_run(work: Path, *, seed: int = 1, sample: int | None = None, progress=None) -> Report:
    """Every (file kind, damage) pair, or ``sample`` of them: one damage per kind in turn, the
    damage rotating, so a short run still touches every kind."""
    with cache_env():  # the runs set it store by store
        return _damage_run(work, seed, sample, progress)


def _damage_run(work: Path, seed: int, sample: int | None, progress) -> Report:
    w = prepare(work)
    cases = all_cases(w)
    if sample is not None:  # per kind, the damages in turn from a rotating start; the first that applies
        kinds = targets(w.files)[:sample]
        cases = [[(k, r, DAMAGES[(i + j + seed) % len(DAMAGES)]) for j in range(len(DAMAGES))]
                 for i, (k, r) in enumerate(kinds)]
    else:
        cases = [[c] for c in cases]
    report = Report()
    for n, tries in enumerate(cases):
        for kind, rel, damage in tries:
            r = run_damage(w, kind, rel, damage, seed, n)
            if r is not None:
                report.results.append(r)
                break
        if progress:
            progress(n, len(cases), r)
    return report
