"""Retrieval quality on a repository's real history: gitmem ``context`` vs text relevance vs newest-first, and
the prompt hook with and without vectors.

Every commit becomes a memory: its message is the text (first line the title,
as ``gitmem remember`` derives it), anchored at that commit to the symbols the
commit changed, exactly as ``gitmem remember --anchor PATH::SYMBOL --rev SHA``
does (``memories.make_anchors`` → ``Resolver.make``). A commit that changes no
symbol is anchored to the code files it changed (still a memory, a distractor
for every method). Memory times are the commit's committer time; ids are ULIDs
of that time (random part from the SHA, so a run is deterministic).

The task for a later commit C: C's changes are the working tree and C's
message is the prompt. In a scratch clone (``git clone --no-hardlinks`` into a
temporary directory; REPO_PATH is only read), HEAD is detached at C's first
parent and C's tree is restored into the working tree, uncommitted, so the
focus gitmem builds from the dirty files is exactly C's change. The store
holds the memories of the last ``--window`` non-merge commits before C
(``git rev-list --no-merges -n N C^``): never C's own memory, never a later
one. The index is synced from those files as every query does.

Relevant memories: those anchored to a symbol that C changes, i.e. one of
``focus.changed_symbols(C^, C)`` (changed or added) or a symbol present at C^
and gone at C, matched by path and qualified name.

Evaluation commits: from every commit, those skipped for a reason are counted
(root commit, merge, changes no symbol, no relevant memory in its window);
``--queries`` of the others are drawn with ``random.Random(seed)`` and run
oldest first (so the index syncs incrementally).

Methods, each a full ranking of the memories in the window:

(a) **context**: ``context.build_context(store, prompt=message, cwd=clone)``,
    the ranking ``gitmem context`` packs (focus from the dirty files and
    prompt, import neighbours, text relevance, recency, statuses of the top
    60); ``ranked`` lists only memories with some proximity or text relevance.
(b) **text**: ``search.lexical.hybrid_recall(store, message, limit=window)``, what
    ``gitmem recall`` does (BM25 + WordLlama vectors fused by reciprocal rank
    fusion, vector-only hits below the similarity floor dropped).
(c) **newest**: ``memories.list_memories(store)``, newest first (how most
    memory tools fill a session start).
(d) **hook**: the prompt hook without the warm process, through its own code
    (``core.prompt_candidates`` → ``fusion.prompt_ranking`` → ``core.pack_prompt``):
    the memories on the paths and symbols the prompt names, then the catalog's
    BM25 hits; "in budget" is what the hook injects (its first 5, packed in the
    default ``prompt_budget``, 600 tokens).
(e) **hook+vectors**: the same with the warm process's hybrid hits fused in,
    computed in-process (``search.lexical.hybrid_hits`` with the hook's ``PROMPT_SEARCH_HITS``:
    what the warm process's ``search`` answers), so no warm process is needed.

Paraphrased prompts (unless ``--no-paraphrases``): after the queries,
``PARAPHRASES``' 20 memories join the last window's memories (the distractors);
each prompt shares no word with its memory (checked: ``shared_terms``). Per
method (hook, hook+vectors, text): how often the memory ranks first, in the top
5, in what the hook injects, and the mean reciprocal rank. Then (unless
``--no-warm``) each prompt runs end to end: the installed ``gitmem-hook`` with
the clone's real warm process up, checked to inject the same memories as the
in-process hook+vectors (or counted as a fallback when the warm process did not
answer in time).

Metrics per query, then averaged (means) over queries:

* recall@k = |relevant in the top k| / |relevant|; nDCG@10 with binary gains,
  IDCG over min(|relevant|, 10) hits.
* in budget: recall of what ``rank.pack`` fits into the default context budget
  (``--budget``, 1500 tokens: the top 3 in full, the rest as index lines), for
  each method's order; for context it is the packed context itself.
* tokens to reach a recall target: walk a method's ranking, adding each
  memory's cost, until recall ≥ target. A memory's cost is
  ``render.token_estimate(render.render_detail(...))`` (gitmem's own estimate, the
  memory rendered in full as ``gitmem context`` shows its top items; the same
  cost for every method). Targets: 0.5, 0.8, 1.0 and "ctx@10" = the recall@10
  that context reached on that query (queries where that is 0 are left out of
  that column). A query whose ranking never reaches the target counts as
  infinite: the column shows the median over all queries (∞ when more than
  half never reach it) and how many reached it.
* The "(ideal ranking)" row is the ceiling: recall@k of a ranking that puts
  every relevant memory first (below 1 when a query has more than k).

At the moment of action (``--at-action``, issue 15)
--------------------------------------------------
The memories the agent hooks give before a shell command (``core.on_before_shell``) and after a failed
one (``core.on_after_failure``), called in-process as the hooks call them, on the same history, side
by side with the baseline "all memories of the touched files". Every commit is a memory as above,
typed by its subject (``ACTION_TYPE_RULES``: "fix", "bug" … → ``bugfix``; "must", "never", "always",
"only" … → ``constraint``; "gotcha", "trap", "workaround" … → ``gotcha``; else ``change``), all in one
scratch clone at HEAD; a case at commit C sees only the memories of commits before C (the later ones
are marked "already given" in the case's session, so the hooks skip them, as they skip what a session
was given).

* **before a shell command**: each commit C that changed a test file T (``tests/test_*.py``, present at
  HEAD) runs ``python -m pytest T -q``. Relevant: the ``constraint`` / ``gotcha`` / ``bugfix`` memories
  (of commits before C) anchored to T or to a module T imports (``from gitmem.x import …``: the code the
  command runs). Baseline: every memory (before C) anchored to a file C changed.
* **after a failure**: each ``bugfix`` commit C that changed symbols fails with a Python traceback whose
  frames name up to three of them (``File "PATH", line 1, in NAME``) and the exception names its
  message quotes (``KeyError`` …; else ``RuntimeError: failed``, which names nothing). Relevant: the
  ``constraint`` / ``gotcha`` / ``bugfix`` memories (before C) anchored to one of those symbols.
  Baseline: every memory (before C) anchored to a file C changed.

Reported: the number of cases, and per method the mean memories given, precision (cases where it gave
something) and recall (cases with something relevant), and the cases where it gave nothing.

Run it
------
    /tmp/venv/bin/python bench/retrieval.py REPO_PATH [--queries 40] [--window 500] [--seed 1]
        [--budget 1500] [--json] [--rows FILE] [--commit SHA ...] [--no-paraphrases] [--no-warm]
        [--decay-half-life DAYS]
    /tmp/venv/bin/python bench/retrieval.py REPO_PATH --at-action [--json]

Progress on stderr; the table (or one JSON object with ``--json``) on stdout;
``--rows`` writes one JSON line per query (relevant ids and their rank under
each method, context's top 10 and every relevant memory with score, proximity,
reason, text rank, status and token cost); ``--commit`` evaluates only the
given commits (to dig into one); ``--decay-half-life`` sets ``[ranking] decay_half_life_days``
of the scratch store (0 turns decay off; memories are never used here, so a short half-life is a
stronger preference for recent ones: a stress test of the decay). Needs the WordLlama embedder (the default
config), no network.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from gitmem import config
from gitmem.anchors import Resolver
from gitmem.catalog import db as catalog_db
from gitmem.code.languages import language_for_path
from gitmem.errors import AnchorError
from gitmem.git import Repo
from gitmem.integrations.agents import core
from gitmem.memories import derive_title, list_memories, make_anchors, write
from gitmem.model import Memory
from gitmem.ops.context import build_context
from gitmem.rank import fusion
from gitmem.rank.focus import changed_symbols
from gitmem.rank.render import render_detail, token_estimate
from gitmem.rank.score import Scored, item, pack
from gitmem.search.lexical import hybrid_hits
from gitmem.search.lexical import hybrid_recall as recall
from gitmem.store import Store, init_layout
from gitmem.textsplit import query_terms

METHODS = ("context", "text", "newest", "hook", "hook+vectors")
TARGETS = ("ctx@10", "0.5", "0.8", "1.0")
#: File anchors given to a commit that changes no symbol (its code files, in path order).
MAX_FILE_ANCHORS = 20


# --------------------------------------------------------------------------- history


@dataclass
class Commit:
    """One commit of the history, with what it changed."""

    sha: str
    parents: list[str]
    date: str                                  # committer time, UTC, YYYY-MM-DDTHH:MM:SSZ
    author: str
    message: str
    changed: list[tuple[str, str]] = field(default_factory=list)   # (path, symbol) changed or added
    removed: list[tuple[str, str]] = field(default_factory=list)   # (path, symbol) gone at this commit
    code_files: list[str] = field(default_factory=list)            # code files changed, present at sha


def _git(cwd: str | Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          input=input).stdout.decode("utf-8", "replace")


def read_history(repo: Repo) -> list[Commit]:
    """Every commit reachable from HEAD, oldest first (topological), with message and time."""
    sep, end = "\x1f", "\x1e"
    out = subprocess.run(["git", "-C", str(repo.root), "log", "--topo-order", "--reverse",
                          f"--format=%H{sep}%P{sep}%ct{sep}%an{sep}%B{end}", "HEAD"],
                         check=True, capture_output=True, text=True).stdout
    commits = []
    for rec in out.split(end):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, parents, ts, author, msg = rec.split(sep, 4)
        date = dt.datetime.fromtimestamp(int(ts), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        commits.append(Commit(sha, parents.split(), date, author, msg.strip()))
    return commits


def diffed_history(repo: Repo, resolver: Resolver, *, every: int = 50, label: str = "") -> list[Commit]:
    """``read_history(repo)`` with each commit's changed symbols filled in (``diff_symbols``), oldest first,
    saying progress every ``every`` commits (``label``: a prefix, e.g. the repository's name)."""
    history = read_history(repo)
    for i, c in enumerate(history, 1):
        diff_symbols(resolver, c)
        if i % every == 0:
            progress(f"{label}diffed {i}/{len(history)} commits")
    return history


def diff_symbols(resolver: Resolver, c: Commit) -> None:
    """Fill ``c.changed`` / ``removed`` / ``code_files`` (first parent vs the commit)."""
    if len(c.parents) != 1:
        return
    parent = c.parents[0]
    for ch in resolver.repo.changed_files(parent, c.sha):
        if ch.new_path and language_for_path(ch.new_path):
            c.code_files.append(ch.new_path)
            c.changed.extend((ch.new_path, n) for n in changed_symbols(resolver, ch.new_path, parent, c.sha))
        for path in {ch.old_path, ch.new_path} - {None}:
            assert path is not None
            if not language_for_path(path):
                continue
            before = resolver.table(parent, path) or {}
            after = resolver.table(c.sha, path) or {}
            c.removed.extend((path, n) for n in before if n not in after)


def memory_id(c: Commit) -> str:
    """A ULID with the commit's time and 80 bits of its SHA: deterministic, sorted by time."""
    ms = int(dt.datetime.strptime(c.date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC).timestamp() * 1000)
    return str(ULID.from_bytes(ms.to_bytes(6, "big") + bytes.fromhex(c.sha[:20])))


def commit_memory(store: Store, resolver: Resolver, c: Commit) -> Memory:
    """The memory of commit ``c``: its message, anchored at ``c`` as ``remember --rev`` anchors."""
    specs = [f"{p}::{n}" for p, n in c.changed] or c.code_files[:MAX_FILE_ANCHORS]
    anchors = []
    for spec in specs:  # one by one: a symbol gitmem cannot anchor must not lose the others
        try:
            anchors.extend(make_anchors(store, [spec], c.sha, resolver=resolver))
        except AnchorError:
            pass
    text = c.message or f"commit {c.sha[:12]}"
    title = derive_title(text)
    lines = text.splitlines()
    body = "\n".join(lines[1:]).strip() if lines and lines[0].strip().lstrip("#").strip() == title else text
    return Memory(id=memory_id(c), type="discovery", title=title, body=body, anchors=anchors, author=c.author,
                  source="user", created=c.date, updated=c.date)


# --------------------------------------------------------------------------- metrics


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant)


