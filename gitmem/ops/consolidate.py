"""``gitmem consolidate``: turn captured sessions (the spool) into local memories now, by hand."""

from __future__ import annotations

from collections.abc import Callable

from ..capture.consolidate import Outcome, consolidate_all, consolidate_session
from ..errors import GitmemError
from ..store import Store


def consolidate(store: Store, *, session: str | None = None, use_llm: bool = True,
                warn: Callable[[str], None] | None = None) -> list[Outcome]:
    """Consolidate ``session`` (its id as the agent gives it) or every spooled session; one outcome each.

    Each outcome is logged to ``consolidate.log`` as done "by hand". The catalog is synced after;
    a failure there is passed to ``warn`` (the memories are written; the next session start retries).

    Raises:
        GitmemError: ``session`` is being consolidated by another process.
    """
    from ..capture.spool import session_key
    from ..capture.worker import log_line
    from ..catalog.sync import sync_hook_index

    if session:
        one = consolidate_session(store, session_key(session), use_llm=use_llm)
        if one is None:
            raise GitmemError(f"session {session} is being consolidated by another process", "try again in a moment")
        outcomes = [one]
    else:
        outcomes = consolidate_all(store, use_llm=use_llm)
    try:
        sync_hook_index(store)
    except Exception as e:  # noqa: BLE001 - the memories are written; the hook index is a cache
        if warn is not None:
            warn(f"the hook index was not updated ({type(e).__name__}: {e}); the next session start retries")
    for o in outcomes:
        n = len(o.written)
        log_line(store.repo.root, f"session {o.session} (by hand): {o.events} events → {o.path}; "
                                  f"wrote {n} memor{'y' if n == 1 else 'ies'} {' '.join(o.written)}")
    return outcomes
