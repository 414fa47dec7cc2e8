"""Every JSON shape the CLI (``--json``, ``export``, stderr) and the MCP server print, one function per object.

The contract. Shapes are a stable interface, versioned by ``SCHEMA_VERSION``:

* Every document printed carries ``"schema_version": SCHEMA_VERSION``: the object printed at the
  top level of a ``--json`` output; each element of a top-level JSON array (array outputs stay
  arrays); each line of ``gitmem export``; each warning and error object on stderr; the structured
  content of every MCP tool result, errors included. Nested objects do not repeat it.
* Additive changes (a new field, a new shape, a new value where a field was documented as open)
  keep the version. Anything else (a field removed, renamed, or holding another type or meaning; an
  array turned into an object) bumps it.
* Single things print as objects, lists of things as arrays. Keys keep their insertion order. Strings
  are valid UTF-8 (lone surrogates are replaced before anything is printed).

The shapes (``→`` names the commands and MCP tools that print them):

* ``anchor_json``: an anchor (nested in ``memory_json``).
* ``memory_json``: every field of a memory → ``remember``, MCP ``remember``.
* ``listed_memory_json``: ``memory_json`` and its status → ``list``.
* ``anchor_status_json``: an anchor's status at a revision (nested).
* ``memory_status_json``: a memory's status with its anchors' → ``stale``, ``scan`` (nested), MCP ``stale``.
* ``memory_detail_json``: a memory in full with its statuses and file → ``show``, MCP ``get``.
* ``recall_hit_json``: a search hit with its fused score and ranks → ``recall``.
* ``search_hit_json`` / ``search_result_json``: the compact hits of MCP ``search``.
* ``org_search_json`` (``org_hit_json`` nested): an org search → MCP ``org_search``, the warm process's
  ``org_search`` op (its hits), ``gitmem ui`` (``/api/org-search``).
* ``scored_json``: a ranked memory (nested in ``context_json``).
* ``focus_json``: the code in focus (nested in ``context_json``).
* ``context_json``: packed context → ``context``, MCP ``context``.
* ``stats_json`` (``memory_use_json`` nested): ``stats``.
* ``init_json`` / ``hooks_report_json``: what ``init`` and ``hooks install`` did.
* ``hooks_removed_json``: ``hooks uninstall``. ``hook_state_json``: each hook of ``hooks status``.
* ``forgotten_json``, ``retired_json``, ``superseded_json``, ``reanchored_json``, ``shared_json``:
  ``forget``, ``retire``, ``supersede``, ``reanchor``, ``share``.
* ``check_json`` (``problem_json`` nested): ``check``.
* ``symbols_json``: ``symbols PATH`` (a file's symbols as gitmem names them, with their memory counts).
* ``log_entry_json``: each entry of ``log``.
* ``export_line_json``: each line of ``export`` (also carries ``"format": EXPORT_FORMAT``).
* ``import_json``, ``claude_mem_import_json``: ``import FILE``, ``import claude-mem``.
* ``scan_json``: ``scan``. ``sync_json``: ``sync``.
* ``doctor_json`` (``doctor_check_json``, ``install_info_json`` nested): ``doctor``.
* ``install_json``, ``uninstall_json``: ``install AGENT``, ``uninstall AGENT`` (every agent alike).
* ``install_all_json``: ``install`` and ``uninstall`` with no agent (each agent's ``install_json`` or
  ``uninstall_json`` with the reason it was chosen).
* ``consolidation_json``: each session of ``consolidate``.
* ``daemon_status_json``, ``daemon_status_all_json``, ``daemon_root_json``, ``daemon_stop_json``: ``daemon status``,
  ``daemon status --all`` (one repository it serves: ``daemon_root_json``), ``daemon stop``.
* ``tidy_json`` (``tidy_memory_json`` nested): ``tidy``.
* ``mcp_get_json`` (``not_found_json`` nested), ``mcp_stale_json`` (``invalid_file_json`` nested),
  ``mcp_remembered_json``: MCP ``get``, ``stale``, ``remember``.
* ``map_memory_json`` (nested), ``map_json``: the map of ``gitmem ui`` (``/api/map``).
* ``ui_anchor_json`` (nested), ``ui_memory_json``: a memory in ``gitmem ui`` (``/api/memory/ID``):
  ``memory_detail_json`` with each anchor's code now, diff and the commit that changed it.
* ``session_event_json`` (``given_json`` nested), ``session_json``: an agent session in ``gitmem ui``
  (``/api/sessions``): what gitmem gave it and when, and the memories it produced.
* ``personal_memory_json``, ``personal_listed_json``, ``personal_recall_hit_json``: ``remember --personal``,
  ``list --personal``, ``recall --personal`` (their usual shapes plus ``"label": "personal"``; ``show --personal``
  likewise adds it to ``memory_detail_json``).
* ``personal_init_json``, ``personal_push_json``, ``personal_pull_json``, ``personal_status_json``,
  ``personal_path_json``: ``personal init``, ``push``, ``pull``, ``status``, ``path``.
* ``org_hit_json``: a memory of the organisation index found by ``recall --org`` (also MCP ``org_search``, the
  warm process's ``org_search`` op, ``gitmem ui``).
* ``org_repo_report_json`` (nested), ``org_index_json``: ``org index``.
* ``org_repo_status_json`` (nested), ``org_status_json``: ``org status``.
* ``org_remove_json``: ``org remove``.
* ``foreign_check_json`` (nested), ``org_check_json``: ``org check`` (cross-repository anchors).
* ``warning_json``: a warning on stderr. ``note_json``: information on stderr (``remember``'s ``also anchored …``).
  ``error_json``: an error on stderr or an MCP tool error
  (``{"error", "hint"}``, plus ``candidates`` for an anchor error).

Imports: the standard library and gitmem's stdlib-only modules at import time (the CLI imports this
module for ``gitmem --help``); everything else only for type checking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import provenance
from .model import Anchor, AnchorStatus, Memory, MemoryStatus, RecallHit, Status
from .rank import render

if TYPE_CHECKING:
    from pathlib import Path

    from .capture.consolidate import Outcome
    from .dist import Install
    from .integrations.agents.installers import AgentPlan, Detection
    from .integrations.agents.installing import InstallResult
    from .integrations.git_hooks import HookState, InstallReport
    from .ops.check import Checked, Problem
    from .ops.context import ContextResult
    from .ops.daemon import DaemonState
    from .ops.doctor import Check, Report
    from .ops.history import LogEntry
    from .ops.import_claude_mem import ClaudeMemImport
    from .ops.lifecycle import Superseded
    from .ops.personal import Initialised, PersonalStatus, Pulled, Pushed
    from .ops.reanchor import Reanchored
    from .ops.scan import ScanResult
    from .ops.stats import MemoryUse, Stats
    from .ops.symbols import FileSymbols
    from .ops.tidy import TidyReport
    from .ops.transfer import ImportReport
    from .org.index import IndexReport, RepoReport, RepoState
    from .org.search import OrgHit
    from .org.xrepo import CheckReport, ForeignCheck
    from .rank.focus import Focus
    from .rank.score import Scored
    from .search.hybrid import SyncResult

#: The version of every shape below; see the module docstring for when it changes.
SCHEMA_VERSION = 1

#: The format tag of each ``gitmem export`` line (kept beside ``schema_version`` for older readers).
EXPORT_FORMAT = "gitmem/1"

JSONObject = dict[str, Any]


# -- documents ------------------------------------------------------------------------------------


def versioned(obj: JSONObject) -> JSONObject:
    """``obj`` as a top-level document: ``{"schema_version": SCHEMA_VERSION, **obj}`` (a new dict)."""
    return {"schema_version": SCHEMA_VERSION, **obj}


def document(obj: JSONObject | Sequence[JSONObject]) -> JSONObject | list[JSONObject]:
    """What is printed at the top level: an object versioned, or an array of versioned objects."""
    if isinstance(obj, dict):
        return versioned(obj)
    return [versioned(o) for o in obj]


def dumps(obj: Any) -> str:
    """JSON text with non-ASCII kept readable, surrogates made safe, keys in insertion order (indent 2)."""
    from .memfile import without_surrogates

    return without_surrogates(json.dumps(obj, ensure_ascii=False, indent=2))


def dumps_document(obj: JSONObject | Sequence[JSONObject]) -> str:
    """``dumps(document(obj))``: what a ``--json`` command prints on stdout."""
    return dumps(document(obj))


# -- memories and anchors -------------------------------------------------------------------------


def anchor_json(a: Anchor) -> JSONObject:
    """``{"anchor", "path", "symbol", "kind", "commit", "span", "fingerprint", "was", "repo"}`` (``was``: the anchor
    before its code moved or was renamed, or None; ``repo``: the organisation repository of a cross-repository
    anchor, whose ``path`` and ``commit`` are that repository's, or None for this repository)."""
    return {"anchor": a.key, "path": a.path, "symbol": a.symbol, "kind": a.kind, "commit": a.commit,
            "span": list(a.span) if a.span else None, "fingerprint": a.fingerprint, "was": a.was, "repo": a.repo}


def memory_json(m: Memory) -> JSONObject:
    """Every field of a memory; anchors as ``anchor_json``; ``origin`` (the agent or tool it came from, or None),
    ``reviewed`` (``{"by", "at", "hash", "holds"}``: the last review, ``holds`` false once the text changed
    since; or None), and its provenance (``provenance``): ``trust`` ``{"level", "label", "rule"}``."""
    trust = provenance.of(m)
    review = m.reviewed
    return {"id": m.id, "type": m.type, "title": m.title, "body": m.body, "facts": m.facts,
            "tags": m.tags, "anchors": [anchor_json(a) for a in m.anchors], "author": m.author,
            "source": m.source, "session": m.session, "model": m.model, "confidence": m.confidence,
            "created": m.created, "updated": m.updated, "supersedes": m.supersedes,
            "superseded_by": m.superseded_by, "retired": m.retired, "invariant": m.invariant, "scope": m.scope,
            "origin": m.origin,
            "reviewed": None if review is None else {
                "by": review.by, "at": review.at, "hash": review.hash,
                "holds": provenance.review_holds({"hash": review.hash}, provenance.memory_hash(m))},
            "trust": {"level": trust.level, "label": trust.label, "rule": trust.rule}}


def anchor_status_json(a: AnchorStatus) -> JSONObject:
    """An anchor's status: ``{"anchor", "status", "path_now", "symbol_now", "commit", "changes",
    "old_span", "new_span", "reason", "anchored_at", "repo"}`` (``repo``: the organisation repository of a
    cross-repository anchor, None for this repository's; its ``status`` may then be ``unchecked``: its repository
    could not be reached, ``reason`` says why); for a path that is or lies beyond a symbolic link, ``"target"``
    (the file it leads to, whose content it is judged by) and ``"links"`` (the links followed). ``status``
    ``unwritten`` (an additive value): at a revision older than the anchor (``stale --rev``, or a work tree on an
    older HEAD), its code was not yet written there (``commit``: the commit that wrote it)."""
    return {
        "anchor": a.anchor.key,
        "status": a.status.value,
        "path_now": a.path_now,
        "symbol_now": a.symbol_now,
        "commit": a.commit,
        "changes": [c.value for c in a.changes],
        "old_span": list(a.old_span) if a.old_span else None,
        "new_span": list(a.new_span) if a.new_span else None,
        "reason": a.reason,
        "anchored_at": a.anchor.commit,
        "repo": a.anchor.repo,
        **({"target": a.target, "links": list(a.links)} if a.target is not None else {}),
    }


def memory_status_json(ms: MemoryStatus) -> JSONObject:
    """``{"id", "title", "type", "status", "anchors": [anchor_status_json...]}`` (the ``stale`` shape)."""
    return {"id": ms.memory.id, "title": ms.memory.title, "type": ms.memory.type,
            "status": ms.status.value, "anchors": [anchor_status_json(a) for a in ms.anchors]}


def memory_detail_json(ms: MemoryStatus, path: str) -> JSONObject:
    """``memory_json`` + ``{"status", "anchor_statuses": [anchor_status_json], "path"}`` (``show``, MCP ``get``)."""
    return memory_json(ms.memory) | {"status": ms.status.value,
                                     "anchor_statuses": [anchor_status_json(a) for a in ms.anchors],
                                     "path": path}


def forgotten_json(m: Memory) -> JSONObject:
    """``{"id", "forgotten": true}``."""
    return {"id": m.id, "forgotten": True}


def retired_json(m: Memory) -> JSONObject:
    """``{"id", "retired"}`` (the retirement time)."""
    return {"id": m.id, "retired": m.retired}


def superseded_json(res: Superseded) -> JSONObject:
    """``{"id" (the new memory), "supersedes" (the old one), "anchors": [key]}``."""
    return {"id": res.new.id, "supersedes": res.old.id, "anchors": [a.key for a in res.new.anchors]}


def reanchored_json(r: Reanchored) -> JSONObject:
    """``{"id", "anchors": [key], "changes": [line], "dropped": [key]}``."""
    return {"id": r.memory.id, "anchors": [a.key for a in r.memory.anchors], "changes": r.changes,
            "dropped": r.dropped}


def shared_json(m: Memory, path: str) -> JSONObject:
    """``{"id", "scope", "path"}`` (the memory file, as displayed)."""
    return {"id": m.id, "scope": m.scope, "path": path}


def log_entry_json(e: LogEntry) -> JSONObject:
    """``{"kind", "commit", "time" (Unix seconds), "author", "subject", "what"}``."""
    return {"kind": e.kind, "commit": e.commit, "time": e.time, "author": e.author, "subject": e.subject,
            "what": e.what}


# -- search and context ---------------------------------------------------------------------------


def listed_memory_json(ms: MemoryStatus) -> JSONObject:
    """``memory_json`` + ``{"status"}`` (at the working tree) + ``{"anchor_statuses": [anchor_status_json]}``
    (each anchor's status and where its code is now, ``path_now`` / ``symbol_now``, as ``show`` gives them): an
    element of ``list``."""
    return memory_json(ms.memory) | {"status": ms.status.value,
                                     "anchor_statuses": [anchor_status_json(a) for a in ms.anchors]}


def recall_hit_json(h: RecallHit, status: Status, search: str | None = None) -> JSONObject:
    """``memory_json`` + ``{"status" (at the working tree), "score", "fts_rank", "vector_rank"}`` (ranks
    1-based, null when absent) + ``"search"`` when given: how it was found (``search.lexical``: ``"hybrid"``,
    BM25 + vectors fused, the score a fusion score; ``"bm25"``, full text only, the score -bm25)."""
    return memory_json(h.memory) | {"status": status.value, "score": round(h.score, 6),
                                    "fts_rank": h.fts_rank, "vector_rank": h.vector_rank} | (
        {"search": search} if search is not None else {})


# -- the personal scope (``ops.personal``) ------------------------------------------------------------

#: The label of everything from the personal repository (``render.PERSONAL``).
PERSONAL_LABEL = render.PERSONAL


def personal_memory_json(m: Memory) -> JSONObject:
    """``memory_json`` + ``{"label": "personal"}``: a memory of the personal repository (``remember --personal``)."""
    return memory_json(m) | {"label": PERSONAL_LABEL}


def personal_listed_json(ms: MemoryStatus) -> JSONObject:
    """``listed_memory_json`` + ``{"label": "personal"}`` (``list --personal``)."""
    return listed_memory_json(ms) | {"label": PERSONAL_LABEL}


def personal_recall_hit_json(h: RecallHit, ms: MemoryStatus, search: str | None = None) -> JSONObject:
    """``recall_hit_json`` + ``{"label": "personal"}`` (``recall --personal``)."""
    return recall_hit_json(h, ms.status, search) | {"label": PERSONAL_LABEL}


def personal_init_json(res: Initialised) -> JSONObject:
    """``{"path", "action" ("created" | "cloned" | "existing"), "remote" (or null), "memories", "notes"}``."""
    return {"path": str(res.path), "action": res.action, "remote": res.remote, "memories": res.memories,
            "notes": res.notes}


def personal_push_json(res: Pushed) -> JSONObject:
    """``{"path", "remote", "branch", "commits" (sent; null when not known: a first push), "notes"}``."""
    return {"path": str(res.path), "remote": res.remote, "branch": res.branch, "commits": res.commits,
            "notes": res.notes}


def personal_pull_json(res: Pulled) -> JSONObject:
    """``{"path", "remote", "before", "after" (HEAD commits, null before a first commit), "changed" (memory files
    the merge changed, repo-relative), "memories", "notes"}``."""
    return {"path": str(res.path), "remote": res.remote, "before": res.before, "after": res.after,
            "changed": res.changed, "memories": res.memories, "notes": res.notes}


def personal_status_json(st: PersonalStatus) -> JSONObject:
    """``{"path", "exists", "memories", "branch", "remote", "upstream", "ahead", "behind" (as of the last fetch;
    null without an upstream), "uncommitted" (paths), "enabled" (in the repository the command ran in; null
    outside one), "session_budget", "prompt_budget", "merging" (a pull's merge is under way), "conflicts" (the files
    it left in conflict, not counted in "memories")}``."""
    return {"path": str(st.path), "exists": st.exists, "memories": st.memories, "branch": st.branch,
            "remote": st.remote, "upstream": st.upstream, "ahead": st.ahead, "behind": st.behind,
            "uncommitted": st.uncommitted, "enabled": st.enabled, "session_budget": st.session_budget,
            "prompt_budget": st.prompt_budget, "merging": st.merging, "conflicts": st.conflicts}


def personal_path_json(path: Path, exists: bool) -> JSONObject:
    """``{"path", "exists"}`` (``personal path``)."""
    return {"path": str(path), "exists": exists}


def search_hit_json(h: RecallHit, status: str) -> JSONObject:
    """A compact hit (MCP ``search``): ``{"id", "type", "title", "anchors", "age", "status", "score"}``."""
    return {"id": h.memory.id, "type": h.memory.type, "title": h.memory.title,
            "anchors": [a.key for a in h.memory.anchors], "age": age(h.memory), "status": status,
            "score": round(h.score, 6)}


def search_result_json(query: str, hits: list[JSONObject], warnings: list[str]) -> JSONObject:
    """MCP ``search``: ``{"query", "hits": [search_hit_json], "warnings"}``."""
    return {"query": query, "hits": hits, "warnings": warnings}


def org_search_json(query: str, hits: list[JSONObject], *, configured: bool, exclude: list[str],
                    warnings: list[str]) -> JSONObject:
    """An org search: ``{"query", "configured" (false: no ``[org] uri``, no hits), "exclude" (repositories left
    out: this one's own memories), "hits": [org_hit_json], "warnings"}``."""
    return {"query": query, "configured": configured, "exclude": exclude, "hits": hits, "warnings": warnings}


def scored_json(s: Scored) -> JSONObject:
    """A ranked memory: id, title, type, score, proximity, why, text rank, status, age, anchors, fade (the decay
    factor of its recency score, 1 when none: ``usage.fade``)."""
    d = {"id": s.memory.id, "title": s.memory.title, "type": s.memory.type,
         "score": round(s.score, 6), "proximity": round(s.proximity, 4), "near": s.near,
         "text_rank": s.text_rank, "status": s.status.value, "age": age(s.memory),
         "anchors": [a.key for a in s.memory.anchors], "fade": round(s.fade, 4)}
    if s.status_detail is not None:
        d["anchor_statuses"] = [anchor_status_json(a) for a in s.status_detail.anchors]
    return d


def focus_json(f: Focus) -> JSONObject:
    """``{"files": {path: {"weight", "why"}}, "symbols": ["path::Name"], "names": [name]}``, sorted."""
    return {"files": {p: {"weight": w, "why": why} for p, (w, why) in sorted(f.files.items())},
            "symbols": [f"{p}::{n}" for (p, n) in sorted(f.symbols)],
            "names": sorted(f.names)}


def context_json(res: ContextResult) -> JSONObject:
    """``{"budget", "tokens", "text", "detailed", "indexed", "left_out", "focus": focus_json,
    "memories": [scored_json of the memories shown], "search"}``; ``search``: how the prompt's text was searched
    (``"hybrid"``: BM25 + vectors; ``"bm25"``: full text only, e.g. without the ``all`` extra), null when no
    text search ran (no prompt)."""
    shown = set(res.packed.detailed) | set(res.packed.indexed)
    return {"budget": res.budget, "tokens": res.packed.tokens, "text": res.packed.text,
            "detailed": res.packed.detailed, "indexed": res.packed.indexed,
            "left_out": res.packed.left_out, "focus": focus_json(res.focus),
            "memories": [scored_json(s) for s in res.ranked if s.memory.id in shown], "search": res.search}


def memory_use_json(u: MemoryUse) -> JSONObject:
    """One memory's use: ``{"id", "type", "title", "scope", "status", "given", "searched", "opened", "last_used",
    "written", "touched", "idle_days", "fade"}`` (stamps UTC ``YYYY-MM-DDTHH:MM:SSZ`` or null; ``touched``: the
    last commit that changed one of its anchored files; ``idle_days``: since the latest of written, last used
    and touched; ``fade``: its decay factor, 1 when decay is off or for a constraint)."""
    return {"id": u.id, "type": u.type, "title": u.title, "scope": u.scope, "status": u.status, "given": u.given,
            "searched": u.searched, "opened": u.opened, "last_used": u.last_used, "written": u.written,
            "touched": u.touched, "idle_days": None if u.idle_days is None else round(u.idle_days, 1),
            "fade": round(u.fade, 4)}


def stats_json(st: Stats) -> JSONObject:
    """``gitmem stats``: ``{"total", "decay": {"on", "half_life_days"}, "uses": {"given", "searched", "opened"},
    "never_used", "fading_total", "by_type": {type: {status: count}}, "most_used", "least_used", "fading"}``
    (the last three lists of ``memory_use_json``)."""
    return {"total": st.total, "decay": {"on": st.half_life_days is not None, "half_life_days": st.half_life_days},
            "uses": st.uses, "never_used": st.never_used, "fading_total": st.fading_total, "by_type": st.by_type,
            "most_used": [memory_use_json(u) for u in st.most_used],
            "least_used": [memory_use_json(u) for u in st.least_used],
            "fading": [memory_use_json(u) for u in st.fading]}


def age(m: Memory) -> str:
    """A memory's compact age (``5 min``, ``3 h``, ``2 d``; ``?`` when unknown), as ``rank.score.age``."""
    return render.age(m.updated or m.created, None)


# -- gitmem ui -------------------------------------------------------------------------------------


def map_memory_json(row: JSONObject) -> JSONObject:
    """A memory on the map, from its catalog row (``catalog.db.map_rows``): ``{"id", "type", "title", "scope",
    "author", "created", "updated", "session", "status" (fresh, stale, moved, deleted; "unchecked" when not
    checked yet), "reason", "paths" (the files its anchors name, in order, no repeats; [] for commit-only)}``."""
    return {"id": row["id"], "type": row.get("type"), "title": row.get("title"), "scope": row.get("scope"),
            "author": row.get("author") or "", "created": row.get("created"), "updated": row.get("updated"),
            "session": row.get("session"), "status": row.get("status") or "unchecked",
            "reason": row.get("reason") or "", "paths": list(row.get("paths") or [])}


def map_json(version: str, memories: list[JSONObject], unchecked: int) -> JSONObject:
    """The map: ``{"version" (changes whenever a memory or a status does), "memories": [map_memory_json],
    "unchecked" (memories whose status is still being checked)}``."""
    return {"version": version, "memories": memories, "unchecked": unchecked}


def ui_anchor_json(a: AnchorStatus, code_html: str, code_lines: tuple[int, int] | None, more_lines: int,
                   diff: str, diff_html: str, changed_by: JSONObject | None) -> JSONObject:
    """``anchor_status_json`` + ``{"code_html" (the anchored code as it is now, highlighted, "" when gone),
    "code_lines" ([first, last] shown, or null), "more_lines" (lines left out), "diff" (unified diff since
    anchored, "" when fresh), "diff_html" (highlighted), "changed_by" ({"commit", "time", "author", "subject"}
    or null)}``."""
    return anchor_status_json(a) | {"code_html": code_html, "code_lines": list(code_lines) if code_lines else None,
                                    "more_lines": more_lines, "diff": diff, "diff_html": diff_html,
                                    "changed_by": changed_by}


def ui_memory_json(ms: MemoryStatus, path: str, anchors: list[JSONObject]) -> JSONObject:
    """``memory_detail_json`` + ``{"anchors_now": [ui_anchor_json]}``."""
    return memory_detail_json(ms, path) | {"anchors_now": anchors}


def given_json(mid: str, title: str | None, status: str | None) -> JSONObject:
    """A memory a session was given: ``{"id", "title" (null: no longer a memory), "status"}``."""
    return {"id": mid, "title": title, "status": status}


def session_event_json(event: JSONObject, given: list[JSONObject], listed: list[JSONObject]) -> JSONObject:
    """One time a session was given memories: ``{"time", "event" (SessionStart, Prompt, BeforeFile,
    AfterCompact), "agent", "source", "prompt", "file", "kind", "given": [given_json] (in full),
    "listed": [given_json] (titles only)}``."""
    return {"time": event.get("time"), "event": event.get("event"), "agent": event.get("agent") or "",
            "source": event.get("source") or "", "prompt": event.get("prompt") or "", "file": event.get("file") or "",
            "kind": event.get("kind") or "", "given": given, "listed": listed}


def session_json(key: str, last: str, agent: str, events: list[JSONObject], given: list[JSONObject],
                 produced: list[JSONObject]) -> JSONObject:
    """An agent session: ``{"session" (its key), "last" (UTC time of its last record), "agent", "events":
    [session_event_json] (oldest first; [] for a session from before gitmem logged them), "given":
    [given_json] (everything it holds now), "produced": [given_json] (memories recorded from it)}``."""
    return {"session": key, "last": last, "agent": agent, "events": events, "given": given, "produced": produced}


# -- setup ----------------------------------------------------------------------------------------


def hooks_report_json(r: InstallReport) -> JSONObject:
    """``{"dir", "installed", "already", "chained", "skipped", "notes"}`` (hook names, note lines)."""
    return {"dir": str(r.hooks_dir), "installed": r.installed, "already": r.already, "chained": r.chained,
            "skipped": r.skipped, "notes": r.notes}


def init_json(root: Path, created: list[str], hooks: InstallReport | None, warnings: list[str]) -> JSONObject:
    """``{"root", "created": [path], "hooks": hooks_report_json or null, "warnings": [line]}``."""
    return {"root": str(root), "created": created, "hooks": None if hooks is None else hooks_report_json(hooks),
            "warnings": warnings}


def hooks_removed_json(removed: list[str]) -> JSONObject:
    """``{"removed": [hook name]}``."""
    return {"removed": removed}


def hook_state_json(h: HookState) -> JSONObject:
    """``{"name", "path", "installed", "current", "legacy", "will_run", "problem", "note"}``."""
    return {"name": h.name, "path": str(h.path), "installed": h.installed, "current": h.ours_current,
            "legacy": str(h.legacy) if h.legacy else None, "will_run": h.will_run, "problem": h.problem,
            "note": h.note}


def daemon_status_json(st: DaemonState) -> JSONObject:
    """``gitmem daemon status``: ``{"state" (running, starting, not answering, not running), "running", "enabled",
    "socket", "idle_minutes", "pid", "version", "started", "uptime_s", "requests", "dropped" (requests dropped
    unworked: their client did the work), "started_ops" ({op: requests whose work started}), "rss_bytes",
    "pss_bytes", "roots_loaded", "serving" (this repository's state is loaded), "root": daemon_root_json or null,
    "stale": [path], "problem": why no warm process can run here or null}`` (what is not known: null)."""
    info = st.info
    root = info.get("root")
    return {"state": st.state, "running": st.state == "running", "enabled": st.enabled, "socket": st.socket,
            "idle_minutes": st.idle_minutes, "pid": info.get("pid"), "version": info.get("version"),
            "started": info.get("started"), "uptime_s": info.get("uptime_s"), "requests": info.get("requests"),
            "dropped": info.get("dropped"), "started_ops": info.get("started_ops"),
            "rss_bytes": info.get("rss_bytes"), "pss_bytes": info.get("pss_bytes"),
            "roots_loaded": info.get("roots_loaded"), "serving": isinstance(root, dict),
            "root": daemon_root_json(root) if isinstance(root, dict) else None, "stale": list(st.stale),
            "problem": st.problem or None}


def daemon_root_json(r: dict[str, Any]) -> JSONObject:
    """One root the warm process serves: ``{"root", "loaded" (UTC), "requests", "idle_for_s" (seconds since its
    last request), "idle_timeout_s" (its state is dropped then), "index_open" (a search of it has run there: its
    search's state is loaded)}``."""
    return {k: r.get(k) for k in ("root", "loaded", "requests", "idle_for_s", "idle_timeout_s", "index_open")}


def daemon_status_all_json(st: DaemonState) -> JSONObject:
    """``gitmem daemon status --all``: ``{"state", "running", "socket", "pid", "version", "started", "uptime_s",
    "requests", "rss_bytes", "pss_bytes", "max_roots", "roots": [daemon_root_json], "legacy": [{"pid", "root",
    "rss_bytes"}] (per-worktree processes of gitmem before 0.2), "legacy_note" (why those could not be looked
    for, or ""), "stale": [path]}``."""
    info = st.info
    roots = info.get("roots")
    roots = roots if isinstance(roots, list) else []
    return {"state": st.state, "running": st.state == "running", "socket": st.socket, "pid": info.get("pid"),
            "version": info.get("version"), "started": info.get("started"), "uptime_s": info.get("uptime_s"),
            "requests": info.get("requests"), "rss_bytes": info.get("rss_bytes"),
            "pss_bytes": info.get("pss_bytes"), "max_roots": info.get("max_roots"),
            "roots": [daemon_root_json(r) for r in roots if isinstance(r, dict)],
            "legacy": [dict(p) for p in st.legacy], "legacy_note": st.legacy_note, "stale": list(st.stale)}


def daemon_stop_json(stopped: bool, message: str) -> JSONObject:
    """``{"stopped": bool (without --all: the warm process holds no state of this repository now; with --all: no
    warm process runs now), "message"}``."""
    return {"stopped": stopped, "message": message}


def doctor_check_json(c: Check) -> JSONObject:
    """``{"name", "level" (ok, warn, error), "message", "hint"}``."""
    return {"name": c.name, "level": c.level, "message": c.message, "hint": c.hint}


def install_info_json(inst: Install) -> JSONObject:
    """Which gitmem runs (``gitmem.dist.Install``): ``{"distribution": "gitmem-cli", "version" (the code's),
    "metadata_version" (the installed metadata's, null when not installed), "mode" (editable, wheel, source),
    "source" (editable: the clone's folder; wheel: the file or URL installed from, null from the package index;
    source: the folder holding the package), "environment" (uv tool, pipx, venv, system), "prefix", "python",
    "scripts", "package", "installer", "on_path" (the gitmem command on PATH, or null), "on_path_is_this"
    (null when none on PATH), "conflicts": ["NAME VERSION"], "problems": [line]}``."""
    from .dist import DIST_NAME, path_is_this

    return {"distribution": DIST_NAME, "version": inst.version, "metadata_version": inst.dist_version,
            "mode": inst.mode, "source": inst.source, "environment": inst.environment, "prefix": inst.prefix,
            "python": inst.python, "scripts": inst.scripts, "package": inst.package, "installer": inst.installer,
            "on_path": inst.on_path, "on_path_is_this": path_is_this(inst), "conflicts": list(inst.conflicts),
            "problems": list(inst.problems)}


def doctor_json(report: Report) -> JSONObject:
    """``{"ok", "checks": [doctor_check_json], "install": install_info_json}`` (``install`` null when not
    looked at)."""
    return {"ok": report.ok, "checks": [doctor_check_json(c) for c in report.checks],
            "install": install_info_json(report.install) if report.install is not None else None}


def install_json(res: InstallResult) -> JSONObject:
    """``{"agent", "changed": [file], "created": [file of changed that did not exist], "notes", "command", "mcp"
    (registered), "files": {role: path}}``, and each role of ``files`` at the top level too (the keys of
    earlier versions: ``settings``, ``hooks``, ``config``, ``mcp_file``)."""
    d: JSONObject = {"agent": res.agent, "changed": res.changed, "created": res.created, "notes": res.notes,
                     "command": res.command, "mcp": res.mcp, "files": dict(res.files)}
    for role, path in res.files.items():
        d.setdefault(role, path)
    return d


def uninstall_json(res: InstallResult) -> JSONObject:
    """``{"agent", "changed": [file], "notes", "files": {role: path}}``."""
    return {"agent": res.agent, "changed": res.changed, "notes": res.notes, "files": dict(res.files)}


def install_all_json(plans: Sequence[AgentPlan], *, install: bool, dry_run: bool,
                     skipped: Sequence[Detection] | None = None, root: Path | None = None) -> JSONObject:
    """``install`` / ``uninstall`` (with no agent, or a dry run of one): ``{"dry_run", "agents": [{"agent", "reason",
    "installed" (before), **install_json or uninstall_json (when something was done), "would_change": [file] and
    "files": [{"path", "action" (create, update, remove), "after" (the file's exact text afterwards; null: removed),
    "diff" (a unified diff ``git apply`` takes, paths relative to ``root``)}] (a dry run), "notes" (a dry run),
    "error" and "hint" (refused: nothing was written for any agent; or failed to write)}], "skipped": [{"agent",
    "reason"}] (agents not detected, and why; with no agent named)}``."""
    from .integrations.agents.installing import outcome

    agents = []
    for p in plans:
        d: JSONObject = {"agent": p.agent, "reason": p.reason, "installed": p.installed}
        if p.result is not None:
            d |= install_json(p.result) if install else uninstall_json(p.result)
        elif dry_run and p.plan is not None:
            shown = [o for o in outcome(p.plan) if o.action != "keep"]
            d["would_change"] = [str(o.path) for o in shown]
            d["files"] = [{"path": str(o.path), "action": o.action, "after": o.after, "diff": o.diff(root)}
                          for o in shown]
            d["notes"] = list(p.plan.result.notes)
        if p.error:
            d |= {"error": p.error, "hint": p.hint}
        agents.append(d)
    out: JSONObject = {"dry_run": dry_run, "agents": agents}
    if skipped is not None:
        out["skipped"] = [{"agent": s.agent, "reason": s.reason} for s in skipped]
    return out


# -- checks and maintenance -----------------------------------------------------------------------


def problem_json(p: Problem) -> JSONObject:
    """``{"kind", "subject", "message"}``; ``kind`` is open (``ops.check.Problem``: ``stale``, ``moved`` since
    issue 22 for a moved anchor, formerly ``stale``, ``invalid`` …)."""
    return {"kind": p.kind, "subject": p.subject, "message": p.message}


def check_json(res: Checked) -> JSONObject:
    """``{"base" (the merge base compared with), "base_ref" (as named), "tip" (its commit), "head", "ok",
    "problems": [problem_json], "warnings": [str] (not failures: e.g. front-matter keys of a newer gitmem)}``."""
    return {"base": res.base, "base_ref": res.base_ref, "tip": res.tip, "head": res.head,
            "ok": not res.problems, "problems": [problem_json(p) for p in res.problems],
            "warnings": list(res.warnings)}


def scan_json(res: ScanResult) -> JSONObject:
    """``{"commits", "evaluated", "not_fresh": [memory_status_json]}``."""
    return {"commits": res.commits, "evaluated": len(res.statuses),
            "not_fresh": [memory_status_json(s) for s in res.statuses if s.status != Status.FRESH]}


def sync_json(res: SyncResult | None, invalid: int, search: str | None = None, catalog: int | None = None
              ) -> JSONObject:
    """``{"added", "updated", "deleted", "rebuilt", "reason", "invalid" (memory files that failed)}`` of the
    search's vectors (``search.hybrid.update``), + ``"search"`` when given (``"hybrid"`` / ``"bm25"``, as
    ``recall_hit_json``), + ``"catalog"`` when given (the memories the catalog holds). ``res`` None: no vectors
    in this install (no ``all`` extra): ``"index": false``, the counts null, ``"catalog"``: what BM25 searches."""
    extra: JSONObject = {"search": search} if search is not None else {}
    if res is None:
        return {"index": False, "added": None, "updated": None, "deleted": None, "rebuilt": False,
                "reason": "no search index: gitmem's all extra is not installed", "invalid": invalid,
                "catalog": catalog, **extra}
    return {"added": res.added, "updated": res.updated, "deleted": res.deleted, "rebuilt": res.rebuilt,
            "reason": res.reason, "invalid": invalid, **({"catalog": catalog} if catalog is not None else {}),
            **extra}


def consolidation_json(o: Outcome) -> JSONObject:
    """``{"session", "events", "batches", "path" (rules, llm, llm-empty, skipped), "written", "removed", "notes"}``."""
    return {"session": o.session, "events": o.events, "batches": o.batches, "path": o.path,
            "written": o.written, "removed": o.removed, "notes": o.notes}


def tidy_memory_json(m: Memory) -> JSONObject:
    """A memory as ``tidy`` names it: ``{"id", "type", "title", "scope", "anchors": [key]}``."""
    return {"id": m.id, "type": m.type, "title": m.title, "scope": m.scope, "anchors": [a.key for a in m.anchors]}


def tidy_json(rep: TidyReport) -> JSONObject:
    """``tidy``: ``{"applied", "checked" (memories), "how" (contradictions judged by: rules, llm), "deleted_days",
    "findings", "duplicates": [{"keep": tidy_memory_json, "merge": [tidy_memory_json + {"similarity"}],
    "anchors": [key]}], "contradictions": [{"a", "b": tidy_memory_json, "rule" (negation, value, use, llm),
    "reason", "anchors"}], "long_deleted": [tidy_memory_json + {"since" (UTC), "commit", "days"}], "written"
    (ids merged into), "retired" (ids), "notes"}``; ``written`` and ``retired`` are empty in a dry run."""
    return {"applied": rep.applied, "checked": rep.checked, "how": rep.how, "deleted_days": rep.deleted_days,
            "findings": rep.findings,
            "duplicates": [{"keep": tidy_memory_json(g.keep),
                            "merge": [tidy_memory_json(m) | {"similarity": s} for m, s in g.merged],
                            "anchors": g.anchors} for g in rep.duplicates],
            "contradictions": [{"a": tidy_memory_json(f.a), "b": tidy_memory_json(f.b), "rule": f.rule,
                                "reason": f.reason, "anchors": f.anchors} for f in rep.contradictions],
            "long_deleted": [tidy_memory_json(d.memory) | {"since": d.since, "commit": d.commit, "days": d.days}
                             for d in rep.deleted],
            "written": rep.written, "retired": rep.retired, "notes": rep.notes}


# -- transfer -------------------------------------------------------------------------------------


def export_line_json(m: Memory) -> JSONObject:
    """One ``export`` line: ``{"format": EXPORT_FORMAT, "schema_version", **memory_json}``."""
    return {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, **memory_json(m)}


def dumps_line(obj: JSONObject) -> str:
    """One JSON Lines line (compact, non-ASCII kept, surrogates made safe, no newline): export lines, and the
    warning / error objects on stderr (one line each, so a stream of them parses line by line)."""
    from .memfile import without_surrogates

    return without_surrogates(json.dumps(obj, ensure_ascii=False, sort_keys=False))


def import_json(r: ImportReport) -> JSONObject:
    """``{"written": [id], "skipped": [id], "rejected": [line: why], "dropped_anchors": [key]}``."""
    return {"written": r.written, "skipped": r.skipped, "rejected": r.rejected, "dropped_anchors": r.dropped_anchors}


def claude_mem_import_json(r: ClaudeMemImport) -> JSONObject:
    """``{"written": [id], "already", "other_projects", "unanchored", "instructions"}`` (counts; ``instructions``:
    rows left out for a line that reads as an instruction to the agent), ``"rejected": ["<table> row <id>: why"]``."""
    return {"written": r.written, "already": r.already, "other_projects": r.other_projects,
            "unanchored": r.unanchored, "instructions": r.instructions, "rejected": r.rejected}


# -- MCP ------------------------------------------------------------------------------------------


def not_found_json(mem_id: str, error: str, hint: str) -> JSONObject:
    """An id MCP ``get`` could not find: ``{"id", "error", "hint"}``."""
    return {"id": mem_id, "error": error, "hint": hint}


def mcp_get_json(memories: list[JSONObject], not_found: list[JSONObject], more: list[str]) -> JSONObject:
    """MCP ``get``: ``{"memories": [memory_detail_json], "not_found": [not_found_json], "more": [ids found but
    not shown, to keep the reply under the agents' size limit]}``."""
    return {"memories": memories, "not_found": not_found, "more": more}


def invalid_file_json(error: str, hint: str) -> JSONObject:
    """A memory file that failed to load: ``{"error", "hint"}``."""
    return {"error": error, "hint": hint}


def mcp_stale_json(rows: list[MemoryStatus], invalid: list[JSONObject], more: int = 0) -> JSONObject:
    """MCP ``stale``: ``{"memories": [memory_status_json], "invalid": [invalid_file_json], "more" (not-fresh
    memories not shown, to keep the reply under the agents' size limit)}``."""
    return {"memories": [memory_status_json(s) for s in rows], "invalid": invalid, "more": more}


def mcp_remembered_json(m: Memory, path: str, warnings: list[str]) -> JSONObject:
    """MCP ``remember``: ``memory_json`` + ``{"path", "warnings"}``."""
    return memory_json(m) | {"path": path, "warnings": warnings}


# -- warnings and errors --------------------------------------------------------------------------


def org_hit_json(h: OrgHit) -> JSONObject:
    """A hit of ``recall --org``: ``{"repo", "id", "type", "title", "body", "status", "reason", "trust", "level",
    "anchors", "tags", "path", "updated", "commit" (the repository's commit indexed), "score"}``."""
    return {"repo": h.repo, "id": h.id, "type": h.type, "title": h.title, "body": h.body, "status": h.status,
            "reason": h.reason, "trust": h.trust, "level": h.level, "anchors": list(h.anchors), "tags": list(h.tags),
            "path": h.path, "updated": h.updated, "commit": h.commit, "score": round(h.score, 6)}


def org_repo_report_json(r: RepoReport) -> JSONObject:
    """One repository of ``org index``: ``{"repo", "location", "state" (indexed, skipped, failed), "before",
    "after" (commits; "" = none), "added", "updated", "deleted", "rechecked", "invalid", "memories", "error",
    "hint", "errors" (the invalid memory files), "foreign" (memories with cross-repository anchors checked),
    "truncated" (``REPO:path`` of memories indexed cut to ``[memory] max_chars``), "redacted" (``REPO:path`` of
    memories whose secrets were redacted), "note" (why a repository was skipped when not up to date: behind the
    indexed commit)}``."""
    return {"repo": r.repo, "location": r.location, "state": r.state, "before": r.before, "after": r.after,
            "added": r.added, "updated": r.updated, "deleted": r.deleted, "rechecked": r.rechecked,
            "invalid": r.invalid, "memories": r.memories, "error": r.error, "hint": r.hint, "errors": list(r.errors),
            "foreign": r.foreign, "truncated": list(r.truncated), "redacted": list(r.redacted), "note": r.note}


def org_index_json(rep: IndexReport) -> JSONObject:
    """``org index``: ``{"uri", "repos": [org_repo_report_json], "added", "updated", "deleted", "failed" (count),
    "seconds"}``."""
    return {"uri": rep.uri, "repos": [org_repo_report_json(r) for r in rep.repos], "added": rep.added,
            "updated": rep.updated, "deleted": rep.deleted, "failed": len(rep.failed),
            "seconds": round(rep.seconds, 3)}


def org_remove_json(uri: str, repo: str, rows: int | None) -> JSONObject:
    """``org remove``: ``{"uri", "repo", "removed" (false: the index had no such repository), "memories" (rows
    deleted)}``."""
    return {"uri": uri, "repo": repo, "removed": rows is not None, "memories": rows or 0}


def org_repo_status_json(state: RepoState | None, name: str, location: str, current: str, note: str) -> JSONObject:
    """One repository of ``org status``: ``{"repo", "location", "indexed" (commit; "" = never), "current" (its ref
    commit now; "" = unknown), "state" (up to date, behind, not indexed, unknown), "memories" (rows), "indexed_at",
    "note" (why the current commit is unknown)}``."""
    indexed = state.commit if state else ""
    st = ("not indexed" if not indexed else "unknown" if not current else "up to date" if current == indexed
          else "behind")
    return {"repo": name, "location": location or (state.location if state else ""), "indexed": indexed,
            "current": current, "state": st, "memories": state.memories if state else 0,
            "indexed_at": state.indexed_at if state else "", "note": note}


def org_status_json(uri: str, repos: list[JSONObject]) -> JSONObject:
    """``org status``: ``{"uri", "repos": [org_repo_status_json], "memories" (rows in all)}``."""
    return {"uri": uri, "repos": repos, "memories": sum(int(r["memories"]) for r in repos)}


def warning_json(message: str, hint: str | None = None) -> JSONObject:
    """A warning on stderr: ``{"warning"}``, plus ``"hint"`` when one is given (even empty)."""
    return {"warning": message} if hint is None else {"warning": message, "hint": hint}


def symbols_json(fs: FileSymbols) -> JSONObject:
    """``{"path", "rev" (as given, null: the working tree), "language", "file_memories" (live memories on the whole
    file), "symbols": [{"name" (as an anchor takes it), "anchor" ("path::name"), "kind", "start_line", "end_line"
    (1-based, inclusive), "aliases" (other names it is found by), "memories" (live memories anchoring it)}],
    "lfs_pointer" (true: a git-lfs pointer whose content is not in this clone, so no symbols)}`` (``symbols``)."""
    return {"path": fs.path, "rev": fs.rev, "language": fs.language, "file_memories": fs.file_memories,
            "lfs_pointer": fs.lfs_pointer,
            "symbols": [{"name": s.name, "anchor": f"{fs.path}::{s.name}", "kind": s.kind,
                         "start_line": s.start_line, "end_line": s.end_line, "aliases": list(s.aliases),
                         "memories": s.memories} for s in fs.symbols]}


def note_json(message: str) -> JSONObject:
    """Information on stderr, not a warning (what a command did besides, e.g. ``also anchored …``): ``{"note"}``."""
    return {"note": message}


def error_json(message: str, hint: str, candidates: list[str] | None = None) -> JSONObject:
    """An error: ``{"error", "hint"}``, plus ``"candidates"`` (the closest names) for an anchor error."""
    d: JSONObject = {"error": message, "hint": hint}
    if candidates is not None:
        d["candidates"] = candidates
    return d


def foreign_check_json(c: ForeignCheck) -> JSONObject:
    """One cross-repository anchor as ``org check`` found it: ``{"id", "title", "anchor", "repo", "path",
    "symbol", "status", "reason", "commit", "changed_in", "path_now", "symbol_now", "anchored_at"}`` (``status``
    fresh, moved, stale, deleted or unchecked; ``commit``: the other repository's commit checked at, None when
    unchecked; ``changed_in``: its commit that made the anchor not fresh, when one can be named)."""
    return {"id": c.memory.id, "title": c.memory.title, "anchor": c.anchor.key, "repo": c.anchor.repo,
            "path": c.anchor.path, "symbol": c.anchor.symbol, "status": c.status.value, "reason": c.reason,
            "commit": c.commit, "changed_in": c.changed_in, "path_now": c.path_now, "symbol_now": c.symbol_now,
            "anchored_at": c.anchor.commit}


def org_check_json(rep: CheckReport) -> JSONObject:
    """``org check``: ``{"ok", "checked", "not_fresh", "repos": {name: {"commit", "error"}}, "anchors":
    [foreign_check_json…]}`` (``ok``: every foreign anchor was checked and is fresh)."""
    return {"ok": not rep.not_fresh, "checked": len(rep.checks), "not_fresh": len(rep.not_fresh),
            "repos": {n: {"commit": sha, "error": why or None} for n, (sha, why) in sorted(rep.repos.items())},
            "anchors": [foreign_check_json(c) for c in rep.checks]}
