"""Organisation-scale benchmark (issue 21 point 6): the org index on the local Ceph RADOS Gateway and on a local
folder URI, side by side in one run.

Generates (cached under ``--work``) an organisation of N bare repositories × M committed memory files, fast:
``git fast-import`` writes each repository as two commits, the same source tree in every repository (20 Python
files × 10 functions; identical bytes and metadata, so one commit SHA), then M memory files in gitmem's format
(``memfile.dumps``) anchored to those functions (``anchors.Resolver.make`` at that commit: real spans and
fingerprints, so statuses resolve to fresh). Titles and bodies are Zipf-distributed words (``bench/scale.py``'s
vocabulary), so full-text search has common and rare terms as in real text.

For each store (``rgw``: a bucket on a single-node Ceph cluster this script starts on 127.0.0.1 with
``testing/rgw.py``, or the one ``--endpoint`` names; ``local``: a folder) it measures:

* full build: ``gitmem.org.index.index`` of every repository into an empty index, in a fresh process (seconds
  inside ``index``, the process's wall time with imports, its peak RSS);
* incremental re-index after a push that changed 10 memory files in one repository (a new commit on its
  ``main``), every repository named (the others are skipped as up to date): in a fresh process (a CI job: imports
  and the embedding model's load included), median of ``--runs`` pushes; and in a warm process (``--runs`` more
  pushes, each indexed by the same process), beside a re-index when nothing changed (first in that process, then warm);
* search latency: ``gitmem.org.search.search`` from a second, warm process (index open, model loaded: one
  untimed query first), median and p90 over ``--queries`` queries; and whole process, ``gitmem recall --org
  QUERY --json`` (the CLI, interpreter start and imports included) median and p90 of ``--runs``, beside
  ``python -c pass``. Readers use the read-only key pair on RGW: reading never needs write credentials;
* concurrent indexers: ``--writers`` processes started together, (a) each indexing a different repository, (b)
  all indexing the same repositories, into an empty index; then every row is checked: none lost (each
  repository's row count equals its memory files), none duplicated (keys distinct);
* bytes stored: the index's files (local: the folder; RGW: the objects under the prefix, summed from a listing),
  after the build and the incremental pushes.

    python bench/org.py [--repos 3] [--memories 100] [--runs 3] [--queries 30] [--writers 4] [--stores rgw,local]
        [--only build,incremental,search,concurrent] [--no-vectors] [--work DIR] [--endpoint URL --access-key K
        --secret-key S [--read-access-key K --read-secret-key S]] [--json]

Sizes up to ``--repos 100 --memories 10000`` (1,000,000 rows). Progress on stderr; a table (or ``--json``) on
stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scale import vocabulary, zipf_words  # noqa: E402 - bench/ is on sys.path when run as a script

#: Source tree of every generated repository: FILES modules × FUNCS functions each (200 symbols to anchor to).
FILES = 20
FUNCS = 10
#: Memory files changed by one "push" of the incremental measurement (issue 21 point 6).
PUSH_CHANGES = 10
#: Fixed identity and time of generated commits: the same tree gives the same commit SHA in every repository.
IDENT = "Bench <bench@example.com>"
EPOCH = 1764806400  # 2025-12-04T00:00:00Z
TOPICS = ("cache", "retry", "ledger", "billing", "session", "token", "queue", "schema", "parser", "gateway",
          "index", "quota", "auth", "shard", "replica", "budget", "anchor", "config", "stream", "lock")
TYPES = ("decision", "gotcha", "constraint", "discovery", "change")


def log(msg: str) -> None:
    print(f"[org] {msg}", file=sys.stderr, flush=True)


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=input, check=True, capture_output=True).stdout.decode()


# -- generating an organisation ------------------------------------------------------------------------------------


def source_files() -> dict[str, str]:
    """The source tree every repository shares: ``src/<topic>_<f>.py`` with FUNCS functions each."""
    files = {}
    for f in range(FILES):
        topic = TOPICS[f % len(TOPICS)]
        funcs = []
        for k in range(FUNCS):
            funcs.append(f'def {topic}_step_{f}_{k}(request, retries={k + 1}):\n'
                         f'    """Handle the {topic} request, step {k} of module {f}."""\n'
                         f'    value = request.get("{topic}_{k}")\n'
                         f'    if value is None:\n'
                         f'        return retries * {f + k}\n'
                         f'    return value\n')
        files[f"src/{topic}_{f}.py"] = "\n\n".join(funcs)
    return files


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def commit_stream(files: dict[str, bytes], message: str, *, parent: str = "", deletes: tuple[str, ...] = (),
                  when: int = EPOCH) -> bytes:
    """A ``git fast-import`` stream of one commit on ``refs/heads/main`` (after ``parent``, a SHA, if given)."""
    out = [b"commit refs/heads/main\n",
           f"author {IDENT} {when} +0000\ncommitter {IDENT} {when} +0000\n".encode(), _data(message.encode())]
    if parent:
        out.append(f"from {parent}\n".encode())
    for path in deletes:
        out.append(f"D {path}\n".encode())
    for path, content in files.items():
        out.append(f"M 100644 inline {path}\n".encode())
        out.append(_data(content))
    out.append(b"\n")
    return b"".join(out)


def fast_import(repo: Path, stream: bytes) -> str:
    """Feed ``stream`` to ``git fast-import`` in ``repo``; returns the new ``main`` commit."""
    git(repo, "fast-import", "--quiet", "--force", input=stream + b"done\n")
    return git(repo, "rev-parse", "refs/heads/main").strip()


def crockford_id(rnd: random.Random) -> str:
    """A ULID-shaped memory id (26 Crockford base-32 characters), deterministic for ``rnd``."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = rnd.getrandbits(125)
    return "01" + "".join(alphabet[(n >> (5 * i)) & 31] for i in range(24))


