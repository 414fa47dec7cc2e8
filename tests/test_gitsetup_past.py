"""Questions about the past (issue 24): ``gitmem stale --rev R`` for R older than an anchor, shallow clones, and a
rename staged only in the work tree, with real git repositories and the real hooks ``gitmem init`` installs.

* R older than the commit a memory was (re-)anchored at: the anchor is followed back through its moves and
  renames (the pre-commit hook's follow, git's rename detection, ``was:``) and judged where its code was then:
  fresh at the old path, stale with the commit after R that changed it, ``unwritten`` before it existed.
* A shallow clone: a change made in the missing history is never blamed on the boundary commit; the reason says
  the history is not there and how to deepen it.
* A rename staged with ``git mv`` and not committed: "(uncommitted)", never "in <commit>".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from testing.repos import commit, git, make_repo
from tests.test_follow_moves import AUTH  # the same module moved and renamed

GO = '''package retry

func Backoff(attempt int, base int) int {
	delay := base
	for i := 0; i < attempt; i++ {
		delay = delay * 2
	}
	if delay > 30000 {
		delay = 30000
	}
	return delay
}
'''


def _sha(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).strip()


def _setup(tmp_path: Path, run_cli, files: dict[str, str | bytes], anchor: str, *, name: str = "r") -> tuple[Path, str]:
    """A repository with gitmem's hooks: ``files`` committed first (after a commit that has none of them), then a
    memory on ``anchor`` committed. Returns (repo, memory id)."""
    repo = make_repo(tmp_path / name, {"README.md": "readme\n"})
    commit(repo, "write the code", files)
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "the memory's text about this code", "--anchor", anchor, "--json")
    assert code == 0, err
    commit(repo, "memory")
    return repo, json.loads(out)["id"]


def _at(run_json, repo: Path, rev: str, mid: str) -> dict:
    """The anchor status of memory ``mid`` at ``rev`` (``gitmem stale --rev REV --all --json``)."""
    rows = run_json(repo, "stale", "--rev", rev, "--all")
    (row,) = [r for r in rows if r["id"] == mid]
    (a,) = row["anchors"]
    return a


def _move_commit(repo: Path, message: str) -> str:
    """Commit everything through the real hooks (the pre-commit hook follows moves); the tree left clean."""
    git(repo, "add", "-A")
    proc = subprocess.run(["git", "commit", "-qm", message], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "status", "--porcelain") == ""
    return _sha(repo)


def _anchor_key(repo: Path, mid: str) -> str:
    text = (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    return next(line.split("anchor: ", 1)[1] for line in text.splitlines() if line.startswith("- anchor: "))


def test_rev_before_a_followed_move_is_fresh_at_the_old_path(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py::get_netrc_auth")
    written, memory = _sha(repo, "HEAD~1"), _sha(repo)
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    moved = _move_commit(repo, "move auth to netrc")
    assert _anchor_key(repo, mid) == "src/netrc.py::get_netrc_auth"  # followed in the commit that moved it
    for rev in (written, memory):  # the memory's own commit too: the anchor is recorded against it
        a = _at(run_json, repo, rev, mid)
        assert a["status"] == "fresh", a
        assert (a["path_now"], a["symbol_now"]) == ("src/auth.py", "get_netrc_auth")
        assert a["reason"] == (f"the same code, as src/auth.py::get_netrc_auth at {rev[:12]} "
                               f"(moved to src/netrc.py::get_netrc_auth in {moved[:12]})")
        assert "deleted" not in a["reason"]
    a = _at(run_json, repo, moved, mid)
    assert a["status"] == "fresh" and a["path_now"] == "src/netrc.py"
    code, out, _ = run_cli(repo, "stale", "--rev", written, "--all")
    assert code == 0 and "fresh    src/netrc.py::get_netrc_auth → src/auth.py::get_netrc_auth" in out


def test_rev_before_the_code_existed_is_not_yet_written(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py::get_netrc_auth")
    before, written = _sha(repo, "HEAD~2"), _sha(repo, "HEAD~1")
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    _move_commit(repo, "move")
    a = _at(run_json, repo, before, mid)
    assert a["status"] == "unwritten", a
    assert a["commit"] == written and a["path_now"] is None
    assert a["reason"] == (f"not yet written at {before[:12]}: written in {written[:12]} "
                           "(as src/auth.py::get_netrc_auth)")
    # a function added to a file that already existed: not yet written either, the file was there
    commit(repo, "add a function", {"src/netrc.py": AUTH + "\n\ndef late(a, b):\n    c = a * b\n"
                                                           "    return c - a + b\n"})
    added = _sha(repo)
    code, out, err = run_cli(repo, "remember", "late multiplies", "--anchor", "src/netrc.py::late", "--json")
    assert code == 0, err
    late = json.loads(out)["id"]
    commit(repo, "memory on late")
    a = _at(run_json, repo, _sha(repo, f"{added}~1"), late)
    assert a["status"] == "unwritten" and a["commit"] == added
    code, out, _ = run_cli(repo, "stale", "--rev", before)
    assert code == 0 and f"unwritten {mid}" in out and "not yet written at" in out


def test_a_change_after_rev_names_that_commit_and_says_after(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "x\n"})
    commit(repo, "write", {"src/auth.py": AUTH})
    old = _sha(repo)
    commit(repo, "unrelated", {"README.md": "y\n"})
    commit(repo, "raise sooner", {"src/auth.py": AUTH.replace("    if raise_errors:\n        raise KeyError(host)\n",
                                                              "    if raise_errors or not host:\n"
                                                              "        raise KeyError(host)\n")})
    changed = _sha(repo)
    commit(repo, "unrelated 2", {"README.md": "z\n"})
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "raises only with raise_errors or no host",
                             "--anchor", "src/auth.py::get_netrc_auth", "--anchor", "src/auth.py", "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    commit(repo, "memory")
    rows = run_json(repo, "stale", "--rev", old, "--all")
    (row,) = [r for r in rows if r["id"] == mid]
    sym, whole = row["anchors"]
    assert sym["status"] == "stale" and sym["commit"] == changed, sym
    assert sym["reason"] == f"body changed after {old[:12]}, last in {changed[:12]}"
    assert whole["status"] == "stale" and whole["commit"] == changed
    assert whole["reason"] == f"file content changed after {old[:12]}, last in {changed[:12]}"
    # at the change itself and later: fresh; the other function was never part of it
    rows = run_json(repo, "stale", "--rev", changed, "--all")
    assert [r["anchors"] for r in rows if r["id"] == mid][0][0]["status"] == "fresh"
    assert [r["status"] for r in rows if r["id"] == mid] == ["fresh"]


def test_several_moves_and_a_symbol_rename_followed_back(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py::get_netrc_auth")
    written = _sha(repo, "HEAD~1")
    (repo / "src/auth.py").write_text(AUTH.replace("get_netrc_auth", "netrc_auth"))
    renamed = _move_commit(repo, "rename the function")
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    file_moved = _move_commit(repo, "rename the file")
    func, rest = AUTH.replace("get_netrc_auth", "netrc_auth").split("\n\n\n", 1)
    (repo / "src/netrc.py").write_text(rest)
    (repo / "lib").mkdir()
    (repo / "lib/credentials.py").write_text("import os\n\n\n" + func + "\n")
    to_other = _move_commit(repo, "move it to another file")
    assert _anchor_key(repo, mid) == "lib/credentials.py::netrc_auth"
    text = (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    assert "was: src/auth.py::get_netrc_auth" in text
    expect = {written: ("src/auth.py", "get_netrc_auth"), renamed: ("src/auth.py", "netrc_auth"),
              file_moved: ("src/netrc.py", "netrc_auth"), to_other: ("lib/credentials.py", "netrc_auth")}
    for rev, place in expect.items():
        a = _at(run_json, repo, rev, mid)
        assert a["status"] == "fresh", (rev, a)
        assert (a["path_now"], a["symbol_now"]) == place
    a = _at(run_json, repo, written, mid)
    assert a["reason"] == (f"the same code, as src/auth.py::get_netrc_auth at {written[:12]} "
                           f"(renamed to src/auth.py::netrc_auth in {renamed[:12]}; "
                           f"moved to src/netrc.py::netrc_auth in {file_moved[:12]}; "
                           f"moved to lib/credentials.py::netrc_auth in {to_other[:12]})")
    a = _at(run_json, repo, _sha(repo, f"{written}~1"), mid)
    assert a["status"] == "unwritten" and a["commit"] == written


def test_a_change_before_a_rename_is_body_not_signature(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "x\n"})
    commit(repo, "write", {"retry/backoff.go": GO})
    old = _sha(repo)
    commit(repo, "cap lower", {"retry/backoff.go": GO.replace("30000", "20000")})
    capped = _sha(repo)
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "backoff is capped at 20 s", "--anchor", "retry/backoff.go::Backoff",
                             "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    commit(repo, "memory")
    (repo / "retry/backoff.go").write_text(GO.replace("30000", "20000").replace("Backoff", "Delay"))
    renamed = _move_commit(repo, "rename Backoff to Delay")
    assert _anchor_key(repo, mid) == "retry/backoff.go::Delay"
    a = _at(run_json, repo, old, mid)
    assert a["status"] == "stale" and a["commit"] == capped, a
    assert a["changes"][0] == "body" and "signature" not in a["changes"]
    assert a["reason"] == (f"body changed after {old[:12]}, last in {capped[:12]}; as retry/backoff.go::Backoff at "
                           f"{old[:12]} (renamed to retry/backoff.go::Delay in {renamed[:12]})")
    a = _at(run_json, repo, capped, mid)
    assert a["status"] == "fresh" and a["symbol_now"] == "Backoff"


def test_file_anchor_followed_back_through_git_renames(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"docs/setup.md": "# Setup\n\nRun make.\n"}, "docs/setup.md")
    before, written = _sha(repo, "HEAD~2"), _sha(repo, "HEAD~1")
    git(repo, "mv", "docs/setup.md", "docs/install.md")
    moved = _move_commit(repo, "rename the page")
    assert _anchor_key(repo, mid) == "docs/install.md"
    a = _at(run_json, repo, written, mid)
    assert a["status"] == "fresh" and a["path_now"] == "docs/setup.md"
    assert f"moved to docs/install.md in {moved[:12]}" in a["reason"]
    a = _at(run_json, repo, before, mid)
    assert a["status"] == "unwritten" and a["commit"] == written


def test_rev_older_than_anchor_on_a_file_anchor_made_later(tmp_path: Path, run_cli, run_json) -> None:
    """A memory written at HEAD about a file whose text changed since R: stale, the change after R named."""
    repo = make_repo(tmp_path / "r", {"a.txt": "one\n"})
    old = _sha(repo)
    commit(repo, "two", {"a.txt": "two\n"})
    two = _sha(repo)
    commit(repo, "unrelated", {"b.txt": "b\n"})
    assert run_cli(repo, "init")[0] == 0
    code, out, err = run_cli(repo, "remember", "a.txt says two", "--anchor", "a.txt", "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    a = _at(run_json, repo, old, mid)  # the memory not even committed: its anchor's commit is HEAD
    assert a["status"] == "stale" and a["commit"] == two
    assert a["reason"] == f"file content changed after {old[:12]}, last in {two[:12]}"


def _shallow_setup(tmp_path: Path, run_cli) -> tuple[Path, Path, dict[str, str]]:
    """origin: the memory on ``f`` and ``h`` and the file, then (``changed``) f's body changed and h deleted,
    then two more commits; ``clone``: ``git clone --depth 2`` of it (boundary: the first of those two)."""
    origin = make_repo(tmp_path / "origin", {"a.py": "def f(x):\n    y = x * 2\n    return y + 1\n\n\n"
                                                     "def h(a, b):\n    c = a - b\n    return c * c + a\n"})
    assert run_cli(origin, "init")[0] == 0
    (origin / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    ids = {}
    for name, anchor in (("f", "a.py::f"), ("h", "a.py::h"), ("file", "a.py")):
        code, out, err = run_cli(origin, "remember", f"about {name}", "--anchor", anchor, "--json")
        assert code == 0, err
        ids[name] = json.loads(out)["id"]
    commit(origin, "memories")
    commit(origin, "change f, drop h", {"a.py": "def f(x):\n    y = x * 3\n    return y + 1\n"}, no_verify=True)
    commit(origin, "u1", {"u.txt": "1\n"})
    commit(origin, "u2", {"u.txt": "2\n"})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(clone)], check=True)
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    return origin, clone, ids


def test_shallow_clone_never_blames_the_boundary(tmp_path: Path, run_cli, run_json) -> None:
    origin, clone, ids = _shallow_setup(tmp_path, run_cli)
    boundary = (clone / ".git" / "shallow").read_text().split()[0]
    assert boundary == _sha(clone, "HEAD~1")
    for rev in (None, "HEAD"):
        rows = run_json(clone, "stale", "--all", *(("--rev", rev) if rev else ()))
        got = {r["id"]: r["anchors"][0] for r in rows}
        for name, status in (("f", "stale"), ("h", "deleted"), ("file", "stale")):
            a = got[ids[name]]
            assert a["status"] == status, a
            assert a["commit"] is None, a  # the change is in the missing history: no commit of this clone made it
            assert boundary[:12] in a["reason"] and "(shallow clone)" in a["reason"], a
            assert "git fetch --deepen=N" in a["reason"] and "git fetch --unshallow" in a["reason"]
            assert f"in {boundary[:12]}" not in a["reason"]
    # gitmem log: the boundary is where this clone's history starts, not where the memory was written
    rows = run_json(clone, "log", ids["f"])
    assert rows and all(r["what"] != "memory written" for r in rows if r["commit"] == boundary)
    assert any("history not available before" in r["what"] for r in rows)
    # deepened: the real commit is named
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=clone, check=True)
    changed = _sha(origin, "HEAD~2")
    rows = run_json(clone, "stale", "--all", "--rev", "HEAD")
    got = {r["id"]: r["anchors"][0] for r in rows}
    assert got[ids["f"]]["commit"] == changed and got[ids["h"]]["commit"] == changed


def test_shallow_clone_change_after_the_boundary_is_still_named(tmp_path: Path, run_cli, run_json) -> None:
    _origin, clone, ids = _shallow_setup(tmp_path, run_cli)
    commit(clone, "change f again", {"a.py": "def f(x):\n    y = x * 4\n    return y + 1\n"}, no_verify=True)
    mine = _sha(clone)
    rows = run_json(clone, "stale", "--all", "--rev", "HEAD")
    a = {r["id"]: r["anchors"][0] for r in rows}[ids["f"]]
    # the anchor's commit is not in the clone, so the last change before the boundary is unknown; the newest
    # change of this clone is not claimed to be the one that made the anchor stale either
    assert a["status"] == "stale" and a["commit"] in (None, mine)
    assert "history not available" in a["reason"] or "not in this clone" in a["reason"]


def test_a_rename_staged_only_is_uncommitted(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py::get_netrc_auth")
    code, out, err = run_cli(repo, "remember", "the auth module", "--anchor", "src/auth.py", "--json")
    assert code == 0, err
    whole = json.loads(out)["id"]
    commit(repo, "memory 2")
    # src/netrc.py existed once after the anchors: its commits did not rename anything
    commit(repo, "a netrc module", {"src/netrc.py": "X = 1\n"})
    git(repo, "rm", "-q", "src/netrc.py")
    commit(repo, "no netrc module")
    git(repo, "mv", "src/auth.py", "src/netrc.py")  # staged, not committed
    rows = run_json(repo, "stale", "--all")
    got = {r["id"]: r["anchors"][0] for r in rows}
    for m in (mid, whole):
        a = got[m]
        assert a["status"] == "moved" and a["path_now"] == "src/netrc.py", a
        assert a["commit"] is None and a["reason"].endswith("(uncommitted)"), a
    # unstaged too (a plain mv of the file, then git add of the new one only)
    git(repo, "reset", "-q", "--hard")
    (repo / "src/auth.py").rename(repo / "src/auth2.py")
    git(repo, "add", "src/auth2.py")  # the deletion of src/auth.py not staged
    got = {r["id"]: r["anchors"][0] for r in run_json(repo, "stale", "--all")}
    assert got[whole]["status"] == "moved" and got[whole]["reason"] == "file renamed to src/auth2.py (uncommitted)"


def test_a_committed_rename_names_its_commit(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py")
    config = repo / ".gitmem" / "config.toml"
    config.write_text(config.read_text() + "[review]\nfollow_moves = false\n")  # the memory keeps src/auth.py
    commit(repo, "a netrc module", {"src/netrc.py": "X = 1\n"})
    git(repo, "rm", "-q", "src/netrc.py")
    commit(repo, "no netrc module")
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    renamed = commit(repo, "rename")
    a = _at(run_json, repo, "HEAD", mid)
    assert a["status"] == "moved" and a["commit"] == renamed
    assert a["reason"] == f"file renamed to src/netrc.py in {renamed[:12]}"


def test_a_release_branch_that_parted_before_the_anchor(tmp_path: Path, run_cli, run_json) -> None:
    """R on another line of history: judged where the lines part, then what R's own line did to the code."""
    repo = make_repo(tmp_path / "r", {"README.md": "x\n"})
    commit(repo, "write", {"src/auth.py": AUTH})
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    commit(repo, "gitmem")
    fork = _sha(repo)
    for b in ("same", "fixed", "later"):
        git(repo, "branch", b)
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    moved = _move_commit(repo, "move on main")
    code, out, err = run_cli(repo, "remember", "about get_netrc_auth", "--anchor", "src/netrc.py::get_netrc_auth",
                             "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    commit(repo, "memory")
    git(repo, "checkout", "-q", "fixed")
    commit(repo, "fix on the release line", {"src/auth.py": AUTH.replace("return None\n\n\ndef", "return ()\n\n\ndef")},
           no_verify=True)
    fixed = _sha(repo)
    git(repo, "checkout", "-q", "later")
    commit(repo, "other work on the release line", {"README.md": "release\n"}, no_verify=True)
    git(repo, "checkout", "-q", "main")
    a = _at(run_json, repo, "same", mid)  # the fork itself: an ancestor
    assert a["status"] == "fresh" and a["path_now"] == "src/auth.py"
    a = _at(run_json, repo, "later", mid)
    assert a["status"] == "fresh" and a["path_now"] == "src/auth.py", a
    assert f"moved to src/netrc.py::get_netrc_auth in {moved[:12]}" in a["reason"]
    a = _at(run_json, repo, "fixed", mid)
    assert a["status"] == "stale" and a["commit"] == fixed and a["path_now"] == "src/auth.py", a
    # (the forward walk names it: a commit of the anchor's commit..R changed it, so R's line needs no more git)
    assert a["reason"].startswith("body changed") and a["reason"].endswith(f"in {fixed[:12]}"), a
    assert fork  # (the lines part at the gitmem commit)


def test_the_work_tree_on_an_old_checkout(tmp_path: Path, run_cli, run_json) -> None:
    """A local memory (not in git: it stays when HEAD goes back) on moved code, the work tree at an older commit."""
    repo, _mid = _setup(tmp_path, run_cli, {"src/auth.py": AUTH}, "src/auth.py::other")
    before, written = _sha(repo, "HEAD~2"), _sha(repo, "HEAD~1")
    git(repo, "mv", "src/auth.py", "src/netrc.py")
    moved = _move_commit(repo, "move")
    code, out, err = run_cli(repo, "remember", "--local", "a local note", "--anchor", "src/netrc.py::get_netrc_auth",
                             "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    git(repo, "checkout", "-q", written)
    got = {r["id"]: r["anchors"][0] for r in run_json(repo, "stale", "--all")}
    a = got[mid]
    assert a["status"] == "fresh" and a["path_now"] == "src/auth.py", a
    assert f"moved to src/netrc.py::get_netrc_auth in {moved[:12]}" in a["reason"]
    (repo / "src/auth.py").write_text(AUTH.replace("raise KeyError(host)", "raise ValueError(host)"))
    a = {r["id"]: r["anchors"][0] for r in run_json(repo, "stale", "--all")}[mid]
    assert a["status"] == "stale" and a["reason"] == "body changed (uncommitted)" and a["commit"] is None, a
    git(repo, "checkout", "-q", "src/auth.py")
    git(repo, "checkout", "-q", before)
    a = {r["id"]: r["anchors"][0] for r in run_json(repo, "stale", "--all")}[mid]
    assert a["status"] == "unwritten" and a["commit"] == written, a
    assert a["reason"].startswith(f"not yet written at HEAD {before[:12]}: written in {written[:12]}")
