"""The hook index: a SQLite mirror of the memories for the hooks that run on every prompt and tool call.

The LanceDB index costs about a second to import (``../shared/reference/lancedb.md``)
and parsing memory files needs YAML and git; a PreToolUse hook has 150 ms in
all. So the hooks read this file instead: ``layout.of(root).catalog_file``
(``<git-dir>/gitmem/catalog.sqlite``: per worktree, never committed, rebuilt from the
memory files at any time), with

* ``memories``: one row per memory — id, type, title, body, facts, tags,
  anchors (JSON), scope, updated, confidence, the content hash of its file, and
  its last known status at the working tree with the reason;
* ``anchors``: (memory id, path, symbol, start line, end line), indexed by path;
* ``commands``: (memory id, program, the quoted command's words as JSON) for each command the
  memory quotes in backticks (``shellwords.quoted_commands``), indexed by program: the
  before-shell hook finds the memories naming a command without reading memory text;
* ``fts``: an FTS5 table over title, body, facts, tags and anchors with
  identifiers split (``textsplit.split_identifiers``), ranked by SQLite's
  ``bm25()`` (Robertson & Zaragoza's BM25, k1 = 1.2, b = 0.75);
* ``files``: per memory file, the inode, stat key and content hash it was read
  with, the id it holds and its state (ok, retired, error, duplicate) — kept by
  ``gitmem.catalog``, which reads only the files that changed;
* ``tombstones``: ids removed, with the sequence number of the change, so the
  LanceDB index can follow the rows change by change;
* ``usage``: per memory id, how often it was given, searched and opened and when last (seconds),
  folded from the clone's use log (``catalog.usage``, ``gitmem.usage``);
* ``code_times``: per anchored path, the commit time of the last commit that changed it (NULL: none);
* ``meta``: the signature of the memory folders the rows were built from, the
  sequence number and generation of the rows, the state statuses were checked at.

Written by ``gitmem.catalog.sync`` (in processes that may be slow); read here
with the standard library only. Readers never block on a writer (WAL journal).
"""

from __future__ import annotations

import heapq
import json
import os
import sqlite3
from pathlib import Path

from .. import layout
from ..shellwords import quoted_commands
from ..textsplit import name_leaf, name_parts, query_terms, split_identifiers

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterable, Sequence
    from typing import Any

#: Schema version; a file with another version is rebuilt. 9: local memory files keyed by their path
#: in git's folder (``layout``). 10: symbol names of several definitions (``Parser.parse(String)``) and
#: their last parts recomputed (extractor ``ts1.3``); an anchor's ``was`` (its key before its code moved).
#: 11: ``commands``, the commands each memory quotes (``shellwords.quoted_commands``).
#: 12: ``usage`` (the use log folded, ``catalog.usage``) and ``code_times`` (anchored files' last commit times).
#: 13: each memory's provenance (``provenance``): ``level``, ``trust`` (its label for the agent) and ``rule``.
#: 14: cross-repository anchors (``Anchor.repo``) kept out of the anchored paths and symbols; ``repo`` per anchor.
SCHEMA_VERSION = "14"
#: (An index added later, such as ``anchors_path_symbol``, needs no new version: every ``connect(create=True)``
#: runs ``_SCHEMA``, whose ``IF NOT EXISTS`` statements add it to an older file once, without a rebuild.)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, type TEXT, title TEXT, body TEXT, facts TEXT, tags TEXT, anchors TEXT,
    scope TEXT, updated TEXT, confidence REAL, digest TEXT,
    status TEXT, reason TEXT, checked TEXT, memory TEXT, file TEXT, seq INTEGER DEFAULT 0,
    level TEXT, trust TEXT, rule INTEGER);
CREATE INDEX IF NOT EXISTS memories_updated ON memories(updated, id);
CREATE INDEX IF NOT EXISTS memories_status ON memories(status);
CREATE INDEX IF NOT EXISTS memories_seq ON memories(seq);
CREATE TABLE IF NOT EXISTS files (file TEXT PRIMARY KEY, ino INTEGER, stat TEXT, digest TEXT, id TEXT,
    state TEXT, note TEXT);
CREATE INDEX IF NOT EXISTS files_id ON files(id);
CREATE TABLE IF NOT EXISTS tombstones (id TEXT, seq INTEGER);
CREATE INDEX IF NOT EXISTS tombstones_seq ON tombstones(seq);
CREATE TABLE IF NOT EXISTS anchors (memory_id TEXT, path TEXT, symbol TEXT, start_line INTEGER, end_line INTEGER,
    now INTEGER DEFAULT 0, updated TEXT, leaf TEXT);
