"""``gitmem stale``: the memories whose anchors are not fresh, with the reason."""

from __future__ import annotations

from ..analyzer import evaluate
from ..git import WORKTREE
from ..model import MemoryStatus, Status
from ..store import Store


def stale(store: Store, *, rev: str | None = None, show_all: bool = False) -> list[MemoryStatus]:
    """The statuses of the memories that are not fresh at ``rev`` (default: the working tree).

    ``show_all``: every memory, fresh ones too. At the working tree the catalog's cached statuses
    are used (the cost follows what changed, not the number of memories); when the catalog
    fails, every memory is evaluated instead.

    Raises:
        GitError: ``rev`` does not exist.
    """
    target = store.repo.resolve(rev) if rev else WORKTREE
    statuses = None
    if target is WORKTREE and not show_all:
        from ..catalog.sync import not_fresh

        try:
            statuses = not_fresh(store)
        except Exception:  # noqa: BLE001 - the hook index is a cache: evaluate everything instead
            statuses = None
    if statuses is None:
        statuses = evaluate(store, target)
    return [s for s in statuses if show_all or s.status != Status.FRESH]
