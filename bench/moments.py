"""The moments of a task (issue 25 item 5): which memories gitmem gives mid-task, before the first edit and from
the prompt alone, side by side with "newest first", BM25 and "all memories of the files, newest first"; and what
``gitmem context`` costs as a whole process, as a ratio to ``python -c pass`` measured in the same run.

Built on ``bench/retrieval.py`` (its docstring defines the history, memories and relevance; this module imports
its helpers): every commit is a memory, its message the text, anchored at that commit to the symbols it changed;
for a task commit C the store holds the memories of the last ``--window`` non-merge commits before C (never C's
own); **relevant** = the memories anchored to a symbol C changes (changed, added or deleted). Task commits:
``retrieval.eligibility``'s, drawn in a ``random.Random(seed)`` order until ``--queries`` of them have every
blob of C's and C^'s trees in REPO (``complete``: a fetched mirror may lack its largest files), run oldest
first. The history is a scratch clone of REPO (at ``--head``) cut to its last ``--history`` commits
(``cut_history``, so a run stays short; the boundary commits count as root commits); REPO is only read. C's
message is the prompt at every moment.

The three moments of C, each a state of the scratch clone (HEAD detached at C's first parent):

1. **mid-task**: C's tree restored into the working tree, uncommitted (what ``retrieval.py`` measures): gitmem
   sees C's diff and the prompt: ``build_context(store, prompt=message)``.
2. **before the first edit**: a clean tree; the files C touches that exist at C^ (modified, deleted, or the old
   path of a rename; at most ``MAX_FILES``) given as focus, as ``gitmem context --file F … --prompt P`` gives
   them (``build_context(store, files=…, prompt=message)``, what that command runs). A commit that only adds
   files has no such file: it is left out of this moment (counted).
3. **prompt only**: a clean tree, no file: ``build_context(store, prompt=message)``.

Methods, each a full ranking of the memories of C's window:

* **context**: ``ContextResult.ranked``, the order ``gitmem context`` packs from (memories with no proximity or
  text relevance are not ranked at all).
* **newest**: every memory, newest first (``memories.list_memories``; the same at every moment).
* **bm25**: ``search.lexical.search`` of the prompt: the catalog's FTS5 BM25 over memory titles and text (what a
  lean install searches with; the same at every moment: it sees only the prompt).
* **files, newest**: the memories with an anchor on one of the moment's files, newest first. Moment 1: the files
  C changes (the dirty files, old and new paths); moment 2: the files given; moment 3 has no files, so no such
  baseline.

Metrics per query, then means over the queries (per repository, and over every query of every repository):
recall@5, recall@10, nDCG@10 (binary gains; ``retrieval.recall_at`` / ``ndcg_at``) and hit@5 (≥ 1 relevant
memory in the top five). The "(ideal ranking)" row is the ceiling: every relevant memory first (recall@k is
below 1 when a task has more than k relevant memories).

Latency (``--latency N``: the first N queries drawn, after every ranking of the repository is done, because
the command records what it gave): each moment's state is set up again and three programs are run, interleaved,
``--rounds`` times: ``python -c pass``; ``gitmem context [--file F …] --prompt P --json`` cold (its own process
does the work, ``GITMEM_NO_DAEMON=1``); the same warm (a warm process of this run, in a private
``GITMEM_RUN_DIR``, is up; one untimed warm call per state first, so the warm process has synced the store).
Reported: medians and each median's ratio to ``python -c pass``'s median. The first command of the run (an
untimed cold one) is checked to show the in-process ranking's top five (``agree``); later ones are not compared:
each ``gitmem context`` records what it gave, and a memory used now no longer fades (``usage.fading``), so the
order moves once the command has run.

Where the ground truth favours gitmem: relevance is "anchored to a symbol C changes", which is the signal
gitmem's proximity ranking uses. Mid-task, gitmem sees C's changed symbols themselves, so its recall is close
to the ideal by construction. Before the first edit and from the prompt alone it does not see them (only the
files, or only the words), so those moments measure how well gitmem guesses the task's symbols, against
baselines that see the same inputs; "files, newest" has exactly the files gitmem has.

Run it
------
    python bench/moments.py REPO [--name NAME] [--head SHA] [--queries 30] [--window 300] [--history 800]
        [--seed 1] [--latency 4] [--rounds 2] [--out FILE.json]
    python bench/moments.py --report FILE.json ...     # the markdown tables of several runs

Progress on stderr; ``--out`` writes the run (per-query ranks and metrics, latency rows) as JSON; without it
the run's tables are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's root: `bench.*` (never bench/ itself: bench/mcp.py is not mcp)

from bench.retrieval import (  # noqa: E402 - bench/retrieval.py: history, memories, relevance, metrics
    Commit,
    _git,
    commit_memory,
    diffed_history,
    eligibility,
    ndcg_at,
    progress,
    recall_at,
)
from gitmem.anchors import Resolver  # noqa: E402
from gitmem.errors import GitError  # noqa: E402
from gitmem.git import Repo  # noqa: E402
from gitmem.memories import list_memories, write  # noqa: E402
from gitmem.model import Memory  # noqa: E402
from gitmem.ops.context import build_context  # noqa: E402
from gitmem.search import lexical  # noqa: E402
from gitmem.store import Store, init_layout  # noqa: E402

MOMENTS = ("mid-task", "before edit", "prompt only")
METHODS = ("context", "newest", "bm25", "files, newest")
METRICS = ("recall@5", "recall@10", "ndcg@10", "hit@5")
#: Files given with ``--file`` before the first edit, at most (in path order).
MAX_FILES = 20


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    """recall@5, recall@10, nDCG@10 and hit@5 (1.0 when a relevant id is in the first five) of ``ranked``
    (ids, best first) against ``relevant`` (a non-empty set of ids)."""
    return {"recall@5": recall_at(ranked, relevant, 5), "recall@10": recall_at(ranked, relevant, 10),
            "ndcg@10": ndcg_at(ranked, relevant, 10),
            "hit@5": 1.0 if relevant & set(ranked[:5]) else 0.0}


def on_files(newest: list[Memory], files: set[str]) -> list[str]:
    """Ids of the memories (given newest first) with an anchor on one of ``files``, newest first."""
    return [m.id for m in newest if any(a.path in files for a in m.anchors)]


def touched(repo: Repo, c: Commit) -> tuple[set[str], list[str]]:
    """(every path C changes, old and new; the paths C changes that exist at C^, sorted, at most ``MAX_FILES``)."""
    changes = repo.changed_files(c.parents[0], c.sha)
    every = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
    before = sorted({ch.old_path for ch in changes if ch.old_path})
    return every, before[:MAX_FILES]


def set_state(clone: Path, c: Commit, moment: str) -> None:
    """The scratch clone at ``moment`` of task C: HEAD detached at C^, and C's tree in the working tree mid-task."""
    _git(clone, "checkout", "-q", "-f", "--detach", c.parents[0])
    _git(clone, "clean", "-q", "-f", "-d")
    if moment == "mid-task":
        _git(clone, "restore", f"--source={c.sha}", "--worktree", "--", ":/")


