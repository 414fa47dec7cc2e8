"""What the organisation's memories cost the agent hooks: session start and prompt, with and without org injection.

Builds (under ``--work``, a temp folder by default) a small organisation: the project the agent works in
(``ledger``) and ``--repos`` other repositories, each with ``--memories`` generated memories (one in three about
``ledger``, the rest about their own code) committed as memory files, all indexed into an org index on a local
folder URI (``gitmem.org.index``). Then times Claude Code's hook entry point (a new process per call, the event
JSON on stdin, a new session id each call) for SessionStart and UserPromptSubmit, interleaved round-robin with
``python -c pass`` so that every configuration sees the same load, in four configurations:

* ``off``: no ``[org]`` (every hook as before issue 21);
* ``on, cold``: ``[org] inject = true``, no warm process: the session start searches the org index in its own
  process (LanceDB, the embedding model, the connection: ``session_start.org_for_session``, in a thread beside
  the repository's own context); the prompt hook gets no org hits (it only asks the warm process);
* ``off, warm`` and ``on, warm``: the warm process up (its index built, its org connection open): the session
  start and the prompt ask it.

Reports per event and configuration the median and p90 (ms), the median's ratio to ``python -c pass`` and to
``off`` (cold) or ``off, warm``, and in how many calls the output held org memories.

    python bench/org_hooks.py [--repos 2] [--memories 100] [--runs 7] [--work DIR] [--json] [--s3]

``--s3``: the org index on a real S3 store, a single-node Ceph RADOS Gateway on 127.0.0.1 started and stopped
here (``testing/rgw.py``, ~20 s), reached with the standard AWS environment variables.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from testing.repos import commit, make_repo  # noqa: E402

ORG_MARK = "other repositories of the organisation"
WORDS = ("cache retry timeout parser config index token budget anchor session commit merge branch "
         "schema migration lock queue worker fingerprint symbol rename spool redact gateway").split()
PROMPT = "does the ledger retry timeout of the gateway worker come in seconds?"


def build(work: Path, repos: int, n: int, uri: str, seed: int = 1) -> Path:
    """The project and the org index at ``uri`` (a folder or ``s3://``): the project's root."""
    from gitmem.anchors import Resolver
    from gitmem.git import WORKTREE, Repo
    from gitmem.infra import utc_now
    from gitmem.memfile import write
    from gitmem.model import Memory
    from gitmem.org import repos as org_repos
    from gitmem.org.index import index
    from gitmem.org.settings import OrgSettings
    from gitmem.store import Store, init_layout, new_id

    rnd = random.Random(seed)
    now = utc_now()
    roots = []
    for k in range(repos + 1):
        name = "ledger" if k == 0 else f"service{k}"
        code = "".join(f"def {w}_{i}(x):\n    return x + {i}\n\n\n" for i, w in enumerate(WORDS))
        root = make_repo(work / name, {f"src/{name}.py": code})
        init_layout(Repo(root))
        store = Store(Repo(root))
        resolver = Resolver(store.repo)
        for i in range(n):
            w = rnd.randrange(len(WORDS))
            anchor = resolver.make(f"src/{name}.py", f"{WORDS[w]}_{w}", WORKTREE)
            about = "ledger's " if k and i % 3 == 0 else ""
            words = " ".join(rnd.choice(WORDS) for _ in range(25))
            m = Memory(id=new_id(), type=rnd.choice(("decision", "gotcha", "constraint", "discovery")),
                       title=f"{about}{' '.join(rnd.choice(WORDS) for _ in range(6))} #{i}", body=words,
                       anchors=[anchor], author="bench", source="user", created=now, updated=now)
            write(store.path_for(m), m)
        commit(root, "memories")
        roots.append(root)
    t = time.perf_counter()
    index(OrgSettings(uri=uri), [org_repos.from_argument(str(r), None) for r in roots])
    print(f"org index of {len(roots)} repositories x {n} memories at {uri} built in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    return roots[0]


def call(root: Path, event: str, env: dict[str, str], i: int) -> tuple[float, bool]:
    """One hook process: (wall ms, whether its output held org memories)."""
    payload = {"session_id": f"bench-{event}-{i}-{time.monotonic_ns()}", "transcript_path": "", "cwd": str(root),
               "hook_event_name": event}
    payload |= {"source": "startup"} if event == "SessionStart" else {"prompt": PROMPT}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"], cwd=root, env=env,
                       input=json.dumps(payload).encode(), capture_output=True, timeout=120)
    ms = (time.perf_counter() - t) * 1000
    assert p.returncode == 0, p.stderr.decode()
    return ms, ORG_MARK in p.stdout.decode()


def pass_ms(env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return (time.perf_counter() - t) * 1000


def rounds(root: Path, configs: dict[str, dict[str, str]], runs: int) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {"python -c pass": {"ms": []}}
    for c in configs:
        for e in ("SessionStart", "UserPromptSubmit"):
            out[f"{e} · {c}"] = {"ms": [], "org": []}
    for i in range(runs):
        out["python -c pass"]["ms"].append(pass_ms(next(iter(configs.values()))))
        for c, env in configs.items():
            for e in ("SessionStart", "UserPromptSubmit"):
                ms, org = call(root, e, env, i)
                out[f"{e} · {c}"]["ms"].append(ms)
                out[f"{e} · {c}"]["org"].append(float(org))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", type=int, default=2)
    ap.add_argument("--memories", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--s3", action="store_true", help="the org index on a Ceph RADOS Gateway started here "
                                                     "(testing/rgw.py) instead of a local folder")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="gitmem-org-hooks-"))
    if not args.s3:
        return run(args, work, str(work / "org-index"))
    from testing import rgw

    missing = rgw.missing()
    if missing:
        print(f"no object store: {', '.join(missing)} not on PATH (.ci/run installs them)", file=sys.stderr)
        return 1
    with rgw.cluster(Path(tempfile.mkdtemp(prefix="gitmem-rgw-"))) as cluster:
        org = cluster.new_org()
        os.environ.update(org.env())
        return run(args, work, org.uri)


