"""Keep the hook index (``gitmem.hookindex``) in step with the memory files and the working tree.

``sync_hook_index`` upserts the rows whose file content changed (by content hash),
deletes the rows of removed files, and re-checks the status of the memories
whose anchored files changed on disk since their last check (blob SHAs), within
an optional time budget; what the budget leaves is checked by a detached
``python -m gitmem.hookindex_sync ROOT`` (``spawn_sync``).

Called by SessionStart, consolidation, the CLI commands that write memories and
the git hooks. Must not import lancedb.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from . import hookindex
from .analyzer import memory_status
from .anchors import Resolver
from .git import WORKTREE, Repo
from .memfile import memory_from_dict, memory_to_dict
from .model import KIND_COMMIT, Memory, MemoryStatus, Status
from .store import LoadResult, Store


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
    con = hookindex.connect(store.repo.root)
    if con is None:
        return True
    try:
        return hookindex.get_meta(con, "tree_state") != tree_state(store.repo, dirty)
    finally:
        con.close()


def memory_row(m: Memory, digest: str) -> dict:  # type: ignore[type-arg]
    """The hook-index row of ``m`` (status unknown until checked)."""
    anchors = []
    for a in m.anchors:
        span = a.span or (None, None)
        anchors.append({"key": a.key, "path": a.path if a.kind != KIND_COMMIT else None, "symbol": a.symbol,
                        "start": span[0], "end": span[1]})
    return {"id": m.id, "type": m.type, "title": m.title, "body": m.body, "facts": list(m.facts),
            "tags": list(m.tags), "anchors": anchors, "scope": m.scope, "updated": m.updated or m.created,
            "confidence": m.confidence, "digest": digest, "status": None, "reason": "", "checked": {},
            "memory": memory_to_dict(m)}


def status_reason(ms: MemoryStatus) -> str:
    """``path::Symbol <reason>`` of the worst anchor ("" when fresh)."""
    if ms.status == Status.FRESH or not ms.anchors:
        return ""
    worst = max(ms.anchors, key=lambda a: a.status.severity)
    return f"{worst.anchor.key} {worst.reason}".strip()


def _now_spans(ms: MemoryStatus) -> list[tuple[str, str | None, int | None, int | None]]:
    """Where each anchor's code is in the working tree: (path, symbol, start, end)."""
    out = []
    for a in ms.anchors:
        if a.status == Status.DELETED or a.anchor.kind == KIND_COMMIT:
            continue
        span = a.new_span or (None, None)
        out.append((a.path_now or a.anchor.path, a.symbol_now or a.anchor.symbol, span[0], span[1]))
    return out


def _anchored_files(m: Memory) -> list[str]:
    return sorted({a.path for a in m.anchors if a.path and a.kind != KIND_COMMIT})


def sync_hook_index(store: Store, loaded: LoadResult | None = None, *,
                    statuses: dict[str, MemoryStatus] | None = None,
                    check_budget_s: float | None = None, lock_timeout_s: float = 60.0) -> HookIndexSync:
    """Bring the hook index up to date; see the module docstring.

    Args:
        loaded: the memories, if the caller has loaded them already.
        statuses: statuses at the working tree the caller already computed (recorded as they are).
        check_budget_s: seconds to spend re-checking statuses (None: no limit; 0: none).
        lock_timeout_s: seconds to wait for another sync to finish (syncs run one at a time).

    Raises:
        OSError / sqlite3.Error: the index file cannot be written.
        filelock.Timeout: another sync held the lock longer than ``lock_timeout_s``.
    """
    store.cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(store.cache_dir / "hooks-sync.lock"), timeout=lock_timeout_s):
        return _sync(store, loaded, statuses, check_budget_s)


def _sync(store: Store, loaded: LoadResult | None, statuses: dict[str, MemoryStatus] | None,
          check_budget_s: float | None) -> HookIndexSync:
    root = store.repo.root
    report = HookIndexSync()
    signature = hookindex.folder_signature(root)  # before reading: a later write changes it again
    loaded = loaded if loaded is not None else store.load_all()
    con = hookindex.connect(root, create=True)
    if con is None:
        raise OSError(f"cannot open {hookindex.db_path(root)}")
    try:
        # 1. rows, in one write transaction (readers keep seeing the last commit meanwhile)
        hookindex.begin(con)
        have = hookindex.digests(con)
        fresh_rows = [memory_row(m, loaded.hashes[mid]) for mid, m in loaded.memories.items()
                      if have.get(mid, ("",))[0] != loaded.hashes[mid]]
        report.written = hookindex.upsert(con, fresh_rows)
        gone = [mid for mid in have if mid not in loaded.memories]
        hookindex.delete(con, gone)
        report.deleted = len(gone)
        con.commit()
        # 2. statuses, computed outside any transaction (seconds, at 10,000 memories)
        have = hookindex.digests(con)
        repo = store.repo
        blobs: dict[str, str | None] = {}

        def blob(p: str) -> str | None:
            if p not in blobs:
                blobs[p] = repo.blob_sha(WORKTREE, p)
            return blobs[p]

        resolver = Resolver(repo)
        started = time.monotonic()
        todo: list[tuple[MemoryStatus, dict[str, str | None]]] = []
        for mid, m in loaded.memories.items():
            checked_now = {p: blob(p) for p in _anchored_files(m)}
            given = (statuses or {}).get(mid)
            _, status, checked = have.get(mid, ("", None, {}))
            if given is None and status is not None and checked == checked_now:
                continue
            if given is None:
                if check_budget_s is not None and time.monotonic() - started >= check_budget_s:
                    report.unchecked += 1
                    continue
                given = memory_status(resolver, m, WORKTREE)
                report.checked += 1
            todo.append((given, checked_now))
        # 3. write them, in a short transaction
        hookindex.begin(con)
        for ms, checked_now in todo:
            hookindex.set_status(con, ms.memory.id, ms.status.value, status_reason(ms), checked_now, _now_spans(ms))
        if report.unchecked == 0:
            hookindex.set_meta(con, "signature", signature)
            hookindex.set_meta(con, "tree_state", tree_state(repo, [p for p in repo.dirty_files()
                                                                     if not p.startswith(".gitmem/")]))
        con.commit()
    finally:
        con.close()
    return report


