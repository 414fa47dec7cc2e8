"""The searches' one entry: BM25 over the catalog (a lean install, ``pip install gitmem-cli``), or hybrid.

The hybrid search (``hybrid_hits``: ``search.hybrid``, the catalog's BM25 + exact cosine over the vectors kept in
the catalog, fused by RRF; no LanceDB) needs gitmem's ``all`` extra (the embedder). ``text_ranking`` is what
``context --prompt`` fuses: the ids of whichever of the two this install runs. Where it is missing,
every searcher (``recall``, ``context --prompt``, the warm process's ``search``, ``recall --personal``, ``gitmem
ui``) answers from the catalog's FTS5 full-text index instead (``catalog.db.search``: Robertson's BM25 over the
same title and text the agent hooks search), and says so: ``mode(store)`` is the one decision, and its ``name``
is what ``--json`` reports (``"search": "bm25"`` / ``"hybrid"``); ``Mode.note`` the one line a command prints on
standard error (once per command) when vectors are missing, with the command that installs them.

Guarantees: never imports LanceDB or pyarrow; numpy and the embedder only for a hybrid search; the hits are
memories the catalog holds, best first.

Must not import at module level: ``search.embed``, ``search.hybrid`` (they need the extra).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import extras
from ..catalog import db as catalog_db
from ..catalog import files as catalog_files
from ..errors import IndexUnavailable
from ..model import RecallHit
from ..store import Store

if TYPE_CHECKING:  # pragma: no cover - typing only
    import sqlite3

    from .hybrid import Hit

#: What ran: BM25 and vectors fused (``search.hybrid``), or full text only.
HYBRID = "hybrid"
BM25 = "bm25"


@dataclass(frozen=True)
class Mode:
    """How this store's searches run here.

    Attributes:
        name: ``"hybrid"`` (``search.hybrid``: BM25 + vectors) or ``"bm25"`` (full text only: the extra is
            missing, or ``[embeddings] provider = "none"``).
        missing: the ``all`` extra's modules whose absence makes it BM25 over the catalog (empty: the hybrid
            search runs).
    """

    name: str
    missing: tuple[str, ...] = ()

    @property
    def lean(self) -> bool:
        """Whether searches are BM25 only (the ``all`` extra's embedder is missing)."""
        return bool(self.missing)

    @property
    def note(self) -> str | None:
        """One line for standard error when vectors are missing (None otherwise): what ran, what is missing,
        the command that installs it."""
        if not self.missing:
            return None
        return f"gitmem: full-text (BM25) results only; {extras.error('semantic search', self.missing[0]).message}"


def mode(store: Store) -> Mode:
    """The search mode of ``store`` in this install (``find_spec`` only: nothing of the extra is imported)."""
    embeddings = store.config.get("embeddings", {})
    emb = dict(embeddings) if isinstance(embeddings, dict) else {}
    missing = tuple(extras.search_missing(emb))
    if missing:
        return Mode(BM25, missing)
    return Mode(BM25 if str(emb.get("provider", "")).lower() == "none" else HYBRID)


def _unavailable(store: Store) -> IndexUnavailable:
    """The error for a catalog that ``catalog.files.open_current`` could not open or refresh."""
    return IndexUnavailable(f"the catalog {catalog_db.db_path(store.repo.root)} cannot be opened",
                            "run `gitmem doctor`")


def search(store: Store, query: str, limit: int) -> list[tuple[str, float]]:
    """BM25 hits of ``query`` over the catalog, its rows brought up to date first: [(id, score)], best first,
    at most ``limit``; score = -bm25 (higher is better; not comparable with hybrid scores). [] for a query of
    no searchable term.

    Raises:
        IndexUnavailable: the catalog cannot be opened or refreshed.
    """
    con = catalog_files.open_current(store)
    if con is None:
        raise _unavailable(store)
    try:
        return catalog_db.search(con, query, limit)
    finally:
        con.close()


def recall(store: Store, query: str, limit: int = 10) -> list[RecallHit]:
    """``search`` with the memories read from the catalog: at most ``limit`` ``RecallHit``s, best first, each
    with ``fts_rank`` (1-based) and no ``vector_rank``.

    Raises:
        IndexUnavailable: the catalog cannot be opened or refreshed.
    """
    con = catalog_files.open_current(store)
    if con is None:
        raise _unavailable(store)
    try:
        found = catalog_db.search(con, query, limit)
        mems = catalog_files.MirrorSource(con).memories([mid for mid, _ in found])
    finally:
        con.close()
    return [RecallHit(mems[mid], score, rank, None)
            for rank, (mid, score) in enumerate(found, start=1) if mid in mems]


def hybrid_hits(store: Store, query: str, limit: int, *, con: sqlite3.Connection | None = None,
                warn: Callable[[str], None] | None = None) -> list[Hit]:
    """The hybrid hits of ``query`` (``search.hybrid.search``: the catalog's BM25 and exact cosine over the
    vectors kept in the catalog, fused by RRF; no LanceDB): at most ``limit``, best first. ``con``: an open,
    refreshed catalog connection to use (left open), else one is opened here. ``warn`` is called once when the
    vectors could not be brought up to date (an embedding endpoint down: results may miss new memories).

    Raises:
        IndexUnavailable: the catalog cannot be opened, refreshed or written.
        ConfigError: a bad ``[embeddings]`` table.
    """
    from .embed import embedder_from_config
    from .hybrid import search as hybrid_search

    embeddings = store.config.get("embeddings", {})
    embedder = embedder_from_config(dict(embeddings) if isinstance(embeddings, dict) else {})
    own = con is None
    con = catalog_files.open_current(store) if con is None else con
    if con is None:
        raise _unavailable(store)
    try:
        outcome = hybrid_search(con, embedder, query, limit)
    finally:
        if own:
            con.close()
    if warn is not None and outcome.not_synced:
        warn(f"index not synced: {outcome.not_synced}; results may miss new or changed memories")
    return outcome.hits


def text_ranking(store: Store, query: str, limit: int, *, con: sqlite3.Connection | None = None) -> list[str]:
    """The ids of ``query``'s text ranking, best first, at most ``limit``: what ``context --prompt`` fuses. The
    cheapest correct way this install has: the hybrid hits (``hybrid_hits``: BM25 + vectors, as ``gitmem
    recall`` ranks them) with the ``all`` extra, else the catalog's BM25 (``search``). ``con``: an open,
    refreshed catalog connection to reuse (left open). [] for a query of no searchable term and no vector.

    Raises:
        IndexUnavailable: the catalog cannot be opened or refreshed.
    """
    if mode(store).lean:
        if con is not None:
            return [mid for mid, _ in catalog_db.search(con, query, limit)]
        return [mid for mid, _ in search(store, query, limit)]
    return [h.id for h in hybrid_hits(store, query, limit, con=con)]


def found(store: Store, query: str, limit: int = 10, *, warn: Callable[[str], None] | None = None,
          note: Callable[[str], None] | None = None) -> tuple[list[RecallHit], Mode]:
    """Search ``store`` as this install can: the hybrid ``hybrid_recall`` when the ``all`` extra is here,
    else ``recall`` above (``note`` is then called once with ``Mode.note``). Returns (at most ``limit`` hits,
    best first; the mode that ran). ``warn``: passed to the hybrid search (an index not synced).

    Raises:
        IndexUnavailable: the catalog cannot be opened, refreshed or written.
        ConfigError: a bad ``[embeddings]`` table.
    """
    how = mode(store)
    if how.lean:
        if note is not None and how.note:
            note(how.note)
        return recall(store, query, limit), how
    return hybrid_recall(store, query, limit, warn=warn), how


def hybrid_recall(store: Store, query: str, limit: int = 10, *, warn: Callable[[str], None] | None = None
                  ) -> list[RecallHit]:
    """``hybrid_hits`` with their memories read from the catalog: at most ``limit`` ``RecallHit``s, best first.

    Raises: as ``hybrid_hits``.
    """
    con = catalog_files.open_current(store)
    if con is None:
        raise _unavailable(store)
    try:
        hits = hybrid_hits(store, query, limit, con=con, warn=warn)
        mems = catalog_files.MirrorSource(con).memories([h.id for h in hits])
    finally:
        con.close()
    return [RecallHit(mems[h.id], h.score, h.fts_rank, h.vector_rank) for h in hits if h.id in mems]
