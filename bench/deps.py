"""What each runtime dependency costs: installed size (with its own dependencies) and import time.

Reads the installed distributions of the running interpreter's environment (``importlib.metadata``: each
file of a distribution's RECORD, sizes from ``stat``), so run it with a venv that has ``gitmem-cli[all]``
installed. For each of ``DEPENDENCIES`` (distribution → the module gitmem imports):

* **own MB**: the distribution's own files;
* **with deps MB**: it plus every distribution it requires, transitively (markers evaluated for this
  interpreter, extras not followed): what installing it alone would add to an empty venv;
* **import ms**: for ``--runs`` rounds, each round runs ``python -c pass`` and ``python -X importtime -c
  "import MODULE"`` for every module once, interleaved (same machine load for all); the median whole-process
  wall time, its difference from ``python -c pass``'s median, and the median cumulative import time the
  interpreter reports for the module itself (``-X importtime``'s line for it).

Also timed the same way: gitmem's own entry modules (``ENTRY_MODULES``), to show what the lean paths load.

    python bench/deps.py [--runs 9] [--json]

Prints a Markdown table (or JSON). The box is shared and noisy: quote the ratios and differences, not the
absolute figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from importlib.metadata import Distribution, distributions

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: Runtime dependencies before the lean split (issue 23): distribution → the module gitmem imports.
DEPENDENCIES: dict[str, str] = {
    "tree-sitter": "tree_sitter",
    "tree-sitter-language-pack": "tree_sitter_language_pack",
    "click": "click",
    "pyyaml": "yaml",
    "python-ulid": "ulid",
    "filelock": "filelock",
    "tomlkit": "tomlkit",
    "pygments": "pygments",
    "lancedb": "lancedb",
    "pyarrow": "pyarrow",
    "numpy": "numpy",
    "obstore": "obstore",
    "wordllama": "wordllama",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "openai": "openai",
    "mcp": "mcp",
}

#: gitmem's own modules whose import cost tells what a path pays (the CLI, the pre-merge check, the hybrid search).
ENTRY_MODULES = ("gitmem.cli", "gitmem.ops.check", "gitmem.ops.stale", "gitmem.search.hybrid",
                 "gitmem.integrations.mcp_server")


def installed() -> dict[str, Distribution]:
    """Canonical distribution name → its distribution, for this environment (first found wins, as imports do)."""
    found: dict[str, Distribution] = {}
    for d in distributions():
        name = d.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), d)
    return found


def size_bytes(d: Distribution) -> int:
    """Bytes of the distribution's files as listed in its RECORD (files that no longer exist count 0)."""
    total = 0
    for f in d.files or ():
        try:
            total += f.locate().stat().st_size  # type: ignore[attr-defined]
        except OSError:
            pass
    return total


def closure(name: str, dists: dict[str, Distribution]) -> set[str]:
    """Canonical names of ``name`` and every distribution it requires, transitively (extras not followed)."""
    seen: set[str] = set()
    todo = [canonicalize_name(name)]
    while todo:
        n = todo.pop()
        if n in seen or n not in dists:
            continue
        seen.add(n)
        for line in dists[n].requires or ():
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            todo.append(canonicalize_name(req.name))
    return seen


def import_line(stderr: str, module: str) -> float | None:
    """The cumulative microseconds ``-X importtime`` reports for ``module`` itself, or None."""
    for line in reversed(stderr.splitlines()):
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            return float(parts[1])
    return None


def time_imports(modules: list[str], runs: int) -> dict[str, dict[str, float | None]]:
    """Per module (and ``"pass"``): median wall ms, median cumulative import ms (None for ``pass``)."""
    walls: dict[str, list[float]] = {m: [] for m in ["pass", *modules]}
    cums: dict[str, list[float]] = {m: [] for m in modules}
    for _ in range(runs):
        for m in ["pass", *modules]:
            code = "pass" if m == "pass" else f"import {m}"
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
            walls[m].append((time.perf_counter() - t0) * 1000)
            if proc.returncode != 0:
                raise SystemExit(f"import {m} failed: {proc.stderr.strip().splitlines()[-1]}")
            if m != "pass":
                us = import_line(proc.stderr, m)
                if us is not None:
                    cums[m].append(us / 1000)
    return {m: {"wall_ms": statistics.median(walls[m]),
                "import_ms": statistics.median(cums[m]) if cums.get(m) else None} for m in walls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    dists = installed()
    sizes = {n: size_bytes(d) for n, d in dists.items()}
    rows = []
    mods = list(DEPENDENCIES.values()) + list(ENTRY_MODULES)
    times = time_imports(mods, args.runs)
    base = times["pass"]["wall_ms"]
    assert base is not None
    for dist, mod in [*DEPENDENCIES.items(), *((m, m) for m in ENTRY_MODULES)]:
        own = sizes.get(canonicalize_name(dist)) if dist in DEPENDENCIES else None
        deps = sorted(closure(dist, dists)) if dist in DEPENDENCIES else []
        t = times[mod]
        wall = t["wall_ms"]
        assert wall is not None
        rows.append({"distribution": dist if dist in DEPENDENCIES else None, "module": mod,
                     "own_mb": None if own is None else round(own / 1e6, 1),
                     "with_deps_mb": round(sum(sizes[d] for d in deps) / 1e6, 1) if deps else None,
                     "deps": [d for d in deps if d != canonicalize_name(dist)],
                     "wall_ms": round(wall, 1), "over_pass_ms": round(wall - base, 1),
                     "import_ms": None if t["import_ms"] is None else round(t["import_ms"], 1)})
    if args.json:
        print(json.dumps({"python_c_pass_ms": round(base, 1), "runs": args.runs, "rows": rows}, indent=2))
        return
    print(f"`python -c pass`: {base:.1f} ms (median of {args.runs})\n")
    print("| distribution | import | own MB | with its deps MB | wall ms | over `pass` ms | -X importtime ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['distribution'] or ''} | `{r['module']}` | {r['own_mb'] if r['own_mb'] is not None else ''} "
              f"| {r['with_deps_mb'] if r['with_deps_mb'] is not None else ''} | {r['wall_ms']} "
              f"| {r['over_pass_ms']} | {r['import_ms'] if r['import_ms'] is not None else ''} |")
    print("\nDependencies pulled in (transitively):\n")
    for r in rows:
        if r["deps"]:
            print(f"- {r['distribution']}: {', '.join(r['deps'])}")


if __name__ == "__main__":
    main()
