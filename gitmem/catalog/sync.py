"""Keep the catalog (``gitmem.catalog.db``) in step with the memory files and the working tree.

``sync_hook_index`` upserts the rows whose file content changed (by content hash),
deletes the rows of removed files, and re-checks the status of the memories
whose anchored files changed on disk since their last check (blob SHAs), within
an optional time budget; what the budget leaves is checked by a detached
``python -m gitmem.catalog.sync ROOT`` (``spawn_sync``).

Called by SessionStart, consolidation, the CLI commands that write memories and
the git hooks. Must not import lancedb; the analyzer (anchors, tree-sitter) only inside the functions that
compute a status, so reading the recorded ones (``holding_statuses``: ``gitmem recall``) imports no parser.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import infra, layout
from ..errors import GitError
from ..git import WORKTREE, Repo
from ..memfile import memory_from_dict
from ..model import KIND_COMMIT, Memory, MemoryStatus, Status
from ..store import LoadResult, Store
from . import db as catalog_db
from . import files as catalog_files
from . import usage as catalog_usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..rank.focus import Focus


@dataclass
class HookIndexSync:
    """What a sync did: rows written and deleted, statuses checked, statuses left unchecked."""

    written: int = 0
    deleted: int = 0
    checked: int = 0
    unchecked: int = 0


def tree_state(repo: Repo, dirty: list[str]) -> str:
    """HEAD plus (path, size, mtime) of each dirty file: when it is unchanged, so are all statuses."""
    parts = [repo.head() or "-"]
    for p in sorted(dirty):
        try:
            st = (repo.root / p).stat()
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:gone")
    return "\n".join(parts)


def needs_sync(store: Store, dirty: list[str]) -> bool:
    """Whether the working tree moved since the hook index's statuses were checked."""
    con = catalog_db.connect(store.repo.root)
    if con is None:
        return True
    try:
        return catalog_db.get_meta(con, "tree_state") != tree_state(store.repo, dirty)
    finally:
        con.close()


def status_reason(ms: MemoryStatus) -> str:
    """``path::Symbol <reason>`` of the worst anchor ("" when fresh)."""
    if ms.status == Status.FRESH or not ms.anchors:
        return ""
    return max(ms.anchors, key=lambda a: a.status.severity).keyed_reason


def _now_spans(ms: MemoryStatus) -> list[tuple[str, str | None, int | None, int | None]]:
    """Where each anchor's code is in the working tree: (path, symbol, start, end); for a path through symbolic
    links, also the links and the file they lead to (``AnchorStatus.links``, ``target``)."""
    out: list[tuple[str, str | None, int | None, int | None]] = []
    for a in ms.anchors:
        path = a.path_now or a.anchor.path
        if a.status == Status.DELETED or a.anchor.kind == KIND_COMMIT or path is None or not a.anchor.local:
            continue  # a cross-repository anchor's code is in another repository
        span = a.new_span or (None, None)
        out.append((path, a.symbol_now or a.anchor.symbol, span[0], span[1]))
        # a path through symbolic links reads another file: a change there (or to a link on the way) is a change
        # of this anchor for the hooks, the re-checks and the commit analyzer (``analyzer.memories_on_changes``)
        out.extend((p, a.symbol_now or a.anchor.symbol, span[0], span[1])
                   for p in dict.fromkeys((*a.links, a.target or path)) if p != path)
    return out


