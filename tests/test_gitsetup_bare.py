"""Work trees whose git folder is elsewhere (issue 24, docs/git-setups/bare.md): the dotfiles setup (a bare repository,
``GIT_DIR`` + ``GIT_WORK_TREE``), ``core.worktree``, ``GIT_DIR`` alone, and a bare repository's worktrees.

Real git layouts in temp folders, gitmem and git run as processes with the environment each setup gives them; the
dotfiles home is the test's own ``HOME``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.repos import commit, git, make_repo

CODE = "def parse_config(path):\n    return {'path': path}\n"
CHANGED = "def parse_config(path):\n    return {'path': path, 'strict': True}\n"
REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's ``HOME`` (the dotfiles work tree); the record of work trees lives under it."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", os.fspath(h))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.delenv("GITMEM_WORK_TREES_FILE", raising=False)
    return h


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REDIRECTS}
    env.update(extra or {})
    return env


def gm(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``gitmem ARGS`` as a process in ``cwd``, with exactly the git variables in ``env``."""
    # the console script, not ``python -m``: in a bare repository's folder its ``gitmem/`` state folder would be
    # imported as the package
    return subprocess.run([os.fspath(Path(sys.executable).parent / "gitmem"), *args], cwd=cwd, env=_env(env),
                          capture_output=True, text=True, timeout=120)


def raw_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=60)


