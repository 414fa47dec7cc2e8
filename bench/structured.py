"""Staleness of structured-file anchors (YAML / TOML / JSON keys, Markdown sections, SQL definitions, Dockerfile
stages, HCL / Terraform blocks, Makefile targets) against independent parsers on real histories.

It is ``bench/languages.py`` (same anchors, same oracle verdicts, same report: precision / recall of gitmem
``stale`` against the oracle's ``changed``, ``moved`` checked, the file-level baseline on the same anchors)
with two differences that structured files need:

* **only the files of the format that the measurement is about** (``--paths``, git pathspecs:
  ``.github/workflows``, ``pyproject.toml``, ``package.json`` ...), so a repository's other YAML or JSON
  (fixtures, lock files) does not crowd out the files the history is chosen for;
* **pairs along those files' own history**: configuration files change in few commits (``pyproject.toml``
  in 25 of httpx's 1414), so random pairs over the whole history would mostly compare a file with itself.
  Let ``t[0..m-1]`` be the first-parent commits that touch the paths, oldest first: O is drawn in each of K
  equal strata of ``t`` (as ``staleness.choose_pairs`` does) and L is the commit ``gap`` touching commits
  later, gap uniform in ``[1, FILE_GAP_MAX]`` (so every pair spans at least one change of some file in the
  set; which keys, sections or definitions the change touched is what is measured). Seeded: a seed fixes
  the run.

Every anchor the format's gitmem symbol table offers at O in the selected files is in the pool; N are drawn
uniformly per pair (fewer when the files have fewer symbols). With ``--focus changed`` the pool holds only the
files whose bytes differ between O and L (for repositories of many files that rarely change together:
starter-workflows' ~150 workflows, pgvector's frozen upgrade scripts, the Terraform modules' examples).
Besides the figures on every anchor, the report gives them on the anchors whose file changed between O and L
(``in_changed_files``): there the file-level baseline calls every anchor stale, and what a key-level anchor
adds is whether it tells which ones are.

One command per format (the repositories of ``FORMATS``; the mirrors are read, never written):

    .venv/bin/python bench/structured.py FORMAT [--samples N] [--pairs K] [--seed 1] [--out FILE]

``FORMAT`` is one of ``yaml toml json markdown sql dockerfile hcl make``; the report (one JSON object with a
run per repository) goes to ``--out`` (default ``bench/results/structured-FORMAT.json``), progress to stderr.
``bench/structured.py table`` prints the Markdown table of every result file (as in bench/README.md).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's root: `bench.*` (never bench/ itself: bench/mcp.py is not mcp)

from bench.languages import Judge, Row, summarize  # noqa: E402 - verdicts and report
from bench.oracles import load_all, oracle_for  # noqa: E402
from gitmem.anchors import Resolver  # noqa: E402
from gitmem.code import symbols as code_symbols  # noqa: E402
from gitmem.code.languages import language_for_path  # noqa: E402
from gitmem.git import Repo  # noqa: E402
from gitmem.model import Status  # noqa: E402

#: Largest gap, in commits that touch the format's files, between O and L. Small, so most pairs hold one to
#: a few edits of the file (the case a memory meets between two checks) rather than a rewrite.
FILE_GAP_MAX = 5

MIRRORS = Path("/work/.mirror")

#: Format -> (pairs per repository, anchors per pair) of the published runs: a few hundred anchors per
#: repository, more pairs where a commit's files hold few symbols (one README of ~16 sections, one Makefile).
SIZES: dict[str, tuple[int, int]] = {
    "yaml": (10, 40), "toml": (10, 40), "json": (10, 40), "markdown": (30, 16), "sql": (15, 30),
    "dockerfile": (10, 40), "hcl": (10, 40), "make": (20, 20),
}

#: Format -> (mirror name, gitmem languages measured, pathspecs). The histories of docs/ISSUE22 (fetched
#: bare mirrors under /work/.mirror/<owner>+<name>/repo).
FORMATS: dict[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {
    "yaml": [("actions+starter-workflows", ("yaml",), (":(glob)**/*.yml", ":(glob)**/*.yaml")),
             ("docker+buildx", ("yaml",), (".github/workflows",))],
    "toml": [("encode+httpx", ("toml",), ("pyproject.toml",)),
             ("pallets+flask", ("toml",), ("pyproject.toml",))],
    "json": [("axios+axios", ("json",), ("package.json",)),
             ("expressjs+express", ("json",), ("package.json",))],
    "markdown": [("jlevy+the-art-of-command-line", ("markdown",), ("README.md",))],
    "sql": [("pgvector+pgvector", ("sql",), ("sql", "test/sql"))],
    "dockerfile": [("docker+buildx", ("dockerfile",), ("Dockerfile", "hack/dockerfiles"))],
    "hcl": [("terraform-aws-modules+terraform-aws-vpc", ("hcl", "terraform"), (":(glob)**/*.tf",))],
    "make": [("docker+buildx", ("make",), ("Makefile",))],
}


def file_pairs(n: int, k: int, rng: random.Random) -> list[tuple[int, int]]:
    """K (O, L) index pairs into the ``n`` commits that touch the files (see the module docstring)."""
    if n < 2:
        return []
    last_o = n - 2
    pairs: list[tuple[int, int]] = []
    for i in range(k):
        lo = (last_o + 1) * i // k
        hi = max(lo, (last_o + 1) * (i + 1) // k - 1)
        o = rng.randint(lo, min(hi, last_o))
        gap = rng.randint(1, max(1, min(FILE_GAP_MAX, n - 1 - o)))
        if (o, o + gap) not in pairs:
            pairs.append((o, o + gap))
    return pairs


def _in_paths(repo: Repo, rev: str, pathspecs: tuple[str, ...]) -> list[str]:
    """The files at ``rev`` under the literal pathspecs or matching the ``:(glob)`` ones (``ls-tree`` takes no
    glob magic; ``**/`` matches any directory, none included)."""
    globs = [p.removeprefix(":(glob)") for p in pathspecs if p.startswith(":(glob)")]
    literal = [p for p in pathspecs if not p.startswith(":(glob)")]
    files: list[str] = []
    if literal:
        files += subprocess.run(["git", "-C", str(repo.root), "ls-tree", "-r", "--name-only", rev, "--", *literal],
                                check=True, capture_output=True, text=True).stdout.split()
    if globs:
        every = subprocess.run(["git", "-C", str(repo.root), "ls-tree", "-r", "--name-only", rev],
                               check=True, capture_output=True, text=True).stdout.split()
        files += [f for f in every if any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(f, g.replace("**/", ""))
                                          for g in globs)]
    return sorted(set(files))


def replay(mirror: str, languages: tuple[str, ...], pathspecs: tuple[str, ...], samples: int, k: int,
           seed: int, focus: str = "all") -> dict[str, Any]:
    """One repository's run: the report of ``languages.summarize`` plus the configuration and timings."""
    problems = load_all()
    oracles = {lang: oracle_for(lang) for lang in languages}
    if any(o is None for o in oracles.values()):
        raise SystemExit(f"no available oracle for {languages}" + (f" ({'; '.join(problems)})" if problems else ""))
    t0 = time.perf_counter()
    repo = Repo(str(MIRRORS / mirror / "repo"), bare_ok=True)
    head = repo.head()
    if head is None:
        raise SystemExit(f"{mirror}: no commits")
    touching = subprocess.run(["git", "-C", str(repo.root), "rev-list", "--first-parent", "--reverse", head, "--",
                               *pathspecs], check=True, capture_output=True, text=True).stdout.split()
    rng = random.Random(seed)
    judges = {lang: Judge(repo, o) for lang, o in oracles.items() if o is not None}
    rows: list[Row] = []
    pairs = file_pairs(len(touching), k, rng)
    gitmem_s = 0.0
    for i, (oi, li) in enumerate(pairs):
        o, l = touching[oi], touching[li]
        prng = random.Random(f"{seed}:{mirror}:{i}")
        t = time.perf_counter()
        sampler = Resolver(repo)
        pool: list[tuple[str, str, str]] = []
        files = [p for p in _in_paths(repo, o, pathspecs) if language_for_path(p) in languages]
        if focus == "changed":
            files = [p for p in files if repo.read(o, p) != repo.read(l, p)]
        for p in files:
            pool.extend((p, name, sym.kind) for name, sym in (sampler.table(o, p) or {}).items())
        chosen = prng.sample(pool, min(samples, len(pool)))
        maker = Resolver(repo)
        code_symbols.clear_memory_cache()
        resolver = Resolver(repo)
        made: list[Row] = []
        for path, name, kind in chosen:
            row = Row(i, o, l, path, name, kind)
            made.append(row)
            s = time.perf_counter()
            try:
                st = resolver.status(maker.make(path, name, o, as_typed=False), l)
                row.status, row.path_now, row.symbol_now = st.status.value, st.path_now, st.symbol_now
            except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop
                row.status, row.error = "error", f"{type(e).__name__}: {e}"
            row.status_ms = (time.perf_counter() - s) * 1000
        gitmem_s += time.perf_counter() - t
        for row in made:
            judge = judges[language_for_path(row.path) or ""]
            row.verdict = judge.verdict(row)
            row.file_changed = repo.read(o, row.path) != repo.read(l, row.path)
            if row.status == Status.MOVED.value:
                row.moved_ok = judge.same_code(row)
        rows.extend(made)
        print(f"[{i + 1}/{len(pairs)}] {mirror} {o[:10]}..{l[:10]} gap {li - oi}: {len(files)} files, "
              f"{len(made)} anchors {dict(Counter(r.status for r in made))} "
              f"verdicts {dict(Counter(r.verdict for r in made))}", file=sys.stderr)
    report = summarize(rows, "+".join(languages), "+".join(sorted({o.name for o in oracles.values() if o})))
    report["missed_moves"] = _missed_moves(rows, judges)
    report["moved_examples"] = [{"path": r.path, "symbol": r.symbol, "path_now": r.path_now, "symbol_now": r.symbol_now,
                                 "o": r.o, "l": r.l, "oracle_agrees": r.moved_ok}
                                for r in rows if r.status == Status.MOVED.value][:MAX_SHOWN]
    sub = summarize([r for r in rows if r.file_changed], report["language"], report["oracle"])
    report["in_changed_files"] = {k: sub[k] for k in ("anchors", "graded", "changed", "gitmem", "file_baseline",
                                                      "moved", "status", "verdicts")}
    report.update({
        "repo": mirror, "head": head, "commits_touching_paths": len(touching),
        "config": {"languages": list(languages), "paths": list(pathspecs), "samples": samples, "pairs": k,
                   "seed": seed, "file_gap_max": FILE_GAP_MAX, "focus": focus},
        "kinds": dict(Counter(r.kind for r in rows)),
        "pairs": [{"O": touching[a], "L": touching[b], "gap_in_touching_commits": b - a} for a, b in pairs],
        "timing": {"total_s": round(time.perf_counter() - t0, 2), "gitmem_s": round(gitmem_s, 2),
                   "oracle_s": round(sum(j.seconds for j in judges.values()), 2),
                   "status_median_ms": round(statistics.median([r.status_ms for r in rows]), 2) if rows else None},
    })
    return report