def complete(clone: Path, c: Commit) -> bool:
    """Whether every blob of C's and C^'s trees is in the clone (a fetched mirror may lack its largest files:
    checking C^ out would fail)."""
    blobs = {line.split()[2] for rev in (c.parents[0], c.sha)
             for line in _git(clone, "ls-tree", "-r", rev).splitlines() if line.split()[1] == "blob"}
    out = _git(clone, "cat-file", "--batch-check", input="".join(f"{b}\n" for b in blobs).encode())
    return " missing" not in out


def cut_history(clone: Path, n: int) -> None:
    """Keep only the last ``n`` commits of HEAD's history in the clone at ``clone``: those of them with a parent
    outside go to ``.git/shallow`` (git then treats them as root commits, as in a ``--depth`` clone, whose
    upload-pack reads every object of the cut and fails on a mirror missing one; older objects are never read)."""
    keep = _git(clone, "rev-list", f"--max-count={n}", "HEAD").split()
    inside = set(keep)
    parents = _git(clone, "rev-list", "--parents", "--no-walk", *keep).splitlines() if keep else []
    cut = [line.split()[0] for line in parents if any(p not in inside for p in line.split()[1:])]
    (clone / ".git" / "shallow").write_text("".join(f"{c}\n" for c in cut), "ascii")


