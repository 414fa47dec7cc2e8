"""Hybrid search without LanceDB: the catalog's BM25 and a brute-force cosine over vectors kept in the catalog.

Owns the meaning of the catalog's ``vectors`` and ``vector_meta`` tables (their SQL: ``catalog.vectors``;
derived and disposable like the rest of the catalog): one L2-normalised float32 vector per memory row
(``embedding_text`` embedded by the configured embedder) with the row's digest, and the catalog mark last
followed (``catalog.files.mark``). ``update`` (``sync``) follows the catalog's change log: an unchanged store costs
one meta read; a changed one embeds only its new or changed memories. ``gitmem sync`` runs it; so does every
search first.

``search`` is the hybrid ranking every searcher uses (``gitmem recall``, ``context --prompt``, the warm process's
``search``), the ranking the LanceDB index of gitmem before issue 25 gave, computed without LanceDB: the top
``k`` by BM25 over the title and the text, summed (``fts_ranking``: FTS5 tables Porter-stemmed, stop words
dropped, as LanceDB's English full-text index), and the top ``k`` by cosine similarity of the query's vector to
every stored vector (exact, numpy), fused by reciprocal rank fusion (``rrf_fuse``: Cormack, Clarke & Büttcher
2009, k = 60), vector-only hits below ``MIN_VECTOR_SIMILARITY`` dropped (``relevant``). Why brute force: a
matrix product over 10,000 x 256 float32 takes about a millisecond and reading the vectors from SQLite about
1 ms per 1,000 rows, while importing LanceDB alone costs over a second (/work/shared/reference/import-costs.md).
The vector side equals LanceDB's exact search; the BM25 side is close to LanceDB's, not equal (another BM25
implementation and stemmer: tests/test_search_hybrid.py, bench/README.md).

Imports numpy (and the embedder's libraries when a vector must be computed); never LanceDB or pyarrow.
Must not be imported by the hooks' per-tool-call path.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..catalog import files as catalog_files
from ..catalog import vectors as catalog_vectors
from ..errors import EmbeddingError
from ..model import KIND_COMMIT, Memory
from ..rank.fusion import RRF_K, ranks, rrf
from ..textsplit import query_terms, split_identifiers

if TYPE_CHECKING:  # pragma: no cover - typing only
    import sqlite3

    import numpy

    from .embed import Embedder

#: Version of the rows (``embedding_text``, ``search_text``, the tables): another version recorded → rewrite all.
VECTORS_SCHEMA_VERSION = 2
#: Characters of a memory's text sent to the embedder (OpenAI-compatible models accept about 8k tokens; a
#: memory longer than this is truncated for the vector).
EMBED_MAX_CHARS = 8000
#: A hit found only by the vector side counts when its cosine similarity to the query reaches this floor. The
#: vector side ranks every memory, so without a floor any query returns unrelated memories. WordLlama puts
#: related short texts at about 0.15-0.5 (measured on the test corpus); 0.15 keeps those.
MIN_VECTOR_SIMILARITY = 0.15
#: English stop words dropped from a query's full-text terms: tantivy's English list (Lucene's
#: ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``), the one the LanceDB index's full-text search removed.
STOP_WORDS = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their then "
                       "there these they this to was will with".split())
#: Up to this many stored vectors, the cosine runs in plain Python: about 5 µs a vector (5 ms at 1,000) against
#: ~0.1 s to import numpy on a quiet machine (/tmp measurements, issue 25: 36 ms at 1,000 and 470 ms at 10,000
#: vectors vs 550 ms for numpy's import on the loaded 2-core box); above it numpy's import pays for itself.
PURE_PYTHON_MAX_ROWS = 5_000
#: Vector matrices a process keeps (``_matrix``: one per catalog and change; a warm process serves a few roots).
MATRICES_KEPT = 4
#: Memories per embedder call while syncing (bounds memory use on a first sync of a large store).
EMBED_BATCH = 512

@dataclass
class Hit:
    """One search result.

    Attributes:
        id: memory id.
        score: reciprocal-rank-fusion score, ``Σ 1 / (RRF_K + rank)`` over the
            rankings that contain the id (at most 2/61 ≈ 0.0328).
        fts_rank: 1-based rank in the full-text (BM25) ranking, None if absent.
        vector_rank: 1-based rank in the vector (cosine) ranking, None if absent.
        similarity: cosine similarity of the query and memory vectors, in [-1, 1],
            when the vector side ranked the id (else None). The vector side ranks
            every row, so a caller may drop vector-only hits below a floor (for
            WordLlama, related texts typically score 0.15-0.5).
    """

    id: str
    score: float
    fts_rank: int | None
    vector_rank: int | None
    similarity: float | None = None


def embedding_text(memory: Memory) -> str:
    """The text embedded for a memory: title, body, facts, tags and split symbol names (≤ EMBED_MAX_CHARS)."""
    symbols = [split_identifiers(a.symbol) for a in memory.anchors if a.symbol]
    parts = [memory.title, memory.body, *memory.facts, " ".join(memory.tags), " ".join(symbols)]
    return "\n".join(p for p in parts if p)[:EMBED_MAX_CHARS]


def search_text(memory: Memory) -> str:
    """The derived full-text column: title, body, facts, tags, anchor paths and symbols, identifiers split."""
    parts = [memory.title, memory.body, *memory.facts, " ".join(memory.tags)]
    for a in memory.anchors:
        if a.kind == KIND_COMMIT:
            continue
        if a.path:
            parts.append(a.path)
        if a.symbol:
            parts.append(a.symbol)
    return split_identifiers("\n".join(p for p in parts if p))


def rrf_fuse(fts_ids: Sequence[str], vector_ids: Sequence[str], k: int = RRF_K) -> list[Hit]:
    """Reciprocal rank fusion of a full-text and a vector ranking.

    score(id) = Σ over the rankings containing id of 1 / (k + rank), rank 1-based
    (Cormack, Clarke, Büttcher 2009; k = ``RRF_K`` = 60). Each input is deduplicated
    first (an id keeps its best rank). Output is sorted by score descending, then
    by id ascending, so ties are deterministic.

    Returns:
        One ``Hit`` per distinct id.
    """
    fts, vec = ranks(fts_ids), ranks(vector_ids)
    hits = [Hit(mid, score, fts.get(mid), vec.get(mid)) for mid, score in rrf([(fts, 1.0), (vec, 1.0)], k).items()]
    return sorted(hits, key=lambda h: (-h.score, h.id))


def relevant(hits: list[Hit]) -> list[Hit]:
    """``hits`` without vector-only hits below ``MIN_VECTOR_SIMILARITY`` (order kept)."""
    return [h for h in hits if h.fts_rank is not None
            or (h.similarity is not None and h.similarity >= MIN_VECTOR_SIMILARITY)]


def candidates_k(limit: int) -> int:
    """How many hits each side contributes before fusion for ``limit`` wanted: ``max(limit * 4, 50)`` (as the
    LanceDB index's ``search``: deep enough that a memory ranked fair on both sides is fused)."""
    return max(limit * 4, 50)


# --------------------------------------------------------------------------- the vector table


def _wanted_meta(embedder: Embedder | None) -> dict[str, str]:
    return {"schema": str(VECTORS_SCHEMA_VERSION), "embedder": embedder.name if embedder is not None else "none"}


@dataclass
class SyncResult:
    """What a sync of the hybrid search's tables did (``update``; ``gitmem sync`` prints it).

    Attributes:
        added, updated, deleted: memories embedded for the first time, embedded again (their row changed),
            removed. After a rebuild, ``added`` is the number of memories written.
        rebuilt: every row was written anew (first sync, ``rebuild``, another embedder or schema).
        reason: why it was rebuilt (``missing``, ``requested``, ``embedder A -> B``, ``schema 1 -> 2``), or why
            nothing was written (``not written: …``), or "".
    """

    added: int
    updated: int
    deleted: int
    rebuilt: bool
    reason: str


def sync(con: sqlite3.Connection, embedder: Embedder | None) -> int:
    """``update``, returning only how many memories were written (0: nothing changed).

    Raises:
        EmbeddingError: the embedder failed (nothing is written).
    """
    res = update(con, embedder)
    return res.added + res.updated


def update(con: sqlite3.Connection, embedder: Embedder | None, *, rebuild: bool = False) -> SyncResult:
    """Bring the hybrid search's tables (``catalog.vectors``) in line with the catalog's memory rows (one meta read
    when the catalog's mark is the one last followed). ``embedder`` None: the full-text rows only (empty vectors).
    ``rebuild``: every row written anew (every memory embedded again).

    Follows the change log since the recorded mark (``catalog.files.changes_since``); with no usable mark
    (first sync, another catalog generation, another embedder or ``VECTORS_SCHEMA_VERSION``), compares every
    row's digest (``current_digests``) and embeds only the differing ones (all of them after an embedder change).

    Raises:
        EmbeddingError: the embedder failed (nothing is written).
    """
    meta = catalog_vectors.meta(con)
    want = _wanted_meta(embedder)
    same = not rebuild and all(meta.get(k) == v for k, v in want.items())
    source = catalog_files.MirrorSource(con)
    since = meta.get("mark") if same else None
    if since is not None and since == source.mark():
        return SyncResult(0, 0, 0, False, "")
    held = catalog_vectors.digests(con) if same else {}
    delta = source.changes_since(since) if since is not None else None
    if delta is not None:
        mark, upserts, removed = delta
        todo = [(mid, digest, mem) for mid, digest, mem in upserts]
    else:
        mark, current = source.digests()
        removed = sorted(set(held) - set(current))
        changed = sorted(mid for mid, digest in current.items() if held.get(mid) != digest)
        mems = catalog_files.load(con, changed)
        todo = [(mid, current[mid], mems[mid]) for mid in changed if mid in mems]
    blobs = _embed_rows(embedder, todo)
    if not catalog_vectors.write(con, clear=not same, removed=removed, rows=blobs, new_meta={**want, "mark": mark}):
        return SyncResult(0, 0, 0, False, "not written: the catalog is read-only or busy (the next search retries)")
    updated = sum(1 for mid, *_ in blobs if mid in held)
    return SyncResult(len(blobs) - updated, updated, sum(1 for mid in removed if mid in held), not same,
                      "" if same else _rebuild_reason(meta, want, rebuild))


def behind(con: sqlite3.Connection, embedder: Embedder | None, current: Mapping[str, str] | None = None
           ) -> SyncResult:
    """What ``update`` would do, computed without embedding or writing (``gitmem doctor``): the memories whose
    vector is missing (``added``), stale (``updated``) or left over (``deleted``); ``rebuilt`` and its ``reason``
    when every row would be written anew (never synced, another embedder or schema). ``current``: id → content
    hash of the memories as they are (``LoadResult.hashes``, the digest the catalog's rows carry); default: the
    catalog's rows as they are (not refreshed)."""
    meta = catalog_vectors.meta(con)
    want = _wanted_meta(embedder)
    if current is None:
        current = catalog_files.current_digests(con)[1]
    if not all(meta.get(k) == v for k, v in want.items()):
        return SyncResult(len(current), 0, 0, True, _rebuild_reason(meta, want, False))
    held = catalog_vectors.digests(con)
    return SyncResult(sum(1 for mid in current if mid not in held),
                      sum(1 for mid, digest in current.items() if mid in held and held[mid] != digest),
                      sum(1 for mid in held if mid not in current), False, "")


def _rebuild_reason(meta: dict[str, str], want: dict[str, str], requested: bool) -> str:
    """Why ``update`` wrote every row: ``requested``, ``missing`` (never synced), ``schema A -> B``,
    ``embedder A -> B``."""
    if requested:
        return "requested"
    if not meta:
        return "missing"
    for key in ("schema", "embedder"):
        if meta.get(key) != want[key]:
            return f"{key} {meta.get(key, '?')} -> {want[key]}"
    return "changed"


def _embed_rows(embedder: Embedder | None, todo: list[tuple[str, str, Memory]]
                ) -> list[tuple[str, str, bytes, str, str]]:
    """(id, digest, float32 little-endian bytes of the vector, title, ``search_text``) for each of ``todo``,
    embedded in batches (no vector without an embedder).

    Raises:
        EmbeddingError: the embedder failed or returned the wrong shape.
    """
    out: list[tuple[str, str, bytes, str, str]] = []
    for start in range(0, len(todo), EMBED_BATCH):
        chunk = todo[start:start + EMBED_BATCH]
        vecs: list[bytes] = [b""] * len(chunk)
        if embedder is not None:
            import numpy as np

            arr = np.ascontiguousarray(embedder.embed([embedding_text(m) for _, _, m in chunk]), dtype="<f4")
            if arr.shape != (len(chunk), int(embedder.dim)):
                raise EmbeddingError(f"embedder {embedder.name} returned vectors of shape {arr.shape}, "
                                     f"expected ({len(chunk)}, {embedder.dim})", "report this as a gitmem bug")
            vecs = [row.tobytes() for row in arr]
        out.extend((mid, digest, vec, m.title, search_text(m))
                   for (mid, digest, m), vec in zip(chunk, vecs, strict=True))
    return out


def fts_ranking(con: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]:
    """The ``k`` best memories for ``query``'s full-text terms (``textsplit.query_terms`` less ``STOP_WORDS``):
    [(id, score)], best first, ties by id. score = the sum over the title and the ``search_text`` of Robertson's
    BM25 (FTS5: k1 = 1.2, b = 0.75) of the terms ORed, Porter-stemmed (``catalog.vectors.bm25_columns``): a
    title match counts twice, as in the LanceDB index's multi-column match it replaces."""
    terms = [t for t in query_terms(query) if t.lower() not in STOP_WORDS]
    scored = catalog_vectors.bm25_columns(con, terms)
    return sorted(scored.items(), key=lambda p: (-p[1], p[0]))[:k]


def vector_ranking(con: sqlite3.Connection, qvec: Sequence[float], k: int) -> list[tuple[str, float]]:
    """The ``k`` stored vectors most similar to ``qvec`` (L2-normalised, length dim): [(id, cosine similarity)],
    most similar first, ties by id. Exact (every vector is compared): the dot product of normalised vectors is
    their cosine similarity. Up to ``PURE_PYTHON_MAX_ROWS`` stored vectors and numpy not imported yet (a cold
    command), in plain Python; else with numpy (a warm process, a large store). Both sum in float64: they agree
    to about 1e-15, so warm and cold rank alike."""
    dim = len(qvec)
    if "numpy" in sys.modules:
        return _ranked(*_matrix(con, dim), qvec, k)
    rows = catalog_vectors.blobs(con, 4 * dim)
    if not rows:
        return []
    ids = [mid for mid, _ in rows]
    if len(rows) <= PURE_PYTHON_MAX_ROWS:
        from array import array
        from operator import mul

        q = [float(x) for x in qvec]
        flat = array("f")
        flat.frombytes(b"".join(blob for _, blob in rows))
        if sys.byteorder == "big":
            flat.byteswap()  # stored little-endian
        sims = [sum(map(mul, q, flat[i * dim:(i + 1) * dim])) for i in range(len(rows))]
        order = sorted(range(len(ids)), key=lambda i: (-sims[i], ids[i]))[:k]
        return [(ids[i], float(sims[i])) for i in order]
    return _ranked(*_matrix(con, dim), qvec, k)


_MATRICES: dict[tuple[str, str, str, int], tuple[list[str], Any]] = {}  # see _matrix


def _matrix(con: sqlite3.Connection, dim: int) -> tuple[list[str], Any]:
    """(ids, float64 numpy matrix) of the stored vectors of length ``dim``, kept per process under the catalog mark
    they were synced at (``vector_meta``'s ``mark``: a generation id and a sequence number, so two catalogs never
    share one), embedder and schema: a warm process reads the vectors once per change, not once per search."""
    import numpy as np

    meta = catalog_vectors.meta(con)
    key = (meta.get("mark", ""), meta.get("embedder", ""), meta.get("schema", ""), dim)
    got = _MATRICES.get(key)
    if got is None or not key[0]:
        rows = catalog_vectors.blobs(con, 4 * dim)
        mat = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), dim)
        got = ([mid for mid, _ in rows], mat.astype(np.float64))
        if len(_MATRICES) >= MATRICES_KEPT:
            _MATRICES.clear()
        _MATRICES[key] = got
    return got


