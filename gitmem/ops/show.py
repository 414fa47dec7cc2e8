"""``gitmem show ID``: one memory with the status of each anchor, at the working tree or a revision."""

from __future__ import annotations

from dataclasses import dataclass

from ..git import WORKTREE
from ..model import Memory, MemoryStatus, Status
from ..store import Store


@dataclass
class Shown:
    """A memory's status (the memory in ``status.memory``) and its file, as displayed (repo-relative)."""

    status: MemoryStatus
    path: str


def show(store: Store, mem_id: str, *, rev: str | None = None) -> Shown:
    """The memory ``mem_id`` (an id or a unique prefix) evaluated at ``rev`` (default: the working tree).

    Raises:
        GitmemError: unknown or ambiguous id, invalid memory file.
        GitError: ``rev`` does not exist.
    """
    from ..analyzer import evaluate

    m = store.get(mem_id)
    ms = evaluate(store, store.repo.resolve(rev) if rev else WORKTREE, [m])[0]
    return Shown(status=ms, path=store.display(store.path_for(m)))


def with_status(store: Store, memories: list[Memory]) -> list[MemoryStatus]:
    """``memories`` (order kept) each with its status at the working tree (``analyzer.evaluate``);
    the statuses are recorded in the catalog, which would otherwise compute them again."""
    from ..analyzer import evaluate
    from ..catalog.sync import record_statuses

    by_id = {s.memory.id: s for s in evaluate(store, WORKTREE, memories)}
    record_statuses(store, by_id)
    return [by_id[m.id] for m in memories]


def statuses_now(store: Store, memories: list[Memory]) -> list[Status]:
    """The status of each of ``memories`` (order kept) at the working tree, as ``with_status`` gives it, without
    evaluating those whose status the catalog recorded and that still holds (``catalog.sync.holding_statuses``:
    HEAD unchanged since the last check, no anchored file dirty then or changed since, one ``stat`` each); the
    others are evaluated and recorded (``with_status``). ``memories`` must be the catalog's rows as just read
    (``search.lexical.found``'s hits): a memory file's newer text may anchor other code than its recorded status.
    """
    from ..catalog import db as catalog_db
    from ..catalog.sync import holding_statuses

    held: dict[str, tuple[Status, str]] = {}
    con = catalog_db.connect(store.repo.root)
    if con is not None:
        try:
            held = holding_statuses(con, store.repo, [m.id for m in memories])
        finally:
            con.close()
    todo = [m for m in memories if m.id not in held]
    rest = {ms.memory.id: ms.status for ms in with_status(store, todo)} if todo else {}
    return [held[m.id][0] if m.id in held else rest[m.id] for m in memories]


def listed(store: Store, memories: list[Memory], *, status: str | None = None,
           scope: str | None = None) -> list[MemoryStatus]:
    """``memories`` with their status, keeping those of ``scope`` (team, local) and ``status``
    (one of ``model.STATUS_FILTERS``; None: all)."""
    if scope:
        memories = [m for m in memories if m.scope == scope]
    rows = with_status(store, memories)
    if status == "not-fresh":
        return [r for r in rows if r.status != Status.FRESH]
    if status:
        return [r for r in rows if r.status.value == status]
    return rows
