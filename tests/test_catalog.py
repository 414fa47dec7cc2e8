"""The catalog (``gitmem/catalog/``): its rows follow the memory files, its change log, and what it survives.

Real repositories, real files, a real SQLite catalog in git's folder.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from gitmem import layout, memfile
from gitmem.catalog import db as catalog_db
from gitmem.catalog import files as catalog_files
from gitmem.git import Repo
from gitmem.memories import write as write_memories
from gitmem.store import Store, init_layout
from testing.gitmem_cli import memory
from testing.repos import commit, git, make_repo


@pytest.fixture
def store(tmp_path: Path) -> Store:
    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    return Store(Repo(repo))


def _ids(store: Store) -> list[str]:
    con = catalog_files.open_current(store, full=True)
    assert con is not None
    try:
        return sorted(m.id for m, _, _ in catalog_files.all_memories(con))
    finally:
        con.close()


def test_the_catalog_lives_in_git_s_folder_and_is_rebuilt_from_files(store: Store) -> None:
    write_memories(store, [memory("01MA", "alpha"), memory("01MB", "beta", scope="local")])
    path = layout.of(store.repo.root).catalog_file
    assert path.is_file() and path.is_relative_to(store.repo.root / ".git")
    assert _ids(store) == ["01MA", "01MB"]
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    assert _ids(store) == ["01MA", "01MB"]  # derived data: rebuilt from the files


def test_a_corrupt_or_foreign_schema_catalog_is_started_over(store: Store) -> None:
    write_memories(store, [memory("01MA", "alpha")])
    path = layout.of(store.repo.root).catalog_file
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(os.urandom(4096))
    assert _ids(store) == ["01MA"]
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = 'old' WHERE key = 'schema'")
    con.commit()
    con.close()
    assert catalog_db.connect(store.repo.root) is None  # a reader never reads another schema
    assert _ids(store) == ["01MA"]


def test_rows_follow_files_written_edited_and_deleted_by_hand(store: Store) -> None:
    write_memories(store, [memory("01MA", "alpha")])
    assert _ids(store) == ["01MA"]
    other = store.memories_dir / "01MC.md"
    other.write_text(memfile.dumps(memory("01MC", "gamma")))  # by hand: git pull, an editor
    edited = store.memories_dir / "01MA.md"
    edited.write_text(memfile.dumps(memory("01MA", "alpha edited")))
    os.utime(edited, ns=(1, 1))  # a stat key that moved backwards is a change too
    assert _ids(store) == ["01MA", "01MC"]
    con = catalog_files.open_current(store, full=True)
    assert con is not None
    assert catalog_files.load(con, ["01MA"])["01MA"].title == "alpha edited"
    con.close()
    other.unlink()
    assert _ids(store) == ["01MA"]


def test_invalid_and_duplicate_files_are_errors_and_the_team_copy_wins(store: Store) -> None:
    write_memories(store, [memory("01MA", "team copy")])
    local = store.local_memories_dir / "01MA.md"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(memfile.dumps(memory("01MA", "local copy", scope="local")))
    (store.memories_dir / "01MB.md").write_text("---\nid: 01MB\ntype: nope\ntitle: t\n---\n")
    loaded = store.load_all()
    assert loaded.memories["01MA"].title == "team copy"
    errors = {e.path: e.message for e in loaded.errors}
    assert set(errors) == {".gitmem/memories/01MB.md", ".git/gitmem/local/memories/01MA.md"}
    assert "unknown type 'nope'" in errors[".gitmem/memories/01MB.md"]
    assert "duplicate id 01MA" in errors[".git/gitmem/local/memories/01MA.md"]
    (store.memories_dir / "01MA.md").unlink()  # the team copy goes: the local one takes the id back
    assert store.load_all().memories["01MA"].title == "local copy"


def test_sharing_a_local_memory_keeps_its_row_whatever_another_refresh_did(store: Store) -> None:
    """Regression: a memory moved from the local to the team folder lost its catalog row (and so every
    search and context) when a concurrent refresh had recorded both files as ok: removing the local file's
    row deleted the memory although the team file still held it. Seen as lost memories under load."""
    m = memory("01MA", "shared later", scope="local")
    write_memories(store, [m])
    team = store.memories_dir / "01MA.md"
    team.write_text(memfile.dumps(memory("01MA", "shared later")))
    con = catalog_db.connect(store.repo.root, create=True)
    assert con is not None
    try:
        catalog_files.refresh(store, con, full=False, only=[layout.TEAM_MEMORIES + "/01MA.md"])
        # what an interleaved refresh leaves: both files recorded as ok for one id
        con.execute("UPDATE files SET state = 'ok' WHERE id = '01MA'")
        con.commit()
        (store.local_memories_dir / "01MA.md").unlink()
        lay = store.layout
        catalog_files.refresh(store, con, full=False, only=[f"{lay.local_key_prefix}/01MA.md"])
        assert [r["id"] for r in catalog_db.rows(con, ["01MA"])] == ["01MA"]
        catalog_files.refresh(store, con, full=True)
        (row,) = catalog_db.rows(con, ["01MA"])
        assert row["scope"] == "team"
    finally:
        con.close()
    assert _ids(store) == ["01MA"]


def test_change_log_gives_exactly_the_changes_since_a_mark(store: Store) -> None:
    write_memories(store, [memory("01MA", "alpha"), memory("01MB", "beta")])
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        mark = catalog_files.mark(con)
        assert catalog_files.changes_since(con, mark) == (mark, [], [])
        write_memories(store, [memory("01MA", "alpha two")], removed=["01MB"])
        now, rows, removed = catalog_files.changes_since(con, mark) or ("", [], [])
        assert now != mark and [r["id"] for r in rows] == ["01MA"] and removed == ["01MB"]
        assert catalog_files.changes_since(con, "another-generation:3") is None  # compare everything
    finally:
        con.close()


def test_quick_refresh_sees_files_git_changes_under_the_same_name(store: Store) -> None:
    root = store.repo.root
    write_memories(store, [memory("01MA", "version one")])
    commit(root, "v1")
    write_memories(store, [memory("01MA", "version two")])
    commit(root, "v2")
    git(root, "checkout", "-q", "HEAD~1")  # git rewrites the file in place under the same name
    con = catalog_files.open_current(store)  # quick refresh: git's tree of the team folder moved
    assert con is not None
    try:
        assert catalog_files.load(con, ["01MA"])["01MA"].title == "version one"
    finally:
        con.close()


def test_search_and_path_queries_of_the_hot_path(store: Store) -> None:
    root = store.repo.root
    from gitmem.anchors import Resolver
    from gitmem.git import WORKTREE

    m = memory("01MA", "retries are capped", body="the upstream rate-limits fetchRetries")
    m.anchors = [Resolver(store.repo).make("a.py", "f", WORKTREE)]
    write_memories(store, [m, memory("01MB", "unrelated note")])
    con = catalog_db.connect(root)
    assert con is not None
    try:
        assert [f[0] for f in catalog_db.on_path(con, "a.py")] == ["01MA"]
        assert [mid for mid, _ in catalog_db.search(con, "fetch retries")][:1] == ["01MA"]  # split identifiers
        assert catalog_db.symbols_named(con, ["f"]) == {"f": ["01MA"]}
        assert catalog_db.anchored_paths(con) == {"a.py"}
        assert catalog_db.search(con, '"; DROP TABLE memories; --') == []  # FTS syntax is never passed through
    finally:
        con.close()


def test_uncommitted_memories_leave_the_rows_current_between_changes(store: Store) -> None:
    """HEAD has no ``.gitmem/memories`` tree (the memories were never committed): once refreshed, the rows are
    current until a folder changes, so a query does not read every memory file again."""
    write_memories(store, [memory("01MA", "alpha")])
    for _, folder in store.layout.memory_dirs():  # written a while ago: past the racy window
        if folder.is_dir():
            os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns - 10 * catalog_files.RACY_NS))
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        assert catalog_files.team_tree(store) is None
        signature = catalog_db.folder_signature(store.repo.root)
        assert catalog_files.rows_current(store, con, signature)
        write_memories(store, [memory("01MB", "beta")])
        assert not catalog_files.rows_current(store, con, catalog_db.folder_signature(store.repo.root))
    finally:
        con.close()


def test_quick_refresh_sees_a_file_edited_in_place(store: Store) -> None:
    """An editor writing a memory file in place changes no folder's mtime: the rows are 'current' by folder
    signature and git's tree, yet the edit is seen (a hand edit of a reviewed memory must not stay reviewed)."""
    write_memories(store, [memory("01MA", "version one"), memory("01MB", "beta")])
    for _, folder in store.layout.memory_dirs():  # written a while ago: past the racy window
        if folder.is_dir():
            for f in folder.iterdir():
                os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns - 10 * catalog_files.RACY_NS))
            os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns - 10 * catalog_files.RACY_NS))
    con = catalog_files.open_current(store, full=True)
    assert con is not None
    con.close()
    path = store.layout.team_memories_dir / "01MA.md"
    signature = catalog_db.folder_signature(store.repo.root)
    with open(path, "r+", encoding="utf-8") as f:  # in place: same inode, the folder untouched
        text = f.read().replace("version one", "version two")
        f.seek(0)
        f.write(text)
        f.truncate()
    assert catalog_db.folder_signature(store.repo.root) == signature
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        assert catalog_files.load(con, ["01MA"])["01MA"].title == "version two"
    finally:
        con.close()
