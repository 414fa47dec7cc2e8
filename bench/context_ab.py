"""``context`` and ``stale`` in-process on one bench repository, for A/B runs of two builds on identical copies.

Times ``ops.context.build_context`` for ``--queries`` files drawn with a seed from the catalog's anchored paths
(without a prompt) and ``catalog.sync.not_fresh`` after each, in one process after a warm-up call of each, and
prints their medians in ms. Run it once per build, each on its own copy of the same repository (the catalog is
written), alternating builds:

    cp -a REPO /tmp/copyA; cp -a REPO /tmp/copyB
    PYTHONPATH=BEFORE_SRC python bench/context_ab.py /tmp/copyA
    PYTHONPATH=AFTER_SRC  python bench/context_ab.py /tmp/copyB

REPO is a repository ``bench/scale.py`` built (``--work DIR``: ``DIR/repo-1000``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    from gitmem.catalog import db as catalog_db
    from gitmem.catalog.sync import not_fresh
    from gitmem.git import Repo
    from gitmem.ops.context import build_context
    from gitmem.store import Store

    root = args.repo.resolve()
    store = Store(Repo(root))
    con = catalog_db.connect(root)
    assert con is not None, f"no catalog in {root}"
    files = sorted(p for p in catalog_db.anchored_paths(con) if (root / p).is_file())
    con.close()
    build_context(store, files=[files[0]], cwd=str(root))
    not_fresh(store)
    rnd = random.Random(args.seed)
    ctx: list[float] = []
    stale: list[float] = []
    for _ in range(args.queries):
        f = rnd.choice(files)
        t = time.perf_counter()
        build_context(store, files=[f], cwd=str(root))
        ctx.append(time.perf_counter() - t)
        t = time.perf_counter()
        not_fresh(store)
        stale.append(time.perf_counter() - t)
    print(f"context {statistics.median(ctx) * 1000:.1f} ms  stale {statistics.median(stale) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
