"""gitmem's git hooks: install / uninstall / status, the shim, hooks/git-hook and gitmem.hook_entry.

Hook tests run real git commands (commit, amend, merge, checkout, worktree add) in
temporary repositories so that git itself runs the shims. gitmem's hook actions
are replaced by a recording fake: a ``sitecustomize`` module on PYTHONPATH puts
it in ``sys.modules["gitmem.integrations.git_hook_actions"]`` of every Python the shims start, so
these tests check the mechanics whether or not the real module works yet.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

import gitmem
from gitmem import hook_entry, infra, layout
from gitmem.git import Repo
from gitmem.hook_entry import hook_log_path
from gitmem.integrations.git_hooks import HOOK_NAMES, SHIM_VERSION, install, render_shim, status, uninstall
from testing.repos import commit, git, make_repo

PROJECT = Path(__file__).resolve().parents[1]
DISPATCHER = PROJECT / "hooks" / "git-hook"

FAKE_ACTIONS = '''
import json, os, sys, time, types

_record = os.environ.get("FAKE_HOOK_RECORD")
if _record:
    def run_hook(name, args, stdin, repo_root, **kw):
        if name == "pre-commit" and not os.environ.get("FAKE_RECORD_ALL"):
            return None  # these tests are about the mechanics shown by the post-* hooks (test_share.py: pre-commit)
        with open(_record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"name": name, "args": args, "stdin": stdin.decode(),
                                "root": str(repo_root), "cwd": os.getcwd(),
                                "active": os.environ.get("GITMEM_HOOK_ACTIVE"),
                                "git_dir": os.environ.get("GIT_DIR")}) + "\\n")
        mode = os.environ.get("FAKE_HOOK_MODE", "")
        if mode == "raise":
            raise RuntimeError("fake hook action failed")
        if mode == "sleep":
            time.sleep(30)
        return "gitmem-fake: " + name

    _m = types.ModuleType("gitmem.integrations.git_hook_actions")
    _m.run_hook = run_hook
    sys.modules["gitmem.integrations.git_hook_actions"] = _m
'''


# -- fixtures and helpers -------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def hook_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private global git config, the fake hook actions on PYTHONPATH, no inherited gitmem variables."""
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n"
                         "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
    fake = tmp_path / "fake-actions"
    fake.mkdir()
    (fake / "sitecustomize.py").write_text(FAKE_ACTIONS)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    for k in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(k, "Test User")
    for k in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(k, "test@example.com")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(fake), str(PROJECT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("FAKE_HOOK_RECORD", str(tmp_path / "records.jsonl"))
    for k in ("GITMEM_HOOK_ACTIVE", "GITMEM_HOOK_LEGACY", "GITMEM_PYTHON", "GITMEM_HOOK_TIMEOUT",
              "FAKE_HOOK_MODE", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(k, raising=False)
    return gitconfig


def records(tmp_path: Path) -> list[dict]:
    path = tmp_path / "records.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def gitmem_repo(path: Path) -> Path:
    """A repository with a committed .gitmem/ folder and one commit (made before any hook exists)."""
    make_repo(path, {".gitmem/config.toml": "# gitmem\n", ".gitmem/.gitignore": "index/\nlocal/\n",
                     "README.md": "hello\n"})
    return path


def write_hook(path: Path, body: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("#!/bin/sh\n" + textwrap.dedent(body)).encode()
    path.write_bytes(data)
    path.chmod(0o755)
    return data


def run_git(repo: Path, *args: str, env: dict[str, str] | None = None,
            input: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, input=input,
                          env={**os.environ, **(env or {})}, timeout=60)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def log_text(root: Path) -> str:
    path = hook_log_path(root)
    return path.read_text() if path.exists() else ""


# -- install / uninstall ----------------------------------------------------------------------------


def test_install_writes_executable_shims_idempotently_and_uninstall_removes_them(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    report = install(Repo(repo), python=sys.executable)

    hooks = repo / ".git" / "hooks"
    assert report.hooks_dir == hooks.resolve()
    assert report.installed == list(HOOK_NAMES)
    assert report.chained == [] and report.already == [] and report.skipped == []
    for name in HOOK_NAMES:
        shim = hooks / name
        assert shim.stat().st_mode & stat.S_IXUSR
        text = shim.read_text()
        assert text.startswith("#!/bin/sh\n")
        assert text.splitlines()[1] == f"# gitmem-hook: v{SHIM_VERSION}"
        assert f"HOOK_NAME={name}\n" in text
        assert f"INSTALL_PYTHON={sys.executable}\n" in text

    before = snapshot(hooks)
    again = install(Repo(repo), python=sys.executable)
    assert again.installed == [] and again.already == list(HOOK_NAMES)
    assert snapshot(hooks) == before

    assert uninstall(Repo(repo)) == list(HOOK_NAMES)
    assert list(hooks.iterdir()) == []
    assert uninstall(Repo(repo)) == []


def test_template_marker_matches_version_and_dispatcher_shares_the_shim_body() -> None:
    shim = render_shim("post-commit", "/usr/bin/python3").decode()
    assert shim.splitlines()[1] == f"# gitmem-hook: v{SHIM_VERSION}"
    dispatcher = DISPATCHER.read_text()
    assert dispatcher.splitlines()[1] == f"# gitmem-hook-dispatcher: v{SHIM_VERSION}"
    assert DISPATCHER.stat().st_mode & stat.S_IXUSR
    # Everything after the templated block is the same text: the dispatcher is the shim.
    assert shim.split("# end templated\n", 1)[1] == dispatcher.split("# end templated\n", 1)[1]
    for text in (shim, dispatcher):
        subprocess.run(["sh", "-n"], input=text, text=True, check=True)


def test_existing_hook_is_chained_both_run_and_uninstall_restores_it(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    original = write_hook(repo / ".git" / "hooks" / "post-commit", """\
        echo "legacy $0 $#" >> legacy.out
    """)
    report = install(Repo(repo), python=sys.executable)
    assert report.chained == ["post-commit"]
    assert (repo / ".git" / "hooks" / "post-commit.before-gitmem").read_bytes() == original

    proc = run_git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert proc.returncode == 0, proc.stderr
    # The legacy hook ran once, with $0 = the hook path git used (not *.before-gitmem) and no arguments.
    assert (repo / "legacy.out").read_text() == "legacy .git/hooks/post-commit 0\n"
    [rec] = records(tmp_path)
    assert rec["name"] == "post-commit" and rec["args"] == [] and rec["stdin"] == ""
    assert Path(rec["root"]) == repo.resolve()
    assert rec["active"] == "1" and rec["git_dir"] is None   # GIT_* scrubbed, recursion guard set
    assert "gitmem-fake: post-commit" in proc.stderr             # run_hook's message, on stderr
    assert " post-commit ok " in log_text(repo)

    assert uninstall(Repo(repo)) == list(HOOK_NAMES)
    restored = repo / ".git" / "hooks" / "post-commit"
    assert restored.read_bytes() == original
    assert restored.stat().st_mode & stat.S_IXUSR
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == ["post-commit"]


def test_legacy_exit_code_is_passed_through_and_gitmem_failure_is_not(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    write_hook(repo / ".git" / "hooks" / "post-commit", "exit 3\n")
    install(Repo(repo), python=sys.executable)
    monkeypatch.setenv("FAKE_HOOK_MODE", "raise")

    # git ignores post-commit's code, so the commit succeeds; the shim itself returns the legacy code.
    proc = run_git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert proc.returncode == 0 and proc.stderr == ""
    assert "RuntimeError: fake hook action failed" in log_text(repo)
    shim = subprocess.run([repo / ".git" / "hooks" / "post-commit"], cwd=repo, capture_output=True,
                          stdin=subprocess.DEVNULL)
    assert shim.returncode == 3 and shim.stdout == b""

    (repo / ".git" / "hooks" / "post-commit.before-gitmem").unlink()
    shim = subprocess.run([repo / ".git" / "hooks" / "post-commit"], cwd=repo, capture_output=True,
                          stdin=subprocess.DEVNULL)
    assert shim.returncode == 0


def test_pre_commit_is_chained_and_never_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    assert "pre-commit" in HOOK_NAMES
    monkeypatch.setenv("FAKE_RECORD_ALL", "1")
    local = layout.of(repo).local_memories_dir
    local.mkdir(parents=True)
    (local / "01ABCDEFGHJKMNPQRSTVWXYZ00.md").write_text("x")  # pre-commit only wakes up when something is local
    write_hook(repo / ".git" / "hooks" / "pre-commit", "exit 1\n")
    monkeypatch.setenv("FAKE_HOOK_MODE", "raise")
    assert install(Repo(repo), python=sys.executable).chained == ["pre-commit"]

    # A blocking legacy hook still blocks; gitmem's failure does not.
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "blocked").returncode == 1
    write_hook(repo / ".git" / "hooks" / "pre-commit.before-gitmem", "exit 0\n")
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "ok").returncode == 0
    assert [r["name"] for r in records(tmp_path)][-2:] == ["pre-commit", "post-commit"]


def _bin_with(tmp_path: Path, **links: str) -> str:
    """A PATH of one folder holding ``git`` plus the given name → target symlinks."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, target in {"git": shutil.which("git"), **links}.items():
        (bin_dir / name).symlink_to(target)
    return str(bin_dir)


def test_missing_python_and_no_gitmem_on_path_says_so_in_one_line(tmp_path: Path) -> None:
    """The commit goes on (a git hook never fails one), but not silently: gitmem's checks did not run."""
    repo = gitmem_repo(tmp_path / "repo")
    write_hook(repo / ".git" / "hooks" / "post-commit", "echo legacy >> legacy.out\n")
    install(Repo(repo), python="/nonexistent/python")

    proc = run_git(repo, "commit", "-q", "--allow-empty", "-m", "two", env={"PATH": _bin_with(tmp_path)})
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert proc.stderr == "".join(f"gitmem: {hook} skipped: no Python here can run gitmem (this hook names "
                                  "/nonexistent/python); install gitmem, then run `gitmem init` in this clone\n"
                                  for hook in ("pre-commit", "post-commit"))
    assert (repo / "legacy.out").read_text() == "legacy\n"
    assert records(tmp_path) == [] and log_text(repo) == ""
    assert [s.problem for s in status(Repo(repo))][0].startswith(
        ".git/hooks/post-commit names a Python that is gone (/nonexistent/python)")


def test_python_that_cannot_import_gitmem_is_skipped_and_repo_code_is_never_imported(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    # A hostile repository shipping its own gitmem package must not get it run by the hook.
    (repo / "gitmem").mkdir()
    (repo / "gitmem" / "__init__.py").write_text("")
    (repo / "gitmem" / "hook_entry.py").write_text(
        "open('pwned', 'w').close()\ndef main(argv):\n    return 0\n")
    wrapper = tmp_path / "python3-no-site"
    # -S and no PYTHONPATH: a Python without site-packages, so without gitmem.
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH= exec "{sys.executable}" -S "$@"\n')
    wrapper.chmod(0o755)
    install(Repo(repo), python="/nonexistent/python")

    proc = run_git(repo, "commit", "-q", "--allow-empty", "-m", "two",
                   env={"PATH": _bin_with(tmp_path, python3=str(wrapper))})
    assert proc.returncode == 0 and "gitmem: post-commit skipped: no Python here can run" in proc.stderr
    assert not (repo / "pwned").exists()
    assert records(tmp_path) == []


def test_falls_back_to_the_python_of_gitmem_on_path(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    script = tmp_path / "gitmem-script"
    script.write_text(f"#!{sys.executable}\nraise SystemExit('not used')\n")
    script.chmod(0o755)
    install(Repo(repo), python="/nonexistent/python")

    proc = run_git(repo, "commit", "-q", "--allow-empty", "-m", "two",
                   env={"PATH": _bin_with(tmp_path, gitmem=str(script))})
    assert proc.returncode == 0, proc.stderr
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]


def test_foreign_hook_with_existing_legacy_is_left_alone(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    write_hook(hooks / "post-commit", "echo mine\n")
    write_hook(hooks / "post-commit.before-gitmem", "echo older\n")
    before = snapshot(hooks)

    report = install(Repo(repo), python=sys.executable)
    assert report.skipped == ["post-commit"]
    assert "post-commit" not in report.installed
    assert any(n.startswith("post-commit not installed: .git/hooks/post-commit is another tool's hook")
               for n in report.notes)
    assert {k: v for k, v in snapshot(hooks).items() if k.startswith("post-commit")} == before
    [state] = [s for s in status(Repo(repo)) if s.name == "post-commit"]
    assert not state.installed and not state.will_run and "another tool's hook" in state.problem


def test_older_shim_is_upgraded_newer_one_left_alone(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(parents=True)
    old = render_shim("post-commit", sys.executable).replace(
        f"# gitmem-hook: v{SHIM_VERSION}".encode(), b"# gitmem-hook: v0")
    (hooks / "post-commit").write_bytes(old)
    (hooks / "post-commit").chmod(0o755)
    newer = render_shim("post-merge", sys.executable).replace(
        f"# gitmem-hook: v{SHIM_VERSION}".encode(), b"# gitmem-hook: v99")
    (hooks / "post-merge").write_bytes(newer)
    (hooks / "post-merge").chmod(0o755)
    assert status(Repo(repo))[0].problem.endswith("is an older gitmem shim (v0): "
                                                  "`gitmem hooks install` upgrades it")

    report = install(Repo(repo), python=sys.executable)
    assert "post-commit" in report.installed and report.chained == []
    assert (hooks / "post-commit").read_bytes() == render_shim("post-commit", sys.executable)
    assert "post-merge" in report.already and (hooks / "post-merge").read_bytes() == newer
    # A different interpreter re-points the shims.
    assert install(Repo(repo), python="/other/python").installed == ["post-commit", "post-checkout",
                                                                    "post-rewrite", "pre-commit"]


def test_dead_symlink_hook_is_chained_and_restored(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "post-commit").symlink_to("/nonexistent/hook")

    assert install(Repo(repo), python=sys.executable).chained == ["post-commit"]
    assert os.readlink(hooks / "post-commit.before-gitmem") == "/nonexistent/hook"
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]

    uninstall(Repo(repo))
    assert os.readlink(hooks / "post-commit") == "/nonexistent/hook"


def test_self_copy_as_legacy_does_not_recurse(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    install(Repo(repo), python=sys.executable)
    hooks = repo / ".git" / "hooks"
    shutil.copy2(hooks / "post-commit", hooks / "post-commit.before-gitmem")

    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]


# -- git operations ---------------------------------------------------------------------------------


def test_post_rewrite_stdin_reaches_legacy_and_entry(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    write_hook(repo / ".git" / "hooks" / "post-rewrite", """\
        echo "$@" > rewrite.args
        cat > rewrite.in
    """)
    install(Repo(repo), python=sys.executable)
    old = git(repo, "rev-parse", "HEAD").strip()

    assert run_git(repo, "commit", "-q", "--amend", "-m", "amended").returncode == 0
    new = git(repo, "rev-parse", "HEAD").strip()
    assert (repo / "rewrite.args").read_text() == "amend\n"
    assert (repo / "rewrite.in").read_text() == f"{old} {new}\n"
    rewrite = [r for r in records(tmp_path) if r["name"] == "post-rewrite"]
    assert rewrite == [{**rewrite[0], "args": ["amend"], "stdin": f"{old} {new}\n"}]
    assert " post-rewrite ok " in log_text(repo) and "stdin=82B" in log_text(repo)


def test_checkout_and_merge_run_their_hooks(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    install(Repo(repo), python=sys.executable)
    main_sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    feature_sha = commit(repo, "feature", {"a.txt": "a\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "feature")

    got = [(r["name"], r["args"]) for r in records(tmp_path)]
    assert got == [
        ("post-checkout", [main_sha, main_sha, "1"]),
        ("post-commit", []),
        ("post-checkout", [feature_sha, main_sha, "1"]),
        ("post-merge", ["0"]),
    ]


def test_linked_worktree_runs_hooks_installed_in_the_common_dir(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    install(Repo(repo), python=sys.executable)
    wt = tmp_path / "wt"
    assert run_git(repo, "worktree", "add", "-q", "-b", "feature", str(wt)).returncode == 0
    assert Repo(wt).hooks_dir() == (repo / ".git" / "hooks").resolve()
    assert run_git(wt, "commit", "-q", "--allow-empty", "-m", "in wt").returncode == 0

    got = [(r["name"], Path(r["root"])) for r in records(tmp_path)]
    assert got == [("post-checkout", wt.resolve()), ("post-commit", wt.resolve())]
    assert " post-commit ok " in log_text(wt)
    assert all(s.will_run for s in status(Repo(wt)))


# -- core.hooksPath -----------------------------------------------------------------------------------


def test_husky_style_hooks_path_installs_there_chained(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    user_hook = write_hook(repo / ".husky" / "post-commit", "echo husky >> husky.out\n")
    git(repo, "config", "core.hooksPath", ".husky")

    report = install(Repo(repo), python=sys.executable)
    assert report.hooks_dir == (repo / ".husky").resolve()
    assert report.chained == ["post-commit"]
    assert report.notes[0] == "core.hooksPath=.husky (local config): installed into .husky, where git runs hooks"
    assert any(n.startswith(".husky is inside the work tree: do not commit") for n in report.notes)
    assert (repo / ".husky" / "post-commit.before-gitmem").read_bytes() == user_hook
    assert not (repo / ".git" / "hooks" / "post-commit").exists()

    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert (repo / "husky.out").read_text() == "husky\n"
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]
    assert all(s.will_run and s.problem == "" for s in status(Repo(repo)))

    uninstall(Repo(repo))
    assert (repo / ".husky" / "post-commit").read_bytes() == user_hook
    assert sorted(p.name for p in (repo / ".husky").iterdir()) == ["post-commit"]


HUSKY9_H = """\
#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
"""


def test_husky_v9_generated_hooks_keep_working_when_chained(tmp_path: Path) -> None:
    # husky v9: core.hooksPath=.husky/_, whose stubs source ./h, which runs .husky/<basename "$0">.
    repo = gitmem_repo(tmp_path / "repo")
    gen = repo / ".husky" / "_"
    gen.mkdir(parents=True)
    (gen / "h").write_text(HUSKY9_H)
    (gen / ".gitignore").write_text("*\n")
    (gen / "post-commit").write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    (gen / "post-commit").chmod(0o755)
    write_hook(repo / ".husky" / "post-commit", "echo husky9 >> husky.out\n")
    git(repo, "config", "core.hooksPath", ".husky/_")

    report = install(Repo(repo), python=sys.executable)
    assert report.chained == ["post-commit"]
    assert any(n.startswith("husky regenerates .husky/_ when it is installed") for n in report.notes)

    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert (repo / "husky.out").read_text() == "husky9\n"
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]


def test_status_when_hooks_path_is_set_after_install(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    install(Repo(repo), python=sys.executable)
    assert all(s.installed and s.ours_current and s.will_run and s.problem == "" for s in status(Repo(repo)))

    git(repo, "config", "core.hooksPath", ".husky")
    states = status(Repo(repo))
    assert [s.name for s in states] == list(HOOK_NAMES)
    for s in states:
        assert not s.installed and not s.will_run
        assert s.path == (repo / ".husky" / s.name).resolve()
        assert s.problem.startswith(f"core.hooksPath=.husky points elsewhere: "
                                    f"git will not run .git/hooks/{s.name}")
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert records(tmp_path) == []


def test_status_not_executable_and_not_installed(tmp_path: Path) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    assert status(Repo(repo))[0].problem == "not installed in .git/hooks: run `gitmem hooks install`"
    install(Repo(repo), python=sys.executable)
    (repo / ".git" / "hooks" / "post-commit").chmod(0o644)
    [state, *_] = status(Repo(repo))
    assert state.installed and not state.will_run
    assert state.problem.startswith(".git/hooks/post-commit is not executable")
    assert install(Repo(repo), python=sys.executable).installed == ["post-commit"]
    assert status(Repo(repo))[0].will_run


def test_global_hooks_path_installs_there_and_is_inert_without_gitmem(tmp_path: Path,
                                                                      hook_env: Path) -> None:
    global_hooks = tmp_path / "githooks"
    write_hook(global_hooks / "post-commit", 'echo global >> "$PWD/global.out"\n')
    with hook_env.open("a") as f:
        f.write(f"[core]\n\thooksPath = {global_hooks}\n")
    repo = gitmem_repo(tmp_path / "repo")
    plain = make_repo(tmp_path / "plain", {"a.txt": "a\n"})
    for r in (repo, plain):
        (r / "global.out").unlink()  # the global hook ran for make_repo's commit

    report = install(Repo(repo), python=sys.executable)
    assert report.hooks_dir == global_hooks.resolve()
    assert report.chained == ["post-commit"]
    assert report.notes[0].startswith(f"core.hooksPath={global_hooks} is set in your global git config: "
                                      f"the hooks in {global_hooks} run in every repository")
    assert not (repo / ".git" / "hooks").exists()

    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert (repo / "global.out").read_text() == "global\n"
    assert [Path(r["root"]) for r in records(tmp_path)] == [repo.resolve()]

    # Another repository without .gitmem/: the user's global hook runs, gitmem stays silent.
    proc = run_git(plain, "commit", "-q", "--allow-empty", "-m", "two")
    assert proc.returncode == 0 and proc.stderr == ""
    assert (plain / "global.out").read_text() == "global\n"
    assert len(records(tmp_path)) == 1 and not (plain / ".gitmem").exists()

    # A local core.hooksPath wins over the global one.
    git(repo, "config", "core.hooksPath", ".githooks-local")
    local = install(Repo(repo), python=sys.executable)
    assert local.hooks_dir == (repo / ".githooks-local").resolve()
    assert not any("global" in n for n in local.notes)


def test_dispatcher_from_a_hook_manager_and_as_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = gitmem_repo(tmp_path / "repo")
    monkeypatch.setenv("GITMEM_PYTHON", sys.executable)
    write_hook(repo / ".husky" / "post-commit", f'"{DISPATCHER}" post-commit "$@"\n')
    git(repo, "config", "core.hooksPath", ".husky")
    assert run_git(repo, "commit", "-q", "--allow-empty", "-m", "two").returncode == 0
    assert [r["name"] for r in records(tmp_path)] == ["post-commit"]

    git(repo, "config", "--unset", "core.hooksPath")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir()
    (hooks / "post-checkout").symlink_to(DISPATCHER)
    git(repo, "checkout", "-q", "-b", "other")
    assert [r["name"] for r in records(tmp_path)][-1] == "post-checkout"

    # install leaves a hook that is gitmem's dispatcher alone; status counts it as installed.
    report = install(Repo(repo), python=sys.executable)
    assert "post-checkout" in report.already
    assert (hooks / "post-checkout").is_symlink()
    assert [s for s in status(Repo(repo)) if s.name == "post-checkout"][0].will_run
    assert "post-checkout" not in uninstall(Repo(repo))
    assert (hooks / "post-checkout").is_symlink()


# -- hook_entry in-process ----------------------------------------------------------------------------


@pytest.fixture
def fake_actions(monkeypatch: pytest.MonkeyPatch):
    """Replace gitmem.integrations.git_hook_actions in this process; returns the list of calls (``.behaviour``)."""
    calls: list[tuple] = []
    module = types.ModuleType("gitmem.integrations.git_hook_actions")

    def run_hook(name, args, stdin, repo_root, **kw):
        calls.append((name, args, stdin, repo_root))
        return module.behaviour(name) if callable(module.behaviour) else module.behaviour

    module.run_hook = run_hook
    module.behaviour = None
    monkeypatch.setitem(sys.modules, "gitmem.integrations.git_hook_actions", module)
    return types.SimpleNamespace(calls=calls, module=module)


@pytest.fixture
def entry_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = gitmem_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    return repo


def test_entry_without_gitmem_dir_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_actions,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "plain", {"a.txt": "a\n"})
    monkeypatch.chdir(repo)
    assert hook_entry.main(["post-commit"]) == 0
    monkeypatch.chdir(tmp_path)  # not in a repository at all
    assert hook_entry.main(["post-commit"]) == 0
    assert fake_actions.calls == []
    assert capsys.readouterr() == ("", "")
    assert not (repo / ".gitmem").exists()


def test_entry_passes_args_stdin_root_and_prints_message_to_stderr(entry_repo: Path, fake_actions,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a b\nc d\n")))
    fake_actions.module.behaviour = "2 memories to re-check"
    (entry_repo / "sub").mkdir()
    monkeypatch.chdir(entry_repo / "sub")
    assert hook_entry.main(["post-rewrite", "rebase"]) == 0
    assert fake_actions.calls == [("post-rewrite", ["rebase"], b"a b\nc d\n", entry_repo)]
    assert capsys.readouterr() == ("", "2 memories to re-check\n")
    assert "GITMEM_HOOK_ACTIVE" not in os.environ
    [line] = log_text(entry_repo).splitlines()
    assert " post-rewrite ok " in line and "args=['rebase'] stdin=8B" in line and f"gitmem {gitmem.__version__}" in line


def test_entry_logs_when_hook_actions_cannot_be_imported(entry_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "gitmem.integrations.git_hook_actions", None)  # import raises ImportError
    assert hook_entry.main(["post-commit"]) == 0
    assert capsys.readouterr() == ("", "")
    log = log_text(entry_repo)
    assert " post-commit error " in log and "cannot import gitmem.integrations.git_hook_actions" in log
    assert "Traceback (most recent call last)" in log


@pytest.mark.parametrize("exc", [RuntimeError("boom"), SystemExit(3), KeyboardInterrupt()])
def test_entry_catches_everything(entry_repo: Path, fake_actions, exc: BaseException,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    def raise_it(name: str) -> None:
        raise exc
    fake_actions.module.behaviour = raise_it
    assert hook_entry.main(["post-merge", "0"]) == 0
    assert capsys.readouterr() == ("", "")
    log = log_text(entry_repo)
    assert log.startswith("20") and " post-merge " in log and type(exc).__name__ in log
    assert "Traceback (most recent call last)" in log


def test_entry_stops_at_the_time_limit(entry_repo: Path, fake_actions, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_HOOK_TIMEOUT", "0.3")

    def slow(name: str) -> None:
        try:
            time.sleep(30)
        except Exception:  # noqa: BLE001 - an action's broad handler must not swallow the stop
            pass
    fake_actions.module.behaviour = slow
    start = time.monotonic()
    assert hook_entry.main(["post-checkout", "a", "b", "1"]) == 0
    assert time.monotonic() - start < 2
    assert " post-checkout timeout " in log_text(entry_repo)


def test_entry_recursion_guard(entry_repo: Path, fake_actions, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_HOOK_ACTIVE", "1")
    assert hook_entry.main(["post-commit"]) == 0
    assert fake_actions.calls == [] and log_text(entry_repo) == ""
    monkeypatch.delenv("GITMEM_HOOK_ACTIVE")
    fake_actions.module.behaviour = lambda name: os.environ.get("GITMEM_HOOK_ACTIVE")
    assert hook_entry.main([]) == 0 and fake_actions.calls == []  # no hook name: nothing to do


def test_entry_rotates_a_big_log(entry_repo: Path, fake_actions) -> None:
    log = hook_log_path(entry_repo)
    log.parent.mkdir(parents=True)
    log.write_text("x" * (infra.LOG_MAX_BYTES + 1))
    assert hook_entry.main(["post-commit"]) == 0
    assert log.with_name("hooks.log.1").stat().st_size == infra.LOG_MAX_BYTES + 1
    assert log.read_text().count("\n") == 1


def test_hook_modules_import_only_the_stdlib() -> None:
    code = ("import sys, gitmem.hook_entry, gitmem.integrations.git_hooks as g; "
            "heavy = {'lancedb', 'tree_sitter', 'tree_sitter_language_pack', 'openai', 'httpx', "
            "'pyarrow', 'numpy', 'wordllama'}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
    code = ("import sys, gitmem.hook_entry; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'git' or m == 'gitmem.git'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
