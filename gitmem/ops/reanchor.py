"""Re-anchoring: record a memory's anchors again against the code as it is now.

The deliberate "this memory is still true" decision after a review (``gitmem
stale``): each anchor is re-made at the working tree (``Resolver.make``), so its
commit, span and fingerprint become today's and the memory is fresh again.

* ``fresh``: re-made in place (new commit, same code).
* ``moved``: follows its code (``path_now::symbol_now``): a renamed file, a
  function moved to another file, a renamed symbol.
* ``stale``: re-made at the same place, over the changed code.
* ``deleted``: the code is gone; the anchor is dropped with ``drop_deleted``,
  otherwise ``ReanchorError`` (the memory is left as it was).

An anchor that changes place keeps the key it had before in ``Anchor.was`` (the first one,
across later moves; cleared when the code moves back), so readers are told the old name a
title may still use. Commit anchors are kept as they are. The memory's ``updated`` time
changes; nothing else does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..analyzer import memory_status
from ..anchors import Resolver
from ..errors import GitmemError
from ..git import WORKTREE
from ..infra import utc_now
from ..model import KIND_COMMIT, Anchor, Memory, Status, unique_anchors
from ..store import Store


class ReanchorError(GitmemError):
    """An anchor cannot be re-made (its code was deleted and dropping was not asked for)."""


@dataclass
class Reanchored:
    """What re-anchoring did: the memory as written, and one line per anchor (old → new, or dropped)."""

    memory: Memory
    changes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def reanchor(store: Store, mem_id: str, *, drop_deleted: bool = False, rev: str | None = WORKTREE,
             record_at: str | None = None, resolver: Resolver | None = None) -> Reanchored:
    """Re-anchor memory ``mem_id`` (or a unique id prefix) to the working tree (or commit ``rev``) and write it.

    ``record_at``: the commit the new anchors are recorded against instead of ``rev`` (the
    pre-commit hook resolves at a stand-in commit of the staged tree and records against HEAD,
    as an anchor made on uncommitted code is: ``gitmem.ops.follow``). ``resolver``: one to share caches
    with (default: a new one).

    Raises:
        MemoryNotFound: no such memory.
        ReanchorError: an anchor's code is deleted and ``drop_deleted`` is false.
        AnchorError: a moved anchor's new place cannot be anchored (e.g. became a nested repository).
    """
    m = store.get(mem_id)
    if m.retired:
        raise ReanchorError(f"{m.id} was retired on {m.retired}", "re-anchor the memory that superseded it")
    resolver = resolver or Resolver(store.repo)
    ms = memory_status(resolver, m, rev)
    out = Reanchored(m)
    anchors: list[Anchor] = []
    for st in ms.anchors:
        a = st.anchor
        if a.kind == KIND_COMMIT or not a.path or not a.local:
            anchors.append(a)  # a cross-repository anchor is checked and made at its repository (gitmem.org.xrepo)
            continue
        if st.status == Status.DELETED:
            if not drop_deleted:
                raise ReanchorError(f"{m.id}: {a.key} is gone ({st.reason})",
                                    "re-anchor with --drop-deleted, or supersede or retire the memory")
            out.dropped.append(a.key)
            continue
        path = st.path_now or a.path
        symbol = (st.symbol_now or a.symbol) if a.symbol else None
        new = resolver.make(path, symbol, rev, as_typed=False)
        if record_at is not None:
            new = replace(new, commit=record_at)
        if new.key != a.key:
            new = replace(new, was=a.was if a.was and a.was != new.key else None if a.was else a.key)
        else:
            new = replace(new, was=a.was)
        anchors.append(new)
        if new.key != a.key:
            out.changes.append(f"{a.key} → {new.key} ({st.status.value})")
        elif st.status != Status.FRESH:
            out.changes.append(f"{a.key} re-anchored over its changed code ({st.status.value})")
    m.anchors = unique_anchors(anchors)
    m.updated = utc_now()
    from ..memories import write

    write(store, [m])
    return out