#: Shortest canonical content taken as evidence of a move: short values (``true``, ``"3.8"``) recur everywhere.
MIN_MOVE_CONTENT = 40


def _missed_moves(rows: list[Row], judges: dict[str, Judge]) -> dict[str, Any]:
    """gitmem ``deleted`` anchors whose content (at least ``MIN_MOVE_CONTENT`` characters) the oracle finds
    under exactly one other name in the same file at L: a rename or move gitmem did not follow."""
    found: list[dict[str, Any]] = []
    looked = 0
    for r in rows:
        if r.status != Status.DELETED.value:
            continue
        judge = judges[language_for_path(r.path) or ""]
        at_o, at_l = judge.at(r.o, r.path), judge.at(r.l, r.path)
        if not isinstance(at_o, dict) or not isinstance(at_l, dict) or r.symbol not in at_o:
            continue
        looked += 1
        content = at_o[r.symbol]
        if len(content) < MIN_MOVE_CONTENT:
            continue
        same = [n for n, c in at_l.items() if c == content and n not in at_o]
        if len(same) == 1:
            found.append({"path": r.path, "symbol": r.symbol, "now": same[0], "o": r.o, "l": r.l})
    return {"deleted_checked": looked, "found_under_one_other_name": len(found), "examples": found[:MAX_SHOWN]}


