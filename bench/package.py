"""What reading gitmem's version costs a fresh process: the constant vs ``importlib.metadata`` (issue 23 item 1).

Every hook process imports ``gitmem``; its ``__version__`` is a literal the build reads. The alternative, asking
the installed metadata (``importlib.metadata.version("gitmem-cli")``), is timed here in fresh interpreters,
interleaved with ``python -c pass`` and the constant, medians of ``--runs`` each:

    python bench/package.py --runs 30

Prints one table (ms per process) and the extra modules each way imports.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": "pass",
    "import gitmem (the constant)": "import gitmem; gitmem.__version__",
    "importlib.metadata.version": "import importlib.metadata as m; m.version('gitmem-cli')",
    "gitmem.dist.detect (--version, doctor)": "import gitmem.dist as d; d.detect()",
}


def _ms(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - start) * 1000


def _modules(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys; print(' '.join(sys.modules))"],
                         check=True, capture_output=True, text=True).stdout.split()
    return set(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(args.runs):
        for name, code in CASES.items():  # interleaved: the machine's load hits every case alike
            times[name].append(_ms(code))
    base = statistics.median(times["python -c pass"])
    print(f"{'case':42} {'median ms':>10} {'- pass':>8}")
    for name in CASES:
        med = statistics.median(times[name])
        print(f"{name:42} {med:10.1f} {med - base:8.1f}")
    bare = _modules("pass")
    for name in ("import gitmem (the constant)", "importlib.metadata.version"):
        extra = _modules(CASES[name]) - bare
        print(f"{name}: {len(extra)} more modules" + (", typing among them" if "typing" in extra else ""))


if __name__ == "__main__":
    main()
