"""Per-language staleness benchmark: gitmem's verdicts on a real history against an independent parser.

For one language of one repository, it replays commit pairs (older O, later L) chosen as
``bench/staleness.py`` chooses them (``choose_pairs``: strata over the first-parent history, gap 5..50,
seeded), samples up to N of gitmem's symbols in files of that language at O, anchors them with
``Resolver.make(path, name, O)`` and asks ``Resolver.status(anchor, L)``. Each anchor is then graded by an
oracle of ``bench/oracles`` (a parser that is not tree-sitter and shares no code with gitmem; the oracle
gives every symbol it can name the way gitmem names it a canonical content, comments and layout removed):

* verdict ``changed`` iff the content at O differs from the content at L (same path, same name),
  ``unchanged`` if equal, ``missing`` if the name is gone at L, ``file-gone`` if the file is; anchors the
  oracle cannot judge are excluded, by reason: ``unmapped-numbered`` (gitmem's name carries ``(...)``,
  ``[...]`` or ``#N``, overloads and repeats, which the oracle does not tell apart the same way),
  ``unmapped`` (the oracle has no symbol of that name at O), ``parse-error``.
* precision and recall of gitmem ``stale`` against ``changed`` on the graded anchors (``changed`` or
  ``unchanged``): a gitmem ``moved`` / ``deleted`` on a graded anchor counts as "not stale".
* ``--changed-files`` samples only in files that differ between O and L: more changed symbols, so recall
  rests on more cases (on a history where most files do not change in 5..50 commits, okio's Kotlin, a
  plain sample holds few); reported apart, since every anchor's file changed.
* the **file-level baseline on the same anchors**: a whole-file anchor is stale iff the file's bytes differ
  between O and L; its precision and recall against the same verdicts.
* a ``stale`` anchor that gitmem followed to another name or file is checked the same way (the oracle
  should find the code there changed).
* ``moved`` checked: for a gitmem ``moved`` anchor, the oracle's content at gitmem's new place
  (``path_now::symbol_now`` at L) equals the content at O, each symbol's own last name blanked (so a pure
  rename agrees).

Run it (one language at a time; progress on stderr, the JSON report to ``--out`` or stdout):

    .venv/bin/python bench/languages.py /work/.mirror/sinatra+sinatra/repo --language ruby \\
        [--samples 300] [--pairs 10] [--seed 1] [--out bench/results/ruby-sinatra.json]

The repository may be bare (a mirror); it is only read. ``bench/languages.py --table bench/results/*.json``
prints the saved reports as the Markdown table of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's root: `bench.*` (never bench/ itself: bench/mcp.py is not mcp)

from bench.oracles import Oracle, load_all, oracle_for  # noqa: E402
from bench.staleness import POOL_FACTOR, choose_pairs  # noqa: E402 - the same pair sampling
from gitmem.anchors import Resolver  # noqa: E402
from gitmem.code import symbols as code_symbols  # noqa: E402
from gitmem.code.languages import language_for_path  # noqa: E402
from gitmem.git import Repo  # noqa: E402
from gitmem.model import Status  # noqa: E402
from gitmem.textsplit import name_leaf  # noqa: E402

MAX_EXAMPLES = 15
_NUMBERED = re.compile(r"(\(.*\)|\[.*\]|#\d+)")


def anonymous(content: str, name: str) -> str:
    """``content`` with the symbol's own last name (``A.f(int)#2`` -> ``f``) blanked as a whole word."""
    leaf = name_leaf(name)
    return re.sub(rf"(?<![\w$]){re.escape(leaf)}(?![\w$])", "\x00", content) if leaf else content


@dataclass
class Row:
    """One sampled anchor."""

    pair: int
    o: str
    l: str
    path: str
    symbol: str
    kind: str
    status: str = ""
    path_now: str | None = None
    symbol_now: str | None = None
    verdict: str = ""
    file_changed: bool | None = None
    moved_ok: bool | None = None        # the oracle's code at gitmem's new place equals the original (names aside)
    error: str | None = None
    status_ms: float = 0.0


