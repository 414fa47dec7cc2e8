"""``gitmem import claude-mem [DB]``: bring the observations of claude-mem, anchored to this repository's code.

claude-mem (``~/.claude-mem/claude-mem.db``, SQLite) keeps ``observations``
(type, title, subtitle, narrative, facts, concepts, files_read, files_modified
as JSON arrays, created_at_epoch, project) and ``session_summaries`` (request,
investigated, learned, completed, next_steps, files_read, files_edited). Layout
as of claude-mem's migrations 8-10; columns missing in older databases are
treated as empty.

A row belongs to this repository when one of its files lies inside it, or, with
no files, when its ``project`` is the repository folder's name (claude-mem names
projects after the folder). Each row becomes a memory:

* anchors: the modified files (else up to ``MAX_READ_ANCHORS`` read files) that
  exist in the working tree; for each, the symbols of that file the row's text
  names (identifiers resolved in the file's symbol table) instead of the whole file;
* type kept when it is one of gitmem's, title, body (narrative, else text),
  facts, tags (concepts); source ``import``, origin and model ``claude-mem``; scope ``local``
  (one developer's capture: the ``[share] policy`` shares it with the code);
* a deterministic id (the row's time and a hash of the database row), so a second
  import of the same database adds nothing;
* text redacted (``capture.redact``: it is one developer's capture, never redacted before); a row whose
  text holds a control character or a bidirectional override, a column that is not text, or what the
  memory file writer refuses is rejected on its own (``rejected``, with the table and row id).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from ..anchors import Resolver
from ..capture.redact import redact_text
from ..errors import GitmemError
from ..git import WORKTREE
from ..memfile import dumps
from ..memories import fit, instruction_lines, max_chars, write
from ..model import MEMORY_TYPES, Anchor, Memory
from ..store import Store

DEFAULT_DB = "~/.claude-mem/claude-mem.db"
#: Read files anchored when a row modified none (reading many files says little about each).
MAX_READ_ANCHORS = 3
MAX_ANCHORS = 8
_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


@dataclass
class ClaudeMemImport:
    """What the import did: memories written, rows skipped (other project, or imported before, or ``instructions``:
    a line that reads as an instruction to the agent, ``memories.refuse_instructions``), anchors dropped."""

    written: list[str] = field(default_factory=list)
    already: int = 0
    other_projects: int = 0
    unanchored: int = 0
    instructions: int = 0
    rejected: list[str] = field(default_factory=list)


def _json_list(value: Any) -> list[str]:
    if not value:
        return []
    try:
        data = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return [str(value)]
    return [str(x) for x in data] if isinstance(data, list) else [str(data)]


def _epoch_ms(epoch: Any) -> int:
    """A row's time in ms since the epoch (0 when missing or nonsense; seconds taken as seconds)."""
    try:
        v = int(epoch or 0)
    except (TypeError, ValueError):
        return 0
    v = v * 1000 if v < 10**11 else v
    return v if 0 <= v < 2**47 else 0


def _memory_id(db: Path, table: str, row_id: Any, epoch: Any) -> str:
    """A ULID with the row's time and 80 bits of sha256(database, table, row id): stable across imports."""
    ms = _epoch_ms(epoch)
    digest = hashlib.sha256(f"claude-mem:{db.name}:{table}:{row_id}".encode()).digest()
    return str(ULID.from_bytes(max(0, ms).to_bytes(6, "big") + digest[:10]))


