"""Hybrid recall through the user's warm process (``gitmem.daemon``) when it answers, else in this process.

For a long-lived process that searches now and then (the MCP server): the warm process already holds
the embedding model and the search's vectors, so this process need not load them. The hits are the warm
process's (its ``search`` op: ``search.lexical.hybrid_hits``); their memories are read here from the catalog,
as ``search.lexical.hybrid_recall`` reads them. When the warm process is off, absent, starting or slow,
``search.lexical.found`` runs here (the hybrid search, or BM25 over the catalog without the ``all`` extra, as
the warm process does): one owner of the search itself.

Must not import: the embedder (``search.embed``, ``search.hybrid``) unless the warm process did not answer.
"""

from __future__ import annotations

from collections.abc import Callable

from ..catalog import files as catalog_files
from ..daemon import client
from ..model import RecallHit
from ..store import Store

#: Seconds a search waits for the warm process's answer before searching here. A warm answer takes tens
#: of milliseconds (issue 13: 28-39 ms at 10k memories); loading the search here takes longer, so waiting longer
#: for a busy warm process would be slower than searching here (the same wait as ``daemon.front``'s recall).
SEARCH_TIMEOUT_S = 2.5


def start(store: Store) -> bool:
    """Start the user's warm process if it may run and none does (detached, not waited for); whether the
    warm process is to serve this store's searches (False: it is turned off, ``client.enabled``). Never raises."""
    if not client.enabled(store.layout):
        return False
    client.ensure_started(store.layout)
    return True


def recall(store: Store, query: str, limit: int = 10, *, warn: Callable[[str], None] | None = None
           ) -> list[RecallHit]:
    """``search.lexical.found(store, query, limit, warn=warn)``'s hits, answered by the warm process when it can.

    A warm process that is not running is started for the next call (``client.request``); this call
    then searches here. Raises as ``search.lexical.found`` (only when it runs here).
    """
    reply = client.request(store.layout, "search", {"query": query, "limit": limit}, timeout_s=SEARCH_TIMEOUT_S)
    hits = _from_reply(store, reply) if reply is not None else None
    if hits is not None:
        return hits
    from .lexical import found  # the embedder (with the all extra): only when the warm process did not answer

    return found(store, query, limit, warn=warn)[0]


def _from_reply(store: Store, reply: dict[str, object]) -> list[RecallHit] | None:
    """The warm process's hits with their memories from the catalog; None when the reply is unusable or the
    catalog cannot be opened (the caller searches here)."""
    rows = reply.get("hits")
    try:
        if not isinstance(rows, list):
            raise TypeError("hits")
        hits = [(str(h["id"]), float(h["score"]), h["fts_rank"], h["vector_rank"]) for h in rows]
    except (KeyError, TypeError, ValueError):
        client.log(store.layout, "client search: unusable reply; searching in-process")
        return None
    con = catalog_files.open_current(store)
    if con is None:
        return None
    try:
        mems = catalog_files.MirrorSource(con).memories([h[0] for h in hits])
    finally:
        con.close()
    return [RecallHit(mems[mid], score, fts, vec) for mid, score, fts, vec in hits if mid in mems]