def ndcg_at(ranked: list[str], relevant: set[str], k: int) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, mid in enumerate(ranked[:k]) if mid in relevant)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / idcg


def tokens_to(ranked: list[str], relevant: set[str], cost: dict[str, int], target: float) -> float:
    """Tokens of the ranking's prefix up to the memory that brings recall to ``target``; inf if never."""
    need = math.ceil(target * len(relevant) - 1e-9)
    if need <= 0:
        return 0.0
    used, found = 0, 0
    for mid in ranked:
        used += cost[mid]
        if mid in relevant:
            found += 1
            if found >= need:
                return float(used)
    return math.inf


@dataclass
class Query:
    """One evaluation commit and what each method did with it."""

    sha: str
    subject: str
    memories: int
    relevant: list[str]
    focus_symbols: int
    ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)   # method -> relevant id -> 1-based rank
    listed: dict[str, int] = field(default_factory=dict)                    # method -> length of its ranking
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)     # method -> metric -> value
    seconds: dict[str, float] = field(default_factory=dict)
    context_top: list[dict[str, Any]] = field(default_factory=list)  # context's top 10 and every relevant one


def score(q: Query, method: str, ranked: list[str], in_budget: list[str], relevant: set[str],
          cost: dict[str, int], ctx_recall10: float | None) -> None:
    pos = {mid: i for i, mid in enumerate(ranked, 1)}
    q.ranks[method] = {mid: pos.get(mid) for mid in sorted(relevant)}
    q.listed[method] = len(ranked)
    m = {"recall@5": recall_at(ranked, relevant, 5), "recall@10": recall_at(ranked, relevant, 10),
         "ndcg@10": ndcg_at(ranked, relevant, 10),
         "in_budget": len(relevant & set(in_budget)) / len(relevant)}
    for t in TARGETS:
        level = ctx_recall10 if t == "ctx@10" else float(t)
        if level is None:
            level = m["recall@10"]  # context itself: its own recall@10
        m[f"tokens@{t}"] = tokens_to(ranked, relevant, cost, level) if level > 0 else math.nan
    q.metrics[method] = m


