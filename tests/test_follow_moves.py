"""Moved code followed inside the commit that moves it (issue 12 item 5), with the real hooks ``gitmem init`` installs.

A rename of a function, a renamed file and a function moved to another file, committed the three ways people
commit (``git commit -am``, ``git commit PATH``, ``git add`` + ``git commit``): after the commit the work tree
is clean and the memory file in HEAD has the new anchor. ``--no-verify`` leaves it to the post-commit fallback.
``gitmem log`` names the move; what agents read names the old symbol (``was `get_netrc_auth```).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmem import problems
from testing.repos import commit, git, make_repo

AUTH = '''def get_netrc_auth(url, raise_errors=False):
    """The (user, password) for ``url`` from ~/.netrc, or None."""
    host = url.split("/")[2].split(":")[0]
    for line in open(".netrc"):
        if line.startswith("machine " + host):
            return tuple(line.split()[3::2])
    if raise_errors:
        raise KeyError(host)
    return None


def other(x):
    return x + 1
'''

UTILS = '''def unrelated(a, b):
    return a * b
'''

OLD = "src/auth.py::get_netrc_auth"


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


def _setup(tmp_path: Path, run_cli) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"src/auth.py": AUTH, "src/utils.py": UTILS, "README.md": "x\n"})
    assert run_cli(repo, "init")[0] == 0  # with the git hooks
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "get_netrc_auth never raises unless raise_errors is set",
                             "--anchor", OLD, "--json")
    assert code == 0, err
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    return repo, json.loads(out)["id"]


def _change(repo: Path, kind: str) -> tuple[str, list[str]]:
    """Make the change; returns (the new anchor key, the paths a `git commit PATH` names)."""
    if kind == "rename":
        (repo / "src/auth.py").write_text(AUTH.replace("get_netrc_auth", "get_auth_from_netrc"))
        return "src/auth.py::get_auth_from_netrc", ["src/auth.py"]
    if kind == "file":
        git(repo, "mv", "src/auth.py", "src/netrc.py")
        return "src/netrc.py::get_netrc_auth", ["src/auth.py", "src/netrc.py"]
    assert kind == "function"  # to another (tracked) file
    func, rest = AUTH.split("\n\n\n", 1)
    (repo / "src/auth.py").write_text(rest)
    (repo / "src/utils.py").write_text(UTILS + "\n\n" + func + "\n")
    return "src/utils.py::get_netrc_auth", ["src/auth.py", "src/utils.py"]


def _commit(repo: Path, how: str, paths: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    if how == "am":
        return _run(repo, "commit", "-qam", "move it", *extra)
    if how == "path":
        return _run(repo, "commit", "-qm", "move it", *extra, "--", *paths)
    git(repo, "add", "-A")
    return _run(repo, "commit", "-qm", "move it", *extra)


def _anchors_in(repo: Path, mid: str, rev: str = "HEAD") -> list[dict[str, object]]:
    import yaml

    text = git(repo, "show", f"{rev}:.gitmem/memories/{mid}.md")
    front = yaml.safe_load(text.split("---\n")[1])
    return list(front["anchors"])


@pytest.mark.parametrize("kind", ["rename", "file", "function"])
@pytest.mark.parametrize("how", ["am", "path", "add"])
def test_the_commit_that_moves_the_code_carries_the_re_anchored_memory(tmp_path: Path, run_cli, how: str,
                                                                        kind: str) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    parent = git(repo, "rev-parse", "HEAD").strip()
    new, paths = _change(repo, kind)
    proc = _commit(repo, how, paths)
    assert proc.returncode == 0, proc.stderr
    assert f"gitmem: 1 memory followed its moved code in this commit: {mid[:12]} {OLD} → {new}" in proc.stderr
    assert git(repo, "status", "--porcelain") == ""  # nothing of gitmem's left modified
    assert f".gitmem/memories/{mid}.md" in git(repo, "show", "--name-only", "--format=", "HEAD").split()
    (a,) = _anchors_in(repo, mid)
    assert a["anchor"] == new and a["was"] == OLD
    assert a["commit"] == parent  # recorded against HEAD of the commit being made, with the code as staged
    assert "moved" not in proc.stderr.replace("moved code", "")  # post-commit found nothing left to report
    shown = json.loads(run_cli(repo, "show", mid, "--json")[1])
    assert shown["status"] == "fresh" and [x["anchor"] for x in shown["anchors"]] == [new]


def test_without_pre_commit_the_post_commit_hook_still_follows(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    new, _ = _change(repo, "rename")
    proc = _run(repo, "commit", "-qam", "rename", "--no-verify")  # git still runs post-commit
    assert proc.returncode == 0, proc.stderr
    assert "1 memory followed its moved code (re-anchored; commit .gitmem/ to share)" in proc.stderr
    assert git(repo, "status", "--porcelain").split() == ["M", f".gitmem/memories/{mid}.md"]
    assert _anchors_in(repo, mid)[0]["anchor"] == OLD  # not in that commit ...
    git(repo, "commit", "-qam", "memory followed")
    (a,) = _anchors_in(repo, mid)  # ... in the next one
    assert a["anchor"] == new and a["was"] == OLD and a["commit"] == git(repo, "rev-parse", "HEAD~1").strip()


def test_unstaged_edits_to_the_memory_file_are_never_committed(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    mfile = repo / ".gitmem" / "memories" / f"{mid}.md"
    edited = mfile.read_text().replace("never raises", "never ever raises")
    mfile.write_text(edited)
    _change(repo, "rename")
    git(repo, "add", "src/auth.py")
    proc = _run(repo, "commit", "-qm", "rename")
    assert proc.returncode == 0, proc.stderr
    assert "followed its moved code in this commit" not in proc.stderr
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["src/auth.py"]
    assert mfile.read_text() == edited  # the user's edit, untouched (post-commit skips a modified file too)
    assert "moved with its code" in proc.stderr  # left for review, and said so


def test_a_failed_follow_leaves_the_commit_whole_and_doctor_reports_it(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    _change(repo, "rename")
    git(repo, "add", "-A")
    before = (repo / ".gitmem" / "memories" / f"{mid}.md").read_bytes()
    # another git process holds the index's lock: staging the memory file fails
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    hook = subprocess.run([str(repo / ".git" / "hooks" / "pre-commit")], cwd=repo, capture_output=True, text=True)
    lock.unlink()
    assert hook.returncode == 0  # never blocks the commit
    (line,) = [ln for ln in hook.stderr.splitlines() if ln.startswith("gitmem:")]
    assert line.startswith("gitmem: could not re-anchor memories to moved code in this commit (GitError:")
    assert (repo / ".gitmem" / "memories" / f"{mid}.md").read_bytes() == before  # nothing half-done
    assert git(repo, "diff", "--cached", "--name-only").split() == ["src/auth.py"]
    assert [p.job for p in problems.current(repo)] == [problems.FOLLOW_MOVES]
    code, out, _ = run_cli(repo, "doctor", "--json")
    assert code != 0 and any(c["name"] == "hook-follow-moves" and c["level"] == "error"
                             for c in json.loads(out)["checks"])
    proc = _run(repo, "commit", "-qm", "rename")  # the next commit does it, and clears the record
    assert proc.returncode == 0 and "followed its moved code in this commit" in proc.stderr
    assert git(repo, "status", "--porcelain") == "" and problems.current(repo) == []


def test_log_shows_moves_and_agents_read_the_old_name(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    _change(repo, "rename")
    assert _run(repo, "commit", "-qam", "rename").returncode == 0
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    assert _run(repo, "commit", "-qam", "move the file").returncode == 0
    assert git(repo, "status", "--porcelain") == ""
    rows = json.loads(run_cli(repo, "log", mid, "--json")[1])
    what = [(r["kind"], r["subject"], r["what"]) for r in rows]
    assert ("code", "move the file",
            "src/netrc.py::get_auth_from_netrc: moved from src/auth.py::get_auth_from_netrc") in what
    assert ("code", "rename", "src/auth.py::get_auth_from_netrc: moved from src/auth.py::get_netrc_auth") in what
    assert ("memory", "rename", "memory re-anchored: src/auth.py::get_netrc_auth → "
                                "src/auth.py::get_auth_from_netrc") in what
    assert not any("symbol added" in w or "symbol gone" in w for _, _, w in what)
    # the CLI's context (ranked memories) and the agents' hooks (catalog rows): one renderer, the old name
    code, out, _ = run_cli(repo, "context", "--file", "src/netrc.py")
    assert code == 0 and "src/netrc.py::get_auth_from_netrc (was `get_netrc_auth`)" in out
    from gitmem.catalog import db
    from gitmem.rank import render

    con = db.connect(repo)
    assert con is not None
    (row,) = db.rows(con, [mid])
    text = render.pack([render.item_from_row(row)], 1000, style=render.HOOK).text
    assert "anchors: src/netrc.py::get_auth_from_netrc (was `get_netrc_auth`)" in text
    line = render.render_index_line(render.item_from_row(row), now=0)
    assert "] src/netrc.py::get_auth_from_netrc (was `get_netrc_auth`) ·" in line
    assert "src/netrc.py::get_auth_from_netrc (was `get_netrc_auth`)" in run_cli(repo, "show", mid)[1]


def test_anchors_recorded_before_their_code_was_committed_still_resolve_fully(tmp_path: Path, run_cli) -> None:
    """Pre-commit records against HEAD with the staged code: later changes still read as signature changes and
    later renames as renames (the resolver finds the recorded code in the commit that committed it)."""
    repo, mid = _setup(tmp_path, run_cli)
    _change(repo, "rename")
    assert _run(repo, "commit", "-qam", "rename").returncode == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n[review]\nfollow_moves = false\n')
    git(repo, "commit", "-qam", "follow off")
    src = repo / "src/auth.py"
    src.write_text(src.read_text().replace("raise_errors=False", "raise_errors=True"))
    git(repo, "commit", "-qam", "signature")
    (st,) = json.loads(run_cli(repo, "stale", "--json")[1])
    assert st["anchors"][0]["changes"] == ["signature"]
    src.write_text(src.read_text().replace("raise_errors=True", "raise_errors=False")
                   .replace("get_auth_from_netrc", "netrc_auth"))
    git(repo, "commit", "-qam", "back, and renamed again")
    (st,) = json.loads(run_cli(repo, "stale", "--json")[1])
    assert st["status"] == "moved" and st["anchors"][0]["symbol_now"] == "netrc_auth"
    code, out, err = run_cli(repo, "reanchor", mid, "--json")
    assert code == 0, err
    shown = json.loads(run_cli(repo, "show", mid, "--json")[1])
    # the first name is kept across moves: the one the memory was written about
    assert shown["anchors"][0]["anchor"] == "src/auth.py::netrc_auth" and shown["anchors"][0]["was"] == OLD


def test_pre_commit_asks_the_catalog_first_whether_anchored_files_are_staged(tmp_path: Path, run_cli) -> None:
    repo, _ = _setup(tmp_path, run_cli)
    (repo / "README.md").write_text("y\n")
    proc = _run(repo, "commit", "-qam", "docs")
    assert proc.returncode == 0 and proc.stderr == ""
    assert git(repo, "status", "--porcelain") == ""
    import time

    from gitmem.catalog.files import RACY_NS
    from gitmem.hook_entry import _staged_touches_anchors

    # the catalog trusts its rows once the memory folders are older than RACY_NS (a write within that
    # window could hide behind an unchanged folder time): let them age, then let a command refresh it
    time.sleep(RACY_NS / 1e9 + 0.2)
    assert run_cli(repo, "list")[0] == 0
    (repo / "README.md").write_text("z\n")
    git(repo, "add", "README.md")
    assert _staged_touches_anchors(repo, None) is False
    (repo / "src/auth.py").write_text(AUTH + "\n# note\n")
    git(repo, "add", "src/auth.py")
    assert _staged_touches_anchors(repo, None) is True