class Org:
    """A generated organisation: ``repos`` (name → bare repository path), the anchors memories use, the
    vocabulary, and how to write memory ``i`` of repository ``r`` at revision ``rev``."""

    def __init__(self, work: Path, n_repos: int, n_memories: int, seed: int = 1) -> None:
        self.dir = work / f"org-{n_repos}x{n_memories}"
        self.n_repos, self.n_memories, self.seed = n_repos, n_memories, seed
        self.template = work / "template"
        self.repos = {f"svc-{r:03d}": self.dir / f"svc-{r:03d}.git" for r in range(n_repos)}
        self.anchors: list[Any] = []
        self.vocab: list[str] = []
        self.base = ""

    def _template(self) -> None:
        """The shared source commit in a template repository, its 200 anchors (made there once)."""
        from gitmem.anchors import Resolver
        from gitmem.git import Repo

        if not (self.template / ".git").exists():
            shutil.rmtree(self.template, ignore_errors=True)
            self.template.mkdir(parents=True)
            git(self.template, "init", "-q", "-b", "main")
        stream = commit_stream({p: s.encode() for p, s in source_files().items()}, "the service's code")
        self.base = fast_import(self.template, stream)
        resolver = Resolver(Repo(self.template))
        self.anchors = [resolver.make(p, name, self.base) for p in sorted(source_files())
                        for name in (resolver.table(self.base, p) or {})]
        self.vocab = vocabulary([a.symbol or "" for a in self.anchors])
        random.Random(self.seed).shuffle(self.vocab)

    def memory(self, r: int, i: int, rev: int = 0) -> tuple[str, bytes]:
        """Memory ``i`` of repository ``r`` (its text changes with ``rev``): (path in the repository, file bytes)."""
        from gitmem.memfile import dumps
        from gitmem.model import Memory

        rnd = random.Random(f"{self.seed}/{r}/{i}")
        mid = crockford_id(rnd)
        a = rnd.choice(self.anchors)
        words = random.Random(f"{self.seed}/{r}/{i}/{rev}")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH + i))
        m = Memory(id=mid, type=rnd.choice(TYPES),
                   title=f"{a.symbol}: {' '.join(zipf_words(words, self.vocab, 6))}",
                   body=" ".join(zipf_words(words, self.vocab, 30)) + (f" (revision {rev})" if rev else ""),
                   anchors=[a], author="bench", source="user", created=stamp, updated=stamp)
        return f".gitmem/memories/{mid}.md", dumps(m).encode()

    def build(self) -> Org:
        """Generate the repositories that are not there yet (cached: a ``bench-ready`` file in each)."""
        self._template()
        self.dir.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        for r, path in enumerate(self.repos.values()):
            if (path / "bench-ready").exists():
                continue
            shutil.rmtree(path, ignore_errors=True)
            git(self.dir, "init", "-q", "--bare", "-b", "main", str(path))
            stream = commit_stream({p: s.encode() for p, s in source_files().items()}, "the service's code")
            assert fast_import(path, stream) == self.base, "the shared source commit differs"
            files = dict(self.memory(r, i) for i in range(self.n_memories))
            head = fast_import(path, commit_stream(files, f"{self.n_memories} memories", parent=self.base,
                                                   when=EPOCH + 60))
            (path / "bench-ready").write_text(head)
            if r % 10 == 9:
                log(f"{r + 1}/{self.n_repos} repositories generated ({time.perf_counter() - t:.0f} s)")
        return self

    def push(self, r: int, rev: int) -> str:
        """A push to repository ``r``: a commit changing PUSH_CHANGES of its memory files (revision ``rev``)."""
        path = self.repos[f"svc-{r:03d}"]
        head = git(path, "rev-parse", "refs/heads/main").strip()
        picks = random.Random(f"push/{r}/{rev}").sample(range(self.n_memories), min(PUSH_CHANGES, self.n_memories))
        files = dict(self.memory(r, i, rev) for i in picks)
        return fast_import(path, commit_stream(files, f"push {rev}", parent=head, when=EPOCH + 120 + rev))

    def reset(self) -> None:
        """Undo earlier runs' pushes: every repository's ``main`` back at its generated commit."""
        for path in self.repos.values():
            git(path, "update-ref", "refs/heads/main", (path / "bench-ready").read_text().strip())

    def queries(self, n: int) -> list[str]:
        """``n`` queries of 2–3 words drawn as memory text is (common and rare words), plus a symbol's name part."""
        rnd = random.Random(f"{self.seed}/queries")
        out = []
        for _ in range(n):
            words = zipf_words(rnd, self.vocab, rnd.choice((2, 3)))
            out.append(" ".join(words))
        return out


