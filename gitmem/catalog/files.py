"""The file catalog: keep the hook index's rows in step with the memory files, reading only what changed.

At 100,000 memories, reading and hashing every file takes 20 s and even one
``stat`` per file about 0.5 s on an overlay file system (measured; see
bench/README.md). So the catalog (``db``) keeps, for every memory
file, the inode, a stat key (mtime ns, ctime ns, size) and the content hash it
was last read with (table ``files``), and ``refresh`` reads a file again only
when it may differ:

* quick (``full=False``: queries and hooks, only when the folders' modification
  times or git's tree of ``.gitmem/memories`` moved; up to ``QUICK_STAT_LIMIT``
  memories it is a full refresh): team folder by name only
  (``os.listdir``: new names are read, missing ones dropped), content changed
  under a known name through git (``git diff-tree`` between the tree SHAs of
  the last refresh and now: pulls, merges, checkouts, resets) and through
  gitmem's own writes (every command that writes a memory refreshes exactly
  those files: ``refresh(only=...)``); local folder by name and inode (gitmem
  replaces files: a new inode per write); files still "racy" when read
  (modified within ``RACY_NS``, so their stat key could hide a later write in
  the same tick: git's racy-git rule, Documentation/technical/racy-git.txt) are
  read again. Cost: two directory listings, one ``git diff-tree``, the files
  read. A team memory file changed by hand under the same name is seen by the
  next full refresh.
* full (``full=True``: ``gitmem sync``, ``Store.load_all``, the background
  sync): every file is also ``stat``-ed and re-read when its stat key changed.

Every change bumps a sequence number (meta ``seq``): memory rows carry the
``seq`` they were written at and removed ids leave a tombstone, so the LanceDB
index can apply exactly the changes since the ``seq`` it last saw
(``changes_since``). A new database gets a new ``generation``, which tells
followers to compare everything once.

Must not import: lancedb, tree-sitter.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import agent_edits, memfile, provenance
from ..errors import GitError, MemoryFileError
from ..layout import TEAM_MEMORIES as TEAM_DIR
from ..model import KIND_COMMIT, Memory
from . import db as catalog_db

#: A file modified less than this before it was read is read again next time (2 s covers
#: file systems with coarse timestamps; git uses the index file's own mtime the same way).
RACY_NS = 2_000_000_000
#: Up to this many memories, ``quick_refresh`` stats every memory file to see edits made in place (~8 µs a file,
#: ~40 ms at the limit, measured on the loaded 2-core CI machine); beyond it, only folder changes and git's tree.
IN_PLACE_STAT_LIMIT = 5_000
#: Up to this many memories a quick refresh stats every file like a full one (about 0.1 s at 20,000 on an
#: overlay file system): then in-place edits and files git restores under the same name are seen at once.
#: Above it, quick refreshes go by names, inodes and git's tree only (see the module docstring).
QUICK_STAT_LIMIT = 20_000

OK, RETIRED, ERROR, DUPLICATE = "ok", "retired", "error", "duplicate"


@dataclass
class Refresh:
    """What one refresh did.

    Attributes:
        read: files read (and hashed).
        upserted: ids whose row was written (new or changed content).
        removed: ids whose row was deleted.
        seq: the sequence number after the refresh.
    """

    read: int = 0
    upserted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seq: int = 0


def memory_row(m: Memory, digest: str, agent: str | None = None) -> dict[str, Any]:
    """The hook-index row of ``m`` (status unknown until checked), with its provenance (``provenance.of``):
    ``level``, ``trust`` (the label the agent sees) and ``rule`` (1 when a constraint may be shown as a rule).
    ``agent``: the agent whose file tools wrote its file since gitmem last marked it (``agent_edits.pending``):
    then the row holds it as the agent's text whatever the file claims (``source: agent``, ``origin``, no model,
    no review), for the hooks and for every reader of the catalog's memories, as the pre-commit hook will
    rewrite the file (``ops.agent_edits``)."""
    if agent is not None:
        m = replace(m, source="agent", origin=agent, model=None, reviewed=None)
    trust = provenance.of(m)
    anchors = []
    for a in m.anchors:
        span = a.span or (None, None)
        # a cross-repository anchor has no path here: its path is another repository's, so the queries by
        # anchored file (hooks, proximity, which memories a change touches) never match it
        anchors.append({"key": a.key, "path": a.path if a.kind != KIND_COMMIT and a.local else None,
                        "symbol": a.symbol if a.local else None, "start": span[0], "end": span[1],
                        **({"was": a.was} if a.was else {}), **({"repo": a.repo} if a.repo is not None else {})})
    return {"id": m.id, "type": m.type, "title": m.title, "body": m.body, "facts": list(m.facts),
            "tags": list(m.tags), "anchors": anchors, "scope": m.scope, "updated": m.updated or m.created,
            "confidence": m.confidence, "digest": digest, "status": None, "reason": "", "checked": {},
            "memory": memfile.memory_to_dict(m), "level": trust.level, "trust": trust.label, "rule": int(trust.rule)}


def _stat_key(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}"


def team_tree(store: Any) -> str | None:
    """SHA of the tree of ``.gitmem/memories`` at HEAD, or None (no commit, no such folder)."""
    repo = store.repo
    if repo.head() is None:
        return None
    try:
        sha: str | None = repo.tree_sha("HEAD", TEAM_DIR)
        return sha
    except GitError:
        return None


def _listing(store: Any) -> tuple[dict[str, os.DirEntry[str]], set[str]]:
    """Memory files on disk: (catalog key → directory entry, team folder first; the keys that are
    symlinks or lie in a symlinked folder, to be checked before reading)."""
    out: dict[str, os.DirEntry[str]] = {}
    links: set[str] = set()
    for rel, folder in store.layout.memory_dirs():
        folder_linked = _folder_linked(store, rel, folder)
        try:
            with os.scandir(folder) as it:
                for e in it:
                    # regular files only (a FIFO would block the read); symlinks to files count
                    if e.name.endswith(memfile.FILE_SUFFIX) and not e.name.startswith(".") and e.is_file():
                        out[f"{rel}/{e.name}"] = e
                        if folder_linked or e.is_symlink():
                            links.add(f"{rel}/{e.name}")
        except OSError:
            continue
    return out, links


def _folder_linked(store: Any, rel: str, folder: Path) -> bool:
    """Whether memory folder ``folder`` (catalog key prefix ``rel``) is or lies beyond a symlink."""
    if rel == TEAM_DIR:
        return store.repo.symlinked_dir(f"{rel}/x") is not None
    return os.path.realpath(folder) != os.path.normpath(folder)


def _racy_folders(store: Any, started: int) -> bool:
    """Whether a memory folder's modification time is within ``RACY_NS`` of ``started`` (ns)."""
    for _rel, folder in store.layout.memory_dirs():
        try:
            if os.stat(folder).st_mtime_ns >= started - RACY_NS:
                return True
        except OSError:
            continue
    return False


