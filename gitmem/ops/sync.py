"""``gitmem sync``: bring the catalog and the search's tables up to date with the memory files.

The catalog (``catalog``: every file stat-ed, changed ones read) is what every search reads. With gitmem's ``all``
extra, the hybrid search's tables in it (``search.hybrid.update``: a vector and the full-text rows per memory)
are brought up to date too, so that the next ``recall`` embeds nothing. Without the extra (a lean install) the
catalog's BM25 is the whole search, and the report says so (``SyncReport.index`` None).

Also removes the LanceDB index an older gitmem kept (``layout.index_dir``: derived, no longer read; it never
holds a memory).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import IndexUnavailable, MemoryFileError
from ..search import lexical
from ..store import Store

if TYPE_CHECKING:
    import sqlite3

    from ..search.hybrid import SyncResult


@dataclass
class SyncReport:
    """What the hybrid search's sync did (None: no vectors in this install, ``search`` says why), the memory
    files that failed to load, how this store is searched here (``search.lexical.Mode``), the memories the
    catalog holds, and whether an older gitmem's LanceDB index folder was removed."""

    index: SyncResult | None
    errors: list[MemoryFileError] = field(default_factory=list)
    search: lexical.Mode = field(default_factory=lambda: lexical.Mode(lexical.HYBRID))
    catalog_rows: int = 0
    removed_old_index: bool = False


def sync(store: Store, *, rebuild: bool = False) -> SyncReport:
    """Sync the catalog (every file stat-ed, changed ones read) and, with the ``all`` extra, the hybrid search's
    tables in it (incremental: only new or changed memories are embedded).

    ``rebuild``: drop the catalog (the search's tables with it) first and rebuild it from the memory files.

    Raises:
        OSError, sqlite3.Error, filelock.Timeout: the catalog cannot be written.
        EmbeddingError: the embedder failed (the catalog is synced; the vectors are not).
        ConfigError: a bad ``[embeddings]`` table.
    """
    from ..catalog.db import connect, count, drop_catalog
    from ..catalog.files import file_errors
    from ..catalog.sync import sync_hook_index

    how = lexical.mode(store)
    if rebuild:
        drop_catalog(store.repo.root)
    sync_hook_index(store, full=True)
    removed = _remove_old_index(store)
    con = connect(store.repo.root)
    if con is None:
        raise IndexUnavailable(f"the catalog of {store.repo.root} cannot be opened", "run `gitmem doctor`")
    try:
        rows = count(con)
        res = None if how.lean else _sync_hybrid(store, con, rebuild)
    finally:
        con.close()
    return SyncReport(index=res, errors=file_errors(store), search=how, catalog_rows=rows, removed_old_index=removed)


def _sync_hybrid(store: Store, con: sqlite3.Connection, rebuild: bool) -> SyncResult:
    """``search.hybrid.update`` over the open catalog ``con`` with the configured embedder."""
    from ..search import hybrid
    from ..search.embed import embedder_from_config

    embeddings = store.config.get("embeddings", {})
    embedder = embedder_from_config(dict(embeddings) if isinstance(embeddings, dict) else {})
    return hybrid.update(con, embedder, rebuild=rebuild)


def _remove_old_index(store: Store) -> bool:
    """Delete the LanceDB index folder an older gitmem kept in git's folder (``layout.index_dir``; derived, never a
    memory); whether one was removed. A folder that cannot be removed is left (``doctor`` names it)."""
    import shutil

    path = store.layout.index_dir
    if not path.is_dir() or path.is_symlink():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()
