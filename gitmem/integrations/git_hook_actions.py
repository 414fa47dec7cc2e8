"""What each git hook does (called by ``gitmem.hook_entry`` inside its never-fail wrapper).

* ``pre-commit``: mark the memory files an agent's file tools wrote as the agent's text and stage them
  (``gitmem.ops.agent_edits``; one line names them). Then share the local memories the ``[share] policy``
  says travel with this commit (``gitmem.ops.share``), staged into the commit's index; one line says which,
  or which could not be shared and why (also a problem for ``doctor``: ``gitmem.problems``).
  Then re-anchor the memories whose code the staged change only moves or renames and stage
  them into the same commit (``gitmem.ops.follow.follow_staged``); one line says which, or
  that it failed (a problem for ``doctor``, job ``follow-moves``).
* ``post-commit``: analyse the new commit; one line on stderr only when it made
  memories not fresh (``gitmem: 2 memories may be stale (gitmem stale)``). Memories whose
  code it moved and that pre-commit did not follow (``--no-verify``) follow it now, in the
  work tree (``follow_moves``).
* ``post-merge``, ``post-checkout``, ``post-rewrite``: re-check the anchors on
  the files that changed; when memory files changed, sync the index in a
  detached process (the index import alone costs about a second; git must not
  wait for it); and check the hook index's statuses at the new working tree in another
  (``settle_statuses``: the agent hooks doubt what is on files changed since the last check).
  Queries sync too, so a skipped sync only costs the next query.

Must not import: lancedb (the index is synced in another process).
"""

from __future__ import annotations

from pathlib import Path

from .. import infra
from ..analyzer import CommitAnalysis, analyze_commit, analyze_range
from ..errors import GitError
from ..git import Repo
from ..layout import TEAM_MEMORIES
from ..model import MemoryStatus, Status
from ..store import Store

#: Paths whose change means the index needs a sync.
MEMORY_DIRS = (TEAM_MEMORIES + "/",)

#: The all-zero SHA git passes for "no commit" (e.g. post-checkout after a clone).
NULL_SHA = "0" * 40


def run_hook(name: str, args: list[str], stdin: bytes, repo_root: Path, *,
             index_file: str | None = None) -> str | None:
    """Run gitmem's part of git hook ``name``; returns a line for the user, or None.

    ``index_file``: the ``GIT_INDEX_FILE`` git gave the hook (pre-commit stages into it).
    Raises whatever goes wrong: the caller (``hook_entry``) logs it and exits 0.
    """
    repo = Repo(repo_root)
    store = Store(repo, require=False)
    if not store.dir.is_dir():
        return None
    store.enable_symbol_cache()
    if name == "pre-commit":
        from ..ops.share import share_with_commit, summary

        marked = pre_commit_mark_agents_text(store, index_file)
        shared = summary(share_with_commit(store, index_file))
        followed = pre_commit_follow(store, index_file)
        return "\n".join(line for line in (marked, shared, followed) if line) or None
    if name == "post-commit":
        return post_commit(store)
    if name == "post-merge":
        return _recheck_range(store, "ORIG_HEAD", "HEAD")
    if name == "post-checkout":
        prev, new = (args + ["", ""])[:2]
        if prev == new and prev:
            return None
        return _recheck_range(store, None if prev in ("", NULL_SHA) else prev, new or "HEAD")
    if name == "post-rewrite":
        pairs = [ln.split()[:2] for ln in stdin.decode("utf-8", "replace").splitlines() if ln.split()]
        out: dict[str, MemoryStatus] = {}
        for old_new in pairs:
            if len(old_new) == 2 and repo.commit_exists(old_new[1]):
                for ms in analyze_commit(store, old_new[1]).went_out_of_date:
                    out[ms.memory.id] = ms
        # post-commit already reported an amend; a rebase reports once for all its commits
        if args[:1] == ["amend"]:
            return None
        settle_statuses(store)
        return summary_line(list(out.values()))
    return None


def post_commit(store: Store) -> str | None:
    """Analyse HEAD; the summary line when it made memories not fresh."""
    head = store.repo.head()
    if head is None:
        return None
    result: CommitAnalysis = analyze_commit(store, head)
    from ..catalog.sync import record_statuses

    # the Claude Code hooks read statuses from the hook index: this commit's news reaches them now
    record_statuses(store, {ms.memory.id: ms for ms in result.affected}, rev=head)
    from .. import problems

    failed = ""
    try:
        followed = follow_moves(store, result.went_out_of_date)
        problems.clear(store.repo.root, problems.FOLLOW_MOVES)
    except Exception as e:  # noqa: BLE001 - following is a convenience: never lose the report for it
        followed = []
        failed = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        problems.record(store.repo.root, problems.FOLLOW_MOVES, f"moved code could not be followed: {failed}",
                        "run `gitmem stale` to review the moved memories (keep re-anchors them)")
    went = [ms for ms in result.went_out_of_date if ms.memory.id not in followed]
    line = summary_line(went)
    if failed:
        line = (f"{line}\n" if line else "") + f"gitmem: could not re-anchor memories to moved code ({failed}): " \
                                                "gitmem stale"
    if followed:
        noun = "memory" if len(followed) == 1 else "memories"
        their = "its" if len(followed) == 1 else "their"
        line = (f"{line}\n" if line else "") + (f"gitmem: {len(followed)} {noun} followed {their} "
                                                 "moved code (re-anchored; commit .gitmem/ to share)")
    from ..invariants import breaks

    parents = store.repo.parents(head)
    touched = [ms.memory for ms in result.affected]
    lines = [f"gitmem: invariant broken: {b.line()}" for b in breaks(store.repo, touched, parents[0] if parents
                                                                       else None, head)]
    return "\n".join(([line] if line else []) + lines) or None


