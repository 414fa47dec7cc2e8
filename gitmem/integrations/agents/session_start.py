"""The opening context of an agent session: ``gitmem context`` for the current focus (``core.on_session_start``).

Owns the SessionStart text (the newest memories when none is near the focus) and bringing
the hook index up to date for the hooks that follow.

Separate from ``core`` because it imports the library (YAML, git, tree-sitter), which the
per-tool-call hooks must not pay for; ``core`` imports it only when a session starts.
Must not import: lancedb (the focus — dirty files, changed symbols, the branch's files —
needs no text search), an LLM client.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from ... import config, layout
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
    repo = Repo(root)
    repo.fetch_seconds = 0.0  # a session's start never waits on a remote: what a partial clone lacks is said
    store = Store(repo)
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


# How long the session-start hook waits for the organisation's memories (``org_for_session``, in a thread started
# with the hook, beside the repository's own context) is ``[org] session_timeout`` (``config``: 5 s by default, at
# most 7 s within the session start's own 8 s, ``core.TIME_LIMITS``): through the warm process when one is up (an
# open connection: tens of milliseconds), else in this process (LanceDB, the embedding model and the store to
# reach: +1.5 s on a folder, +1.8 s on Ceph RGW (p90 2.7 s) on a shared 2-core machine, 3-4 s under heavier load:
# bench/README.md, "Organisation memories in the hooks"). Past it the session starts without them (one line in
# ``<logs>/org-hooks.log``), and the warm process this session start launches serves the next sessions and the
# prompts.
#: Seconds of that the warm process may take before the search runs here instead.
ORG_WARM_TIMEOUT_S = 1.0


def org_for_session(root: Path, lay: layout.Layout, limit: int) -> dict[str, object] | None:
    """The organisation's memories for a session starting in ``root`` (``[org] inject = true`` only): the org
    index's hits for this repository's org name (``org.repos.this_name``) that name it in their title, body or
    anchors (a memory of another repository about this one: ``REPO:PATH::SYMBOL`` anchors, "ledger's retry_after
    is seconds"), this repository's own left out; through the warm process when it answers within
    ``ORG_WARM_TIMEOUT_S``, else searched here. ``{"name", "hits": [shapes.org_hit_json], "session_budget"}``, or
    None when org injection is off or no org index is configured.

    Raises:
        GitmemError, OSError: the org index cannot be read (the hook logs it).
    """
    from ...org.repos import this_name
    from ...org.settings import of_config

    settings = of_config(config.read_cached(lay), config.read_user_cached(lay))[0]
    if not (settings.configured and settings.inject):
        return None
    name = this_name(settings, root)
    hits: list[dict[str, object]] | None = None
    if os.path.exists(lay.daemon_socket):
        from ...daemon import client

        reply = client.request(lay, "org_search", {"query": name, "limit": limit, "exclude": [name]},
                               timeout_s=ORG_WARM_TIMEOUT_S, start=False)
        got = reply.get("hits") if isinstance(reply, dict) else None
        hits = got if isinstance(got, list) and all(isinstance(h, dict) for h in got) else None
    if hits is None:
        from ... import extras, shapes
        from ...org.search import search

        with extras.needed("[org] inject"):  # a lean install: a GitmemError, logged by the hook
            hits = [shapes.org_hit_json(h) for h in search(settings, name, limit=limit, exclude=[name])]
    about = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    named = [h for h in hits if any(about.search(str(x)) for x in
                                    (h.get("title"), h.get("body"), *(h.get("anchors") or ())))]  # type: ignore[misc]
    return {"name": name, "hits": named, "session_budget": settings.session_budget}


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
        rows = personal.session_order(personal.unconflicted(
            proot, catalog_db.rows(con, catalog_db.recent_ids(con, personal.SESSION_CANDIDATES))))
    finally:
        con.close()
    if not rows:
        return None
    return personal.pack(rows, settings.session_budget, header=personal.SESSION_HEADER,
                         detail=personal.SESSION_DETAIL), rows
