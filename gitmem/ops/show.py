"""``gitmem show ID``: one memory with the status of each anchor, at the working tree or a revision."""

from __future__ import annotations

from dataclasses import dataclass

from ..analyzer import evaluate
from ..git import WORKTREE
from ..model import MemoryStatus
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
    m = store.get(mem_id)
    ms = evaluate(store, store.repo.resolve(rev) if rev else WORKTREE, [m])[0]
    return Shown(status=ms, path=store.display(store.path_for(m)))