def dot(home: Path, *args: str, cwd: Path | None = None) -> str:
    """The dotfiles alias: ``git --git-dir=$HOME/.dotfiles --work-tree=$HOME ARGS`` (nothing exported)."""
    proc = raw_git(cwd or home, f"--git-dir={home / '.dotfiles'}", f"--work-tree={home}", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def claude_hook(event: dict, cwd: Path) -> str:
    """Claude Code's hook as an agent runs it: a folder (``cwd``) and no git variables."""
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"], input=json.dumps(event),
                          cwd=cwd, env=_env(None), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def statuses(cwd: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """id -> status as the catalog holds it (what the post-commit hook wrote)."""
    proc = gm(cwd, "list", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return {m["id"]: m["status"] for m in json.loads(proc.stdout)}


def remember(cwd: Path, text: str, anchor: str, env: dict[str, str] | None = None) -> str:
    proc = gm(cwd, "remember", text, "--anchor", anchor, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().split()[-1]


def dotfiles(home: Path) -> Path:
    """``git init --bare ~/.dotfiles`` with a tracked ``bin/tool.py`` and ``.config/app/rc``."""
    git(home, "init", "--quiet", "--bare", os.fspath(home / ".dotfiles"))
    (home / "bin").mkdir()
    (home / "bin" / "tool.py").write_text(CODE)
    (home / ".config" / "app").mkdir(parents=True)
    (home / ".config" / "app" / "rc").write_text("colour = on\n")
    dot(home, "add", "bin/tool.py", ".config/app/rc")
    dot(home, "commit", "--quiet", "-m", "dotfiles")
    return home / ".dotfiles"


def no_git_init_hint(proc: subprocess.CompletedProcess[str]) -> None:
    assert "git init" not in proc.stderr and "git init" not in proc.stdout


# -- (1) the dotfiles setup -----------------------------------------------------------------------------------------


def test_dotfiles_with_git_dir_and_work_tree_exported_works_fully(home: Path) -> None:
    repo = dotfiles(home)
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home)}
    proc = gm(home / ".config", "init", env=exported)
    assert proc.returncode == 0, proc.stderr
    assert (home / ".gitmem" / "config.toml").is_file()  # memory files in the work tree
    assert not os.path.lexists(home / ".git")  # no repository nested in the home folder
    assert "gitmem-hook" in (repo / "hooks" / "post-commit").read_text()  # hooks in the bare repository's folder
    assert (repo / "gitmem").is_dir()  # clone state in git's folder
    assert raw_git(home, "status").returncode != 0  # plain git in ~ still sees no repository

    mid = remember(home / "bin", "parse_config returns a dict keyed by path", "tool.py::parse_config",
                   env=exported)
    assert (home / ".gitmem" / "memories" / f"{mid}.md").is_file()
    dot(home, "add", ".gitmem")
    dot(home, "commit", "--quiet", "-m", "memory")
    assert statuses(home, exported)[mid] == "fresh"

    # the alias (git exports GIT_DIR and GIT_WORK_TREE to its hooks): post-commit marks the memory stale
    (home / "bin" / "tool.py").write_text(CHANGED)
    dot(home, "commit", "--quiet", "-am", "strict config", cwd=home / ".config")
    log = (repo / "gitmem" / "logs" / "hooks.log").read_text()
    assert "post-commit ok" in log and "Traceback" not in log
    assert statuses(home, exported)[mid] == "stale"

    stale = gm(home, "stale", "--json", env=exported)
    assert stale.returncode == 0, stale.stderr
    assert mid in stale.stdout and '"stale"' in stale.stdout
    context = gm(home / "bin", "context", "--file", "tool.py", "--json", env=exported)
    assert context.returncode == 0, context.stderr
    assert mid in context.stdout


def test_dotfiles_found_without_git_variables_once_recorded(home: Path) -> None:
    """An agent hook gets a folder and no GIT_DIR: the run with the variables recorded the work tree."""
    repo = dotfiles(home)
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home)}
    assert gm(home, "init", env=exported).returncode == 0
    mid = remember(home, "parse_config returns a dict keyed by path", "bin/tool.py::parse_config", env=exported)
    record = json.loads((home / ".local" / "state" / "gitmem" / "work-trees.json").read_text())
    assert record["work_trees"] == {os.fspath(home): os.fspath(repo)}

    # a command run without the variables, from a folder of the work tree
    listed = gm(home / ".config" / "app", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["id"] for m in json.loads(listed.stdout)] == [mid]

    # the agent's session start and a read of the anchored file, cwd in the work tree, no git variables
    out = claude_hook({"session_id": "s1", "cwd": os.fspath(home / ".config"), "hook_event_name": "SessionStart",
                       "source": "startup"}, home / ".config")
    assert mid in out
    (home / "bin" / "tool.py").write_text(CHANGED)  # not committed: the agent is told it may be stale
    out = claude_hook({"session_id": "s2", "cwd": os.fspath(home), "hook_event_name": "PreToolUse",
                       "tool_name": "Read", "tool_input": {"file_path": os.fspath(home / "bin" / "tool.py")}},
                      home)
    assert mid in out

    # GIT_DIR alone (`git --git-dir` without --work-tree): the recorded work tree
    alone = gm(home / ".config", "list", "--json", env={"GIT_DIR": os.fspath(repo)})
    assert alone.returncode == 0, alone.stderr
    assert [m["id"] for m in json.loads(alone.stdout)] == [mid]

    doctor = gm(home, "doctor")
    assert f"work tree {home} has its git folder elsewhere ({repo}): recorded in" in doctor.stdout


