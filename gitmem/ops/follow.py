"""Following moved code: memories whose anchored code only moved (a renamed file, a function moved to another
file or renamed, the code unchanged) are re-anchored to where the code is now (``[review] follow_moves``,
default on). The code did not change, so the memory is as true as before.

Two places do it:

* ``follow_staged`` — the pre-commit hook: the staged change is analysed as a commit (``Repo.staged_commit``,
  a stand-in commit of the index's tree on HEAD, read by the analyzer's move detection like any commit), the
  memories it moves are re-anchored and their files staged into the same commit, so a commit never leaves
  gitmem's files modified in the work tree. The new anchors are recorded against HEAD with the code as
  staged (the commit's SHA does not exist yet), as an anchor made on uncommitted code is: the resolver finds
  the recorded code in the next commit touching the file (``Resolver._recorded``).
* ``follow_moves`` — the post-commit hook, the fallback when pre-commit did not run (``--no-verify``, a
  hook manager that skipped gitmem): re-anchors against the new HEAD in the work tree, leaving the memory
  files modified for the next commit.

Both skip a memory whose file has changes they must not commit (a team memory file edited and not staged),
and do nothing while a rebase, cherry-pick, revert, am or merge is in progress (a written file would stop
its next step). A re-anchor keeps the old key in ``Anchor.was`` (``ops.reanchor``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..analyzer import analyze_commit, anchored_paths
from ..anchors import Resolver
from ..errors import GitmemError
from ..model import Memory, MemoryStatus, Status
from ..store import Store

#: What git leaves in its folder while an operation that makes commits itself is in progress.
IN_PROGRESS = ("rebase-merge", "rebase-apply", "sequencer", "CHERRY_PICK_HEAD", "REVERT_HEAD", "MERGE_HEAD")


@dataclass
class Followed:
    """What the pre-commit follow did: ``followed`` (re-anchored, team files staged into the commit), each
    with its changes (``old key → new key``); ``skipped``: moved memories left for review, with why."""

    followed: list[Memory] = field(default_factory=list)
    changes: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def enabled(store: Store) -> bool:
    """``[review] follow_moves`` (default true)."""
    return bool(store.config.get("review", {}).get("follow_moves", True))


def in_progress(store: Store) -> bool:
    """Whether git is in the middle of a rebase, cherry-pick, revert, am or merge."""
    return any((store.repo.git_dir / n).exists() for n in IN_PROGRESS)


def only_moved(went: list[MemoryStatus]) -> list[MemoryStatus]:
    """The memories of ``went`` whose code only moved: status moved, every anchor fresh or moved."""
    return [ms for ms in went if ms.status == Status.MOVED
            and all(a.status in (Status.FRESH, Status.MOVED) for a in ms.anchors)
            and any(a.status == Status.MOVED and a.anchor.local for a in ms.anchors)]


def follow_staged(store: Store, index_file: str | None) -> Followed:
    """The pre-commit hook's follow: re-anchor the memories the staged change moves, stage them into the commit.

    ``index_file``: the index the commit is made from (``GIT_INDEX_FILE``; ``git commit -a`` and
    ``git commit PATH`` use a temporary one). A team memory is followed only when its file on disk is
    the one staged (nothing of the user's unstaged edits gets committed); a local memory always (its
    file lives in git's folder). A memory that cannot be re-anchored is left for review (``skipped``).

    Raises:
        GitError, OSError: the staged tree could not be read or the files not staged (the memories are
            then left as they were: nothing half-done reaches the commit). The hook records it
            (``problems.FOLLOW_MOVES``) and the commit goes on.
    """
    out = Followed()
    if not enabled(store) or in_progress(store):
        return out
    repo = store.repo
    head = repo.head()
    if head is None:
        return out  # a first commit moves nothing
    staged = repo.staged_commit(index_file)
    if staged is None:
        return out
    resolver = Resolver(repo)  # one for the analysis and the re-anchors: the tables and git walks are shared
    moved = only_moved(analyze_commit(store, staged, resolver=resolver).went_out_of_date)
    if not moved:
        return out
    from .reanchor import reanchor
    from .share import ignored_reason

    ignored = ignored_reason(store)  # team memory files that git ignores cannot go into the commit
    before: list[Memory] = []
    to_stage: list[str] = []
    try:
        for ms in moved:
            m = ms.memory
            rel = ""
            if m.scope == "team" and ignored is not None:
                out.skipped[m.id] = ignored
                continue
            if m.scope == "team":
                path = store.path_for(m)
                rel = repo.relpath(str(path))
                try:
                    on_disk: bytes | None = path.read_bytes()
                except OSError:
                    on_disk = None
                if on_disk is None or repo.read_staged(rel, index_file) != on_disk:
                    out.skipped[m.id] = "its memory file has changes that are not staged"
                    continue
            original = copy.deepcopy(m)
            try:
                r = reanchor(store, m.id, rev=staged, record_at=head, resolver=resolver)
            except GitmemError as e:
                out.skipped[m.id] = e.message
                continue
            before.append(original)
            out.followed.append(r.memory)
            out.changes[m.id] = r.changes
            if rel:
                to_stage.append(rel)
    finally:  # stopped midway too (the hook's time limit): what was re-anchored goes into the commit
        try:
            repo.stage_with_commit(to_stage, index_file)
        except Exception:
            from ..memories import write

            write(store, before)  # not in the commit: the files go back to what they were
            try:  # and the commit's index too (staging into it may have worked before the second index failed)
                repo.stage(to_stage, index_file)
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            raise
    return out


def summary(res: Followed) -> str | None:
    """The hook's lines: ``gitmem: 1 memory followed its moved code in this commit: ID a.py::f → b.py::g``, and
    for moved memories it left for review, ``gitmem: 1 memory not re-anchored in this commit (gitmem stale):
    ID why``; None when nothing moved."""
    lines = []
    if res.followed:
        n = len(res.followed)
        items = "; ".join(f"{m.id[:12]} {', '.join(c.split(' (')[0] for c in res.changes.get(m.id, []))}"
                          for m in res.followed[:3]) + (" …" if n > 3 else "")
        lines.append(f"gitmem: {n} {'memory' if n == 1 else 'memories'} followed {'its' if n == 1 else 'their'} "
                     f"moved code in this commit: {items}")
    if res.skipped:
        n = len(res.skipped)
        items = "; ".join(f"{mid[:12]} {why}" for mid, why in list(res.skipped.items())[:3]) + (" …" if n > 3 else "")
        lines.append(f"gitmem: {n} {'memory' if n == 1 else 'memories'} whose code moved not re-anchored in this "
                     f"commit (gitmem stale): {items}")
    return "\n".join(lines) or None


def follow_moves(store: Store, went: list[MemoryStatus]) -> list[str]:
    """The post-commit follow: re-anchor, against HEAD, the memories of ``went`` whose code only moved.

    The fallback for a commit whose pre-commit step did not run: the memory files are left modified
    in the work tree, to be committed. Skipped for a memory whose anchored files or team memory file
    have uncommitted changes. Returns the ids re-anchored; a memory that cannot be re-anchored is left
    for review.
    """
    if not enabled(store):
        return []
    moved = only_moved(went)
    if not moved:
        return []  # the usual case: no git call at all (listing dirty files reads git's whole index)
    if in_progress(store):
        return []
    from .reanchor import reanchor

    repo = store.repo
    head = repo.head()
    dirty = set(repo.dirty_files(skip_gitmem=True))
    done = []
    for ms in moved:
        now = {a.path_now for a in ms.anchors if a.path_now} | anchored_paths(ms.memory)
        if now & dirty:
            continue
        path = store.path_for(ms.memory)  # a local memory lives in git's folder: never "modified" in git
        if ms.memory.scope == "team" and path.exists() and repo.modified(repo.relpath(str(path))):
            continue
        try:
            reanchor(store, ms.memory.id, rev=head)
        except GitmemError:
            continue
        done.append(ms.memory.id)
    return done
