"""Sharing local memories with the team: ``[share] policy`` and the pre-commit hook that applies it.

Captured memories start ``local`` (``.gitmem/local/memories/``, never
committed). The policy says when one becomes ``team`` (``.gitmem/memories/``):

* ``with-code`` (default): at ``git commit``, every local memory anchored to a
  symbol the staged change modifies (its fingerprint differs between HEAD and
  the index; for a file anchor, the file changes) is promoted and staged, so it
  travels in the same commit — and the same pull request — as the code it
  explains. Local memories that nothing promoted stay local.
* ``all``: every local memory is promoted at the next commit.
* ``manual``: only ``gitmem share ID``.

The pre-commit hook follows the rules of gitmem's other hooks: it never blocks a
commit on gitmem's own failure, and it prints one line saying what it staged.
It works on the index the commit is made from (``GIT_INDEX_FILE``: ``git commit
-a`` and ``git commit PATH`` use a temporary one).
"""

from __future__ import annotations

from pathlib import Path

from ..anchors import Resolver
from ..code.symbols import symbol_table
from ..errors import ConfigError
from ..git import git_blob_sha
from ..layout import GITMEM_DIR
from ..model import KIND_COMMIT, Memory
from ..store import Store

POLICIES = ("with-code", "all", "manual")


def policy(store: Store) -> str:
    """``[share] policy`` of config.toml (default ``with-code``).

    Raises:
        ConfigError: an unknown policy.
    """
    value = store.config.get("share", {}).get("policy", "with-code")
    if value not in POLICIES:
        raise ConfigError(f"[share] policy = {value!r} is not one of {', '.join(POLICIES)}", "fix .gitmem/config.toml")
    return str(value)


def share(store: Store, mem_id: str) -> Memory:
    """Make local memory ``mem_id`` a team memory (its file moves to ``.gitmem/memories/``); returns it.

    Raises:
        MemoryNotFound: no such memory.
    """
    m = store.get(mem_id)
    if m.scope != "team":
        m.scope = "team"
        from ..memories import write

        write(store, [m])
    return m


def touched_by_index(store: Store, index_file: str | None) -> tuple[set[str], set[tuple[str, str]]]:
    """What the staged change touches: (paths, {(path, qualified name) of symbols whose code changed})."""
    repo = store.repo
    resolver = Resolver(repo)
    head = repo.head()
    paths: set[str] = set()
    symbols: set[tuple[str, str]] = set()
    for ch in repo.staged_changes(index_file):
        for p in (ch.old_path, ch.new_path):
            if p:
                paths.add(p)
        if not ch.new_path or ch.new_path.startswith(GITMEM_DIR + "/"):
            continue
        data = repo.read_staged(ch.new_path, index_file)
        after = symbol_table(data, ch.new_path, blob_sha=git_blob_sha(data)) if data is not None else {}
        before = (resolver.table(head, ch.old_path or ch.new_path) or {}) if head else {}
        for name, sym in (after or {}).items():
            old = before.get(name)
            if old is None or old.fingerprint != sym.fingerprint:
                symbols.add((ch.new_path, name))
        for name in before:
            if name not in (after or {}):
                symbols.add((ch.old_path or ch.new_path, name))
    return paths, symbols


def _touches(m: Memory, paths: set[str], symbols: set[tuple[str, str]]) -> bool:
    for a in m.anchors:
        if a.kind == KIND_COMMIT or not a.path:
            continue
        if a.symbol is None:
            if a.path in paths:
                return True
            continue
        for path, name in symbols:
            if path == a.path and (name == a.symbol or name.startswith(a.symbol + ".")
                                   or a.symbol.startswith(name + ".")):
                return True
    return False


def share_with_commit(store: Store, index_file: str | None) -> list[Memory]:
    """The pre-commit hook's work: promote and stage the local memories the policy shares now.

    Raises:
        ConfigError, GitError, OSError: the hook wrapper logs them; the commit goes on.
    """
    mode = policy(store)
    if mode == "manual":
        return []
    local = [m for m in store.load_all().memories.values() if m.scope == "local"]
    if not local:
        return []
    if mode == "with-code":
        paths, symbols = touched_by_index(store, index_file)
        local = [m for m in local if _touches(m, paths, symbols)]
    shared = []
    for m in local:
        m.scope = "team"
        shared.append(m)
    if shared:
        from ..memories import write

        write(store, shared)
        written = [store.repo.relpath(str(store.path_for(m))) or "" for m in shared]
        store.repo.stage(written, index_file)
        # `git commit PATH` commits from a temporary index and then writes the real one from
        # <git dir>/index.lock: stage there too, or the shared file would look deleted after the commit
        real = store.repo.git_dir / "index.lock"
        if index_file and real.exists() and Path(index_file).resolve() != real.resolve():
            store.repo.stage(written, str(real))
    return shared


def summary(shared: list[Memory]) -> str | None:
    """The hook's line: ``gitmem: shared 2 memories with this commit: ID title; ID title``."""
    if not shared:
        return None
    items = "; ".join(f"{m.id[:12]} {m.title[:60]}" for m in shared[:5]) + (" …" if len(shared) > 5 else "")
    noun = "memory" if len(shared) == 1 else "memories"
    return f"gitmem: shared {len(shared)} {noun} with this commit: {items}"
