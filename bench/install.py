"""Install size and time, lean (``pip install gitmem-cli``) vs full (``gitmem-cli[all]``), and ``gitmem check``'s wall
time from each: what the CI step of docs/ci.md costs.

The wheel is built from this checkout (``pip wheel --no-deps``). For each variant and cache state, a fresh venv
(``python -m venv``) gets ``pip install WHEEL`` or ``pip install "WHEEL[all]"``:

* ``warm``: pip's cache as it is (run a variant once before to fill it: the first warm run is discarded);
* ``cold``: ``--no-cache-dir`` (every dependency downloaded from the index, nothing cached).

Reported: the install's wall time (median over ``--runs``), the venv's size on disk minus an empty venv's, and its
distribution count. Then ``gitmem check --base origin/main`` on a clone whose branch made a memory stale
(``testing.ci_snippets.make_repository``), from the lean venv and the full one, interleaved with ``python -c
pass`` of the same interpreter for ``--check-runs`` rounds: median wall ms of each.

    python bench/install.py [--runs 3] [--check-runs 15] [--no-cold] [--json]

Needs the network for ``cold``. The box is shared and noisy: quote ratios.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from testing.ci_snippets import make_repository  # noqa: E402 - the repository the CI snippets are tested on


def du(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symlinks not followed)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.stat(p).st_size
    return total


def fresh_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin"


def install(work: Path, spec: str, cold: bool, name: str) -> dict[str, float | int]:
    """A fresh venv ``name`` with ``pip install spec``; its seconds, bytes over an empty venv, distributions."""
    venv = work / name
    if venv.exists():
        shutil.rmtree(venv)
    bin_dir = fresh_venv(venv)
    empty = du(venv)
    argv = [str(bin_dir / "pip"), "install", "-q", "--disable-pip-version-check", *(["--no-cache-dir"] if cold else []),
            spec]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    seconds = time.perf_counter() - t0
    listed = subprocess.run([str(bin_dir / "pip"), "list", "--format", "json", "--disable-pip-version-check"],
                            check=True, capture_output=True, text=True).stdout
    return {"seconds": seconds, "bytes": du(venv) - empty, "distributions": len(json.loads(listed))}


def time_check(bins: dict[str, Path], clone: Path, runs: int) -> dict[str, float]:
    """Median wall ms of ``gitmem check --base origin/main`` per venv and of ``python -c pass``, interleaved."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["GITMEM_NO_DAEMON"] = "1"
    samples: dict[str, list[float]] = {"python -c pass": [], **{k: [] for k in bins}}
    for _ in range(runs):
        for label in samples:
            if label == "python -c pass":
                argv = [str(next(iter(bins.values())) / "python"), "-c", "pass"]
            else:
                argv = [str(bins[label] / "gitmem"), "check", "--base", "origin/main"]
            t0 = time.perf_counter()
            proc = subprocess.run(argv, cwd=clone, env=env, capture_output=True)
            samples[label].append((time.perf_counter() - t0) * 1000)
            if label != "python -c pass" and proc.returncode != 1:
                raise SystemExit(f"{label}: gitmem check exited {proc.returncode}: {proc.stderr.decode()}")
    return {k: statistics.median(v) for k, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--check-runs", type=int, default=15)
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gitmem-bench-install-"))
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
                        str(HERE.parent)], check=True, capture_output=True)
        wheel = next((work / "dist").glob("*.whl"))
        specs = {"lean": str(wheel), "full": f"{wheel}[all]"}
        rows: list[dict[str, object]] = []
        for label, spec in specs.items():
            install(work, spec, False, f"prime-{label}")  # fills pip's cache; not counted
        for cache in ["warm", *([] if args.no_cold else ["cold"])]:
            for label, spec in specs.items():
                got = [install(work, spec, cache == "cold", f"{label}-{cache}") for _ in range(args.runs)]
                rows.append({"variant": label, "cache": cache,
                             "seconds": round(statistics.median(float(g["seconds"]) for g in got), 1),
                             "mb": round(float(got[-1]["bytes"]) / 1e6, 1),
                             "distributions": got[-1]["distributions"]})
        clone, _ = make_repository(work, "stale", stale=True)
        checks = time_check({"lean": work / "lean-warm/bin", "full": work / "full-warm/bin"}, clone, args.check_runs)
        if args.json:
            print(json.dumps({"installs": rows, "check_ms": checks, "runs": args.runs,
                              "check_runs": args.check_runs}, indent=2))
            return
        print("| install | pip cache | wall s (median) | on disk MB (venv minus an empty one) | distributions |")
        print("|---|---|---:|---:|---:|")
        for r in rows:
            print(f"| {r['variant']} | {r['cache']} | {r['seconds']} | {r['mb']} | {r['distributions']} |")
        base = checks["python -c pass"]
        print(f"\n`gitmem check --base origin/main` (a stale memory: exit 1), median of {args.check_runs}:\n")
        print("| from | wall ms | × `python -c pass` |")
        print("|---|---:|---:|")
        for k, v in checks.items():
            print(f"| {k} | {v:.0f} | {v / base:.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