def test_dotfiles_not_recorded_says_so_without_suggesting_git_init(home: Path) -> None:
    repo = dotfiles(home)
    proc = gm(home, "init")  # the alias's variables are not exported, nothing recorded yet
    assert proc.returncode == 1
    assert "not a git repository" in proc.stderr
    # no GIT_DIR set: the setup whose git folder is elsewhere comes first, `git init` last ("no repository at all")
    assert 0 <= proc.stderr.index("GIT_DIR=DIR and GIT_WORK_TREE=TREE") < proc.stderr.index("git init")
    assert not os.path.lexists(home / ".git") and not (home / ".gitmem").exists()

    bare_only = gm(home, "init", env={"GIT_DIR": os.fspath(repo)})  # `git --git-dir` without --work-tree
    assert bare_only.returncode == 1
    assert f"GIT_DIR is set to {repo}, a bare repository, without GIT_WORK_TREE" in bare_only.stderr
    no_git_init_hint(bare_only)
    assert len(bare_only.stderr.strip().splitlines()) == 2  # error: + hint:

    no_tree = gm(home, "init", env={"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home / "gone")})
    assert no_tree.returncode == 1
    assert f"GIT_WORK_TREE is set to {home / 'gone'}, which is not a folder" in no_tree.stderr
    no_git_init_hint(no_tree)

    nowhere = gm(home, "stale", env={"GIT_DIR": os.fspath(home / "missing")})
    assert nowhere.returncode == 1
    assert f"GIT_DIR is set to {home / 'missing'}, which is not a git repository" in nowhere.stderr
    no_git_init_hint(nowhere)


def test_core_hooks_path_of_the_dotfiles_repository(home: Path) -> None:
    repo = dotfiles(home)
    dot(home, "config", "core.hooksPath", os.fspath(home / ".githooks"))
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home)}
    proc = gm(home, "init", env=exported)
    assert proc.returncode == 0, proc.stderr
    assert "gitmem-hook" in (home / ".githooks" / "post-commit").read_text()
    mid = remember(home, "parse_config returns a dict keyed by path", "bin/tool.py::parse_config", env=exported)
    dot(home, "add", ".gitmem")
    dot(home, "commit", "--quiet", "-m", "memory")
    (home / "bin" / "tool.py").write_text(CHANGED)
    dot(home, "commit", "--quiet", "-am", "change")
    assert statuses(home, exported)[mid] == "stale"


def test_a_repository_of_its_own_inside_the_dotfiles_work_tree_is_itself(home: Path) -> None:
    repo = dotfiles(home)
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home)}
    assert gm(home, "init", env=exported).returncode == 0
    project = make_repo(home / "code" / "project")
    commit(project, "init", {"app.py": CODE})
    proc = gm(project, "init", "--no-hooks", env=exported)
    assert proc.returncode == 0, proc.stderr
    assert f"initialised {project}" in proc.stdout and (project / ".gitmem").is_dir()
    mid = remember(project, "parse_config returns a dict keyed by path", "app.py::parse_config", env=exported)
    assert (project / ".gitmem" / "memories" / f"{mid}.md").is_file()
    assert not (home / ".gitmem" / "memories" / f"{mid}.md").exists()


# -- (2) core.worktree -------------------------------------------------------------------------------------------------


def test_core_worktree_with_git_dir_elsewhere(tmp_path: Path, home: Path) -> None:
    """``git init`` in one folder, ``core.worktree`` naming another, used as ``git --git-dir=X``."""
    meta, tree = tmp_path / "meta", tmp_path / "tree"
    git(tmp_path, "init", "--quiet", os.fspath(meta))
    tree.mkdir()
    git(meta, "config", "core.worktree", os.fspath(tree))
    (tree / "tool.py").write_text(CODE)
    gd = {"GIT_DIR": os.fspath(meta / ".git")}
    assert raw_git(tree, "add", "tool.py", env=gd).returncode == 0
    assert raw_git(tree, "commit", "--quiet", "-m", "init", env=gd).returncode == 0

    proc = gm(tree, "init", env=gd)
    assert proc.returncode == 0, proc.stderr
    assert (tree / ".gitmem").is_dir() and not (meta / ".gitmem").exists()
    assert "gitmem-hook" in (meta / ".git" / "hooks" / "post-commit").read_text()
    mid = remember(tree, "parse_config returns a dict keyed by path", "tool.py::parse_config", env=gd)
    assert raw_git(tree, "add", ".gitmem", env=gd).returncode == 0
    assert raw_git(tree, "commit", "--quiet", "-m", "memory", env=gd).returncode == 0
    (tree / "tool.py").write_text(CHANGED)
    assert raw_git(tree, "commit", "--quiet", "-am", "change", env=gd).returncode == 0
    assert statuses(tree, gd)[mid] == "stale"

    # from the git folder's parent, no variables: git's work tree is core.worktree's, and so is gitmem's
    assert statuses(meta)[mid] == "stale"
    # an agent in the work tree, no variables: found through the record
    out = claude_hook({"session_id": "s", "cwd": os.fspath(tree), "hook_event_name": "SessionStart",
                       "source": "startup"}, tree)
    assert mid in out


