"""Cost of configuration-file symbols: ``symbol_table`` on a large real ``package-lock.json`` and a generated
YAML of many keys, side by side with ``python -c pass``, in one run.

    .venv/bin/python bench/config_keys.py [--repo /work/.mirror/axios+axios/repo] [--keys 50000] [--repeats 5]

Each measurement is a fresh process (no warm cache; the on-disk cache off): ``python -c pass``; the imports and
the parser alone; then ``symbol_table`` of each file. Prints medians in ms, the symbols made and the size of the
table as the on-disk cache would store it (``symbols._disk_write``'s JSON).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = """
import json, sys
from gitmem.code.symbols import symbol_table
src = open(sys.argv[1], 'rb').read()
t = symbol_table(src, sys.argv[2])
rows = [[s.name, s.kind, s.start_line, s.end_line, s.fingerprint, s.signature_fp, s.body_fp, s.decorators_fp,
         s.shape_fp, list(s.parts), list(s.aliases)] for s in t.values()]
print(len(t), len(json.dumps(rows, separators=(',', ':'))))
"""
IMPORTS = "import gitmem.code.symbols, tree_sitter_language_pack as t; t.get_parser('json'); t.get_parser('yaml')"


def _median_ms(args: list[str], repeats: int) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, out.strip()


def _largest_lock(repo: str) -> bytes:
    def git(*a: str) -> bytes:
        return subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True).stdout

    best, best_size = "", -1
    for c in git("log", "--all", "--format=%H", "--", "package-lock.json").decode().split()[:200]:
        try:
            size = int(git("cat-file", "-s", f"{c}:package-lock.json"))
        except subprocess.CalledProcessError:
            continue
        if size > best_size:
            best, best_size = c, size
    return git("show", f"{best}:package-lock.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="/work/.mirror/axios+axios/repo")
    ap.add_argument("--keys", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    tmp = Path(tempfile.mkdtemp())
    lock = tmp / "package-lock.json"
    lock.write_bytes(_largest_lock(args.repo))
    big = tmp / "big.yml"
    sections = max(1, args.keys // 100)
    big.write_text("".join(f"section_{i}:\n" + "".join(f"  key_{j}: value {i} {j}\n" for j in range(100))
                           for i in range(sections)))
    base, _ = _median_ms([py, "-c", "pass"], args.repeats)
    imports, _ = _median_ms([py, "-c", IMPORTS], args.repeats)
    print(f"python -c pass: {base:.0f} ms; imports + parsers: {imports:.0f} ms")
    for path, name in ((lock, "package-lock.json"), (big, "big.yml")):
        ms, out = _median_ms([py, "-c", PROBE, str(path), name], args.repeats)
        count, cache = out.split()
        print(f"{name}: {path.stat().st_size / 1e6:.2f} MB, {count} symbols, cache row {int(cache) / 1e3:.0f} KB, "
              f"process {ms:.0f} ms = {ms / base:.1f}x python -c pass; symbol_table ~{ms - imports:.0f} ms")


if __name__ == "__main__":
    main()
