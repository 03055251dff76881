"""Retrieval quality without an LLM judge: recall@k, hit@k and MRR over labelled questions."""

from __future__ import annotations

KS = (1, 5, 10, 20)


def score_one(ranked: list[str], expected: list[str]) -> dict:
    want = set(expected)
    first = next((i for i, r in enumerate(ranked, start=1) if r in want), None)
    row = {"rr": 1.0 / first if first else 0.0}
    for k in KS:
        got = want.intersection(ranked[:k])
        row[f"recall@{k}"] = len(got) / len(want) if want else 0.0
        row[f"hit@{k}"] = 1.0 if got else 0.0
    return row


def summarise(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"questions": 0}
    out = {"questions": n, "mrr": round(sum(r["rr"] for r in rows) / n, 4)}
    for k in KS:
        out[f"recall@{k}"] = round(sum(r[f"recall@{k}"] for r in rows) / n, 4)
        out[f"hit@{k}"] = round(sum(r[f"hit@{k}"] for r in rows) / n, 4)
    return out
