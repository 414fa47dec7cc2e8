"""Searching the organisation index: the memories of every indexed repository, by text and by meaning.

Owns ``OrgHit`` and ``search``: BM25 over ``title`` and ``body`` (LanceDB's full-text index, rows written since it
was built scanned flat beside it) and cosine over the vectors (when the index has them and the configured embedder
is the one that made them), fused by the project's one reciprocal rank fusion (``rank.fusion.rrf``), filtered by
repository. Reads only: it never writes or probes the store, so read-only credentials suffice.

Imports lancedb (through ``org.store.connect``): never on a hook's path (the hooks ask the warm process).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import EmbeddingError, GitmemError, OrgStoreError
from ..rank.fusion import rrf
from .index import EMBEDDER_META, FTS_COLUMNS, MEMORIES_TABLE, REPOS_TABLE, open_table, sql_str
from .settings import OrgSettings

log = logging.getLogger(__name__)

#: Candidates taken from each ranking (BM25, vectors) per hit asked for: fusion needs more than the top few of
#: each to find what both rank well.
CANDIDATES_PER_HIT = 4
#: IVF partitions probed when the vector index exists (as ``search.index.VECTOR_NPROBES``).
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


def search(settings: OrgSettings, query: str, *, limit: int = 10, repos: Sequence[str] | None = None,
           exclude: Sequence[str] = (), embeddings: Mapping[str, Any] | None = None) -> list[OrgHit]:
    """The memories of the organisation index that best match ``query``, best first, at most ``limit``.

    Hybrid: BM25 over title and body and cosine similarity of the vectors (``embeddings``: the ``[embeddings]``
    table, None = the default embedder), fused with ``rank.fusion.rrf`` (Cormack et al. 2009, k = 60, equal
    weights). ``repos``: only these repositories (None = all); ``exclude``: never these (the current repository,
    whose own memories the caller has already). Reads only.

    Returns:
        ``OrgHit`` per memory, by fused score descending then repository and id; [] when nothing is indexed or the
        query has no searchable term and no vector.

    Raises:
        OrgStoreError: the store cannot be opened or read (the message says which, the hint what to check).
    """
    from .store import connect  # first: it keeps lancedb's Rust warnings off stderr

    from lancedb.query import FullTextOperator, MultiMatchQuery  # isort: skip

    from ..textsplit import query_terms

    if limit <= 0 or not query.strip():
        return []
    db = connect(settings)
    try:
        table = open_table(db, MEMORIES_TABLE)
        if table is None:
            return []
        k = max(limit * CANDIDATES_PER_HIT, 20)
        where = _where(repos, exclude)
        rows: dict[str, dict[str, Any]] = {}
        fts_keys: list[str] = []
        terms = query_terms(query)
        if terms:
            q = table.search(MultiMatchQuery(" ".join(terms), list(FTS_COLUMNS), boosts=None,
                                             operator=FullTextOperator.OR),
                             query_type="fts")
            if where:
                q = q.where(where, prefilter=True)
            got = q.select(HIT_COLUMNS).limit(k).to_arrow().to_pylist()
            got.sort(key=lambda r: (-float(r.get("_score") or 0.0), r["key"]))
            fts_keys = [r["key"] for r in got]
            rows.update({r["key"]: r for r in got})
        vec_keys: list[str] = []
        qvec = _query_vector(table, query, embeddings)
        if qvec is not None:
            q = table.search(qvec, vector_column_name="vector").distance_type("cosine").nprobes(VECTOR_NPROBES)
            if where:
                q = q.where(where, prefilter=True)
            got = q.select(HIT_COLUMNS).limit(k).to_arrow().to_pylist()
            got.sort(key=lambda r: (float(r.get("_distance") or 0.0), r["key"]))
            vec_keys = [r["key"] for r in got]
            for r in got:
                rows.setdefault(r["key"], r)
        fused = rrf([(fts_keys, 1.0), (vec_keys, 1.0)])
        best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        commits = _indexed_commits(db, {rows[key]["repo"] for key, _ in best}) if best else {}
    except GitmemError:
        raise
    except Exception as e:  # lancedb raises many types: one line for the person
        raise OrgStoreError(f"cannot search the organisation index at {settings.uri}: "
                            f"{str(e).splitlines()[0] if str(e) else type(e).__name__}",
                            "check [org] uri, the endpoint and the credentials (read-only ones suffice)") from e
    hits = []
    for key, score in best:
        r = rows[key]
        hits.append(OrgHit(repo=r["repo"], id=r["id"], title=r["title"] or "", body=r["body"] or "",
                           type=r["type"] or "", status=r["status"] or "unchecked", reason=r["reason"] or "",
                           trust=r["trust"] or "", anchors=tuple(r["anchors"] or ()), score=score,
                           commit=commits.get(r["repo"], r["commit"] or ""), level=r["level"] or "",
                           path=r["path"] or "", updated=r["updated"] or "", tags=tuple(r["tags"] or ())))
    return hits


def _indexed_commits(db: Any, names: set[str]) -> dict[str, str]:
    """repo → the commit its ``repos`` row says is indexed (every row of a repository is right at it)."""
    t = open_table(db, REPOS_TABLE)
    if t is None or not names:
        return {}
    got = t.search().where("repo IN (" + ", ".join(sql_str(n) for n in sorted(names)) + ")").select(
        ["repo", "commit"]).limit(None).to_arrow().to_pylist()
    return {r["repo"]: r["commit"] or "" for r in got}