def test_inside_a_git_folder_whose_core_worktree_names_the_work_tree(tmp_path: Path, home: Path) -> None:
    """``cd X/repo.git`` (a git folder, not bare, ``core.worktree`` naming Y): git works on Y from there, and so
    does gitmem (found by a new user: it said "not a git repository … git init"); Y is then recorded."""
    meta, tree = tmp_path / "X" / "repo.git", tmp_path / "Y"
    git(tmp_path, "init", "--quiet", "--bare", os.fspath(meta))
    tree.mkdir()
    git(meta, "config", "core.bare", "false")
    git(meta, "config", "core.worktree", os.fspath(tree))
    assert raw_git(meta, "rev-parse", "--show-toplevel").stdout.strip() == os.fspath(tree)
    proc = gm(meta, "init")
    assert proc.returncode == 0, proc.stderr
    no_git_init_hint(proc)
    assert (tree / ".gitmem").is_dir() and not (meta / ".gitmem").exists()
    (tree / "tool.py").write_text(CODE)
    mid = remember(tree, "parse_config returns a dict keyed by path", "tool.py::parse_config")
    assert statuses(tree)[mid] == "fresh" and statuses(meta)[mid] == "fresh"


def test_dot_git_file_with_core_worktree(tmp_path: Path, home: Path) -> None:
    """A ``.git`` file naming a git folder whose ``core.worktree`` names this work tree (how git lays out a
    submodule's, and ``git init --separate-git-dir``)."""
    tree = tmp_path / "tree"
    git(tmp_path, "init", "--quiet", f"--separate-git-dir={tmp_path / 'store.git'}", os.fspath(tree))
    git(tree, "config", "core.worktree", os.fspath(tree))
    commit(tree, "init", {"tool.py": CODE})
    assert gm(tree, "init").returncode == 0
    assert "gitmem-hook" in (tmp_path / "store.git" / "hooks" / "post-commit").read_text()
    mid = remember(tree, "parse_config returns a dict keyed by path", "tool.py::parse_config")
    commit(tree, "memory")
    commit(tree, "change", {"tool.py": CHANGED})
    assert statuses(tree)[mid] == "stale"


