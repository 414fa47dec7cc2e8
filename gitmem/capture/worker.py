"""``python -m gitmem.capture.worker ROOT [SESSION]``: the detached consolidation SessionEnd starts.

Consolidates one session (or every pending one), then brings the hook index up
to date so the next session's hooks see the new memories. Prints nothing;
outcomes and errors go to ``<common-dir>/gitmem/logs/consolidate.log`` (one line each,
redacted). Always exits 0.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from .. import infra, layout

LOG_NAME = "consolidate.log"


def log_line(root: Path, text: str) -> None:
    """Append one redacted, timestamped line to ``<common-dir>/gitmem/logs/consolidate.log``; never raises."""
    try:
        from .redact import redact_text

        infra.append_log(layout.of(root).log_file(LOG_NAME), redact_text(f"{infra.utc_now()} {text}\n"))
    except Exception:  # noqa: BLE001 - logging must not fail the worker
        pass


#: Session state (what each session was given) is deleted after this many seconds without use.
SESSION_STATE_TTL_S = 7 * 86_400


#: Seconds the worker of an ended session waits for a consolidation of it that is running (started by
#: hand or for orphaned spools while the session was open): that one claimed the spool before the
#: session's last events arrived, so they are this worker's to consolidate.
SESSION_WAIT_S = 600.0


#: Temp files of an interrupted atomic write, and lock files of finished sessions, go after this long.
LEFTOVER_TTL_S = 3_600


def prune_sessions(root: Path) -> None:
    """Delete what nothing will use again: state of sessions idle for SESSION_STATE_TTL_S, temp files
    of writes a kill interrupted (``.<name>.*.tmp``), lock files of sessions with nothing pending, and the
    consolidated-records ledgers of sessions idle for SESSION_STATE_TTL_S."""
    now = time.time()
    lay = layout.of(root)
    pending = set()
    spool_dir = lay.spool_dir
    if spool_dir.is_dir():
        pending = {p.name.split(".", 1)[0] for p in spool_dir.iterdir() if p.name.endswith((".jsonl", ".batch"))}
    tests: tuple[tuple[Path, Callable[[Path], bool]], ...] = (
        (lay.sessions_dir, lambda p: now - p.stat().st_mtime > SESSION_STATE_TTL_S),
        (lay.team_memories_dir, lambda p: p.name.startswith(".") and p.name.endswith(".tmp")
         and now - p.stat().st_mtime > LEFTOVER_TTL_S),
        (lay.local_memories_dir, lambda p: p.name.startswith(".") and p.name.endswith(".tmp")
         and now - p.stat().st_mtime > LEFTOVER_TTL_S),
        (spool_dir, lambda p: ((p.name.startswith(".") and p.name.endswith(".tmp")) or
                               (p.name.endswith(".lock") and p.name[:-5] not in pending))
         and now - p.stat().st_mtime > LEFTOVER_TTL_S),
        # what a session consolidated (``spool.seen_path``) and the content digests of its id-less tool calls
        # (``spool.occurrence``): kept while a late hook may still arrive
        (spool_dir, lambda p: p.name.endswith((".seen", ".calls")) and p.name.split(".", 1)[0] not in pending
         and now - p.stat().st_mtime > SESSION_STATE_TTL_S),
    )
    for folder, test in tests:
        try:
            for p in folder.iterdir():
                try:
                    if p.is_file() and test(p):
                        p.unlink()
                except OSError:
                    continue
        except OSError:
            continue


def run(root: Path, session: str | None) -> None:
    """Consolidate and log; raises nothing."""
    try:
        from ..catalog.sync import sync_hook_index
        from ..git import Repo
        from ..store import Store
        from .consolidate import consolidate_all, consolidate_session

        store = Store(Repo(root), require=False)
        if not store.dir.is_dir():
            return
        store.enable_symbol_cache()
        outcomes = (consolidate_all(store) if session is None
                    else [consolidate_session(store, session, wait=SESSION_WAIT_S)])
        for o in outcomes:
            if o is None:
                log_line(root, f"session {session}: busy (another consolidation runs)")
                continue
            line = (f"session {o.session}: {o.events} events in {o.batches} batches → {o.path}; "
                    f"wrote {len(o.written)} memor{'y' if len(o.written) == 1 else 'ies'} {' '.join(o.written)}")
            log_line(root, line + "".join(f"\n  note: {n}" for n in o.notes))
        sync_hook_index(store)
        prune_sessions(root)
    except Exception as e:  # noqa: BLE001 - detached: log, never raise
        log_line(root, f"error: {type(e).__name__}: {e}\n" + infra.format_exception(e))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path.cwd()
    run(root, args[1] if len(args) > 1 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
