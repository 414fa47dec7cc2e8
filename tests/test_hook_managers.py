"""gitmem's git hooks next to hook managers: pre-commit (the framework), lefthook, husky v9, a global core.hooksPath.

Everything is real: the managers' own installers (``pre-commit install``, ``lefthook install``,
husky's ``index.js`` run by ``node`` from tests/fixtures/husky), real commits, and gitmem's real
hook actions (a memory anchored to a function turns stale when a commit changes it, and the
commit's stderr says so). Each test checks that gitmem's hook runs, that the manager's hooks
run (they write marker files), and that ``gitmem hooks uninstall`` leaves the manager's files
byte-identical to what the manager alone wrote. No network: pre-commit uses ``repo: local``
hooks with ``language: system`` and a private PRE_COMMIT_HOME.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from gitmem.git import Repo
from gitmem.hook_entry import hook_log_path
from gitmem.integrations import git_hooks
from testing.repos import git, make_repo, write

HUSKY = Path(__file__).resolve().parent / "fixtures" / "husky"

APP = '''\
def parse(text):
    return text.split(",")


def other():
    return 1
'''

PRE_COMMIT_CONFIG = '''\
repos:
- repo: local
  hooks:
  - id: marker-pre
    name: marker-pre
    entry: sh -c 'echo pre-commit >> pc.out'
    language: system
    pass_filenames: false
    always_run: true
    stages: [pre-commit]
  - id: marker-post
    name: marker-post
    entry: sh -c 'echo post-commit >> pc.out'
    language: system
    pass_filenames: false
    always_run: true
    stages: [post-commit]
  - id: marker-checkout
    name: marker-checkout
    entry: sh -c 'echo post-checkout >> pc.out'
    language: system
    pass_filenames: false
    always_run: true
    stages: [post-checkout]
  - id: no-bad-files
    name: no-bad-files
    entry: sh -c 'exit 1'
    language: system
    files: '^bad'
    stages: [pre-commit]
'''

LEFTHOOK_CONFIG = '''\
pre-commit:
  commands:
    marker:
      run: echo pre-commit >> lh.out
post-commit:
  commands:
    marker:
      run: echo post-commit >> lh.out
'''

USER_HOOK = b"#!/bin/sh\necho user >> user.out\n"


# -- helpers ---------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _managers_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private global git config (a copy of conftest's), pre-commit's cache in tmp, plain output."""
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_bytes(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_bytes())
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("PRE_COMMIT_COLOR", "never")
    for k in ("GITMEM_HOOK_ACTIVE", "GITMEM_HOOK_LEGACY", "PRE_COMMIT_RUNNING_LEGACY", "LEFTHOOK", "HUSKY",
              "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "PYTHONPATH"):
        monkeypatch.delenv(k, raising=False)
    return gitconfig


def gitmem_project(path: Path, run_cli, run_json, files: dict[str, str] | None = None) -> tuple[Path, str]:
    """A repository with .gitmem/ (no hooks yet) and one committed memory anchored to app.py::parse."""
    repo = make_repo(path, {"app.py": APP, ".gitignore": "*.out\n", **(files or {})})
    code, _, err = run_cli(repo, "init", "--no-hooks")
    assert code == 0, err
    mid = run_json(repo, "remember", "parse splits on commas", "--anchor", "app.py::parse")["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory", "--no-verify")
    return repo, mid


def commit_proc(repo: Path, message: str, files: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if files:
        write(repo, files)
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo,
                          capture_output=True, text=True, timeout=120)


def change_parse(repo: Path, sep: str) -> subprocess.CompletedProcess[str]:
    """Commit a change to parse's body: gitmem's post-commit reports the memory on it as stale."""
    return commit_proc(repo, f"split on {sep!r}", {"app.py": APP.replace('split(",")', f"split({sep!r})")})


def gitmem_ran(repo: Path, hook: str = "post-commit") -> int:
    """How many times gitmem's ``hook`` ran to completion in ``repo`` (its hook log)."""
    log = hook_log_path(repo)
    return log.read_text().count(f" {hook} ok ") if log.exists() else 0


def lines(repo: Path, name: str) -> list[str]:
    path = repo / name
    return path.read_text().splitlines() if path.exists() else []


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in ``folder`` (not recursive): bytes and mode; symlinks as their target."""
    out: dict[str, tuple[bytes, int]] = {}
    for p in sorted(folder.iterdir()):
        if p.is_symlink():
            out[p.name] = (os.readlink(p).encode(), 0)
        elif p.is_file():
            out[p.name] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return out


def write_hook(path: Path, data: bytes = USER_HOOK) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755)
    return data


def state(repo: Path, name: str) -> git_hooks.HookState:
    [s] = [s for s in git_hooks.status(Repo(repo)) if s.name == name]
    return s


def pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extras: pip install -e '.[test]'")
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, capture_output=True,
                          text=True, timeout=120)


def lefthook_bin() -> str:
    for candidate in (Path(sysconfig.get_path("scripts")) / "lefthook", shutil.which("lefthook")):
        if candidate and os.access(candidate, os.X_OK):
            proc = subprocess.run([str(candidate), "version"], capture_output=True, text=True)
            if proc.returncode == 0:
                return str(candidate)
    pytest.skip("the lefthook binary (PyPI package lefthook, in the test extras) is not installed or cannot run here")


def lefthook(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([lefthook_bin(), *args], cwd=repo, capture_output=True, text=True, timeout=120)


def husky_install(repo: Path) -> None:
    """Run husky v9's installer (what `npm install` runs through "prepare": "husky") from the vendored copy."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the real husky installer cannot run")
    proc = subprocess.run([node, str(HUSKY / "bin.js")], cwd=repo, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


# -- pre-commit (the framework) ---------------------------------------------------------------------


def test_pre_commit_first_then_gitmem_both_run_and_uninstall_restores(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = gitmem_project(tmp_path / "repo", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    hooks = repo / ".git" / "hooks"
    proc = pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit", "-t", "post-checkout")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = snapshot(hooks)

    code, out, err = run_cli(repo, "hooks", "install")
    assert code == 0, err
    # pre-commit's scripts stay where they are; gitmem's shim sits in their migration slot (.legacy).
    for name in ("pre-commit", "post-commit", "post-checkout"):
        assert snapshot(hooks)[name] == written[name]
        assert git_hooks.shim_version(hooks / f"{name}.legacy") == git_hooks.SHIM_VERSION
        s = state(repo, name)
        assert s.installed and s.will_run and s.problem == "" and s.path == (hooks / f"{name}.legacy").resolve()
        assert s.note.startswith(f"run by pre-commit's hook .git/hooks/{name} (its migration mode)")
    assert "note: .git/hooks/pre-commit is pre-commit's hook: gitmem's runs from .git/hooks/pre-commit.legacy" in out
    assert git_hooks.shim_version(hooks / "post-merge") == git_hooks.SHIM_VERSION  # unmanaged: the usual place

    proc = change_parse(repo, ";")
    assert proc.returncode == 0, proc.stderr
    assert "migration mode" not in proc.stdout + proc.stderr
    assert "gitmem: 1 memory may be stale" in proc.stderr
    assert [r["id"] for r in run_json(repo, "stale")] == [mid]
    assert lines(repo, "pc.out") == ["pre-commit", "post-commit"]
    assert gitmem_ran(repo, "pre-commit") == 1 and gitmem_ran(repo) == 1

    git(repo, "checkout", "-q", "-b", "feature")
    assert lines(repo, "pc.out")[-1] == "post-checkout"
    assert gitmem_ran(repo, "post-checkout") == 1

    # Both re-installs are no-ops now, in either order.
    assert pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit", "-t", "post-checkout").returncode == 0
    code, out, _ = run_cli(repo, "hooks", "install", "--json")
    assert code == 0 and __import__("json").loads(out)["installed"] == []
    code, out, _ = run_cli(repo, "doctor")
    assert "pre-commit: git will run gitmem's hook at" in out and "its migration mode" in out

    code, out, _ = run_cli(repo, "hooks", "uninstall")
    assert code == 0 and out.startswith("removed: post-commit, post-merge, post-checkout, post-rewrite, pre-commit")
    assert snapshot(hooks) == written
    assert change_parse(repo, "|").returncode == 0
    assert lines(repo, "pc.out")[-2:] == ["pre-commit", "post-commit"]
    assert gitmem_ran(repo) == 1


def test_gitmem_first_then_pre_commit_keeps_every_hook(tmp_path: Path, run_cli, run_json) -> None:
    # What pre-commit alone makes of a repository with the user's own pre-commit hook.
    control, _ = gitmem_project(tmp_path / "control", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    write_hook(control / ".git" / "hooks" / "pre-commit")
    assert pre_commit(control, "install", "-t", "pre-commit", "-t", "post-commit").returncode == 0
    pre_commit_alone = snapshot(control / ".git" / "hooks")
    assert pre_commit_alone["pre-commit.legacy"][0] == USER_HOOK

    repo, mid = gitmem_project(tmp_path / "repo", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    hooks = repo / ".git" / "hooks"
    write_hook(hooks / "pre-commit")
    assert run_cli(repo, "hooks", "install")[0] == 0
    assert (hooks / "pre-commit.before-gitmem").read_bytes() == USER_HOOK
    # pre-commit moves gitmem's shim to pre-commit.legacy: the user's hook is not overwritten (it was, with
    # gitmem chaining it as .legacy), and gitmem's shim, run by pre-commit, still runs it.
    proc = pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit")
    assert proc.returncode == 0 and "Running in migration mode" in proc.stdout
    assert (hooks / "pre-commit.before-gitmem").read_bytes() == USER_HOOK

    proc = change_parse(repo, ";")
    assert proc.returncode == 0, proc.stderr
    assert "gitmem: 1 memory may be stale" in proc.stderr
    assert lines(repo, "user.out") == ["user"]
    assert lines(repo, "pc.out") == ["pre-commit", "post-commit"]
    assert gitmem_ran(repo, "pre-commit") == 1 and gitmem_ran(repo) == 1
    assert all(s.will_run and s.problem == "" for s in git_hooks.status(Repo(repo)))

    # Installing gitmem again changes nothing: both orders end in the same layout.
    before = snapshot(hooks)
    assert run_cli(repo, "hooks", "install")[0] == 0
    assert snapshot(hooks) == before

    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    after = snapshot(hooks)
    # pre-commit's files are exactly what pre-commit alone writes; gitmem's unmanaged shims are gone.
    assert after == pre_commit_alone
    assert change_parse(repo, "|").returncode == 0
    assert lines(repo, "user.out") == ["user", "user"] and gitmem_ran(repo) == 1

    # And pre-commit uninstalls cleanly afterwards: the user's hook is back in place.
    assert pre_commit(repo, "uninstall", "-t", "pre-commit", "-t", "post-commit").returncode == 0
    assert snapshot(hooks) == {"pre-commit": (USER_HOOK, 0o755)}


def test_pre_commit_failure_blocks_the_commit_and_a_gitmem_failure_never_does(
        tmp_path: Path, run_cli, run_json, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _ = gitmem_project(tmp_path / "repo", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    assert pre_commit(repo, "install", "-t", "pre-commit", "-t", "post-commit").returncode == 0
    assert run_cli(repo, "hooks", "install")[0] == 0
    head = git(repo, "rev-parse", "HEAD")

    proc = commit_proc(repo, "bad", {"bad.txt": "x\n"})
    assert proc.returncode == 1 and "no-bad-files" in proc.stderr and "Failed" in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert gitmem_ran(repo) == 0

    # gitmem failing (cut off by its time limit): pre-commit's hooks still run and the commit goes through.
    git(repo, "rm", "-q", "--cached", "bad.txt")
    (repo / "bad.txt").unlink()
    monkeypatch.setenv("GITMEM_HOOK_TIMEOUT", "0.000001")
    proc = change_parse(repo, ";")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(repo, "rev-parse", "HEAD") != head
    assert lines(repo, "pc.out")[-2:] == ["pre-commit", "post-commit"]
    log = hook_log_path(repo).read_text()
    assert " pre-commit timeout " in log and " post-commit timeout " in log and gitmem_ran(repo) == 0


def test_shims_from_gitmem_v2_that_chained_pre_commit_as_legacy_are_repaired(tmp_path: Path, run_cli,
                                                                             run_json) -> None:
    # gitmem <= shim v2 moved pre-commit's script to pre-commit.legacy; pre-commit then found itself as
    # its own legacy hook and failed every commit ("pre-commit's script is installed in migration mode").
    repo, _ = gitmem_project(tmp_path / "repo", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    hooks = repo / ".git" / "hooks"
    assert pre_commit(repo, "install").returncode == 0
    written = (hooks / "pre-commit").read_bytes()
    os.replace(hooks / "pre-commit", hooks / "pre-commit.legacy")
    v2 = git_hooks.render_shim("pre-commit", sys.executable).replace(
        f"# gitmem-hook: v{git_hooks.SHIM_VERSION}".encode(), b"# gitmem-hook: v2").replace(
        b"$HOOK_NAME.before-gitmem", b"$HOOK_NAME.legacy")
    write_hook(hooks / "pre-commit", v2)
    proc = commit_proc(repo, "old layout")
    assert proc.returncode == 1 and "installed in migration mode" in proc.stdout + proc.stderr
    assert state(repo, "pre-commit").problem.endswith(
        "is an older gitmem shim (v2): `gitmem hooks install` upgrades it")

    assert run_cli(repo, "hooks", "install")[0] == 0
    assert (hooks / "pre-commit").read_bytes() == written
    assert git_hooks.shim_version(hooks / "pre-commit.legacy") == git_hooks.SHIM_VERSION
    proc = commit_proc(repo, "repaired")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines(repo, "pc.out")[-1] == "pre-commit" and gitmem_ran(repo, "pre-commit") == 1

    # A v2 shim's own chained <hook>.legacy (not pre-commit's) becomes <hook>.before-gitmem, and back.
    git_hooks.uninstall(Repo(repo))
    pre_commit(repo, "uninstall")
    write_hook(hooks / "post-commit", v2.replace(b"HOOK_NAME=pre-commit", b"HOOK_NAME=post-commit"))
    write_hook(hooks / "post-commit.legacy")
    git_hooks.install(Repo(repo), python=sys.executable)
    assert (hooks / "post-commit.before-gitmem").read_bytes() == USER_HOOK
    assert not (hooks / "post-commit.legacy").exists()
    git_hooks.uninstall(Repo(repo))
    assert snapshot(hooks) == {"post-commit": (USER_HOOK, 0o755)}


def test_shim_left_in_pre_commits_slot_goes_back_when_pre_commits_hook_is_deleted(tmp_path: Path, run_cli,
                                                                                   run_json) -> None:
    repo, _ = gitmem_project(tmp_path / "repo", run_cli, run_json, {".pre-commit-config.yaml": PRE_COMMIT_CONFIG})
    hooks = repo / ".git" / "hooks"
    user = write_hook(hooks / "pre-commit")
    assert run_cli(repo, "hooks", "install")[0] == 0
    assert pre_commit(repo, "install").returncode == 0
    (hooks / "pre-commit").unlink()  # pre-commit's hook deleted by hand, its .legacy (gitmem's shim) left
    assert state(repo, "pre-commit").problem == (
        "gitmem's shim is at .git/hooks/pre-commit.legacy, where a hook manager moved it before its own "
        "hook was removed: `gitmem hooks install` puts it back")
    assert run_cli(repo, "hooks", "install")[0] == 0
    assert git_hooks.shim_version(hooks / "pre-commit") == git_hooks.SHIM_VERSION
    assert not (hooks / "pre-commit.legacy").exists()
    assert commit_proc(repo, "two").returncode == 0
    assert lines(repo, "user.out") == ["user"] and gitmem_ran(repo, "pre-commit") == 1
    (hooks / "pre-commit").rename(hooks / "pre-commit.legacy")  # again; this time uninstall
    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(hooks) == {"pre-commit": (user, 0o755)}


# -- lefthook -----------------------------------------------------------------------------------------


def test_lefthook_first_then_gitmem_both_run_and_uninstall_restores(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = gitmem_project(tmp_path / "repo", run_cli, run_json, {"lefthook.yml": LEFTHOOK_CONFIG})
    hooks = repo / ".git" / "hooks"
    proc = lefthook(repo, "install")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = snapshot(hooks)
    assert set(written) >= {"pre-commit", "post-commit"}

    code, out, err = run_cli(repo, "hooks", "install", "--json")
    assert code == 0, err
    assert __import__("json").loads(out)["chained"] == ["post-commit", "pre-commit"]

    proc = change_parse(repo, ";")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gitmem: 1 memory may be stale" in proc.stderr
    assert lines(repo, "lh.out") == ["pre-commit", "post-commit"]
    assert gitmem_ran(repo, "pre-commit") == 1 and gitmem_ran(repo) == 1
    assert [r["id"] for r in run_json(repo, "stale")] == [mid]

    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(hooks) == written
    assert change_parse(repo, "|").returncode == 0
    assert lines(repo, "lh.out")[-2:] == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 1


def test_gitmem_first_then_lefthook_status_says_so_and_install_chains_it(tmp_path: Path, run_cli, run_json) -> None:
    # What lefthook alone makes of a repository with the user's own post-commit hook: it is kept as .old.
    control, _ = gitmem_project(tmp_path / "control", run_cli, run_json, {"lefthook.yml": LEFTHOOK_CONFIG})
    write_hook(control / ".git" / "hooks" / "post-commit")
    assert lefthook(control, "install").returncode == 0
    lefthook_alone = snapshot(control / ".git" / "hooks")
    assert lefthook_alone["post-commit.old"][0] == USER_HOOK

    repo, _ = gitmem_project(tmp_path / "repo", run_cli, run_json, {"lefthook.yml": LEFTHOOK_CONFIG})
    hooks = repo / ".git" / "hooks"
    write_hook(hooks / "post-commit")
    assert run_cli(repo, "hooks", "install")[0] == 0
    proc = lefthook(repo, "install")  # moves gitmem's shims to .old, and does not run .old hooks
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git_hooks.shim_version(hooks / "post-commit.old") == git_hooks.SHIM_VERSION
    s = state(repo, "post-commit")
    assert not s.installed and not s.will_run
    assert s.problem == (".git/hooks/post-commit is another tool's hook, which moved gitmem's to "
                         ".git/hooks/post-commit.old and does not run it: `gitmem hooks install` chains it")
    code, out, _ = run_cli(repo, "doctor")
    assert "post-commit: git will not run gitmem's hook" in out and "post-commit.old and does not run it" in out
    assert commit_proc(repo, "other", {"app.py": APP.replace("return 1", "return 2")}).returncode == 0
    assert lines(repo, "lh.out") == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 0

    code, out, err = run_cli(repo, "hooks", "install", "--json")
    assert code == 0, err
    assert __import__("json").loads(out)["chained"] == ["post-commit", "pre-commit"]
    assert (hooks / "post-commit.old").read_bytes() == USER_HOOK   # where lefthook alone keeps it
    proc = change_parse(repo, "|")
    assert proc.returncode == 0 and "gitmem: 1 memory may be stale" in proc.stderr
    assert lines(repo, "lh.out")[-2:] == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 1

    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    # lefthook's hooks as lefthook wrote them, the user's hook where lefthook keeps it (gitmem's
    # shims for hooks lefthook does not manage are gone).
    assert snapshot(hooks) == lefthook_alone
    assert lefthook(repo, "uninstall").returncode == 0
    assert snapshot(hooks) == {"post-commit": (USER_HOOK, 0o755)}


# -- husky v9 -------------------------------------------------------------------------------------------


def test_husky_v9_install_coexist_reinstall_uninstall(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = gitmem_project(tmp_path / "repo", run_cli, run_json)
    husky_install(repo)
    assert git(repo, "config", "core.hooksPath").strip() == ".husky/_"
    write_hook(repo / ".husky" / "pre-commit", b"echo pre-commit >> husky.out\n")
    write_hook(repo / ".husky" / "post-commit", b"echo post-commit >> husky.out\n")
    generated = repo / ".husky" / "_"
    written = snapshot(generated)

    code, out, _ = run_cli(repo, "hooks", "install")
    assert code == 0
    assert "husky regenerates .husky/_ when it is installed" in out
    assert all(s.will_run and s.problem == "" and s.path.parent == generated.resolve()
               for s in git_hooks.status(Repo(repo)))
    proc = change_parse(repo, ";")
    assert proc.returncode == 0, proc.stderr
    assert "gitmem: 1 memory may be stale" in proc.stderr
    assert lines(repo, "husky.out") == ["pre-commit", "post-commit"]
    assert gitmem_ran(repo, "pre-commit") == 1 and gitmem_ran(repo) == 1

    # `npm install` runs husky again: it rewrites its stubs over gitmem's shims.
    husky_install(repo)
    s = state(repo, "post-commit")
    assert not s.will_run and "is another tool's hook" in s.problem
    assert change_parse(repo, "|").returncode == 0
    assert lines(repo, "husky.out")[-2:] == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 1
    # ... and `gitmem hooks install` (as the install note says) chains them again.
    code, out, _ = run_cli(repo, "hooks", "install", "--json")
    assert code == 0 and __import__("json").loads(out)["skipped"] == []
    assert change_parse(repo, ":").returncode == 0
    assert lines(repo, "husky.out")[-2:] == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 2

    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(generated) == written
    # Uninstall after husky rewrote the stubs also leaves husky's folder as husky wrote it.
    run_cli(repo, "hooks", "install")
    husky_install(repo)
    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(generated) == written
    assert change_parse(repo, ";").returncode == 0
    assert lines(repo, "husky.out")[-2:] == ["pre-commit", "post-commit"] and gitmem_ran(repo) == 2


# -- a global core.hooksPath ---------------------------------------------------------------------------------


def test_global_hooks_path_with_a_local_husky_and_then_without(tmp_path: Path, run_cli, run_json,
                                                               _managers_env: Path) -> None:
    global_hooks = tmp_path / "global-hooks"
    user = write_hook(global_hooks / "post-commit", b'#!/bin/sh\necho global >> "$PWD/global.out"\n')
    with _managers_env.open("a") as f:
        f.write(f"[core]\n\thooksPath = {global_hooks}\n")
    global_before = snapshot(global_hooks)
    repo, mid = gitmem_project(tmp_path / "repo", run_cli, run_json)
    (repo / "global.out").unlink()  # the global hook ran for the setup commit

    # A repository-local manager (husky: local core.hooksPath) wins over the global one.
    husky_install(repo)
    write_hook(repo / ".husky" / "post-commit", b"echo post-commit >> husky.out\n")
    written = snapshot(repo / ".husky" / "_")
    code, out, _ = run_cli(repo, "hooks", "install")
    assert code == 0
    assert "core.hooksPath=.husky/_ (local config): installed into .husky/_, where git runs hooks" in out
    assert snapshot(global_hooks) == global_before
    assert all(s.will_run and s.path.parent == (repo / ".husky" / "_").resolve()
               for s in git_hooks.status(Repo(repo)))
    proc = change_parse(repo, ";")
    assert proc.returncode == 0 and "gitmem: 1 memory may be stale" in proc.stderr
    assert lines(repo, "husky.out") == ["post-commit"] and not (repo / "global.out").exists()
    code, out, _ = run_cli(repo, "doctor")
    assert f"post-commit: git will run gitmem's hook at {(repo / '.husky' / '_' / 'post-commit').resolve()}" in out

    # Without husky, git runs the global folder's hooks: status says gitmem is not there, install puts it
    # there (chaining the user's hook) and says that this folder serves every repository.
    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(repo / ".husky" / "_") == written
    git(repo, "config", "--unset", "core.hooksPath")
    s = state(repo, "post-commit")
    assert not s.will_run and s.problem == f"{global_hooks / 'post-commit'} is another tool's hook: " \
                                           f"`gitmem hooks install` chains it"
    code, out, _ = run_cli(repo, "hooks", "install")
    assert f"core.hooksPath={global_hooks} is set in your global git config" in out
    assert (global_hooks / "post-commit.before-gitmem").read_bytes() == user
    proc = change_parse(repo, "|")
    assert proc.returncode == 0 and lines(repo, "global.out") == ["global"]
    assert gitmem_ran(repo) == 2
    code, out, _ = run_cli(repo, "doctor")
    assert "(chained: post-commit.before-gitmem)" in out

    assert run_cli(repo, "hooks", "uninstall")[0] == 0
    assert snapshot(global_hooks) == global_before