def _memory_name(name: str) -> bool:
    """A file name (no folder) that can be a memory file: ``*.md``, not hidden."""
    return "/" not in name and name.endswith(memfile.FILE_SUFFIX) and not name.startswith(".")


def _known(con: sqlite3.Connection, files: set[str]) -> dict[str, Any]:
    """The ``files`` rows of ``files`` (those known), by path."""
    listed = sorted(files)
    out: dict[str, Any] = {}
    for i in range(0, len(listed), 500):
        chunk = listed[i:i + 500]
        out.update((r[0], r) for r in con.execute(
            f"SELECT file, ino, stat, digest, id, state FROM files WHERE file IN ({', '.join('?' * len(chunk))})",
            chunk))
    return out


def _quick_suspects(store: Any, con: sqlite3.Connection) -> tuple[set[str], list[str], set[str]]:
    """(files to read, files gone, symlinks) without a ``stat`` per file.

    Team folder: names only (``os.listdir``): new names are read, missing ones are gone; changed
    content under a known name is found through git's tree (the caller) or gitmem's own writes
    (``refresh(only=...)``); "racy" files are read again. Local folder: names and inode numbers.
    """
    lay = store.layout
    suspects: set[str] = set()
    links: set[str] = set()
    gone: list[str] = []
    try:
        names = {n for n in os.listdir(lay.team_memories_dir) if _memory_name(n)}
    except OSError:
        names = set()
    prefix = TEAM_DIR + "/"
    known_team = {r[0][len(prefix):] for r in con.execute(
        "SELECT file FROM files WHERE file >= ? AND file < ?", (prefix, TEAM_DIR + "0"))}
    suspects.update(prefix + n for n in names - known_team)
    gone.extend(prefix + n for n in sorted(known_team - names))
    if store.repo.symlinked_dir(f"{TEAM_DIR}/x"):
        links.update(prefix + n for n in names)
    suspects.update(r[0] for r in con.execute("SELECT file FROM files WHERE stat = '' AND file >= ? AND file < ?",
                                              (prefix, TEAM_DIR + "0")) if r[0][len(prefix):] in names)
    local_dir = lay.local_key_prefix
    lprefix = local_dir + "/"
    known_local = {r[0]: r[1:] for r in con.execute(
        "SELECT file, ino, stat FROM files WHERE file >= ? AND file < ?", (lprefix, local_dir + "0"))}
    seen: set[str] = set()
    folder_linked = _folder_linked(store, local_dir, lay.local_memories_dir)
    try:
        with os.scandir(lay.local_memories_dir) as it:
            for e in it:
                if not (e.name.endswith(memfile.FILE_SUFFIX) and not e.name.startswith(".") and e.is_file()):
                    continue
                f = lprefix + e.name
                seen.add(f)
                k = known_local.get(f)
                if k is None or k[0] != e.inode() or not k[1] or folder_linked or e.is_symlink():
                    suspects.add(f)
                if folder_linked or e.is_symlink():
                    links.add(f)
    except OSError:
        pass
    gone.extend(f for f in known_local if f not in seen)
    for f in list(suspects):  # a new team name may be a link leading out: checked before it is read
        if f.startswith(prefix) and os.path.islink(lay.memory_file(f)):
            links.add(f)
    return suspects, gone, links


