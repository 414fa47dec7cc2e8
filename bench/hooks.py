"""Hook latency benchmark: whole-process time of each Claude Code hook, as Claude Code runs it.

Builds (once, cached under ``--work``) a copy of a real repository with N
generated memories (default 10,000) anchored to its real symbols, then runs
the ``gitmem-hook`` console script — a new process per call, the event JSON on
stdin — for each event, interleaved round-robin with ``python -c pass`` so that
both see the same machine load. Each call uses a new session id (so nothing is
skipped as "already given") and a real file of the repository.

Reports per event: median, p90 and max wall time (ms) over ``--runs`` runs
(default 25), and the median's ratio to the median of ``python -c pass``
measured in the same run. Targets (issue 3): PostToolUse ≤ 60 ms, PreToolUse
≤ 150 ms, UserPromptSubmit ≤ 300 ms, SessionStart ≤ 1 s.

    python bench/hooks.py [--repo PATH] [--memories 10000] [--runs 25] [--work DIR] [--json]
        [--also LABEL=EXECUTABLE ...]

``--also`` times another build's hook executable in the same rounds (side by side, e.g. the
commit before a change: a script that puts that checkout first on ``sys.path`` and calls its
entry point); its rows are labelled ``EVENT [LABEL]``.

The repository (default: this one) is copied with ``git clone`` (its history
is needed for anchors) and never modified.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TARGETS_MS = {"PostToolUse": 60, "PreToolUse": 150, "UserPromptSubmit": 300, "SessionStart": 1000}
WORDS = ("cache retry timeout parser config index token budget anchor session commit merge branch "
         "schema migration lock queue worker fingerprint symbol rename spool redact gateway").split()


def clone_with_anchors(repo: Path, target: Path, skip) -> tuple:
    """``git clone`` ``repo`` into ``target``, ``gitmem init`` it; returns (Repo, Store, anchors): up to 40
    symbols of each Python/JS/TS/Go/Rust/Java file at HEAD (paths where ``skip(path)`` left out)."""
    from gitmem.anchors import Resolver
    from gitmem.git import WORKTREE, Repo
    from gitmem.store import Store, init_layout

    subprocess.run(["git", "clone", "-q", str(repo), str(target)], check=True)
    r = Repo(target)
    init_layout(r)
    resolver = Resolver(r)
    anchors = []
    for path in r.files_at(r.head()):
        if not path.endswith((".py", ".js", ".ts", ".go", ".rs", ".java")) or skip(path):
            continue
        for name in list(resolver.table(WORKTREE, path) or {})[:40]:
            if "#" not in name:
                anchors.append(resolver.make(path, name, WORKTREE))
    return r, Store(r), anchors


def build(repo: Path, work: Path, n: int, seed: int = 1) -> Path:
    """Clone ``repo`` into ``work`` and write ``n`` memories anchored to its symbols (skipped if done)."""
    from gitmem.catalog.sync import sync_hook_index
    from gitmem.git import Repo
    from gitmem.infra import utc_now
    from gitmem.memfile import write
    from gitmem.model import Memory
    from gitmem.store import Store, new_id

    target = work / f"repo-{n}"
    done = target / ".git" / "bench-ready"
    if done.exists():
        store = Store(Repo(target))
        store.enable_symbol_cache()
        sync_hook_index(store)  # current before timing (a new gitmem version may have changed its schema)
        return target
    if target.exists():
        shutil.rmtree(target)
    r, store, anchors = clone_with_anchors(repo, target, lambda p: p.startswith("tests/fixtures"))
    rnd = random.Random(seed)
    print(f"{len(anchors)} symbols to anchor to; writing {n} memories", file=sys.stderr)
    now = utc_now()
    for i in range(n):
        a = rnd.choice(anchors)
        words = " ".join(rnd.choice(WORDS) for _ in range(30))
        m = Memory(id=new_id(), type=rnd.choice(("decision", "gotcha", "constraint", "discovery", "change")),
                   title=f"{a.symbol}: {' '.join(rnd.choice(WORDS) for _ in range(6))} #{i}", body=words,
                   anchors=[a], author="bench", source="user", created=now, updated=now)
        write(store.path_for(m), m)
    t = time.perf_counter()
    store.enable_symbol_cache()
    sync_hook_index(store)
    print(f"hook index built in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    done.write_text("ok")
    return target


def events(root: Path, rnd: random.Random) -> dict[str, dict]:
    from gitmem.catalog import db as catalog_db

    con = catalog_db.connect(root)
    assert con is not None
    paths = sorted(p for p in catalog_db.anchored_paths(con) if (root / p).is_file())
    con.close()
    path = str(root / rnd.choice(paths))
    sid = f"bench-{rnd.getrandbits(64):x}"
    base = {"session_id": sid, "transcript_path": "", "cwd": str(root)}
    text = Path(path).read_text(errors="replace")
    old = next((ln for ln in text.splitlines() if len(ln.strip()) > 20), text[:40])
    return {
        "PostToolUse": {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": sid,
                        "tool_input": {"file_path": path, "old_string": old, "new_string": old + "  # x"},
                        "tool_response": {"filePath": path, "originalFile": text, "structuredPatch": []}},
        "PreToolUse": {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": sid,
                       "tool_input": {"file_path": path, "old_string": old, "new_string": old}},
        "UserPromptSubmit": {**base, "hook_event_name": "UserPromptSubmit",
                             "prompt": f"Why does the {rnd.choice(WORDS)} {rnd.choice(WORDS)} in "
                                       f"{Path(path).name} fail after the last commit?"},
        "SessionStart": {**base, "hook_event_name": "SessionStart", "source": "startup"},
    }


def timed(argv: list[str], stdin: bytes, cwd: Path) -> float:
    t = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return dt * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-hooks"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=EXECUTABLE",
                    help="time this hook executable too, in the same rounds")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    root = build(args.repo.resolve(), args.work, args.memories)
    # bytecode, as `pip install` writes it (an editable install under PYTHONDONTWRITEBYTECODE=1 has none,
    # and every hook would then compile gitmem's sources: ~10 ms more per module)
    import compileall

    import gitmem

    compileall.compile_dir(str(Path(gitmem.__file__).parent), quiet=1)
    hook = shutil.which("gitmem-hook", path=str(Path(sys.executable).parent)) or shutil.which("gitmem-hook")
    if not hook:
        raise SystemExit("gitmem-hook not found: install gitmem (pip install -e .) in this Python's environment")
    hooks = {"": hook, **{f" [{label}]": exe for label, _, exe in (a.partition("=") for a in args.also)}}
    rnd = random.Random(7)
    times: dict[str, list[float]] = {"python -c pass": [],
                                     **{k + label: [] for k in TARGETS_MS for label in hooks}}
    # one warm-up round (page cache, .pyc files), not counted
    for ev in events(root, rnd).values():
        for exe in hooks.values():
            timed([exe], json.dumps(ev).encode(), root)
    for i in range(args.runs):
        evs = events(root, rnd)
        times["python -c pass"].append(timed([sys.executable, "-c", "pass"], b"", root))
        for name in TARGETS_MS:
            for label, exe in hooks.items():
                # a new session id per executable, so neither finds the memories "already given"
                ev = {**evs[name], "session_id": evs[name]["session_id"] + label.strip(" []")}
                times[name + label].append(timed([exe], json.dumps(ev).encode(), root))
        print(f"\rround {i + 1}/{args.runs}", end="", file=sys.stderr)
    print(file=sys.stderr)
    base = statistics.median(times["python -c pass"])
    rows = []
    for name, ts in times.items():
        ts = sorted(ts)
        med = statistics.median(ts)
        rows.append({"hook": name, "median_ms": round(med, 1), "p90_ms": round(ts[int(0.9 * (len(ts) - 1))], 1),
                     "max_ms": round(ts[-1], 1), "ratio_to_python": round(med / base, 2),
                     "target_ms": TARGETS_MS.get(name.split(" ")[0]), "runs": len(ts)})
    if args.json:
        print(json.dumps({"memories": args.memories, "repo": str(args.repo), "rows": rows}, indent=2))
        return 0
    print(f"{args.memories} memories, {args.runs} runs each, repo {args.repo.resolve().name}")
    print(f"{'hook':26} {'median':>8} {'p90':>8} {'max':>8} {'× python':>9} {'target':>8}")
    for r in rows:
        tgt = f"{r['target_ms']} ms" if r["target_ms"] else ""
        print(f"{r['hook']:26} {r['median_ms']:>6.1f}ms {r['p90_ms']:>6.1f}ms {r['max_ms']:>6.1f}ms "
              f"{r['ratio_to_python']:>8.2f}× {tgt:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
