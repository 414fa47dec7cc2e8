"""``gitmem context``: the memories closest to the code in focus, packed into a token budget.

Pipeline: focus set (``focus``) → candidate ranking by proximity, text
relevance (``text_ranking``: the hybrid search over the catalog, no LanceDB) and recency, the recency decayed by disuse
(``rank.rank``, ``fading``) → statuses at the working tree of the top candidates, only as far as the packer reads
them (``ShownStatuses``: the catalog's recorded status while it still holds, ``catalog.sync.holding_statuses``,
else ``analyzer.memory_status``) → staleness penalty or omission (``rank.apply_status``) → budget packing
(``rank.pack``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from ..analyzer import memory_status
from ..anchors import Resolver
from ..git import WORKTREE
from ..model import Status
from ..rank.focus import Focus, add_import_neighbours, build_focus, weigh_names
from ..rank.score import Packed, Scored, apply_status, order_key, pack, rank
from ..rank.task import add_task_symbols
from ..search import lexical
from ..store import LoadResult, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from ..catalog.sync import HookIndexSource

#: Candidates whose status may be evaluated, as far as the packer reads them (a status needs parsing; the tail
#: rarely fits a budget); those further down count as fresh.
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


def text_ranking(store: Store, prompt: str, con: sqlite3.Connection | None = None) -> list[str]:
    """Ids of the memories whose text matches ``prompt``, best first (at most ``TEXT_CANDIDATES``): context's one
    call for text relevance, ``search.lexical.text_ranking`` (the hybrid search as ``gitmem recall`` ranks: the
    catalog's BM25 + exact cosine over the vectors kept in the catalog, no LanceDB; BM25 alone on a lean install).
    ``con``: an open, refreshed catalog connection to reuse. [] when the catalog cannot be read or the prompt
    cannot be embedded (the ranking then stands on proximity and recency).
    """
    from ..errors import EmbeddingError, IndexUnavailable

    try:
        return lexical.text_ranking(store, prompt, TEXT_CANDIDATES, con=con)
    except (IndexUnavailable, EmbeddingError):
        return []


class ShownStatuses:
    """``rank.apply_status`` of ``top`` done lazily: iterating gives ``top`` in the very order ``apply_status``
    would (``order_key``), each with its status, evaluating a status only when the next memory out depends on it.

    A status only lowers a score (``STALE_PENALTY``), so a memory whose status is not known yet can come out no
    earlier than its score says; a memory whose status is known comes out once it is ahead of the best of those
    (the lazy "upper bound" selection). The packer stops reading once the budget is full, so only the memories it
    reads get a status. A status is the catalog's recorded one while it holds (``held``:
    ``catalog.sync.holding_statuses``), else ``analyzer.memory_status`` at the working tree.

    Attributes:
        given: the memories given out so far, in order.
    """

    def __init__(self, top: list[Scored], resolver: Resolver, held: dict[str, tuple[Status, str]], *,
                 omit_stale: bool) -> None:
        self._todo = sorted(top, key=order_key)
        self._next = 0
        self._ready: list[tuple[tuple[float, float, str], Scored]] = []  # a heap by order_key (unique: the id)
        self._resolver = resolver
        self._held = held
        self._omit = omit_stale
        self.given: list[Scored] = []

    def _resolve(self, s: Scored) -> bool:
        """Attach ``s``'s status and penalty; False when it is left out (stale, ``omit_stale``)."""
        held = self._held.get(s.memory.id)
        if held is not None:
            s.status, s.status_reason = held
            return bool(apply_status([s], {}, omit_stale=self._omit))
        ms = memory_status(self._resolver, s.memory, WORKTREE)
        return bool(apply_status([s], {s.memory.id: ms}, omit_stale=self._omit))

    def __iter__(self) -> Iterator[Scored]:
        while True:
            while self._ready and (self._next >= len(self._todo)
                                   or self._ready[0][0] < order_key(self._todo[self._next])):
                s = heapq.heappop(self._ready)[1]
                self.given.append(s)
                yield s
            if self._next >= len(self._todo):
                return
            s = self._todo[self._next]
            self._next += 1
            if self._resolve(s):
                heapq.heappush(self._ready, (order_key(s), s))

    def rest(self) -> list[Scored]:
        """The memories of ``top`` not given out, best first as far as known (those never read count as fresh)."""
        return sorted([s for _, s in self._ready] + self._todo[self._next:], key=order_key)


def _held_statuses(store: Store, con: sqlite3.Connection | None, ids: list[str]) -> dict[str, tuple[Status, str]]:
    """``catalog.sync.holding_statuses`` of ``ids`` through ``con`` (else a connection of its own); {} when the
    catalog cannot be opened."""
    from ..catalog import db as catalog_db
    from ..catalog.sync import holding_statuses

    own = None
    if con is None:
        con = own = catalog_db.connect(store.repo.root)
        if con is None:
            return {}
    try:
        return holding_statuses(con, store.repo, ids)
    finally:
        if own is not None:
            own.close()