def sync_hook_index(store: Store, loaded: LoadResult | None = None, *,
                    statuses: dict[str, MemoryStatus] | None = None,
                    check_budget_s: float | None = None, lock_timeout_s: float = 60.0,
                    full: bool = True) -> HookIndexSync:
    """Bring the hook index up to date; see the module docstring.

    Args:
        loaded: ignored (kept for callers written before the file catalog; rows are
            read from the files that changed, ``gitmem.catalog``).
        statuses: statuses at the working tree the caller already computed (recorded as they are).
        check_budget_s: seconds to spend re-checking statuses (None: no limit; 0: none).
        lock_timeout_s: seconds to wait for another sync to finish (syncs run one at a time).
        full: stat every memory file (True) or trust inodes and git's tree (``catalog.refresh``).

    Raises:
        OSError / sqlite3.Error: the index file cannot be written.
        filelock.Timeout: another sync held the lock longer than ``lock_timeout_s``.
    """
    from filelock import FileLock

    store.layout.run_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(store.layout.run_dir / "catalog-sync.lock"), timeout=lock_timeout_s):
        return _sync(store, statuses, check_budget_s, full)


def dirty_state(repo: Repo) -> dict[str, str]:
    """Dirty code files (not under .gitmem/) → ``size:mtime_ns`` (``gone`` when deleted)."""
    out = {}
    for p in repo.dirty_files(skip_gitmem=True):
        if p.startswith(layout.GITMEM_DIR + "/"):
            continue
        try:
            st = (repo.root / p).stat()
            out[p] = f"{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            out[p] = "gone"
    return out


def _sync(store: Store, statuses: dict[str, MemoryStatus] | None, check_budget_s: float | None,
          full: bool) -> HookIndexSync:
    root = store.repo.root
    report = HookIndexSync()
    signature = catalog_db.folder_signature(root)  # before reading: a later write changes it again
    con = catalog_db.connect(root, create=True)
    if con is None:
        raise OSError(f"cannot open {catalog_db.db_path(root)}")
    try:
        # 1. rows: only the memory files that changed are read (gitmem.catalog); a quick sync of
        #    unchanged folders reads nothing
        if full or not catalog_files.rows_current(store, con, signature):
            done = catalog_files.refresh(store, con, full=full, signature=signature)
            report.written, report.deleted = len(done.upserted), len(done.removed)
        # 2. statuses: re-checked for the memories on files that changed since the last check
        #    (HEAD moved, or a dirty file changed), new rows, and rows never checked
        repo = store.repo
        checked_ns = time.time_ns()  # before anything is read: an edit during the check counts as after it
        head = repo.head()
        dirty = dirty_state(repo)
        old_head = catalog_db.get_meta(con, "status_head")
        try:
            old_dirty = json.loads(catalog_db.get_meta(con, "status_dirty") or "null")
        except ValueError:
            old_dirty = None
        todo_ids: set[str] = {r[0] for r in con.execute("SELECT id FROM memories WHERE status IS NULL")}
        if old_dirty is None or old_head is None:
            todo_ids |= {r[0] for r in con.execute("SELECT id FROM memories")}
        else:
            paths = {p for p in set(old_dirty) | set(dirty) if old_dirty.get(p) != dirty.get(p)}
            if old_head != (head or "-"):
                try:
                    for ch in repo.changed_files(None if old_head == "-" else old_head, head):
                        paths.update(p for p in (ch.old_path, ch.new_path) if p)
                except GitError:  # the old HEAD is gone (gc after a rewrite): check everything
                    todo_ids |= {r[0] for r in con.execute("SELECT id FROM memories")}
            todo_ids |= catalog_db.ids_on_paths(con, paths)
        given = statuses or {}
        from ..analyzer import memory_status
        from ..anchors import Resolver

        resolver = Resolver(repo)
        started = time.monotonic()
        todo: list[MemoryStatus] = list(given.values())
        for m in catalog_files.load(con, sorted(todo_ids - set(given))).values():
            if check_budget_s is not None and time.monotonic() - started >= check_budget_s:
                report.unchecked += 1
                continue
            todo.append(memory_status(resolver, m, WORKTREE))
            report.checked += 1
        # the anchored files' last commit times, for the decay (catalog.usage)
        _code_times(con, repo, head, old_head)
        # 3. write them, in a short transaction
        catalog_db.begin(con)
        for ms in todo:
            _set_status(con, store, ms)
        if report.unchecked == 0:
            catalog_db.set_meta(con, "signature", signature)
            catalog_db.set_meta(con, "status_head", head or "-")
            catalog_db.set_meta(con, "status_dirty", json.dumps(dirty, sort_keys=True))
            catalog_db.set_meta(con, "tree_state", tree_state(repo, list(dirty)))
            catalog_db.set_meta(con, "status_checked_ns", str(checked_ns))
        con.commit()
        try:
            catalog_usage.refresh(con, store.layout)
        except (OSError, sqlite3.Error) as e:  # the use counts wait for the next sync; statuses are written
            _log_failure(root, "fold the use log", e)
    finally:
        con.close()
    return report


