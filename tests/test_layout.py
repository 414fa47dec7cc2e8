"""Per-clone state lives in git's folder (``gitmem.layout``): found without git, kept by git workflows that
treat ignored files as disposable, and moved there from an older gitmem's ``.gitmem/local`` and ``.gitmem/index``.

Real repositories, real ``git worktree`` / ``git stash --all`` / ``git clean``, the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitmem import layout
from testing.gitmem_cli import gitmem, listed, ok
from testing.repos import commit, git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = make_repo(tmp_path / "main", {"app.py": "def run():\n    return 1\n\n\ndef stop():\n    return 0\n"})
    ok(r, "init", "--no-hooks")
    commit(r, "gitmem")
    return r


def rev_parse(cwd: Path) -> tuple[Path, Path]:
    out = git(cwd, "rev-parse", "--absolute-git-dir", "--git-common-dir").splitlines()
    common = Path(out[1])
    return Path(out[0]).resolve(), (common if common.is_absolute() else cwd / common).resolve()


# -- finding git's folders without git ------------------------------------------------------------


def test_git_dirs_agree_with_git_in_main_and_linked_worktrees_and_submodules(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    sub_src = make_repo(tmp_path / "subsrc", {"lib.py": "x = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "vendor/lib")
    sep = tmp_path / "sep"
    sep.mkdir()
    git(sep, "init", "-q", "--separate-git-dir", str(tmp_path / "sep.git"))
    for root in (repo, tmp_path / "linked", repo / "vendor" / "lib", sep):
        git_dir, common = layout.git_dirs(root)
        assert (git_dir.resolve(), common.resolve()) == rev_parse(root), root


def test_paths_of_a_linked_worktree_share_the_clone_folder(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    main, linked = layout.of(repo), layout.of(tmp_path / "linked")
    assert main.clone_dir == linked.clone_dir == (repo / ".git" / "gitmem").resolve()
    assert main.local_memories_dir == linked.local_memories_dir
    assert main.catalog_file != linked.catalog_file  # statuses depend on each checkout
    assert linked.catalog_file.is_relative_to((repo / ".git" / "worktrees").resolve())
    assert linked.local_key_prefix == "../main/.git/gitmem/local/memories"
    assert linked.memory_file(linked.local_key_prefix + "/X.md") == linked.local_memories_dir / "X.md"
    assert main.memory_key(main.local_memories_dir / "X.md") == ".git/gitmem/local/memories/X.md"


# -- git workflows that delete ignored files ------------------------------------------------------


def test_local_memory_from_a_linked_worktree_survives_its_removal(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    mid = ok(wt, "remember", "stop() must run last", "--anchor", "app.py::stop", "--local").strip()
    assert mid in listed(wt)
    assert mid in listed(repo)  # every worktree of the clone sees it
    ok(wt, "recall", "run last")  # builds this worktree's catalog and index in git's folder
    assert not any((wt / ".gitmem").rglob("*.sqlite")) and not (wt / ".gitmem" / "local").exists()
    git(repo, "worktree", "remove", str(wt))
    assert not wt.exists()
    assert mid in listed(repo)
    assert "stop() must run last" in ok(repo, "show", mid)


def test_stash_all_and_pop_keep_memories_and_leave_nothing_behind(repo: Path) -> None:
    local = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    team = ok(repo, "remember", "stop() returns 0", "--anchor", "app.py::stop").strip()
    ok(repo, "recall", "entry point")
    (repo / "scratch.txt").write_text("untracked\n")
    stash = subprocess.run(["git", "stash", "--all"], cwd=repo, capture_output=True, text=True)
    assert stash.returncode == 0, stash.stderr
    assert not (repo / "scratch.txt").exists()
    assert local in listed(repo)  # not stashed away: it is not in the work tree
    pop = subprocess.run(["git", "stash", "pop"], cwd=repo, capture_output=True, text=True)
    assert pop.returncode == 0, pop.stderr
    assert {local, team} <= listed(repo)
    assert git(repo, "stash", "list") == ""


@pytest.mark.parametrize("flags", ["-fdX", "-fdx", "-ffdx"])
def test_git_clean_cannot_remove_a_memory(repo: Path, flags: str) -> None:
    local = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    team = ok(repo, "remember", "stop() returns 0", "--anchor", "app.py::stop").strip()
    commit(repo, "team memory")
    ok(repo, "recall", "entry point")
    git(repo, "clean", flags)
    assert {local, team} <= listed(repo)
    assert "entry point" in ok(repo, "recall", "entry point")


def test_nothing_gitmem_writes_is_ignored_or_untracked_in_the_work_tree(repo: Path) -> None:
    ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local")
    ok(repo, "recall", "entry point")
    ok(repo, "context", "--file", "app.py")
    gitmem(repo, "doctor")  # exit 1 here: no git hooks installed
    ignored = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all")
    assert ignored == "", ignored


# -- moving an older gitmem's state ---------------------------------------------------------------


def _old_layout(repo: Path) -> tuple[str, str]:
    """Rewrite a repository into the layout of gitmem before 0.2: local state in .gitmem/local and .gitmem/index."""
    mid = ok(repo, "remember", "run() is the entry point", "--anchor", "app.py::run", "--local").strip()
    ok(repo, "recall", "entry point")
    lay = layout.of(repo)
    old = repo / ".gitmem" / "local"
    (old / "memories").mkdir(parents=True)
    os.replace(lay.local_memories_dir / f"{mid}.md", old / "memories" / f"{mid}.md")
    (old / "spool").mkdir()
    (old / "spool" / "sess.jsonl").write_text('{"v":1,"event":"Stop"}\n')
    (old / "logs").mkdir()
    (old / "logs" / "hooks.log").write_text("old log line\n")
    (old / "cache").mkdir()
    (old / "cache" / "hooks.sqlite").write_bytes(b"derived")
    (repo / ".gitmem" / "index" / "memories.lance").mkdir(parents=True)  # an older gitmem's LanceDB index
    lay.logs_dir.joinpath("hooks.log").unlink(missing_ok=True)
    return mid, (lay.local_memories_dir / f"{mid}.md").as_posix()


def test_old_local_state_is_moved_on_first_use_with_one_line(repo: Path) -> None:
    mid, dest = _old_layout(repo)
    first = gitmem(repo, "list", "--json")
    assert first.returncode == 0, first.stderr
    assert mid in {m["id"] for m in json.loads(first.stdout)}
    moved = [ln for ln in first.stderr.splitlines() if "moved" in ln]
    assert len(moved) == 1 and "1 local memory," in moved[0] and moved[0].count(".git/gitmem") == 1, first.stderr
    lay = layout.of(repo)
    assert Path(dest).is_file()
    assert (lay.spool_dir / "sess.jsonl").read_text() == '{"v":1,"event":"Stop"}\n'
    assert "old log line" in (lay.logs_dir / "hooks.log").read_text()
    assert not lay.index_dir.exists()  # derived and no longer read: removed, not moved
    assert not (repo / ".gitmem" / "local").exists() and not (repo / ".gitmem" / "index").exists()
    assert not (lay.cache_dir / "hooks.sqlite").exists()  # derived: rebuilt, not carried along
    again = gitmem(repo, "list")
    assert again.returncode == 0 and "moved" not in again.stderr
    assert "entry point" in ok(repo, "recall", "entry point")


def test_migration_never_drops_a_memory_already_in_the_clone_folder(repo: Path, tmp_path: Path) -> None:
    mid, dest = _old_layout(repo)
    old_file = repo / ".gitmem" / "local" / "memories" / f"{mid}.md"
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    Path(dest).write_text(old_file.read_text().replace("entry point", "entry point (edited elsewhere)"))
    p = gitmem(repo, "list")
    assert p.returncode == 0, p.stderr
    assert "kept beside" in p.stderr
    aside = Path(dest + ".from-worktree")
    assert aside.read_text() == old_file.read_text() if old_file.exists() else aside.is_file()
    assert "edited elsewhere" in Path(dest).read_text()


def test_old_state_of_a_linked_worktree_joins_the_clone(repo: Path, tmp_path: Path) -> None:
    """gitmem running in any worktree moves every worktree's old state: a linked worktree's old local memories
    must not wait for gitmem to run there (``git worktree remove`` would take them)."""
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    mid = ok(wt, "remember", "stop() must run last", "--anchor", "app.py::stop", "--local").strip()
    lay = layout.of(wt)
    (wt / ".gitmem" / "local" / "memories").mkdir(parents=True)
    os.replace(lay.local_memories_dir / f"{mid}.md", wt / ".gitmem" / "local" / "memories" / f"{mid}.md")
    p = gitmem(repo, "list", "--json")  # in the main worktree
    assert "moved" in p.stderr and mid in {m["id"] for m in json.loads(p.stdout)}
    assert not (wt / ".gitmem" / "local").exists()
    assert mid in listed(wt)


def test_hooks_migrate_too_and_never_fail(repo: Path) -> None:
    """A git hook is often the first gitmem process after an upgrade: it moves the state and the commit succeeds."""
    ok(repo, "hooks", "install")
    mid, dest = _old_layout(repo)
    out = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "after upgrade"], cwd=repo,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "moved" in out.stderr
    assert Path(dest).is_file() and mid in listed(repo)