def build_context(store: Store, *, files: list[str] | tuple[str, ...] = (), prompt: str = "",
                  budget: int | None = None, cwd: str | None = None, use_index: bool = True,
                  include_dirty: bool = True, include_branch: bool = True,
                  loaded: LoadResult | None = None, include_imports: bool = True,
                  source: CandidateSource | None = None, anchor_detail: bool = False) -> ContextResult:
    """Rank memories for the current focus and pack them into ``budget`` tokens.

    ``budget`` None takes ``[context] budget`` from config.toml. With
    ``use_index`` false, text relevance is skipped; else the prompt's text is ranked by ``text_ranking``
    (``search`` says ``"hybrid"`` or ``"bm25"``; ``search_note`` says when the ``all`` extra is missing). With
    ``include_imports`` (default), import neighbours of the focus files that
    hold anchors count as near (``focus.add_import_neighbours``).
    ``source``: where candidates come from without loading every memory (the
    hook index at session start).
    Statuses: only for the memories the packer reads (``ShownStatuses``), the catalog's recorded status where it
    still holds (candidates read from the catalog: not with ``loaded``); ``anchor_detail`` (the JSON shapes print
    each anchor's status) evaluates each of those instead, so every shown memory has its ``status_detail``.
    ``ranked`` past the memories read has no status (counted fresh).
    """
    cfg = store.config.get("context", {})
    budget = int(budget if budget is not None else cfg.get("budget", 1500))
    detail = int(cfg.get("detail", 3))
    omit = str(cfg.get("stale", "mark")) == "omit"
    repo = store.repo
    resolver = Resolver(repo)
    focus = build_focus(repo, files=files, prompt=prompt, cwd=cwd, resolver=resolver,
                        include_dirty=include_dirty, include_branch=include_branch)
    add_task_symbols(focus, resolver, WORKTREE)  # before the first edit: the symbols the prompt's words point at
    text_ids: list[str] = []
    how = lexical.mode(store) if prompt.strip() and use_index else None
    cache_path = store.cache_dir / "imports.json" if store.dir.is_dir() else None
    own = None
    if source is None and loaded is None:
        own = _mirror_source(store, budget)
        source = own
    try:
        if how is not None:
            text_ids = text_ranking(store, prompt, own.con if own is not None else None)
        if own is not None and not (focus.empty and not text_ids):
            own.recent = 0  # only an empty focus without text hits ranks by recency alone (``rank.rank``)
        if source is not None:
            if include_imports:
                add_import_neighbours(repo, focus, source.anchored_paths(), cache_path=cache_path)
            loaded = source.candidates(focus, text_ids)
            total = source.total
        else:
            loaded = loaded if loaded is not None else store.load_all()
            if include_imports:
                anchored = {a.path for m in loaded.memories.values() for a in m.anchors if a.path and a.local}
                add_import_neighbours(repo, focus, anchored, cache_path=cache_path)
            total = len(loaded.memories)
        # read or edited through a symbolic link, or anchored to one: the link and the file it leads to are one
        focus.add_links(repo.root, {a.path for m in loaded.memories.values() for a in m.anchors
                                    if a.path and a.local})
        # a name fifty symbols share says little (its IDF over the candidates' anchors)
        weigh_names(focus, (a for m in loaded.memories.values() for a in m.anchors))
        ranked = rank(list(loaded.memories.values()), focus, text_ids, fading(store, loaded.memories))
        top, tail = ranked[:STATUS_CANDIDATES], ranked[STATUS_CANDIDATES:]
        # recorded statuses are of the catalog's rows: taken only for memories read from there (``loaded`` may
        # hold a newer text of a memory, with other anchors, than a catalog not yet refreshed)
        held = ({} if anchor_detail or source is None
                else _held_statuses(store, own.con if own is not None else None, [s.memory.id for s in top]))
    finally:
        if own is not None:
            own.con.close()
    shown = ShownStatuses(top, resolver, held, omit_stale=omit)
    if omit:  # a memory left out changes how many are ranked (``left_out``): every status of the top is needed
        top = list(shown)
        packed = pack(top + tail, budget, detail)
    else:
        packed = pack((s for part in (shown, tail) for s in part), budget, detail, total=len(ranked))
        top = shown.given + shown.rest()
    ranked = top + tail
    return ContextResult(packed, ranked, focus, budget, total,
                         search=how.name if how is not None else None,
                         search_note=how.note if how is not None else None)