def refresh(store: Any, con: sqlite3.Connection, *, full: bool, only: Iterable[str] | None = None,
            signature: str | None = None) -> Refresh:
    """Bring the ``memories`` and ``files`` rows in line with the memory files (see module docstring).

    Args:
        store: the ``Store``.
        con: an open hook index (``db.connect(create=True)``).
        full: stat every file (True) or trust inode + git tree + racy marks (False).
        only: repo-relative memory file paths to look at instead of listing the folders
            (a caller that just wrote or deleted them).
        signature: ``db.folder_signature`` taken before the listing; recorded as
            ``rows_signature`` (when ``only`` is None) so readers can tell the rows are current.

    Returns:
        A ``Refresh``. Rows are written in one transaction (``BEGIN IMMEDIATE``).

    Raises:
        sqlite3.Error: the hook index cannot be written.
    """
    lay = store.layout
    started = time.time_ns()
    tree = old_tree = None
    if only is None and not full and catalog_db.count(con) <= QUICK_STAT_LIMIT:
        full = True  # a stat per file costs less than 0.1 s here: see in-place edits and git restores too
    if only is None and not full:
        suspects, gone, links = _quick_suspects(store, con)
        tree, old_tree = team_tree(store), catalog_db.get_meta(con, "team_tree")
        if tree != old_tree and tree is not None:
            try:
                changed = store.repo.changed_paths(old_tree or None, tree)
            except GitError:  # the recorded tree is gone (history rewritten, gc): check every file
                return refresh(store, con, full=True, signature=signature)
            for p in changed:
                if _memory_name(p) and (lay.team_memories_dir / p).is_file():
                    suspects.add(f"{TEAM_DIR}/{p}")
        known = _known(con, suspects | set(gone))
    elif only is None:
        known = {r[0]: r for r in con.execute("SELECT file, ino, stat, digest, id, state FROM files")}
        on_disk, links = _listing(store)
        suspects = set(links)  # a link may now lead elsewhere: always checked
        for f, e in on_disk.items():
            k = known.get(f)
            if k is None or k[1] != e.inode() or not k[2]:
                suspects.add(f)
            else:
                try:
                    if _stat_key(e.stat()) != k[2]:
                        suspects.add(f)
                except OSError:
                    suspects.add(f)
        tree, old_tree = team_tree(store), catalog_db.get_meta(con, "team_tree")
        gone = [f for f in known if f not in on_disk]
    else:
        wanted = sorted(set(only))
        known = _known(con, set(wanted))
        suspects = set()
        links = set()
        gone = []
        for f in wanted:
            p = lay.memory_file(f)
            if p.is_file():
                suspects.add(f)
                if p.is_symlink() or (f.startswith(TEAM_DIR + "/") and store.repo.symlinked_dir(f)) \
                        or (lay.is_local_key(f) and _folder_linked(store, lay.local_key_prefix, p.parent)):
                    links.add(f)
            elif f in known:
                gone.append(f)
    # a removed file gives its id back to another file holding it (a duplicate, or the team copy of a
    # memory just shared from the local folder): that file is read again, whatever its stat says, so the
    # memory's row comes from the file that remains
    forced: set[str] = set()
    for f in gone:
        k = known[f]
        if k[5] == OK and k[4]:
            for r in con.execute("SELECT file FROM files WHERE id = ? AND state IN (?, ?) AND file != ?",
                                 (k[4], OK, DUPLICATE, f)):
                if r[0] not in gone and lay.memory_file(r[0]).is_file():
                    suspects.add(r[0])
                    forced.add(r[0])

    # read outside the write transaction (reading 100 files takes a while)
    results: dict[str, tuple[int, str, str, Memory | None, str, str]] = {}
    for f in sorted(suspects):
        p = lay.memory_file(f)
        outside = store.outside_repo(p) if f in links else None
        if outside is not None:
            results[f] = (0, "", "", None, ERROR,
                          json.dumps([outside.message.split(": ", 1)[-1], outside.hint, None]))
            continue
        try:
            # O_NONBLOCK: a FIFO named like a memory file must not block the read (it is skipped)
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode):
                    continue
                data = fh.read()
        except OSError as e:
            results[f] = (0, "", "", None, ERROR, json.dumps([f"cannot read: {e.strerror}", "", None]))
            continue
        racy = st.st_mtime_ns >= started - RACY_NS
        key = "" if racy else _stat_key(st)
        digest = memfile.content_hash(data)
        k = known.get(f)
        if k is not None and k[3] == digest and k[5] in (OK, RETIRED, DUPLICATE) and f not in forced:
            results[f] = (st.st_ino, key, digest, None, "same", "")
            continue
        try:
            m = memfile.parse_bytes(data, p, display=f)
        except MemoryFileError as e:
            where = f"{e.path}:{e.line}" if e.line else e.path
            text = e.message[len(where) + 2:] if e.message.startswith(where + ": ") else e.message
            results[f] = (st.st_ino, key, digest, None, ERROR, json.dumps([text, e.hint, e.line]))
            continue
        results[f] = (st.st_ino, key, digest, m, RETIRED if m.retired else OK, "")

    out = Refresh(read=len(results))
    catalog_db.begin(con)
    try:
        seq = int(catalog_db.get_meta(con, "seq") or 0) + 1
        removed: set[str] = set()
        rows: dict[str, dict[str, Any]] = {}
        edited = agent_edits.pending(lay) if any(r[3] is not None for r in results.values()) else {}
        for f in gone:
            k = known[f]
            if k[5] == OK and k[4]:
                removed.add(k[4])
            con.execute("DELETE FROM files WHERE file = ?", (f,))
        for f, (ino, key, digest, mem, state, note) in sorted(results.items()):
            k = known.get(f)
            if state == "same":
                con.execute("UPDATE files SET ino = ?, stat = ? WHERE file = ?", (ino, key, f))
                continue
            if k is not None and k[5] == OK and k[4] and (mem is None or mem.id != k[4] or state != OK):
                removed.add(k[4])
            mid = mem.id if mem is not None else None
            if state == OK and mem is not None:
                other = con.execute("SELECT file FROM files WHERE id = ? AND state = ? AND file != ?",
                                    (mid, OK, f)).fetchone()
                if other is not None and other[0] not in gone:
                    dup_note = json.dumps([f"duplicate id {mid}", "delete one of the two files", None])
                    if lay.is_local_key(f):
                        state, note = DUPLICATE, dup_note
                    else:  # the team copy wins: the local one becomes the duplicate
                        con.execute("UPDATE files SET state = ?, note = ? WHERE file = ?",
                                    (DUPLICATE, dup_note, other[0]))
            if state == OK and mem is not None:
                row = memory_row(mem, digest, None if lay.is_local_key(f) else edited.get(mem.id))
                row["file"] = f
                row["seq"] = seq
                rows[mem.id] = row
            con.execute("INSERT OR REPLACE INTO files (file, ino, stat, digest, id, state, note) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", (f, ino, key, digest, mid, state, note))
        removed -= set(rows)
        # an id still held by a file that is ok keeps its row (another refresh wrote that file's row
        # between this one's reading and writing); the file is read again by the next refresh
        for rid in sorted(removed):
            holder = con.execute("SELECT file FROM files WHERE id = ? AND state = ?", (rid, OK)).fetchone()
            if holder is not None:
                removed.discard(rid)
                con.execute("UPDATE files SET stat = '' WHERE file = ?", (holder[0],))
                con.execute("UPDATE memories SET file = ? WHERE id = ?", (holder[0], rid))
        if removed or rows:
            catalog_db.delete(con, sorted(removed))
            con.executemany("INSERT INTO tombstones (id, seq) VALUES (?, ?)", [(i, seq) for i in sorted(removed)])
            catalog_db.upsert(con, rows.values())
            catalog_db.set_meta(con, "seq", str(seq))
            out.upserted, out.removed = sorted(rows), sorted(removed)
        out.seq = int(catalog_db.get_meta(con, "seq") or 0)
        if only is None:
            if tree != old_tree:
                catalog_db.set_meta(con, "team_tree", tree or "")
            if signature is not None:
                # a folder changed within the racy window may change again in the same tick unseen:
                # record no signature, so the next look refreshes again (git's racy-git rule, for folders)
                catalog_db.set_meta(con, "rows_signature", "" if _racy_folders(store, started) else signature)
        if catalog_db.get_meta(con, "generation") is None:
            catalog_db.set_meta(con, "generation", uuid.uuid4().hex)
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return out


