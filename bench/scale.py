"""Scale benchmark: gitmem with 1k, 10k and 100k memories anchored to a real repository's symbols.

For each size N it builds (once, cached under ``--work``) a clone of ``--repo``
with N generated memories committed in ``.gitmem/memories/`` (anchored to the
repository's real symbols, as bench/hooks.py does), then measures:

* full rebuild: hook index (SQLite mirror + statuses of every memory) and
  the search's vectors in it (``search.hybrid.update``) from nothing, in a fresh process; its peak RSS;
* incremental sync after a pull that changed 100 memory files (a fast-forward
  merge of a branch editing 100 of them), in-process: what the next query does
  (a quick catalog refresh + ``search.hybrid.update`` following its change log) and what
  ``gitmem sync`` does in-process (every file stat-ed, statuses re-checked);
* ``recall`` (hybrid search), ``context`` for one anchored file (with and
  without a prompt) and ``stale`` (``not_fresh``) in a warm process (model
  loaded, index open), median of ``--runs``;
* the post-commit hook for a commit changing one function in each of 10
  anchored files: ``git commit`` wall time with gitmem's post-commit shim (as
  ``gitmem hooks install`` writes it) minus the same commit with
  ``core.hooksPath`` pointing at an empty folder, interleaved run by run (whole
  process: shim, interpreter, imports, analysis, hook-index update), and
  ``python -c pass`` beside them (the ratio holds on a busy machine);
* the catalog's size on disk (its search vectors included) and the peak RSS of the query process.

    python bench/scale.py [--repo PATH] [--sizes 1000,10000,100000] [--runs 7] [--work DIR] [--json]
        [--skip-rebuild] [--only rebuild,sync,queries,post-commit]

Builds take minutes at 100k (writing and committing 100,000 files); they are cached.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: Prose words of the generated memories, besides the anchored code's own identifier parts. Words are
#: drawn with Zipf weights (1/rank), so a few are common and most are rare, as in real text: with a
#: small uniform vocabulary every memory holds every word and full-text search degenerates.
PROSE = ("the a is to of and in for on with not when after before because so but it this that we our "
         "cache retry timeout parser config index token budget anchor session commit merge branch schema "
         "migration lock queue worker fingerprint symbol rename spool redact gateway request response "
         "error exception fails crash slow fast memory leak thread async await deadlock race retries backoff "
         "limit quota rate header cookie auth login logout user admin role permission token refresh expire "
         "database query transaction rollback index scan join table column row null default value type "
         "string number integer float date time zone locale encoding utf unicode bytes buffer stream file "
         "path directory symlink permission mode owner build test flaky mock fixture coverage lint format "
         "deploy release version tag changelog breaking deprecated compatible legacy upgrade downgrade "
         "config flag option env variable secret key certificate tls proxy dns host port socket "
         "parse serialize json yaml toml csv xml html markdown template render escape sanitize validate "
         "schema field required optional enum union list dict map set queue stack heap tree graph "
         "sort search filter group count sum average median percentile latency throughput p99 batch "
         "chunk page cursor offset window shard replica leader follower quorum consensus election "
         "cache hit miss evict ttl warm cold invalidate stale fresh consistent eventual idempotent").split()
QUERIES_PER_RUN = 12


def vocabulary(symbols: list[str]) -> list[str]:
    """Prose words, then the identifier parts of the anchored symbols (``textsplit.split_identifiers``)."""
    from gitmem.textsplit import split_identifiers

    parts = [w.lower() for s in symbols for w in split_identifiers(s).split() if len(w) > 2 and w.isalpha()]
    return list(dict.fromkeys([*PROSE, *parts]))


def zipf_words(rnd: random.Random, vocab: list[str], k: int) -> list[str]:
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    return rnd.choices(vocab, weights=weights, k=k)
READY = ".git/bench-scale-ready"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def build(repo: Path, work: Path, n: int, seed: int = 1) -> Path:
    """Clone ``repo`` into ``work/repo-N`` and commit ``n`` memories anchored to its symbols (cached)."""
    from gitmem.infra import utc_now
    from gitmem.memfile import dumps
    from gitmem.model import Memory
    from gitmem.store import new_id

    target = work / f"repo-{n}"
    if (target / READY).exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    from hooks import clone_with_anchors  # bench/hooks.py: the same clone and symbols

    _, store, anchors = clone_with_anchors(repo, target, lambda p: "fixtures" in p)
    rnd = random.Random(seed)
    vocab = vocabulary([a.symbol or "" for a in anchors])
    rnd.shuffle(vocab)  # which words are common is random, not "prose first"
    print(f"[{n}] {len(anchors)} symbols to anchor to, {len(vocab)} words; writing {n} memories", file=sys.stderr)
    now = utc_now()
    for i in range(n):
        a = rnd.choice(anchors)
        m = Memory(id=new_id(), type=rnd.choice(("decision", "gotcha", "constraint", "discovery", "change")),
                   title=f"{a.symbol}: {' '.join(zipf_words(rnd, vocab, 6))} #{i}",
                   body=" ".join(zipf_words(rnd, vocab, 30)),
                   anchors=[a], author="bench", source="user", created=now, updated=now)
        store.path_for(m).write_text(dumps(m), encoding="utf-8")
        if i and i % 10000 == 0:
            print(f"[{n}] {i} written", file=sys.stderr)
    git(target, "add", "-A", ".gitmem")
    git(target, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"{n} memories")
    (target / READY).write_text("ok")
    return target


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _embedder(store):  # type: ignore[no-untyped-def]
    """The configured embedder, its model loaded (once per process)."""
    from gitmem.search.embed import embedder_from_config

    emb = embedder_from_config(dict(store.config.get("embeddings", {})))
    if emb is not None:
        emb.embed(["warm up"])
    return emb


def _update_vectors(store):  # type: ignore[no-untyped-def]
    """What a query does first: a quick catalog refresh, then ``search.hybrid.update`` (its change log)."""
    from gitmem.catalog.files import open_current
    from gitmem.search import hybrid

    con = open_current(store)
    assert con is not None
    try:
        return hybrid.update(con, _embedder(store))
    finally:
        con.close()


def worker(kind: str, root: Path, runs: int) -> dict:
    """Measurements made inside one process (``--_worker KIND ROOT``)."""
    from gitmem.catalog import db as catalog_db
    from gitmem.git import Repo
    from gitmem.store import Store

    store = Store(Repo(root))
    store.enable_symbol_cache()
    out: dict = {}
    if kind == "rebuild":
        from gitmem.catalog.sync import sync_hook_index

        for suffix in ("", "-wal", "-shm"):
            Path(str(catalog_db.db_path(root)) + suffix).unlink(missing_ok=True)
        shutil.rmtree(store.layout.index_dir, ignore_errors=True)  # an older gitmem's LanceDB index
        t = time.perf_counter()
        sync_hook_index(store)
        out["hook_index_s"] = time.perf_counter() - t
        t = time.perf_counter()
        res = _update_vectors(store)
        out["vectors_s"] = time.perf_counter() - t
        out["vectors_rows"] = res.added
    elif kind == "queries":
        from gitmem.catalog.sync import not_fresh
        from gitmem.ops.context import build_context
        from gitmem.search.lexical import hybrid_recall as recall

        con = catalog_db.connect(root)
        assert con is not None
        files = sorted(p for p in catalog_db.anchored_paths(con) if (root / p).is_file())
        con.close()
        rnd = random.Random(3)
        titles = [m["title"] for m in catalog_db.full_memories(con, catalog_db.recent_ids(con, 500))] \
            if (con := catalog_db.connect(root)) else []
        if con is not None:
            con.close()
        # queries: 3 words of a memory's title, as a user would half-remember them
        queries = [" ".join(rnd.sample(t.split(":", 1)[-1].split("#")[0].split(), 3)) for t in
                   rnd.sample(titles, min(QUERIES_PER_RUN, len(titles)))] or ["cache retry timeout"]
        recall(store, "warm up")
        build_context(store, files=[files[0]], cwd=str(root), prompt="warm up")
        not_fresh(store)
        for name, fn in (
                ("recall_ms", lambda i: recall(store, queries[i % len(queries)])),
                ("context_ms", lambda i: build_context(store, files=[rnd.choice(files)], cwd=str(root))),
                ("context_prompt_ms", lambda i: build_context(store, files=[rnd.choice(files)], cwd=str(root),
                                                              prompt=queries[i % len(queries)])),
                ("stale_ms", lambda i: not_fresh(store))):
            ts = []
            for i in range(runs):
                t = time.perf_counter()
                fn(i)
                ts.append((time.perf_counter() - t) * 1000)
            out[name] = statistics.median(ts)
    elif kind in ("sync_query", "sync_full"):
        _embedder(store)  # the model loads once per process, not per sync
        if kind == "sync_query":
            t = time.perf_counter()
            res = _update_vectors(store)
            out["ms"] = (time.perf_counter() - t) * 1000
            out["updated"] = res.added + res.updated
        else:
            from gitmem.catalog.sync import sync_hook_index

            t = time.perf_counter()
            rep = sync_hook_index(store, full=True)
            _update_vectors(store)
            out["ms"] = (time.perf_counter() - t) * 1000
            out["updated"] = rep.written
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_worker(kind: str, root: Path, runs: int = 1) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--_worker", kind, str(root), "--runs", str(runs)],
                          capture_output=True, text=True, env={**os.environ, "LANCEDB_LOG": "error"})
    if proc.returncode != 0:
        raise SystemExit(f"worker {kind} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def pull_sync(root: Path, runs: int) -> dict:
    """Incremental sync after a fast-forward 'pull' that changed 100 memory files."""
    base = git(root, "rev-parse", "HEAD")
    mems = sorted((root / ".gitmem" / "memories").glob("*.md"))[:100]
    git(root, "checkout", "-q", "-B", "bench-upstream")
    for p in mems:
        p.write_text(p.read_text(encoding="utf-8").rstrip("\n") + "\n\nedited upstream.\n", encoding="utf-8")
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "upstream edits 100 memories")
    git(root, "checkout", "-q", "-")
    res: dict[str, list[float]] = {"sync_query_ms": [], "sync_full_ms": []}
    for i in range(runs):
        kind = "sync_query" if i % 2 == 0 else "sync_full"
        git(root, "-c", "core.hooksPath=/dev/null", "reset", "-q", "--hard", base)
        run_worker("sync_full", root)  # everything current at the base
        git(root, "-c", "core.hooksPath=/dev/null", "merge", "-q", "--ff-only", "bench-upstream")
        got = run_worker(kind, root)
        assert got["updated"] == 100, got
        res[f"{kind}_ms"].append(got["ms"])
    git(root, "-c", "core.hooksPath=/dev/null", "reset", "-q", "--hard", base)
    run_worker("sync_full", root)
    return {k: statistics.median(v) for k, v in res.items() if v}


def post_commit(root: Path, runs: int) -> dict:
    """``git commit`` of a change to one function in each of 10 anchored files: with gitmem's hooks vs none."""
    from gitmem.catalog import db as catalog_db

    con = catalog_db.connect(root)
    assert con is not None
    files = sorted(p for p in catalog_db.anchored_paths(con) if p.endswith(".py") and (root / p).is_file())
    con.close()
    files = files[:10]
    gitmem = shutil.which("gitmem", path=str(Path(sys.executable).parent)) or "gitmem"
    subprocess.run([gitmem, "hooks", "install"], cwd=root, check=True, capture_output=True)
    empty = root / ".git" / "no-hooks"
    empty.mkdir(exist_ok=True)
    only = root / ".git" / "post-commit-only"  # the post-commit shim alone (no pre-commit process in the timing)
    only.mkdir(exist_ok=True)
    shutil.copy2(root / ".git" / "hooks" / "post-commit", only / "post-commit")
    with_hook, without, bare_python = [], [], []
    for i in range(runs * 2):
        for f in files:
            p = root / f
            text = p.read_text(encoding="utf-8")
            # change a token inside the first function body: its anchored memories go stale
            text = re.sub(r"(\n    return )", rf"\n    _bench = {i}\1", text, count=1) if "_bench = " not in text \
                else re.sub(r"_bench = \d+", f"_bench = {i}", text, count=1)
            if text == p.read_text(encoding="utf-8"):
                text += f"# bench {i}\n"
            p.write_text(text, encoding="utf-8")
        git(root, "add", *files)
        argv = ["git", "-c", f"core.hooksPath={empty if i % 2 else only}", "commit", "-q", "-m", f"bench {i}"]
        t = time.perf_counter()
        subprocess.run(argv, cwd=root, check=True, capture_output=True)
        (without if i % 2 else with_hook).append((time.perf_counter() - t) * 1000)
        if i % 2:  # as in real use, every commit had its post-commit run (untimed): the parent is analysed
            subprocess.run(["sh", str(only / "post-commit")], cwd=root, check=True, capture_output=True)
        t = time.perf_counter()  # the yardstick, measured side by side: a busy machine slows both
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare_python.append((time.perf_counter() - t) * 1000)
    subprocess.run([gitmem, "hooks", "uninstall"], cwd=root, check=True, capture_output=True)
    hook = statistics.median(with_hook) - statistics.median(without)
    return {"commit_with_post_commit_ms": statistics.median(with_hook), "commit_without_ms": statistics.median(without),
            "post_commit_ms": hook, "python_pass_ms": statistics.median(bare_python),
            "post_commit_x_python": hook / statistics.median(bare_python)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-scale"))
    ap.add_argument("--skip-rebuild", action="store_true", help="reuse the indexes built by an earlier run")
    ap.add_argument("--only", default="rebuild,sync,queries,post-commit",
                    help="what to measure, of rebuild,sync,queries,post-commit (default: all)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--_worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._worker:
        print(json.dumps(worker(args._worker[0], Path(args._worker[1]), args.runs)))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    import compileall

    import gitmem

    compileall.compile_dir(str(Path(gitmem.__file__).parent), quiet=1)  # as pip install leaves it
    results = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        root = build(args.repo.resolve(), args.work, n)
        row: dict = {"memories": n}
        from gitmem import layout

        only = set(args.only.split(","))
        if ("rebuild" in only and not args.skip_rebuild) or not layout.of(root).catalog_file.exists():
            print(f"[{n}] full rebuild", file=sys.stderr)
            rb = run_worker("rebuild", root)
            row.update(rebuild_hook_index_s=rb["hook_index_s"], rebuild_vectors_s=rb["vectors_s"],
                       rebuild_peak_rss_mb=rb["peak_rss_mb"])
        if "sync" in only:
            print(f"[{n}] pull + sync", file=sys.stderr)
            row.update(pull_sync(root, max(4, args.runs // 2 * 2)))
        if "queries" in only:
            print(f"[{n}] queries", file=sys.stderr)
            q = run_worker("queries", root, args.runs)
            row.update({k: v for k, v in q.items() if k != "peak_rss_mb"}, query_peak_rss_mb=q["peak_rss_mb"])
        if "post-commit" in only:
            print(f"[{n}] post-commit", file=sys.stderr)
            row.update(post_commit(root, args.runs))
        row["hooks_sqlite_mb"] = du(layout.of(root).catalog_file) / 1e6
        row["memory_files_mb"] = du(root / ".gitmem" / "memories") / 1e6
        results[n] = row
        print(json.dumps(row), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    keys = [k for k in next(iter(results.values())) if k != "memories"]
    print("| measure | " + " | ".join(f"{n:,}" for n in results) + " |")
    print("| --- |" + " --- |" * len(results))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{r.get(k, float('nan')):.1f}" for r in results.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