# -- stores ----------------------------------------------------------------------------------------------------------


class Store:
    """Where an index goes: ``kind`` (``local`` or ``rgw``) and, per index, a fresh uri and its environment."""

    def __init__(self, kind: str, root: Path, s3: Any = None) -> None:
        self.kind, self.root, self.s3 = kind, root, s3  # s3: testing.rgw.Rgw-like (new_org)

    def fresh(self, label: str) -> tuple[str, dict[str, str], dict[str, str], Any]:
        """(uri, writer environment, reader environment, S3Org or None) of a new empty index."""
        if self.kind == "local":
            path = self.root / f"{label}-{uuid.uuid4().hex[:8]}"
            return str(path), {}, {}, None
        org = self.s3.new_org(label)
        return org.uri, org.env(), org.env(read_only=True), org

    def bytes_stored(self, uri: str, org: Any) -> tuple[int, int]:
        """(bytes, objects or files) of the index at ``uri``."""
        if org is None:
            files = [p for p in Path(uri).rglob("*") if p.is_file()]
            return sum(p.stat().st_size for p in files), len(files)
        import obstore

        prefix = uri.split("/", 3)[3]
        metas = [m for batch in obstore.list(org.object_store(), prefix=prefix) for m in batch]
        return sum(int(m["size"]) for m in metas), len(metas)


@contextlib.contextmanager
def stores(names: list[str], work: Path, args: argparse.Namespace) -> Iterator[dict[str, Store]]:
    out: dict[str, Store] = {}
    cluster = None
    try:
        for name in names:
            if name == "local":
                root = work / "local-indexes"
                shutil.rmtree(root, ignore_errors=True)
                root.mkdir(parents=True)
                out[name] = Store("local", root)
            elif name == "rgw" and args.endpoint:
                from testing.rgw import Rgw

                gw = Rgw(root=work, endpoint=args.endpoint, access_key=args.access_key, secret_key=args.secret_key,
                         read_access_key=args.read_access_key or args.access_key,
                         read_secret_key=args.read_secret_key or args.secret_key)
                out[name] = Store("rgw", work, gw)
            elif name == "rgw":
                from testing import rgw as rgw_cluster

                t = time.perf_counter()
                cluster = rgw_cluster.start(Path(tempfile.mkdtemp(prefix="gitmem-rgw-bench-")))
                log(f"Ceph cluster with RGW at {cluster.endpoint} started in {time.perf_counter() - t:.0f} s")
                out[name] = Store("rgw", work, cluster)
            else:
                raise SystemExit(f"unknown store {name!r}: rgw or local")
        yield out
    finally:
        if cluster is not None:
            cluster.stop()