def pre_commit_mark_agents_text(store: Store, index_file: str | None) -> str | None:
    """Mark the memory files an agent's file tools wrote as the agent's text, staged into this commit
    (``ops.agent_edits.mark_agents_text``); the line for the user, or None. Never raises: a failure is said in
    one line and the next commit tries again."""
    from ..ops.agent_edits import mark_agents_text, summary

    try:
        return summary(mark_agents_text(store, index_file))
    except Exception as e:  # noqa: BLE001 - never stop the commit for it; the memories stay pending
        failed = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        return f"gitmem: could not mark the memories an agent edited as the agent's text ({failed})"


def pre_commit_follow(store: Store, index_file: str | None) -> str | None:
    """Follow the code the staged change moves (``ops.follow.follow_staged``); the line for the user, or None.

    Never raises for a failure to follow: it is recorded (``problems.FOLLOW_MOVES``, reported by
    ``doctor`` until a follow next succeeds) and said in one line; the post-commit hook then tries again.
    """
    from .. import problems
    from ..ops.follow import follow_staged, summary

    try:
        res = follow_staged(store, index_file)
    except Exception as e:  # noqa: BLE001 - following is a convenience: never stop the commit for it
        failed = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        problems.record(store.repo.root, problems.FOLLOW_MOVES, f"moved code could not be followed: {failed}",
                        "run `gitmem stale` to review the moved memories (keep re-anchors them)")
        return f"gitmem: could not re-anchor memories to moved code in this commit ({failed}): gitmem stale"
    problems.clear(store.repo.root, problems.FOLLOW_MOVES)
    return summary(res)


def follow_moves(store: Store, went: list[MemoryStatus]) -> list[str]:
    """The post-commit follow (``ops.follow.follow_moves``): the ids of the memories re-anchored."""
    from ..ops.follow import follow_moves as follow

    return follow(store, went)


def _recheck_range(store: Store, old: str | None, new: str) -> str | None:
    repo = store.repo
    try:
        new_sha = repo.resolve(new)
        old_sha = repo.resolve(old) if old else None
    except GitError:  # ORIG_HEAD may be missing (a merge into an unborn branch)
        return None
    from ..analyzer import memory_status
    from ..anchors import Resolver
    from ..catalog.sync import record_statuses

    statuses, paths = analyze_range(store, old_sha, new_sha)
    record_statuses(store, {s.memory.id: s for s in statuses}, rev=new_sha)
    if any(p.startswith(MEMORY_DIRS) for p in paths):
        spawn_index_sync(store)  # only when memory files changed; otherwise the index is current
    if paths:
        settle_statuses(store)
    # Only memories that were fresh at the commit before this merge / checkout are news. Asked of the code at
    # ``old`` (only for the few not fresh now), not of the hook index: a background check an earlier hook
    # started (``settle_statuses``) may already have recorded the new working tree's statuses there.
    resolver = Resolver(repo)
    news = [s for s in statuses if s.status != Status.FRESH
            and (old_sha is None or memory_status(resolver, s.memory, old_sha).status == Status.FRESH)]
    return summary_line(news)


def summary_line(went: list[MemoryStatus]) -> str | None:
    """``gitmem: N memories may be stale (gitmem stale)``, or None when ``went`` is empty."""
    if not went:
        return None
    moved = sum(1 for s in went if s.status == Status.MOVED)
    deleted = sum(1 for s in went if s.status == Status.DELETED)
    stale = len(went) - moved - deleted
    parts = []
    if stale:
        parts.append(f"{_count(stale)} may be stale")
    if deleted:
        parts.append(f"{_count(deleted)} lost {'its' if deleted == 1 else 'their'} code")
    if moved:
        parts.append(f"{_count(moved)} moved with {'its' if moved == 1 else 'their'} code")
    return f"gitmem: {', '.join(parts)} (gitmem stale)"


def _count(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def settle_statuses(store: Store) -> None:
    """Start the hook index's status check at the working tree (``catalog.sync.spawn_sync``, detached) after
    git rewrote files: until it has run, the agent hooks doubt every fresh memory on those files ("may be
    stale", ``core.as_shown``) and give it again to a session that was given it fresh.

    Raises:
        OSError: the process could not be started.
    """
    from ..catalog.sync import spawn_sync

    spawn_sync(store.repo.root)


def spawn_index_sync(store: Store) -> None:
    """Start ``gitmem sync --quiet`` detached (new session, output to ``sync.log``); never waits for it.

    Raises:
        OSError: the process could not be started.
    """
    infra.spawn_detached("gitmem.cli", "sync", "--quiet", cwd=store.repo.root, log=store.log_dir / "sync.log")