def _code_times(con: sqlite3.Connection, repo: Repo, head: str | None, old_head: str | None) -> None:
    """``catalog.usage.update_code_times`` from ``old_head`` (meta ``status_head``; ``-``: none) to ``head``;
    a git failure is logged, never raised (the decay then uses what is known)."""
    try:
        catalog_usage.update_code_times(con, repo.last_commit_times, head,
                                        None if old_head in (None, "-") else old_head)
    except GitError as e:  # the old HEAD is gone (gc after a rewrite): look every path up again next time
        con.execute("DELETE FROM code_times")
        _log_failure(repo.root, "record code times", e)


def not_fresh(store: Store) -> list[MemoryStatus]:
    """Statuses at the working tree of the memories that are not fresh, sorted by id.

    Syncs the hook index first (rows: quick ``catalog`` refresh; statuses: only the
    memories on files changed since the last check are re-checked), then
    evaluates again just the not-fresh ones for their per-anchor detail: the cost
    follows what changed and what is stale, not the number of memories.

    Raises: as ``sync_hook_index``.
    """
    sync_hook_index(store, full=False)
    con = catalog_db.connect(store.repo.root)
    if con is None:
        raise OSError(f"cannot open {catalog_db.db_path(store.repo.root)}")
    try:
        bad = [s.value for s in Status if s != Status.FRESH]  # IN (not !=): the status index serves it
        ids = [r[0] for r in con.execute(f"SELECT id FROM memories WHERE status IN ({', '.join('?' * len(bad))}) "
                                         "ORDER BY id", bad)]
        mems = catalog_files.load(con, ids)
    finally:
        con.close()
    from ..analyzer import memory_status
    from ..anchors import Resolver

    resolver = Resolver(store.repo)
    out = [memory_status(resolver, mems[i], WORKTREE) for i in ids if i in mems]
    return [ms for ms in out if ms.status != Status.FRESH]


def _set_status(con: sqlite3.Connection, store: Store, ms: MemoryStatus, rev: str | None = WORKTREE) -> None:
    # a status computed at a commit is re-checked against the work tree by the next sync: it compares
    # the HEAD and dirty files it last checked at (meta status_head / status_dirty) with now
    catalog_db.set_status(con, ms.memory.id, ms.status.value, status_reason(ms), {}, _now_spans(ms))


def _log_failure(root: Path, what: str, e: BaseException) -> None:
    """One line in the hook log (``gitmem doctor`` reports recent ones); never raises."""
    try:
        infra.append_log(layout.of(root).log_file("hooks.log"),
                         f"{infra.utc_now()} hook-index {what} ERROR {type(e).__name__}: {e}\n")
    except OSError:
        pass


