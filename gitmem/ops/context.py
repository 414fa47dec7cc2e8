"""``gitmem context``: the memories closest to the code in focus, packed into a token budget.

Pipeline: focus set (``focus``) → candidate ranking by proximity, text
relevance and recency, the recency decayed by disuse (``rank.rank``, ``fading``) → status of the top candidates at the
working tree (``analyzer``) → staleness penalty or omission
(``rank.apply_status``) → budget packing (``rank.pack``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..analyzer import memory_status
from ..anchors import Resolver
from ..git import WORKTREE
from ..rank.focus import Focus, add_import_neighbours, build_focus, weigh_names
from ..rank.score import Packed, Scored, apply_status, pack, rank
from ..search import lexical
from ..store import LoadResult, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..catalog.sync import HookIndexSource

#: Candidates whose status is evaluated (status needs parsing; the tail rarely fits a budget).
STATUS_CANDIDATES = 60
#: Text-relevance hits taken from the index for fusion.
TEXT_CANDIDATES = 50


class CandidateSource(Protocol):
    """Memories by focus, for callers that must not load all of them (10,000 files cost a second).

    ``candidates`` must return every memory that can have a proximity > 0 for
    the focus (anchored to its files, import neighbours, directories or
    symbols) plus the most recent ones, enough to fill any budget when the
    focus is empty.
    """

    total: int

    def anchored_paths(self) -> set[str]: ...

    def candidates(self, focus: Focus, extra: list[str] | tuple[str, ...] = ()) -> LoadResult: ...


def _mirror_source(store: Store, budget: int) -> HookIndexSource | None:
    """The hook index as a candidate source, its rows brought up to date; None when it cannot be opened.

    ``recent`` as in ``catalog_sync.open_source``: enough of the newest to fill ``budget``.
    """
    from ..catalog import files as catalog_files
    from ..catalog.sync import HookIndexSource
    from ..rank.render import CHARS_PER_TOKEN, MIN_INDEX_LINE_CHARS

    con = catalog_files.open_current(store)
    if con is None:
        return None
    lines = budget * CHARS_PER_TOKEN // MIN_INDEX_LINE_CHARS  # the most lines the budget can hold
    return HookIndexSource(con, max(200, 3 * lines), per_path=max(100, lines + 25))


def fading(store: Store, ids: Iterable[str]) -> dict[str, float]:
    """id → decay factor (``usage.fading``) of ``ids``, the clone's use log folded into the catalog first;
    ``{}`` when decay is off (``[ranking] decay = false``) or the catalog cannot be read (no decay then)."""
    from .. import config
    from ..catalog import usage as catalog_usage

    half_life = config.decay_half_life(store.config)
    return {} if half_life is None else catalog_usage.fading_now(store.layout, ids, half_life)


@dataclass
class ContextResult:
    """The packed context and how it was made.

    Attributes:
        packed: rendered text, the ids it holds, its token estimate.
        ranked: every ranked candidate, best first (more than fit the budget).
        focus: the focus set used.
        budget: the token budget asked for.
        total: how many valid memories exist.
        search: how the prompt's text was searched (``search.lexical``: ``"hybrid"``, ``"bm25"``), None when no
            text search ran (no prompt, or ``use_index`` false).
        search_note: one line saying the search was BM25 only for want of the ``all`` extra, else None.
    """

    packed: Packed
    ranked: list[Scored]
    focus: Focus
    budget: int
    total: int = 0
    search: str | None = None
    search_note: str | None = None


def _hybrid_ids(store: Store, prompt: str, loaded: LoadResult | None) -> list[str]:
    """Ids of the hybrid search's hits for ``prompt`` (``search.recall``, LanceDB: ~1 s to import), best first."""
    from ..search.recall import close_source, relevant, search_healing, sync_index

    index, _, src = sync_index(store, loaded, strict=False)
    try:
        return [h.id for h in relevant(search_healing(store, index, src, prompt, TEXT_CANDIDATES))]
    finally:
        if loaded is None:
            close_source(src)


def build_context(store: Store, *, files: list[str] | tuple[str, ...] = (), prompt: str = "",
                  budget: int | None = None, cwd: str | None = None, use_index: bool = True,
                  include_dirty: bool = True, include_branch: bool = True,
                  loaded: LoadResult | None = None, include_imports: bool = True,
                  source: CandidateSource | None = None) -> ContextResult:
    """Rank memories for the current focus and pack them into ``budget`` tokens.

    ``budget`` None takes ``[context] budget`` from config.toml. With
    ``use_index`` false, text relevance is skipped (no LanceDB import); without the ``all`` extra it is the
    catalog's BM25 (``search.lexical``; ``search`` and ``search_note`` say so). With
    ``include_imports`` (default), import neighbours of the focus files that
    hold anchors count as near (``focus.add_import_neighbours``).
    ``source``: where candidates come from without loading every memory (the
    hook index at session start); ignored when a prompt needs text search.
    """
    cfg = store.config.get("context", {})
    budget = int(budget if budget is not None else cfg.get("budget", 1500))
    detail = int(cfg.get("detail", 3))
    omit = str(cfg.get("stale", "mark")) == "omit"
    repo = store.repo
    resolver = Resolver(repo)
    focus = build_focus(repo, files=files, prompt=prompt, cwd=cwd, resolver=resolver,
                        include_dirty=include_dirty, include_branch=include_branch)
    text_ids: list[str] = []
    how = lexical.mode(store) if prompt.strip() and use_index else None
    cache_path = store.cache_dir / "imports.json" if store.dir.is_dir() else None
    own = None
    if source is None and loaded is None:
        own = _mirror_source(store, budget)
        source = own
    try:
        if source is not None and not (prompt.strip() and use_index and own is None):
            if how is not None:
                text_ids = (_hybrid_ids(store, prompt, None) if not how.lean
                            else [mid for mid, _ in lexical.search(store, prompt, TEXT_CANDIDATES)])
            if include_imports:
                add_import_neighbours(repo, focus, source.anchored_paths(), cache_path=cache_path)
            loaded = source.candidates(focus, text_ids) if own is not None else source.candidates(focus)
            total = source.total
        else:
            loaded = loaded if loaded is not None else store.load_all()
            if how is not None:
                text_ids = (_hybrid_ids(store, prompt, loaded) if not how.lean
                            else [mid for mid, _ in lexical.search(store, prompt, TEXT_CANDIDATES)])
            if include_imports:
                anchored = {a.path for m in loaded.memories.values() for a in m.anchors if a.path and a.local}
                add_import_neighbours(repo, focus, anchored, cache_path=cache_path)
            total = len(loaded.memories)
    finally:
        if own is not None:
            own.con.close()
    # read or edited through a symbolic link, or anchored to one: the link and the file it leads to are one
    focus.add_links(repo.root, {a.path for m in loaded.memories.values() for a in m.anchors if a.path and a.local})
    weigh_names(focus, (a for m in loaded.memories.values() for a in m.anchors))  # a name fifty symbols share: little
    ranked = rank(list(loaded.memories.values()), focus, text_ids, fading(store, loaded.memories))
    top = ranked[:STATUS_CANDIDATES]
    statuses = {s.memory.id: memory_status(resolver, s.memory, WORKTREE) for s in top}
    ranked = apply_status(top, statuses, omit_stale=omit) + ranked[STATUS_CANDIDATES:]
    return ContextResult(pack(ranked, budget, detail), ranked, focus, budget, total,
                         search=how.name if how is not None else None,
                         search_note=how.note if how is not None else None)
