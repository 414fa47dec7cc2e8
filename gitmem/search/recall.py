"""Opening the index for a store, keeping it in sync, and hybrid recall.

The glue between ``store`` (the memory files, the source of truth) and
``index`` (the derived LanceDB index): every query first brings the hook
index's rows up to date (``catalog``: only changed files are read) and the
LanceDB index follows their change log, so a ``git pull`` costs only the
changed files and an unchanged store a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable

from ..catalog import files as catalog_files
from ..catalog.files import MirrorSource
from ..errors import EmbeddingError, IndexUnavailable
from ..model import Memory, RecallHit
from ..store import LoadResult, Store
from .embed import embedder_from_config
from .hybrid import MIN_VECTOR_SIMILARITY as MIN_VECTOR_SIMILARITY  # one owner of these: search.hybrid
from .hybrid import Hit
from .hybrid import relevant as relevant
from .index import MemoryIndex, SyncResult


def open_index(store: Store) -> MemoryIndex:
    """The store's index, with the embedder from ``[embeddings]`` in config.toml."""
    return MemoryIndex(store.index_dir, embedder_from_config(dict(store.config.get("embeddings", {}))))


def sync_index(store: Store, loaded: LoadResult | None = None, index: MemoryIndex | None = None, *,
               strict: bool = True) -> tuple[MemoryIndex, SyncResult, MirrorSource | LoadResult]:
    """Bring the index in line with the memory files; returns (index, what changed, where memories come from).

    Without ``loaded``, the hook index's rows are brought up to date (a quick
    ``catalog`` refresh) and the LanceDB index follows their change log: an
    unchanged store costs a few milliseconds at any size. The third element is
    then a ``MirrorSource`` (``.memories(ids)``), else ``loaded``.

    With ``strict`` false (queries), an embedding endpoint that fails leaves the
    index as it was: the query still runs (full text falls back by itself) and
    the result's ``reason`` says ``not synced: …``.

    Raises:
        EmbeddingError: the embedder failed and ``strict`` is true.
    """
    index = index or open_index(store)
    source: MirrorSource | LoadResult
    con = catalog_files.open_current(store) if loaded is None else None
    if con is None:
        loaded = loaded or store.load_all()
        mems = loaded.memories
        source = loaded
    else:
        source = MirrorSource(con)
    try:
        if isinstance(source, MirrorSource):
            result = index.sync_from(source)
        else:
            result = index.sync(source.hashes, lambda mid: mems[mid])
    except EmbeddingError as e:
        if strict:
            raise
        result = SyncResult(0, 0, 0, False, f"not synced: {e.message}")
    return index, result, source


def memories_of(source: MirrorSource | LoadResult, ids: list[str]) -> dict[str, Memory]:
    """id → Memory for ``ids`` from what ``sync_index`` returned."""
    if isinstance(source, MirrorSource):
        return source.memories(ids)
    return {i: source.memories[i] for i in ids if i in source.memories}


def search_healing(store: Store, index: MemoryIndex, source: MirrorSource | LoadResult, query: str,
                   limit: int) -> list[Hit]:
    """``index.search``; if the index turns out unreadable, rebuild it from the memories and search again.

    Raises:
        IndexUnavailable: the rebuilt index cannot be searched either.
    """
    try:
        return index.search(query, limit=limit)
    except IndexUnavailable:
        if isinstance(source, MirrorSource):
            _, current = source.digests()
            index.rebuild(current, source.load)
        else:
            mems = source.memories
            index.rebuild(source.hashes, lambda mid: mems[mid])
        return index.search(query, limit=limit)


def recall(store: Store, query: str, limit: int = 10, *, warn: Callable[[str], None] | None = None) -> list[RecallHit]:
    """Hybrid search (full-text BM25 + vector, fused by RRF) over all valid memories.

    Returns at most ``limit`` hits, best first; [] for an empty query.
    """
    index, synced, source = sync_index(store, strict=False)
    try:
        if warn is not None and synced.reason.startswith("not synced"):
            warn(f"index {synced.reason}; results may miss new or changed memories")
        hits = relevant(search_healing(store, index, source, query, limit))
        mems = memories_of(source, [h.id for h in hits])
        return [RecallHit(mems[h.id], h.score, h.fts_rank, h.vector_rank) for h in hits if h.id in mems]
    finally:
        close_source(source)


def close_source(source: MirrorSource | LoadResult) -> None:
    """Close the hook-index connection behind ``source`` (if any)."""
    if isinstance(source, MirrorSource):
        source.con.close()
