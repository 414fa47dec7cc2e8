"""``gitmem log ID``: a memory's own history interleaved with the history of the code it is about.

Two kinds of entries, newest first:

* ``memory`` — a commit that changed the memory's file (``git log --follow``):
  written, edited, re-anchored, retired, superseded;
* ``code`` — a commit since the memory was written (else since its anchor commit) that changed an anchored
  symbol's code (its fingerprint differs from the commit's first parent), or
  for a file anchor, the file; a rename of the file is followed.

Cost: one ``git log`` for the memory file, one per anchored path, and two symbol
tables (cached by blob SHA) per commit that touched an anchored path.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..anchors import Resolver
from ..model import KIND_COMMIT
from ..store import Store

#: Commits of code history examined per anchored path (newest first).
MAX_CODE_COMMITS = 200


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
        if entries:
            entries[-1].what = "memory written"
    first_commit = entries[-1].commit if entries else None
    resolver = Resolver(store.repo)
    seen: set[tuple[str, str]] = set()
    from ..analyzer import memory_status
    from ..git import WORKTREE

    now = {st.anchor.key: st.path_now for st in memory_status(resolver, m, WORKTREE).anchors}
    for a in m.anchors:
        if a.kind == KIND_COMMIT or not a.path:
            continue
        log_path = now.get(a.key) or a.path  # --follow walks back from where the file is now
        start = first_commit or a.commit  # since the memory was written (re-anchoring moves a.commit)
        revs = f"{start}..HEAD" if start else "HEAD"
        for sha, t, author, subject, name in store.repo.path_log(log_path, revs=revs, limit=MAX_CODE_COMMITS):
            if (sha, a.key) in seen:
                continue
            seen.add((sha, a.key))
            where = name or a.path
            parents = store.repo.parents(sha)
            if a.symbol:
                before = (resolver.table(parents[0], where) or {}) if parents else {}
                after = resolver.table(sha, where) or {}
                b, n = before.get(a.symbol), after.get(a.symbol)
                if b is not None and n is not None and b.fingerprint == n.fingerprint:
                    continue  # the file changed, not the anchored symbol
                what = (f"{a.key}: code changed" if b is not None and n is not None else
                        f"{a.key}: symbol added at {where}" if n is not None else f"{a.key}: symbol gone from {where}")
            else:
                what = f"{a.key}: file changed" + (f" (now {where})" if where != a.path else "")
            entries.append(LogEntry("code", sha, t, author, subject, what))
    order = {sha: i for i, sha in enumerate(store.repo.topo_order())}
    entries.sort(key=lambda e: (order.get(e.commit, len(order)), e.kind != "memory"))
    return entries
