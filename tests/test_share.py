"""``[share] policy``: a local memory travels in the commit that changes its code; nothing else does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitmem import layout
from testing.repos import commit, git, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _repo(tmp_path: Path, run_cli, policy: str | None = None) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "README.md": "x\n"})
    assert run_cli(repo, "init")[0] == 0  # with the git hooks, pre-commit included
    if policy:
        (repo / ".gitmem" / "config.toml").write_text(
            f'[share]\npolicy = "{policy}"\n[embeddings]\nprovider = "none"\n')
    git(repo, "add", ".gitmem")
    git(repo, "commit", "-qm", "gitmem")
    code, out, _ = run_cli(repo, "remember", "parse splits on commas only", "--local", "--anchor",
                           "csvish.py::parse", "--json")
    return repo, json.loads(out)["id"]


def _files_of(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "show", "--name-only", "--format=", rev).split()


@pytest.mark.parametrize("how", ["add", "all", "path"])
def test_with_code_commit_carries_the_memory_of_the_code_it_changes(tmp_path: Path, run_cli, how: str) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    # a commit touching nothing anchored carries nothing
    (repo / "README.md").write_text("y\n")
    proc_out = git(repo, "commit", "-qam", "docs")
    assert _files_of(repo) == ["README.md"] and proc_out == ""
    assert (layout.of(repo).local_memories_dir / f"{mid}.md").exists()
    # a commit changing render (not the anchored parse) carries nothing either
    (repo / "csvish.py").write_text(CODE.replace("','.join(items)", "', '.join(items)"))
    git(repo, "commit", "-qam", "render spaces")
    assert _files_of(repo) == ["csvish.py"]
    # a commit changing parse carries the memory, however it is made
    (repo / "csvish.py").write_text((repo / "csvish.py").read_text().replace("text.split(',')", "text.split(';')"))
    args = {"add": ["commit", "-qm", "parse semicolons"], "all": ["commit", "-qam", "parse semicolons"],
            "path": ["commit", "-qm", "parse semicolons", "csvish.py"]}[how]
    if how == "add":
        git(repo, "add", "csvish.py")
    proc = __import__("subprocess").run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(_files_of(repo)) == [f".gitmem/memories/{mid}.md", "csvish.py"]
    assert f"gitmem: shared 1 memory with this commit: {mid[:12]}" in proc.stderr
    assert not (layout.of(repo).local_memories_dir / f"{mid}.md").exists()
    assert git(repo, "status", "--porcelain", "--", ".gitmem/memories") == ""  # committed, nothing left staged


def test_manual_and_all_policies(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli, "manual")
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    git(repo, "commit", "-qam", "parse semicolons")
    assert _files_of(repo) == ["csvish.py"]
    code, out, _ = run_cli(repo, "share", mid, "--json")
    assert code == 0 and json.loads(out)[0]["scope"] == "team"
    assert (repo / ".gitmem" / "memories" / f"{mid}.md").exists()

    repo2, mid2 = _repo(tmp_path / "two", run_cli, "all")
    (repo2 / "README.md").write_text("z\n")
    git(repo2, "commit", "-qam", "docs")
    assert sorted(_files_of(repo2)) == [f".gitmem/memories/{mid2}.md", "README.md"]


def test_a_broken_share_never_blocks_the_commit(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    (repo / ".gitmem" / "config.toml").write_text('[share]\npolicy = "sometimes"\n')
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    git(repo, "commit", "-qam", "parse semicolons")
    assert "csvish.py" in _files_of(repo)
    assert "share.policy" in (layout.of(repo).log_file("hooks.log")).read_text()


def test_a_failing_chained_pre_commit_shares_nothing(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    legacy = repo / ".git" / "hooks" / "pre-commit.before-gitmem"
    legacy.write_text("#!/bin/sh\nexit 1\n")
    legacy.chmod(0o755)
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    proc = __import__("subprocess").run(["git", "commit", "-qam", "x"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 1 and "shared" not in proc.stderr
    assert (layout.of(repo).local_memories_dir / f"{mid}.md").exists()


def test_a_memory_shared_with_the_commit_that_makes_it_stale_fails_check(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    git(repo, "commit", "-qam", "parse semicolons")
    assert f".gitmem/memories/{mid}.md" in _files_of(repo)
    code, out, _ = run_cli(repo, "check", "--base", "HEAD~1")
    assert code == 1 and out.startswith(f"stale: {mid}")


def test_an_ignored_memory_folder_is_said_everywhere_and_nothing_is_marked_shared(tmp_path: Path, run_cli) -> None:
    """A .gitignore that ignores .gitmem/: init warns, the commit says the memory was not shared (it stays local,
    out of the commit), doctor exits 1; once un-ignored, the next commit shares it and doctor is clean of it."""
    import subprocess

    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, ".gitignore": "*.pyc\n.gitmem/\n"})
    code, out, err = run_cli(repo, "init")
    assert code == 0 and "warning: team memories will not be committed: git ignores .gitmem/memories/" in out
    assert "!/.gitmem/" in out
    git(repo, "add", "-f", ".gitmem/config.toml")
    git(repo, "commit", "-qm", "gitmem config")
    code, out, _ = run_cli(repo, "remember", "parse splits on commas only", "--local", "--anchor",
                           "csvish.py::parse", "--json")
    mid = json.loads(out)["id"]
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    proc = subprocess.run(["git", "commit", "-qam", "parse semicolons"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _files_of(repo) == ["csvish.py"]
    assert "gitmem: NOT shared 1 memory with this commit (they stay local): git ignores .gitmem/memories/" \
        in proc.stderr
    assert (layout.of(repo).local_memories_dir / f"{mid}.md").exists()
    assert not (repo / ".gitmem" / "memories" / f"{mid}.md").exists()
    code, out, _ = run_cli(repo, "doctor", "--json")
    errors = [c for c in json.loads(out)["checks"] if c["level"] == "error"]
    assert code == 1 and {c["name"] for c in errors} >= {"sharing", "hook-share"}
    (repo / ".gitignore").write_text("*.pyc\n.gitmem/\n!/.gitmem/\n")
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split('|')"))
    proc = subprocess.run(["git", "commit", "-qam", "parse pipes"], cwd=repo, capture_output=True, text=True)
    assert f"gitmem: shared 1 memory with this commit: {mid[:12]}" in proc.stderr, proc.stderr
    assert f".gitmem/memories/{mid}.md" in _files_of(repo)
    checks = json.loads(run_cli(repo, "doctor", "--json")[1])["checks"]
    assert not [c for c in checks if c["name"] in ("sharing", "hook-share")]


def _commit(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_pre_commit_step_cut_short_says_so_and_the_next_commit_shares_what_it_left(tmp_path: Path,
                                                                                     run_cli) -> None:
    """The time limit stops the step before it shared (here: 50 ms, while it loads the library): one line at the
    commit, which goes on without the memory; the next commit — of other code — carries it."""
    repo, mid = _repo(tmp_path, run_cli)
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    proc = _commit(repo, "commit", "-qam", "parse semicolons", env={"GITMEM_HOOK_TIMEOUT": "0.05"})
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "gitmem" in ln]
    assert "stopped at its time limit" in line and "the next commit shares them" in line
    assert _files_of(repo) == ["csvish.py"]  # the commit went on, without the memory
    assert (layout.of(repo).local_memories_dir / f"{mid}.md").exists()
    code, out, _ = run_cli(repo, "doctor", "--json")
    (problem,) = [c for c in json.loads(out)["checks"] if c["name"] == "hook-share-pending"]
    assert problem["level"] == "error" and "time limit" in problem["message"]
    (repo / "README.md").write_text("y\n")  # the next commit changes other code
    proc = _commit(repo, "commit", "-qam", "docs")
    assert proc.returncode == 0, proc.stderr
    assert sorted(_files_of(repo)) == [f".gitmem/memories/{mid}.md", "README.md"], proc.stderr
    assert f"gitmem: shared 1 memory with this commit: {mid[:12]}" in proc.stderr
    assert not layout.of(repo).share_pending.exists()
    code, out, _ = run_cli(repo, "doctor", "--json")
    assert not [c for c in json.loads(out)["checks"] if c["name"] == "hook-share-pending"]
    (repo / "README.md").write_text("z\n")  # and only that once
    proc = _commit(repo, "commit", "-qam", "docs again")
    assert _files_of(repo) == ["README.md"] and "gitmem" not in proc.stderr


def test_a_step_cut_short_while_staging_leaves_no_memory_behind(tmp_path: Path, run_cli) -> None:
    """Cut short after the memory became a team file, before it was staged (a slow clean filter on memory
    files): the next commit stages that file."""
    repo, mid = _repo(tmp_path, run_cli)
    (layout.of(repo).common_dir / "info").mkdir(exist_ok=True)
    (layout.of(repo).common_dir / "info" / "attributes").write_text(".gitmem/memories/*.md filter=slow\n")
    git(repo, "config", "filter.slow.clean", "sleep 20; cat")
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    proc = _commit(repo, "commit", "-qam", "parse semicolons", env={"GITMEM_HOOK_TIMEOUT": "3"})
    assert proc.returncode == 0, proc.stderr
    assert any("stopped at its time limit" in ln for ln in proc.stderr.splitlines()), proc.stderr
    assert _files_of(repo) == ["csvish.py"]
    git(repo, "config", "--unset", "filter.slow.clean")
    (repo / "README.md").write_text("y\n")
    proc = _commit(repo, "commit", "-qam", "docs")
    assert sorted(_files_of(repo)) == [f".gitmem/memories/{mid}.md", "README.md"], proc.stderr
    assert git(repo, "status", "--porcelain", "--", ".gitmem") == ""
