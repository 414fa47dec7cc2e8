"""Whole-process CLI benchmark: each read command cold (its own process does the work) and warm (the worktree's
warm process answers it), side by side with ``python -c pass``.

For each size (``--sizes``, default 1,000 and 10,000 memories) a copy of a real repository with generated
memories is built once and cached under ``--work`` (``bench/hooks.py``'s ``build``: the same repositories
``bench/hooks.py`` times). Then, for ``--runs`` rounds, each round runs ``python -c pass`` and every command
of ``COMMANDS`` once per variant, interleaved, so that all see the same machine load:

* ``cold``: ``gitmem ARGS`` with ``GITMEM_NO_DAEMON=1`` (imports, model load and work in the process);
* ``warm``: ``gitmem ARGS`` with the worktree's warm process up (started and checked before the rounds;
  the process count of requests it served is checked after them);
* ``--also LABEL=EXECUTABLE``: another build's ``gitmem`` (cold), e.g. main's before this work (a script
  that puts that checkout first on ``sys.path`` and calls ``gitmem.cli.entry``), in its own copy of the
  repository (``<repo>-<LABEL>``, made once: another catalog schema would make each build rebuild the other's
  catalog on every run);
* ``--also-warm LABEL=SOURCE``: another build's warm path: this environment's ``gitmem`` with ``PYTHONPATH=SOURCE``
  (a source checkout), its own warm process (its own ``GITMEM_RUN_DIR`` under ``--work``) in its own copy.

``--parallel K`` launches each timed command K times at once (an agent running commands side by side: the warm
process answers one at a time), each process timed. ``--hog N`` runs N CPU-bound processes (``while True:
pass``, started before the warm-up and ended by pid after the rounds) to time the commands under load;
``--commands`` times a subset of ``COMMANDS`` (comma-separated).

Reports per size, command and variant: median, p90 and max wall time (ms) and the median's ratio to
``python -c pass``'s median of the same run. Before timing, each command's warm output is checked to equal
its cold output byte for byte (stdout, stderr, exit code). Goal (issue 13): warm ``recall`` and
``context --prompt`` within 15× ``python -c pass`` at 10k; cold no slower than before.

    python bench/cli.py [--repo PATH] [--sizes 1000,10000] [--runs 10] [--work DIR] [--json]
        [--also LABEL=EXECUTABLE ...] [--also-warm LABEL=SOURCE ...] [--hog N] [--parallel K] [--commands NAME,...]

The repository (default: this one) is cloned, never modified.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from hooks import build  # noqa: E402 - bench/hooks.py: the repositories with N memories

#: The read commands timed, by name: argv after ``gitmem`` (``{file}``: an anchored file, ``{id}``: a memory id).
COMMANDS = {
    "recall": ["recall", "retry timeout for the gateway"],
    "context --file": ["context", "--file", "{file}"],
    "context --prompt": ["context", "--prompt", "change how the retry timeout of {file} is parsed"],
    "stale": ["stale"],
    "show": ["show", "{id}"],
    "list": ["list"],
}
NO_DAEMON = {"GITMEM_NO_DAEMON": "1"}
#: An age as ``rank.render.age`` prints it.
AGE = re.compile(rb"\b\d+ (?:min|h|d|wk|mo|y)\b|\bnow\b")


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """(wall time in ms, the completed process) of ``argv`` in ``cwd`` with ``env`` over the environment."""
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000, proc


def timed_at_once(argv: list[str], cwd: Path, env: dict[str, str], k: int
                  ) -> list[tuple[float, subprocess.CompletedProcess[bytes]]]:
    """``timed`` of ``k`` copies of ``argv`` started at once (one thread each)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(k) as pool:
        return list(pool.map(lambda _: timed(argv, cwd, env), range(k)))


def unaged(out: bytes) -> bytes:
    """``out`` with memories' ages (``7 min``, ``"age": "3 h"``) blanked: a minute may pass between two runs."""
    return AGE.sub(b"<age>", out)


def pick(root: Path, rnd: random.Random) -> dict[str, str]:
    """An anchored file and a memory id of the repository at ``root`` (from ``gitmem list --json``)."""
    proc = subprocess.run([gitmem_exe(), "list", "--json"], cwd=root, capture_output=True, check=True,
                          env={**os.environ, **NO_DAEMON})
    mems = [m for m in json.loads(proc.stdout) if m["anchors"]]
    m = rnd.choice(mems)
    return {"{file}": m["anchors"][0]["path"], "{id}": m["id"]}


