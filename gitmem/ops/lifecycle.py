"""Retire and supersede: the decisions that end a memory's life, kept in its file for history.

* ``retire``: the memory is no longer true. Its file stays (``retired:`` time,
  and the reason as a fact), so ``git log`` and review show why it went; it
  leaves every ranking, search, status list and hook.
* ``supersede``: a new memory replaces it. The new one lists the old in
  ``supersedes``, the old one lists the new in ``superseded_by`` and is retired:
  linked both ways. The new memory's anchors default to the old one's,
  re-made against today's code (``reanchor``'s rules: moved anchors follow,
  deleted ones are dropped).

Both write only memory files (commit them to share the decision).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analyzer import memory_status
from ..anchors import Resolver
from ..errors import GitmemError
from ..git import WORKTREE
from ..infra import utc_now
from ..memories import RememberRequest, remember, write
from ..model import KIND_COMMIT, Memory, Status, unique_anchors
from ..store import Store


def retire(store: Store, mem_id: str, reason: str = "") -> Memory:
    """Retire memory ``mem_id`` (or a unique id prefix); returns it as written.

    Raises:
        MemoryNotFound: no such memory.
        GitmemError: it is retired already.
    """
    m = store.get(mem_id)
    if m.retired:
        raise GitmemError(f"{m.id} was retired on {m.retired}", "nothing to do")
    m.retired = m.updated = utc_now()
    if reason.strip():
        from ..capture.redact import redact_text

        m.facts = [*m.facts, f"Retired: {redact_text(reason.strip())}"]
    write(store, [m])
    return m


@dataclass
class Superseded:
    """The replacement, and the replaced memory as written."""

    new: Memory
    old: Memory


def supersede(store: Store, mem_id: str, req: RememberRequest) -> Superseded:
    """Write ``req`` as a memory that replaces ``mem_id``, and retire the old one (linked both ways).

    ``req.anchors`` empty: the old memory's anchors where their code is now
    (commit anchors kept, deleted code dropped). ``req.type`` None-like (""):
    the old memory's type. ``req.tags`` empty: the old memory's tags. Scope follows the old memory.

    Raises:
        MemoryNotFound: no such memory.
        GitmemError: it is retired already; the text is empty; an anchor error.
    """
    old = store.get(mem_id)
    if old.retired:
        raise GitmemError(f"{old.id} was retired on {old.retired}", "supersede the memory that replaced it")
    given = bool(req.anchors)
    if not req.anchors:
        ms = memory_status(Resolver(store.repo), old, WORKTREE)
        specs = []
        for st in ms.anchors:
            a = st.anchor
            if not a.local:
                continue  # kept as it is (below): checked at its repository, never re-made from this one
            if a.kind == KIND_COMMIT:
                specs.append(f"commit:{a.commit}")
            elif st.status != Status.DELETED and a.path:
                path = st.path_now or a.path
                symbol = (st.symbol_now or a.symbol) if a.symbol else None
                specs.append(f"{path}::{symbol}" if symbol else path)
        req.anchors = tuple(specs)
        req.cwd = None
        req.named_by_gitmem = True
    req.type = req.type or old.type
    req.tags = req.tags or tuple(old.tags)  # the concepts it is about did not change with its text
    req.scope = old.scope
    req.invariant = req.invariant or old.invariant  # "these places change together" still holds for the new text
    new = remember(store, req)
    if not given:
        new.anchors = unique_anchors([*new.anchors, *(a for a in old.anchors if not a.local)])
    link(new, old, utc_now())
    write(store, [new, old])
    return Superseded(new, old)


def link(new: Memory, old: Memory, when: str) -> None:
    """Record in both memories (not yet written) that ``new`` replaces ``old``: ``new.supersedes`` and
    ``old.superseded_by`` list each other (once), and ``old`` is retired at ``when`` (a UTC stamp).
    ``supersede`` and ``gitmem tidy``'s merges both link through here; the caller writes both."""
    new.supersedes = list(dict.fromkeys([*new.supersedes, old.id]))
    old.superseded_by = list(dict.fromkeys([*old.superseded_by, new.id]))
    old.retired = old.updated = when
