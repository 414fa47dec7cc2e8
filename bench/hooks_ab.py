"""Hook latency of two builds side by side, interleaved in the same rounds, each on its own bench repository.

``bench/hooks.py --also`` times another build on the same repository; that fails when the two builds'
catalog schemas differ (one cannot read the other's). This runs each build (a source checkout put first
on ``PYTHONPATH``) on its own copy, built beforehand by ``bench/hooks.py --work DIR`` run with that build,
alternating the builds' order every round; the events and placeholders are ``bench/hooks.py``'s (the
second build's repository picks the file, the first gets the same relative path). Prints medians, the
ratios to ``python -c pass`` timed in the same rounds, and after/before.

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


def timed(argv: list[str], stdin: bytes, cwd: Path | str, env: dict[str, str]) -> tuple[float, bool]:
    """(wall time in ms, whether it printed anything)."""
    t = time.perf_counter()
    p = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{argv} exited {p.returncode}: {p.stderr.decode()[-500:]}")
    return (time.perf_counter() - t) * 1000, bool(p.stdout.strip())


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
    printed: dict[tuple[str, str], int] = {}
    for i in range(args.runs + 1):  # round 0 warms up (page cache, bytecode), not counted
        va = hb.round_values(builds["after"][1], rnd)
        vals = {"after": va, "before": {k: v.replace(str(builds["after"][1]), str(builds["before"][1]))
                                        for k, v in va.items()}}
        ms, _ = timed([sys.executable, "-c", "pass"], b"", "/", dict(os.environ))
        if i:
            times[("python", "")].append(ms)
        order = ["before", "after"] if i % 2 else ["after", "before"]
        for a in adapters:
            for kind in kinds:
                if (ev_shape := event(a, kind)) is None:
                    continue
                arg, template = ev_shape
                for b in order:
                    src, root = builds[b]
                    ev = hb.fill(template, {**vals[b], "$session": f"{vals[b]['$session']}-{b}-{a.name}-{kind}"})
                    ms, out = timed([str(bin_dir / a.script), *([arg] if arg else [])], json.dumps(ev).encode(),
                                    root, {**env0, "PYTHONPATH": src})
                    if i:
                        key = (f"{a.name} {kind}", b)
                        times.setdefault(key, []).append(ms)
                        printed[key] = printed.get(key, 0) + out
        print(f"\rround {i}/{args.runs}", end="", file=sys.stderr)
    base = statistics.median(times[("python", "")])
    print(f"\npython -c pass median {base:.1f} ms over {args.runs} rounds")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
