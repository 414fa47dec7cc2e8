"""The diff analyzer: which memories a commit (or a range, or the working tree) affects, and how.

``evaluate`` resolves every anchor of the given memories at one revision.
``analyze_commit`` is what the post-commit hook runs: it looks only at the
memories anchored to files the commit changed (following git's rename
detection), so its work is proportional to the changed, anchored files and not
to the repository or the number of memories. The git hooks record the
statuses in the hook index (``catalog_sync.record_statuses``).

Must not import: lancedb.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .anchors import Resolver
from .code.symbols import lookup
from .git import WORKTREE
from .layout import GITMEM_DIR
from .model import KIND_COMMIT, Memory, MemoryStatus, Status
from .store import Store
from .textsplit import name_base


@dataclass
class CommitAnalysis:
    """What one commit did to the memories.

    Attributes:
        commit: the analysed commit's full SHA.
        affected: statuses at ``commit`` of every memory anchored to a file the commit changed.
        went_out_of_date: the subset that this commit made not fresh (the reason names it).
    """

    commit: str
    affected: list[MemoryStatus] = field(default_factory=list)
    went_out_of_date: list[MemoryStatus] = field(default_factory=list)


def memory_status(resolver: Resolver, m: Memory, rev: str | None) -> MemoryStatus:
    """Resolve every anchor of ``m`` at ``rev`` (WORKTREE = files on disk)."""
    return MemoryStatus(m, [resolver.status(a, rev) for a in m.anchors])


def evaluate(store: Store, rev: str | None = WORKTREE, memories: Iterable[Memory] | None = None,
             resolver: Resolver | None = None) -> list[MemoryStatus]:
    """Statuses of ``memories`` (default: all valid memories) at ``rev``, sorted by memory id."""
    resolver = resolver or Resolver(store.repo)
    mems = list(memories) if memories is not None else list(store.load_all().memories.values())
    return [memory_status(resolver, m, rev) for m in sorted(mems, key=lambda m: m.id)]


def anchored_paths(m: Memory) -> set[str]:
    """Repo-relative paths a memory's anchors point at (commit anchors and cross-repository anchors have none)."""
    return {a.path for a in m.anchors if a.kind != KIND_COMMIT and a.path and a.local}


def memories_touching(memories: Iterable[Memory], paths: set[str]) -> list[Memory]:
    """The memories with at least one anchor on one of ``paths``."""
    return [m for m in memories if anchored_paths(m) & paths]


def changed_symbols(resolver: Resolver, changes: Iterable[Any], old: str | None,
                    new: str, anchored: dict[str, set[str | None]] | None = None) -> dict[str, set[str] | None]:
    """Per changed path, the qualified names whose fingerprint differs between ``old`` and ``new``.

    A name present on one side only counts (added, deleted, renamed, moved), and so
    do the other names anchors may know it by (``Symbol.aliases``, the name
    without its ``#2`` / parameter-type suffix).
    None for a path whose symbols cannot be compared: added, deleted, renamed or
    copied files, files that do not parse on one side, and git-lfs files whose content is not in this clone
    (``Resolver.content_here``).

    ``anchored`` (``catalog.db.anchored_symbols`` of the changed paths): what memories are anchored to. A
    path absent from it is left out (no memory can be affected there: nothing is parsed); a modified path
    holding only file anchors maps to an empty set without parsing (file anchors match any change). None:
    every path counts.
    """
    out: dict[str, set[str] | None] = {}
    for ch in changes:
        if anchored is not None and not any(p in anchored for p in (ch.old_path, ch.new_path) if p):
            continue
        if ch.status == "M" and ch.old_path == ch.new_path and ch.new_path:
            if anchored is not None and not any(n is not None for n in anchored[ch.new_path]):
                out[ch.new_path] = set()
                continue
            before, after = resolver.table(old, ch.new_path), resolver.table(new, ch.new_path)
            if before is None or after is None or not (resolver.content_here(old, ch.new_path)
                                                       and resolver.content_here(new, ch.new_path)):
                # (an LFS file whose content is not in this clone: its symbols cannot be compared)
                out[ch.new_path] = None
                continue
            names = {n for n in set(before) | set(after)
                     if n not in before or n not in after or before[n].fingerprint != after[n].fingerprint}
            # anchors may name these symbols as an earlier gitmem did (f#3), or by the plain name of a
            # definition that now has same-named siblings (Parser.parse for Parser.parse(String))
            for n in list(names):
                for t in (before, after):
                    if n in t:
                        names.update(t[n].aliases)
                names.add(name_base(n))
            out[ch.new_path] = names
        else:
            for p in (ch.old_path, ch.new_path):
                if p:
                    out[p] = None
    return out