# -- workers (fresh processes) ---------------------------------------------------------------------------------------


def _settings(uri: str) -> Any:
    from gitmem.org.settings import OrgSettings

    return OrgSettings(uri=uri, endpoint=os.environ.get("AWS_ENDPOINT_URL", ""),
                       region=os.environ.get("AWS_REGION", "us-east-1"))


def worker(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """What a fresh process measures (``--_worker KIND JSON``)."""
    out: dict[str, Any] = {}
    if kind == "index":
        from gitmem.org import index as org_index
        from gitmem.org.repos import OrgRepo

        repos = [OrgRepo(name, path) for name, path in spec["repos"]]
        t = time.perf_counter()
        report = org_index.index(_settings(spec["uri"]), repos, embeddings=spec.get("embeddings"), fetch=False)
        out["index_s"] = time.perf_counter() - t
        out.update(added=report.added, updated=report.updated, deleted=report.deleted,
                   failed=[f"{r.repo}: {r.error}" for r in report.failed],
                   states=sorted({r.state for r in report.repos}))
    elif kind == "incremental_warm":
        from gitmem.org import index as org_index
        from gitmem.org.repos import OrgRepo

        repos = [OrgRepo(name, path) for name, path in spec["repos"]]
        settings = _settings(spec["uri"])
        org = Org(Path(spec["work"]), spec["n_repos"], spec["n_memories"]).build()
        warm = org_index.index(settings, repos, embeddings=spec.get("embeddings"), fetch=False)  # all up to date
        out["up_to_date_s"] = warm.seconds
        times, updated = [], []
        for rev in spec["revs"]:
            org.push(0, rev)
            t = time.perf_counter()
            report = org_index.index(settings, repos, embeddings=spec.get("embeddings"), fetch=False)
            times.append(time.perf_counter() - t)
            updated.append(report.updated)
        again = org_index.index(settings, repos, embeddings=spec.get("embeddings"), fetch=False)  # nothing new
        out.update(times=times, updated=updated, warm_up_to_date_s=again.seconds)
    elif kind == "search":
        from gitmem.org.search import search

        settings = _settings(spec["uri"])
        t = time.perf_counter()
        embeddings = spec.get("embeddings")
        first = search(settings, spec["queries"][0], limit=10, embeddings=embeddings)
        out["first_s"] = time.perf_counter() - t
        lat, hits = [], [len(first)]
        for q in spec["queries"][1:]:
            t = time.perf_counter()
            hits.append(len(search(settings, q, limit=10, embeddings=embeddings)))
            lat.append(time.perf_counter() - t)
        out.update(latencies=lat, hits=hits)
    elif kind == "verify":
        import lancedb

        from gitmem.org import store as org_store

        table = org_store.connect(_settings(spec["uri"])).open_table("memories")
        rows = table.search().select(["key", "repo"]).limit(None).to_arrow()
        keys = rows.column("key").to_pylist()
        per_repo: dict[str, int] = {}
        for repo in rows.column("repo").to_pylist():
            per_repo[repo] = per_repo.get(repo, 0) + 1
        out.update(rows=len(keys), distinct=len(set(keys)), per_repo=per_repo, lancedb=lancedb.__version__)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def spawn(kind: str, spec: dict[str, Any], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, "--_worker", kind, json.dumps(spec)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env})


def finish(proc: subprocess.Popen[str], started: float) -> dict[str, Any]:
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"worker failed ({proc.returncode}):\n{err[-3000:]}")
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    res["wall_s"] = wall
    return res


