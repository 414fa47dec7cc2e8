"""``gitmem/git.py``, the one place that talks to git, on real temporary repositories.

Each test states a contract callers depend on and checks it against exact values, most
of them taken from the ``git`` CLI itself (``rev-parse``, ``hash-object``, ``ls-tree``).
Known bugs are strict xfails (named ``test_bug_*``): they turn green, and fail the run,
once fixed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem.errors import AnchorError, GitError, GitmemError, NotARepository
from gitmem.git import (
    EMPTY_TREE,
    WORKTREE,
    FileChange,
    HooksPathSetting,
    Repo,
    git_blob_sha,
    hooks_path_setting,
    scrub_git_env,
)
from testing.repos import commit, git, make_repo, write


def _rev(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).strip()


def _abs_git_path(repo: Path, *args: str) -> Path:
    """What git itself says, as an absolute resolved path (``--path-format=absolute``, git >= 2.31)."""
    return Path(git(repo, "rev-parse", "--path-format=absolute", *args).strip()).resolve()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit: ``a.txt`` and ``src/b.py``."""
    return make_repo(tmp_path / "repo", {"a.txt": "one\n", "src/b.py": "x = 1\n"})


# -- discovery ------------------------------------------------------------------------------


def test_repo_is_found_from_a_subdirectory(repo: Path) -> None:
    deep = repo / "src" / "deep" / "er"
    deep.mkdir(parents=True)
    assert Repo(deep).root == repo.resolve()
    assert Repo(repo / "src").root == Path(git(repo / "src", "rev-parse", "--show-toplevel").strip())


def test_outside_a_repository_raises_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git(plain, "rev-parse", "--is-inside-work-tree", check=False) == ""  # git agrees
    with pytest.raises(NotARepository) as e:
        Repo(plain)
    assert isinstance(e.value, GitmemError)
    assert str(plain) in e.value.message
    assert e.value.hint  # tells the user what to do
    with pytest.raises(NotARepository):
        Repo(tmp_path / "does-not-exist")


def test_a_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    bare.mkdir()
    git(bare, "init", "-q", "--bare")
    with pytest.raises(NotARepository) as e:
        Repo(bare)
    assert "bare" in e.value.message


# -- relpath ----------------------------------------------------------------------------------


def test_relpath_relative_to_cwd_absolute_and_dotdot(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = Repo(repo)
    assert r.relpath("b.py", cwd=repo / "src") == "src/b.py"
    assert r.relpath("../a.txt", cwd=repo / "src") == "a.txt"
    assert r.relpath(repo / "src" / "b.py") == "src/b.py"
    assert r.relpath(str(repo / "src" / ".." / "a.txt")) == "a.txt"
    assert r.relpath(repo) == ""
    assert r.relpath(".", cwd=repo / "src") == "src"
    assert r.relpath("not/yet/there.py", cwd=repo) == "not/yet/there.py"  # need not exist
    monkeypatch.chdir(repo / "src")
    assert r.relpath("b.py") == "src/b.py"  # cwd defaults to the process's


def test_relpath_outside_the_repository_raises_anchor_error(repo: Path, tmp_path: Path) -> None:
    r = Repo(repo)
    sibling = tmp_path / "repo-other"  # shares the prefix "repo" as a string, not as a path
    sibling.mkdir()
    for outside in (sibling / "x.py", tmp_path / "x.py", "../x.py"):
        with pytest.raises(AnchorError) as e:
            r.relpath(outside, cwd=repo)
        assert "outside the repository" in e.value.message
        assert str(r.root) in e.value.hint


def test_relpath_keeps_a_symlink_inside_the_repo_as_given(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "link").symlink_to(outside)
    (repo / "alias.py").symlink_to("src/b.py")
    r = Repo(repo)
    assert r.relpath(repo / "link" / "f.py") == "link/f.py"  # not resolved to the outside target
    assert r.relpath("alias.py", cwd=repo) == "alias.py"    # not resolved to src/b.py


def test_relpath_through_a_symlink_to_the_repo(repo: Path, tmp_path: Path) -> None:
    """A repo opened, or a path given, through a symlinked directory maps to the same repo path."""
    via = tmp_path / "via"
    via.symlink_to(repo)
    r = Repo(via / "src")
    assert r.root == repo.resolve()
    assert r.relpath(via / "src" / "b.py") == "src/b.py"
    assert r.relpath("b.py", cwd=via / "src") == "src/b.py"
    into = tmp_path / "into-src"
    into.symlink_to(repo / "src")
    assert Repo(repo).relpath(into / "b.py") == "src/b.py"  # outside as given, inside once resolved


# -- git dirs and hooks dir --------------------------------------------------------------------


def test_dirs_in_a_main_worktree(repo: Path) -> None:
    r = Repo(repo)
    assert r.git_dir == (repo / ".git").resolve() == _abs_git_path(repo, "--git-dir")
    assert r.common_dir == r.git_dir == _abs_git_path(repo, "--git-common-dir")
    assert r.hooks_dir() == (repo / ".git" / "hooks").resolve() == _abs_git_path(repo, "--git-path", "hooks")


def test_dirs_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    r = Repo(wt / "src")
    assert r.root == wt.resolve()
    assert r.git_dir == (repo / ".git" / "worktrees" / "linked").resolve() == _abs_git_path(wt, "--git-dir")
    assert r.common_dir == (repo / ".git").resolve() == _abs_git_path(wt, "--git-common-dir")
    assert r.hooks_dir() == (repo / ".git" / "hooks").resolve() == _abs_git_path(wt, "--git-path", "hooks")


def test_dirs_in_a_submodule(tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub", {"s.txt": "s\n"})
    sup = make_repo(tmp_path / "super", {"top.txt": "t\n"})
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "mods/s")
    commit(sup, "add submodule")
    r = Repo(sup / "mods" / "s")
    modules = (sup / ".git" / "modules" / "mods" / "s").resolve()
    assert r.root == (sup / "mods" / "s").resolve()
    assert r.git_dir == r.common_dir == modules == _abs_git_path(sup / "mods" / "s", "--git-dir")
    assert r.hooks_dir() == modules / "hooks" == _abs_git_path(sup / "mods" / "s", "--git-path", "hooks")
    assert Repo(sup).root == sup.resolve()  # the superproject is still itself


def test_hooks_dir_follows_core_hooks_path(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    git(repo, "config", "core.hooksPath", "myhooks")  # relative: to the root of the work tree running hooks
    assert Repo(repo).hooks_dir() == repo.resolve() / "myhooks" == _abs_git_path(repo, "--git-path", "hooks")
    assert Repo(wt).hooks_dir() == wt.resolve() / "myhooks" == _abs_git_path(wt, "--git-path", "hooks")
    absolute = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(absolute))
    assert Repo(repo).hooks_dir() == Repo(wt).hooks_dir() == absolute.resolve()


# -- hooks_path_setting ------------------------------------------------------------------------


def test_hooks_path_setting_unset_local_worktree(repo: Path) -> None:
    r = Repo(repo)
    assert hooks_path_setting(r) is None
    git(repo, "config", "core.hooksPath", "rel/hooks")
    assert hooks_path_setting(r) == HooksPathSetting(value="rel/hooks", scope="local")  # as written
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "--worktree", "core.hooksPath", "wt-hooks")
    assert hooks_path_setting(r) == HooksPathSetting(value="wt-hooks", scope="worktree")  # read last, wins