# --------------------------------------------------------------------------- the prompt hook


def hook_rankings(store: Store, prompt: str) -> dict[str, tuple[list[str], list[str]]]:
    """The prompt hook's ranking of ``prompt`` without and with the warm process: method → (ids best first, ids
    the hook injects).

    Both go through the hook's own code (``core.prompt_candidates``, ``fusion.prompt_ranking``,
    ``core.pack_prompt`` with the default ``prompt_budget``, and the default ``[relevance]`` floors:
    ``core.prompt_candidates``, ``core.prompt_hybrid``); "hook+vectors" feeds it what the warm process
    answers, computed in-process: ``search.lexical.hybrid_hits`` with the hook's ``PROMPT_SEARCH_HITS``
    (the same search and floor, similarity included), so the benchmark needs no running warm process. No
    session: nothing is left out as already given.
    """
    # what the warm process's ``search`` answers (``daemon.server.Root.search``), similarity included; it also
    # brings the catalog up to date
    hits = hybrid_hits(store, prompt, core.PROMPT_SEARCH_HITS)
    hybrid = [{"id": h.id, "score": h.score, "fts_rank": h.fts_rank, "vector_rank": h.vector_rank,
               "similarity": h.similarity} for h in hits]
    con = catalog_db.connect(store.repo.root)
    if con is None:
        raise SystemExit(f"{store.repo.root}: no catalog after a recall")
    budget = config.DEFAULT_BUDGETS["prompt_budget"]
    out: dict[str, tuple[list[str], list[str]]] = {}
    try:
        found = core.prompt_candidates(con, prompt)
        for name, warm in (("hook", None), ("hook+vectors", core.prompt_hybrid(prompt, hybrid, found[2], None, con))):
            ids = [mid for mid, _ in fusion.prompt_ranking(*found, warm)]
            packed = core.pack_prompt(con, ids, budget)
            out[name] = (ids, [] if packed is None else packed.detailed + packed.indexed)
    finally:
        con.close()
    return out


#: Memories and prompts that paraphrase them sharing no word (``textsplit.query_terms``, nor a plural or
#: -ed/-ing form: ``shared_terms``): what BM25 cannot find and vectors should.
#: (title, body, prompt), written for this benchmark.
PARAPHRASES = (
    ("Session tokens expire after 60 minutes",
     "The auth service rejects JWTs older than one hour; refresh them in the client before each request.",
     "why do users get logged out constantly?"),
    ("Database migrations must run inside a transaction",
     "Postgres DDL is transactional; a failed migration otherwise leaves the schema half applied.",
     "what happens if altering tables crashes midway?"),
    ("Retry HTTP calls with exponential backoff",
     "The payment gateway rate-limits bursts; retries start at 200 ms and double up to 5 s.",
     "how should I handle billing provider throttling us?"),
    ("Cache keys include the tenant id",
     "Without it one customer saw another's dashboard; every cache lookup is scoped per tenant.",
     "data leaking across organisations in memoized results"),
    ("Timestamps are stored in UTC",
     "Convert to local time only when rendering; comparisons across servers break otherwise.",
     "which timezone do we persist dates with?"),
    ("The image resizer runs out of memory on huge PNGs",
     "Decoding a 20000x20000 file allocates gigabytes; reject uploads above 50 megapixels.",
     "thumbnail worker gets OOM killed for big pictures"),
    ("Feature flags are read once at startup",
     "Changing a flag needs a restart of the web process; there is no live reload.",
     "toggle edits not taking effect until redeploy"),
    ("Logging must never include passwords",
     "The request logger masks fields named password, secret and token before writing.",
     "are credentials scrubbed from our audit trail output?"),
    ("Search queries are debounced by 300 ms",
     "Typing fast used to fire a request per keystroke and overload the API.",
     "autocomplete hammering backend with each character entered"),
    ("CSV export streams rows",
     "Building the whole file in memory crashed for large accounts; write chunks to the response.",
     "downloading spreadsheets of big customers times out"),
    ("Email sending goes through a queue",
     "SMTP is slow and flaky; the web request enqueues a job and a worker delivers it.",
     "why are notifications dispatched asynchronously?"),
    ("Passwords are hashed with argon2id",
     "bcrypt was replaced in 2023; old hashes are upgraded on next login.",
     "which algorithm protects stored user secrets?"),
    ("Uploads are virus-scanned before they become visible",
     "ClamAV checks each attachment in a sandbox; infected ones are quarantined.",
     "how do we stop malware hidden inside shared documents?"),
    ("Pagination uses cursors, not offsets",
     "OFFSET scans grew linear with page number and timed out past page 500.",
     "listing endpoint slow deep into results"),
    ("The mobile app pins the TLS certificate",
     "Rotating the server cert needs an app release first, or clients refuse to connect.",
     "phones rejecting HTTPS after we renewed our keys"),
    ("Money is stored as integer cents",
     "Floats lost a cent on rounding in invoices; never use float for amounts.",
     "why do prices hold whole numbers instead of decimals?"),
    ("Background jobs are idempotent",
     "The queue delivers at least once; a job may run twice after a worker crash.",
     "duplicate charges when tasks get retried"),
    ("Static assets are served by the CDN with content hashes",
     "Filenames carry a digest so browsers can cache forever; deploys never purge.",
     "stale javascript bundles showing up after release"),
    ("Rate limiter counts per API key, not per IP",
     "Customers behind corporate NAT shared one address and got blocked together.",
     "whole office locked out by request throttling"),
    ("Tests must not hit the real network",
     "A fixture blocks sockets except localhost; CI has no outbound access.",
     "why does our pipeline fail when specs call external services"),
)
#: Methods of the paraphrase run: the prompt hook without and with vectors, and ``gitmem recall``.
PARAPHRASE_METHODS = ("hook", "hook+vectors", "text")


