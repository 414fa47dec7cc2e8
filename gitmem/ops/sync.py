"""``gitmem sync``: bring the catalog and the search index up to date with the memory files.

Without gitmem's ``all`` extra (a lean install) there is no search index: the catalog is what searches read
(``search.lexical``), so syncing it is the whole job, and the report says so (``SyncReport.index`` None).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import MemoryFileError
from ..search import lexical
from ..store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..search.index import SyncResult


@dataclass
class SyncReport:
    """What the search index sync did (None: no index in this install, ``search`` says why), the memory files
    that failed to load, and how this store is searched here (``search.lexical.Mode``)."""

    index: SyncResult | None
    errors: list[MemoryFileError] = field(default_factory=list)
    search: lexical.Mode = field(default_factory=lambda: lexical.Mode(lexical.HYBRID))
    catalog_rows: int = 0


def sync(store: Store, *, rebuild: bool = False, warn: Callable[[str], None] | None = None) -> SyncReport:
    """Sync the catalog (every file stat-ed, changed ones read) and the LanceDB index (incremental).

    ``rebuild``: drop the catalog and the index first and rebuild both from the memory files.
    A catalog failure is passed to ``warn`` (it is a cache: the index sync reads the files itself); without the
    ``all`` extra the catalog is the only index, and its failure is raised.

    Raises:
        OSError, sqlite3.Error, filelock.Timeout: lean install only: the catalog cannot be written.
    """
    from ..catalog.db import connect, count, drop_catalog
    from ..catalog.files import file_errors
    from ..catalog.sync import sync_hook_index

    how = lexical.mode(store)
    if how.lean:
        if rebuild:
            drop_catalog(store.repo.root)
        sync_hook_index(store, full=True)
        con = connect(store.repo.root)
        try:
            rows = count(con) if con is not None else 0
        finally:
            if con is not None:
                con.close()
        return SyncReport(index=None, errors=file_errors(store), search=how, catalog_rows=rows)

    from ..search.recall import close_source, open_index, sync_index

    index = open_index(store)
    if rebuild:
        drop_catalog(store.repo.root)
    try:
        sync_hook_index(store, full=True)
    except Exception as e:  # noqa: BLE001 - a cache: report, the LanceDB sync reads the files itself
        if warn is not None:
            warn(f"the hook index was not updated ({type(e).__name__}: {e})")
    if rebuild:
        loaded = store.load_all()
        mems = loaded.memories
        return SyncReport(index=index.rebuild(loaded.hashes, lambda i: mems[i]), errors=loaded.errors, search=how)
    _, res, src = sync_index(store, None, index)
    close_source(src)
    _sync_hybrid(store, warn)
    return SyncReport(index=res, errors=file_errors(store), search=how)


def _sync_hybrid(store: Store, warn: Callable[[str], None] | None) -> None:
    """Bring the hybrid search's vectors and full-text rows (``search.hybrid.sync``) up to date, so that the next
    ``recall`` embeds nothing; a failure is reported through ``warn`` (the next search syncs them itself)."""
    from ..catalog.files import open_current
    from ..errors import GitmemError
    from ..search import hybrid
    from ..search.embed import embedder_from_config

    con = open_current(store)
    if con is None:
        return
    try:
        hybrid.sync(con, embedder_from_config(dict(store.config.get("embeddings", {}))))
    except GitmemError as e:
        if warn is not None:
            warn(f"the search vectors were not updated: {e.message}")
    finally:
        con.close()