def test_hooks_path_setting_global_and_local_override(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "global.gitconfig"
    cfg.write_text(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text() + "[core]\n\thooksPath = ~/hooks\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))  # kept by the scrubbed environment
    r = Repo(repo)
    assert hooks_path_setting(r) == HooksPathSetting(value="~/hooks", scope="global")  # ~ not expanded
    assert r.hooks_dir() == (Path(os.environ["HOME"]) / "hooks").resolve()  # git expands it
    git(repo, "config", "core.hooksPath", ".githooks")
    assert hooks_path_setting(r) == HooksPathSetting(value=".githooks", scope="local")


def test_hooks_path_setting_broken_config_raises_git_error(repo: Path) -> None:
    with (repo / ".git" / "config").open("a") as f:
        f.write("[[[broken\n")
    with pytest.raises(GitError) as e:
        hooks_path_setting(Repo(repo))
    assert e.value.code == 128  # not 1, which means "unset"
    assert e.value.argv == ["config", "--show-scope", "--get", "core.hooksPath"]
    assert "bad config line" in e.value.stderr


# -- revisions ---------------------------------------------------------------------------------


def test_empty_repository(git_repo: Path) -> None:
    write(git_repo, {"new.txt": "n\n"})
    r = Repo(git_repo)
    assert r.has_commits() is False
    assert r.head() is None
    assert r.commit_exists("HEAD") is False
    assert r.default_branch_base() is None
    with pytest.raises(GitError) as e:
        r.resolve("HEAD")
    assert "HEAD" in e.value.message and e.value.hint
    assert r.files_at(WORKTREE) == ["new.txt"]
    assert r.changed_files(None, WORKTREE) == [FileChange("A", None, "new.txt")]
    assert r.dirty_files() == ["new.txt"]
    git(git_repo, "add", "new.txt")
    assert r.staged_changes() == [FileChange("A", None, "new.txt")]  # against the empty tree


def test_head_resolve_and_commit_exists(repo: Path) -> None:
    first = _rev(repo, "HEAD")
    second = commit(repo, "second", {"a.txt": "two\n"})
    git(repo, "tag", "-a", "v1", "-m", "annotated", first)
    r = Repo(repo)
    assert r.has_commits() is True
    assert r.head() == second
    assert r.resolve("HEAD") == second
    assert r.resolve("main~1") == first
    assert r.resolve("v1") == first  # an annotated tag peels to its commit
    assert r.resolve(first[:8]) == first
    assert r.parents(second) == [first] and r.parents(first) == []
    with pytest.raises(GitError):
        r.resolve("no-such-branch")
    assert r.commit_exists(first) and r.commit_exists(second)
    assert r.commit_exists("1234567890" * 4) is False
    assert r.commit_exists(_rev(repo, "HEAD:a.txt")) is False  # a blob is not a commit
    assert r.commit_exists(_rev(repo, "HEAD^{tree}")) is False


def test_detached_head(repo: Path) -> None:
    first = _rev(repo, "HEAD")
    commit(repo, "second", {"a.txt": "two\n"})
    git(repo, "checkout", "-q", "--detach", first)
    r = Repo(repo)
    assert r.has_commits() is True
    assert r.head() == first == r.resolve("HEAD")
    assert r.read("HEAD", "a.txt") == b"one\n"


# -- content -----------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"one\n", b"crlf\r\nline\r\n", b"\x00\xff binary \x00", "é ü\n".encode()])
def test_git_blob_sha_matches_git_hash_object(repo: Path, data: bytes) -> None:
    assert git_blob_sha(data) == git(repo, "hash-object", "--stdin", "--no-filters", input=data).strip()


def test_blob_sha_and_read_at_revisions_and_in_the_working_tree(repo: Path) -> None:
    first = _rev(repo, "HEAD")
    commit(repo, "second", {"a.txt": "two\n"})
    write(repo, {"a.txt": "three (unstaged)\n", "untracked.txt": "u\n"})
    r = Repo(repo)
    assert r.read(first, "a.txt") == b"one\n"
    assert r.read("HEAD", "a.txt") == b"two\n"
    assert r.read(WORKTREE, "a.txt") == b"three (unstaged)\n"
    assert r.blob_sha(first, "a.txt") == _rev(repo, f"{first}:a.txt")
    assert r.blob_sha("HEAD", "src/b.py") == _rev(repo, "HEAD:src/b.py")
    assert r.blob_sha(WORKTREE, "a.txt") == git(repo, "hash-object", "a.txt").strip()
    assert r.blob_sha(WORKTREE, "untracked.txt") == git(repo, "hash-object", "untracked.txt").strip()
    for rev in (first, "HEAD", WORKTREE):  # absent: None, never an error
        assert r.read(rev, "missing.txt") is None
        assert r.blob_sha(rev, "missing.txt") is None
        assert r.read(rev, "a.txt/under-a-file") is None
        assert r.blob_sha(rev, "src/missing/deeper.py") is None
    assert r.read("HEAD", "src") is None  # a directory is not a file
    assert r.read(WORKTREE, "src") is None
    assert r.read("no-such-rev", "a.txt") is None


def test_read_symlinks_as_git_stores_them(repo: Path, tmp_path: Path) -> None:
    (repo / "alias.py").symlink_to("src/b.py")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    (repo / "linkdir").symlink_to(tmp_path / "outside")
    commit(repo, "links")
    r = Repo(repo)
    assert r.read("HEAD", "alias.py") == b"src/b.py"  # the target text, as the blob stores it
    assert r.read(WORKTREE, "alias.py") == b"src/b.py"
    assert r.blob_sha(WORKTREE, "alias.py") == r.blob_sha("HEAD", "alias.py") == _rev(repo, "HEAD:alias.py")
    assert (repo / "linkdir" / "secret.txt").read_text() == "secret\n"
    assert r.read(WORKTREE, "linkdir/secret.txt") is None  # never read beyond a symlinked directory
    assert r.blob_sha(WORKTREE, "linkdir/secret.txt") is None


def test_symlinked_dir(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "t" / "inner").mkdir(parents=True)
    (repo / "src" / "lnk").symlink_to(tmp_path / "t")
    (repo / "file-link.py").symlink_to("src/b.py")
    r = Repo(repo)
    assert r.symlinked_dir("src/lnk/inner/x.py") == "src/lnk"  # the leading one
    assert r.symlinked_dir("src/lnk/x.py") == "src/lnk"
    assert r.symlinked_dir("src/b.py") is None
    assert r.symlinked_dir("file-link.py") is None  # the last component is not a directory of the path
    assert r.symlinked_dir("src/lnk") is None
    assert r.symlinked_dir("top.py") is None


def test_skip_worktree_with_a_sparse_checkout(tmp_path: Path) -> None:
    p = make_repo(tmp_path / "sparse", {"keep/a.py": "a\n", "out/b.py": "b\n", "top.txt": "t\n"})
    git(p, "sparse-checkout", "set", "keep")
    assert not (p / "out").exists()
    r = Repo(p)
    assert r.skip_worktree == frozenset({"out/b.py"})
    assert r.read(WORKTREE, "out/b.py") == b"b\n"  # from the index, as git sees it
    assert r.blob_sha(WORKTREE, "out/b.py") == _rev(p, "HEAD:out/b.py")
    assert r.files_at(WORKTREE) == ["keep/a.py", "out/b.py", "top.txt"]
    assert r.dirty_files() == []
    assert r.changed_files("HEAD", WORKTREE) == []
    assert Repo(p / "keep").skip_worktree == frozenset({"out/b.py"})


def test_files_at_a_revision_and_in_the_working_tree(repo: Path) -> None:
    first = _rev(repo, "HEAD")
    write(repo, {".gitignore": "*.log\n", ".gitmem/team/m1.md": "m\n", "docs/r.md": "r\n"})
    commit(repo, "more")
    write(repo, {"untracked.txt": "u\n", "ignored.log": "i\n", ".gitmem/local/m2.md": "m\n"})
    (repo / "docs" / "r.md").unlink()  # deleted on disk, still in the index
    r = Repo(repo)
    assert r.files_at(first) == ["a.txt", "src/b.py"]
    assert r.files_at("HEAD") == git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert r.files_at("HEAD", skip_gitmem=True) == [".gitignore", "a.txt", "docs/r.md", "src/b.py"]
    assert r.files_at(WORKTREE) == [".gitignore", ".gitmem/local/m2.md", ".gitmem/team/m1.md", "a.txt",
                                    "src/b.py", "untracked.txt"]
    assert r.files_at(WORKTREE, skip_gitmem=True) == [".gitignore", "a.txt", "src/b.py", "untracked.txt"]


def test_files_at_with_only_gitmem_at_the_top(tmp_path: Path) -> None:
    p = make_repo(tmp_path / "only", {".gitmem/team/m.md": "m\n"})
    assert Repo(p).files_at("HEAD", skip_gitmem=True) == []
    assert Repo(p).files_at("HEAD") == [".gitmem/team/m.md"]


# -- changes -----------------------------------------------------------------------------------


def test_changed_files_between_commits(repo: Path) -> None:
    base = commit(repo, "base", {"moved.py": "def f():\n    return 1\n" * 20, "gone.txt": "bye\n",
                                 ".gitmem/team/m.md": "m\n"})
    git(repo, "mv", "moved.py", "src/renamed.py")
    (repo / "gone.txt").unlink()
    write(repo, {"a.txt": "changed\n", "added.txt": "new\n", ".gitmem/team/m.md": "m2\n"})
    new = commit(repo, "change")
    r = Repo(repo)
    assert r.changed_files(base, new) == [
        FileChange("M", ".gitmem/team/m.md", ".gitmem/team/m.md"),
        FileChange("M", "a.txt", "a.txt"),
        FileChange("A", None, "added.txt"),
        FileChange("D", "gone.txt", None),
        FileChange("R", "moved.py", "src/renamed.py"),
    ]  # sorted by new_path or old_path
    assert [c for c in r.changed_files(base, new, skip_gitmem=True)] == r.changed_files(base, new)[1:]
    assert r.changed_files(new, new) == []
    assert r.changed_paths(base, new) == [".gitmem/team/m.md", "a.txt", "added.txt", "gone.txt", "moved.py",
                                          "src/renamed.py"]  # no rename detection: both sides


def test_changed_files_from_the_empty_tree(repo: Path) -> None:
    r = Repo(repo)
    assert r.changed_files(None, "HEAD") == [FileChange("A", None, "a.txt"), FileChange("A", None, "src/b.py")]
    assert r.changed_files(EMPTY_TREE, "HEAD") == r.changed_files(None, "HEAD")
    assert r.changed_paths(None, "HEAD") == ["a.txt", "src/b.py"]
    assert git(repo, "hash-object", "-t", "tree", "/dev/null").strip() == EMPTY_TREE


def test_rename_detection_threshold_is_gits_default(repo: Path) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    other = "".join(f"alpha {i}\n" for i in range(20))
    base = commit(repo, "base", {"similar.txt": body, "different.txt": other})
    (repo / "similar.txt").unlink()
    (repo / "different.txt").unlink()
    write(repo, {"similar2.txt": body.replace("line 3\n", "LINE 3\n"),  # 95% alike: a rename
                 "different2.txt": "".join(f"other {i}\n" for i in range(20))})  # nothing alike
    new = commit(repo, "change")
    assert Repo(repo).changed_files(base, new) == [
        FileChange("D", "different.txt", None),
        FileChange("A", None, "different2.txt"),
        FileChange("R", "similar.txt", "similar2.txt"),
    ]


def test_changed_files_type_change(repo: Path) -> None:
    base = _rev(repo, "HEAD")
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to("src/b.py")
    new = commit(repo, "file to symlink")
    assert Repo(repo).changed_files(base, new) == [FileChange("T", "a.txt", "a.txt")]


AWKWARD = ["with space.txt", "café/über.py", 'quo"te.txt', "tab\there.txt", "new\nline.txt", "*.txt",
           "back\\slash.txt"]


def test_changed_files_with_awkward_names(tmp_path: Path) -> None:
    p = make_repo(tmp_path / "awk", {n: f"{n} " * 30 + "\n" for n in AWKWARD})
    r = Repo(p)
    assert r.files_at("HEAD") == sorted(AWKWARD)
    base = _rev(p, "HEAD")
    git(p, "mv", "with space.txt", "with  two spaces.txt")
    git(p, "mv", "new\nline.txt", "ünïcode\nnew.txt")
    (p / "tab\there.txt").unlink()
    write(p, {"café/über.py": "changed\n", 'q"new\t.txt': "fresh\n"})
    expected = [
        FileChange("M", "café/über.py", "café/über.py"),
        FileChange("A", None, 'q"new\t.txt'),
        FileChange("D", "tab\there.txt", None),
        FileChange("R", "with space.txt", "with  two spaces.txt"),
        FileChange("R", "new\nline.txt", "ünïcode\nnew.txt"),
    ]
    assert r.changed_files(base, WORKTREE) == expected  # the new file is untracked: listed as added
    new = commit(p, "awkward")
    assert r.changed_files(base, new) == expected
    assert r.dirty_files() == []
    assert r.changed_paths(base, new) == sorted(["café/über.py", 'q"new\t.txt', "tab\there.txt", "with space.txt",
                                                 "with  two spaces.txt", "new\nline.txt", "ünïcode\nnew.txt"],
                                                key=lambda s: s.encode())  # git's byte order


def test_paths_that_are_not_utf8_are_left_out(repo: Path) -> None:
    base = _rev(repo, "HEAD")
    with open(os.path.join(os.fsencode(repo), b"bad\xff.txt"), "wb") as f:
        f.write(b"x\n")
    write(repo, {"good.txt": "g\n"})
    r = Repo(repo)
    assert r.changed_files(base, WORKTREE) == [FileChange("A", None, "good.txt")]
    assert r.files_at(WORKTREE) == ["a.txt", "good.txt", "src/b.py"]
    new = commit(repo, "bytes")
    assert len(git(repo, "ls-tree", "-z", "--name-only", "HEAD").split("\0")) == 5  # git has it...
    assert r.changed_files(base, new) == [FileChange("A", None, "good.txt")]  # ...gitmem skips it
    assert r.files_at(new) == ["a.txt", "good.txt", "src/b.py"]


def test_changed_files_to_the_working_tree(repo: Path) -> None:
    base = _rev(repo, "HEAD")
    write(repo, {".gitignore": "*.log\n", "ignored.log": "i\n", "staged.txt": "s\n", "untracked.txt": "u\n",
                 "a.txt": "modified\n", ".gitmem/local/m.md": "m\n"})
    git(repo, "add", "staged.txt")
    (repo / "src" / "b.py").unlink()
    r = Repo(repo)
    assert r.changed_files(base, WORKTREE) == [
        FileChange("A", None, ".gitignore"),
        FileChange("A", None, ".gitmem/local/m.md"),
        FileChange("M", "a.txt", "a.txt"),
        FileChange("D", "src/b.py", None),
        FileChange("A", None, "staged.txt"),
        FileChange("A", None, "untracked.txt"),
    ]
    assert FileChange("A", None, ".gitmem/local/m.md") not in r.changed_files(base, WORKTREE, skip_gitmem=True)
    assert len(r.changed_files(base, WORKTREE, skip_gitmem=True)) == 5


def test_dirty_files(repo: Path) -> None:
    write(repo, {".gitignore": "*.log\n", "ignored.log": "i\n", "untracked.txt": "u\n", "a.txt": "modified\n",
                 "staged.txt": "s\n", ".gitmem/team/m.md": "m\n"})
    git(repo, "add", "staged.txt", ".gitignore")
    (repo / "src" / "b.py").unlink()
    r = Repo(repo)
    assert r.dirty_files() == [".gitignore", ".gitmem/team/m.md", "a.txt", "src/b.py", "staged.txt",
                               "untracked.txt"]
    assert r.dirty_files(skip_gitmem=True) == [".gitignore", "a.txt", "src/b.py", "staged.txt", "untracked.txt"]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "all")
    assert r.dirty_files() == []


def test_dirty_files_reports_a_staged_rename_by_its_new_path(repo: Path) -> None:
    git(repo, "mv", "src/b.py", "src/c.py")
    assert Repo(repo).dirty_files() == ["src/c.py"]  # today's behaviour: the old path is not listed


# -- staging and alternate index files ---------------------------------------------------------


def test_staged_changes_read_staged_and_stage(repo: Path, tmp_path: Path) -> None:
    r = Repo(repo)
    assert r.staged_changes() == []
    write(repo, {"a.txt": "staged\n", "new.txt": "n\n"})
    git(repo, "add", "a.txt")
    write(repo, {"a.txt": "staged then edited\n"})
    assert r.staged_changes() == [FileChange("M", "a.txt", "a.txt")]
    assert r.read_staged("a.txt") == b"staged\n"  # the index, not the disk
    assert r.read_staged("new.txt") is None
    r.stage(["new.txt"])
    assert r.read_staged("new.txt") == b"n\n"
    assert r.staged_changes() == [FileChange("M", "a.txt", "a.txt"), FileChange("A", None, "new.txt")]
    (repo / "src" / "b.py").unlink()
    r.stage(["src/b.py"])  # staging a deleted path stages the deletion
    assert r.read_staged("src/b.py") is None
    assert FileChange("D", "src/b.py", None) in r.staged_changes()
    r.stage([])  # nothing to do: no git call, no error
    with pytest.raises(GitError) as e:
        r.stage(["never-existed.txt"])
    assert e.value.argv == ["--literal-pathspecs", "add", "--", "never-existed.txt"] and e.value.code == 128


def test_an_alternate_index_file_is_used_and_the_real_one_left_alone(repo: Path, tmp_path: Path) -> None:
    alt = str(tmp_path / "alt-index")
    git(repo, "read-tree", "HEAD", env={"GIT_INDEX_FILE": alt})
    write(repo, {"only-alt.txt": "alt\n"})
    r = Repo(repo)
    r.stage(["only-alt.txt"], index_file=alt)
    assert r.read_staged("only-alt.txt", alt) == b"alt\n"
    assert r.read_staged("only-alt.txt") is None
    assert r.staged_changes(alt) == [FileChange("A", None, "only-alt.txt")]
    assert r.staged_changes() == []
    assert git(repo, "diff", "--cached", "--name-only") == ""  # git agrees: the real index is untouched
    assert git(repo, "ls-files", env={"GIT_INDEX_FILE": alt}).split() == ["a.txt", "only-alt.txt", "src/b.py"]


# -- history -----------------------------------------------------------------------------------


def test_commits_touching_and_between_oldest_first(repo: Path) -> None:
    c0 = _rev(repo, "HEAD")
    c1 = commit(repo, "a", {"a.txt": "1\n"})
    c2 = commit(repo, "b", {"src/b.py": "2\n"})
    c3 = commit(repo, "a again", {"a.txt": "3\n", "*.txt": "star\n"})
    c4 = commit(repo, "star", {"*.txt": "star 2\n"})
    r = Repo(repo)
    assert r.commits_touching(None, "HEAD", "a.txt") == [c0, c1, c3]
    assert r.commits_touching(c1, "HEAD", "a.txt") == [c3]
    assert r.commits_touching(c0, c3, "a.txt", "src/b.py") == [c1, c2, c3]
    assert r.commits_touching(None, "HEAD", "*.txt") == [c3, c4]  # literal, not a glob over a.txt
    assert r.commits_touching(None, "HEAD", "missing") == []
    assert r.commits_between(None, "HEAD") == [c0, c1, c2, c3, c4]
    assert r.commits_between(c1, c3) == [c2, c3]
    assert r.commits_between(c3, c3) == []
    assert r.commits_between(None, "HEAD") == git(repo, "rev-list", "--reverse", "HEAD").split()


def test_commits_between_puts_parents_before_a_merge(repo: Path) -> None:
    c0 = _rev(repo, "HEAD")
    git(repo, "checkout", "-q", "-b", "side")
    s1 = commit(repo, "side 1", {"side.txt": "s\n"})
    git(repo, "checkout", "-q", "main")
    m1 = commit(repo, "main 1", {"main.txt": "m\n"})
    git(repo, "merge", "-q", "--no-edit", "side")
    merge = _rev(repo, "HEAD")
    got = Repo(repo).commits_between(c0, "HEAD")
    assert sorted(got) == sorted([s1, m1, merge]) and got[-1] == merge
    assert Repo(repo).commits_touching(c0, "HEAD", "side.txt") == [s1]


def test_default_branch_base(repo: Path) -> None:
    c0 = _rev(repo, "HEAD")
    r = Repo(repo)
    assert r.default_branch_base() is None  # on main: the merge base is HEAD
    git(repo, "checkout", "-q", "-b", "feature")
    assert r.default_branch_base() is None  # nothing new on the branch yet
    commit(repo, "f1", {"f.txt": "f\n"})
    assert r.default_branch_base() == c0
    git(repo, "checkout", "-q", "main")
    c1 = commit(repo, "m1", {"m.txt": "m\n"})
    git(repo, "checkout", "-q", "feature")
    assert r.default_branch_base() == c0 == _rev(repo, "main~1")
    git(repo, "merge", "-q", "--no-edit", "main")
    assert r.default_branch_base() == c1 == git(repo, "merge-base", "HEAD", "main").strip()


def test_default_branch_base_prefers_origin_and_falls_back_to_master(tmp_path: Path) -> None:
    upstream = make_repo(tmp_path / "up", {"u.txt": "u\n"})
    u0 = _rev(upstream, "HEAD")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    l1 = commit(clone, "local main, not pushed", {"l.txt": "l\n"})
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, "f", {"f.txt": "f\n"})
    assert Repo(clone).default_branch_base() == u0  # origin/HEAD first, not the local main (l1)
    assert l1 != u0
    old = make_repo(tmp_path / "old", {"o.txt": "o\n"}, branch="master")
    o0 = _rev(old, "HEAD")
    git(old, "checkout", "-q", "-b", "topic")
    commit(old, "t", {"t.txt": "t\n"})
    assert Repo(old).default_branch_base() == o0
    other = make_repo(tmp_path / "other", {"x.txt": "x\n"}, branch="trunk")
    commit(other, "y", {"y.txt": "y\n"})
    assert Repo(other).default_branch_base() is None  # no main, master or origin


