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
commit on gitmem's own failure, and it prints one line saying what it staged. It never
marks a memory shared that is not in the commit: when git ignores the team memory folder
(a ``.gitignore`` rule) or staging fails, the memories stay local, the commit prints one line
saying they were not shared and why, and ``gitmem doctor`` reports it (``gitmem.problems``)
until a later commit shares them.
It works on the index the commit is made from (``GIT_INDEX_FILE``: ``git commit
-a`` and ``git commit PATH`` use a temporary one). A step cut short by the hook's time limit says so at
the commit (``hook_entry``); the next commit's step shares what it left (``pending_base``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import problems
from ..anchors import Resolver
from ..code.symbols import symbol_table
from ..errors import ConfigError, GitError, GitmemError
from ..git import EMPTY_TREE, git_blob_sha
from ..layout import GITMEM_DIR, TEAM_MEMORIES
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


def touched_by_index(store: Store, index_file: str | None,
                     base: str | None = None) -> tuple[set[str], set[tuple[str, str]]]:
    """What the staged change touches: (paths, {(path, qualified name) of symbols whose code changed}), from HEAD,
    or from commit ``base`` (``EMPTY_TREE``: from nothing) to the index: what the commits since a cut-short
    pre-commit and this one changed."""
    repo = store.repo
    resolver = Resolver(repo)
    head = repo.head() if base is None else None if base == EMPTY_TREE else base
    paths: set[str] = set()
    symbols: set[tuple[str, str]] = set()
    for ch in repo.staged_changes(index_file, base):
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
        if a.kind == KIND_COMMIT or not a.path or not a.local:
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


@dataclass
class Shared:
    """What the pre-commit step did: memories ``shared`` (staged into the commit), memories it should have
    shared but left local (``not_shared``), and why (``reason``, ``hint``: one line each)."""

    shared: list[Memory] = field(default_factory=list)
    not_shared: list[Memory] = field(default_factory=list)
    reason: str = ""
    hint: str = ""


#: How to un-ignore gitmem's folder (the last matching rule wins in .gitignore).
UNIGNORE_HINT = ("un-ignore it: add `!/.gitmem/` after the rule that ignores it in .gitignore "
                 "(`git check-ignore -v .gitmem/memories/x.md` names the rule)")


def ignored_reason(store: Store) -> str | None:
    """Why new team memory files would not be committed (git ignores them), or None."""
    if store.repo.is_ignored(f"{TEAM_MEMORIES}/{'0' * 26}.md"):
        return f"git ignores {TEAM_MEMORIES}/ (a .gitignore rule)"
    return None