CREATE INDEX IF NOT EXISTS anchors_path ON anchors(path, updated);
CREATE INDEX IF NOT EXISTS anchors_symbol ON anchors(symbol);
CREATE INDEX IF NOT EXISTS anchors_leaf ON anchors(leaf);
CREATE INDEX IF NOT EXISTS anchors_memory ON anchors(memory_id);
CREATE TABLE IF NOT EXISTS commands (memory_id TEXT, program TEXT, words TEXT);
CREATE INDEX IF NOT EXISTS commands_program ON commands(program);
CREATE INDEX IF NOT EXISTS commands_memory ON commands(memory_id);
CREATE INDEX IF NOT EXISTS anchors_path_symbol ON anchors(path, symbol, memory_id);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text);
CREATE TABLE IF NOT EXISTS usage (id TEXT PRIMARY KEY, given INTEGER DEFAULT 0, searched INTEGER DEFAULT 0,
    opened INTEGER DEFAULT 0, last_used INTEGER);
CREATE TABLE IF NOT EXISTS code_times (path TEXT PRIMARY KEY, committed INTEGER);
"""

_COLUMNS = ("id", "type", "title", "body", "facts", "tags", "anchors", "scope", "updated",
            "confidence", "digest", "status", "reason", "checked", "memory", "file", "seq", "level", "trust", "rule")
_JSON_COLUMNS = ("facts", "tags", "anchors", "checked", "memory")


def db_path(root: Path) -> Path:
    """The catalog file of the work tree at ``root``: ``<git-dir>/gitmem/catalog.sqlite``."""
    return layout.of(root).catalog_file


def drop_catalog(root: Path) -> None:
    """Delete the catalog of the work tree at ``root`` (with its WAL files); rebuilt on next use.

    Raises:
        OSError: a file exists but cannot be deleted.
    """
    path = db_path(root)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def folder_signature(root: Path) -> str:
    """Modification times of the memory folders (ns): changes when a memory file is added, removed or
    replaced (gitmem and git both write by rename), not when one is edited in place."""
    parts = []
    for _rel, folder in layout.of(root).memory_dirs():
        try:
            parts.append(str(folder.stat().st_mtime_ns))
        except OSError:
            parts.append("-")
    return ":".join(parts)


def connect(root: Path, *, create: bool = False) -> sqlite3.Connection | None:
    """Open the hook index; None when it does not exist (and ``create`` is false) or cannot be opened."""
    try:
        lay = layout.of(root)
    except OSError:  # no readable .git: no catalog
        return None
    path = lay.catalog_file
    if not lay.git_dir.is_dir():  # a removed worktree: never recreate its entry in git's folder
        return None
    if not create and not path.exists():
        return None
    con = _open(path, create)
    if con is None and create:
        # corrupt (not a database, a torn file): it is a cache, so start it over
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(path) + suffix)
            except OSError:
                pass
        con = _open(path, create)
    return con


def _open(path: Path, create: bool) -> sqlite3.Connection | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(path), timeout=5.0)
        con.row_factory = sqlite3.Row
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        if create:
            con.executescript(_SCHEMA)
            if get_meta(con, "schema") != SCHEMA_VERSION:
                con.executescript("DROP TABLE IF EXISTS memories; DROP TABLE IF EXISTS anchors; "
                                  "DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS files; "
                                  "DROP TABLE IF EXISTS tombstones; DROP TABLE IF EXISTS commands; "
                                  "DROP TABLE IF EXISTS usage; DROP TABLE IF EXISTS code_times; DELETE FROM meta;")
                con.executescript(_SCHEMA)
                set_meta(con, "schema", SCHEMA_VERSION)
                con.commit()
        elif get_meta(con, "schema") != SCHEMA_VERSION:
            con.close()
            return None
        return con
    except (sqlite3.Error, OSError):
        return None


def begin(con: sqlite3.Connection) -> None:
    """Start a write transaction now (``BEGIN IMMEDIATE``): reads that follow see the latest commit
    and no other writer can slip in between them and the writes."""
    if con.in_transaction:
        con.commit()
    con.execute("BEGIN IMMEDIATE")


def get_meta(con: sqlite3.Connection, key: str) -> str | None:
    try:
        row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def set_meta(con: sqlite3.Connection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def is_current(con: sqlite3.Connection, root: Path) -> bool:
    """Whether the rows were built from the memory folders as they are now (see ``folder_signature``)."""
    return get_meta(con, "signature") == folder_signature(root)


# -- writing (called by catalog.sync and catalog.files) --------------------------------------------------------


def changed_since_check(con: sqlite3.Connection, root: Path, rel: str) -> bool:
    """Whether file ``rel`` may have changed since the statuses were last checked against the work tree.

    The check (``catalog.sync``) records the size and modification time (ns) of every file that was
    dirty then (meta ``status_dirty``) and when it started (``status_checked_ns``). A file that was
    dirty: changed when its size or time differ; a file that was clean: changed when it was modified
    after the check started; a file that is gone: changed. A catalog that never checked: False (its
    rows say "status not checked yet" themselves). One ``stat``, no git: the agent hooks call it.
    """
    return bool(changed_since_checks(con, root, [rel]))


def changed_since_checks(con: sqlite3.Connection, root: Path, rels: Iterable[str]) -> set[str]:
    """The files of ``rels`` (repo-relative) that may have changed since the statuses were last checked
    (``changed_since_check``, with the check's meta read once): one ``stat`` per file, no git."""
    checked = get_meta(con, "status_checked_ns")
    if not checked or not checked.isdigit():
        return set()
    try:
        dirty = json.loads(get_meta(con, "status_dirty") or "{}")
    except ValueError:
        dirty = {}
    if not isinstance(dirty, dict):
        dirty = {}
    out: set[str] = set()
    for rel in dict.fromkeys(rels):
        was = dirty.get(rel)
        try:
            st = os.stat(root / rel)
        except OSError:
            if was != "gone":
                out.add(rel)
            continue
        if (was != f"{st.st_size}:{st.st_mtime_ns}") if was is not None else st.st_mtime_ns > int(checked):
            out.add(rel)
    return out


def stored_statuses(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """id → (status, reason) as last recorded (``set_status``: the status value, the worst anchor's keyed reason,
    "" when fresh) for those of ``ids`` checked at least once; ids never checked (status NULL) are left out."""
    ids = list(dict.fromkeys(ids))
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(ids), 500):  # SQLite's default limit on bound parameters is 999
        chunk = ids[i:i + 500]
        for mid, status, reason in con.execute(f"SELECT id, status, reason FROM memories WHERE id IN "
                                               f"({', '.join('?' * len(chunk))}) AND status IS NOT NULL", chunk):
            out[mid] = (str(status), str(reason or ""))
    return out


def anchored_paths_of(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, set[str]]:
    """id → the files each of ``ids`` is anchored to (where its code is now and where it was); ids without
    a file anchor are left out."""
    ids = list(dict.fromkeys(ids))
    out: dict[str, set[str]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        for mid, path in con.execute(f"SELECT DISTINCT memory_id, path FROM anchors WHERE memory_id IN "
                                     f"({', '.join('?' * len(chunk))})", chunk):
            if path:
                out.setdefault(mid, set()).add(path)
    return out


def fts_text(row: dict[str, Any]) -> str:
    """The full-text column of a row: title, body, facts, tags, anchor keys, identifiers split."""
    anchors = [a.get("key", "") for a in row.get("anchors", [])]
    parts = [row.get("title", ""), row.get("body", ""), *row.get("facts", []), *row.get("tags", []), *anchors]
    return split_identifiers("\n".join(p for p in parts if p))


def command_text(row: dict[str, Any]) -> str:
    """The text a memory's quoted commands are taken from: title, body and facts."""
    return "\n".join(p for p in (row.get("title", ""), row.get("body", ""), *row.get("facts", [])) if p)


def upsert(con: sqlite3.Connection, rows: Iterable[dict[str, Any]]) -> int:
    """Insert or replace ``rows`` (dicts with the keys of ``_COLUMNS``; lists as lists). Returns the count.

    Each row's ``anchors`` is a list of {"key", "path", "symbol", "start", "end"} (and "was" when the
    anchor followed moved code).
    The caller commits.
    """
    n = 0
    for row in rows:
        mid = row["id"]
        delete(con, [mid])
        values = []
        for c in _COLUMNS:
            v = row.get(c)
            values.append(json.dumps(v, ensure_ascii=False) if c in _JSON_COLUMNS else v)
        cur = con.execute(f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                          values)
        con.executemany("INSERT INTO anchors (memory_id, path, symbol, start_line, end_line, updated, leaf) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(mid, a.get("path"), a.get("symbol"), a.get("start"), a.get("end"), row.get("updated"),
                          _leaf(a.get("symbol"))) for a in row.get("anchors", []) if a.get("path")])
        con.executemany("INSERT INTO commands (memory_id, program, words) VALUES (?, ?, ?)",
                        [(mid, w[0], json.dumps(w)) for w in quoted_commands(command_text(row))])
        # the full-text row shares the memory row's rowid: deletes find it without a scan
        con.execute("INSERT INTO fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, fts_text(row)))
        n += 1
    return n


def delete(con: sqlite3.Connection, ids: Iterable[str]) -> None:
    for mid in ids:
        r = con.execute("SELECT rowid FROM memories WHERE id = ?", (mid,)).fetchone()
        if r is None:
            continue
        con.execute("DELETE FROM fts WHERE rowid = ?", (r[0],))
        con.execute("DELETE FROM memories WHERE rowid = ?", (r[0],))
        con.execute("DELETE FROM anchors WHERE memory_id = ?", (mid,))
        con.execute("DELETE FROM commands WHERE memory_id = ?", (mid,))


def set_status(con: sqlite3.Connection, mid: str, status: str, reason: str, checked: dict[str, str | None],
               now: Sequence[tuple[str, str | None, int | None, int | None]] = ()) -> None:
    """Record a memory's status at the working tree, and the blob SHAs of its files it was computed on.

    ``now``: where its anchors are in the working tree, (path, symbol, start line, end line)
    each, so that a file read finds the memory of code that moved there.
    """
    con.execute("UPDATE memories SET status = ?, reason = ?, checked = ? WHERE id = ?",
                (status, reason, json.dumps(checked), mid))
    con.execute("DELETE FROM anchors WHERE memory_id = ? AND now = 1", (mid,))
    r = con.execute("SELECT updated FROM memories WHERE id = ?", (mid,)).fetchone()
    con.executemany("INSERT INTO anchors (memory_id, path, symbol, start_line, end_line, now, updated, leaf) "
                    "VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
                    [(mid, *n, r[0] if r else None, _leaf(n[1])) for n in now if n[0]])


def digests(con: sqlite3.Connection) -> dict[str, tuple[str, str | None, dict[str, str | None]]]:
    """id → (content hash, status or None, {path: blob SHA it was checked on})."""
    out = {}
    for r in con.execute("SELECT id, digest, status, checked FROM memories"):
        try:
            checked = json.loads(r["checked"]) if r["checked"] else {}
        except ValueError:
            checked = {}
        out[r["id"]] = (r["digest"], r["status"], checked)
    return out


# -- reading (hot path) ------------------------------------------------------------------------


def _row(r: sqlite3.Row) -> dict[str, Any]:
    d = dict(r)
    memory = d.pop("memory", None)  # the full memory is for ``all_memories``; hooks render from the columns
    d["supersedes"] = []  # the ids it replaced: a session given one of them is told (``core.session_items``)
    if isinstance(memory, str) and '"supersedes"' in memory:
        try:
            sup = json.loads(memory).get("supersedes")
        except (ValueError, AttributeError):
            sup = None
        d["supersedes"] = [x for x in sup if isinstance(x, str)] if isinstance(sup, list) else []
    for c in ("facts", "tags", "anchors", "checked"):
        try:
            d[c] = json.loads(d[c]) if d.get(c) else ([] if c != "checked" else {})
        except ValueError:
            d[c] = [] if c != "checked" else {}
    return d


def levels(con: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str]:
    """id → provenance level (``provenance.LEVELS``) of those of ``ids`` in the catalog (for the hooks' ordering)."""
    out: dict[str, str] = {}
    for i in range(0, len(ids), 500):  # SQLite's default limit on bound parameters is 999
        part = list(ids[i:i + 500])
        q = f"SELECT id, level FROM memories WHERE id IN ({', '.join('?' * len(part))})"
        out.update((mid, level or "") for mid, level in con.execute(q, part))
    return out


def rows(con: sqlite3.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The rows of ``ids``, in that order (unknown ids skipped)."""
    out = []
    for mid in ids:
        r = con.execute("SELECT * FROM memories WHERE id = ?", (mid,)).fetchone()
        if r is not None:
            out.append(_row(r))
    return out


def on_path(con: sqlite3.Connection,
            path: str) -> list[tuple[str, str | None, list[tuple[str | None, int | None, int | None]]]]:
    """Memories anchored to ``path``: (id, status, [(symbol or None, start line, end line), ...]), newest first.

    Light: no memory text is read (fetch the rows to show with ``rows``); a file can hold hundreds.
    """
    found: dict[str, list[tuple[str | None, int | None, int | None]]] = {}
    meta: dict[str, tuple[str | None, str]] = {}
    cur = con.execute("SELECT a.memory_id, a.symbol, a.start_line, a.end_line, m.status, m.updated "
                      "FROM anchors a JOIN memories m ON m.id = a.memory_id WHERE a.path = ? ORDER BY a.now DESC",
                      (path,))
    seen: set[tuple[str, str | None]] = set()
    for mid, symbol, start, end, status, updated in cur:  # where the code is now (now = 1) wins
        if (mid, symbol) in seen:
            continue
        seen.add((mid, symbol))
        found.setdefault(mid, []).append((symbol, start, end))
        meta[mid] = (status, updated or "")
    order = sorted(found, key=lambda mid: meta[mid][1], reverse=True)
    return [(mid, meta[mid][0], found[mid]) for mid in order]


def search(con: sqlite3.Connection, query: str, limit: int = 20) -> list[tuple[str, float]]:
    """BM25 full-text search: [(id, score)], best first; score = -bm25 (higher is better).

    The query is reduced to plain terms (``textsplit.query_terms``) joined by OR,
    so no user text reaches FTS5's query syntax.
    """
    terms = query_terms(query)
    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
    return _bm25(con, match, limit)


def _bm25(con: sqlite3.Connection, match: str, limit: int) -> list[tuple[str, float]]:
    """The FTS5 query ``match`` over the catalog: [(id, -bm25)], best first, at most ``limit``; [] on an error."""
    try:
        cur = con.execute("SELECT m.id AS id, bm25(fts) AS s FROM fts JOIN memories m ON m.rowid = fts.rowid "
                          "WHERE fts MATCH ? ORDER BY s LIMIT ?", (match, int(limit)))
        return [(r["id"], -float(r["s"])) for r in cur]
    except sqlite3.Error:
        return []


def search_terms(con: sqlite3.Connection, terms: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
    """BM25 full-text search for whole terms (an exception name, ``tz_offset``, ``pkg.errors``): each term is a
    phrase of its words as the full-text index splits them (``KeyError`` one token, ``tz_offset`` the phrase
    ``tz offset``), the phrases joined by OR: [(id, score)], best first; score = -bm25 (higher is better).

    Precise and fast where ``search`` is neither for such terms: ``search`` ORs the parts, and common parts
    (``cache``, ``error``) make it score most of the catalog (0.3 s over 10,000 memories).
    """
    import re

    phrases = [" ".join(re.findall(r"[^\W_]+", t.lower())) for t in terms]
    match = " OR ".join(f'"{p}"' for p in dict.fromkeys(phrases) if p)
    if not match:
        return []
    return _bm25(con, match, limit)


def term_docs(con: sqlite3.Connection, terms: Iterable[str]) -> dict[str, int]:
    """term → how many memories hold it (the full-text index's document frequency, the term tokenised as
    the index tokenises it: lower case, diacritics folded); 0 for a term no memory holds or that cannot be
    searched. One FTS5 count per term: for the few terms a prompt's hits share with it (``rank.relevance``).
    """
    out: dict[str, int] = {}
    for t in dict.fromkeys(terms):
        try:
            phrase = '"' + t.replace('"', "") + '"'
            row = con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()
            out[t] = int(row[0]) if row else 0
        except sqlite3.Error:
            out[t] = 0
    return out


def fts_texts(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """id → the full-text column of its memory (``fts_text``: what BM25 matched), for ``ids`` in the catalog."""
    out: dict[str, str] = {}
    for mid in dict.fromkeys(ids):
        r = con.execute("SELECT f.text FROM memories m JOIN fts f ON f.rowid = m.rowid WHERE m.id = ?",
                        (mid,)).fetchone()
        if r is not None:
            out[mid] = str(r[0] or "")
    return out


def _leaf(symbol: str | None) -> str | None:
    """The last part of a qualified name (``Cache.get`` → ``get``), indexed for ``symbols_named``."""
    return name_leaf(symbol) if symbol else None


def symbols_named(con: sqlite3.Connection, names: Iterable[str], limit: int | None = None) -> dict[str, list[str]]:
    """Memory ids anchored to a symbol whose qualified name or last part is one of ``names``: name → ids.

    With ``limit``, the ``limit`` most recently updated per name (a common name can hold thousands).
    """
    out: dict[str, list[str]] = {}
    for n in names:
        cur = con.execute("SELECT memory_id, MAX(updated) AS u FROM anchors WHERE symbol = ? OR leaf = ? "
                          "GROUP BY memory_id ORDER BY u DESC" + (" LIMIT ?" if limit else ""),
                          (n, n, int(limit)) if limit else (n, n))
        ids = [r[0] for r in cur]
        if ids:
            out[n] = ids
    return out


def paths_like(con: sqlite3.Connection, paths: Iterable[str], limit: int | None = None) -> dict[str, list[str]]:
    """Memory ids anchored to each of ``paths`` (exact repo-relative paths): path → ids, newest first.

    With ``limit``, the ``limit`` most recently updated per path.
    """
    out: dict[str, list[str]] = {}
    for p in paths:
        ids = [r[0] for r in con.execute("SELECT memory_id, MAX(updated) AS u FROM anchors WHERE path = ? "
                                         "GROUP BY memory_id ORDER BY u DESC" + (" LIMIT ?" if limit else ""),
                                         (p, int(limit)) if limit else (p,))]
        if ids:
            out[p] = ids
    return out


def anchored_paths(con: sqlite3.Connection) -> set[str]:
    """Every path some memory is anchored to.

    One index seek per distinct path (``anchors_path``), not a read of every anchor row: a recursive query
    that asks for the next larger path each step (the "loose index scan" of SQLite's documentation,
    https://www.sqlite.org/lang_with.html). With 100,000 memories on 166 files: ~1 ms instead of ~20 ms.
    """
    return {r[0] for r in con.execute(
        "WITH RECURSIVE p(path) AS (SELECT MIN(path) FROM anchors UNION ALL "
        "SELECT (SELECT MIN(path) FROM anchors WHERE path > p.path) FROM p WHERE p.path IS NOT NULL) "
        "SELECT path FROM p WHERE path IS NOT NULL")}


def all_memories(con: sqlite3.Connection) -> list[tuple[dict[str, Any], str | None]]:
    """Every memory as its full dict (``memfile.memory_to_dict``), with its last known status."""
    out = []
    for r in con.execute("SELECT memory, status FROM memories"):
        try:
            out.append((json.loads(r[0]), r[1]))
        except (TypeError, ValueError):
            continue
    return out


def map_rows(con: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every memory row in brief, for a map of the code (``gitmem ui``), newest first: ``{"id", "type", "title",
    "scope", "updated", "created", "author", "session", "status" (None: not checked yet), "reason", "paths"
    (the files its anchors name, in anchor order, no repeats)}``. Two queries, no memory text read and
    no JSON decoded in Python (``bench/ui.py`` measures it at 10,000 memories)."""
    paths: dict[str, list[str]] = {}
    for mid, path in con.execute("SELECT memory_id, path FROM anchors WHERE now = 0 ORDER BY rowid"):
        listed = paths.setdefault(mid, [])
        if path not in listed:
            listed.append(path)
    cur = con.execute("SELECT id, type, title, scope, updated, status, reason, json_extract(memory, '$.created'), "
                      "json_extract(memory, '$.author'), json_extract(memory, '$.session') FROM memories "
                      "ORDER BY updated DESC, id DESC")
    return [{"id": mid, "type": mtype, "title": title, "scope": scope, "updated": updated, "status": status,
             "reason": reason, "paths": paths.get(mid, []), "created": created, "author": author, "session": session}
            for mid, mtype, title, scope, updated, status, reason, created, author, session in cur]


def status_counts(con: sqlite3.Connection) -> dict[str | None, int]:
    """Memories per recorded status (None: not checked yet): one indexed query."""
    return {r[0]: int(r[1]) for r in con.execute("SELECT status, COUNT(*) FROM memories GROUP BY status")}


def recent_ids(con: sqlite3.Connection, n: int) -> list[str]:
    """The ids of the ``n`` most recently updated memories, newest first."""
    return [r[0] for r in con.execute("SELECT id FROM memories ORDER BY updated DESC, id DESC LIMIT ?", (int(n),))]


def ids_with_foreign_anchors(con: sqlite3.Connection) -> set[str]:
    """Ids of the memories with a cross-repository anchor (an anchor entry with a ``repo``: ``files.memory_row``).
    A scan of the ``anchors`` column: the caller (``org.xrepo``) runs it once per check, never on a hook's path."""
    return {r[0] for r in con.execute("SELECT id FROM memories WHERE anchors LIKE '%\"repo\":%'")}


def ids_on_paths(con: sqlite3.Connection, paths: Iterable[str], *, moved: bool = True) -> set[str]:
    """Ids of the memories anchored (or, with ``moved``, whose code moved) to any of ``paths``."""
    out: set[str] = set()
    q = "SELECT DISTINCT memory_id FROM anchors WHERE path = ?" + ("" if moved else " AND now = 0")
    for p in paths:
        out.update(r[0] for r in con.execute(q, (p,)))
    return out


def anchored_symbols(con: sqlite3.Connection, paths: Iterable[str]) -> dict[str, set[str | None]]:
    """For each of ``paths`` that some anchor (original or where its code is now) is on: the symbols anchored
    there (None for a file anchor). Paths no memory is anchored to are absent. One index range per path
    (``anchors_path_symbol``)."""
    out: dict[str, set[str | None]] = {}
    for p in paths:
        names = {r[0] for r in con.execute("SELECT DISTINCT symbol FROM anchors WHERE path = ?", (p,))}
        if names:
            out[p] = names
    return out


def ids_on_symbols(con: sqlite3.Connection, changed: dict[str, set[str] | None]) -> set[str]:
    """Ids of memories with an anchor (original or where its code is now) on a changed symbol.

    ``changed``: path → qualified names changed there (None: the whole file). File
    anchors (no symbol) on a changed path always match.
    """
    out: set[str] = set()
    for path, names in changed.items():
        if names is None:
            out.update(r[0] for r in con.execute("SELECT DISTINCT memory_id FROM anchors WHERE path = ?", (path,)))
            continue
        out.update(r[0] for r in con.execute(
            "SELECT DISTINCT memory_id FROM anchors WHERE path = ? AND symbol IS NULL", (path,)))
        listed = sorted(names)
        for i in range(0, len(listed), 500):
            chunk = listed[i:i + 500]
            out.update(r[0] for r in con.execute(
                f"SELECT DISTINCT memory_id FROM anchors WHERE path = ? AND symbol IN ({', '.join('?' * len(chunk))})",
                (path, *chunk)))
    return out


def ids_near(con: sqlite3.Connection, paths: Iterable[str], symbols: Iterable[tuple[str, str]],
             per_path: int, pools: Iterable[Iterable[str]] = ()) -> set[str]:
    """Ids near a focus, bounded so that a file holding thousands of memories costs ``per_path`` rows.

    * ``paths`` (focus files, import neighbours): the ``per_path`` most recently
      updated memories anchored (or moved) to each;
    * each of ``pools`` (paths of one proximity tier together: the import
      neighbours, the other anchored files of the focus directories): the
      ``per_path`` most recent over the whole pool;
    * ``symbols`` ((path, qualified name) pairs): every memory anchored to one, or
      to a symbol nested in one.

    Exact for ranking within a budget of fewer than ``per_path`` lines: inside one
    proximity tier ``rank`` orders by recency, so older memories cannot reach it.
    """
    out: set[str] = set()
    # ties on ``updated`` break by id, as ``rank`` breaks them: the same candidates in every process
    q = "SELECT memory_id, updated FROM anchors WHERE path = ? ORDER BY updated DESC, memory_id LIMIT ?"
    for p in paths:
        out.update(r[0] for r in con.execute(q, (p, int(per_path))))
    for tier in pools:
        # every path's rows newest first, merged into one newest-first stream: the tier's ``per_path`` newest
        # distinct ids cost about ``per_path`` rows, not ``per_path`` rows from each of its (tens of) files
        taken: set[str] = set()
        streams = [con.execute(q, (p, int(per_path))) for p in tier]
        for mid, _updated in heapq.merge(*streams, key=_updated_key, reverse=True):
            if len(taken) >= per_path:
                break
            taken.add(mid)
        for cur in streams:
            cur.close()
        out.update(taken)
    for p, name in symbols:
        like = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ".%"
        out.update(r[0] for r in con.execute(
            "SELECT memory_id FROM anchors WHERE path = ? AND (symbol = ? OR symbol LIKE ? ESCAPE '\\')",
            (p, name, like)))
    return out


def _updated_key(row: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    """An anchors row's merge key, largest first: its ``updated`` ("" when unknown: sorts last, as SQLite orders
    NULL in DESC), then its id ascending (each code point negated), the order of ``ids_near``'s query."""
    return str(row[1] or ""), tuple(-ord(c) for c in str(row[0]))


def full_memories(con: sqlite3.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The full memory dicts (``memfile.memory_to_dict``) of ``ids`` (unknown ids skipped)."""
    ids = list(ids)
    out = []
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        q = f"SELECT memory FROM memories WHERE id IN ({', '.join('?' * len(chunk))})"
        for r in con.execute(q, chunk):
            try:
                out.append(json.loads(r[0]))
            except (TypeError, ValueError):
                continue
    return out


def fade_inputs(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, tuple[str, str | None, int | None,
                                                                                 int | None]]:
    """What ``usage.fade`` needs of each of ``ids``: id → (type, updated stamp, last use in seconds or None,
    latest commit time of its anchored files or None). Unknown ids are left out; one query per 500 ids."""
    ids = list(dict.fromkeys(ids))
    out: dict[str, tuple[str, str | None, int | None, int | None]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        q = ("SELECT m.id, m.type, m.updated, u.last_used, "
             "(SELECT MAX(c.committed) FROM anchors a JOIN code_times c ON c.path = a.path "
             "WHERE a.memory_id = m.id) FROM memories m LEFT JOIN usage u ON u.id = m.id "
             f"WHERE m.id IN ({', '.join('?' * len(chunk))})")
        try:
            for mid, mtype, updated, last, touched in con.execute(q, chunk):
                out[mid] = (str(mtype), updated, last, touched)
        except sqlite3.Error:
            return {}
    return out


def count(con: sqlite3.Connection) -> int:
    return int(con.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


# -- at the moment of action (the before-shell and after-failure hooks) --------------------------------------


def typed_on_paths(con: sqlite3.Connection, paths: Iterable[str], types: Sequence[str],
                   limit: int) -> dict[str, list[tuple[str, str | None]]]:
    """Memories of one of ``types`` anchored (or whose code moved) to one of ``paths``: id → [(path, symbol or
    None)], at most ``limit`` per path, newest first. Light: no memory text is read."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    types = list(types)
    q = (f"SELECT DISTINCT a.memory_id, a.path, a.symbol FROM anchors a JOIN memories m ON m.id = a.memory_id "
         f"WHERE a.path = ? AND m.type IN ({', '.join('?' * len(types))}) ORDER BY a.updated DESC LIMIT ?")
    for p in paths:
        for mid, path, symbol in con.execute(q, (p, *types, int(limit))):
            if (path, symbol) not in out.setdefault(mid, []):
                out[mid].append((path, symbol))
    return out


def typed_on_symbols(con: sqlite3.Connection, pairs: Iterable[tuple[str, str]], types: Sequence[str],
                     limit: int) -> dict[str, list[tuple[str, str | None]]]:
    """Memories of one of ``types`` anchored (or whose code moved) to one of the (path, qualified name) ``pairs``:
    to the name (or another definition of it: ``NAME#2``), to a symbol inside it (``NAME.…``) or to one holding
    it (``scripts`` for ``scripts.test``, a class for its method): id → [(path, symbol)], at most ``limit`` per
    pair, newest first. Light: no memory text is read. Finds what ``typed_on_paths`` leaves out of a file
    holding more than its ``limit``."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    types = list(types)
    kinds = ", ".join("?" * len(types))
    for path, name in dict.fromkeys(pairs):
        parts = name_parts(name)
        holders = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        q = (f"SELECT DISTINCT a.memory_id, a.path, a.symbol FROM anchors a JOIN memories m ON m.id = a.memory_id "
             f"WHERE a.path = ? AND (a.symbol IN ({', '.join('?' * len(holders))}) "
             f"OR substr(a.symbol, 1, ?) IN (?, ?)) AND m.type IN ({kinds}) ORDER BY a.updated DESC LIMIT ?")
        for mid, p, symbol in con.execute(q, (path, *holders, len(name) + 1, name + ".", name + "#", *types,
                                              int(limit))):
            if (p, symbol) not in out.setdefault(mid, []):
                out[mid].append((p, symbol))
    return out


def quoting(con: sqlite3.Connection, programs: Iterable[str], types: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(memory id, quoted command's words) for each command quoted by a memory of one of ``types`` whose program
    is one of ``programs`` (``commands`` table; the caller applies ``shellwords.concerns``)."""
    out: list[tuple[str, list[str]]] = []
    types = list(types)
    q = (f"SELECT c.memory_id, c.words FROM commands c JOIN memories m ON m.id = c.memory_id "
         f"WHERE c.program = ? AND m.type IN ({', '.join('?' * len(types))})")
    for prog in dict.fromkeys(programs):
        for mid, words in con.execute(q, (prog, *types)):
            try:
                w = json.loads(words)
            except ValueError:
                continue
            if isinstance(w, list):
                out.append((mid, [str(x) for x in w]))
    return out


def types_of(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """id → type of each of ``ids`` that exists."""
    ids = list(ids)
    out: dict[str, str] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        out.update((r[0], r[1]) for r in con.execute(
            f"SELECT id, type FROM memories WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
    return out