def _stamp(epoch: Any) -> str:
    return dt.datetime.fromtimestamp(_epoch_ms(epoch) / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rows(con: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    if not cols:
        return []
    return [dict(zip(cols, r, strict=True)) for r in con.execute(f"SELECT {', '.join(cols)} FROM {table}")]


def import_claude_mem(store: Store, db: str | None = None) -> ClaudeMemImport:
    """Import this repository's rows of a claude-mem database (see the module docstring).

    Raises:
        GitmemError: the database is missing or is not a claude-mem database.
    """
    path = Path(os.path.expanduser(db or DEFAULT_DB))
    if not path.is_file():
        raise GitmemError(f"no claude-mem database at {path}", "give its path: gitmem import claude-mem PATH")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        obs = _rows(con, "observations")
        summaries = _rows(con, "session_summaries")
        con.close()
    except sqlite3.Error as e:
        raise GitmemError(f"{path} is not a readable SQLite database ({e})", "check the path") from None
    if not obs and not summaries and not _has_table(path, "observations"):
        raise GitmemError(f"{path} has no observations table: not a claude-mem database", "check the path")
    repo = store.repo
    root = repo.root.resolve()
    resolver = Resolver(repo)
    loaded = store.load_all()
    existing = set(loaded.memories) | set(loaded.retired)
    report = ClaudeMemImport()
    written: list[Memory] = []
    limit = max_chars(store)

    def rel(p: str) -> str | None:
        q = Path(p)
        if not q.is_absolute():
            q = root / p
        try:
            r = q.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return None
        return r if (root / r).is_file() else None

    items = [("observations", r) for r in obs] + [("session_summaries", r) for r in summaries]
    for table, r in items:
        try:
            m = _row_memory(r, table, path, existing, report, rel, resolver, limit, root)
        except (GitmemError, ValueError, TypeError) as e:
            why = e.message if isinstance(e, GitmemError) else str(e)
            report.rejected.append(f"{table} row {str(r.get('id'))[:40]}: {why}")
            continue
        if m is None:
            continue
        written.append(m)
        existing.add(m.id)
        report.written.append(m.id)
    write(store, written)
    return report


def _row_memory(r: dict[str, Any], table: str, path: Path, existing: set[str], report: ClaudeMemImport,
                rel: Any, resolver: Resolver, limit: int, root: Path) -> Memory | None:
    """The memory of claude-mem row ``r`` of ``table`` (``rel``: a path as the repository's relative path, or
    None; ``root``: the work tree); None when it is skipped (counted in ``report``).

    Raises:
        ValueError: the row's text holds a control character or a bidirectional override (``transfer.hostile``'s
            rule), or a text column is not text.
        GitmemError: what the memory file writer refuses.
    """
    from .transfer import control_character

    modified = _json_list(r.get("files_modified") if table == "observations" else r.get("files_edited"))
    read = _json_list(r.get("files_read"))
    all_files = modified + read
    mine = [x for x in (rel(p) for p in all_files) if x]
    if not mine and (all_files or r.get("project") != root.name):
        report.other_projects += 1
        return None
    mid = _memory_id(path, table, r.get("id"), r.get("created_at_epoch"))
    if mid in existing:
        report.already += 1
        return None
    for col in ("title", "subtitle", "text", "narrative", "request", "investigated", "learned", "completed",
                "next_steps", "notes", "facts", "concepts", "type", "project"):
        value = r.get(col)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{col} is not text ({type(value).__name__})")
        bad = control_character(value)
        if bad is not None:
            raise ValueError(f"{col} holds the control character {bad}")
    if table == "observations":
        title = r.get("title") or (r.get("subtitle") or "") or (r.get("text") or "").split("\n")[0]
        body = r.get("narrative") or r.get("text") or ""
        if r.get("subtitle") and r.get("title"):
            body = f"{r['subtitle']}\n\n{body}".strip()
        facts, tags = _json_list(r.get("facts")), _json_list(r.get("concepts"))
        t = r.get("type")
        mtype = t if isinstance(t, str) and t in MEMORY_TYPES else "discovery"
    else:
        title = r.get("request") or r.get("completed") or "Session summary"
        parts = [(k, r.get(k)) for k in ("investigated", "learned", "completed", "next_steps", "notes")]
        body = "\n\n".join(f"**{k.replace('_', ' ').capitalize()}**: {v}" for k, v in parts if v)
        facts, tags, mtype = [], [], "change"
    text = " ".join([str(title), str(body), *facts])
    targets = ([x for x in (rel(p) for p in modified) if x]
               or [x for x in (rel(p) for p in read) if x][:MAX_READ_ANCHORS])
    anchors: list[Anchor] = []
    names = set(_IDENT.findall(text))
    for f in dict.fromkeys(targets):
        table_ = resolver.table(WORKTREE, f) or {}
        named = [n for n in table_ if "#" not in n and (n in names or (len(n.rsplit(".", 1)[-1]) >= 4
                                                                       and n.rsplit(".", 1)[-1] in names))]
        try:
            anchors += ([resolver.make(f, n, WORKTREE, as_typed=False) for n in named[:4]]
                        or [resolver.make(f, None, WORKTREE)])
        except GitmemError:
            continue
    if not anchors:
        report.unanchored += 1
    stamp = _stamp(r.get("created_at_epoch"))
    m = Memory(id=mid, type=mtype, title=redact_text(" ".join(str(title).split()))[:160] or "(untitled)",
               body=redact_text(str(body)), facts=[redact_text(f) for f in facts], tags=tags,
               anchors=anchors[:MAX_ANCHORS], source="import", origin="claude-mem", model="claude-mem",
               session=str(r.get("memory_session_id") or "") or None, confidence=0.6,
               created=stamp, updated=stamp, scope="local")
    m = fit(m, limit)  # claude-mem's observations can be long: cut, not lost
    if instruction_lines(m):  # another tool's memory that tells the agent what to run: not imported
        report.instructions += 1
        return None
    dumps(m)  # raises what the writer would refuse, before anything is written
    return m


def _has_table(path: Path, table: str) -> bool:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
            return row is not None
        finally:
            con.close()
    except sqlite3.Error:
        return False