def _pending(store: Store) -> tuple[str | None, list[str]]:
    """The ``share-pending`` file (``hook_entry.mark_share_pending``): (its first line, the ids after it), (None, [])
    when there is none."""
    try:
        lines = store.layout.share_pending.read_text("ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, []
    return (lines[0].strip() if lines else ""), [ln.strip() for ln in lines[1:] if ln.strip()]


def pending_base(store: Store) -> str | None:
    """The commit HEAD was when an earlier pre-commit step began sharing and was cut short (``EMPTY_TREE`` before
    the first commit; the ``share-pending`` file, ``hook_entry.mark_share_pending``), or None: no step was cut
    short, or that commit is gone (rewritten history: then this commit's change alone counts)."""
    base, _ = _pending(store)
    if base is None:
        return None
    if not base:
        return EMPTY_TREE
    return base if store.repo.commit_exists(base) else None


def _note_sharing(store: Store, ids: list[str]) -> None:
    """Add ``ids`` to the ``share-pending`` file before their files become team files: a step cut short between
    that and staging them leaves team files no commit holds, which the next commit stages (``_left_unstaged``)."""
    path = store.layout.share_pending
    if not ids or not path.exists():  # no hook step runs (a direct call): nothing can cut it short
        return
    try:
        with path.open("a", encoding="ascii") as f:
            f.write("".join(f"{i}\n" for i in ids))
    except OSError:
        pass


def _left_unstaged(store: Store, index_file: str | None) -> list[Memory]:
    """The team memories a step cut short made team (``_note_sharing``) whose file the index does not hold as it is."""
    _, ids = _pending(store)
    out = []
    for mid in dict.fromkeys(ids):
        try:
            m = store.get(mid)
        except GitmemError:
            continue
        rel = store.repo.relpath(str(store.path_for(m))) or ""
        if m.scope == "team" and rel:
            try:
                on_disk = store.path_for(m).read_bytes()
            except OSError:
                continue
            if store.repo.read_staged(rel, index_file) != on_disk:
                out.append(m)
    return out


def done_pending(store: Store) -> None:
    """The pre-commit share finished: forget the marker and the problem of a step cut short. Never raises."""
    try:
        store.layout.share_pending.unlink(missing_ok=True)
    except OSError:
        pass
    problems.clear(store.repo.root, problems.SHARE_PENDING)


def share_with_commit(store: Store, index_file: str | None) -> Shared:
    """The pre-commit hook's work: promote and stage the local memories the policy shares now.

    With the ``with-code`` policy, the code counted is what this commit changes, and — when an earlier
    pre-commit step was cut short by its time limit (``pending_base``) — what the commits since then changed,
    so a memory that step left local is shared now. Done (whatever it shared), the marker goes
    (``done_pending``).

    Never leaves a memory marked shared that the commit does not hold: when git ignores the team
    folder or staging fails, the memories stay local (``Shared.not_shared``, ``reason``) and the
    failure is recorded for ``doctor`` (``problems.SHARE``); a commit that shares cleans the record.

    Raises:
        ConfigError, GitError, OSError: the hook wrapper logs them; the commit goes on.
    """
    base = pending_base(store)
    left = _left_unstaged(store, index_file) if base is not None or _pending(store)[1] else []
    res = _share_with_commit(store, index_file, base, left)
    done_pending(store)
    return res


def _share_with_commit(store: Store, index_file: str | None, base: str | None, left: list[Memory]) -> Shared:
    root = store.repo.root
    mode = policy(store)
    local = [m for m in store.load_all().memories.values() if m.scope == "local"] if mode != "manual" else []
    if local and mode == "with-code":
        paths, symbols = touched_by_index(store, index_file, base)
        local = [m for m in local if _touches(m, paths, symbols)]
    if not local and not left:
        return Shared()
    why = ignored_reason(store)
    if why is not None:
        out = Shared(not_shared=local, reason=why, hint=UNIGNORE_HINT)
        problems.record(root, problems.SHARE, f"{len(local)} memories were not shared with a commit: {why}",
                        UNIGNORE_HINT)
        return out
    from ..memories import write

    _note_sharing(store, [m.id for m in local])
    for m in local:
        m.scope = "team"
    if local:
        write(store, local)
    local = left + local  # a cut-short step's team files, staged now
    written = [store.repo.relpath(str(store.path_for(m))) or "" for m in local]
    try:
        store.repo.stage(written, index_file)
        # `git commit PATH` commits from a temporary index and then writes the real one from
        # <git dir>/index.lock: stage there too, or the shared file would look deleted after the commit
        real = store.repo.git_dir / "index.lock"
        if index_file and real.exists() and Path(index_file).resolve() != real.resolve():
            store.repo.stage(written, str(real))
    except GitError as e:
        for m in local:  # not in the commit: back to local, as before
            m.scope = "local"
        write(store, local)
        hint = "run `gitmem share ID` after fixing it, or commit again"
        problems.record(root, problems.SHARE, f"{len(local)} memories were not shared with a commit: "
                        f"staging failed: {e.message}", hint)
        return Shared(not_shared=local, reason=f"staging failed: {e.message}", hint=hint)
    problems.clear(root, problems.SHARE)
    return Shared(shared=local)


def summary(res: Shared) -> str | None:
    """The hook's line: ``gitmem: shared 2 memories with this commit: ID title; ID title``, or
    ``gitmem: NOT shared 2 memories (they stay local): <reason>; <hint>``."""
    def items(mems: list[Memory]) -> str:
        return "; ".join(f"{m.id[:12]} {m.title[:60]}" for m in mems[:5]) + (" …" if len(mems) > 5 else "")

    def noun(mems: list[Memory]) -> str:
        return "memory" if len(mems) == 1 else "memories"

    lines = []
    if res.shared:
        lines.append(f"gitmem: shared {len(res.shared)} {noun(res.shared)} with this commit: {items(res.shared)}")
    if res.not_shared:
        lines.append(f"gitmem: NOT shared {len(res.not_shared)} {noun(res.not_shared)} with this commit (they stay "
                     f"local): {res.reason}; {res.hint}")
    return "\n".join(lines) or None