# -- errors ------------------------------------------------------------------------------------


def test_a_failing_git_command_raises_git_error_with_argv_code_and_stderr(repo: Path) -> None:
    r = Repo(repo)
    with pytest.raises(GitError) as e:
        r._run("rev-parse", "--verify", "no-such-ref")
    assert isinstance(e.value, GitmemError)
    assert e.value.argv == ["rev-parse", "--verify", "no-such-ref"]  # gitmem's args, without the -c prefix
    assert e.value.code == 128
    assert "fatal: Needed a single revision" in e.value.stderr
    assert e.value.message.startswith("git rev-parse --verify no-such-ref failed: ")
    with pytest.raises(GitError) as e2:
        r._run_bytes("cat-file", "blob", "HEAD:missing")
    assert e2.value.argv == ["cat-file", "blob", "HEAD:missing"] and e2.value.code == 128
    assert "fatal: path 'missing' does not exist in 'HEAD'" in e2.value.stderr


def test_run_returns_stripped_text_and_run_bytes_raw_bytes(repo: Path) -> None:
    r = Repo(repo)
    assert r._run("rev-parse", "HEAD") == _rev(repo, "HEAD")
    assert r._run_bytes("rev-parse", "HEAD") == (_rev(repo, "HEAD") + "\n").encode()
    git(repo, "config", "core.quotepath", "true")  # the user's setting: gitmem's -c overrides it
    write(repo, {"café.txt": "c\n"})
    assert r._run("ls-files", "--others") == "café.txt"