# -- (3) GIT_DIR alone -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [False, True])
def test_git_dir_alone_naming_the_enclosing_repository(tmp_path: Path, home: Path, relative: bool) -> None:
    """git takes the current folder as the top of the work tree then; gitmem takes the repository's (its
    ``.git``'s folder), never a ``.gitmem`` in the subfolder."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "init", {"pkg/tool.py": CODE})
    assert gm(repo, "init", "--no-hooks").returncode == 0
    sub = repo / "pkg"
    gd = {"GIT_DIR": "../.git" if relative else os.fspath(repo / ".git")}
    mid = remember(sub, "parse_config returns a dict keyed by path", "tool.py::parse_config", env=gd)
    assert (repo / ".gitmem" / "memories" / f"{mid}.md").is_file() and not (sub / ".gitmem").exists()
    commit(repo, "change", {"pkg/tool.py": CHANGED})
    stale = gm(sub, "stale", "--json", env=gd)
    assert stale.returncode == 0, stale.stderr
    assert mid in stale.stdout


def test_git_dir_alone_of_a_repository_elsewhere_is_refused_naming_it(tmp_path: Path, home: Path) -> None:
    other = make_repo(tmp_path / "other")
    commit(other, "init", {"a.py": CODE})
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    proc = gm(folder, "init", env={"GIT_DIR": os.fspath(other / ".git")})
    assert proc.returncode == 1
    assert f"GIT_DIR is set to {other / '.git'} without GIT_WORK_TREE or core.worktree" in proc.stderr
    no_git_init_hint(proc)
    assert not (folder / ".gitmem").exists()


# -- (4) a bare repository's worktrees ---------------------------------------------------------------------------------


def test_bare_clone_with_worktrees(tmp_path: Path, home: Path) -> None:
    src = make_repo(tmp_path / "src")
    commit(src, "init", {"tool.py": CODE})
    bare = tmp_path / "project.git"
    git(tmp_path, "clone", "--quiet", "--bare", os.fspath(src), os.fspath(bare))
    git(bare, "worktree", "add", "--quiet", os.fspath(tmp_path / "main"), "main")
    main = tmp_path / "main"
    assert gm(main, "init").returncode == 0
    assert "gitmem-hook" in (bare / "hooks" / "post-commit").read_text()
    mid = remember(main, "parse_config returns a dict keyed by path", "tool.py::parse_config")
    git(main, "add", ".gitmem")
    git(main, "commit", "--quiet", "-m", "memory")
    git(bare, "worktree", "add", "--quiet", "-b", "feature", os.fspath(tmp_path / "feature"), "main")
    feature = tmp_path / "feature"
    commit(feature, "change", {"tool.py": CHANGED})
    assert statuses(feature)[mid] == "stale"
    assert statuses(main)[mid] == "fresh"

    refused = gm(bare, "init")  # the bare repository itself: no work tree
    assert refused.returncode == 1 and "bare repository" in refused.stderr
    no_git_init_hint(refused)


def test_dot_git_file_leading_to_a_bare_repository(tmp_path: Path, home: Path) -> None:
    """The ``.bare`` layout: ``git clone --bare URL .bare``, ``.git`` a file ``gitdir: ./.bare``, worktrees beside."""
    src = make_repo(tmp_path / "src")
    commit(src, "init", {"tool.py": CODE})
    top = tmp_path / "project"
    top.mkdir()
    git(top, "clone", "--quiet", "--bare", os.fspath(src), ".bare")
    (top / ".git").write_text("gitdir: ./.bare\n")
    git(top, "worktree", "add", "--quiet", "main", "main")
    refused = gm(top, "init")
    assert refused.returncode == 1
    assert "leads to a bare repository" in refused.stderr and "git worktree" in refused.stderr
    no_git_init_hint(refused)
    assert not (top / ".gitmem").exists()
    assert gm(top / "main", "init").returncode == 0
    mid = remember(top / "main", "parse_config returns a dict keyed by path", "tool.py::parse_config")
    git(top / "main", "add", ".gitmem")
    git(top / "main", "commit", "--quiet", "-m", "memory")
    commit(top / "main", "change", {"tool.py": CHANGED})
    assert statuses(top / "main")[mid] == "stale"


def test_agent_started_with_the_variables_exported(home: Path) -> None:
    """An agent started from a shell that exports GIT_DIR and GIT_WORK_TREE: its hooks see them, nothing recorded."""
    repo = dotfiles(home)
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home)}
    assert gm(home, "init", "--no-hooks", env=exported).returncode == 0
    mid = remember(home, "parse_config returns a dict keyed by path", "bin/tool.py::parse_config", env=exported)
    (home / ".local" / "state" / "gitmem" / "work-trees.json").unlink()
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"],
                          input=json.dumps({"session_id": "s", "cwd": os.fspath(home / "bin"),
                                            "hook_event_name": "SessionStart", "source": "startup"}),
                          cwd=home / "bin", env=_env(exported), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and mid in proc.stdout, proc.stderr


def test_doctor_warns_when_the_work_tree_cannot_be_recorded(home: Path, tmp_path: Path) -> None:
    """The record cannot be written: commands with the variables work, and doctor says agent hooks will not
    find the repository."""
    repo = dotfiles(home)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    exported = {"GIT_DIR": os.fspath(repo), "GIT_WORK_TREE": os.fspath(home),
                "GITMEM_WORK_TREES_FILE": os.fspath(blocker / "work-trees.json")}
    assert gm(home, "init", "--no-hooks", env=exported).returncode == 0
    doctor = gm(home, "doctor", env=exported)
    assert f"work tree {home} has its git folder elsewhere ({repo}), not recorded in" in doctor.stdout
    assert "agent hooks, which get only a folder, will not find this repository" in doctor.stdout
    out = claude_hook({"session_id": "s", "cwd": os.fspath(home), "hook_event_name": "SessionStart",
                       "source": "startup"}, home)
    assert out.strip() == ""  # nothing found, nothing said, exit 0
