"""Retrieval without vectors: BM25 over the catalog, what a lean install (``pip install gitmem-cli``) searches with.

The hybrid search (``search.recall``: LanceDB, BM25 + vectors) needs gitmem's ``all`` extra. Where it is missing,
every searcher (``recall``, ``context --prompt``, the warm process's ``search``, ``recall --personal``, ``gitmem
ui``) answers from the catalog's FTS5 full-text index instead (``catalog.db.search``: Robertson's BM25 over the
same title and text the agent hooks search), and says so: ``mode(store)`` is the one decision, and its ``name``
is what ``--json`` reports (``"search": "bm25"`` / ``"hybrid"``); ``Mode.note`` the one line a command prints on
standard error (once per command) when vectors are missing, with the command that installs them.

Guarantees: never imports LanceDB, numpy, pyarrow or an embedder; the hits are memories the catalog holds (the
same rows the LanceDB index follows), best first.

Must not import at module level: ``search.index``, ``search.recall``, ``search.embed`` (they need the extra);
``found`` imports ``search.recall`` only when the mode is hybrid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import extras
from ..catalog import db as catalog_db
from ..catalog import files as catalog_files
from ..errors import IndexUnavailable
from ..model import RecallHit
from ..store import Store

#: What ran: BM25 and vectors fused (``search.recall``), or full text only.
HYBRID = "hybrid"
BM25 = "bm25"


@dataclass(frozen=True)
class Mode:
    """How this store's searches run here.

    Attributes:
        name: ``"hybrid"`` (the LanceDB index, BM25 + vectors) or ``"bm25"`` (full text only: the extra is
            missing, or ``[embeddings] provider = "none"``).
        missing: the ``all`` extra's modules whose absence makes it BM25 over the catalog (empty: the LanceDB
            index is used).
    """

    name: str
    missing: tuple[str, ...] = ()

    @property
    def lean(self) -> bool:
        """Whether searches run over the catalog (the ``all`` extra's index or embedder is missing)."""
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


def found(store: Store, query: str, limit: int = 10, *, warn: Callable[[str], None] | None = None,
          note: Callable[[str], None] | None = None) -> tuple[list[RecallHit], Mode]:
    """Search ``store`` as this install can: the hybrid ``search.recall.recall`` when the ``all`` extra is here,
    else ``recall`` above (``note`` is then called once with ``Mode.note``). Returns (at most ``limit`` hits,
    best first; the mode that ran). ``warn``: passed to the hybrid search (an index not synced).

    Raises:
        IndexUnavailable: the index (or, lean, the catalog) cannot be read or rebuilt.
        EmbeddingError: as ``search.recall.recall``.
    """
    how = mode(store)
    if how.lean:
        if note is not None and how.note:
            note(how.note)
        return recall(store, query, limit), how
    from .recall import recall as hybrid  # LanceDB: ~1 s to import

    return hybrid(store, query, limit, warn=warn), how
