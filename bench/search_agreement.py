"""How closely the hybrid search without LanceDB (``search.lexical.hybrid_recall``: the catalog's BM25 tables +
exact cosine over the catalog's vectors, RRF) reproduces the LanceDB hybrid it replaced (``search.recall.recall``:
LanceDB's BM25 + vectors, RRF), on a repository with memories (e.g. ``bench/cli.py``'s ``repo-1000``; it is
searched, never modified beyond the derived index and catalog).

Queries: six prompts written for the bench's memories plus ``--random`` draws of 1-4 words of their vocabulary
(``random.Random(7)``). Per query: the overlap of the two top 10s, whether the first hit is the same, whether the
top 10 is identical. The vector side alone is equal (tests/test_search_hybrid.py); what differs is BM25 (FTS5's
Porter stemmer and IDF against LanceDB's), mostly among ties of the generated memories' few words.

    python bench/search_agreement.py REPO [--random 24]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROMPTS = ["retry timeout for the gateway", "change how the retry timeout of the config is parsed",
           "how do we redact tokens in the spool", "why does the session lock time out",
           "exponential backoff when upstream is slow", "where are secrets scrubbed before writing"]
WORDS = ("retry timeout gateway session queue lock fingerprint cache worker redact token spool migration schema "
         "rename config parser anchor symbol index branch budget commit").split()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--random", type=int, default=24)
    args = ap.parse_args()
    os.environ["GITMEM_NO_DAEMON"] = "1"
    from gitmem.git import Repo
    from gitmem.search import lexical
    from gitmem.search.recall import recall as lancedb_recall
    from gitmem.store import Store

    store = Store(Repo(str(args.repo.resolve())))
    rnd = random.Random(7)
    queries = PROMPTS + [" ".join(rnd.sample(WORDS, rnd.randint(1, 4))) for _ in range(args.random)]
    overlap = same_first = identical = 0
    for q in queries:
        old = [h.memory.id for h in lancedb_recall(store, q, 10)]
        new = [h.memory.id for h in lexical.hybrid_recall(store, q, 10)]
        o = len(set(old) & set(new))
        overlap += o
        same_first += old[:1] == new[:1]
        identical += old == new
        print(f"{o:2d}/10  first {'same' if old[:1] == new[:1] else 'differs'}  {q}")
    n = len(queries)
    print(f"{n} queries: top-10 overlap {overlap / n:.2f}/10 on average, the same first hit {same_first}/{n}, "
          f"identical top 10 {identical}/{n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