def holding_statuses(con: sqlite3.Connection, repo: Repo, ids: list[str]) -> dict[str, tuple[Status, str]]:
    """Of ``ids``, the statuses the catalog recorded that still hold for the work tree now, nothing re-checked:
    id → (status, the worst anchor's keyed reason; "" when fresh). Those left out must be computed
    (``analyzer.memory_status``).

    A recorded status holds when the last full check (``_sync``) ran at the current HEAD (meta ``status_head``;
    a commit since may change a reason, and the post-commit hook records statuses at the commit, not at the work
    tree), and none of the memory's anchored files (where its code was and is now, the links on the way and the
    files they lead to) was dirty at that check (``scan`` records statuses at a commit) or may have changed since
    (``catalog.db.changed_since_checks``: one ``stat`` per file, the rule ``core.as_shown`` applies for the
    hooks). {} when the catalog never finished a check, or on a catalog error.
    """
    try:
        checked = catalog_db.get_meta(con, "status_checked_ns")
        if not checked or catalog_db.get_meta(con, "status_head") != (repo.head() or "-"):
            return {}
        try:
            was_dirty = set(json.loads(catalog_db.get_meta(con, "status_dirty") or "{}"))
        except (TypeError, ValueError):
            return {}
        stored = catalog_db.stored_statuses(con, ids)
        paths = catalog_db.anchored_paths_of(con, stored)
        unsure = was_dirty | catalog_db.changed_since_checks(con, repo.root,
                                                              sorted({p for ps in paths.values() for p in ps}))
    except sqlite3.Error as e:  # a cache: every status is computed then
        _log_failure(repo.root, "read statuses", e)
        return {}
    out: dict[str, tuple[Status, str]] = {}
    for mid, (status, reason) in stored.items():
        if paths.get(mid, set()) & unsure:
            continue
        try:
            out[mid] = (Status(status), reason)
        except ValueError:  # a status value of another gitmem: computed again
            continue
    return out


