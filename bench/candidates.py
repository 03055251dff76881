"""Update candidates at scale: what ranking one new record's candidates costs (consolidate's
``_updates``, memstore.beliefs.candidates.Postings.ranked) as the pool grows.

    python bench/candidates.py [--sizes 100000,1000000] [--new 1000] [--rounds 3]

Builds a pool of N chat-length records (seeded templates, English and Japanese, the
vocabulary of a team's notes; their update keys derived once), then ranks the candidates
of the last --new records, as a night's consolidate does for its new memories, two ways
interleaved: counting shared keys over the postings when they are few (np.unique, since
0.12.1) and over the whole pool (np.bincount, as before: one array as long as the pool per
new record). Prints the median per-record time of each and checks that both give the same
candidates. Not a test: pytest never collects it (it lives outside tests/).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memstore.beliefs import candidates  # noqa: E402
from memstore.beliefs.candidates import Postings  # noqa: E402
from memstore.model import Memory  # noqa: E402

SUBJECTS = ["billing", "checkout", "search", "ledger-sync", "invoice-service", "push-notifier", "auth",
            "staging", "pgbouncer", "build-server", "mobile", "roadmap", "pricing", "onboarding"]
PEOPLE = ["alice", "bob", "chen", "daiki", "emi", "farid", "grace", "hiro"]
EN = ["{p} reviewed the {s} PR #{n}, two nits left", "The {s} integration test is flaky again (build #{n})",
      "Restarted the {s} worker on node-{k}", "{p} is on call for {s} until Tuesday",
      "We moved the {s} standup to 10:30", "{p} prefers async updates on {s}",
      "Alert: {s} p99 latency above {n}ms for five minutes", "Lunch with {p} at the ramen place"]
JA = ["{s}のレビューを{p}さんが担当（PR #{n}）", "{s}のテストがまた不安定（ビルド#{n}）",
      "{p}さんは火曜まで{s}のオンコール", "{s}の定例は10時半からに変更"]


def pool_of(size: int, seed: int = 15) -> list[Memory]:
    rnd = random.Random(seed)
    out = []
    for i in range(size):
        tpl = rnd.choice(JA if rnd.random() < 0.35 else EN)
        text = tpl.format(p=rnd.choice(PEOPLE), s=rnd.choice(SUBJECTS), n=rnd.randint(1, 99999), k=rnd.randint(1, 40))
        day = i * 365 // size
        at = f"2026-{1 + day // 31 % 12:02d}-{1 + day % 28:02d}T10:00:00Z"
        out.append(Memory(id=f"m{i:015x}", text=text, kind="note", recorded_at=at, occurred_at=at[:16] + "Z",
                          precision="minute", seq=i + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--new", type=int, default=1000, help="records ranked per size (the pool's last ones)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of each way (median reported)")
    args = ap.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        t = time.perf_counter()
        pool = pool_of(size)
        postings = Postings(pool)
        built = time.perf_counter() - t
        new = pool[-args.new:]
        times: dict[str, list[float]] = {"postings": [], "pool": []}
        answers: dict[str, list] = {}
        for _ in range(args.rounds):
            for way, sparse in (("postings", 8), ("pool", 0)):
                candidates._SPARSE = sparse
                t = time.perf_counter()
                got = [[o.id for o in postings.ranked(n, 60)] for n in new]
                times[way].append((time.perf_counter() - t) / len(new))
                answers[way] = got
        candidates._SPARSE = 8
        same = answers["postings"] == answers["pool"]
        per = {w: statistics.median(v) * 1e3 for w, v in times.items()}
        print(f"N={size:,}: pool and keys built in {built:.1f} s; ranking one new record's candidates, "
              f"median of {args.rounds}: over the postings {per['postings']:.3f} ms, over the pool "
              f"{per['pool']:.3f} ms ({per['pool'] / per['postings']:.1f}x); same candidates: {same}")
        if not same:
            sys.exit("the two ways disagree")


if __name__ == "__main__":
    main()