def _load_on_symbols(con: Any, changed: dict[str, set[str] | None]) -> list[Memory]:
    from .catalog import db as catalog_db
    from .catalog import files as catalog_files

    ids = catalog_db.ids_on_symbols(con, changed) if changed else set()
    return sorted(catalog_files.load(con, sorted(ids)).values(), key=lambda m: m.id)


def memories_on_changes(store: Store, resolver: Resolver, changes: list[Any], old: str | None,
                        new: str) -> list[Memory] | None:
    """The memories anchored (or whose code now is) to a symbol ``changes`` changed from ``old`` to ``new``
    (``changed_symbols``), or to a changed file as a whole; None when the catalog cannot be opened.

    File anchors on a changed path always count; symbol anchors only when their symbol changed (every
    anchor on an added, deleted or renamed path). The catalog is asked first what is anchored where: a
    changed file no memory is anchored to is not parsed, nor one holding only file anchors (a commit
    touching only such files parses nothing). The cost follows the changed, anchored symbols, not the
    memories on the changed files.
    """
    from .catalog import db as catalog_db
    from .catalog import files as catalog_files

    if not changes:
        return []
    # no stat of every memory file (in_place=False): a committed memory file's edit is in git's tree already
    con = catalog_files.open_current(store, in_place=False)
    if con is None:
        return None
    try:
        paths = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
        anchored = catalog_db.anchored_symbols(con, sorted(paths))
        return _load_on_symbols(con, changed_symbols(resolver, changes, old, new, anchored))
    finally:
        con.close()


def analyze_commit(store: Store, commit: str, memories: Iterable[Memory] | None = None,
                   resolver: Resolver | None = None) -> CommitAnalysis:
    """Analyse one commit against its first parent (root commit: against the empty tree).

    Returns the statuses at ``commit`` of the memories anchored to what the
    commit changed — symbols whose fingerprint it changed, files it added,
    deleted or renamed, file anchors on files it modified (with ``memories``
    given: every memory on a changed file) — and which of them this commit
    made not fresh. ``resolver``: one to share caches with (default: a new one).
    """
    repo = store.repo
    sha = repo.resolve(commit)
    parents = repo.parents(sha)
    parent = parents[0] if parents else None
    resolver = resolver or Resolver(repo)
    changes = resolver.changes(parent, sha)
    changed: set[str] = set()
    for ch in changes:
        changed.update(p for p in (ch.old_path, ch.new_path) if p)
    mems = None
    if memories is None:
        # only memories on symbols whose fingerprint this commit changed can go out of date by it
        mems = memories_on_changes(store, resolver, changes, parent, sha)
    if mems is None:
        mems = memories_touching(memories if memories is not None else store.load_all().memories.values(), changed)
    result = CommitAnalysis(sha)
    for m in mems:
        if _stale_before_and_after(resolver, m, parent, sha):
            continue  # nothing this commit did can be news for it (and naming its old change walks history)
        ms = memory_status(resolver, m, sha)
        result.affected.append(ms)
        if any(a.status != Status.FRESH and a.commit == sha for a in ms.anchors):
            result.went_out_of_date.append(ms)
    return result


def _stale_before_and_after(resolver: Resolver, m: Memory, parent: str | None, sha: str) -> bool:
    """True when every anchor of ``m`` is a symbol that was already stale at ``parent`` (same file, same
    name, another fingerprint) and still exists there at ``sha``: stale it stays, by an older commit."""
    anchors = [a for a in m.anchors if a.kind != KIND_COMMIT and a.local]  # a foreign one: no commit here moves it
    if parent is None or not anchors:
        return False
    for a in anchors:
        if a.symbol is None or a.fingerprint is None or a.path is None:
            return False
        t_before = resolver.table(parent, a.path) or {}
        name = lookup(t_before, a.symbol, fingerprint=a.fingerprint)
        before = t_before.get(name) if name else None
        if before is None or before.fingerprint == a.fingerprint or a.fingerprint in before.parts:
            return False
        if lookup(resolver.table(sha, a.path) or {}, name or a.symbol, like=before) is None:
            return False
    return True


def analyze_range(store: Store, old: str | None, new: str) -> tuple[list[MemoryStatus], set[str]]:
    """Statuses at ``new`` of the memories on what changed from ``old`` to ``new`` (a merge, a checkout),
    narrowed to changed symbols as in ``analyze_commit``; and the paths that changed."""
    resolver = Resolver(store.repo)
    changes = resolver.changes(old, new)
    paths = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
    code = [ch for ch in changes if not (ch.new_path or ch.old_path or "").startswith(GITMEM_DIR + "/")]
    mems = memories_on_changes(store, resolver, code, old, new)
    if mems is None:
        mems = memories_touching(store.load_all().memories.values(), paths)
    return evaluate(store, new, mems, resolver), paths