def known_statuses(store: Store, ids: list[str]) -> dict[str, str | None]:
    """The last recorded status of each of ``ids`` (None: never checked); {} without a hook index."""
    con = catalog_db.connect(store.repo.root)
    if con is None:
        return {}
    try:
        out: dict[str, str | None] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out.update((r[0], r[1]) for r in con.execute(
                f"SELECT id, status FROM memories WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
        return out
    except Exception as e:  # noqa: BLE001 - a cache: logged; "never checked" makes everything news
        _log_failure(store.repo.root, "read statuses", e)
        return {}
    finally:
        con.close()


def record_statuses(store: Store, statuses: dict[str, MemoryStatus], rev: str | None = WORKTREE) -> None:
    """Record statuses (at the working tree, or at commit ``rev``) that a caller computed anyway.

    Errors are ignored: the hook index is a cache.
    """
    if not statuses:
        return
    try:
        con = catalog_db.connect(store.repo.root)
        if con is None:
            return
        try:
            catalog_db.begin(con)
            for ms in statuses.values():
                _set_status(con, store, ms, rev)
            con.commit()
        finally:
            con.close()
    except Exception as e:  # noqa: BLE001 - a cache: logged, and the next full sync repairs it
        _log_failure(store.repo.root, "record statuses", e)


def record_written(store: Store, written: Sequence[Memory], removed: Sequence[str] = ()) -> None:
    """Put just-written memories (with their status) into the hook index, and drop removed ones.

    The rest of the index is left as it is; readers notice the changed memory
    folders and start a full sync. Errors are ignored: the index is a cache.
    """
    from .. import memfile
    from ..analyzer import memory_status
    from ..anchors import Resolver

    root = store.repo.root
    try:
        con = catalog_db.connect(root, create=True)
        if con is None:
            return
        try:
            resolver = Resolver(store.repo)
            lay = store.layout
            # both folders' keys of every id: a scope change moved a file from one to the other
            files = [f"{d}/{mid}{memfile.FILE_SUFFIX}" for mid in [*(m.id for m in written), *removed]
                     for d in (layout.TEAM_MEMORIES, lay.local_key_prefix)]
            catalog_files.refresh(store, con, full=False, only=files)
            catalog_db.begin(con)
            for m in written:
                _set_status(con, store, memory_status(resolver, m, WORKTREE))
            con.commit()
        finally:
            con.close()
    except Exception as e:  # noqa: BLE001 - a cache: logged, and the next full sync repairs it
        _log_failure(root, "record written memories", e)


class HookIndexSource:
    """Candidates for ``context.build_context`` read from a current hook index (``context.CandidateSource``).

    Everything with a possible proximity to the focus — memories anchored to
    its files, their directories, its import neighbours and the symbols it names
    — plus the ``recent`` most recently updated, so an empty focus still fills
    the budget. Only those memories are read (one SQLite query), not 10,000 files.
    """

    def __init__(self, con: sqlite3.Connection, recent: int, per_path: int | None = None) -> None:
        self.con = con
        self.recent = recent
        #: memories taken per focus file (and over the focus directories): see ``db.ids_near``
        self.per_path = per_path or recent
        self.total = catalog_db.count(con)
        self._anchored: set[str] | None = None

    def anchored_paths(self) -> set[str]:
        if self._anchored is None:
            self._anchored = catalog_db.anchored_paths(self.con)
        return self._anchored

    def candidates(self, focus: Focus, extra: list[str] | tuple[str, ...] = ()) -> LoadResult:
        """The memories near ``focus``, the recent ones and the ``extra`` ids (text-search hits)."""
        dirs = set(focus.dirs())
        paths = set(focus.files) | {p for p, _ in focus.symbols}
        imports = set(focus.imports) - paths
        in_dirs = {p for p in self.anchored_paths() if p.rpartition("/")[0] in dirs} - paths - imports
        ids = catalog_db.ids_near(self.con, paths, list(focus.symbols), self.per_path, (imports, in_dirs))
        for found in catalog_db.symbols_named(self.con, focus.names, self.per_path).values():
            ids.update(found)
        ids.update(catalog_db.recent_ids(self.con, self.recent))
        ids.update(extra)
        res = LoadResult()
        for d in catalog_db.full_memories(self.con, sorted(ids)):
            try:
                m = memory_from_dict(d)
            except (KeyError, TypeError, ValueError):
                continue
            res.memories[m.id] = m
        res.memories = dict(sorted(res.memories.items()))
        return res


def open_source(store: Store, budget_tokens: int) -> HookIndexSource | None:
    """A ``HookIndexSource`` when the hook index is current, else None (read the files instead).

    ``recent`` covers three times the index lines the budget can hold
    (``rank.MIN_INDEX_LINE_CHARS``), at least 200: a memory further down by
    recency cannot reach the packed part of an empty-focus ranking.
    """
    from ..rank.render import CHARS_PER_TOKEN, MIN_INDEX_LINE_CHARS

    root = store.repo.root
    con = catalog_db.connect(root)
    if con is None:
        return None
    if not catalog_db.is_current(con, root):
        con.close()
        return None
    return HookIndexSource(con, max(200, 3 * budget_tokens * CHARS_PER_TOKEN // MIN_INDEX_LINE_CHARS))


def spawn_sync(root: Path) -> None:
    """Start ``python -P -m gitmem.catalog.sync ROOT`` detached (no stdio; the caller never waits).

    Raises:
        OSError: the process could not be started.
    """
    infra.spawn_detached("gitmem.catalog.sync", str(root), cwd=root)


def main(argv: list[str] | None = None) -> int:
    """``python -m gitmem.catalog.sync ROOT``: a full sync; exits at once if another one runs. Returns 0."""
    args = sys.argv[1:] if argv is None else argv
    try:
        root = Path(args[0]) if args else Path.cwd()
        repo = Repo(root)
        repo.fetch_seconds = 0.0  # started by a hook, in the background: never a fetch nobody asked for
        store = Store(repo, require=False)
        if not store.dir.is_dir():
            return 0
        store.enable_symbol_cache()
        from filelock import Timeout

        try:
            sync_hook_index(store, lock_timeout_s=0)  # another sync is running: it does the work
        except Timeout:
            return 0
    except Exception as e:  # noqa: BLE001 - a detached helper: log, never raise
        _log_failure(Path(args[0]) if args else Path.cwd(), "sync", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
