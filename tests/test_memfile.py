"""Memory files: deterministic writes, one-line errors for bad files, the others keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import memfile
from gitmem.errors import MemoryFileError
from gitmem.git import Repo
from gitmem.memories import write as write_memories
from gitmem.model import Anchor, Memory
from gitmem.store import Store, init_layout
from testing.repos import make_repo

SHA = "3f2a" + "0" * 36


def _memory(**kw) -> Memory:
    base = dict(id="01JD3V6Q4W8N5X2Y7Z9A0B1C2D", type="decision", title="Config load order",
                body="env > yaml > defaults\n\nSee `parse_config`.", facts=["env wins"], tags=["config", "env"],
                anchors=[Anchor(path="src/config.py", symbol="parse_config", commit=SHA, kind="function",
                                span=(10, 42), fingerprint="ts1:abc"),
                         Anchor(path=None, commit=SHA, kind="commit")],
                author="Ada", created="2026-11-30T17:22:49Z", updated="2026-11-30T17:22:49Z")
    base.update(kw)
    return Memory(**base)


def test_round_trip_is_byte_identical(tmp_path: Path) -> None:
    m = _memory()
    p = tmp_path / f"{m.id}.md"
    first = memfile.write(p, m)
    again, data = memfile.read(p)
    assert again == m
    second = memfile.write(p, again)
    assert first == second == data
    text = first.decode()
    assert text.startswith("---\nid: 01JD3V6Q4W8N5X2Y7Z9A0B1C2D\ntype: decision\n")
    assert "- anchor: src/config.py::parse_config\n" in text
    assert "  span: [10, 42]\n" in text
    assert "- anchor: commit:" + SHA in text


def test_hostile_text_stays_valid(tmp_path: Path) -> None:
    m = _memory(title="emoji 🚀 and \"quotes\" and: colons",
                body="lone \udcff surrogate\r\nCRLF line\n---\nnot front matter",
                facts=["- dash", "# hash", "yes", "null"], tags=["🚀"])
    p = tmp_path / f"{m.id}.md"
    memfile.write(p, m)
    back, _ = memfile.read(p)
    assert back.title == m.title
    assert "\ufffd surrogate" in back.body and "\r" not in back.body
    assert back.body.endswith("---\nnot front matter")
    assert back.facts == ["- dash", "# hash", "yes", "null"]
    memfile.write(p, back)
    assert memfile.read(p)[0] == back


@pytest.mark.parametrize("text,needle", [
    ("---\nid: X1\ntype: decision\ntitle: [unclosed\n---\n", "invalid YAML"),
    ("---\nid: X1\ntype: wish\ntitle: t\n---\n", "unknown type 'wish'"),
    ("---\nid: X1\ntype: decision\ntitle: t\n<<<<<<< HEAD\nanchors: []\n=======\n>>>>>>> b\n---\n",
     "merge-conflict markers"),
    ("---\nid: X1\ntype: decision\ntitle: t\nanchors:\n- anchor: ../../etc/passwd\n---\n", "outside the repository"),
    ("---\nid: X1\ntype: decision\ntitle: t\nanchors:\n- anchor: /etc/passwd::x\n---\n", "outside the repository"),
    ("no front matter\n", "no YAML front matter"),
    ("---\nid: X1\ntype: decision\n---\n", "'title'"),
    ("---\nid: X1\ntype: decision\ntitle: t\nconfidence: 7\n---\n", "confidence"),
    ("---\nid: X1\ntype: decision\ntitle: t\nanchors:\n- anchor: a.py\n  commit: HEAD\n---\n", "full hex SHA"),
])
def test_bad_files_give_one_line_errors(tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "X1.md"
    p.write_text(text)
    with pytest.raises(MemoryFileError) as e:
        memfile.read(p, display="X1.md")
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and msg.startswith("X1.md")


def test_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    store = Store(Repo(repo))
    good = _memory(id="01GOOD")
    write_memories(store, [good])
    (store.memories_dir / "01BAD.md").write_text("---\nid: 01BAD\ntype: nope\ntitle: t\n---\n")
    (store.memories_dir / "01BIN.md").write_bytes(b"---\xff\xfe\n")
    res = store.load_all()
    assert list(res.memories) == ["01GOOD"]
    assert sorted(e.path for e in res.errors) == [".gitmem/memories/01BAD.md", ".gitmem/memories/01BIN.md"]


def test_file_name_must_match_id(tmp_path: Path) -> None:
    p = tmp_path / "OTHER.md"
    p.write_text(memfile.dumps(_memory()))
    with pytest.raises(MemoryFileError, match="does not match id"):
        memfile.read(p)


def test_parsed_cache_gives_equal_memories_and_survives_corruption(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    store = Store(Repo(repo))
    for i in range(3):
        write_memories(store, [_memory(id=f"01M{i}", title=f"t{i} 🚀")])
    first = store.load_all()
    cache = store.layout.catalog_file  # load_all is served from the catalog
    assert cache.is_file()
    second = store.load_all()
    assert second.memories == first.memories and second.hashes == first.hashes
    write_memories(store, [_memory(id="01M1", title="changed")])
    assert store.load_all().memories["01M1"].title == "changed"
    cache.write_text("{garbage")
    for suffix in ("-wal", "-shm"):
        Path(str(cache) + suffix).unlink(missing_ok=True)
    assert store.load_all().memories == {**first.memories, "01M1": store.get("01M1")}


def test_catalog_reads_only_memory_files_whatever_git_changed(tmp_path: Path) -> None:
    """A pull that adds .gitkeep, a README and a nested folder under .gitmem/memories: only *.md files
    directly in the folder are memories; the rest is never read as one (quick and full refresh agree)."""
    from gitmem.catalog import files as catalog_files
    from testing.repos import commit

    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    store = Store(Repo(repo))
    write_memories(store, [_memory(id="01MA", title="one")])
    commit(repo, "memories", {".gitmem/memories/README.txt": "not a memory\n",
                              ".gitmem/memories/sub/01MB.md": "---\nnot: here\n---\n"})
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        assert catalog_files.errors(con) == []
        assert [r[0] for r in con.execute("SELECT id FROM memories")] == ["01MA"]
    finally:
        con.close()
    assert store.load_all().errors == [] and list(store.load_all().memories) == ["01MA"]


def test_catalog_sees_files_git_restores_and_survives_a_rewritten_history(tmp_path: Path) -> None:
    """A team memory edited, then restored by git under the same name (HEAD unchanged); a local one
    rewritten by delete-and-create (the inode may be reused); and a recorded tree gc'd away: the quick
    refresh that queries run shows what the files say, and never fails."""
    import os
    import time

    from gitmem.catalog import files as catalog_files
    from testing.repos import commit, git

    repo = make_repo(tmp_path / "r", {"a.py": "def f():\n    return 1\n"})
    init_layout(Repo(repo))
    store = Store(Repo(repo))
    write_memories(store, [_memory(id="01MA", title="zebracorn")])
    write_memories(store, [_memory(id="01ML", title="ferretine", scope="local")])
    commit(repo, "memories")

    def titles() -> dict[str, str]:
        con = catalog_files.open_current(store)
        assert con is not None
        try:
            return {r[0]: r[1] for r in con.execute("SELECT id, title FROM memories")}
        finally:
            con.close()

    team, local = store.path_for(_memory(id="01MA")), store.path_for(_memory(id="01ML", scope="local"))
    team.write_text(team.read_text().replace("zebracorn", "dirtyword"))
    time.sleep(2.1)  # out of the racy window: the refresh trusts what it records
    assert titles()["01MA"] == "dirtyword"
    time.sleep(2.1)
    git(repo, "restore", ".gitmem/memories/01MA.md")
    text = local.read_text().replace("ferretine", "minkolo")
    os.unlink(local)
    local.write_text(text)
    assert titles() == {"01MA": "zebracorn", "01ML": "minkolo"}
    # the tree recorded by the last refresh disappears from the object database
    team.write_text(team.read_text().replace("zebracorn", "gcword"))
    commit(repo, "edit")
    assert titles()["01MA"] == "gcword"
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    assert titles()["01MA"] == "zebracorn"