def rows_current(store: Any, con: sqlite3.Connection, signature: str) -> bool:
    """Whether the rows were built from memory folders with this ``signature`` and git's tree as it is now."""
    # no tree at HEAD (memories never committed) is recorded as "", or not at all when it never had one
    return (catalog_db.get_meta(con, "rows_signature") == signature
            and (catalog_db.get_meta(con, "team_tree") or "") == (team_tree(store) or ""))


def edited_in_place(store: Any, con: sqlite3.Connection) -> bool:
    """Whether a memory file's ``stat`` differs from its row, up to ``IN_PLACE_STAT_LIMIT`` rows (beyond: False).

    An edit in place (an editor, ``open(path, "w")``) changes no folder's mtime, so ``rows_current`` cannot see
    it; a stat per file can (1,000 memories: ~9 ms on the shared 2-core machine, ~8 µs a file). Beyond the limit
    such an edit is seen at the next full refresh (any command that loads every memory, ``gitmem sync``). Files
    whose row holds no stat (a racy read) count as changed, as in ``refresh(full=True)``; symlinked files
    are compared by their target's stat (a link leading outside the repository, never read: left to the full
    refresh).
    """
    if catalog_db.count(con) > IN_PLACE_STAT_LIMIT:
        return False
    known = {r[0]: (r[1], r[2]) for r in con.execute("SELECT file, ino, stat FROM files")}
    on_disk, links = _listing(store)
    for f, e in on_disk.items():
        k = known.get(f)
        if f in links:
            # its row holds its target's inode and stat (``refresh`` reads through the link); a link leading
            # outside the repository, never read, holds none (inode 0): left to the full refresh
            if k is None or (not k[0] and not k[1]):
                continue
            if not k[1]:
                return True  # a racy read, as below
            try:
                st = e.stat()  # followed
            except OSError:
                continue
            if st.st_ino != k[0] or _stat_key(st) != k[1]:
                return True
            continue
        if k is None or not k[1] or k[0] != e.inode():
            return True
        try:
            if _stat_key(e.stat()) != k[1]:
                return True
        except OSError:
            return True
    return False