def cached_history(repo: Repo, resolver: Resolver, cache: Path | None, name: str) -> list[Commit]:
    """``diffed_history`` of the clone, read from or written to ``cache`` (a folder; None: no cache) under a
    key of HEAD's SHA and the shallow boundary (the history's cut): diffing 800 commits parses every changed
    file twice (minutes); the result depends only on the commits and gitmem's parsers, so a cache is only for
    iterating on the ranking (delete it when the analyzer changes)."""
    import hashlib
    from dataclasses import asdict

    key = hashlib.sha1(((repo.head() or "") + _shallow(repo.root)).encode()).hexdigest()[:16]
    path = cache / f"history-{key}.json" if cache else None
    if path is not None and path.is_file():
        rows = json.loads(path.read_text("utf-8"))
        return [Commit(**{**r, "changed": [tuple(x) for x in r["changed"]],
                          "removed": [tuple(x) for x in r["removed"]]}) for r in rows]
    history = diffed_history(repo, resolver, every=100, label=f"{name}: ")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([asdict(c) for c in history]), "utf-8")
    return history


def _shallow(root: Path) -> str:
    """The text of the clone's ``.git/shallow`` ("" when the history is whole)."""
    f = root / ".git" / "shallow"
    return f.read_text("ascii") if f.is_file() else ""


