"""``gitmem ui`` with 10,000 memories: time to first render and to a search result, measured in the browser.

Builds (once, cached under ``--work``) bench/scale.py's repository: a clone of ``--repo`` with N generated
memories anchored to its real symbols, committed. Then ``gitmem sync`` (catalog rows, statuses, LanceDB
index: what a repository that uses gitmem already has), starts ``gitmem ui --no-browser`` as a process and
drives Debian's headless Chromium with Playwright. Per run, in a new page:

* ``first_render_ms``: navigation start → the map drawn (``performance.mark('gitmem-map-rendered')``: the
  page fetched ``/api/map``, built the folder tree with its counts and drew the open folders and the first
  page of the list);
* ``map_fetch_render_ms``: the page's own timing of that fetch + build + draw;
* ``search_ms``: Enter in the search box → the hits drawn (``/api/search``: ``gitmem recall``'s hybrid
  search, then the list);
* ``filter_ms``: choosing a type in the filter → the tree rebuilt and redrawn (synchronous, in the page);
* ``open_memory_ms``: a click on a memory → its pane drawn (code, diff, statuses);

and, outside the browser, ``api_map_first_ms`` (the first ``/api/map`` request of the server: the map built from
the catalog), ``api_map_ms`` (later requests: the map is rebuilt only when a memory or a status changed) and its
size. Medians of
``--runs``, with ``python -c pass`` measured in the same run as the machine's yardstick.

    python bench/ui.py [--repo PATH] [--sizes 10000] [--runs 5] [--work DIR] [--json]

Needs ``chromium`` on PATH (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

QUERIES = ["retry timeout cache", "parser token budget", "why does the lock deadlock", "schema migration rollback",
           "render escape html"]


def python_pass_ms(runs: int) -> float:
    """Median wall time of ``python -c pass`` (ms): the yardstick of this machine, measured in this run."""
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def start(root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-P", "-m", "gitmem", "ui", "--no-browser"], cwd=root, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("gitmem ui: http"):
        raise SystemExit(f"gitmem ui did not start: {line}")
    return proc, line.split()[2]


def api_map(url: str) -> tuple[float, int]:
    """(ms, bytes) of one ``/api/map`` request with the token's cookie."""
    origin, token = url.split("/?token=")
    port = int(origin.rsplit(":", 1)[1])
    con = HTTPConnection("127.0.0.1", port, timeout=300)
    t = time.perf_counter()
    con.request("GET", "/api/map", headers={"Cookie": f"gitmem_ui_{port}={token}"})
    body = con.getresponse().read()
    ms = (time.perf_counter() - t) * 1000
    con.close()
    return ms, len(body)


def measure(root: Path, runs: int, chromium: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    proc, url = start(root)
    out: dict[str, list[float]] = {k: [] for k in ("first_render_ms", "map_fetch_render_ms", "search_ms",
                                                   "filter_ms", "open_memory_ms", "api_map_ms")}
    size = 0
    try:
        first_ms, _ = api_map(url)  # builds the map (later calls get it from the cache until something changes)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            for i in range(runs):
                ms, size = api_map(url)
                out["api_map_ms"].append(ms)
                page = browser.new_page(viewport={"width": 1500, "height": 900})
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']", timeout=300_000)
                out["first_render_ms"].append(page.evaluate(
                    "() => performance.getEntriesByName('gitmem-map-rendered')[0].startTime"))
                out["map_fetch_render_ms"].append(page.evaluate("() => window.gitmem.timings.map"))
                out["filter_ms"].append(page.evaluate("""() => {
                    const s = document.getElementById('f-type'), t = performance.now();
                    s.value = s.options[1].value; s.dispatchEvent(new Event('change'));
                    const ms = performance.now() - t;
                    s.value = ''; s.dispatchEvent(new Event('change'));
                    return ms; }"""))
                q = QUERIES[i % len(QUERIES)]
                page.fill("#search", q)
                page.evaluate("() => { window.gitmem.timings.search = null; }")
                page.press("#search", "Enter")
                page.wait_for_function("() => window.gitmem.timings.search !== null", timeout=300_000)
                out["search_ms"].append(page.evaluate("() => window.gitmem.timings.search"))
                if page.query_selector(".item") is not None:
                    t0 = page.evaluate("() => performance.now()")
                    page.locator(".item").first.click()  # found again if a live update redrew the list
                    page.wait_for_selector("#memory-pane .anchor", timeout=300_000)
                    out["open_memory_ms"].append(page.evaluate("() => performance.now()") - t0)
                page.close()
            browser.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    res: dict[str, Any] = {k: round(statistics.median(v), 1) for k, v in out.items() if v}
    res["api_map_first_ms"] = round(first_ms, 1)
    res["api_map_mb"] = round(size / 1e6, 2)
    return res


def main() -> int:
    from scale import build  # bench/scale.py: the same generated repositories

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-ui"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("bench/ui.py needs chromium on PATH (apt-get install chromium)")
    args.work.mkdir(parents=True, exist_ok=True)
    results = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        root = build(args.repo.resolve(), args.work, n)
        print(f"[{n}] gitmem sync", file=sys.stderr)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-P", "-m", "gitmem", "sync"], cwd=root, check=True, capture_output=True)
        print(f"[{n}] synced in {time.perf_counter() - t:.1f} s; measuring", file=sys.stderr)
        row = {"memories": n, "python_pass_ms": round(python_pass_ms(args.runs), 1), **measure(root, args.runs,
                                                                                                 chromium)}
        results[n] = row
        print(json.dumps(row), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    keys = [k for k in next(iter(results.values())) if k != "memories"]
    print("| measure | " + " | ".join(f"{n:,} memories" for n in results) + " |")
    print("| --- |" + " --- |" * len(results))
    for k in keys:
        print(f"| {k} | " + " | ".join(str(r.get(k, "")) for r in results.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