def run(kind: str, spec: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    t = time.perf_counter()
    return finish(spawn(kind, spec, env), t)


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (0–100) of ``xs``, nearest rank."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


# -- measurements ----------------------------------------------------------------------------------------------------


def measure(org: Org, store: Store, args: argparse.Namespace, only: set[str]) -> dict[str, Any]:
    res: dict[str, Any] = {}
    embeddings = {"provider": "none"} if args.no_vectors else None
    repos = [(name, str(path)) for name, path in org.repos.items()]
    uri, wenv, renv, s3 = store.fresh("org")
    org.reset()
    log(f"{store.kind}: full build of {org.n_repos}x{org.n_memories} into {uri}")
    b = run("index", {"uri": uri, "repos": repos, "embeddings": embeddings}, wenv)
    if b["failed"]:
        raise RuntimeError(f"build failed: {b['failed']}")
    res["build"] = {"index_s": b["index_s"], "wall_s": b["wall_s"], "rows": b["added"], "maxrss_mb": b["maxrss_mb"],
                    "rows_per_s": b["added"] / b["index_s"]}
    res["bytes_after_build"], res["objects_after_build"] = store.bytes_stored(uri, s3)
    if "incremental" in only:
        inc = []
        for rev in range(1, args.runs + 1):
            org.push(0, rev)
            r = run("index", {"uri": uri, "repos": repos, "embeddings": embeddings}, wenv)
            if r["failed"] or r["updated"] != min(PUSH_CHANGES, org.n_memories) or r["added"] or r["deleted"]:
                raise RuntimeError(f"incremental re-index wrong: {r}")
            inc.append(r)
            log(f"{store.kind}: incremental {rev}: {r['index_s']:.2f} s (~{r['updated']})")
        w = run("incremental_warm", {"uri": uri, "repos": repos, "embeddings": embeddings, "work": args.work,
                                     "n_repos": org.n_repos, "n_memories": org.n_memories,
                                     "revs": list(range(args.runs + 1, 2 * args.runs + 1))}, wenv)
        res["incremental"] = {"index_s": statistics.median(x["index_s"] for x in inc),
                              "wall_s": statistics.median(x["wall_s"] for x in inc),
                              "warm_s": statistics.median(w["times"]), "up_to_date_s": w["up_to_date_s"],
                              "warm_up_to_date_s": w["warm_up_to_date_s"],
                              "updated": inc[0]["updated"], "runs": len(inc)}
        res["bytes_after_incremental"], res["objects_after_incremental"] = store.bytes_stored(uri, s3)
    if "search" in only:
        queries = org.queries(args.queries + 1)
        s = run("search", {"uri": uri, "queries": queries, "embeddings": embeddings}, renv)
        res["search_warm"] = {"median_ms": 1000 * statistics.median(s["latencies"]),
                              "p90_ms": 1000 * pct(s["latencies"], 90), "first_ms": 1000 * s["first_s"],
                              "mean_hits": statistics.mean(s["hits"]), "queries": len(s["latencies"])}
        res["recall_cli"] = recall_cli(uri, renv, queries[: args.runs + 1], Path(args.work))
        if s3 is not None:
            res["search_warm"]["requests_per_query"] = requests_per_query(store, uri, renv, queries, embeddings)
    if "concurrent" in only:
        res["concurrent"] = concurrent(org, store, args, embeddings)
    return res


def requests_per_query(store: Store, uri: str, env: dict[str, str], queries: list[str], embeddings: Any) -> float:
    """S3 requests one warm search sends: counted by ``testing/s3proxy.py`` (no conditional headers on reads, so it
    forwards them unchanged) for a process searching once and one searching 11 times, the difference / 10."""
    from testing.s3proxy import ignoring_conditions

    gw = store.s3
    secrets = {gw.access_key: gw.secret_key, gw.read_access_key: gw.read_secret_key}
    counts = []
    with ignoring_conditions(gw.endpoint, secrets) as proxy:
        for n in (1, 11):
            before = proxy.requests
            run("search", {"uri": uri, "queries": queries[:n] if n > 1 else queries[:1] * 2,
                           "embeddings": embeddings}, {**env, "AWS_ENDPOINT_URL": proxy.endpoint})
            counts.append(proxy.requests - before)
    return (counts[1] - counts[0]) / 9


def recall_cli(uri: str, env: dict[str, str], queries: list[str], work: Path) -> dict[str, Any]:
    """``gitmem recall --org QUERY --json`` as a whole process (a user config naming the index; read-only keys),
    interleaved with ``python -c pass``."""
    home = work / f"cli-home-{uuid.uuid4().hex[:6]}"
    (home / "config" / "gitmem").mkdir(parents=True)
    section = {"uri": uri}
    if env.get("AWS_ENDPOINT_URL"):
        section["endpoint"] = env["AWS_ENDPOINT_URL"]
    (home / "config" / "gitmem" / "config.toml").write_text(
        "[org]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in section.items()))
    cwd = home / "elsewhere"
    cwd.mkdir()
    full_env = {**os.environ, **env, "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
                "GITMEM_NO_DAEMON": "1"}
    gitmem = [sys.executable, "-m", "gitmem"]
    subprocess.run([*gitmem, "recall", "--org", queries[0], "--json"], cwd=cwd, env=full_env, capture_output=True)
    cli, base = [], []
    for q in queries[1:]:
        t = time.perf_counter()
        p = subprocess.run([*gitmem, "recall", "--org", q, "--json"], cwd=cwd, env=full_env, capture_output=True,
                           text=True)
        cli.append(time.perf_counter() - t)
        if p.returncode != 0:
            raise RuntimeError(f"gitmem recall --org failed: {p.stderr.strip()[-2000:]}")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t)
    shutil.rmtree(home, ignore_errors=True)
    return {"median_ms": 1000 * statistics.median(cli), "p90_ms": 1000 * pct(cli, 90),
            "python_pass_ms": 1000 * statistics.median(base), "runs": len(cli)}


def concurrent(org: Org, store: Store, args: argparse.Namespace, embeddings: Any) -> dict[str, Any]:
    """``--writers`` indexers at once, (a) one repository each, (b) all of them every repository: wall time and the
    rows checked (none lost, none duplicated)."""
    org.reset()
    names = list(org.repos)[: args.writers]
    out: dict[str, Any] = {}
    for case, assignment in (("distinct", [[n] for n in names]), ("same", [names] * len(names))):
        uri, wenv, renv, _ = store.fresh(f"conc-{case}")
        t = time.perf_counter()
        procs = [spawn("index", {"uri": uri, "repos": [(n, str(org.repos[n])) for n in ns],
                                 "embeddings": embeddings}, wenv) for ns in assignment]
        results = [finish(p, t) for p in procs]
        wall = time.perf_counter() - t
        failed = [f for r in results for f in r["failed"]]
        v = run("verify", {"uri": uri}, renv)
        expected = {n: org.n_memories for n in names}
        ok = v["rows"] == v["distinct"] == org.n_memories * len(names) and v["per_repo"] == expected and not failed
        out[case] = {"writers": len(procs), "wall_s": wall, "rows": v["rows"], "distinct": v["distinct"],
                     "expected": org.n_memories * len(names), "ok": ok, "failed": failed,
                     "slowest_index_s": max(r["index_s"] for r in results)}
        log(f"{store.kind}: concurrent {case}: {len(procs)} writers, {wall:.1f} s, rows {v['rows']} "
            f"(distinct {v['distinct']}, expected {org.n_memories * len(names)}): {'ok' if ok else 'WRONG'}")
    return out


# -- report ----------------------------------------------------------------------------------------------------------


def table(org: Org, results: dict[str, dict[str, Any]]) -> str:
    kinds = list(results)
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, fn: Any) -> None:
        vals = []
        for k in kinds:
            try:
                vals.append(fn(results[k]))
            except KeyError:
                vals.append("-")
        rows.append((label, vals))

    row("full build: index() s", lambda r: f"{r['build']['index_s']:.1f}")
    row("full build: process wall s", lambda r: f"{r['build']['wall_s']:.1f}")
    row("full build: rows/s", lambda r: f"{r['build']['rows_per_s']:.0f}")
    row("full build: peak RSS MB", lambda r: f"{r['build']['maxrss_mb']:.0f}")
    row(f"incremental ({PUSH_CHANGES} files, 1 repo): index() s", lambda r: f"{r['incremental']['index_s']:.2f}")
    row("incremental: process wall s", lambda r: f"{r['incremental']['wall_s']:.2f}")
    row("incremental: warm process, index() s", lambda r: f"{r['incremental']['warm_s']:.2f}")
    row("nothing changed: fresh process, index() s", lambda r: f"{r['incremental']['up_to_date_s']:.2f}")
    row("nothing changed: warm process, index() s", lambda r: f"{r['incremental']['warm_up_to_date_s']:.2f}")
    row("search warm: median ms", lambda r: f"{r['search_warm']['median_ms']:.0f}")
    row("search warm: p90 ms", lambda r: f"{r['search_warm']['p90_ms']:.0f}")
    row("search warm: first query ms", lambda r: f"{r['search_warm']['first_ms']:.0f}")
    row("search warm: S3 requests per query", lambda r: f"{r['search_warm']['requests_per_query']:.0f}")
    row("recall --org process: median ms", lambda r: f"{r['recall_cli']['median_ms']:.0f}")
    row("recall --org process: p90 ms", lambda r: f"{r['recall_cli']['p90_ms']:.0f}")
    row("python -c pass: median ms", lambda r: f"{r['recall_cli']['python_pass_ms']:.0f}")
    for case in ("distinct", "same"):
        row(f"concurrent {case}: writers, wall s", lambda r, c=case:
            f"{r['concurrent'][c]['writers']}, {r['concurrent'][c]['wall_s']:.1f}")
        row(f"concurrent {case}: rows (distinct)/expected", lambda r, c=case:
            f"{r['concurrent'][c]['rows']} ({r['concurrent'][c]['distinct']})/{r['concurrent'][c]['expected']} "
            f"{'ok' if r['concurrent'][c]['ok'] else 'WRONG'}")
    row("bytes after build (files)", lambda r: f"{r['bytes_after_build'] / 1e6:.1f} MB ({r['objects_after_build']})")
    row("bytes after incremental (files)",
        lambda r: f"{r['bytes_after_incremental'] / 1e6:.1f} MB ({r['objects_after_incremental']})")
    width = max(len(label) for label, _ in rows)
    lines = [f"organisation {org.n_repos} repos x {org.n_memories} memories = {org.n_repos * org.n_memories} rows",
             f"{'':<{width}}  " + "  ".join(f"{k:>22}" for k in kinds)]
    lines += [f"{label:<{width}}  " + "  ".join(f"{v:>22}" for v in vals) for label, vals in rows]
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        print(json.dumps(worker(sys.argv[2], json.loads(sys.argv[3]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", type=int, default=3)
    ap.add_argument("--memories", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3, help="incremental pushes and whole-process recalls")
    ap.add_argument("--queries", type=int, default=30, help="warm searches timed")
    ap.add_argument("--writers", type=int, default=4, help="concurrent indexers (at most --repos)")
    ap.add_argument("--stores", default="rgw,local")
    ap.add_argument("--only", default="build,incremental,search,concurrent")
    ap.add_argument("--no-vectors", action="store_true", help="[embeddings] provider = none (full-text only)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "gitmem-bench-org"))
    ap.add_argument("--endpoint", default="", help="an existing S3 endpoint instead of starting a Ceph cluster")
    ap.add_argument("--access-key", default="")
    ap.add_argument("--secret-key", default="")
    ap.add_argument("--read-access-key", default="")
    ap.add_argument("--read-secret-key", default="")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.writers = max(1, min(args.writers, args.repos))
    only = set(args.only.split(","))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    org = Org(work, args.repos, args.memories).build()
    log(f"organisation {args.repos}x{args.memories} ready in {time.perf_counter() - t:.1f} s at {org.dir}")
    results: dict[str, dict[str, Any]] = {}
    with stores(args.stores.split(","), work, args) as by_name:
        for name, store in by_name.items():
            results[name] = measure(org, store, args, only)
    org.reset()
    if args.json:
        print(json.dumps({"repos": args.repos, "memories": args.memories, "vectors": not args.no_vectors,
                          "results": results}, indent=2))
    else:
        print(table(org, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
