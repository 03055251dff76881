"""Update candidates at scale: what ranking one new record's candidates costs (consolidate's
``_updates``, memstore.beliefs.candidates.Postings.ranked) as the pool grows.

    python bench/candidates.py [--sizes 100000,1000000] [--new 1000] [--rounds 3] [--spread] [--regular]

Builds a pool of N chat-length records (seeded templates, English and Japanese, the
vocabulary of a team's notes; their update keys derived once), then ranks the candidates
of the last --new records, as a night's consolidate does for its new memories (or, with
--spread, --new records spread over the pool, as the first consolidate after a bulk import
ranks every record over those before it), five ways interleaved: shared keys counted by
sorting the postings when they are few against the records before the new one (np.unique,
since 0.12.1), else in a count array as long as those records, a common key's row added
(since 0.12.2) or its positions scattered (0.12.1); always by sorting; always in a count
array, rows added or positions scattered (the second close to 0.12.0's one np.bincount).
Prints the median per-record time of each and checks that all give the same candidates;
first, per size, what gathering the postings of every key takes against gathering only the
ranked records' keys' (consolidate's ``wanted``). Not a test: pytest never collects it (it lives outside tests/).
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


def pool_of(size: int, seed: int = 15, regular: bool = False) -> list[Memory]:
    """``regular``: record times never go back along the pool (a bulk import in time order,
    bench/recall.py's store): Postings.ranked's regular path. Else (as before 0.12.2) a
    month's days past the 28th fall back to its first ones: the path of a log written with
    --allow-past."""
    rnd = random.Random(seed)
    out = []
    for i in range(size):
        tpl = rnd.choice(JA if rnd.random() < 0.35 else EN)
        text = tpl.format(p=rnd.choice(PEOPLE), s=rnd.choice(SUBJECTS), n=rnd.randint(1, 99999), k=rnd.randint(1, 40))
        if regular:
            day = i * 336 // size
            at = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T10:00:00Z"
        else:
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
    ap.add_argument("--spread", action="store_true",
                    help="rank records spread over the pool (the first consolidate's shape), not its last")
    ap.add_argument("--regular", action="store_true", help="record times in pool order (see pool_of)")
    args = ap.parse_args()
    # (_SPARSE, _DENSE): shared keys counted by sorting the postings when they are few against
    # the records before the new one, else in a count array (8, the default), always sorting
    # (0), always in a count array (10**9); a common key's row added (16) or positions scattered
    ways = (("default", 8, 16), ("default, scattered", 8, 0), ("sorted", 0, 16),
            ("count array", 10**9, 16), ("count array, scattered", 10**9, 0))
    for size in (int(s) for s in args.sizes.split(",")):
        t = time.perf_counter()
        pool = pool_of(size, regular=args.regular)
        postings = Postings(pool)
        built = time.perf_counter() - t
        new = pool[::max(1, len(pool) // args.new)][-args.new:] if args.spread else pool[-args.new:]
        # the postings gathered for every key against those of the ranked records' keys only
        # (consolidate's ``wanted``, since 0.12.2), the keys given (as the key cache gives them)
        found = [postings._keys[m.id] for m in pool]
        given = lambda texts, derive, found=found: found  # noqa: E731
        gather: dict[str, list[float]] = {"every key": [], "the ranked records' keys": []}
        for _ in range(args.rounds):
            for label, wanted in (("every key", None), ("the ranked records' keys", [m.id for m in new])):
                t = time.perf_counter()
                Postings(pool, keyer=given, wanted=wanted)
                gather[label].append(time.perf_counter() - t)
        print(f"N={size:,}: postings gathered, median of {args.rounds}: "
              + ", ".join(f"for {w} {statistics.median(v):.2f} s" for w, v in gather.items()))
        times: dict[str, list[float]] = {way: [] for way, _s, _d in ways}
        answers: dict[str, list] = {}
        for _ in range(args.rounds):
            for way, sparse, dense in ways:
                candidates._SPARSE, candidates._DENSE = sparse, dense
                t = time.perf_counter()
                got = [[o.id for o in postings.ranked(n, 60)] for n in new]
                times[way].append((time.perf_counter() - t) / len(new))
                answers[way] = got
        candidates._SPARSE, candidates._DENSE = 8, 16
        same = all(a == answers["default"] for a in answers.values())
        per = {w: statistics.median(v) * 1e3 for w, v in times.items()}
        shape = ("spread over the pool" if args.spread else "the pool's last") + (", regular" if postings.regular else "")
        print(f"N={size:,}: pool and keys built in {built:.1f} s; ranking one new record's candidates "
              f"({len(new)} {shape}), median of {args.rounds}: "
              + ", ".join(f"{w} {t:.3f} ms" for w, t in per.items())
              + f"; same candidates: {same}")
        if not same:
            sys.exit("the two ways disagree")


if __name__ == "__main__":
    main()
