"""The opening context of an agent session: ``gitmem context`` for the current focus (``core.on_session_start``).

Owns the SessionStart text (the newest memories when none is near the focus) and bringing
the hook index up to date for the hooks that follow.

Separate from ``core`` because it imports the library (YAML, git, tree-sitter), which the
per-tool-call hooks must not pay for; ``core`` imports it only when a session starts.
Must not import: lancedb (the focus — dirty files, changed symbols, the branch's files —
needs no text search), an LLM client.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...catalog.sync import known_statuses, needs_sync, open_source, record_statuses, spawn_sync, sync_hook_index
from ...git import Repo
from ...ops.context import build_context
from ...rank.render import HEADER, Packed
from ...store import Store

#: Seconds SessionStart spends re-checking statuses for the hook index; the rest runs detached.
STATUS_CHECK_BUDGET_S = 0.25
#: Heads the session-start text when no memory is near the focus and the newest are shown instead.
NEWEST_HEADER = "# gitmem: no memory is about the code in focus yet; the newest of {n}\n"


def session_start_context(root: Path, *, cwd: str | None, budget_tokens: int,
                          files: list[str] | tuple[str, ...] = ()) -> tuple[str, list[str], str | None]:
    """The SessionStart text, the ids it shows in full, and HEAD (None before the first commit).

    ``files``: repo-relative files in focus besides the dirty and branch ones (after a compaction, those
    the session worked on: their memories are given again).

    Also brings the hook index up to date for the hooks that follow (statuses it
    has no time to check are checked by a detached process).

    Raises:
        GitmemError, OSError: the repository or its memories cannot be read (the hook logs it).
    """
    store = Store(Repo(root))
    store.enable_symbol_cache()
    started = time.monotonic()
    source = open_source(store, budget_tokens)
    if source is not None:
        try:
            res = build_context(store, files=files, budget=budget_tokens, cwd=cwd, use_index=False, source=source)
        finally:
            source.con.close()
        statuses = {s.memory.id: s.status_detail for s in res.ranked if s.status_detail is not None}
        record_statuses(store, statuses)
        dirty = [p for p, (_, why) in res.focus.files.items() if why == "dirty"]
        if needs_sync(store, dirty):
            spawn_sync(root)  # memories on files changed since the last check: re-checked in the background
        total = source.total
    else:
        loaded = store.load_all()
        res = build_context(store, files=files, budget=budget_tokens, cwd=cwd, use_index=False, loaded=loaded)
        statuses = {s.memory.id: s.status_detail for s in res.ranked if s.status_detail is not None}
        left = max(0.0, STATUS_CHECK_BUDGET_S - (time.monotonic() - started))
        try:
            report = sync_hook_index(store, loaded, statuses=statuses, check_budget_s=left, lock_timeout_s=0.5)
            unchecked = report.unchecked
        except Exception:  # noqa: BLE001 - busy (another session syncs) or unwritable: the context still goes out
            unchecked = 1
        if unchecked:
            spawn_sync(root)
        total = len(loaded.memories)
    text = res.packed.text
    if not text and total:
        # nothing is near the focus: the newest memories (rules and traps first) rather than nothing
        again = open_source(store, budget_tokens)
        try:
            res = build_context(store, budget=budget_tokens, cwd=cwd, use_index=False, include_dirty=False,
                                include_branch=False, include_imports=False, source=again)
        finally:
            if again is not None:
                again.con.close()
        text = res.packed.text.replace(HEADER, NEWEST_HEADER.format(n=total), 1) if res.packed.text else ""
    return text, list(res.packed.detailed), store.repo.head()


def statuses_of(root: Path, ids: list[str]) -> dict[str, str | None]:
    """The status the hook index holds for each of ``ids`` (None: not checked yet; ``catalog.sync.known_statuses``:
    {} without a hook index or when it cannot be read, which is logged). Never raises."""
    try:
        return known_statuses(Store(Repo(root), require=False), ids)
    except Exception:  # noqa: BLE001 - a hint for the session's later hooks: the ids are then recorded bare
        return {}


def personal_context(proot: Path, project_cfg: dict[str, Any], user_cfg: dict[str, Any],
                     ) -> tuple[Packed, list[dict[str, Any]]] | None:
    """The developer's personal memories for a session's start in a repository whose config is ``project_cfg``
    (the user's: ``user_cfg``): the personal repository at ``proot``'s catalog brought up to date first when it is
    missing or its memory folders changed (``catalog.db.is_current``; rebuilt as a project's is: ``sync_hook_index``,
    statuses within ``STATUS_CHECK_BUDGET_S``; a current one costs no git process), its newest
    memories in ``personal.session_order``, packed in ``[personal] session_budget`` (``personal.pack``); with the
    rows offered. None when ``[personal] enabled = false`` or there is nothing to give.

    Raises:
        GitmemError, OSError, sqlite3.Error: the personal repository or its catalog cannot be read.
    """
    from ... import personal
    from ...catalog import db as catalog_db
    from ...org.settings import of_config

    _, settings = of_config(project_cfg, user_cfg)
    if not settings.enabled:
        return None
    con = catalog_db.connect(proot)
    if con is None or not catalog_db.is_current(con, proot):  # missing, or its files changed: a pull, a copy
        if con is not None:
            con.close()
        try:
            sync_hook_index(Store(Repo(proot), require=False), check_budget_s=STATUS_CHECK_BUDGET_S,
                            lock_timeout_s=0.5)
        except Exception:  # noqa: BLE001 - busy (another session syncs it) or unwritable: what it holds is used
            pass
        con = catalog_db.connect(proot)
    if con is None:
        return None
    try:
        rows = personal.session_order(catalog_db.rows(con, catalog_db.recent_ids(con, personal.SESSION_CANDIDATES)))
    finally:
        con.close()
    if not rows:
        return None
    return personal.pack(rows, settings.session_budget, header=personal.SESSION_HEADER,
                         detail=personal.SESSION_DETAIL), rows
