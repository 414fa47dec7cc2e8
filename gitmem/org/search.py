"""Searching the organisation index: the memories of every indexed repository, by text and by meaning.

Owns ``OrgHit`` and ``search``: BM25 over ``title`` and ``body`` (LanceDB's full-text index, rows written since it
was built scanned flat beside it) and cosine over the vectors (when the index has them and the configured embedder
is the one that made them), fused by the project's one reciprocal rank fusion (``rank.fusion.rrf``), filtered by
repository. Reads only: it never writes or probes the store, so read-only credentials suffice.

Imports lancedb (through ``org.store.connect``): never on a hook's path (the hooks ask the warm process).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..errors import EmbeddingError, GitmemError
from ..rank.fusion import rrf
from .index import EMBEDDER_META, FTS_COLUMNS, MEMORIES_TABLE, REPOS_TABLE, open_table, sql_str
from .settings import OrgSettings
from .store import store_error

log = logging.getLogger(__name__)

#: Candidates taken from each ranking (BM25, vectors) per hit asked for: fusion needs more than the top few of
#: each to find what both rank well.
CANDIDATES_PER_HIT = 4
#: IVF partitions probed when the vector index exists: 24 of ``index.VECTOR_PARTITIONS`` (64) found 95-99 % of
#: the flat top 10 on the 100k bench set (16: 95.5 %; 8: 83.5 %).
VECTOR_NPROBES = 24
#: Columns a hit is built from (never the vector).
HIT_COLUMNS = ["key", "repo", "id", "title", "body", "type", "status", "reason", "trust", "level", "anchors",
               "commit", "updated", "tags", "path"]


@dataclass(frozen=True)
class OrgHit:
    """One memory of the organisation index found by ``search``.

    Attributes:
        repo: its repository's name; id, title, body, type: the memory's (body with its facts as ``- `` lines).
        status: ``fresh``, ``stale``, ``moved``, ``deleted`` or ``unchecked``, at ``commit``; reason: why, when not
            fresh.
        trust: its provenance label (``person-written``, ``agent-captured (codex)``; "" = unknown); level: the
            level behind it (``provenance.LEVELS``).
        anchors: its anchor keys (``path::Symbol``) in that repository.
        score: the fused score (reciprocal rank fusion, higher is better).
        commit: the commit of the repository that is indexed.
        path: the memory file's path in its repository; updated: when the memory last changed (UTC);
        tags: its tags.
    """

    repo: str
    id: str
    title: str
    body: str
    type: str
    status: str
    reason: str
    trust: str
    anchors: tuple[str, ...]
    score: float
    commit: str
    level: str = ""
    path: str = ""
    updated: str = ""
    tags: tuple[str, ...] = ()


def _where(repos: Sequence[str] | None, exclude: Sequence[str]) -> str | None:
    parts = []
    if repos is not None:
        parts.append("repo IN (" + ", ".join(sql_str(r) for r in repos) + ")" if repos else "false")
    if exclude:
        parts.append("repo NOT IN (" + ", ".join(sql_str(r) for r in exclude) + ")")
    return " AND ".join(parts) or None


def _query_vector(table: Any, query: str, embeddings: Mapping[str, Any] | None) -> Any | None:
    """The query's vector when the table has vectors made by the configured embedder, else None (BM25 only)."""
    if "vector" not in table.schema.names:
        return None
    from ..search.embed import embedder_from_config

    try:
        embedder = embedder_from_config(dict(embeddings) if embeddings is not None else None)
    except GitmemError:
        return None
    have = (table.schema.metadata or {}).get(EMBEDDER_META, b"").decode()
    if embedder is None or embedder.name != have:
        return None
    try:
        vec = embedder.embed([query.strip()])
    except EmbeddingError as e:
        log.warning("query not embedded, full-text results only: %s", e.message)
        return None
    return vec[0] if vec.shape == (1, table.schema.field("vector").type.list_size) and vec.any() else None


#: Open databases kept per process, by store and credentials (``_database``): a warm process (the daemon, the MCP
#: server) reuses LanceDB's caches of manifests and index files; on an object store opening a table costs requests.
_DATABASES: dict[tuple[str, ...], Any] = {}
_DB_LOCK = threading.Lock()


def _database(settings: OrgSettings) -> Any:
    """The database of ``settings``, opened once per process for the same uri, endpoint, region and access key
    (``read_consistency_interval=0``: each query still sees the latest commit)."""
    import os

    from .store import connect, endpoint

    key = (settings.uri, endpoint(settings), settings.region, os.environ.get("AWS_ACCESS_KEY_ID", ""),
           os.environ.get("AWS_SECRET_ACCESS_KEY", ""), os.getcwd() if not settings.is_s3 else "")
    with _DB_LOCK:
        db = _DATABASES.get(key)
        if db is None:
            db = _DATABASES[key] = connect(settings)
        return db


_TABLES: dict[tuple[int, str], Any] = {}


def _table(db: Any, name: str) -> Any | None:
    """Table ``name`` of ``db``, its handle kept for the process once it exists (None while it does not)."""
    key = (id(db), name)
    with _DB_LOCK:
        t = _TABLES.get(key)
    if t is None:
        t = open_table(db, name)
        if t is not None:
            with _DB_LOCK:
                _TABLES[key] = t
    return t