def run(repo_path: str, name: str, n_queries: int, window: int, history_depth: int, seed: int,
        n_latency: int, rounds: int, at: str | None = None, cache: Path | None = None,
        moments: tuple[str, ...] = MOMENTS) -> dict[str, Any]:
    """One repository's run (module docstring): a JSON-able dict with ``queries`` (per query and moment, the
    relevant ids' ranks and the metrics of each method) and ``latency`` rows. ``cache``: a folder for the
    diffed history (``cached_history``); ``moments``: the moments measured (default all three; the others are
    left out of the run, recorded as None)."""
    import random

    t_start = time.perf_counter()
    src = str(Path(repo_path).resolve())
    with tempfile.TemporaryDirectory(prefix="gitmem-moments-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", src, str(clone)], check=True)
        if at:
            _git(clone, "reset", "-q", "--hard", at)  # the same history whatever REPO's branch has become since
        if history_depth:
            cut_history(clone, history_depth)
        with open(clone / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
            f.write("\n/.gitmem/\n")  # the store is no code in focus (gitmem skips it anyway)
        repo = Repo(clone)
        init_layout(repo)
        store = Store(repo)
        store.enable_symbol_cache()
        resolver = Resolver(repo)
        head = repo.head() or ""

        t = time.perf_counter()
        history = cached_history(repo, resolver, cache, name)
        by_sha = {c.sha: c for c in history}
        t_diff = time.perf_counter() - t
        skipped, eligible = eligibility(clone, history, window)
        order = list(range(len(eligible)))
        random.Random(seed).shuffle(order)
        chosen: list[int] = []
        for ei in order:  # drawn in a seeded order until there are enough whose trees the mirror holds whole
            if len(chosen) == n_queries:
                break
            if complete(clone, eligible[ei][0]):
                chosen.append(ei)
            else:
                skipped["a blob missing from REPO"] = skipped.get("a blob missing from REPO", 0) + 1
        chosen.sort()
        progress(f"{name}: {len(history)} commits, {len(eligible)} eligible, {len(chosen)} queries; skipped {skipped}")

        made: dict[str, Memory] = {}
        present: set[str] = set()

        def load_window(before: list[str]) -> None:
            nonlocal present
            for s in before:
                if s not in made:
                    made[s] = commit_memory(store, resolver, by_sha[s])
            want = {made[s].id for s in before}
            write(store, [made[s] for s in before if made[s].id not in present], removed=sorted(present - want))
            present = want

        queries: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        t_ctx: dict[str, list[float]] = {m: [] for m in MOMENTS}
        for qi, ei in enumerate(chosen, 1):
            c, before, rel_shas = eligible[ei]
            load_window(before)
            relevant = {made[s].id for s in rel_shas}
            every, given = touched(repo, c)
            prompt = c.message
            newest = list_memories(Store(Repo(clone)))
            newest_ids = [m.id for m in newest]
            bm25_ids = [mid for mid, _ in lexical.search(Store(Repo(clone)), prompt, len(before))]
            q: dict[str, Any] = {"sha": c.sha, "subject": c.message.splitlines()[0] if c.message else "",
                                 "memories": len(before), "relevant": sorted(relevant), "files_given": given,
                                 "moments": {}}
            for moment in MOMENTS:
                if moment not in moments:
                    q["moments"][moment] = None
                    continue
                if moment == "before edit" and not given:
                    q["moments"][moment] = None  # C only adds files: nothing to name before the first edit
                    continue
                set_state(clone, c, moment)
                files = given if moment == "before edit" else []
                t = time.perf_counter()
                try:
                    res = build_context(Store(Repo(clone)), files=files, prompt=prompt, cwd=str(clone))
                except GitError as e:  # an anchor's commit holds a blob the mirror lacks (statuses diff it)
                    q["failed"] = f"{moment}: {e}"
                    break
                t_ctx[moment].append(time.perf_counter() - t)
                ranked = {"context": [s.memory.id for s in res.ranked], "newest": newest_ids, "bm25": bm25_ids}
                if moment != "prompt only":
                    ranked["files, newest"] = on_files(newest, every if moment == "mid-task" else set(given))
                row: dict[str, Any] = {"focus_symbols": len(res.focus.symbols), "metrics": {}, "ranks": {}}
                for method, ids in ranked.items():
                    pos = {mid: i for i, mid in enumerate(ids, 1)}
                    row["metrics"][method] = metrics(ids, relevant)
                    row["ranks"][method] = {mid: pos.get(mid) for mid in sorted(relevant)}
                row["context_top5"] = ranked["context"][:5]
                row["context_top10"] = [{"id": x.memory.id, "title": x.memory.title[:60], "near": x.near,
                                         "proximity": round(x.proximity, 3), "text": x.text_rank,
                                         "anchors": len(x.memory.anchors), "relevant": x.memory.id in relevant}
                                        for x in res.ranked[:10]]  # why each came first (reading a loss)
                q["moments"][moment] = row
            if "failed" in q:
                failed.append(q)
                progress(f"{name} [{qi}/{len(chosen)}] {c.sha[:10]} left out: {q['failed'][:200]}")
                continue
            queries.append(q)
            progress(f"{name} [{qi}/{len(chosen)}] {c.sha[:10]} {q['subject'][:40]!r}: {len(relevant)} relevant of "
                     f"{len(before)}; R@10 context " + " / ".join(
                         "–" if q["moments"][m] is None else f"{q['moments'][m]['metrics']['context']['recall@10']:.2f}"
                         for m in MOMENTS)
                     + (f", files {q['moments']['before edit']['metrics']['files, newest']['recall@10']:.2f}"
                        if q["moments"]["before edit"] else ""))
        t_rank = time.perf_counter() - t_start

        latency = measure_latency(clone, [eligible[ei] for ei in chosen[:n_latency]], queries[:n_latency],
                                  load_window, rounds, name) if n_latency else []
    return {"repo": src, "name": name, "head": head, "commits": len(history), "window": window,
            "history": history_depth, "seed": seed, "skipped": skipped, "eligible": len(eligible),
            "queries": queries, "failed": [{"sha": q["sha"], "why": q["failed"]} for q in failed],
            "latency": latency,
            "seconds": {"total": round(time.perf_counter() - t_start, 1), "diff": round(t_diff, 1),
                        "ranking": round(t_rank, 1),
                        "context_in_process_median": {m: round(statistics.median(v), 3) if v else None
                                                      for m, v in t_ctx.items()}}}


# --------------------------------------------------------------------------- latency


def measure_latency(clone: Path, tasks: list[tuple[Commit, list[str], set[str]]], rows: list[dict[str, Any]],
                    load_window: Any, rounds: int, name: str) -> list[dict[str, Any]]:
    """Whole-process ``gitmem context … --json`` cold and warm at each moment of ``tasks`` (module docstring):
    one row per (task, moment) with the medians in ms, their ratios to ``python -c pass`` and ``agree``."""
    from cli import gitmem_exe, start_warm, timed  # bench/cli.py

    exe = gitmem_exe()
    run_dir = tempfile.mkdtemp(prefix="gitmem-moments-run-")
    os.chmod(run_dir, 0o700)
    os.environ["GITMEM_RUN_DIR"] = run_dir  # this run's own warm process, never another session's
    cold_env, warm_env = {"GITMEM_NO_DAEMON": "1"}, {"GITMEM_NO_DAEMON": ""}
    out: list[dict[str, Any]] = []
    try:
        start_warm(clone)
        for (c, before, _), q in zip(tasks, rows, strict=True):
            load_window(before)
            for moment in MOMENTS:
                row = q["moments"][moment]
                if row is None:
                    continue
                set_state(clone, c, moment)
                argv = [exe, "context"]
                if moment == "before edit":
                    for f in q["files_given"]:
                        argv += ["--file", f]
                argv += ["--prompt", c.message, "--json"]
                agree = None
                if not out:  # nothing given yet: the command ranks as the in-process run did
                    proc = timed(argv, clone, cold_env)[1]
                    shown = [m["id"] for m in json.loads(proc.stdout)["memories"]]
                    agree = bool(shown) and shown[:5] == row["context_top5"][:len(shown[:5])]
                timed(argv, clone, warm_env)  # the warm process syncs the store and tree (untimed)
                times: dict[str, list[float]] = {"python": [], "cold": [], "warm": []}
                for _ in range(rounds):
                    times["python"].append(timed([sys.executable, "-c", "pass"], clone, {})[0])
                    ms, proc = timed(argv, clone, cold_env)
                    if proc.returncode != 0:
                        raise SystemExit(f"gitmem context exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
                    times["cold"].append(ms)
                    times["warm"].append(timed(argv, clone, warm_env)[0])
                med = {k: statistics.median(v) for k, v in times.items()}
                out.append({"sha": c.sha, "moment": moment, "memories": len(before),
                            **{f"{k}_ms": round(v, 1) for k, v in med.items()},
                            "cold_ratio": round(med["cold"] / med["python"], 2),
                            "warm_ratio": round(med["warm"] / med["python"], 2), "agree": agree})
                progress(f"{name} latency {c.sha[:10]} {moment}: python {med['python']:.0f} ms, cold "
                         f"{med['cold']:.0f} ms ({med['cold'] / med['python']:.1f}×), warm {med['warm']:.0f} ms "
                         f"({med['warm'] / med['python']:.1f}×)")
    finally:
        subprocess.run([exe, "daemon", "stop"], cwd=clone, capture_output=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    return out


# --------------------------------------------------------------------------- report


def summarise(queries: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float | int]]]:
    """moment → method → metric → mean over the queries that have that moment (and ``n``: how many)."""
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for moment in MOMENTS:
        rows = [q["moments"][moment] for q in queries if q["moments"].get(moment)]
        out[moment] = {}
        for method in METHODS:
            have = [r["metrics"][method] for r in rows if method in r["metrics"]]
            if not have:
                continue
            s: dict[str, float | int] = {k: statistics.fmean(x[k] for x in have) for k in METRICS}
            s["n"] = len(have)
            out[moment][method] = s
    return out


def report(runs: list[dict[str, Any]]) -> str:
    """Markdown: one table per moment (rows: repository and method; the last block over every query), then
    the latency table."""
    lines: list[str] = []
    groups = [(r["name"], r["queries"]) for r in runs]
    groups.append(("all", [q for r in runs for q in r["queries"]]))
    sums = {g: summarise(qs) for g, qs in groups}
    for moment in MOMENTS:
        lines += ["", f"**{moment}**", "", "| repository | queries | method | recall@5 | recall@10 | nDCG@10 | "
                  "≥1 relevant in top 5 |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for g, _ in groups:
            for method in METHODS:
                s = sums[g][moment].get(method)
                if s is None:
                    if method == "files, newest":
                        lines.append(f"| {g} | – | {method} | (no files at this moment) | | | |")
                    continue
                bold = "**" if g == "all" else ""
                lines.append(f"| {bold}{g}{bold} | {s['n']} | {method} | {s['recall@5']:.3f} | {s['recall@10']:.3f}"
                             f" | {s['ndcg@10']:.3f} | {s['hit@5']:.2f} |")
            rel = [len(q["relevant"]) for q in dict(groups)[g] if q["moments"].get(moment)]
            if rel:
                r5, r10 = (statistics.fmean(min(k, n) / n for n in rel) for k in (5, 10))
                lines.append(f"| {g} | {len(rel)} | (ideal ranking) | {r5:.3f} | {r10:.3f} | 1.000 | 1.00 |")
        rows = [q["moments"][moment]["metrics"] for q in dict(groups)["all"] if q["moments"].get(moment)]
        for other in ("files, newest", "bm25"):
            pairs = [(x["context"]["ndcg@10"], x[other]["ndcg@10"]) for x in rows if other in x]
            if pairs:
                lines += ["", f"context vs {other}, nDCG@10 per task (all repositories): better on "
                              f"{sum(1 for a, b in pairs if a > b + 1e-9)}, the same on "
                              f"{sum(1 for a, b in pairs if abs(a - b) <= 1e-9)}, worse on "
                              f"{sum(1 for a, b in pairs if a < b - 1e-9)} of {len(pairs)}"]
    lat = [(r["name"], x) for r in runs for x in r["latency"]]
    if lat:
        lines += ["", "**latency of `gitmem context … --json`** (whole process; medians over the tasks timed, "
                  "each the median of its rounds)", "",
                  "| repository | moment | tasks | python -c pass | cold | cold ÷ python | warm | warm ÷ python "
                  "| same top 5 as in-process (checked) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for g in [r["name"] for r in runs] + ["all"]:
            for moment in MOMENTS:
                xs = [x for n, x in lat if (g == "all" or n == g) and x["moment"] == moment]
                if not xs:
                    continue
                med = {k: statistics.median(x[k] for x in xs)
                       for k in ("python_ms", "cold_ms", "warm_ms", "cold_ratio", "warm_ratio")}
                checked = [x["agree"] for x in xs if x["agree"] is not None]
                lines.append(f"| {g} | {moment} | {len(xs)} | {med['python_ms']:.0f} ms | {med['cold_ms']:.0f} ms | "
                             f"{med['cold_ratio']:.1f}× | {med['warm_ms']:.0f} ms | {med['warm_ratio']:.1f}× | "
                             f"{sum(checked)}/{len(checked)} |")
    lines += ["", "| repository | head | commits read | eligible | skipped | queries (left out: unreadable blob) "
              "| time |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        sk = ", ".join(f"{k} {v}" for k, v in r["skipped"].items())
        lines.append(f"| {r['name']} | {r['head'][:10]} | {r['commits']} | {r['eligible']} | {sk} | "
                     f"{len(r['queries'])} ({len(r.get('failed', []))}) | {r['seconds']['total']:.0f} s |")
    return "\n".join(lines).strip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", nargs="?", help="the repository (only read: the run works in a scratch clone)")
    ap.add_argument("--name", help="its name in the tables (default: the folder's name)")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--window", type=int, default=300, help="memories: the last N commits before C (default 300)")
    ap.add_argument("--history", type=int, default=800,
                    help="commits of history kept (the rest cut off as by a shallow clone; 0: all; default 800)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--head", metavar="SHA", help="the commit taken as HEAD (default: REPO's HEAD); pins a run")
    ap.add_argument("--latency", type=int, default=4, help="queries timed as whole processes (default 4)")
    ap.add_argument("--rounds", type=int, default=2, help="timed rounds per query and moment (default 2)")
    ap.add_argument("--out", help="write the run as JSON to this file")
    ap.add_argument("--cache", metavar="DIR", help="keep the diffed history in DIR between runs (for iterating)")
    ap.add_argument("--moments", default=",".join(MOMENTS),
                    help="the moments measured, comma-separated (default: all: " + ",".join(MOMENTS) + ")")
    ap.add_argument("--report", nargs="+", metavar="FILE", help="print the tables of these runs' JSON files")
    args = ap.parse_args(argv)
    if args.report:
        print(report([json.loads(Path(f).read_text("utf-8")) for f in args.report]))
        return 0
    if not args.repo:
        ap.error("REPO is needed (or --report FILE …)")
    name = args.name or Path(args.repo).resolve().name
    moments = tuple(m.strip() for m in args.moments.split(",") if m.strip())
    if unknown := set(moments) - set(MOMENTS):
        ap.error(f"unknown moment(s) {sorted(unknown)}: choose among {', '.join(MOMENTS)}")
    res = run(args.repo, name, args.queries, args.window, args.history, args.seed, args.latency, args.rounds,
              args.head, Path(args.cache) if args.cache else None, moments)
    if args.out:
        Path(args.out).write_text(json.dumps(res, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    print(report([res]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
