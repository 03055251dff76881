"""How often the update rules fire where they should not, and what they cost.

Runs memstore.beliefs over text that holds few or no real updates, the way consolidate
pairs them (each text against the earlier texts sharing a lookup key, at most 20, same
domain), and times the analysis:

- the year fixture's distinct remembered texts (no outcomes, no episodes), in order;
- the relevance set's memories (tests/data/relevance), every ordered pair.

    python bench/belief_lookalikes.py [--show N]
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
from collections import Counter
from pathlib import Path

from memstore.beliefs import frame, keys, relation

ROOT = Path(__file__).resolve().parent.parent


def year_rows() -> list[tuple[str, str | None]]:
    rows, seen = [], set()
    for line in (ROOT / "fixtures/year-2026/script.ms").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        tok = shlex.split(line.split(" ", 1)[1])
        if tok[0] != "remember":
            continue
        opts = dict(zip(tok[2::2], tok[3::2], strict=False))
        if opts.get("--outcome") or opts.get("--kind") in ("meeting", "incident", "deal") or tok[1] in seen:
            continue
        seen.add(tok[1])
        rows.append((tok[1], opts.get("--domain")))
    return rows


def year_verdicts(rows) -> list[tuple[str, str, str]]:
    postings: dict[str, list[int]] = {}
    found = []
    for i, (text, domain) in enumerate(rows):
        shared: Counter = Counter()
        for k in keys(text):
            shared.update(postings.get(k, ()))
        for j in sorted(shared, key=lambda j: (-shared[j], -j))[:20]:
            old, old_domain = rows[j]
            if old_domain == domain and (v := relation(old, text)) is not None:
                found.append((v.rule, old, text))
        for k in keys(text):
            postings.setdefault(k, []).append(i)
    return found


def relevance_verdicts() -> list[tuple[str, str, str]]:
    rows = [json.loads(line) for line in (ROOT / "tests/data/relevance/memories.jsonl").read_text().splitlines()]
    rows.sort(key=lambda m: m["now"])
    return [(v.rule, a["text"], b["text"]) for i, a in enumerate(rows) for b in rows[i + 1:]
            if (v := relation(a["text"], b["text"])) is not None]


def per_text_us(fn, texts: list[str]) -> float:
    fn.cache_clear()
    start = time.perf_counter()
    for t in texts:
        fn(t)
    return (time.perf_counter() - start) / len(texts) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=0, help="Print this many verdicts of each set.")
    args = ap.parse_args()
    rows = year_rows()
    texts = [t for t, _ in rows]
    print(f"analysis: frame {per_text_us(frame, texts):.0f} us a text, keys {per_text_us(keys, texts):.0f} us "
          f"({len(texts)} texts)")
    for name, found in (("year fixture", year_verdicts(rows)), ("relevance set", relevance_verdicts())):
        counts = Counter(rule for rule, _a, _b in found)
        size = f"{len(rows)} distinct notes" if name == "year fixture" else "every ordered pair"
        print(f"{name} ({size}): {len(found)} updates {dict(sorted(counts.items()))}")
        for rule, old, new in found[: args.show]:
            print(f"  {rule}: {old[:60]!r} -> {new[:60]!r}")


if __name__ == "__main__":
    main()
