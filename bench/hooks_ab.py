"""Hook latency of two builds side by side, interleaved in the same rounds, each on its own bench repository.

``bench/hooks.py --also`` times another build on the same repository; that fails when the two builds'
catalog schemas differ (one cannot read the other's). This runs each build (a source checkout put first
on ``PYTHONPATH``) on its own copy, built beforehand by ``bench/hooks.py --work DIR`` run with that build,
alternating the builds' order every round; the events and placeholders are ``bench/hooks.py``'s (the
second build's repository picks the file, the first gets the same relative path). Prints medians, the
ratios to ``python -c pass`` timed in the same rounds, and after/before.

    python bench/hooks_ab.py BEFORE_SRC BEFORE_REPO AFTER_SRC AFTER_REPO [--runs 20] [--adapters claude,codex]

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
    args = ap.parse_args()
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
            for kind in hb.TARGETS_MS:
                arg, template = a.events[kind]
                for b in order:
                    src, root = builds[b]
                    ev = hb.fill(template, {**vals[b], "$session": f"{vals[b]['$session']}-{b}-{a.name}-{kind}"})
                    ms, out = timed([str(bin_dir / a.script), *([arg] if arg else [])], json.dumps(ev).encode(),
                                    root, {**os.environ, "PYTHONPATH": src})
                    if i:
                        key = (f"{a.name} {kind}", b)
                        times.setdefault(key, []).append(ms)
                        printed[key] = printed.get(key, 0) + out
        print(f"\rround {i}/{args.runs}", end="", file=sys.stderr)
    base = statistics.median(times[("python", "")])
    print(f"\npython -c pass median {base:.1f} ms over {args.runs} rounds")
    for a in adapters:
        for kind in hb.TARGETS_MS:
            k = f"{a.name} {kind}"
            mb, ma = statistics.median(times[(k, "before")]), statistics.median(times[(k, "after")])
            print(f"{k:16} before {mb:7.1f} ms ×{mb / base:5.2f} ({printed[(k, 'before')]}/{args.runs})  "
                  f"after {ma:7.1f} ms ×{ma / base:5.2f} ({printed[(k, 'after')]}/{args.runs})  "
                  f"after/before {ma / mb:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