def _ranked(ids: list[str], mat: Any, qvec: Sequence[float], k: int) -> list[tuple[str, float]]:
    """The ``k`` best of ``ids`` by ``mat @ qvec`` (float64, as the plain sums), ties by id."""
    import numpy as np

    if not ids:
        return []
    sims = (mat @ np.asarray(qvec, dtype=np.float64)).tolist()
    order = sorted(range(len(ids)), key=lambda i: (-sims[i], ids[i]))[:k]
    return [(ids[i], float(sims[i])) for i in order]


def matrix(con: sqlite3.Connection, dim: int) -> tuple[list[str], numpy.ndarray]:
    """(ids, float32 array of shape (len(ids), dim)): every stored vector of length ``dim``, in id order."""
    import numpy as np

    rows = catalog_vectors.blobs(con, 4 * dim)
    mat = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), dim)
    return [mid for mid, _ in rows], mat


# --------------------------------------------------------------------------- search


@dataclass
class Outcome:
    """What ``search`` found and how.

    Attributes:
        hits: fused hits, best first (after ``relevant``), at most the limit asked.
        not_synced: the embedder failed while syncing the vectors (its message): vectors of new or changed
            memories are missing; else None.
        vector_warning: the query could not be embedded (full-text hits only): its message; else None.
    """

    hits: list[Hit]
    not_synced: str | None = None
    vector_warning: str | None = None


