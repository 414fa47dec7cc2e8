"""Before/after tables of ``bench/moments.py`` runs: the same tasks (matched by commit) in two runs of each repository.

    python bench/moments_compare.py NAME=BEFORE.json:AFTER.json [NAME=BEFORE.json:AFTER.json ...]

Prints, over every task of the pairs given: per moment and method, recall@5 / recall@10 / nDCG@10 / ≥1 relevant in
the top 5, before and after (means over the tasks; the baselines' code does not change between runs, so their rows
repeat and show the task sets match); per task after, how often context's nDCG@10 beats, ties or trails "files,
newest" (before the edit and mid-task) and BM25 (prompt only); then one row per repository: context's recall@10 /
nDCG@10 before → after at each moment, with the baseline's after figures in brackets. Run it once per group of
repositories to compare (bench/README.md, "Issue 25: the moments benchmark, after").
"""

from __future__ import annotations

import json
import sys
from typing import Any

METRICS = ("recall@5", "recall@10", "ndcg@10", "hit@5")
MOMENTS = (("mid-task", "files, newest"), ("before edit", "files, newest"), ("prompt only", "bm25"))


def _load(path: str) -> dict[str, Any]:
    return {q["sha"]: q for q in json.load(open(path))["queries"]}


def _mean(queries: list[dict[str, Any]], moment: str, method: str, metric: str) -> float:
    return sum(q["moments"][moment]["metrics"][method][metric] for q in queries) / len(queries)


def _fmt(values: list[float]) -> str:
    return " / ".join(f"{v:.3f}" if i < 3 else f"{v:.2f}" for i, v in enumerate(values))


def main(argv: list[str]) -> int:
    pairs = []
    for arg in argv:
        name, _, files = arg.partition("=")
        before, _, after = files.partition(":")
        if not (name and before and after):
            raise SystemExit(f"not NAME=BEFORE.json:AFTER.json: {arg}")
        b, a = _load(before), _load(after)
        shared = [s for s in b if s in a]
        pairs.append((name, [b[s] for s in shared], [a[s] for s in shared]))
    before = [q for _, b, _ in pairs for q in b]
    after = [q for _, _, a in pairs for q in a]
    print(f"{len(after)} tasks ({', '.join(n for n, _, _ in pairs)}): recall@5 / recall@10 / nDCG@10 / ≥1 in top 5\n")
    print("| moment | method | before | after |\n| --- | --- | --- | --- |")
    for moment, _ in MOMENTS:
        for method in ("context", "files, newest", "bm25", "newest"):
            if method not in after[0]["moments"][moment]["metrics"] or (method == "newest" and moment != "mid-task"):
                continue
            bold = "**" if method == "context" else ""
            bv = [_mean(before, moment, method, k) for k in METRICS]
            av = [_mean(after, moment, method, k) for k in METRICS]
            print(f"| {moment} | {bold}{method}{bold} | {_fmt(bv)} | {bold}{_fmt(av)}{bold} |")
    print()
    for moment, base in MOMENTS:
        c = [q["moments"][moment]["metrics"] for q in after]
        better = sum(m["context"]["ndcg@10"] > m[base]["ndcg@10"] + 1e-9 for m in c)
        worse = sum(m["context"]["ndcg@10"] < m[base]["ndcg@10"] - 1e-9 for m in c)
        print(f"{moment}: context vs {base}, nDCG@10 per task after: better {better}, same {len(c) - better - worse}, "
              f"worse {worse}")
    print("\n| repository | mid-task | before edit (files, newest after) | prompt only (bm25 after) |\n"
          "| --- | --- | --- | --- |")
    for name, b, a in pairs:
        cells = []
        for moment, base in MOMENTS:
            x = [_mean(b, moment, "context", k) for k in ("recall@10", "ndcg@10")]
            y = [_mean(a, moment, "context", k) for k in ("recall@10", "ndcg@10")]
            cell = f"{x[0]:.3f} / {x[1]:.3f} → {y[0]:.3f} / {y[1]:.3f}"
            if moment != "mid-task":
                z = [_mean(a, moment, base, k) for k in ("recall@10", "ndcg@10")]
                cell += f" ({z[0]:.3f} / {z[1]:.3f})"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