def quick_refresh(store: Any, con: sqlite3.Connection, *, in_place: bool = True) -> None:
    """``refresh(full=False)`` unless the memory folders are as the rows were last built from and (``in_place``)
    no file was edited in place (``edited_in_place``)."""
    sig = catalog_db.folder_signature(store.repo.root)
    if not rows_current(store, con, sig) or (in_place and edited_in_place(store, con)):
        refresh(store, con, full=False, signature=sig)


def open_current(store: Any, *, full: bool = False, in_place: bool = True) -> sqlite3.Connection | None:
    """The hook index with its rows brought up to date (quick, or ``full``); None if it cannot be opened.

    ``in_place`` False skips the stat of every memory file (``edited_in_place``, ~8 µs a file): for callers that
    only ask what is anchored where after a commit, whose committed memory files git's tree already shows.
    """
    con = catalog_db.connect(store.repo.root, create=True)
    if con is None:
        return None
    try:
        if full:
            refresh(store, con, full=True, signature=catalog_db.folder_signature(store.repo.root))
        else:
            quick_refresh(store, con, in_place=in_place)
    except (sqlite3.Error, OSError, GitError):
        con.close()
        return None
    return con


def mark(con: sqlite3.Connection) -> str:
    """``generation:seq`` of the rows: changes whenever a row does."""
    return f"{catalog_db.get_meta(con, 'generation') or '-'}:{catalog_db.get_meta(con, 'seq') or 0}"


