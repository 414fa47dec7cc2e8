"""Resident memory of the warm processes with 1, 3 and 7 repositories open, before and after one process per user;
and what the idle timeout saves: a cold start against a warm answer.

Builds (once, cached under ``--work``) ``--repos`` clones of ``--repo``, each with 1,000 generated memories
anchored to its real symbols (``bench/scale.py``'s generator, a different seed per clone), and their catalogs
and indexes (in-process, before anything is timed). Then, for each variant, from no warm process at all, it
opens the repositories one by one (a search through the client's ``search`` op, as the agent hooks and MCP ask,
then ``gitmem recall`` and ``gitmem list``: read commands the warm process runs) and after 1, 3 and 7 of them sums
the resident memory of every warm process: RSS (``/proc/PID/status`` VmRSS: what ``top`` shows) and PSS
(``/proc/PID/smaps_rollup``: shared pages divided among the processes mapping them, so the sum does not count
the shared libraries once per process).

Variants, in one run, with the same interpreter and libraries:

* ``before``: gitmem at ``--before`` (a checkout of main at the branch point: ``git worktree add --detach
  /work/wt/daemon-before 8344e84``), run by ``PYTHONPATH``: one warm process per worktree;
* ``after``: this checkout: one warm process per user.

Every process is started with ``GITMEM_RUN_DIR`` pointing at a folder of this run, so the processes measured
and stopped are only this run's (``/proc/PID/environ``).

Idle timeout: with the ``after`` code, the first answer of a new process (spawned, libraries imported, model
and first index loaded), the first request for another repository in a running process (its catalog and index
opened), a warm search, and the same read command (``gitmem recall``) in-process (``GITMEM_NO_DAEMON=1``) and warm.

    python bench/daemon_rss.py [--before /work/wt/daemon-before] [--repos 7] [--memories 1000]
        [--work /tmp/gitmem-bench-daemon] [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = "cache retry timeout"


def build_all(repo: Path, work: Path, count: int, n: int) -> list[Path]:
    """``count`` clones of ``repo`` with ``n`` memories each (cached), catalogs and indexes built in-process."""
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    from scale import build  # bench/scale.py: the generator (anchored to real symbols, Zipf prose)

    from gitmem.git import Repo
    from gitmem.search.lexical import hybrid_hits
    from gitmem.store import Store

    roots = []
    for i in range(count):
        folder = work / f"r{i}"
        folder.mkdir(parents=True, exist_ok=True)
        root = build(repo, folder, n, seed=i + 1)
        store = Store(Repo(root))
        hybrid_hits(store, "warm up", 1)  # the catalog and its search vectors
        roots.append(root)
    return roots


def env_of(variant: str, before: Path, run_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITMEM_NO_DAEMON", "PYTHONPATH")}
    env["GITMEM_RUN_DIR"] = os.fspath(run_dir)
    env["PYTHONPATH"] = os.fspath(before if variant == "before" else HERE.parent)
    return env


def drive(root: Path) -> dict[str, float]:
    """(Run in a subprocess with the variant's ``PYTHONPATH``.) Ask ``root``'s warm process for a search until
    it answers (starting it when none runs); seconds until then, and of one more search."""
    from gitmem import layout
    from gitmem.daemon import client

    lay = layout.of(root)
    t0 = time.perf_counter()
    first = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        reply = client.request(lay, "search", {"query": QUERY, "limit": 10}, timeout_s=30)
        if reply is not None:
            first = time.perf_counter() - t0
            break
        time.sleep(0.05)
    if first is None:
        raise SystemExit(f"no warm answer for {root} in 300 s")
    t1 = time.perf_counter()
    assert client.request(lay, "search", {"query": QUERY, "limit": 10}, timeout_s=30) is not None
    return {"first_s": first, "warm_s": time.perf_counter() - t1}


def run_drive(root: Path, env: dict[str, str]) -> dict[str, float]:
    p = subprocess.run([sys.executable, os.fspath(Path(__file__).resolve()), "--_drive", os.fspath(root)],
                       env=env, cwd=root, capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise SystemExit(f"drive {root}: {p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def gitmem_cmd(root: Path, env: dict[str, str], *args: str) -> float:
    """Wall seconds of ``python -m gitmem ARGS`` in ``root`` (which must succeed)."""
    t = time.perf_counter()
    # -P: the current folder is not put on sys.path (the clones are of gitmem itself: their gitmem/ must not run)
    p = subprocess.run([sys.executable, "-P", "-m", "gitmem", *args], env=env, cwd=root, capture_output=True,
                       text=True, timeout=600)
    took = time.perf_counter() - t
    if p.returncode:
        raise SystemExit(f"gitmem {' '.join(args)} in {root}: {p.returncode} {p.stderr}")
    return took


def warm_pids(run_dir: Path) -> list[int]:
    """This run's warm processes: ``python -m gitmem.daemon …`` with our ``GITMEM_RUN_DIR`` in their environment."""
    want = b"GITMEM_RUN_DIR=" + os.fsencode(run_dir)
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if b"gitmem.daemon" not in argv:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
        except OSError:
            continue
        pids.append(int(entry))
    return sorted(pids)


def memory_of(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of ``pid`` in bytes."""
    rss = pss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
    return rss, pss


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_all(run_dir: Path) -> None:
    """SIGTERM every warm process of this run (both variants end on it), then wait for them."""
    pids = warm_pids(run_dir)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 60
    while warm_pids(run_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in warm_pids(run_dir):
        os.kill(pid, signal.SIGKILL)


def settle(run_dir: Path, expected: int) -> None:
    """Wait until ``expected`` warm processes run and none of them has exited on a lost lock race."""
    deadline = time.monotonic() + 30
    while len(warm_pids(run_dir)) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)


def rss_run(variant: str, roots: list[Path], before: Path, run_dir: Path, steps: list[int]) -> list[dict]:
    """Open the repositories one by one from no warm process; the memory after each step's count."""
    env = env_of(variant, before, run_dir)
    stop_all(run_dir)
    out = []
    for i, root in enumerate(roots[:max(steps)], start=1):
        run_drive(root, env)
        gitmem_cmd(root, env, "recall", QUERY)
        gitmem_cmd(root, env, "list")
        if i in steps:
            settle(run_dir, i if variant == "before" else 1)
            pids = warm_pids(run_dir)
            mem = [memory_of(p) for p in pids]
            out.append({"repos": i, "processes": len(pids), "rss_bytes": sum(m[0] for m in mem),
                        "pss_bytes": sum(m[1] for m in mem), "per_process_rss": [m[0] for m in mem]})
            print(f"{variant} {i} repos: {len(pids)} processes, RSS {out[-1]['rss_bytes'] / 2**20:.0f} MiB, "
                  f"PSS {out[-1]['pss_bytes'] / 2**20:.0f} MiB", file=sys.stderr)
    stop_all(run_dir)
    return out


def timeout_run(roots: list[Path], before: Path, run_dir: Path, runs: int) -> dict:
    """With the ``after`` code: cold start of the process, a new root in a running process, a warm search, and a
    read command in-process against warm (medians of ``runs``)."""
    env = env_of("after", before, run_dir)
    cold_env = {**env, "GITMEM_NO_DAEMON": "1"}
    first, new_root, warm, cpu = [], [], [], []
    for _ in range(runs):
        stop_all(run_dir)
        d = run_drive(roots[0], env)  # no process: started, then polled until it answers
        first.append(d["first_s"])
        cpu.append(sum(cpu_seconds(p) for p in warm_pids(run_dir)))
        warm.append(d["warm_s"])
        d2 = run_drive(roots[1], env)  # the process runs: the second repository is loaded by its first request
        new_root.append(d2["first_s"])
    cli_cold, cli_warm, bare = [], [], []
    for _ in range(runs):  # interleaved: the same command in-process and warm, and python -c pass (the noise)
        cli_cold.append(gitmem_cmd(roots[0], cold_env, "recall", QUERY))
        cli_warm.append(gitmem_cmd(roots[0], env, "recall", QUERY))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    stop_all(run_dir)
    med = statistics.median
    return {"process_first_answer_s": med(first), "process_start_cpu_s": med(cpu),
            "new_root_first_answer_s": med(new_root), "python_pass_s": med(bare),
            "warm_search_s": med(warm), "recall_in_process_s": med(cli_cold), "recall_warm_s": med(cli_warm),
            "runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--before", type=Path, default=Path("/work/wt/daemon-before"))
    ap.add_argument("--repos", type=int, default=7)
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-daemon"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="rss,timeout", help="what to measure, of rss,timeout (default: both)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--_drive", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._drive:
        print(json.dumps(drive(args._drive)))
        return 0
    if not (args.before / "gitmem" / "daemon" / "server.py").is_file():
        raise SystemExit(f"{args.before} is not a gitmem checkout (git worktree add --detach {args.before} <commit>)")
    roots = build_all(args.repo, args.work, args.repos, args.memories)
    run_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"gm-bench-run-{os.getpid()}"
    run_dir.mkdir(mode=0o700)
    steps = [s for s in (1, 3, 7) if s <= args.repos]
    only = set(args.only.split(","))
    result: dict = {"memories": args.memories, "before": [], "after": [], "timeout": None}
    try:
        if "rss" in only:
            result["before"] = rss_run("before", roots, args.before, run_dir, steps)
            result["after"] = rss_run("after", roots, args.before, run_dir, steps)
        if "timeout" in only:
            result["timeout"] = timeout_run(roots, args.before, run_dir, args.runs)
    finally:
        stop_all(run_dir)
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"| repositories open ({args.memories} memories each) | before: processes | before: RSS sum | "
          "before: PSS sum | after: processes | after: RSS sum | after: PSS sum |")
    print("|---|---|---|---|---|---|---|")
    mib = 2**20
    for b, a in zip(result["before"], result["after"], strict=True):
        print(f"| {b['repos']} | {b['processes']} | {b['rss_bytes'] / mib:.0f} MiB | {b['pss_bytes'] / mib:.0f} MiB | "
              f"{a['processes']} | {a['rss_bytes'] / mib:.0f} MiB | {a['pss_bytes'] / mib:.0f} MiB |")
    t = result["timeout"]
    if t is None:
        return 0
    print()
    print(f"| idle timeout: what a warm process saves (medians of {t['runs']}) | seconds |")
    print("|---|---|")
    for key, what in (("process_first_answer_s", "first answer of a new process (start, imports, model, index)"),
                      ("process_start_cpu_s", "CPU seconds the new process used until then"),
                      ("new_root_first_answer_s", "first answer for another repository in a running process"),
                      ("warm_search_s", "a warm search (client `search` op)"),
                      ("recall_in_process_s", "`gitmem recall` in-process (no warm process)"),
                      ("recall_warm_s", "`gitmem recall` answered by the warm process"),
                      ("python_pass_s", "`python -c pass` (the box's noise)")):
        print(f"| {what} | {t[key]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
