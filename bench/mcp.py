"""MCP server start-up benchmark: whole-process time from spawning ``gitmem mcp`` to its first answers.

A small stdio client (``testing/mcp_stdio.py``: newline-delimited JSON-RPC over the server's pipes, no SDK) spawns the
server as an agent does and, the clock started just before the spawn, sends at once:

* ``modern`` (what Claude Code 2.1 sends): ``server/discover`` with the 2026-07-28 ``_meta`` envelope,
  then ``subscriptions/listen`` (Claude Code waits for its acknowledgement), then ``tools/list``, then a
  ``tools/call search``;
* ``handshake`` (the ``initialize`` handshake of protocol 2025-11-25, e.g. the MCP SDK's client):
  ``initialize``, ``notifications/initialized``, ``tools/list``, then a ``tools/call search``;

and records when each answer arrives: ``ready_ms`` (the discover or initialize answer: what an agent
waits for before its first model request), ``list_ms`` and ``search_ms`` (the first search's answer,
sent right after the list: the worst case, as an agent's first tool call comes seconds later).

Repositories: clones of ``--repo`` with 1k and 10k memories (``bench/scale.py``'s builder, cached under
``--work``), their search index built before timing. ``cold``: no warm process (``GITMEM_NO_DAEMON=1``:
the server searches in-process, after its own warm-up); ``warm``: the worktree's warm process
(``gitmem.daemon``) started and answering before the run (rows left out for a build without one).
Also reported: the server's resident memory after its first search, and the warm process's.
Every round also times ``python -c pass``, interleaved, so ratios compare the same machine load.

    python bench/mcp.py [--repo PATH] [--sizes 1000,10000] [--runs 9] [--work DIR] [--json]
        [--protocols modern,handshake] [--modes cold,warm] [--also LABEL=EXECUTABLE ...]

``--also`` times another build's ``gitmem`` (e.g. today's main: a script that runs it) in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import os
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

from testing.mcp_stdio import CLIENT_INFO, ENVELOPE, HANDSHAKE, LISTEN, Client  # noqa: E402 - after the path

#: Turns the warm process off (``gitmem.daemon.client.NO_DAEMON_ENV``): the cold rows.
NO_DAEMON = "GITMEM_NO_DAEMON"
QUERIES = ("cache retry timeout", "symbol fingerprint rename", "config parse schema", "lock queue worker")


def session(argv: list[str], cwd: Path, protocol: str, query: str, env: dict[str, str]) -> dict[str, float]:
    """One server process: ready, list and first-search times (ms since the spawn), and its resident memory
    after the search (MB, ``/proc/PID/status`` VmRSS).

    Raises:
        RuntimeError: an answer was an error, or the search found nothing.
    """
    c = Client(argv, cwd, env=env)
    try:
        if protocol == "modern":
            ready, ready_ms = c.call("server/discover", {"_meta": ENVELOPE})
            c.send("subscriptions/listen", {"_meta": ENVELOPE, "notifications": LISTEN}, rid="listen:0")
            c.wait_note("notifications/subscriptions/acknowledged")  # Claude Code waits for it
            listed, list_ms = c.call("tools/list", {"_meta": ENVELOPE})
            found, search_ms = c.call("tools/call", {"name": "search", "arguments": {"query": query},
                                                     "_meta": ENVELOPE})
        else:
            ready, ready_ms = c.call("initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                                    "clientInfo": CLIENT_INFO})
            c.send("notifications/initialized", notify=True)
            listed, list_ms = c.call("tools/list")
            found, search_ms = c.call("tools/call", {"name": "search", "arguments": {"query": query}})
        for name, msg in (("ready", ready), ("tools/list", listed), ("search", found)):
            if "result" not in msg or msg["result"].get("isError"):
                raise RuntimeError(f"{name} failed: {json.dumps(msg)[:1500]}")
        if len(listed["result"]["tools"]) != 5 or not found["result"]["structuredContent"]["hits"]:
            raise RuntimeError(f"unexpected answers: {json.dumps(listed)[:300]} {json.dumps(found)[:600]}")
        return {"ready_ms": ready_ms, "list_ms": list_ms, "search_ms": search_ms, "rss_mb": rss_mb(c.proc.pid)}
    finally:
        c.close()


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (0 where ``/proc`` is missing)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def python_pass() -> float:
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.monotonic() - t) * 1000


def daemon_rss(exe: str, root: Path) -> float | None:
    """The resident memory (MB) of ``exe``'s warm process for ``root``, or None when none runs (or the build
    has no ``gitmem daemon``)."""
    proc = subprocess.run([exe, "daemon", "status", "--json"], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    rss = json.loads(proc.stdout).get("rss_bytes")
    return rss / 2**20 if isinstance(rss, int) else 0.0


def stop_daemon(exe: str, root: Path) -> None:
    subprocess.run([exe, "daemon", "stop"], cwd=root, capture_output=True)


def warm_up(exe: str, root: Path) -> bool:
    """Start ``exe``'s warm process for ``root`` (a ``recall`` starts it) and wait until it answers (False:
    this build has none)."""
    env = {k: v for k, v in os.environ.items() if k != NO_DAEMON}
    subprocess.run([exe, "recall", "warm up"], cwd=root, capture_output=True, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if daemon_rss(exe, root) is not None:
            return subprocess.run([exe, "recall", "warm up"], cwd=root, capture_output=True, env=env).returncode == 0
        if subprocess.run([exe, "daemon", "--help"], cwd=root, capture_output=True).returncode != 0:
            return False
        time.sleep(0.2)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-mcp"))
    ap.add_argument("--protocols", default="modern,handshake")
    ap.add_argument("--modes", default="cold,warm")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=EXECUTABLE")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    import compileall

    from scale import build  # bench/scale.py: the same clones and memories

    import gitmem

    compileall.compile_dir(str(Path(gitmem.__file__).parent), quiet=1)  # as pip install leaves it
    here = shutil.which("gitmem", path=str(Path(sys.executable).parent))
    if not here:
        raise SystemExit("gitmem is not installed in this Python's environment (pip install -e .)")
    builds = [("this build", here)] + [(label, exe) for label, _, exe in (x.partition("=") for x in args.also)]
    protocols = args.protocols.split(",")
    rows: list[dict[str, Any]] = []
    for n in [int(x) for x in args.sizes.split(",")]:
        root = build(args.repo.resolve(), args.work, n)
        subprocess.run([here, "recall", "warm up"], cwd=root, check=True, capture_output=True,
                       env={**os.environ, NO_DAEMON: "1"})  # the index built before timing
        for mode in args.modes.split(","):
            for _label, exe in builds:
                stop_daemon(exe, root)
            env = {k: v for k, v in os.environ.items() if k != NO_DAEMON} if mode == "warm" else \
                {**os.environ, NO_DAEMON: "1"}
            runnable = []
            for label, exe in builds:
                if mode == "warm" and not warm_up(exe, root):
                    print(f"note: {label} has no warm process: left out of the warm rows", file=sys.stderr)
                    continue
                runnable.append((label, exe))
            times: dict[tuple[str, str], list[dict[str, float]]] = {(lb, p): [] for lb, _ in runnable
                                                                      for p in protocols}
            base: list[float] = []
            for _label, exe in runnable:  # one warm-up round (page cache, .pyc files), not counted
                for p in protocols:
                    session([exe, "mcp"], root, p, QUERIES[0], env)
            for i in range(args.runs):
                base.append(python_pass())
                for p in protocols:
                    for label, exe in runnable:
                        times[(label, p)].append(session([exe, "mcp"], root, p, QUERIES[i % len(QUERIES)], env))
                print(f"\r[{n} {mode}] round {i + 1}/{args.runs}", end="", file=sys.stderr)
            print(file=sys.stderr)
            med_base = statistics.median(base)
            for (label, p), ts in times.items():
                row: dict[str, Any] = {"memories": n, "mode": mode, "build": label, "protocol": p,
                                       "python_ms": round(med_base, 1), "runs": len(ts)}
                for k in ("ready_ms", "list_ms", "search_ms"):
                    med = statistics.median(t[k] for t in ts)
                    row[k] = round(med, 1)
                    row[k.replace("_ms", "_x")] = round(med / med_base, 1)
                row["rss_mb"] = round(statistics.median(t["rss_mb"] for t in ts), 1)
                warm_rss = daemon_rss(dict(runnable)[label], root) if mode == "warm" else None
                row["daemon_rss_mb"] = round(warm_rss, 1) if warm_rss is not None else None
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
            if mode == "warm":
                for _label, exe in runnable:
                    stop_daemon(exe, root)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| memories | mode | build | protocol | ready ms (× python) | tools/list ms | first search ms (×) | "
          "python -c pass ms | server RSS MB | warm process RSS MB |")
    print("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        warm_rss = f"{r['daemon_rss_mb']:.0f}" if r["daemon_rss_mb"] is not None else "-"
        print(f"| {r['memories']:,} | {r['mode']} | {r['build']} | {r['protocol']} | {r['ready_ms']:.0f} "
              f"({r['ready_x']}×) | {r['list_ms']:.0f} | {r['search_ms']:.0f} ({r['search_x']}×) | "
              f"{r['python_ms']:.0f} | {r['rss_mb']:.0f} | {warm_rss} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