class Judge:
    """The oracle's symbols per (revision, path), cached."""

    def __init__(self, repo: Repo, oracle: Oracle) -> None:
        self.repo, self.oracle = repo, oracle
        self.cache: dict[tuple[str, str], dict[str, str] | None | bool] = {}
        self.seconds = 0.0

    def at(self, rev: str, path: str) -> dict[str, str] | None | bool:
        """Symbols of ``path`` at ``rev``; False when the file is absent, None when the oracle rejects it."""
        key = (rev, path)
        if key not in self.cache:
            data = self.repo.read(rev, path)
            prepare = getattr(self.oracle, "at_revision", None)  # optional: an oracle that needs the tree
            if data is not None and prepare is not None:
                prepare(str(self.repo.root), rev)
            if data is None:
                self.cache[key] = False
            else:
                t = time.perf_counter()
                try:
                    self.cache[key] = self.oracle.symbols(data, path)
                except Exception as e:  # noqa: BLE001 - a parser's refusal is a counted verdict, not a crash
                    print(f"  oracle: {path}@{rev[:8]}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
                    self.cache[key] = None
                self.seconds += time.perf_counter() - t
        return self.cache[key]

    def verdict(self, row: Row) -> str:
        at_o = self.at(row.o, row.path)
        if not isinstance(at_o, dict):
            return "parse-error"
        if row.symbol not in at_o:
            return "unmapped-numbered" if _NUMBERED.search(row.symbol) else "unmapped"
        at_l = self.at(row.l, row.path)
        if at_l is False:
            return "file-gone"
        if not isinstance(at_l, dict):
            return "parse-error"
        if row.symbol not in at_l:
            return "missing"
        return "unchanged" if at_o[row.symbol] == at_l[row.symbol] else "changed"

    def same_code(self, row: Row) -> bool | None:
        """Is gitmem's new place the original code, own names blanked? None when the oracle cannot say."""
        at_o = self.at(row.o, row.path)
        if not isinstance(at_o, dict) or row.symbol not in at_o or not row.path_now or not row.symbol_now:
            return None
        at_l = self.at(row.l, row.path_now)
        if not isinstance(at_l, dict) or row.symbol_now not in at_l:
            return None
        # both names blanked in both: a renamed Terraform output whose value names the new name
        # (`output "vpc_x" { value = module.vpc.vpc_x }`) is the same code as before
        def blank(content: str) -> str:
            return anonymous(anonymous(content, row.symbol), row.symbol_now or "")

        return blank(at_o[row.symbol]) == blank(at_l[row.symbol_now])


def replay(repo_path: str, language: str, samples: int, k: int, seed: int, max_file_kb: int,
           changed_files: bool = False) -> dict[str, Any]:
    """Run the benchmark for ``language``; returns the report (see :func:`summarize`)."""
    problems = load_all()
    oracle = oracle_for(language)
    if oracle is None:
        raise SystemExit(f"no available oracle for {language}" + (f" ({'; '.join(problems)})" if problems else ""))
    t0 = time.perf_counter()
    repo = Repo(repo_path, bare_ok=True)
    head = repo.head()
    if head is None:
        raise SystemExit(f"{repo_path}: no commits")
    history = subprocess.run(["git", "-C", str(repo.root), "rev-list", "--first-parent", "--reverse", head],
                             check=True, capture_output=True, text=True).stdout.split()
    rng = random.Random(seed)
    judge = Judge(repo, oracle)
    rows: list[Row] = []
    pairs = choose_pairs(len(history), k, rng)
    gitmem_s = 0.0
    for i, (oi, li) in enumerate(pairs):
        o, l = history[oi], history[li]
        prng = random.Random(f"{seed}:{language}:{i}")
        t = time.perf_counter()
        sampler = Resolver(repo)
        files = [p for p in repo.files_at(o) if language_for_path(p) == language]
        prng.shuffle(files)
        pool: list[tuple[str, str, str]] = []
        for p in files:
            if len(pool) >= POOL_FACTOR * samples:
                break
            data = repo.read(o, p)
            if data is None or len(data) > max_file_kb * 1024 or (changed_files and data == repo.read(l, p)):
                continue
            pool.extend((p, name, sym.kind) for name, sym in (sampler.table(o, p) or {}).items())
        chosen = prng.sample(pool, min(samples, len(pool)))
        maker = Resolver(repo)
        code_symbols.clear_memory_cache()
        resolver = Resolver(repo)
        for path, name, kind in chosen:
            row = Row(i, o, l, path, name, kind)
            rows.append(row)
            s = time.perf_counter()
            try:
                st = resolver.status(maker.make(path, name, o, as_typed=False), l)
                row.status, row.path_now, row.symbol_now = st.status.value, st.path_now, st.symbol_now
            except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop
                row.status, row.error = "error", f"{type(e).__name__}: {e}"
            row.status_ms = (time.perf_counter() - s) * 1000
        gitmem_s += time.perf_counter() - t
        for row in rows[-len(chosen):] if chosen else []:
            row.verdict = judge.verdict(row)
            row.file_changed = repo.read(o, row.path) != repo.read(l, row.path)
            if row.status == Status.MOVED.value or (row.status == Status.STALE.value and (
                    row.path_now, row.symbol_now) != (row.path, row.symbol)):
                row.moved_ok = judge.same_code(row)
        print(f"[{i + 1}/{len(pairs)}] {o[:10]}..{l[:10]} gap {li - oi}: {len(files)} {language} files, "
              f"{len(chosen)} anchors {dict(Counter(r.status for r in rows if r.pair == i))} "
              f"verdicts {dict(Counter(r.verdict for r in rows if r.pair == i))}", file=sys.stderr)
    report = summarize(rows, language, oracle.name)
    report.update({
        "repo": repo_path, "head": head, "first_parent_commits": len(history),
        "config": {"language": language, "samples": samples, "pairs": k, "seed": seed, "max_file_kb": max_file_kb,
                   "changed_files": changed_files},
        "pairs": [{"O": history[a], "L": history[b], "gap": b - a} for a, b in pairs],
        "timing": {"total_s": round(time.perf_counter() - t0, 2), "gitmem_s": round(gitmem_s, 2),
                   "oracle_s": round(judge.seconds, 2),
                   "status_median_ms": round(statistics.median([r.status_ms for r in rows]), 2) if rows else None},
    })
    return report


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _ex(r: Row) -> dict[str, Any]:
    return {k: v for k, v in asdict(r).items() if v is not None and k not in ("pair", "status_ms")}


def summarize(rows: list[Row], language: str, oracle: str) -> dict[str, Any]:
    """The figures of one run: statuses, verdicts, confusion, precision / recall beside the file baseline."""
    ok = [r for r in rows if not r.error]
    graded = [r for r in ok if r.verdict in ("changed", "unchanged")]
    tp = [r for r in graded if r.status == "stale" and r.verdict == "changed"]
    fp = [r for r in graded if r.status == "stale" and r.verdict == "unchanged"]
    fn = [r for r in graded if r.status != "stale" and r.verdict == "changed"]
    f_tp = sum(1 for r in graded if r.file_changed and r.verdict == "changed")
    f_fp = sum(1 for r in graded if r.file_changed and r.verdict == "unchanged")
    f_fn = sum(1 for r in graded if not r.file_changed and r.verdict == "changed")
    moved = [r for r in ok if r.status == "moved"]
    confusion: dict[str, Counter[str]] = {}
    for r in ok:
        confusion.setdefault(r.status, Counter())[r.verdict] += 1
    missing = [r for r in ok if r.verdict == "missing"]
    return {
        "language": language, "oracle": oracle,
        "anchors": len(rows), "errors": len(rows) - len(ok),
        "status": dict(Counter(r.status for r in ok)),
        "verdicts": dict(Counter(r.verdict for r in ok)),
        "excluded": dict(Counter(r.verdict for r in ok if r.verdict not in ("changed", "unchanged", "missing",
                                                                           "file-gone"))),
        "confusion": {s: dict(c) for s, c in sorted(confusion.items())},
        "graded": len(graded), "changed": sum(1 for r in graded if r.verdict == "changed"),
        "gitmem": {"true_stale": len(tp), "false_stale": len(fp), "missed_changes": len(fn),
                   "precision": _ratio(len(tp), len(tp) + len(fp)), "recall": _ratio(len(tp), len(tp) + len(fn))},
        "file_baseline": {"true_stale": f_tp, "false_stale": f_fp, "missed_changes": f_fn,
                          "precision": _ratio(f_tp, f_tp + f_fp), "recall": _ratio(f_tp, f_tp + f_fn)},
        "moved": {"gitmem_moved": len(moved), "checked": sum(1 for r in moved if r.moved_ok is not None),
                  "agreed": sum(1 for r in moved if r.moved_ok)},
        # gitmem followed the code to another name / file and says it changed there
        "stale_elsewhere": {"count": sum(1 for r in ok if r.status == "stale" and r.moved_ok is not None),
                            "oracle_agrees_changed": sum(1 for r in ok if r.status == "stale" and r.moved_ok is False)},
        "missing_at_L": {"count": len(missing), "gitmem": dict(Counter(r.status for r in missing))},
        "examples": {
            "false_stale": [_ex(r) for r in fp[:MAX_EXAMPLES]],
            "missed_changes": [_ex(r) for r in fn[:MAX_EXAMPLES]],
            "moved_disagreed": [_ex(r) for r in moved if r.moved_ok is False][:MAX_EXAMPLES],
            "moved_or_deleted_but_in_place": [_ex(r) for r in graded
                                              if r.status in ("moved", "deleted")][:MAX_EXAMPLES],
            "missing_but_fresh_or_stale": [_ex(r) for r in missing if r.status in ("fresh", "stale")][:MAX_EXAMPLES],
            "unmapped": [_ex(r) for r in ok if r.verdict.startswith("unmapped")][:MAX_EXAMPLES],
            "errors": [_ex(r) for r in rows if r.error][:MAX_EXAMPLES],
        },
    }


def table(paths: list[str]) -> str:
    """A Markdown table of saved reports (``--out`` files), one row each, for bench/README.md."""
    out = ["| language | repository | oracle | pairs | anchors | graded (changed) | excluded | precision | recall "
           "| moved checked / agreed | file-level precision | time s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in paths:
        r = json.loads(Path(path).read_text())
        g, f, m = r["gitmem"], r["file_baseline"], r["moved"]
        repo = Path(r["repo"]).parent.name.replace("+", "/") if r["repo"].endswith("/repo") else r["repo"]
        if r["config"].get("changed_files"):
            repo += " (changed files only)"
        out.append(f"| {r['language']} | {repo} | {r['oracle']} | {len(r['pairs'])} | {r['anchors']} "
                   f"| {r['graded']} ({r['changed']}) | {sum(r['excluded'].values())} | {g['precision']} "
                   f"| {g['recall']} | {m['checked']} / {m['agreed']} | {f['precision']} | {r['timing']['total_s']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--table"]:
        print(table(argv[1:]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("repo")
    ap.add_argument("--language", required=True, help="gitmem language name (ruby, php, csharp, kotlin, c, cpp ...)")
    ap.add_argument("--samples", type=int, default=300, help="anchors per commit pair")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-file-kb", type=int, default=1024)
    ap.add_argument("--changed-files", action="store_true",
                    help="sample only in files whose bytes differ between O and L (more changed symbols for recall; "
                         "the file-level baseline then says stale for every anchor)")
    ap.add_argument("--out", help="write the JSON report here (else stdout)")
    args = ap.parse_args(argv)
    report = replay(args.repo, args.language, args.samples, args.pairs, args.seed, args.max_file_kb,
                    args.changed_files)
    text = json.dumps(report, indent=1)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    g, f = report["gitmem"], report["file_baseline"]
    print(f"{args.language}: {report['anchors']} anchors, graded {report['graded']} ({report['changed']} changed); "
          f"gitmem P {g['precision']} R {g['recall']}; file-level P {f['precision']} R {f['recall']}; "
          f"moved {report['moved']}; excluded {report['excluded']}; {report['timing']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
