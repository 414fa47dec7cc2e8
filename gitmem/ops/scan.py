"""``gitmem scan``: re-run the diff analyzer over a range of commits.

For catching up when hooks did not run: a fresh clone, ``--no-verify``
commits, a merge made on a web UI. Each commit of ``A..B`` is analysed in
order (filling the status cache), then every memory is evaluated at ``B``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analyzer import analyze_commit, evaluate
from ..anchors import Resolver
from ..errors import GitError
from ..model import MemoryStatus
from ..store import Store


@dataclass
class ScanResult:
    """``commits``: how many commits were analysed; ``statuses``: every memory at the range end."""

    commits: int = 0
    end: str | None = None
    statuses: list[MemoryStatus] = field(default_factory=list)


def scan(store: Store, rev_range: str | None = None) -> ScanResult:
    """Analyse ``A..B`` commit by commit (or just evaluate at a single revision / HEAD).

    Raises:
        GitError: a revision in the range does not exist.
    """
    repo = store.repo
    memories = list(store.load_all().memories.values())
    res = ScanResult()
    if rev_range and ".." in rev_range:
        old, _, new = rev_range.partition("..")
        new_sha = repo.resolve(new or "HEAD")
        old_sha = repo.resolve(old) if old else None
        try:
            commits = repo.commits_between(old_sha, new_sha)
        except GitError as e:
            raise GitError(f"cannot list the commits of {rev_range}: {e.message}",
                           "in a shallow clone, `git fetch --deepen=N` (or --unshallow) first") from None
        for c in commits:
            analyze_commit(store, c, memories)
            res.commits += 1
        res.end = new_sha
    else:
        res.end = repo.resolve(rev_range or "HEAD") if (rev_range or repo.has_commits()) else None
    if res.end is not None:
        res.statuses = evaluate(store, res.end, memories, Resolver(repo))
        if res.end == repo.head():  # the hook index holds statuses at the checkout, not at other commits
            from ..catalog.sync import record_statuses

            record_statuses(store, {ms.memory.id: ms for ms in res.statuses}, rev=res.end)
    return res
