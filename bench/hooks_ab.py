"""Hook latency of two builds side by side, interleaved in the same rounds, each on its own bench repository.

``bench/hooks.py --also`` times another build on the same repository; that fails when the two builds'
catalog schemas differ (one cannot read the other's). This runs each build (a source checkout put first
on ``PYTHONPATH``) on its own copy, built beforehand by ``bench/hooks.py --work DIR`` run with that build,
alternating the builds' order every round; the events and placeholders are ``bench/hooks.py``'s (the
second build's repository picks the file, the first gets the same relative path). Prints medians, the
ratios to ``python -c pass`` timed in the same rounds, and after/before; the same for the CPU time (user + system)
of each hook process and what it waited for, which other jobs on a loaded machine move far less than wall time.

Every call runs cold, as ``bench/hooks.py``'s cold rounds (``GITMEM_NO_DAEMON=1``: no session start spawns a
warm process that later prompts would use) and with no personal repository. ``--kinds`` picks the events: the
four of every adapter (``capture,file,prompt,start``) and, where the adapter has them, ``shell`` and ``failure``
(``bench/hooks.py``'s ``ACTION_TARGETS_MS``) and ``read`` (Claude Code's PreToolUse ``Read``, defined here).

    python bench/hooks_ab.py BEFORE_SRC BEFORE_REPO AFTER_SRC AFTER_REPO [--runs 20] [--adapters claude,codex]
        [--kinds start,prompt,read,file,shell,capture,failure]

e.g. ``python bench/hooks_ab.py /tmp/before /tmp/hb-before/repo-1000 . /tmp/hb-after/repo-1000``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hooks as hb  # bench/hooks.py: ADAPTERS, TARGETS_MS, fill, round_values

#: Events timed here beyond an adapter's own (kind -> adapter -> (argument, template)): before a Read.
EXTRA_EVENTS = {"read": {"claude": (None, {**hb._COMMON, "hook_event_name": "PreToolUse", "tool_name": "Read",
                                           "tool_use_id": "$session", "tool_input": {"file_path": "$path"}})}}


def event(adapter: hb.Adapter, kind: str) -> tuple[str | None, dict] | None:
    """(event argument, JSON template) of ``adapter``'s ``kind`` event, or None when it has none."""
    return adapter.events.get(kind) or EXTRA_EVENTS.get(kind, {}).get(adapter.name)


def timed(argv: list[str], stdin: bytes, cwd: Path | str, env: dict[str, str]) -> tuple[float, bool, float]:
    """(wall time in ms, whether it printed anything, CPU time in ms: user + system of the process and the
    processes it waited for, ``RUSAGE_CHILDREN``; less moved by other jobs on a loaded machine)."""
    r0, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    p = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, env=env)
    ms, r1 = (time.perf_counter() - t) * 1000, resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{argv} exited {p.returncode}: {p.stderr.decode()[-500:]}")
    return ms, bool(p.stdout.strip()), (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before_src", type=Path)
    ap.add_argument("before_repo", type=Path)
    ap.add_argument("after_src", type=Path)
    ap.add_argument("after_repo", type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--adapters", default="claude,codex")
    ap.add_argument("--kinds", default=",".join(hb.TARGETS_MS),
                    help="events to time, of capture,file,prompt,start,shell,failure,read (default: the first four)")
    args = ap.parse_args()
    kinds = args.kinds.split(",")
    from gitmem.layout import PERSONAL_DIR_ENV

    env0 = {**os.environ, hb.NO_DAEMON_ENV: "1", PERSONAL_DIR_ENV: "/nonexistent/gitmem-bench-no-personal"}
    builds = {"before": (str(args.before_src.resolve()), args.before_repo.resolve()),
              "after": (str(args.after_src.resolve()), args.after_repo.resolve())}
    adapters = [a for a in hb.ADAPTERS if a.name in args.adapters.split(",")]
    bin_dir = Path(sys.executable).parent
    rnd = random.Random(7)
    times: dict[tuple[str, str], list[float]] = {("python", ""): []}
    cpu: dict[tuple[str, str], list[float]] = {("python", ""): []}
    printed: dict[tuple[str, str], int] = {}
    for i in range(args.runs + 1):  # round 0 warms up (page cache, bytecode), not counted
        va = hb.round_values(builds["after"][1], rnd)
        vals = {"after": va, "before": {k: v.replace(str(builds["after"][1]), str(builds["before"][1]))
                                        for k, v in va.items()}}
        ms, _, cpu_ms = timed([sys.executable, "-c", "pass"], b"", "/", dict(os.environ))
        if i:
            times[("python", "")].append(ms)
            cpu[("python", "")].append(cpu_ms)
        order = ["before", "after"] if i % 2 else ["after", "before"]
        for a in adapters:
            for kind in kinds:
                if (ev_shape := event(a, kind)) is None:
                    continue
                arg, template = ev_shape
                for b in order:
                    src, root = builds[b]
                    ev = hb.fill(template, {**vals[b], "$session": f"{vals[b]['$session']}-{b}-{a.name}-{kind}"})
                    ms, out, cpu_ms = timed([str(bin_dir / a.script), *([arg] if arg else [])], json.dumps(ev).encode(),
                                    root, {**env0, "PYTHONPATH": src})
                    if i:
                        key = (f"{a.name} {kind}", b)
                        times.setdefault(key, []).append(ms)
                        cpu.setdefault(key, []).append(cpu_ms)
                        printed[key] = printed.get(key, 0) + out
        print(f"\rround {i}/{args.runs}", end="", file=sys.stderr)
    base = statistics.median(times[("python", "")])
    cbase = statistics.median(cpu[("python", "")])
    print(f"\npython -c pass median {base:.1f} ms (CPU {cbase:.1f} ms) over {args.runs} rounds")
    for a in adapters:
        for kind in kinds:
            k = f"{a.name} {kind}"
            if (k, "before") not in times:
                continue
            mb, ma = statistics.median(times[(k, "before")]), statistics.median(times[(k, "after")])
            pb, pa = (statistics.quantiles(times[(k, b)], n=10)[-1] for b in ("before", "after"))
            print(f"{k:16} before {mb:7.1f} ms (p90 {pb:7.1f}) ×{mb / base:5.2f} "
                  f"({printed[(k, 'before')]}/{args.runs})  "
                  f"after {ma:7.1f} ms (p90 {pa:7.1f}) ×{ma / base:5.2f} ({printed[(k, 'after')]}/{args.runs})  "
                  f"after/before {ma / mb:5.2f}")
            cb, ca = statistics.median(cpu[(k, "before")]), statistics.median(cpu[(k, "after")])
            print(f"{'':16} CPU    {cb:7.1f} ms ×{cb / cbase:5.2f}  after {ca:7.1f} ms ×{ca / cbase:5.2f}  "
                  f"after/before {ca / cb:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