def _set_status(con, store: Store, ms: MemoryStatus, rev: str | None = WORKTREE) -> None:  # type: ignore[no-untyped-def]
    # the blobs the status was computed on: at a commit, a file dirty in the work tree differs, so the
    # next sync re-checks that memory against the work tree
    checked = {p: store.repo.blob_sha(rev, p) for p in _anchored_files(ms.memory)}
    hookindex.set_status(con, ms.memory.id, ms.status.value, status_reason(ms), checked, _now_spans(ms))


def _log_failure(root: Path, what: str, e: BaseException) -> None:
    """One line in the hook log (``gitmem doctor`` reports recent ones); never raises."""
    from .hook_entry import _append_log, _now, hook_log_path

    _append_log(hook_log_path(root), f"{_now()} hook-index {what} ERROR {type(e).__name__}: {e}\n")


def record_statuses(store: Store, statuses: dict[str, MemoryStatus], rev: str | None = WORKTREE) -> None:
    """Record statuses (at the working tree, or at commit ``rev``) that a caller computed anyway.

    Errors are ignored: the hook index is a cache.
    """
    if not statuses:
        return
    try:
        con = hookindex.connect(store.repo.root)
        if con is None:
            return
        try:
            hookindex.begin(con)
            for ms in statuses.values():
                _set_status(con, store, ms, rev)
            con.commit()
        finally:
            con.close()
    except Exception as e:  # noqa: BLE001 - a cache: logged, and the next full sync repairs it
        _log_failure(store.repo.root, "record statuses", e)


def record_written(store: Store, written: list[Memory], removed: list[str] = ()) -> None:  # type: ignore[assignment]
    """Put just-written memories (with their status) into the hook index, and drop removed ones.

    The rest of the index is left as it is; readers notice the changed memory
    folders and start a full sync. Errors are ignored: the index is a cache.
    """
    from . import memfile

    root = store.repo.root
    try:
        con = hookindex.connect(root, create=True)
        if con is None:
            return
        try:
            resolver = Resolver(store.repo)
            hookindex.begin(con)
            hookindex.delete(con, removed)
            for m in written:
                path = store.path_for(m)
                data = path.read_bytes()
                m = memfile.parse_bytes(data, path)  # the memory as written (text cleaned), not as given
                row = memory_row(m, memfile.content_hash(data))
                hookindex.upsert(con, [row])
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

    def __init__(self, con, recent: int) -> None:  # type: ignore[no-untyped-def]
        self.con = con
        self.recent = recent
        self.total = hookindex.count(con)
        self._anchored: set[str] | None = None

    def anchored_paths(self) -> set[str]:
        if self._anchored is None:
            self._anchored = hookindex.anchored_paths(self.con)
        return self._anchored

    def candidates(self, focus) -> LoadResult:  # type: ignore[no-untyped-def]
        dirs = set(focus.dirs())
        paths = set(focus.files) | set(focus.imports) | {p for p, _ in focus.symbols}
        paths |= {p for p in self.anchored_paths() if p.rpartition("/")[0] in dirs}
        ids = hookindex.ids_on_paths(self.con, paths)
        for found in hookindex.symbols_named(self.con, focus.names).values():
            ids.update(found)
        ids.update(hookindex.recent_ids(self.con, self.recent))
        res = LoadResult()
        for d in hookindex.full_memories(self.con, sorted(ids)):
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
    from .rank import CHARS_PER_TOKEN, MIN_INDEX_LINE_CHARS

    root = store.repo.root
    con = hookindex.connect(root)
    if con is None:
        return None
    if not hookindex.is_current(con, root):
        con.close()
        return None
    return HookIndexSource(con, max(200, 3 * budget_tokens * CHARS_PER_TOKEN // MIN_INDEX_LINE_CHARS))


def spawn_sync(root: Path) -> None:
    """Start ``python -P -m gitmem.hookindex_sync ROOT`` detached (no stdio; the caller never waits)."""
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    subprocess.Popen([sys.executable, "-P", "-m", "gitmem.hookindex_sync", str(root)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, env=env, cwd=str(root))


def main(argv: list[str] | None = None) -> int:
    """``python -m gitmem.hookindex_sync ROOT``: a full sync; exits at once if another one runs. Returns 0."""
    args = sys.argv[1:] if argv is None else argv
    try:
        root = Path(args[0]) if args else Path.cwd()
        store = Store(Repo(root), require=False)
        if not store.dir.is_dir():
            return 0
        store.enable_symbol_cache()
        try:
            sync_hook_index(store, lock_timeout_s=0)  # another sync is running: it does the work
        except Timeout:
            return 0
    except Exception as e:  # noqa: BLE001 - a detached helper: log, never raise
        from .hook_entry import _append_log, hook_log_path, _now

        try:
            _append_log(hook_log_path(Path(args[0]) if args else Path.cwd()),
                        f"{_now()} hook-index-sync error: {type(e).__name__}: {e}\n")
        except Exception:  # noqa: BLE001
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
