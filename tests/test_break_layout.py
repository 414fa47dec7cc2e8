"""Bugs found by breaking the per-clone layout (``gitmem.layout``) and its migration, fixed: each test is a real
repository, real git, the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import layout
from testing.gitmem_cli import gitmem, listed, ok
from testing.repos import commit, git, make_repo

APP = "def run():\n    return 1\n\n\ndef stop():\n    x = 1\n    y = 2\n    return x + y\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = make_repo(tmp_path / "main", {"app.py": APP})
    ok(r, "init", "--no-hooks")
    commit(r, "gitmem")
    return r


def _to_old_layout(root: Path, mid: str) -> Path:
    """Move local memory ``mid`` of ``root`` into the pre-0.2 place ``.gitmem/local/memories``; returns the old file."""
    lay = layout.Layout(root.resolve())
    old = root / ".gitmem" / "local" / "memories"
    old.mkdir(parents=True, exist_ok=True)
    os.replace(lay.local_memories_dir / f"{mid}.md", old / f"{mid}.md")
    return old / f"{mid}.md"


# -- the migration --------------------------------------------------------------------------------


def test_doctor_is_not_ok_when_old_local_memories_could_not_be_moved(repo: Path) -> None:
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    _to_old_layout(repo, mid)
    ok(repo, "hooks", "install")
    lay = layout.Layout(repo.resolve())
    (lay.clone_dir / "migrate.lock").mkdir(parents=True)  # the move fails (as with a read-only .git/gitmem)
    assert mid not in listed(repo)  # the memory is invisible while it is not moved ...
    doc = gitmem(repo, "doctor")
    # ... so doctor must say so (it says "ok 0 valid memory file(s)" and exits 0)
    assert ".gitmem/local" in doc.stdout + doc.stderr, doc.stdout
    assert doc.returncode != 0


def test_a_memory_kept_aside_by_the_migration_is_reported(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    ok(repo, "hooks", "install")
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    lay = layout.of(repo)
    text = (lay.local_memories_dir / f"{mid}.md").read_text()
    old = wt / ".gitmem" / "local" / "memories"
    old.mkdir(parents=True)
    (old / f"{mid}.md").write_text(text.replace("run() is the entry point", "run() is the ONLY entry point"))
    p = gitmem(wt, "list")
    assert "kept beside" in p.stderr
    assert (lay.local_memories_dir / f"{mid}.md.from-worktree").is_file()
    # the linked worktree's version is nowhere to be seen: doctor must name it (it prints only "ok" lines)
    doc = gitmem(wt, "doctor")
    assert "from-worktree" in doc.stdout + doc.stderr, doc.stdout
    assert doc.returncode != 0


def test_interrupted_copy_does_not_win_over_the_valid_old_memory(repo: Path) -> None:
    """A move across file systems (``--separate-git-dir`` elsewhere) is copy + delete: a kill leaves a partial copy."""
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    old_file = _to_old_layout(repo, mid)
    dest = layout.Layout(repo.resolve()).local_memories_dir / f"{mid}.md"
    dest.write_bytes(old_file.read_bytes()[:100])  # the partial copy of the killed run
    assert mid in listed(repo)  # got: [] and "front matter is not closed"; the valid file is *.from-worktree


def test_migration_does_not_move_files_out_of_a_folder_outside_the_repository(repo: Path, tmp_path: Path) -> None:
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    shared = tmp_path / "shared-local"  # e.g. a folder several clones link to
    (shared / "memories").mkdir(parents=True)
    lay = layout.Layout(repo.resolve())
    os.replace(lay.local_memories_dir / f"{mid}.md", shared / "memories" / f"{mid}.md")
    (shared / "notes.txt").write_text("not gitmem's\n")
    (repo / ".gitmem" / "local").symlink_to(shared)
    assert mid in listed(repo)
    assert (shared / "notes.txt").is_file()  # got: moved to .git/gitmem/notes.txt
    assert (shared / "memories" / f"{mid}.md").is_file()  # got: moved into this clone; other clones lose it


def test_derived_old_hook_index_is_not_carried_along(repo: Path) -> None:
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    _to_old_layout(repo, mid)
    lay = layout.Layout(repo.resolve())
    cache = repo / ".gitmem" / "local" / "cache"
    cache.mkdir()
    (cache / "hooks.sqlite").write_bytes(b"derived")
    import shutil

    shutil.rmtree(lay.cache_dir, ignore_errors=True)
    assert mid in listed(repo)
    assert not (lay.cache_dir / "hooks.sqlite").exists()


# -- local memories seen from a linked worktree ---------------------------------------------------


def test_local_memory_follows_its_moved_code_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    cfg = repo / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text().replace('policy = "with-code"', 'policy = "manual"'))
    commit(repo, "manual sharing")
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    ok(wt, "hooks", "install")
    mid = ok(wt, "remember", "stop adds", "--anchor", "app.py::stop", "--local").strip()
    commit(wt, "move stop() to lib.py", {"app.py": "def run():\n    return 1\n",
                                         "lib.py": "def stop():\n    x = 1\n    y = 2\n    return x + y\n"})
    shown = ok(wt, "show", mid)
    # the same steps in the main worktree re-anchor it ("followed its moved code"); here it stays "moved"
    assert "status: fresh" in shown and "lib.py::stop" in shown, shown


def test_log_of_a_local_memory_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    mid = ok(wt, "remember", "stop adds", "--anchor", "app.py::stop", "--local").strip()
    assert gitmem(repo, "log", mid).returncode == 0  # main worktree: "no history yet"
    p = gitmem(wt, "log", mid)
    assert p.returncode == 0, p.stderr


def test_remember_local_into_a_symlinked_local_folder_is_readable_or_refused(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "synced-memories"
    elsewhere.mkdir()
    lay = layout.Layout(repo.resolve())
    lay.local_memories_dir.parent.mkdir(parents=True, exist_ok=True)
    if lay.local_memories_dir.exists():
        lay.local_memories_dir.rmdir()
    lay.local_memories_dir.symlink_to(elsewhere)
    p = gitmem(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local")
    if p.returncode == 0:  # it said it remembered: then it must be able to show it
        mid = p.stdout.strip()
        shown = gitmem(repo, "show", mid)
        assert shown.returncode == 0, shown.stderr  # got: "symlink leading outside the repository: not read"


def test_linked_worktree_of_a_clone_whose_path_has_a_newline(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "a b\n☃ c", {"app.py": APP})  # git writes the gitdir path verbatim, newline and all
    ok(main, "init", "--no-hooks")
    commit(main, "gitmem")
    wt = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "side", str(wt))
    mid = ok(wt, "remember", "stop adds", "--anchor", "app.py::stop", "--local").strip()
    assert not (tmp_path / "a b" / "gitmem").exists()  # got: the clone's state written to a stray folder "a b/gitmem"
    assert mid in listed(main)  # got: the main worktree does not see it (another "clone folder")


# -- gitmem doctor ----------------------------------------------------------------------------------


def test_doctor_is_not_ok_when_the_state_folder_is_unusable(repo: Path) -> None:
    ok(repo, "hooks", "install")
    ok(repo, "remember", "stop() returns 0", "--anchor", "app.py::stop")
    commit(repo, "team memory")
    lay = layout.Layout(repo.resolve())
    import shutil

    shutil.rmtree(lay.clone_dir)
    lay.clone_dir.write_text("not a folder\n")  # a broken piece of the git folder
    p = gitmem(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local")
    assert p.returncode != 0  # "Not a directory: .git/gitmem/local/memories", hint: see gitmem doctor ...
    doc = gitmem(repo, "doctor")
    assert doc.returncode != 0, doc.stdout  # ... which prints only "ok" lines and exits 0
    assert ".git/gitmem" in doc.stdout


def _without_root_powers() -> list[str]:
    """A command prefix that makes permission bits apply to root (tests run as root in CI containers)."""
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: permission bits do not apply")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_doctor_is_not_ok_when_the_local_memory_folder_cannot_be_read(repo: Path) -> None:
    ok(repo, "hooks", "install")
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    lay = layout.Layout(repo.resolve())
    lay.local_memories_dir.chmod(0)
    try:
        doc = subprocess.run([*_without_root_powers(), sys.executable, "-m", "gitmem", "doctor"], cwd=repo,
                             capture_output=True, text=True, timeout=120)
    finally:
        lay.local_memories_dir.chmod(0o755)
    assert mid  # got: "ok 0 valid memory file(s), 0 invalid", exit 0
    assert doc.returncode != 0, doc.stdout


def test_upgrade_then_remove_a_linked_worktree_keeps_its_local_memories(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    mid = ok(wt, "remember", "stop() must run last", "--anchor", "app.py::stop", "--local").strip()
    _to_old_layout(wt, mid)  # as an older gitmem left it: ignored files in the linked work tree
    ok(repo, "list")  # gitmem (upgraded) runs in the clone, in the main worktree
    ok(repo, "recall", "run last")
    git(repo, "worktree", "remove", str(wt))  # ignored files do not stop it
    assert mid in listed(repo)  # got: gone with the work tree


# -- never break the host ---------------------------------------------------------------------------


def test_git_commit_does_not_wait_on_a_held_migration_lock(repo: Path) -> None:
    import fcntl
    import time

    ok(repo, "hooks", "install")
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    _to_old_layout(repo, mid)
    lay = layout.Layout(repo.resolve())
    fd = os.open(lay.clone_dir / "migrate.lock", os.O_RDWR | os.O_CREAT)  # a gitmem stopped mid-migration (Ctrl-Z)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        start = time.monotonic()
        try:
            p = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "while locked"], cwd=repo,
                               capture_output=True, text=True, timeout=30,
                               env={**os.environ, "GITMEM_HOOK_TIMEOUT": "2"})
        except subprocess.TimeoutExpired:
            pytest.fail("git commit still waiting on gitmem's hooks after 30 s (time limit: 2 s + 2 s grace)")
        assert p.returncode == 0, p.stderr
        assert time.monotonic() - start < 15
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_agent_hook_does_not_wait_on_a_held_migration_lock(repo: Path) -> None:
    import fcntl

    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    _to_old_layout(repo, mid)
    lay = layout.Layout(repo.resolve())
    fd = os.open(lay.clone_dir / "migrate.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    event = json.dumps({"session_id": "s1", "transcript_path": str(repo / "none.jsonl"), "cwd": str(repo),
                        "hook_event_name": "SessionStart", "source": "startup"})
    try:
        try:
            p = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude", "SessionStart"],
                               cwd=repo, input=event, capture_output=True, text=True, timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("SessionStart hook still running after 15 s (Claude Code's timeout for it)")
        assert p.returncode == 0
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_a_removed_worktree_is_not_recreated_in_git_folder(repo: Path, tmp_path: Path, monkeypatch) -> None:
    from gitmem.git import Repo
    from gitmem.store import Store

    wt = tmp_path / "wz"
    git(repo, "worktree", "add", "-q", "-b", "z", str(wt))
    store = Store(Repo(wt), require=False)  # e.g. the MCP server an agent started in that worktree
    store.load_all()
    git(repo, "worktree", "remove", "--force", str(wt))
    assert not (repo / ".git" / "worktrees" / "wz").exists()
    try:
        store.load_all()
    except Exception:  # noqa: BLE001 - failing is fine; writing into git's folder is not
        pass
    assert not (repo / ".git" / "worktrees" / "wz").exists()  # got: wz/gitmem/catalog.sqlite, a stray entry