def test_the_users_color_and_diff_settings_do_not_change_answers(repo: Path) -> None:
    base = _rev(repo, "HEAD")
    for key, value in (("color.ui", "always"), ("diff.external", "false"), ("diff.renames", "false"),
                       ("diff.relative", "true"), ("status.showUntrackedFiles", "no")):
        git(repo, "config", key, value)
    git(repo, "mv", "src/b.py", "src/c.py")
    write(repo, {"new.txt": "n\n"})
    r = Repo(repo / "src")
    expected = [FileChange("A", None, "new.txt"), FileChange("R", "src/b.py", "src/c.py")]
    assert r.changed_files(base, WORKTREE) == expected
    assert r.staged_changes() == [FileChange("R", "src/b.py", "src/c.py")]


# -- the environment a hook inherits -----------------------------------------------------------


def test_scrub_git_env_drops_what_a_hook_inherits_and_keeps_identity_and_config(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = make_repo(tmp_path / "other", {"o.txt": "o\n"})
    global_cfg = os.environ["GIT_CONFIG_GLOBAL"]
    hook_env = {"GIT_DIR": str(other / ".git"), "GIT_INDEX_FILE": str(other / ".git" / "index"),
                "GIT_WORK_TREE": str(other), "GIT_PREFIX": "sub/", "GIT_EXEC_PATH": "/nowhere",
                "GIT_AUTHOR_NAME": "Hook Author", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    for k, v in hook_env.items():
        monkeypatch.setenv(k, v)
    scrub_git_env()
    left = {k: v for k, v in os.environ.items() if k.startswith("GIT_")}
    assert "GIT_DIR" not in left and "GIT_INDEX_FILE" not in left and "GIT_WORK_TREE" not in left
    assert "GIT_PREFIX" not in left and "GIT_EXEC_PATH" not in left
    assert left["GIT_AUTHOR_NAME"] == "Hook Author"
    assert left["GIT_COMMITTER_DATE"] == "2020-01-01T00:00:00Z"
    assert left["GIT_CONFIG_GLOBAL"] == global_cfg
    assert os.environ["HOME"]  # not a GIT_ variable: untouched
    r = Repo(repo)  # after scrubbing, another repository answers about itself
    assert r.root == repo.resolve()
    assert r.head() == _rev(repo, "HEAD")
    assert r.files_at(WORKTREE) == ["a.txt", "src/b.py"]
    assert r.read_staged("a.txt") == b"one\n"
    assert r.dirty_files() == []


def test_git_dir_inherited_from_a_hook_does_not_redirect_run(repo: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    other = make_repo(tmp_path / "other", {"o.txt": "o\n"})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # not scrubbed
    r = Repo(repo)
    assert r._run("rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD", env={"GIT_DIR": str(repo / ".git")}).strip()
    assert r.read("HEAD", "a.txt") == b"one\n"
    assert r.files_at("HEAD") == ["a.txt", "src/b.py"]


# -- known bugs (strict xfail) ------------------------------------------------------------------


def test_inherited_git_index_file_does_not_reach_another_repo(repo: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    other = make_repo(tmp_path / "other", {"o.txt": "o\n"})
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))  # as a hook of `other` would
    r = Repo(repo)
    assert r.staged_changes() == []
    assert r.read_staged("a.txt") == b"one\n"


def test_inherited_git_work_tree_does_not_reach_another_repo(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    other = make_repo(tmp_path / "other", {"o.txt": "o\n"})
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    r = Repo(repo)
    assert r._run("rev-parse", "--show-toplevel") == str(repo.resolve())
    assert r.dirty_files() == []


def test_read_at_head_follows_a_new_commit(repo: Path) -> None:
    r = Repo(repo)
    assert r.read("HEAD", "a.txt") == b"one\n"
    assert r.blob_sha("HEAD", "a.txt") == _rev(repo, "HEAD:a.txt")
    commit(repo, "second", {"a.txt": "two\n"})
    assert r.blob_sha("HEAD", "a.txt") == _rev(repo, "HEAD:a.txt")
    assert r.read("HEAD", "a.txt") == b"two\n"


def test_blob_sha_of_a_directory_is_none(repo: Path) -> None:
    r = Repo(repo)
    assert r.read("HEAD", "src") is None
    assert r.blob_sha("HEAD", "src") is None


def test_git_error_carries_gits_own_stderr(repo: Path) -> None:
    with pytest.raises(GitError) as e:
        Repo(repo)._run("rev-parse", "--verify", "no-such-ref")
    assert e.value.stderr.strip() == "fatal: Needed a single revision"
    assert e.value.message == "git rev-parse --verify no-such-ref failed: fatal: Needed a single revision"


def test_files_at_skip_gitmem_with_a_magic_looking_top_level_name(tmp_path: Path) -> None:
    p = make_repo(tmp_path / "magic", {":!odd": "x\n", "a.txt": "a\n", ".gitmem/team/m.md": "m\n"})
    assert Repo(p).files_at("HEAD", skip_gitmem=True) == [":!odd", "a.txt"]


def test_read_staged_of_a_name_that_looks_like_a_stage(tmp_path: Path) -> None:
    p = make_repo(tmp_path / "stage", {"1:x": "one colon x\n", "x": "x\n"})
    assert Repo(p).read_staged("1:x") == b"one colon x\n"


def test_stage_treats_paths_literally(repo: Path) -> None:
    write(repo, {"*.txt": "star\n", "a.txt": "modified, must stay unstaged\n"})
    Repo(repo).stage(["*.txt"])
    assert git(repo, "diff", "--cached", "--name-only").splitlines() == ["*.txt"]


def test_commit_exists_is_false_for_the_null_sha(repo: Path) -> None:
    assert git(repo, "cat-file", "-e", "0" * 40, check=False) == ""  # git: no such object
    assert Repo(repo).commit_exists("0" * 40) is False


def test_user_name_is_who_git_authors_as(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$GIT_AUTHOR_NAME`` first (git's own precedence, and what git sets for its hooks), then ``user.name``, else
    "" (never a guess from the system's user)."""
    r = Repo(repo)
    assert r.user_name() == "Test User"
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ada Lovelace")
    assert r.user_name() == "Ada Lovelace"
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    assert r.user_name() == ""


def test_a_commits_file_list_is_read_once_per_process_and_never_mixed_up(tmp_path: Path) -> None:
    """A commit named by its object id lists one tree for good: the second ask is answered without git (shown by
    taking git's objects away), another commit gets its own list, and a ref name is always asked of git."""
    r = make_repo(tmp_path / "r", {"a.py": "x = 1\n", ".gitmem/memories/m.md": "m\n"})
    first = commit(r, "second", {"b.py": "y = 2\n"})
    root = git(r, "rev-list", "--max-parents=0", "HEAD").strip()
    repo = Repo(str(r))
    assert repo.files_at(root, skip_gitmem=True) == ["a.py"]
    assert repo.files_at(first, skip_gitmem=True) == ["a.py", "b.py"]
    assert repo.files_at(first) == [".gitmem/memories/m.md", "a.py", "b.py"]  # its own key
    (r / ".git" / "objects").rename(r / ".git" / "objects-away")
    try:
        assert repo.files_at(first, skip_gitmem=True) == ["a.py", "b.py"]
        assert repo.files_at(root, skip_gitmem=True) == ["a.py"]
        with pytest.raises(GitError):
            repo.files_at("HEAD", skip_gitmem=True)
    finally:
        (r / ".git" / "objects-away").rename(r / ".git" / "objects")