def run(args: argparse.Namespace, work: Path, uri: str) -> int:
    """Build the organisation at ``uri`` and time the four configurations (module docstring)."""
    home = work / "home"
    (home / "xdg" / "gitmem").mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n")
    base = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
            "XDG_CONFIG_HOME": str(home / "xdg"), "XDG_CACHE_HOME": str(home / "cache"), "LANCEDB_LOG": "error"}
    os.environ.update(base)
    root = build(work, args.repos, args.memories, uri)
    user_cfg = home / "xdg" / "gitmem" / "config.toml"
    off = {**base, "XDG_CONFIG_HOME": str(home / "xdg-off"), "GITMEM_NO_DAEMON": "1"}
    user_cfg.write_text(f'[org]\nuri = "{uri}"\ninject = true\n')
    on = {**base, "GITMEM_NO_DAEMON": "1"}
    results = rounds(root, {"off": off, "on, cold": on}, args.runs)

    from gitmem import layout
    from gitmem.daemon import client

    lay = layout.of(root)
    warm = {k: v for k, v in base.items() if k != "GITMEM_NO_DAEMON"}
    os.environ.pop("GITMEM_NO_DAEMON", None)
    try:
        client.ensure_started(lay)
        end = time.monotonic() + 300
        while client.request(lay, "org_search", {"query": "ledger", "limit": 1}, timeout_s=30, start=False) is None:
            assert time.monotonic() < end, "no warm process"
            time.sleep(0.5)
        # "off, warm": the same warm process, the user's config without inject (it re-reads it per request)
        warm_off = {**warm, "XDG_CONFIG_HOME": str(home / "xdg-off")}
        warm_res = rounds(root, {"off, warm": warm_off, "on, warm": warm}, args.runs)
    finally:
        client.stop(lay)
    results.update({k: v for k, v in warm_res.items() if k != "python -c pass"})
    results["python -c pass (warm rounds)"] = warm_res["python -c pass"]
    rows = []
    for name, r in results.items():
        med = statistics.median(r["ms"])
        p90 = statistics.quantiles(r["ms"], n=10)[-1] if len(r["ms"]) > 1 else med
        rows.append({"row": name, "median_ms": round(med, 1), "p90_ms": round(p90, 1),
                     "org_given": f"{int(sum(r.get('org', [])))}/{len(r['ms'])}" if "org" in r else ""})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'':40} {'median ms':>10} {'p90 ms':>8}  org given")
    for row in rows:
        print(f"{row['row']:40} {row['median_ms']:>10} {row['p90_ms']:>8}  {row['org_given']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