def changes_since(con: sqlite3.Connection, since: str | None) -> tuple[str, list[dict[str, Any]], list[str]] | None:
    """The rows written and the ids removed after mark ``since``, read in one snapshot.

    Returns (mark now, [row dicts with ``id``, ``digest``, ``memory``], [removed ids]),
    or None when ``since`` is of another generation (compare everything instead).
    """
    con.execute("BEGIN")
    try:
        now = mark(con)
        gen, _, seq_s = (since or "").partition(":")
        if gen != now.partition(":")[0] or not seq_s.isdigit():
            return None
        seq = int(seq_s)
        rows = [{"id": r[0], "digest": r[1], "memory": r[2]}
                for r in con.execute("SELECT id, digest, memory FROM memories WHERE seq > ?", (seq,))]
        live = {r["id"] for r in rows}
        removed = sorted({r[0] for r in con.execute("SELECT id FROM tombstones WHERE seq > ?", (seq,))} - live)
        return now, rows, removed
    finally:
        con.commit()


def current_digests(con: sqlite3.Connection) -> tuple[str, dict[str, str]]:
    """(mark, id → content hash of every memory row), read in one snapshot."""
    con.execute("BEGIN")
    try:
        return mark(con), {r[0]: r[1] for r in con.execute("SELECT id, digest FROM memories")}
    finally:
        con.commit()


