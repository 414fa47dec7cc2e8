"""``gitmem log ID``: a memory's own history interleaved with the history of the code it is about.

Two kinds of entries, newest first:

* ``memory`` — a commit that changed the memory's file (``git log --follow``):
  written, edited, re-anchored, retired, superseded;
* ``code`` — a commit since the memory was written (else since its anchor commit) that changed an anchored
  symbol's code (its fingerprint differs from the commit's first parent), or
  for a file anchor, the file; a rename of the file is followed. A commit that moved the code (a renamed
  file, a symbol renamed or moved from another file: ``Resolver.origin``) is shown as a move, ``moved from
  old.py::old_name``, and the history before it is followed where the code was. A shallow clone's boundary
  commit is never named as where the code or the memory came from: its entry says the history before it is
  not in this clone and how to fetch it (``anchors.shallow_note``).

A ``memory`` entry that changed the memory's anchors says so: ``memory re-anchored: a.py::f → b.py::g``.

Cost: one ``git log`` for the memory file, one per anchored path, and two symbol
tables (cached by blob SHA) per commit that touched an anchored path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..anchors import MAX_TRACE_DEPTH, Resolver, shallow_note
from ..model import KIND_COMMIT
from ..store import Store

#: Commits of code history examined per anchored path (newest first).
MAX_CODE_COMMITS = 200

#: Commits of the memory file (newest first) whose anchor changes are named (two small parses each).
MAX_MEMORY_DIFFS = 50


@dataclass
class LogEntry:
    """One line of the log: kind (memory, code), commit SHA, UNIX time, author, subject, what it did."""

    kind: str
    commit: str
    time: int
    author: str
    subject: str
    what: str


def memory_log(store: Store, mem_id: str) -> list[LogEntry]:
    """The log of memory ``mem_id`` (or a unique prefix), newest first.

    Raises:
        MemoryNotFound: no such memory.
    """
    m = store.get(mem_id)
    path = store.find_path(m.id)
    rel = store.repo.relpath(str(path)) if m.scope == "team" else ""  # a local file is not in git's history
    entries: list[LogEntry] = []
    if rel and m.scope == "team":
        for sha, t, author, subject, _ in store.repo.path_log(rel):
            entries.append(LogEntry("memory", sha, t, author, subject, "memory file changed"))
        for e in entries[:MAX_MEMORY_DIFFS]:
            e.what = _anchors_changed(store, e.commit, rel) or e.what
        if entries:
            first = entries[-1]
            first.what = ("memory file already there: " + shallow_note(first.commit, store.repo.is_shallow())
                          if store.repo.cut_short(first.commit) else "memory written")
    first_commit = entries[-1].commit if entries else None
    resolver = Resolver(store.repo)
    seen: set[tuple[str, str]] = set()
    from ..analyzer import memory_status
    from ..git import WORKTREE

    now = {st.anchor.key: st.path_now for st in memory_status(resolver, m, WORKTREE).anchors}
    for a in m.anchors:
        if a.kind == KIND_COMMIT or not a.path or not a.local:
            continue
        log_path = now.get(a.key) or a.path  # --follow walks back from where the file is now
        start = first_commit or a.commit  # since the memory was written (re-anchoring moves a.commit)
        if start and not store.repo.commit_exists(start):
            start = None  # not in this clone (a shallow one): its whole history here, up to the boundary
        _code_log(store, resolver, a.key, log_path, a.symbol, start, "HEAD", entries, seen, 0)
    order = {sha: i for i, sha in enumerate(store.repo.topo_order())}
    entries.sort(key=lambda e: (order.get(e.commit, len(order)), e.kind != "memory"))
    return entries


def _code_log(store: Store, resolver: Resolver, key: str, log_path: str, symbol: str | None, start: str | None,
              end: str, entries: list[LogEntry], seen: set[tuple[str, str]], depth: int) -> None:
    """Append the ``code`` entries of anchor ``key`` (its code at ``log_path``, ``symbol`` or the file) over
    ``start..end``; a commit that moved the code there is a move (``moved from old.py::old_name``), and the
    code's history before it is followed where it was (at most ``MAX_TRACE_DEPTH`` moves deep)."""
    revs = f"{start}..{end}" if start else end
    for sha, t, author, subject, name in store.repo.path_log(log_path, revs=revs, limit=MAX_CODE_COMMITS):
        if (sha, key) in seen:
            continue
        seen.add((sha, key))
        where = name or log_path  # the file's name in that commit (--follow)
        label = f"{where}::{symbol}" if symbol else where
        if store.repo.cut_short(sha):  # a shallow boundary: its diff against the missing parent adds every file
            entries.append(LogEntry("code", sha, t, author, subject,
                                    f"{label}: {shallow_note(sha, store.repo.is_shallow())}"))
            continue
        parents = store.repo.parents(sha)
        if not symbol:
            origin = resolver.origin(where, None, sha) if parents else None
            what = f"{label}: moved from {origin[0]}" if origin else f"{label}: file changed"
            entries.append(LogEntry("code", sha, t, author, subject, what))
            continue
        before = (resolver.table(parents[0], where) or {}) if parents else {}
        after = resolver.table(sha, where) or {}
        b, n = before.get(symbol), after.get(symbol)
        if b is None and n is None:
            continue  # a commit of the file, not of this symbol (it came here later, or left earlier)
        if b is not None and n is not None and b.fingerprint == n.fingerprint:
            continue  # the file changed, not the anchored symbol
        if b is not None and n is not None:
            what = f"{label}: code changed"
        elif b is not None or n is None:
            what = f"{label}: symbol gone from {where}"
        else:
            origin = resolver.origin(where, symbol, sha)
            if origin is None:
                what = f"{label}: symbol added at {where}"
            else:
                old_path, old_symbol = origin
                old = (resolver.table(parents[0], old_path) or {}).get(old_symbol or "")
                changed = old is not None and old_symbol == symbol and old.fingerprint != n.fingerprint
                what = f"{label}: moved from {old_path}::{old_symbol}" + (", code changed" if changed else "")
                file_renamed = old_symbol == symbol and resolver.source(parents[0], where) is None
                if not file_renamed and depth < MAX_TRACE_DEPTH:  # --follow carries on after a file rename only
                    _code_log(store, resolver, f"{old_path}::{old_symbol}", old_path, old_symbol, start,
                              parents[0], entries, seen, depth + 1)
        entries.append(LogEntry("code", sha, t, author, subject, what))


def _anchors_changed(store: Store, sha: str, rel: str) -> str | None:
    """``memory re-anchored: a.py::f → b.py::g`` when commit ``sha`` changed the memory file's anchors (its
    file ``rel`` there, against the first parent); None otherwise or when a side cannot be read."""
    from ..errors import MemoryFileError
    from ..memfile import parse_bytes

    parents = store.repo.parents(sha)
    old_data = store.repo.read(parents[0], rel) if parents else None
    new_data = store.repo.read(sha, rel)
    if old_data is None or new_data is None:
        return None
    try:
        old = [a.key for a in parse_bytes(old_data, Path(rel)).anchors]
        new = [a.key for a in parse_bytes(new_data, Path(rel)).anchors]
    except MemoryFileError:
        return None
    gone, came = [k for k in old if k not in new], [k for k in new if k not in old]
    if not gone and not came:
        return None
    return "memory re-anchored: " + ", ".join(gone or ["-"]) + " → " + ", ".join(came or ["-"])
