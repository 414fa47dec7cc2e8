"""The git post-commit hook of several builds side by side: the committed shim, whole process, as git runs it.

Each build runs on its own bench repository (built beforehand by ``bench/hooks.py --work DIR --memories N`` run
with that build; the repositories must hold the same files). Its own ``gitmem hooks install`` writes the shims
(so the post-commit shim names that build's interpreter); the post-commit shim is copied aside. Every round, for
each kind of commit, every build's repository gets the same change, committed with hooks off, and then the
copied shim is executed as git executes it (the file itself, in the work tree's root, stdin from /dev/null);
its wall time is the hook's whole process: the shell shim, Python's start, imports, the analysis of the new
commit, the hook index update. The builds' order alternates round by round; ``python -c pass`` is timed in every
round (the yardstick on a busy machine). Kinds of commit:

* ``py``: a statement added to one anchored top-level Python function, another function every round (its
  memories go stale: one file, one function per commit; a later run on the same repositories takes the next
  functions, counted in the first repository's ``.git/bench-post-commit/targets-used``);
* ``txt``: a line appended to ``bench-notes.txt`` (a file of no language: nothing to parse).

    python bench/postcommit_ab.py LABEL=PYTHON:REPO[:SRC] ... [--rounds 20] [--kinds py,txt] [--json]

``PYTHON`` is the build's interpreter (its venv's ``bin/python``, with gitmem installed); ``SRC``, when given, is
put first on ``PYTHONPATH`` for that build's install and hooks (a source checkout run by another build's venv).
The hooks run with ``GITMEM_NO_DAEMON=1`` (no warm process is told or started). Prints per build and kind: the
median, p90 and max ms, × the median of ``python -c pass``, × the first build's median; the same for the CPU time
(user + system) of the shim and every process it ran (``RUSAGE_CHILDREN``: less moved by other jobs on a loaded
machine than wall time); and in how many runs the hook said something on stderr (a ``py`` commit makes memories
stale: every run should).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

NOTES = "bench-notes.txt"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=root, check=True, capture_output=True)


def python_targets(root: Path) -> list[tuple[str, str]]:
    """(file, function) pairs of ``root``: top-level Python functions that memories are anchored to (read from
    the memory files' ``- anchor:`` lines) and that hold a ``return`` at the function's own indentation; most
    memories first."""
    counts: dict[tuple[str, str], int] = {}
    for p in (root / ".gitmem" / "memories").rglob("*.md"):
        for m in re.finditer(r"^- anchor: ([\w./-]+\.py)::(\w+)$", p.read_text("utf-8"), re.MULTILINE):
            counts[(m.group(1), m.group(2))] = counts.get((m.group(1), m.group(2)), 0) + 1
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if _body(root, *t)]


def _body(root: Path, path: str, func: str) -> tuple[int, int] | None:
    """(start, end) offsets of top-level ``func``'s text in ``root/path`` when it has a ``\n    return ``."""
    p = root / path
    text = p.read_text("utf-8") if p.is_file() else ""
    m = re.search(rf"^(?:async )?def {func}\(", text, re.MULTILINE)
    if not m:
        return None
    nxt = re.compile(r"\n(?=[^\s#)\]])").search(text, m.end())
    end = nxt.start() if nxt else len(text)
    return (m.start(), end) if "\n    return " in text[m.start():end] else None


def change(root: Path, kind: str, targets: list[tuple[str, str]], i: int) -> None:
    """The round's change of ``kind`` in ``root``, committed with hooks off: ``py`` adds a statement to the
    round's target function (round ``i`` takes target ``i``, so each commit makes fresh memories stale while
    there are targets left), ``txt`` a line to ``bench-notes.txt``."""
    if kind == "py":
        path, func = targets[i % len(targets)]
        p = root / path
        text = p.read_text(encoding="utf-8")
        span = _body(root, path, func)
        assert span is not None, (path, func)
        a, b = span
        body = text[a:b].replace("\n    return ", f"\n    _bench_pc = {i}\n    return ", 1)
        p.write_text(text[:a] + body + text[b:], encoding="utf-8")
        git(root, "add", path)
    else:
        with open(root / NOTES, "a", encoding="utf-8") as f:
            f.write(f"note {i}\n")
        git(root, "add", NOTES)
    git(root, "commit", "-q", "-m", f"bench post-commit {kind} {i}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", metavar="LABEL=PYTHON:REPO[:SRC]")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--kinds", default="py,txt")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    kinds = args.kinds.split(",")
    builds: dict[str, tuple[Path, Path, dict[str, str]]] = {}
    for spec in args.builds:
        label, _, rest = spec.partition("=")
        python, repo, *src = rest.split(":")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PYTHONPATH"}
        env["GITMEM_NO_DAEMON"] = "1"
        if src:
            env["PYTHONPATH"] = str(Path(src[0]).resolve())
        root = Path(repo).resolve()
        gitmem = Path(python).parent / "gitmem"
        subprocess.run([str(gitmem), "hooks", "install"], cwd=root, env=env, check=True, capture_output=True)
        aside = root / ".git" / "bench-post-commit"
        aside.mkdir(exist_ok=True)
        shutil.copy2(root / ".git" / "hooks" / "post-commit", aside / "post-commit")
        if not (root / NOTES).exists():
            (root / NOTES).write_text("notes\n", encoding="utf-8")
            git(root, "add", NOTES)
            git(root, "commit", "-q", "-m", "bench notes")
        builds[label] = (aside / "post-commit", root, env)
    first = next(iter(builds.values()))[1]
    # a later run on the same repositories starts where the last one stopped (its targets are stale already)
    done = first / ".git" / "bench-post-commit" / "targets-used"
    used = int(done.read_text()) if done.exists() else 0
    targets = python_targets(first)[used:]
    done.write_text(str(used + args.rounds + 1))
    if len(targets) <= args.rounds:
        print(f"note: {len(targets)} target functions for {args.rounds + 1} rounds: later py commits change "
              "functions already stale", file=sys.stderr)
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}  # CPU time (user + sys) of the shim and everything it ran
    said: dict[tuple[str, str], int] = {}
    bare: list[float] = []
    labels = list(builds)
    for i in range(args.rounds + 1):  # round 0 warms up (page cache, bytecode), not counted
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        if i:
            bare.append((time.perf_counter() - t) * 1000)
        order = labels[i % len(labels):] + labels[:i % len(labels)]
        if i % 2:
            order.reverse()
        for kind in kinds:
            for label in order:
                shim, root, env = builds[label]
                change(root, kind, targets, i)
                r0, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                p = subprocess.run([str(shim)], cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True)
                ms, r1 = (time.perf_counter() - t) * 1000, resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu_ms = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000
                if p.returncode != 0:
                    raise SystemExit(f"{label}: the post-commit shim exited {p.returncode}: {p.stderr.decode()[-500:]}")
                if i:
                    times.setdefault((label, kind), []).append(ms)
                    cpu.setdefault((label, kind), []).append(cpu_ms)
                    said[(label, kind)] = said.get((label, kind), 0) + bool(p.stderr.strip())
        print(f"\rround {i}/{args.rounds}", end="", file=sys.stderr)
    base = statistics.median(bare)
    rows = []
    for kind in kinds:
        ref = statistics.median(times[(labels[0], kind)])
        ref_cpu = statistics.median(cpu[(labels[0], kind)])
        for label in labels:
            ts, cs = times[(label, kind)], cpu[(label, kind)]
            med, med_cpu = statistics.median(ts), statistics.median(cs)
            rows.append({"build": label, "commit": kind, "median_ms": round(med, 1),
                         "p90_ms": round(statistics.quantiles(ts, n=10)[-1], 1), "max_ms": round(max(ts), 1),
                         "x_python": round(med / base, 2), "x_first": round(med / ref, 3),
                         "cpu_median_ms": round(med_cpu, 1), "cpu_p90_ms": round(statistics.quantiles(cs, n=10)[-1], 1),
                         "cpu_x_first": round(med_cpu / ref_cpu, 3), "said": said[(label, kind)], "runs": len(ts)})
    if args.json:
        print(json.dumps({"python_pass_ms": round(base, 1), "targets": targets[:args.rounds + 1], "rows": rows},
                         indent=1))
        return 0
    print(f"\npython -c pass median {base:.1f} ms over {args.rounds} rounds; "
          f"py commits: one function each of {len(targets[:args.rounds + 1])}")
    for r in rows:
        print(f"{r['commit']:4} {r['build']:10} median {r['median_ms']:7.1f}  p90 {r['p90_ms']:7.1f}  "
              f"max {r['max_ms']:7.1f}  ×python {r['x_python']:5.2f}  ×{labels[0]} {r['x_first']:5.3f}  "
              f"CPU median {r['cpu_median_ms']:7.1f} p90 {r['cpu_p90_ms']:7.1f} ×{labels[0]} {r['cpu_x_first']:5.3f}  "
              f"said {r['said']}/{r['runs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