def _forget(db: Any) -> None:
    with _DB_LOCK:
        for key in [k for k in _TABLES if k[0] == id(db)]:
            del _TABLES[key]


def search(settings: OrgSettings, query: str, *, limit: int = 10, repos: Sequence[str] | None = None,
           exclude: Sequence[str] = (), embeddings: Mapping[str, Any] | None = None) -> list[OrgHit]:
    """The memories of the organisation index that best match ``query``, best first, at most ``limit``.

    Hybrid: BM25 over title and body and cosine similarity of the vectors (``embeddings``: the ``[embeddings]``
    table, None = the default embedder), fused with ``rank.fusion.rrf`` (Cormack et al. 2009, k = 60, equal
    weights). ``repos``: only these repositories (None = all); ``exclude``: never these (the current repository,
    whose own memories the caller has already). Reads only. The two searches and the read of the repositories'
    indexed commits run side by side (each is a few requests to an object store).

    Returns:
        ``OrgHit`` per memory, by fused score descending then repository and id; [] when nothing is indexed or the
        query has no searchable term and no vector.

    Raises:
        OrgStoreError: the store cannot be opened or read (the message says which, the hint what to check).
    """
    if limit <= 0 or not query.strip():
        return []
    db = _database(settings)
    k = max(limit * CANDIDATES_PER_HIT, 20)
    where = _where(repos, exclude)
    for attempt in (1, 2):
        try:
            table = _table(db, MEMORIES_TABLE)
            if table is None:
                return []
            qvec = _query_vector(table, query, embeddings)
            with ThreadPoolExecutor(max_workers=3) as pool:
                fts = pool.submit(_fts, table, query, where, k)
                vec = pool.submit(_vectors, table, qvec, where, k) if qvec is not None else None
                commits_f = pool.submit(_indexed_commits, db)
                got_fts = fts.result()
                got_vec = vec.result() if vec is not None else []
                commits = commits_f.result()
            break
        except GitmemError:
            raise
        except Exception as e:  # lancedb raises many types: one line for the person
            _forget(db)  # a handle kept from before the table was rebuilt: open it again, once
            if attempt == 2:
                raise store_error(e, settings, "search the organisation index") from e
    rows: dict[str, dict[str, Any]] = {r["key"]: r for r in got_fts}
    for r in got_vec:
        rows.setdefault(r["key"], r)
    fused = rrf([([r["key"] for r in got_fts], 1.0), ([r["key"] for r in got_vec], 1.0)])
    best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    from ..rank.render import MAX_ORG_TEXT_CHARS, MAX_ORG_TITLE_CHARS, cap_text

    hits = []
    for key, score in best:
        r = rows[key]
        # a row written before the indexer cut rows to [memory] max_chars (org.index.safe_memory) may hold megabytes
        hits.append(OrgHit(repo=r["repo"], id=r["id"], title=cap_text(r["title"] or "", MAX_ORG_TITLE_CHARS),
                           body=cap_text(r["body"] or "", MAX_ORG_TEXT_CHARS),
                           type=r["type"] or "", status=r["status"] or "unchecked", reason=r["reason"] or "",
                           trust=r["trust"] or "", anchors=tuple(r["anchors"] or ()), score=score,
                           commit=commits.get(r["repo"], r["commit"] or ""), level=r["level"] or "",
                           path=r["path"] or "", updated=r["updated"] or "", tags=tuple(r["tags"] or ())))
    return hits


def _fts(table: Any, query: str, where: str | None, k: int) -> list[dict[str, Any]]:
    """BM25 hits (rows of ``HIT_COLUMNS``), best first (ties by key); [] when the query has no searchable term."""
    from lancedb.query import FullTextOperator, MultiMatchQuery

    from ..textsplit import query_terms

    terms = query_terms(query)
    if not terms:
        return []
    q = table.search(MultiMatchQuery(" ".join(terms), list(FTS_COLUMNS), boosts=None, operator=FullTextOperator.OR),
                     query_type="fts")
    if where:
        q = q.where(where, prefilter=True)
    got: list[dict[str, Any]] = q.select(HIT_COLUMNS).limit(k).to_arrow().to_pylist()
    got.sort(key=lambda r: (-float(r.get("_score") or 0.0), r["key"]))
    return got


def _vectors(table: Any, qvec: Any, where: str | None, k: int) -> list[dict[str, Any]]:
    """Nearest rows by cosine (rows of ``HIT_COLUMNS``), nearest first (ties by key)."""
    q = table.search(qvec, vector_column_name="vector").distance_type("cosine").nprobes(VECTOR_NPROBES)
    if where:
        q = q.where(where, prefilter=True)
    got: list[dict[str, Any]] = q.select(HIT_COLUMNS).limit(k).to_arrow().to_pylist()
    got.sort(key=lambda r: (float(r.get("_distance") or 0.0), r["key"]))
    return got


def _indexed_commits(db: Any) -> dict[str, str]:
    """repo → the commit its ``repos`` row says is indexed (every row of a repository is right at it); the table
    is one small row per repository."""
    t = _table(db, REPOS_TABLE)
    if t is None:
        return {}
    got = t.search().select(["repo", "commit"]).limit(None).to_arrow().to_pylist()
    return {r["repo"]: r["commit"] or "" for r in got}
