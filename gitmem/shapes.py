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
* ``scored_json``: a ranked memory (nested in ``context_json``).
* ``focus_json``: the code in focus (nested in ``context_json``).
* ``context_json``: packed context → ``context``, MCP ``context``.
* ``init_json`` / ``hooks_report_json``: what ``init`` and ``hooks install`` did.
* ``hooks_removed_json``: ``hooks uninstall``. ``hook_state_json``: each hook of ``hooks status``.
* ``forgotten_json``, ``retired_json``, ``superseded_json``, ``reanchored_json``, ``shared_json``:
  ``forget``, ``retire``, ``supersede``, ``reanchor``, ``share``.
* ``check_json`` (``problem_json`` nested): ``check``.
* ``log_entry_json``: each entry of ``log``.
* ``export_line_json``: each line of ``export`` (also carries ``"format": EXPORT_FORMAT``).
* ``import_json``, ``claude_mem_import_json``: ``import FILE``, ``import claude-mem``.
* ``scan_json``: ``scan``. ``sync_json``: ``sync``. ``doctor_json`` (``doctor_check_json`` nested): ``doctor``.
* ``install_json``, ``uninstall_json``: ``install AGENT``, ``uninstall AGENT`` (every agent alike).
* ``install_all_json``: ``install`` and ``uninstall`` with no agent (each agent's ``install_json`` or
  ``uninstall_json`` with the reason it was chosen).
* ``consolidation_json``: each session of ``consolidate``.
* ``tidy_json`` (``tidy_memory_json`` nested): ``tidy``.
* ``mcp_get_json`` (``not_found_json`` nested), ``mcp_stale_json`` (``invalid_file_json`` nested),
  ``mcp_remembered_json``: MCP ``get``, ``stale``, ``remember``.
* ``warning_json``: a warning on stderr. ``error_json``: an error on stderr or an MCP tool error
  (``{"error", "hint"}``, plus ``candidates`` for an anchor error).

Imports: the standard library and gitmem's stdlib-only modules at import time (the CLI imports this
module for ``gitmem --help``); everything else only for type checking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .model import Anchor, AnchorStatus, Memory, MemoryStatus, Status
from .rank import render

if TYPE_CHECKING:
    from pathlib import Path

    from .capture.consolidate import Outcome
    from .integrations.agents.installers import AgentPlan
    from .integrations.agents.installing import InstallResult
    from .integrations.git_hooks import HookState, InstallReport
    from .ops.check import Checked, Problem
    from .ops.context import ContextResult
    from .ops.doctor import Check, Report
    from .ops.history import LogEntry
    from .ops.import_claude_mem import ClaudeMemImport
    from .ops.lifecycle import Superseded
    from .ops.reanchor import Reanchored
    from .ops.scan import ScanResult
    from .ops.tidy import TidyReport
    from .ops.transfer import ImportReport
    from .rank.focus import Focus
    from .rank.score import Scored
    from .search.index import SyncResult
    from .search.recall import RecallHit

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
    """``{"anchor", "path", "symbol", "kind", "commit", "span", "fingerprint", "was"}`` (``was``: the anchor
    before its code moved or was renamed, or None)."""
    return {"anchor": a.key, "path": a.path, "symbol": a.symbol, "kind": a.kind, "commit": a.commit,
            "span": list(a.span) if a.span else None, "fingerprint": a.fingerprint, "was": a.was}


def memory_json(m: Memory) -> JSONObject:
    """Every field of a memory; anchors as ``anchor_json``."""
    return {"id": m.id, "type": m.type, "title": m.title, "body": m.body, "facts": m.facts,
            "tags": m.tags, "anchors": [anchor_json(a) for a in m.anchors], "author": m.author,
            "source": m.source, "session": m.session, "model": m.model, "confidence": m.confidence,
            "created": m.created, "updated": m.updated, "supersedes": m.supersedes,
            "superseded_by": m.superseded_by, "retired": m.retired, "invariant": m.invariant, "scope": m.scope}


def anchor_status_json(a: AnchorStatus) -> JSONObject:
    """An anchor's status: ``{"anchor", "status", "path_now", "symbol_now", "commit", "changes",
    "old_span", "new_span", "reason", "anchored_at"}``."""
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
    """``memory_json`` + ``{"status"}`` (at the working tree): an element of ``list``."""
    return memory_json(ms.memory) | {"status": ms.status.value}


def recall_hit_json(h: RecallHit, ms: MemoryStatus) -> JSONObject:
    """``memory_json`` + ``{"status" (at the working tree), "score", "fts_rank", "vector_rank"}`` (ranks
    1-based, null when absent)."""
    return memory_json(h.memory) | {"status": ms.status.value, "score": round(h.score, 6),
                                    "fts_rank": h.fts_rank, "vector_rank": h.vector_rank}


