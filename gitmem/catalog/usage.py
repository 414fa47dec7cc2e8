"""The catalog's copy of how memories are used, and when the code they are about was last committed.

* ``usage`` (id, given, searched, opened, last_used): the clone's use log (``gitmem.usage``) folded.
  ``refresh`` reads only the bytes appended since the last fold (meta ``usage_log``: the log's inode
  and the offset folded up to); a log replaced by ``usage.compact`` (another inode) or shorter than
  the offset is folded again from its start. Derived: the catalog is per worktree and rebuilt at any
  time; the log is the record.
* ``code_times`` (path, committed): the commit time of the newest commit that changed each anchored
  file (``update_code_times``, in ``catalog.sync``): paths never looked up are looked up, and the
  paths a moved HEAD changed are looked up again in the new commits only.

Read by ``usage.fading`` (through ``db.fade_inputs``, the hot-path query) and ``ops.stats``
(``memory_uses``). Standard library only; the caller commits.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable

from .. import usage
from . import db as catalog_db

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..layout import Layout

#: meta key: ``<inode>:<offset>`` of the use log folded so far.
LOG_META = "usage_log"


def refresh(con: sqlite3.Connection, lay: Layout) -> int:
    """Fold what the use log gained since the last call into the ``usage`` table; returns the records folded.

    Compacts the log first when it is past ``usage.COMPACT_AT_BYTES`` (skipped when another process is
    compacting it). Commits.

    Raises:
        OSError: the log exists but cannot be read.
        sqlite3.Error: the catalog cannot be written.
    """
    try:
        usage.compact(lay)
    except (OSError, TimeoutError):
        pass  # folded next time; the log is still read whole
    path = lay.usage_log
    try:
        st = os.stat(path)
        ino, size = st.st_ino, st.st_size
    except FileNotFoundError:
        ino, size = 0, 0
    known_ino, offset = _position(catalog_db.get_meta(con, LOG_META))
    catalog_db.begin(con)
    if known_ino != ino or size < offset:
        con.execute("DELETE FROM usage")  # another file: fold it from the start
        offset = 0
    records, end = usage.read(path, offset) if ino else ([], 0)
    counts = usage.tally(records)
    con.executemany(
        "INSERT INTO usage (id, given, searched, opened, last_used) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET given = given + excluded.given, searched = searched + excluded.searched, "
        "opened = opened + excluded.opened, last_used = MAX(COALESCE(last_used, 0), excluded.last_used)",
        [(mid, *c) for mid, c in counts.items()])
    catalog_db.set_meta(con, LOG_META, f"{ino}:{end}")
    con.commit()
    return len(records)


def _position(meta: str | None) -> tuple[int, int]:
    try:
        ino, _, off = (meta or "").partition(":")
        return int(ino), int(off)
    except ValueError:
        return -1, 0


def update_code_times(con: sqlite3.Connection, last_times: Callable[[list[str], str], dict[str, int]],
                      head: str | None, old_head: str | None) -> int:
    """Bring ``code_times`` up to date for the anchored paths; returns how many paths were looked up.

    ``last_times(paths, revs)``: ``git.Repo.last_commit_times``. Paths never looked up: in
    ``head``'s history; when HEAD moved from ``old_head``: the anchored paths changed in
    ``old_head..head`` again (an ``old_head`` that is gone, or none: every path again). Paths no commit
    changed are kept as NULL (not looked up again until HEAD moves). Does not commit.

    Raises:
        GitError: git failed.
    """
    if head is None:
        return 0
    anchored = catalog_db.anchored_paths(con)
    known = {r[0] for r in con.execute("SELECT path FROM code_times")}
    todo: dict[str, int | None] = {}
    new = sorted(anchored - known)
    if new:
        found = last_times(new, head)
        todo.update({p: found.get(p) for p in new})
    if old_head and old_head != head and known:
        moved = last_times(sorted(anchored & known), f"{old_head}..{head}")
        todo.update(moved)
    con.executemany("INSERT OR REPLACE INTO code_times (path, committed) VALUES (?, ?)", list(todo.items()))
    return len(todo)


def counts(con: sqlite3.Connection) -> dict[str, tuple[int, int, int, int | None]]:
    """The ``usage`` table: id → (given, searched, opened, last use in seconds or None)."""
    return {r[0]: (r[1], r[2], r[3], r[4])
            for r in con.execute("SELECT id, given, searched, opened, last_used FROM usage")}


def memory_uses(con: sqlite3.Connection, ids: Iterable[str] | None = None) -> list[dict[str, object]]:
    """Every memory (or those of ``ids``) with its use: dicts with ``id``, ``type``, ``title``, ``scope``,
    ``status`` (None: not checked), ``updated``, ``given``, ``searched``, ``opened``, ``last_used`` (seconds
    or None) and ``touched`` (its anchored files' latest commit time, seconds, or None)."""
    q = ("SELECT m.id, m.type, m.title, m.scope, m.status, m.updated, COALESCE(u.given, 0), "
         "COALESCE(u.searched, 0), COALESCE(u.opened, 0), u.last_used, "
         "(SELECT MAX(c.committed) FROM anchors a JOIN code_times c ON c.path = a.path WHERE a.memory_id = m.id) "
         "FROM memories m LEFT JOIN usage u ON u.id = m.id")
    keys = ("id", "type", "title", "scope", "status", "updated", "given", "searched", "opened", "last_used",
            "touched")
    rows = [dict(zip(keys, r, strict=True)) for r in con.execute(q + " ORDER BY m.id")]
    if ids is not None:
        wanted = set(ids)
        rows = [r for r in rows if r["id"] in wanted]
    return rows


def fading_now(lay: Layout, ids: Iterable[str], half_life_days: float) -> dict[str, float]:
    """``usage.fading`` of ``ids`` after folding the use log (``refresh``) into the catalog of ``lay``'s work tree;
    ``{}`` when the catalog does not exist or cannot be read or written (then nothing decays). Never raises."""
    con = catalog_db.connect(lay.root)
    if con is None:
        return {}
    try:
        refresh(con, lay)
        return usage.fading(con, ids, half_life_days)
    except (OSError, sqlite3.Error):
        return {}
    finally:
        con.close()