def load(con: sqlite3.Connection, ids: Iterable[str]) -> dict[str, Memory]:
    """id → Memory for ``ids`` from the rows (unknown or unreadable ids skipped)."""
    out = {}
    for d in catalog_db.full_memories(con, ids):
        try:
            m = memfile.memory_from_dict(d)
        except (KeyError, TypeError, ValueError):
            continue
        out[m.id] = m
    return out


def all_memories(con: sqlite3.Connection) -> list[tuple[Memory, str, str]]:
    """Every valid memory in the rows: (memory, content hash of its file, catalog key of its file), by id.

    Rows whose stored memory cannot be rebuilt (a schema slip) are skipped; the next full refresh
    rewrites them.
    """
    out = []
    for _mid, digest, file, data in con.execute("SELECT id, digest, file, memory FROM memories ORDER BY id"):
        try:
            out.append((memfile.memory_from_dict(json.loads(data)), digest, file))
        except (TypeError, ValueError, KeyError):
            continue
    return out


def retired_files(con: sqlite3.Connection) -> list[str]:
    """Catalog keys of the memory files that hold a retired memory, sorted."""
    return [r[0] for r in con.execute("SELECT file FROM files WHERE state = ? ORDER BY file", (RETIRED,))]


def session_ids(con: sqlite3.Connection, session: str) -> set[str]:
    """Ids of the memories recorded from agent session ``session`` (their ``session`` field)."""
    return {r[0] for r in con.execute("SELECT id FROM memories WHERE json_extract(memory, '$.session') = ?",
                                      (session,))}


def errors(con: sqlite3.Connection) -> list[MemoryFileError]:
    """One ``MemoryFileError`` per memory file that is invalid or a duplicate, by path."""
    out = []
    for f, note in con.execute("SELECT file, note FROM files WHERE state IN (?, ?) ORDER BY file",
                               (ERROR, DUPLICATE)):
        try:
            message, hint, line = json.loads(note)
        except (TypeError, ValueError):
            message, hint, line = "invalid", "", None
        out.append(MemoryFileError(f, message, hint=hint, line=line))
    return out


def file_errors(store: Any) -> list[MemoryFileError]:
    """The invalid and duplicate memory files (quick refresh first; via ``load_all`` without a hook index), and the
    memory folders that exist but cannot be listed (their files are not read: nothing may call them fresh)."""
    folders = unreadable_folders(store)
    con = open_current(store)
    if con is None:
        loaded: list[MemoryFileError] = store.load_all().errors
        return folders + loaded
    try:
        return folders + errors(con)
    finally:
        con.close()


def unreadable_folders(store: Any) -> list[MemoryFileError]:
    """The memory folders (team, local) that exist but cannot be listed, one error each."""
    out = []
    for rel, folder in store.layout.memory_dirs():
        if not os.path.lexists(folder):
            continue
        try:
            with os.scandir(folder):
                pass
        except OSError as e:
            out.append(MemoryFileError(rel, f"cannot read this memory folder: {e.strerror or e}",
                                       "make it a readable folder of memory files"))
    return out


class MirrorSource:
    """The catalog's memory rows as a change log for ``search.hybrid.update``.

    Also what queries read memories from: ``memories(ids)`` fetches only the hits.
    """

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self._all: dict[str, Memory] | None = None

    def mark(self) -> str:
        return mark(self.con)

    def changes_since(self, since: str | None) -> tuple[str, list[tuple[str, str, Memory]], list[str]] | None:
        got = changes_since(self.con, since)
        if got is None:
            return None
        mark, rows, removed = got
        upserts = []
        for r in rows:
            try:
                upserts.append((r["id"], r["digest"], memfile.memory_from_dict(json.loads(r["memory"]))))
            except (TypeError, ValueError, KeyError):
                continue
        return mark, upserts, removed

    def digests(self) -> tuple[str, dict[str, str]]:
        return current_digests(self.con)

    def load(self, mid: str) -> Memory:
        if self._all is None:
            _, current = self.digests()
            self._all = load(self.con, sorted(current))
        return self._all[mid]

    def memories(self, ids: list[str]) -> dict[str, Memory]:
        return load(self.con, ids)