def search_hit_json(h: RecallHit, status: str) -> JSONObject:
    """A compact hit (MCP ``search``): ``{"id", "type", "title", "anchors", "age", "status", "score"}``."""
    return {"id": h.memory.id, "type": h.memory.type, "title": h.memory.title,
            "anchors": [a.key for a in h.memory.anchors], "age": age(h.memory), "status": status,
            "score": round(h.score, 6)}


def search_result_json(query: str, hits: list[JSONObject], warnings: list[str]) -> JSONObject:
    """MCP ``search``: ``{"query", "hits": [search_hit_json], "warnings"}``."""
    return {"query": query, "hits": hits, "warnings": warnings}


def scored_json(s: Scored) -> JSONObject:
    """A ranked memory: id, title, type, score, proximity, why, text rank, status, age."""
    d = {"id": s.memory.id, "title": s.memory.title, "type": s.memory.type,
         "score": round(s.score, 6), "proximity": round(s.proximity, 4), "near": s.near,
         "text_rank": s.text_rank, "status": s.status.value, "age": age(s.memory),
         "anchors": [a.key for a in s.memory.anchors]}
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
    "memories": [scored_json of the memories shown]}``."""
    shown = set(res.packed.detailed) | set(res.packed.indexed)
    return {"budget": res.budget, "tokens": res.packed.tokens, "text": res.packed.text,
            "detailed": res.packed.detailed, "indexed": res.packed.indexed,
            "left_out": res.packed.left_out, "focus": focus_json(res.focus),
            "memories": [scored_json(s) for s in res.ranked if s.memory.id in shown]}


def age(m: Memory) -> str:
    """A memory's compact age (``5 min``, ``3 h``, ``2 d``; ``?`` when unknown), as ``rank.score.age``."""
    return render.age(m.updated or m.created, None)


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


def doctor_check_json(c: Check) -> JSONObject:
    """``{"name", "level" (ok, warn, error), "message", "hint"}``."""
    return {"name": c.name, "level": c.level, "message": c.message, "hint": c.hint}


def doctor_json(report: Report) -> JSONObject:
    """``{"ok", "checks": [doctor_check_json]}``."""
    return {"ok": report.ok, "checks": [doctor_check_json(c) for c in report.checks]}


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


def install_all_json(plans: Sequence[AgentPlan], *, install: bool, dry_run: bool) -> JSONObject:
    """``install`` / ``uninstall`` with no agent: ``{"dry_run", "agents": [{"agent", "reason", "installed"
    (before), **install_json or uninstall_json (when something was done), "would_change": [file] (a dry run),
    "error" and "hint" (refused: nothing was written for any agent; or failed to write)}]}``."""
    agents = []
    for p in plans:
        d: JSONObject = {"agent": p.agent, "reason": p.reason, "installed": p.installed}
        if p.result is not None:
            d |= install_json(p.result) if install else uninstall_json(p.result)
        elif dry_run and p.plan is not None:
            d["would_change"] = p.plan.paths
        if p.error:
            d |= {"error": p.error, "hint": p.hint}
        agents.append(d)
    return {"dry_run": dry_run, "agents": agents}


# -- checks and maintenance -----------------------------------------------------------------------


def problem_json(p: Problem) -> JSONObject:
    """``{"kind", "subject", "message"}``."""
    return {"kind": p.kind, "subject": p.subject, "message": p.message}


def check_json(res: Checked) -> JSONObject:
    """``{"base" (the merge base compared with), "base_ref" (as named), "tip" (its commit), "head", "ok",
    "problems": [problem_json]}``."""
    return {"base": res.base, "base_ref": res.base_ref, "tip": res.tip, "head": res.head,
            "ok": not res.problems, "problems": [problem_json(p) for p in res.problems]}


def scan_json(res: ScanResult) -> JSONObject:
    """``{"commits", "evaluated", "not_fresh": [memory_status_json]}``."""
    return {"commits": res.commits, "evaluated": len(res.statuses),
            "not_fresh": [memory_status_json(s) for s in res.statuses if s.status != Status.FRESH]}


def sync_json(res: SyncResult, invalid: int) -> JSONObject:
    """``{"added", "updated", "deleted", "rebuilt", "reason", "invalid" (memory files that failed)}``."""
    return {"added": res.added, "updated": res.updated, "deleted": res.deleted, "rebuilt": res.rebuilt,
            "reason": res.reason, "invalid": invalid}


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
    """``{"written": [id], "already", "other_projects", "unanchored"}`` (counts)."""
    return {"written": r.written, "already": r.already, "other_projects": r.other_projects,
            "unanchored": r.unanchored}


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


def warning_json(message: str, hint: str | None = None) -> JSONObject:
    """A warning on stderr: ``{"warning"}``, plus ``"hint"`` when one is given (even empty)."""
    return {"warning": message} if hint is None else {"warning": message, "hint": hint}


def error_json(message: str, hint: str, candidates: list[str] | None = None) -> JSONObject:
    """An error: ``{"error", "hint"}``, plus ``"candidates"`` (the closest names) for an anchor error."""
    d: JSONObject = {"error": message, "hint": hint}
    if candidates is not None:
        d["candidates"] = candidates
    return d