def search(con: sqlite3.Connection, embedder: Embedder | None, query: str, limit: int) -> Outcome:
    """The hybrid hits of ``query`` over the catalog behind ``con`` (already refreshed: ``open_current``).

    The tables synced first (``sync``), the BM25 top ``candidates_k(limit)`` (``fts_ranking``) and, with an
    embedder, the cosine top ``candidates_k(limit)`` (``vector_ranking``), fused by ``rrf_fuse``, filtered
    by ``relevant``, cut to ``limit``. [] for a blank query or ``limit`` ≤ 0. An embedder that fails leaves the
    vectors as they were (``not_synced``) or the query unembedded (``vector_warning``: full text only).
    """
    if not query.strip() or limit <= 0:
        return Outcome([])
    k = candidates_k(limit)
    out = Outcome([])
    try:
        sync(con, embedder)
    except EmbeddingError as e:
        out.not_synced = e.message
    fts_ids = [mid for mid, _ in fts_ranking(con, query, k)]
    pairs: list[tuple[str, float]] = []
    if embedder is not None:
        qvec = _query_vector(embedder, query, out)
        if qvec is not None:
            pairs = vector_ranking(con, qvec, k)
    hits = rrf_fuse(fts_ids, [mid for mid, _ in pairs])
    similarity = dict(pairs)
    for h in hits:
        h.similarity = similarity.get(h.id)
    out.hits = relevant(hits)[:limit]
    return out


def _query_vector(embedder: Embedder, query: str, out: Outcome) -> list[float] | None:
    """The query's vector, or None when it is all zeros or the embedder failed (then ``out.vector_warning`` says
    why). WordLlama's without numpy (``WordLlamaEmbedder.query_vector``); another embedder's through ``embed``."""
    from .embed import WordLlamaEmbedder

    try:
        if isinstance(embedder, WordLlamaEmbedder):
            vec = embedder.query_vector(query.strip())
        else:
            arr = embedder.embed([query.strip()])
            vec = [float(x) for x in arr[0]] if arr.shape == (1, int(embedder.dim)) else []
    except EmbeddingError as e:
        out.vector_warning = e.message
        return None
    if len(vec) != int(embedder.dim) or not any(vec):
        return None
    return vec