def _stem(term: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if term.endswith(suffix) and len(term) > len(suffix) + 2:
            return term[:-len(suffix)]
    return term


def shared_terms(a: str, b: str) -> set[str]:
    """Terms of ``a`` that ``b`` holds too (``query_terms``), also as a plural or an -ed/-ing form."""
    stems = {_stem(t) for t in query_terms(b)}
    return {t for t in query_terms(a) if _stem(t) in stems}


def run_paraphrases(store: Store, clone: Path, warm_check: bool = True) -> list[dict[str, Any]]:
    """Add ``PARAPHRASES``' memories to the store (its memories are the distractors) and rank each prompt:
    per prompt, the 1-based rank of its memory under each method (None: not ranked), and with
    ``warm_check`` the same prompts through the real hook and warm process (``end_to_end``)."""
    mems = []
    for i, (title, body, prompt) in enumerate(PARAPHRASES):
        common = shared_terms(prompt, f"{title}\n{body}")
        if common:
            raise SystemExit(f"paraphrase {i} shares {sorted(common)} with its memory")
        ms = 1_900_000_000_000 + i  # after every commit: ids sort last, times are the newest
        mems.append(Memory(id=str(ULID.from_bytes(ms.to_bytes(6, "big") + bytes(10))), type="gotcha", title=title,
                           body=body, author="bench", source="user", created="2030-03-17T17:46:40Z",
                           updated="2030-03-17T17:46:40Z"))
    write(store, mems)
    out = []
    for m, (_, _, prompt) in zip(mems, PARAPHRASES, strict=True):
        hook = hook_rankings(Store(Repo(clone)), prompt)
        ranked = {name: ids for name, (ids, _) in hook.items()}
        ranked["text"] = [h.memory.id for h in recall(Store(Repo(clone)), prompt, limit=50)]
        row: dict[str, Any] = {"prompt": prompt, "memory": m.title}
        for name in PARAPHRASE_METHODS:
            ids = ranked[name]
            row[name] = ids.index(m.id) + 1 if m.id in ids else None
        row["injected"] = {name: m.id in injected for name, (_, injected) in hook.items()}
        row["injected_ids"] = hook["hook+vectors"][1]
        out.append(row)
        progress(f"paraphrase {prompt!r}: " + ", ".join(f"{n} {row[n]}" for n in PARAPHRASE_METHODS))
    if warm_check:
        end_to_end(clone, out, {m.id for m in list_memories(Store(Repo(clone)))})
    write(store, removed=[m.id for m in mems])
    return out


def end_to_end(clone: Path, rows: list[dict[str, Any]], known: set[str]) -> None:
    """Each paraphrased prompt through the real prompt hook (``gitmem-hook``, a new process and session) with the
    clone's real warm process up: sets ``row["end_to_end"]`` to whether the hook injected the same memories
    as the in-process "hook+vectors" (``injected_ids``), None when the warm process did not answer in time."""
    import os
    import re

    from gitmem import layout
    from gitmem.daemon import client

    lay = layout.of(clone)
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    os.environ.pop(client.NO_DAEMON_ENV, None)
    client.ensure_started(lay)
    try:
        while client.request(lay, "search", {"query": "warm up", "limit": 5}, timeout_s=600, start=False) is None:
            time.sleep(0.5)
        for i, row in enumerate(rows):
            log = lay.log_file(client.LOG_NAME)
            before = log.read_text(errors="replace").count("client search:") if log.exists() else 0
            event = {"session_id": f"bench-e2e-{i}", "transcript_path": "", "cwd": str(clone),
                     "hook_event_name": "UserPromptSubmit", "prompt": row["prompt"]}
            # the installed entry point, as agents run it (``python -m`` would import a clone of gitmem's own repo)
            proc = subprocess.run([str(Path(sys.executable).with_name("gitmem-hook"))], cwd=clone, env=env,
                                  input=json.dumps(event).encode(), capture_output=True)
            if proc.returncode != 0:
                raise SystemExit(f"the prompt hook exited {proc.returncode}: {proc.stderr.decode()[-800:]}")
            text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout.strip() else ""
            shown = [m for m in dict.fromkeys(re.findall(r"\b[0-9A-HJKMNP-TV-Z]{26}\b", text)) if m in known]
            after = log.read_text(errors="replace").count("client search:") if log.exists() else 0
            row["end_to_end"] = None if after > before else shown == row["injected_ids"]
    finally:
        client.stop(lay)


# --------------------------------------------------------------------------- the run


def eligibility(clone: Path, history: list[Commit], window: int
                ) -> tuple[dict[str, int], list[tuple[Commit, list[str], set[str]]]]:
    """The evaluation commits of ``history`` (diffed: ``diff_symbols``) in the clone at ``clone``: (skipped, by
    reason → count; eligible: [(C, the SHAs of C's window, newest first, the SHAs of its relevant memories)],
    oldest first). A commit is skipped as a root commit (a shallow clone's boundary too), a merge, changing no
    symbol, or having no memory in its window anchored to a symbol it changes (module docstring)."""
    by_sha = {c.sha: c for c in history}
    skipped = {"root commit": 0, "merge": 0, "changes no symbol": 0, "no relevant earlier memory": 0}
    eligible: list[tuple[Commit, list[str], set[str]]] = []  # (C, window shas, relevant shas)
    for c in history:
        if not c.parents:
            skipped["root commit"] += 1
            continue
        if len(c.parents) > 1:
            skipped["merge"] += 1
            continue
        targets = set(c.changed) | set(c.removed)
        if not targets:
            skipped["changes no symbol"] += 1
            continue
        before = [s for s in _git(clone, "rev-list", "--no-merges", f"--max-count={window}", c.parents[0]).split()]
        rel = {s for s in before if {(p, n) for p, n in by_sha[s].changed} & targets}
        if not rel:
            skipped["no relevant earlier memory"] += 1
            continue
        eligible.append((c, before, rel))
    return skipped, eligible



@dataclass
class Run:
    repo: str
    head: str
    commits: int
    window: int
    seed: int
    budget: int
    skipped: dict[str, int] = field(default_factory=dict)
    eligible: int = 0
    queries: list[Query] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    paraphrases: list[dict[str, Any]] = field(default_factory=list)   # per prompt: method -> rank of its memory


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def set_decay(clone: Path, half_life: float) -> None:
    """``[ranking]`` of the scratch store: ``decay_half_life_days = half_life``, or ``decay = false`` for 0."""
    cfg = clone / ".gitmem" / "config.toml"
    text = cfg.read_text("utf-8")
    text += ("\n[ranking]\ndecay = false\n" if half_life <= 0 else f"\n[ranking]\ndecay_half_life_days = {half_life}\n")
    cfg.write_text(text, "utf-8")


def run(repo_path: str, n_queries: int, window: int, seed: int, budget: int,
        only: list[str] | tuple[str, ...] = (), paraphrases: bool = True, warm_check: bool = True,
        half_life: float | None = None) -> Run:
    t_start = time.perf_counter()
    src = Repo(repo_path)
    head = src.head()
    if head is None:
        raise SystemExit(f"{repo_path}: no commits")
    with tempfile.TemporaryDirectory(prefix="gitmem-retrieval-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src.root), str(clone)], check=True)
        with open(clone / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
            f.write("\n/.gitmem/\n")  # the store is no code in focus (gitmem skips it anyway)
        repo = Repo(clone)
        init_layout(repo)
        if half_life is not None:
            set_decay(clone, half_life)
        store = Store(repo)
        store.enable_symbol_cache()
        resolver = Resolver(repo)

        # 1. the history and what every commit changed
        t = time.perf_counter()
        history = diffed_history(repo, resolver)
        by_sha = {c.sha: c for c in history}
        r = Run(str(src.root), head, len(history), window, seed, budget)
        r.seconds["diff"] = time.perf_counter() - t

        # 2. eligibility
        t = time.perf_counter()
        skipped, eligible = eligibility(clone, history, window)
        r.skipped, r.eligible = skipped, len(eligible)
        rng = random.Random(seed)
        chosen = sorted(rng.sample(range(len(eligible)), min(n_queries, len(eligible))))
        if only:
            chosen = [i for i, (c, _, _) in enumerate(eligible) if any(c.sha.startswith(o) for o in only)]
        r.seconds["select"] = time.perf_counter() - t
        progress(f"{len(history)} commits, {len(eligible)} eligible, {len(chosen)} queries; skipped {skipped}")

        # 3. the queries, oldest first
        made: dict[str, Memory] = {}
        present: set[str] = set()
        timings = {"setup": 0.0, "context": 0.0, "text": 0.0, "newest": 0.0, "hook": 0.0}
        for qi, ei in enumerate(chosen, 1):
            c, before, rel_shas = eligible[ei]
            t = time.perf_counter()
            _git(clone, "checkout", "-q", "-f", "--detach", c.parents[0])
            _git(clone, "clean", "-q", "-f", "-d")
            _git(clone, "restore", f"--source={c.sha}", "--worktree", "--", ":/")
            dirty = set(Repo(clone).dirty_files())
            changes = repo.changed_files(c.parents[0], c.sha)
            expect = {ch.new_path or ch.old_path for ch in changes}
            either = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
            if not expect <= dirty <= either:  # a rename may show as a deletion plus a new file
                raise SystemExit(f"{c.sha[:12]}: the working tree is not C's change "
                                 f"(differ: {sorted((dirty - either) | (expect - dirty))[:5]})")
            for s in before:
                if s not in made:
                    made[s] = commit_memory(store, resolver, by_sha[s])
            want = {made[s].id for s in before}
            write(store, [made[s] for s in before if made[s].id not in present], removed=sorted(present - want))
            present = want
            cost = {made[s].id: token_estimate(render_detail(item(Scored(made[s])))) for s in before}
            relevant = {made[s].id for s in rel_shas}
            timings["setup"] += time.perf_counter() - t

            prompt = c.message
            t = time.perf_counter()
            res = build_context(Store(Repo(clone)), prompt=prompt, budget=budget, cwd=str(clone))
            t_ctx = time.perf_counter() - t
            t = time.perf_counter()
            text_ids = [h.memory.id for h in recall(Store(Repo(clone)), prompt, limit=len(before))]
            t_text = time.perf_counter() - t
            t = time.perf_counter()
            newest = list_memories(Store(Repo(clone)))
            newest_ids = [m.id for m in newest]
            t_new = time.perf_counter() - t
            t = time.perf_counter()
            hook = hook_rankings(Store(Repo(clone)), prompt)
            t_hook = time.perf_counter() - t
            timings["context"] += t_ctx
            timings["text"] += t_text
            timings["newest"] += t_new
            timings["hook"] += t_hook

            mems = {m.id: m for m in newest}
            q = Query(c.sha, c.message.splitlines()[0] if c.message else "", len(before), sorted(relevant),
                      len(res.focus.symbols), seconds={"context": t_ctx, "text": t_text, "newest": t_new})
            ctx_ids = [s.memory.id for s in res.ranked]
            q.context_top = [{"rank": i, "id": s.memory.id, "relevant": s.memory.id in relevant,
                              "title": s.memory.title, "score": round(s.score, 6),
                              "proximity": s.proximity, "near": s.near, "text_rank": s.text_rank,
                              "status": s.status.value, "anchors": len(s.memory.anchors),
                              "tokens": cost[s.memory.id]}
                             for i, s in enumerate(res.ranked, 1) if i <= 10 or s.memory.id in relevant]
            ctx_r10 = recall_at(ctx_ids, relevant, 10)
            score(q, "context", ctx_ids, res.packed.detailed + res.packed.indexed, relevant, cost, None)
            for name, ids in (("text", text_ids), ("newest", newest_ids)):
                p = pack([Scored(mems[i]) for i in ids], budget)
                score(q, name, ids, p.detailed + p.indexed, relevant, cost, ctx_r10)
            for name, (ids, injected) in hook.items():
                score(q, name, ids, injected, relevant, cost, ctx_r10)
            r.queries.append(q)
            progress(f"[{qi}/{len(chosen)}] {c.sha[:10]} {q.subject[:50]!r}: {len(relevant)} relevant of "
                     f"{len(before)}; R@10 ctx {ctx_r10:.2f} text {q.metrics['text']['recall@10']:.2f} "
                     f"newest {q.metrics['newest']['recall@10']:.2f} hook {q.metrics['hook']['recall@10']:.2f} "
                     f"hook+vectors {q.metrics['hook+vectors']['recall@10']:.2f} ({t_ctx:.1f}s, {t_text:.1f}s)")
        r.seconds.update(timings)
        if paraphrases:
            progress(f"paraphrased prompts: {len(PARAPHRASES)} memories among the {len(present)} of the last window")
            r.paraphrases = run_paraphrases(store, clone, warm_check)
    r.seconds["total"] = time.perf_counter() - t_start
    return r


# --------------------------------------------------------------------------- report


def median_inf(values: list[float]) -> float:
    """Median where ``inf`` (never reached) sorts last; NaN (not applicable) left out."""
    vals = sorted(v for v in values if not math.isnan(v))
    if not vals:
        return math.nan
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def summary(r: Run) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METHODS:
        rows = [q.metrics[m] for q in r.queries]
        s: dict[str, Any] = {}
        for key in ("recall@5", "recall@10", "ndcg@10", "in_budget"):
            s[key] = statistics.fmean(x[key] for x in rows) if rows else math.nan
        for t in TARGETS:
            vals = [x[f"tokens@{t}"] for x in rows]
            applicable = [v for v in vals if not math.isnan(v)]
            s[f"tokens@{t}"] = median_inf(vals)
            s[f"reached@{t}"] = f"{sum(1 for v in applicable if v != math.inf)}/{len(applicable)}"
        out[m] = s
    out["paraphrases"] = paraphrase_summary(r.paraphrases)
    rel = [len(q.relevant) for q in r.queries]
    out["ideal"] = {"recall@5": statistics.fmean(min(5, n) / n for n in rel) if rel else math.nan,
                    "recall@10": statistics.fmean(min(10, n) / n for n in rel) if rel else math.nan,
                    "ndcg@10": 1.0}
    return out


def paraphrase_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per method: the fraction of paraphrased prompts whose memory ranks first, in the top 5, in the hook's
    injection (the hook methods), and the mean reciprocal rank (0 when not ranked)."""
    out: dict[str, dict[str, float]] = {}
    if not rows:
        return out
    for m in PARAPHRASE_METHODS:
        ranks = [x[m] for x in rows]
        s = {"found@1": statistics.fmean(1.0 if r == 1 else 0.0 for r in ranks),
             "found@5": statistics.fmean(1.0 if r is not None and r <= 5 else 0.0 for r in ranks),
             "mrr": statistics.fmean(1 / r if r else 0.0 for r in ranks)}
        if m in rows[0]["injected"]:
            s["injected"] = statistics.fmean(1.0 if x["injected"][m] else 0.0 for x in rows)
        out[m] = s
    return out


def _fmt_tokens(v: float) -> str:
    return "–" if math.isnan(v) else "∞" if v == math.inf else f"{v:.0f}"


def table(r: Run) -> str:
    s = summary(r)
    rel = [len(q.relevant) for q in r.queries]
    lines = [f"repo {r.repo} @ {r.head[:10]}: {r.commits} commits, window {r.window}, seed {r.seed}",
             "skipped: " + ", ".join(f"{k} {v}" for k, v in r.skipped.items()) + f"; eligible {r.eligible}",
             f"queries {len(r.queries)}; relevant per query median {statistics.median(rel) if rel else 0} "
             f"(min {min(rel, default=0)}, max {max(rel, default=0)}); memories per query median "
             f"{statistics.median([q.memories for q in r.queries]) if r.queries else 0}",
             "",
             f"| method | recall@5 | recall@10 | nDCG@10 | recall in {r.budget} tokens | "
             + " | ".join(f"tokens to {t} (reached)" for t in TARGETS) + " |",
             "| --- " * (5 + len(TARGETS)) + "|"]
    for m in METHODS:
        x = s[m]
        lines.append(f"| {m} | {x['recall@5']:.3f} | {x['recall@10']:.3f} | {x['ndcg@10']:.3f} | "
                     f"{x['in_budget']:.3f} | "
                     + " | ".join(f"{_fmt_tokens(x[f'tokens@{t}'])} ({x[f'reached@{t}']})" for t in TARGETS)
                     + " |")
    x = s["ideal"]
    lines.append(f"| (ideal ranking) | {x['recall@5']:.3f} | {x['recall@10']:.3f} | 1.000 | – |"
                 + " – |" * len(TARGETS))
    para = s["paraphrases"]
    if para:
        lines += ["", f"paraphrased prompts ({len(r.paraphrases)}, no word shared with their memory; "
                      f"{r.window}-commit window as distractors):", "",
                  "| method | memory first | in the top 5 | injected by the hook | MRR |", "| --- " * 5 + "|"]
        for m, x in para.items():
            inj = f"{x['injected']:.2f}" if "injected" in x else "–"
            lines.append(f"| {m} | {x['found@1']:.2f} | {x['found@5']:.2f} | {inj} | {x['mrr']:.3f} |")
        e2e = [x.get("end_to_end") for x in r.paraphrases if "end_to_end" in x]
        if e2e:
            lines += ["", f"end to end (the real prompt hook, the real warm process): the same memories as in-process "
                          f"hook+vectors for {sum(1 for v in e2e if v)}/{len(e2e)} prompts; "
                          f"{sum(1 for v in e2e if v is None)} fell back to BM25 (no answer in time)"]
    sec = r.seconds
    nq = max(1, len(r.queries))
    lines += ["", f"time: total {sec.get('total', 0):.1f}s; diff {sec.get('diff', 0):.1f}s; per query: setup "
              f"{sec.get('setup', 0) / nq:.2f}s, context {sec.get('context', 0) / nq:.2f}s, text "
              f"{sec.get('text', 0) / nq:.2f}s, newest {sec.get('newest', 0) / nq:.2f}s, "
              f"hook (both) {sec.get('hook', 0) / nq:.2f}s"]
    return "\n".join(lines)


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return None if math.isnan(x) else "inf"
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    return x


# --------------------------------------------------------------------------- at the moment of action

#: Subject words → memory type, first match wins (``--at-action``).
ACTION_TYPE_RULES = (
    ("bugfix", r"\b(fix|fixes|fixed|bug|bugs|regression|crash|broken)\b"),
    ("constraint", r"\b(must|never|always|only|invariant|forbid|forbidden)\b"),
    ("gotcha", r"\b(gotcha|trap|careful|pitfall|workaround|beware)\b"),
)
_IMPORT = r"^\s*(?:from\s+(gitmem(?:\.\w+)*)\s+import\s+([\w, ()]+)|import\s+(gitmem(?:\.\w+)+))"


def action_type(subject: str) -> str:
    """The memory type of a commit subject under ``ACTION_TYPE_RULES`` (``change`` when none matches)."""
    import re

    low = subject.lower()
    return next((t for t, rx in ACTION_TYPE_RULES if re.search(rx, low)), "change")


def imported_files(root: Path, test_file: str) -> set[str]:
    """The files of gitmem's modules ``test_file`` imports (``from gitmem.x import y``: ``gitmem/x.py`` or
    ``gitmem/x/__init__.py``, and ``gitmem/x/y.py`` when y is a module)."""
    import re

    out: set[str] = set()
    try:
        text = (root / test_file).read_text("utf-8", errors="replace")
    except OSError:
        return out
    for m in re.finditer(_IMPORT, text, re.M):
        mods = [m.group(1) or m.group(3)]
        if m.group(2):
            mods += [f"{m.group(1)}.{n.strip()}" for n in m.group(2).strip("()").split(",") if n.strip()]
        for mod in mods:
            base = mod.replace(".", "/")
            for cand in (f"{base}.py", f"{base}/__init__.py"):
                if (root / cand).is_file():
                    out.add(cand)
    return out


def at_action(repo_path: str, n_queries: int) -> dict[str, Any]:
    """The ``--at-action`` evaluation (module docstring): one JSON-able dict."""
    import re

    from gitmem import layout
    from gitmem.catalog.sync import sync_hook_index
    from gitmem.integrations.agents import core
    from gitmem.integrations.agents.events import AfterToolFailure, BeforeShell

    t_start = time.perf_counter()
    src = Repo(repo_path)
    with tempfile.TemporaryDirectory(prefix="gitmem-at-action-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src.root), str(clone)], check=True)
        repo = Repo(clone)
        init_layout(repo)
        store = Store(repo)
        store.enable_symbol_cache()
        resolver = Resolver(repo)
        history = [c for c in read_history(repo) if len(c.parents) == 1]
        for i, c in enumerate(history, 1):
            diff_symbols(resolver, c)
            if i % 50 == 0:
                progress(f"diffed {i}/{len(history)} commits")
        mems: dict[str, Memory] = {}
        for c in history:
            m = commit_memory(store, resolver, c)
            m.type = action_type(m.title)
            mems[c.sha] = m
        write(store, list(mems.values()))
        sync_hook_index(store)
        lay = layout.of(clone)
        order = {c.sha: i for i, c in enumerate(history)}
        anchors = {sha: {(a.path, a.symbol) for a in m.anchors} for sha, m in mems.items()}
        act = set(core.ACTION_TYPES)

        def later_given(c: Commit, key: str) -> None:
            core.forget_given(lay, key)
            core.mark_given(lay, key, [mems[s].id for s in mems if order[s] >= order[c.sha]])

        def given(text: str | None) -> list[str]:
            return re.findall(r"^### (\S+) · ", text or "", re.M)

        def before_of(c: Commit) -> list[str]:
            return [s for s in mems if order[s] < order[c.sha]]

        def on_files(shas: list[str], files: set[str]) -> set[str]:
            return {mems[s].id for s in shas if any(p in files for p, _ in anchors[s])}

        cases: dict[str, list[dict[str, Any]]] = {"shell": [], "failure": []}
        for c in reversed(history):
            tests = [f for f in c.code_files if re.match(r"tests/test_\w+\.py$", f) and (clone / f).is_file()]
            if tests and len(cases["shell"]) < n_queries:
                t = tests[0]
                earlier = before_of(c)
                code = {t} | imported_files(clone, t)
                relevant = {mems[s].id for s in earlier
                            if mems[s].type in act and any(p in code for p, _ in anchors[s])}
                key = f"at-action-shell-{c.sha[:12]}"
                later_given(c, key)
                ev = BeforeShell(command=f"python -m pytest {t} -q", agent="bench", name="PreToolUse",
                                 session_id=key, cwd=str(clone), raw={})
                got = given(core.on_before_shell(ev, clone, lay, key))
                cases["shell"].append({"sha": c.sha, "command": ev.command, "relevant": sorted(relevant),
                                       "gitmem": got, "baseline": sorted(on_files(earlier, set(c.code_files)))})
            if mems[c.sha].type == "bugfix" and c.changed and len(cases["failure"]) < n_queries:
                earlier = before_of(c)
                named = c.changed[:3]
                relevant = {mems[s].id for s in earlier if mems[s].type in act
                            and any(core.same_symbol(sym, n) and p == np for p, sym in anchors[s] for np, n in named)}
                excs = re.findall(r"\b[A-Z]\w*(?:Error|Exception)\b", c.message)
                text = "Traceback (most recent call last):\n" + "".join(
                    f'  File "{clone / p}", line 1, in {n.rsplit(".", 1)[-1]}\n' for p, n in named)
                text += (f"{excs[0]}: failed\n" if excs else "RuntimeError: failed\n")
                key = f"at-action-failure-{c.sha[:12]}"
                later_given(c, key)
                fail = AfterToolFailure(error="Exit code 1\n" + text, tool="Bash", kind="shell", tool_use_id="",
                                        input={"command": "python -m pytest -q"}, response=None, agent="bench",
                                        name="PostToolUseFailure", session_id=key, cwd=str(clone), raw={})
                got = given(core.on_after_failure(fail, clone, lay, key))
                cases["failure"].append({"sha": c.sha, "named": [f"{p}::{n}" for p, n in named],
                                         "relevant": sorted(relevant), "gitmem": got,
                                         "baseline": sorted(on_files(earlier, {p for p, _ in named}))})

    def stats(rows: list[dict[str, Any]], method: str) -> dict[str, Any]:
        gave = [r for r in rows if r[method]]
        with_rel = [r for r in rows if r["relevant"]]
        prec = [len(set(r[method]) & set(r["relevant"])) / len(r[method]) for r in gave]
        rec = [len(set(r[method]) & set(r["relevant"])) / len(r["relevant"]) for r in with_rel]
        return {"mean_given": round(statistics.mean(len(r[method]) for r in rows), 2) if rows else 0.0,
                "precision": round(statistics.mean(prec), 3) if prec else None,
                "recall": round(statistics.mean(rec), 3) if rec else None,
                "cases_with_nothing": len(rows) - len(gave)}

    return {"repo": str(src.root), "memories": len(mems),
            "types": {t: sum(1 for m in mems.values() if m.type == t) for t in (*core.ACTION_TYPES, "change")},
            "seconds": round(time.perf_counter() - t_start, 1),
            **{kind: {"cases": len(rows), "with_relevant": sum(1 for r in rows if r["relevant"]),
                      "gitmem": stats(rows, "gitmem"), "baseline (all memories of the touched files)":
                          stats(rows, "baseline"), "rows": rows}
               for kind, rows in cases.items()}}


def at_action_table(res: dict[str, Any]) -> str:
    """``at_action``'s result as a text table."""
    lines = [f"{res['memories']} memories ({res['types']}), {res['seconds']} s"]
    lines.append(f"{'event':8} {'method':46} {'cases':>6} {'given/case':>10} {'precision':>9} {'recall':>7} "
                 f"{'nothing':>8}")
    for kind in ("shell", "failure"):
        block = res[kind]
        for method in ("gitmem", "baseline (all memories of the touched files)"):
            st = block[method]
            p, r = ("—" if v is None else f"{v:.2f}" for v in (st["precision"], st["recall"]))
            lines.append(f"{kind:8} {method:46} {block['cases']:>6} {st['mean_given']:>10.2f} "
                         f"{p:>9} {r:>7} {st['cases_with_nothing']:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Retrieval quality of gitmem context vs text relevance vs "
                                             "newest-first, on a repository's history.")
    ap.add_argument("repo", help="the repository (only read: the run works in a scratch clone)")
    ap.add_argument("--queries", type=int, default=40, help="evaluation commits drawn (default 40)")
    ap.add_argument("--window", type=int, default=500, help="memories: the last N commits before C (default 500)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=int, default=1500, help="context budget in tokens (default 1500)")
    ap.add_argument("--commit", action="append", default=[], metavar="SHA",
                    help="evaluate only this commit (a SHA prefix; repeatable; overrides --queries)")
    ap.add_argument("--decay-half-life", type=float, metavar="DAYS",
                    help="[ranking] decay_half_life_days of the scratch store (0: decay = false; default: config's)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--rows", metavar="FILE", help="write one JSON line per query to FILE")
    ap.add_argument("--at-action", action="store_true",
                    help="evaluate the memories given before shell commands and after failures instead")
    ap.add_argument("--no-paraphrases", action="store_true", help="skip the paraphrased prompts")
    ap.add_argument("--no-warm", action="store_true",
                    help="skip the paraphrased prompts' end-to-end run through the real hook and warm process")
    args = ap.parse_args(argv)
    if args.at_action:
        res = at_action(args.repo, args.queries)
        if args.json:
            print(json.dumps(res, ensure_ascii=False, indent=2))
        else:
            print(at_action_table(res))
        return 0
    r = run(args.repo, args.queries, args.window, args.seed, args.budget, args.commit, not args.no_paraphrases,
            not args.no_warm, args.decay_half_life)
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as f:
            for q in r.queries:
                f.write(json.dumps(_jsonable(asdict(q)), ensure_ascii=False) + "\n")
    if args.json:
        obj = {k: v for k, v in asdict(r).items() if k not in ("queries", "paraphrases")}
        obj["paraphrase_rows"] = r.paraphrases
        obj["queries"] = len(r.queries)
        obj["summary"] = summary(r)
        print(json.dumps(_jsonable(obj), ensure_ascii=False, indent=2))
    else:
        print(table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