MAX_SHOWN = 15


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def table() -> str:
    """The Markdown table of every ``bench/results/structured-*.json``: one row per repository and focus."""
    lines = ["| format | repository | focus | anchors | graded (changed) | excluded | gitmem P / R "
             "| file-level P / R | moved (oracle agrees) | deleted: missed moves |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for f in sorted((HERE / "results").glob("structured-*.json")):
        doc = json.loads(f.read_text())
        for r in doc["runs"]:
            g, b, m = r["gitmem"], r["file_baseline"], r["moved"]
            mm = r.get("missed_moves", {})
            excluded = ", ".join(f"{k} {v}" for k, v in sorted(r["excluded"].items())) or "0"
            focus = r["config"].get("focus", "all")
            lines.append(
                f"| {doc['format']} | {r['repo'].split('+', 1)[1]} | {focus} | {r['anchors']} "
                f"| {r['graded']} ({r['changed']}) | {excluded} | {_f(g['precision'])} / {_f(g['recall'])} "
                f"| {_f(b['precision'])} / {_f(b['recall'])} | {m['gitmem_moved']} ({m['agreed']}/{m['checked']}) "
                f"| {mm.get('found_under_one_other_name', '–')} of {mm.get('deleted_checked', '–')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["table"] or argv == ["table"]:
        print(table())
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("format", choices=sorted(FORMATS))
    ap.add_argument("--samples", type=int, help="anchors per commit pair (default: SIZES)")
    ap.add_argument("--pairs", type=int, help="commit pairs per repository (default: SIZES)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--focus", choices=("all", "changed"), default="all",
                    help="draw anchors from every selected file (all) or only from those that differ between O and L")
    ap.add_argument("--out", help="JSON report (default bench/results/structured-FORMAT[-changed].json)")
    args = ap.parse_args(argv)
    pairs, samples = args.pairs or SIZES[args.format][0], args.samples or SIZES[args.format][1]
    runs = [replay(m, langs, paths, samples, pairs, args.seed, args.focus) for m, langs, paths in FORMATS[args.format]]
    suffix = "-changed" if args.focus == "changed" else ""
    out = Path(args.out or HERE / "results" / f"structured-{args.format}{suffix}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"format": args.format, "runs": runs}, indent=1) + "\n")
    for r in runs:
        g, f = r["gitmem"], r["file_baseline"]
        print(f"{args.format} {r['repo']}: {r['anchors']} anchors, graded {r['graded']} ({r['changed']} changed); "
              f"gitmem P {g['precision']} R {g['recall']}; file-level P {f['precision']} R {f['recall']}; "
              f"moved {r['moved']}; excluded {r['excluded']}; status {r['status']}", file=sys.stderr)
        c = r["in_changed_files"]
        print(f"  in changed files: graded {c['graded']} ({c['changed']} changed); gitmem P {c['gitmem']['precision']}"
              f" R {c['gitmem']['recall']}; file-level P {c['file_baseline']['precision']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
