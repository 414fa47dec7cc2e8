"""``gitmem sync``: bring the catalog and the search index up to date with the memory files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import MemoryFileError
from ..search.index import SyncResult
from ..store import Store


@dataclass
class SyncReport:
    """What the search index sync did, and the memory files that failed to load."""

    index: SyncResult
    errors: list[MemoryFileError] = field(default_factory=list)


def sync(store: Store, *, rebuild: bool = False, warn: Callable[[str], None] | None = None) -> SyncReport:
    """Sync the catalog (every file stat-ed, changed ones read) and the LanceDB index (incremental).

    ``rebuild``: drop the catalog and the index first and rebuild both from the memory files.
    A catalog failure is passed to ``warn`` (it is a cache: the index sync reads the files itself).
    """
    from ..catalog.db import drop_catalog
    from ..catalog.sync import sync_hook_index
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
        return SyncReport(index=index.rebuild(loaded.hashes, lambda i: mems[i]), errors=loaded.errors)
    _, res, src = sync_index(store, None, index)
    close_source(src)
    from ..catalog.files import file_errors

    return SyncReport(index=res, errors=file_errors(store))
