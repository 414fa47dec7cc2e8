"""Make real git repositories for tests: ``make_repo``, ``write``, ``commit``, ``git``.

Uses the real ``git`` executable. Identity and config come from the
environment set up by ``tests/conftest.py`` (a temp GIT_CONFIG_GLOBAL).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(repo: Path, *args: str, check: bool = True, input: bytes | None = None,
        env: dict[str, str] | None = None) -> str:
    """Run git in ``repo``; returns stdout as text. Raises CalledProcessError on failure when ``check``."""
    proc = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, ["git", *args], proc.stdout, proc.stderr)
    return proc.stdout.decode("utf-8", "replace")


def git_proc(repo: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git in ``repo`` and return the completed process (stdout, stderr, returncode)."""
    return subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True)


def write(repo: Path, files: dict[str, str | bytes]) -> None:
    """Write ``files`` (repo-relative path → text or bytes) into the work tree."""
    for rel, content in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8", newline="")


def commit(repo: Path, message: str, files: dict[str, str | bytes] | None = None, *,
           add_all: bool = True, no_verify: bool = False) -> str:
    """Write ``files``, stage everything, commit (hooks run unless ``no_verify``); returns the SHA."""
    if files:
        write(repo, files)
    if add_all:
        git(repo, "add", "-A")
    args = ["commit", "-q", "-m", message, "--allow-empty"]
    if no_verify:
        args.append("--no-verify")
    git(repo, *args)
    return git(repo, "rev-parse", "HEAD").strip()


def make_repo(path: Path, files: dict[str, str | bytes] | None = None, *, branch: str = "main") -> Path:
    """``git init`` at ``path`` (created), optionally with a first commit of ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    if files:
        commit(path, "initial", files)
    return path