def gitmem_exe() -> str:
    """This environment's ``gitmem`` console script (as a user runs it)."""
    exe = shutil.which("gitmem", path=str(Path(sys.executable).parent))
    if not exe:
        raise SystemExit("gitmem is not installed in this Python's environment (pip install -e .)")
    return exe


def daemon_status(root: Path, env: dict[str, str] | None = None) -> dict[str, object] | None:
    proc = subprocess.run([gitmem_exe(), "daemon", "status", "--json"], cwd=root, capture_output=True,
                          env={**os.environ, **(env or {})})
    doc = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return doc if doc.get("running") else None


def start_warm(root: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """Stop any warm process of ``root``, start a new one through a read command, wait until it answers."""
    env = {**os.environ, **(env or {})}
    subprocess.run([gitmem_exe(), "daemon", "stop"], cwd=root, capture_output=True, env=env)
    subprocess.run([gitmem_exe(), "list"], cwd=root, capture_output=True, env={**env, "GITMEM_NO_DAEMON": ""})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        st = daemon_status(root, env)
        if st:
            return st
        time.sleep(0.2)
    raise SystemExit(f"the warm process of {root} did not start (see .git/gitmem/logs/daemon.log)")


def measure(root: Path, runs: int, also: list[tuple[str, str]], rnd: random.Random,
            also_warm: list[tuple[str, str]] | None = None, commands: list[str] | None = None,
            parallel: int = 1) -> list[dict[str, object]]:
    """The rows of one repository (see the module docstring)."""
    values = pick(root, rnd)
    argvs = {name: [a.replace("{file}", values["{file}"]).replace("{id}", values["{id}"]) for a in argv]
             for name, argv in COMMANDS.items() if commands is None or name in commands}
    exe = gitmem_exe()
    warm_env = {"GITMEM_NO_DAEMON": ""}
    variants: list[tuple[str, str, dict[str, str]]] = [("cold", exe, NO_DAEMON), ("warm", exe, warm_env)]
    variants += [(label, other, NO_DAEMON) for label, other in also]
    also_warm = also_warm or []
    variants += [(label, exe, {"GITMEM_NO_DAEMON": "", "PYTHONPATH": source,
                               "GITMEM_RUN_DIR": str(root.parent / f"run-{label}")}) for label, source in also_warm]
    # another build may keep another catalog schema: in one repository each would rebuild the other's catalog on
    # every run, so each ``--also`` build runs in its own copy of the repository (made once, same commits)
    where = {"cold": root, "warm": root}
    for label, _other in [*also, *also_warm]:
        copy = root.parent / f"{root.name}-{label}"
        if not copy.exists():
            shutil.copytree(root, copy, symlinks=True)
        where[label] = copy
    start_warm(root)
    for label, _, env in variants[2 + len(also):]:
        Path(env["GITMEM_RUN_DIR"]).mkdir(mode=0o700, exist_ok=True)
        start_warm(where[label], env)
    for argv in argvs.values():  # warm-up (page cache, .pyc, statuses recorded) and the equality check
        _, cold = timed([exe, *argv], root, NO_DAEMON)
        for _ in range(2):
            _, warm = timed([exe, *argv], root, warm_env)
        same = ((cold.returncode, unaged(cold.stdout), cold.stderr)
                == (warm.returncode, unaged(warm.stdout), warm.stderr))
        if not same:
            raise SystemExit(f"gitmem {' '.join(argv)}: warm output differs from cold output\n"
                             f"cold: {cold.returncode} {cold.stdout[-300:]!r} {cold.stderr[-300:]!r}\n"
                             f"warm: {warm.returncode} {warm.stdout[-300:]!r} {warm.stderr[-300:]!r}")
        for label, other, env in variants[2:]:
            timed([other, *argv], where[label], env)
    before_st: dict[str, Any] = daemon_status(root) or {}
    served_before, dropped_before = int(before_st["requests"]), int(before_st.get("dropped") or 0)
    times: dict[tuple[str, str], list[float]] = {("python -c pass", ""): []}
    for name in argvs:
        for label, _, _ in variants:
            times[(name, label)] = []
    for i in range(runs):
        times[("python -c pass", "")].append(timed([sys.executable, "-c", "pass"], root, {})[0])
        for name, argv in argvs.items():
            for label, program, env in variants:
                for ms, proc in timed_at_once([program, *argv], where[label], env, parallel):
                    if proc.returncode != 0:
                        raise SystemExit(f"{label} gitmem {' '.join(argv)} exited {proc.returncode}: "
                                         f"{proc.stderr.decode()[-500:]}")
                    times[(name, label)].append(ms)
        print(f"\r{root.name}: round {i + 1}/{runs}", end="", file=sys.stderr)
    print(file=sys.stderr)
    st: dict[str, Any] | None = daemon_status(root)
    served = int(st["requests"]) - served_before if st else 0
    dropped = int(st.get("dropped") or 0) - dropped_before if st else 0
    for label, _, env in variants[2 + len(also):]:
        subprocess.run([exe, "daemon", "stop"], cwd=where[label], capture_output=True, env={**os.environ, **env})
    base = statistics.median(times[("python -c pass", "")])
    rows = []
    for (name, label), ts in times.items():
        ts = sorted(ts)
        med = statistics.median(ts)
        rows.append({"command": name, "variant": label, "median_ms": round(med, 1),
                     "p90_ms": round(ts[int(0.9 * (len(ts) - 1))], 1), "max_ms": round(ts[-1], 1),
                     "ratio_to_python": round(med / base, 2), "runs": len(ts)})
    rows.append({"command": "warm requests served", "variant": "warm", "served": served, "dropped": dropped,
                 "expected": runs * len(argvs) * parallel, "rss_bytes": st.get("rss_bytes") if st else None})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-hooks"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=EXECUTABLE",
                    help="time this gitmem (cold) too, in the same rounds")
    ap.add_argument("--also-warm", action="append", default=[], metavar="LABEL=SOURCE",
                    help="time this source checkout's warm path too (PYTHONPATH=SOURCE, its own warm process)")
    ap.add_argument("--hog", type=int, default=0, metavar="N", help="N CPU-bound processes during the rounds")
    ap.add_argument("--parallel", type=int, default=1, metavar="K", help="each timed command K times at once")
    ap.add_argument("--commands", default="", help="comma-separated names of COMMANDS to time (default: all)")
    ap.add_argument("--keep-warm", action="store_true", help="leave the warm processes running at the end")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    also = [(label, exe) for label, _, exe in (x.partition("=") for x in args.also)]
    also_warm = [(label, str(Path(src).resolve())) for label, _, src in (x.partition("=") for x in args.also_warm)]
    commands = [c for c in args.commands.split(",") if c] or None
    # bytecode, as `pip install` writes it (see bench/hooks.py)
    import compileall

    import gitmem

    compileall.compile_dir(str(Path(gitmem.__file__).parent), quiet=1)
    rnd = random.Random(13)
    out = {}
    for n in (int(s) for s in args.sizes.split(",")):
        root = build(args.repo.resolve(), args.work, n)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hog)]
        try:
            out[n] = measure(root, args.runs, also, rnd, also_warm, commands, args.parallel)
            print(json.dumps({n: out[n]}), file=sys.stderr)  # each size as soon as it is measured
        finally:
            for hog in hogs:  # ours, by pid
                hog.kill()
                hog.wait()
            if not args.keep_warm:
                subprocess.run([gitmem_exe(), "daemon", "stop"], cwd=root, capture_output=True)
    if args.json:
        print(json.dumps({"repo": str(args.repo), "runs": args.runs, "sizes": out}, indent=2))
        return 0
    for n, rows in out.items():
        print(f"\n{n} memories, {args.runs} runs each, repo {args.repo.resolve().name}")
        print(f"{'command':18} {'variant':8} {'median':>9} {'p90':>9} {'max':>9} {'× python':>9}")
        for r in rows:
            if "served" in r:
                rss = r["rss_bytes"]
                print(f"warm process: served {r['served']} of {r['expected']} timed commands, "
                      f"dropped {r.get('dropped')} unstarted"
                      + (f"; {int(rss) / 2**20:.0f} MiB resident" if isinstance(rss, int) else ""))
                continue
            print(f"{r['command']:18} {r['variant']:8} {r['median_ms']:>7.1f}ms {r['p90_ms']:>7.1f}ms "
                  f"{r['max_ms']:>7.1f}ms {r['ratio_to_python']:>8.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
