"""The one write path (``gitmem.memories.write`` / ``delete``): files and catalog change together.

Real repositories, the real catalog; what every caller (remember, share, retire, supersede, re-anchor,
import, consolidation) relies on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem import memories
from gitmem.catalog import db as catalog_db
from gitmem.errors import MemoryNotFound
from gitmem.git import Repo
from gitmem.store import Store, init_layout
from testing.gitmem_cli import memory
from testing.repos import make_repo


@pytest.fixture
def store(tmp_path: Path) -> Store:
    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    return Store(Repo(repo))


def _catalog(store: Store) -> dict[str, tuple[str, str]]:
    """id → (title, scope) as the catalog has it, without refreshing it first."""
    con = catalog_db.connect(store.repo.root)
    assert con is not None
    try:
        return {r["id"]: (r["title"], r["scope"]) for r in catalog_db.all_memories(con) for r in [r[0]]}
    finally:
        con.close()


def test_write_puts_each_file_in_its_scope_s_folder_and_the_catalog_knows_at_once(store: Store) -> None:
    paths = memories.write(store, [memory("01MA", "team one"), memory("01MB", "local one", scope="local")])
    assert paths == [store.memories_dir / "01MA.md", store.local_memories_dir / "01MB.md"]
    assert all(p.is_file() for p in paths)
    assert _catalog(store) == {"01MA": ("team one", "team"), "01MB": ("local one", "local")}


def test_a_scope_change_moves_the_file_and_the_row(store: Store) -> None:
    memories.write(store, [memory("01MA", "captured", scope="local")])
    memories.write(store, [memory("01MA", "captured", scope="team")])  # shared
    assert not (store.local_memories_dir / "01MA.md").exists()
    assert (store.memories_dir / "01MA.md").is_file()
    assert _catalog(store) == {"01MA": ("captured", "team")}
    assert store.load_all().errors == []  # no duplicate left behind


def test_removed_ids_lose_their_files_in_the_scope_asked(store: Store) -> None:
    memories.write(store, [memory("01MA", "team"), memory("01MB", "local", scope="local")])
    memories.write(store, removed=["01MA", "01MB"], removed_scope="local")
    assert (store.memories_dir / "01MA.md").is_file() and not (store.local_memories_dir / "01MB.md").exists()
    assert _catalog(store) == {"01MA": ("team", "team")}
    memories.write(store, removed=["01MA", "01ZZ"])  # a missing file is fine
    assert _catalog(store) == {}


def test_a_retired_memory_keeps_its_file_and_leaves_the_catalog_rows(store: Store) -> None:
    m = memory("01MA", "no longer true")
    memories.write(store, [m])
    m.retired = "2026-12-01T00:00:00Z"
    memories.write(store, [m])
    assert "retired:" in (store.memories_dir / "01MA.md").read_text()
    assert _catalog(store) == {}
    assert list(store.load_all().retired) == ["01MA"]


def test_delete_returns_what_the_file_held_and_accepts_a_prefix(store: Store) -> None:
    memories.write(store, [memory("01MAXYZ", "to forget", scope="local")])
    gone = memories.delete(store, "01max")
    assert (gone.id, gone.title) == ("01MAXYZ", "to forget")
    assert _catalog(store) == {}
    with pytest.raises(MemoryNotFound):
        memories.delete(store, "01MAXYZ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_failed_write_leaves_what_was_written_in_the_catalog(store: Store) -> None:
    store.local_memories_dir.mkdir(parents=True, exist_ok=True)
    store.local_memories_dir.chmod(0o500)
    try:
        with pytest.raises(OSError):
            memories.write(store, [memory("01MA", "written first"), memory("01MB", "cannot", scope="local")])
    finally:
        store.local_memories_dir.chmod(0o700)
    assert _catalog(store) == {"01MA": ("written first", "team")}


def test_a_failed_write_as_root_leaves_what_was_written_in_the_catalog(store: Store) -> None:
    """Root ignores folder permissions: a folder that is a file makes the second write fail instead."""
    store.local_memories_dir.parent.mkdir(parents=True, exist_ok=True)
    store.local_memories_dir.write_text("not a folder")
    with pytest.raises(OSError):
        memories.write(store, [memory("01MA", "written first"), memory("01MB", "cannot", scope="local")])
    assert _catalog(store) == {"01MA": ("written first", "team")}
