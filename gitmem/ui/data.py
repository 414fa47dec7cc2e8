"""What ``gitmem ui`` shows and does: each answer is an existing op's, shaped by ``gitmem.shapes``.

One owner per job, none of it here: the map is the catalog's rows and recorded statuses
(``catalog.db.map_rows``, brought up to date by ``catalog.sync.sync_hook_index``); search is
``search.lexical.found`` (what ``gitmem recall`` calls), the organisation's hits ``org.search.search`` (what
``gitmem recall --org`` calls); a memory is ``ops.show.show`` with each anchor's
code now (``anchors.Resolver.source``), the diff since it was anchored (``ops.review.anchor_diff``, what
``gitmem stale`` shows) and the commit that changed it; its history is ``ops.history.memory_log``
(``gitmem log``); keep is ``ops.reanchor.reanchor``, retire and supersede ``ops.lifecycle``, share
``ops.share.share``, edit is ``memories.write`` then a re-anchor (as ``gitmem stale``'s edit); sessions are
the hook core's per-session event log (``integrations.agents.core.log_given``) and the memories whose
``session`` field names them (``catalog.files.session_ids``).

Not thread-safe (GitPython's and the catalog's handles): the server calls one function at a time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import extras, provenance, shapes
from ..catalog import db as catalog_db
from ..catalog import files as catalog_files
from ..errors import GitmemError
from ..git import WORKTREE
from ..model import KIND_COMMIT, MEMORY_TYPES, AnchorStatus, Review, Status
from ..shapes import JSONObject
from ..store import Store

#: Lines of anchored code shown per anchor (a file anchor on a long file shows its beginning).
MAX_CODE_LINES = 300
#: Characters of anchored code highlighted per anchor (then "…"): 300 lines of code are ~12,000; a minified
#: JSON file or a lock file can hold megabytes on one line.
MAX_CODE_CHARS = 40_000
#: Pygments' options per gitmem language name (its lexer names are gitmem's): a PHP symbol's lines have no
#: ``<?php`` before them.
LEXER_OPTIONS: dict[str, dict[str, bool]] = {"php": {"startinline": True}}

#: Sessions shown, most recent first (their state is pruned after a week: ``capture.worker``).
MAX_SESSIONS = 50

#: Search hits returned (the page paginates them).
SEARCH_LIMIT = 100

def refresh(store: Store, *, check_budget_s: float | None, lock_timeout_s: float = 0.5) -> bool:
    """Bring the catalog's rows and statuses up to date (``sync_hook_index``, quick: only what changed).

    Returns False when another process holds the catalog's lock (a git hook syncing): try again later.

    Raises:
        OSError / sqlite3.Error: the catalog cannot be written.
    """
    from filelock import Timeout

    from ..catalog.sync import sync_hook_index

    try:
        sync_hook_index(store, full=False, check_budget_s=check_budget_s, lock_timeout_s=lock_timeout_s)
    except Timeout:
        return False
    return True


def _connect(store: Store) -> Any:
    con = catalog_db.connect(store.repo.root, create=True)
    if con is None:
        raise GitmemError(f"cannot open the catalog {catalog_db.db_path(store.repo.root)}",
                          "run `gitmem doctor`; the catalog is rebuilt from the memory files when deleted")
    return con


def version(store: Store) -> str:
    """A string that changes whenever a memory row, the checked working tree or a recorded status does (the
    catalog's change mark, its ``tree_state`` and the count per status): the page polls it. No git, no
    refresh: ``Refresher`` keeps the catalog current."""
    con = _connect(store)
    try:
        counts = catalog_db.status_counts(con)
        parts = [catalog_files.mark(con), catalog_db.get_meta(con, "tree_state") or "",
                 ",".join(f"{k}={v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))]
    finally:
        con.close()
    import hashlib

    return hashlib.sha1("\n".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def warm(store: Store) -> None:
    """One search, so that the next is quick: the catalog's search vectors synced, the embedding model loaded
    (cached per process by ``search.embed``); nothing to load without the ``all`` extra (``search.lexical``)."""
    from ..search.lexical import found

    found(store, "gitmem", 1)


def memory_map(store: Store) -> JSONObject:
    """``shapes.map_json``: every (not retired) memory with the files it is anchored to and its status, as the
    catalog has them (``refresh`` keeps it current; a status not checked yet is ``unchecked``).

    Raises:
        GitmemError: the catalog cannot be opened.
    """
    con = catalog_files.open_current(store)  # rows follow the memory files (quick: only what changed)
    if con is None:
        con = _connect(store)
    try:
        seen = version(store)  # before the rows: a change while they are read shows as a newer version
        rows = catalog_db.map_rows(con)
    finally:
        con.close()
    mems = [shapes.map_memory_json(r) for r in rows]
    return shapes.map_json(seen, mems, sum(1 for m in mems if m["status"] == "unchecked"))


def current_version(store: Store) -> str:
    """``version`` once the catalog's rows follow the memory files (a quick refresh: only what changed)."""
    con = catalog_files.open_current(store)
    if con is not None:
        con.close()
    return version(store)


def search(store: Store, query: str, limit: int = SEARCH_LIMIT) -> list[JSONObject]:
    """``gitmem recall``'s hybrid search (BM25 + vectors, reciprocal rank fusion; BM25 over the catalog without
    the ``all`` extra: ``search.lexical.found``): ``map_memory_json`` of each hit plus ``{"score", "search"}``
    (``"hybrid"`` / ``"bm25"``), best first (statuses as recorded in the catalog)."""
    from ..search.lexical import found

    hits, how = found(store, query, limit)
    con = _connect(store)
    try:
        rows = {r["id"]: r for r in catalog_db.rows(con, [h.memory.id for h in hits])}
    finally:
        con.close()
    out = []
    for h in hits:
        m = h.memory
        row = {"id": m.id, "type": m.type, "title": m.title, "scope": m.scope, "updated": m.updated or m.created,
               "created": m.created, "author": m.author, "session": m.session,
               "status": (rows.get(m.id) or {}).get("status"), "reason": (rows.get(m.id) or {}).get("reason"),
               "paths": list(dict.fromkeys(a.path for a in m.anchors if a.path and a.kind != KIND_COMMIT
                                                 and a.local))}
        out.append(shapes.map_memory_json(row) | {"score": round(h.score, 6), "search": how.name})
    return out


#: Org hits shown beside a search (the page shows them in their own section, after this repository's).
ORG_SEARCH_LIMIT = 20


def org_search(store: Store, query: str, limit: int = ORG_SEARCH_LIMIT) -> JSONObject:
    """``gitmem recall --org``'s search (``org.search.search``) for the search box: ``shapes.org_search_json`` of
    the organisation index's hits, this repository's own memories left out (``org.repos.this_name``);
    ``configured`` false (no hits) when no ``[org] uri`` is set.

    Raises:
        GitmemError: the org index cannot be read (the page shows the error in the section).
    """
    from .. import config
    from ..org.repos import this_name
    from ..org.search import search as org_search_hits
    from ..org.settings import of_config

    settings = of_config(store.config, config.load_user())[0]
    if not settings.configured or not query.strip():
        return shapes.org_search_json(query, [], configured=settings.configured, exclude=[], warnings=[])
    own = this_name(settings, store.repo.root)
    with extras.needed("the organisation index's search"):
        hits = org_search_hits(settings, query, limit=limit, exclude=[own])
    return shapes.org_search_json(query, [shapes.org_hit_json(h) for h in hits], configured=True, exclude=[own],
                                  warnings=[])


# -- one memory ---------------------------------------------------------------------------------


def _highlight(code: str, path: str, first_line: int) -> str:
    """``code`` as highlighted HTML (Pygments, lines numbered from ``first_line``). The lexer is the one of the
    language gitmem reads the file as (``code.languages.language_for_path``: ``Dockerfile.dev``, ``.tfvars``,
    ``.jsonc``, a ``.sql`` file as SQL, not Transact-SQL), else Pygments' for the file name, else plain text."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer
    from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    from ..code.languages import language_for_path

    lexer: Lexer = TextLexer(stripnl=False)
    language = language_for_path(path)
    try:
        lexer = get_lexer_by_name(language, stripnl=False, **LEXER_OPTIONS.get(language, {})) if language else \
            get_lexer_for_filename(path, code, stripnl=False)
    except ClassNotFound:
        try:
            lexer = get_lexer_for_filename(path, code, stripnl=False)
        except ClassNotFound:
            pass
    if len(code) > MAX_CODE_CHARS:  # a minified JSON or generated file: one line can be megabytes
        code = code[:MAX_CODE_CHARS] + "…\n"
    return str(highlight(code, lexer, HtmlFormatter(cssclass="hl", linenos="inline", linenostart=first_line)))


def _diff_html(diff: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer

    return str(highlight(diff, DiffLexer(stripnl=False), HtmlFormatter(cssclass="hl")))


def highlight_css() -> str:
    """The stylesheet of the highlighted code (Pygments' default style under ``.hl``)."""
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(cssclass="hl").get_style_defs(".hl"))  # type: ignore[no-untyped-call]


@dataclass
class _Code:
    html: str
    lines: tuple[int, int] | None
    more: int


def _code_now(store: Store, resolver: Any, a: AnchorStatus) -> _Code:
    """The anchored code in the working tree: the symbol's lines, or a file's first ``MAX_CODE_LINES`` (none for
    a cross-repository anchor: its code is another repository's)."""
    path = a.path_now or a.anchor.path
    if a.status == Status.DELETED or a.anchor.kind == KIND_COMMIT or not path or not a.anchor.local:
        return _Code("", None, 0)
    data = resolver.source(WORKTREE, path)
    if data is None:
        return _Code("", None, 0)
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    start, end = a.new_span or (1, len(lines))
    if not a.anchor.symbol and not a.new_span:
        start, end = 1, len(lines)
    shown_end = min(end, start + MAX_CODE_LINES - 1)
    code = "".join(lines[start - 1:shown_end])
    if not code:
        return _Code("", None, 0)
    return _Code(_highlight(code, path, start), (start, shown_end), max(0, end - shown_end))


def _changed_by(store: Store, sha: str | None) -> JSONObject | None:
    if not sha:
        return None
    got = store.repo.commit_summary(sha)
    if got is None:
        return None
    full, t, author, subject = got
    return {"commit": full, "time": t, "author": author, "subject": subject}


def memory(store: Store, mem_id: str) -> JSONObject:
    """``shapes.ui_memory_json`` of memory ``mem_id``: ``gitmem show``'s detail, each anchor's code as it is
    now (highlighted), and for a not-fresh anchor the diff since it was anchored and the commit that changed it.

    Raises:
        MemoryNotFound: no such memory.
        GitmemError: its file is invalid.
    """
    from ..anchors import Resolver
    from ..ops.review import anchor_diff
    from ..ops.show import show

    shown = show(store, mem_id)
    resolver = Resolver(store.repo)
    anchors = []
    for a in shown.status.anchors:
        code = _code_now(store, resolver, a)
        diff = anchor_diff(resolver, a) if a.status != Status.FRESH else ""
        anchors.append(shapes.ui_anchor_json(a, code.html, code.lines, code.more, diff,
                                             _diff_html(diff) if diff else "",
                                             _changed_by(store, a.commit) if a.anchor.local else None))
    return shapes.ui_memory_json(shown.status, shown.path, anchors)


def memory_log(store: Store, mem_id: str) -> list[JSONObject]:
    """``gitmem log``: ``shapes.log_entry_json`` per entry, newest first.

    Raises:
        MemoryNotFound: no such memory.
    """
    from ..ops.history import memory_log as log

    return [shapes.log_entry_json(e) for e in log(store, mem_id)]


# -- the review's actions -----------------------------------------------------------------------


def _text(body: JSONObject, key: str, *, required: bool = False, limit: int = 100_000) -> str:
    value = body.get(key, "")
    if not isinstance(value, str):
        raise GitmemError(f"{key} must be a string", "send a JSON object with string fields")
    value = value.strip()
    if required and not value:
        raise GitmemError(f"{key} is empty", f"write the {key}")
    return value[:limit]


def act(store: Store, mem_id: str, action: str, body: JSONObject) -> JSONObject:
    """Carry out one review action on memory ``mem_id``, the same operation as the CLI's, written to its file:

    * ``keep``: ``gitmem reanchor --drop-deleted``, and the text marked reviewed by the person at the page
      (``ops.review.mark_reviewed``) → ``shapes.reanchored_json``;
    * ``edit`` (``body``: ``title``, ``text``, optional ``type``): the memory's title and text replaced
      (secrets redacted, the size limit checked) and marked reviewed by the person who typed them (the
      source is kept: a model's memory a person edited reads as reviewed), written by ``memories.write``,
      then re-anchored as
      ``gitmem stale``'s edit does → ``shapes.reanchored_json``;
    * ``retire`` (``reason``): ``gitmem retire`` → ``shapes.retired_json``;
    * ``supersede`` (``text``): ``gitmem supersede`` → ``shapes.superseded_json``;
    * ``share``: ``gitmem share`` → ``shapes.shared_json``.

    Raises:
        MemoryNotFound: no such memory.
        GitmemError: an unknown action, a missing field, or the op's own error (retired already, …).
    """
    if action == "keep":
        from ..ops.reanchor import reanchor
        from ..ops.review import mark_reviewed

        res = reanchor(store, mem_id, drop_deleted=True)
        res.memory = mark_reviewed(store, [res.memory.id])[0]  # a person pressed keep, having read it
        return shapes.reanchored_json(res)
    if action == "edit":
        return shapes.reanchored_json(_edit(store, mem_id, body))
    if action == "retire":
        from ..ops.lifecycle import retire

        return shapes.retired_json(retire(store, mem_id, _text(body, "reason", limit=2_000)))
    if action == "supersede":
        from ..memories import RememberRequest
        from ..ops.lifecycle import supersede

        text = _text(body, "text", required=True)
        return shapes.superseded_json(supersede(store, mem_id, RememberRequest(text=text, type="", source="user")))
    if action == "share":
        from ..ops.share import share

        m = share(store, mem_id)
        return shapes.shared_json(m, store.display(store.path_for(m)))
    raise GitmemError(f"unknown action {action!r}", "one of keep, edit, retire, supersede, share")


def _edit(store: Store, mem_id: str, body: JSONObject) -> Any:
    from ..capture.redact import redact_text
    from ..infra import utc_now
    from ..memories import check_size, max_chars, write
    from ..ops.reanchor import reanchor

    m = store.get(mem_id)
    if m.retired:
        raise GitmemError(f"{m.id} was retired on {m.retired}", "edit the memory that superseded it")
    title = redact_text(_text(body, "title", required=True, limit=500))
    text = redact_text(_text(body, "text"))
    mtype = _text(body, "type") or m.type
    if mtype not in MEMORY_TYPES:
        raise GitmemError(f"unknown type {mtype!r}", "one of " + ", ".join(MEMORY_TYPES))
    m.title, m.body, m.type = title, text, mtype
    m.updated = utc_now()
    m.reviewed = Review(by=store.repo.user_name(), at=m.updated, hash=provenance.memory_hash(m))  # a person wrote it
    check_size(m, max_chars(store))
    write(store, [m])
    return reanchor(store, m.id, drop_deleted=True)


# -- sessions -----------------------------------------------------------------------------------


def _read_lines(path: Path) -> list[JSONObject]:
    out = []
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash mid-append
        if isinstance(obj, dict):
            out.append(obj)
    return out


def sessions(store: Store, limit: int = MAX_SESSIONS) -> list[JSONObject]:
    """``shapes.session_json`` of the ``limit`` most recent agent sessions (newest first): what gitmem gave
    each and at which event (session start, prompt, before which file), and the memories it produced."""
    from ..infra import UTC_FORMAT
    from ..integrations.agents.core import EVENTS_SUFFIX, given_ids

    folder = store.layout.sessions_dir
    keys: dict[str, float] = {}
    try:
        with os.scandir(folder) as it:
            for e in it:
                for suffix in (EVENTS_SUFFIX, ".given"):
                    if e.name.endswith(suffix) and e.is_file():
                        key = e.name[:-len(suffix)]
                        keys[key] = max(keys.get(key, 0.0), e.stat().st_mtime)
    except OSError:
        return []
    recent = sorted(keys, key=lambda k: -keys[k])[:limit]
    con = _connect(store)
    try:
        logs = {k: _read_lines(folder / f"{k}{EVENTS_SUFFIX}") for k in recent}
        held = {k: sorted(given_ids(store.layout, k)) for k in recent}
        produced = {k: sorted(catalog_files.session_ids(con, k)) for k in recent}
        ids = {i for k in recent for ev in logs[k] for i in [*_ids(ev, "ids"), *_ids(ev, "listed")]}
        ids |= {i for k in recent for i in [*held[k], *produced[k]]}
        rows = {r["id"]: r for r in catalog_db.rows(con, sorted(ids))}
    finally:
        con.close()

    def given(mid: str) -> JSONObject:
        r = rows.get(mid)
        return shapes.given_json(mid, r["title"] if r else None, (r.get("status") or "unchecked") if r else None)

    import time

    out = []
    for k in recent:
        events = [shapes.session_event_json(ev, [given(i) for i in _ids(ev, "ids")],
                                            [given(i) for i in _ids(ev, "listed")]) for ev in logs[k]]
        agent = next((e["agent"] for e in reversed(events) if e["agent"]), "")
        out.append(shapes.session_json(k, time.strftime(UTC_FORMAT, time.gmtime(keys[k])), agent, events,
                                       [given(i) for i in held[k]], [given(i) for i in produced[k]]))
    return out


def _ids(event: JSONObject, key: str) -> list[str]:
    v = event.get(key)
    return [i for i in v if isinstance(i, str)] if isinstance(v, list) else []

