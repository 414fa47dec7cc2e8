"""``gitmem stale``: the memories whose anchors are not fresh, with the reason."""

from __future__ import annotations

from ..analyzer import evaluate, memory_status
from ..anchors import Resolver
from ..git import WORKTREE
from ..model import MemoryStatus, Status
from ..org import xrepo
from ..store import Store


def stale(store: Store, *, rev: str | None = None, show_all: bool = False) -> list[MemoryStatus]:
    """The statuses of the memories that are not fresh at ``rev`` (default: the working tree).

    ``show_all``: every memory, fresh ones too. At the working tree the catalog's cached statuses
    are used (the cost follows what changed, not the number of memories); when the catalog
    fails, every memory is evaluated instead.

    Cross-repository anchors are checked first against their repositories' refs when those are reachable
    without the network (``org.xrepo.check`` with ``local_only``: a local path of ``[org.repos]``, or a mirror
    already fetched); one that cannot be reached is listed ``unchecked`` with why, never ``fresh``.

    Raises:
        GitError: ``rev`` does not exist.
    """
    target = store.repo.resolve(rev) if rev else WORKTREE
    unchecked: dict[str, str] = {}
    try:
        report = xrepo.check(store, local_only=True)
        foreign = list({c.memory.id: c.memory for c in report.checks}.values())
        unchecked = report.unchecked()
    except Exception as e:  # noqa: BLE001 - never "fresh" when it could not check: every foreign anchor unchecked
        from ..org.checks import record_key

        foreign = xrepo.foreign_memories(store)
        unchecked = {record_key(a): f"not checked: {e}" for m in foreign for a in m.anchors if not a.local}
    statuses = None
    if target is WORKTREE and not show_all:
        from ..catalog.sync import not_fresh

        try:
            statuses = not_fresh(store)
        except Exception:  # noqa: BLE001 - the hook index is a cache: evaluate everything instead
            statuses = None
        if statuses is not None and unchecked:  # fresh in the catalog, unchecked now: listed too
            have = {ms.memory.id for ms in statuses}
            resolver = Resolver(store.repo)
            statuses += [memory_status(resolver, m, WORKTREE) for m in foreign if m.id not in have]
            statuses.sort(key=lambda ms: ms.memory.id)
    if statuses is None:
        statuses = evaluate(store, target)
    statuses = xrepo.with_unchecked(statuses, unchecked)
    return [s for s in statuses if show_all or s.status != Status.FRESH]
