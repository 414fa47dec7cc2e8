"""``gitmem check --base``: a branch that rewrites anchored code without touching the memory fails; fixes pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.repos import commit, git, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _repo(tmp_path: Path, run_cli) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "README.md": "x\n"})
    run_cli(repo, "init", "--no-hooks")
    code, out, _ = run_cli(repo, "remember", "parse splits on commas only", "--anchor", "csvish.py::parse", "--json")
    commit(repo, "memory")
    git(repo, "checkout", "-q", "-b", "feature")
    return repo, json.loads(out)["id"]


def test_rewrite_without_the_memory_fails_then_reanchor_passes(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    commit(repo, "unrelated", {"README.md": "y\n"})
    code, out, _ = run_cli(repo, "check", "--base", "main")
    assert code == 0 and "ok" in out
    sha = commit(repo, "parse strips",
                 {"csvish.py": CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")})
    code, out, _ = run_cli(repo, "check", "--base", "main")
    assert code == 1
    line, summary = out.strip().splitlines()
    assert summary.startswith("gitmem check: 1 problem(s)") and "base main" in summary
    assert line.startswith(f"stale: {mid}") and "csvish.py::parse" in line and sha[:12] in line
    assert run_cli(repo, "reanchor", mid)[0] == 0
    commit(repo, "memory re-anchored")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def test_memory_made_stale_before_the_branch_is_not_its_problem(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    git(repo, "checkout", "-q", "main")
    commit(repo, "parse strips on main", {"csvish.py": CODE.replace("split(',')", "split(', ')")})
    git(repo, "checkout", "-q", "-b", "later")
    commit(repo, "docs", {"README.md": "z\n"})
    assert run_cli(repo, "check", "--base", "main")[0] == 0


def test_invalid_file_and_secret_fail(tmp_path: Path, run_cli) -> None:
    repo, mid = _repo(tmp_path, run_cli)
    path = repo / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(path.read_text() + "\nThe staging key is AKIAIOSFODNN7EXAMPLE.\n")
    (repo / ".gitmem" / "memories" / "01BADBADBADBADBADBADBADBAD.md").write_text("---\nid: [\n---\n")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    kinds = sorted(p["kind"] for p in json.loads(out)["problems"])
    assert code == 1 and kinds == ["invalid", "secret"]
    assert "aws-access-key" in next(p["message"] for p in json.loads(out)["problems"] if p["kind"] == "secret")


def test_invariant_sites_must_change_together(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "docs.py": "def separator():\n    return ','\n"})
    assert run_cli(repo, "init")[0] == 0  # git hooks: post-commit warns
    code, out, err = run_cli(repo, "remember", "The separator is defined in three places", "--invariant",
                             "--anchor", "csvish.py::parse", "--anchor", "docs.py::separator", "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    assert "invariant: true" in (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    git(repo, "checkout", "-q", "-b", "semi")
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    proc = __import__("subprocess").run(["git", "commit", "-qam", "semicolons in parse"], cwd=repo,
                                        capture_output=True, text=True)
    assert proc.returncode == 0
    assert f"gitmem: invariant broken: {mid}" in proc.stderr and "but not docs.py::separator" in proc.stderr
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    kinds = [p["kind"] for p in json.loads(out)["problems"]]
    assert code == 1 and "invariant" in kinds
    (repo / "docs.py").write_text("def separator():\n    return ';'\n")
    git(repo, "commit", "-qam", "semicolons in docs too")
    run_cli(repo, "reanchor", mid)
    git(repo, "commit", "-qam", "memory re-anchored")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    assert code == 0, out
    code, _, err = run_cli(repo, "remember", "one site only", "--invariant", "--anchor", "docs.py")
    assert code == 1 and "at least two anchors" in err


def test_a_superseded_invariant_stays_an_invariant(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "docs.py": "def separator():\n    return ','\n"})
    run_cli(repo, "init", "--no-hooks")
    code, out, _ = run_cli(repo, "remember", "separator in two places", "--invariant", "--anchor",
                           "csvish.py::parse", "--anchor", "docs.py::separator", "--json")
    code, out, err = run_cli(repo, "supersede", json.loads(out)["id"], "the separator lives in two places", "--json")
    assert code == 0, err
    assert json.loads(run_cli(repo, "show", json.loads(out)["id"], "--json")[1])["invariant"] is True


def test_changes_on_the_base_after_the_branch_point_are_not_the_branchs(tmp_path: Path, run_cli) -> None:
    """The change is merge-base..HEAD: a rewrite on main after the branch started is not in it."""
    repo, mid = _repo(tmp_path, run_cli)
    commit(repo, "docs on the branch", {"README.md": "y\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "parse strips on main", {"csvish.py": CODE.replace("split(',')", "split(', ')")})
    git(repo, "checkout", "-q", "feature")
    code, out, err = run_cli(repo, "check", "--base", "main", "--json")
    got = json.loads(out)
    assert code == 0 and got["ok"] is True, (out, err)
    assert got["base_ref"] == "main" and got["base"] != got["tip"]


def _published(tmp_path: Path, run_cli) -> tuple[Path, str]:
    """A repository with a memory on main and a feature branch 3 commits ahead, as a remote would have it."""
    origin, mid = _repo(tmp_path, run_cli)
    for i in range(3):
        commit(origin, f"feature {i}", {"README.md": f"v{i}\n"})
    commit(origin, "parse strips",
           {"csvish.py": CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")})
    git(origin, "checkout", "-q", "main")  # the remote's HEAD is its default branch
    return origin, mid


def test_a_shallow_ci_clone_fails_with_the_fix_not_ok(tmp_path: Path, run_cli) -> None:
    """The default CI checkout (depth 1, the PR branch only): no base or no merge base → exit 1 with the fix."""
    origin, _ = _published(tmp_path, run_cli)
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(clone))
    code, out, err = run_cli(clone, "check")  # only origin/feature here: no default branch
    assert code != 0 and "ok" not in out, (out, err)
    assert "no base to compare with" in err and "--base" in err
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    code, out, err = run_cli(clone, "check", "--base", "origin/main")
    assert code != 0 and "ok" not in out, (out, err)
    assert "origin/main" in err and "shallow clone" in err and "git fetch --unshallow" in err
    assert "fetch-depth: 0" in err
    code, out, err = run_cli(clone, "check", "--base", "origin/nope")
    assert code != 0 and "origin/nope" in err and "git fetch origin nope" in err


def test_a_deepened_clone_checks_the_change(tmp_path: Path, run_cli) -> None:
    origin, mid = _published(tmp_path, run_cli)
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(clone))
    git(clone, "fetch", "-q", "--unshallow", "origin", "+refs/heads/*:refs/remotes/origin/*")
    code, out, err = run_cli(clone, "check", "--base", "origin/main")
    assert code == 1 and f"stale: {mid}" in out and "base origin/main" in out, (out, err)


def test_on_the_base_itself_there_is_no_change_and_it_says_so(tmp_path: Path, run_cli) -> None:
    repo, _ = _repo(tmp_path, run_cli)
    git(repo, "checkout", "-q", "main")
    code, out, err = run_cli(repo, "check")
    assert code == 0 and "HEAD is in main: no change to check" in out and "not fresh at HEAD" not in err


def test_on_the_base_memories_already_stale_are_named_not_passed_over(tmp_path: Path, run_cli) -> None:
    """A commit on main made a memory stale; `check` on main has no change to check, but its "ok" must not read
    as "the memories are fresh": the stale one is named, with `gitmem stale`."""
    repo, mid = _repo(tmp_path, run_cli)
    git(repo, "checkout", "-q", "main")
    commit(repo, "change parse on main", {"csvish.py": CODE.replace("split(',')", "split(';')")})
    code, out, err = run_cli(repo, "check")
    assert code == 0 and "no change to check" in out
    assert f"1 team memory is not fresh at HEAD ({mid})" in err and "gitmem stale" in err, err
    code, out, _ = run_cli(repo, "check", "--json")
    assert any(mid in w for w in json.loads(out)["warnings"])


@pytest.mark.parametrize("move", ["rename", "file"])
def test_a_followed_move_then_a_body_change_is_still_a_problem(tmp_path: Path, run_cli, move: str) -> None:
    """gitmem's pre-commit follows the moved code (writing the memory file in the change); a later commit that
    changes the code's body still leaves the memory stale: check must say so, not count the follow as a review."""
    code_py = ("def parse(text):\n    fields = [f.strip() for f in text.split(',')]\n"
               "    return [f for f in fields if f and not f.startswith('#')]\n\n\n" + CODE.split("\n\n\n")[1])
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": code_py, "README.md": "x\n"})
    assert run_cli(repo, "init")[0] == 0  # with the git hooks: pre-commit follows moves
    code, out, _ = run_cli(repo, "remember", "parse splits on commas only", "--anchor", "csvish.py::parse", "--json")
    mid = json.loads(out)["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    git(repo, "checkout", "-q", "-b", "feature")
    if move == "rename":
        (repo / "csvish.py").write_text(code_py.replace("def parse(", "def parse_line("))
        git(repo, "commit", "-qam", "rename parse")
        path, name = "csvish.py", "parse_line"
    else:
        git(repo, "mv", "csvish.py", "csv2.py")
        git(repo, "commit", "-qm", "move the module")
        path, name = "csv2.py", "parse"
    assert git(repo, "status", "--porcelain") == ""  # the follow went into the commit
    assert run_cli(repo, "check", "--base", "main")[0] == 0  # a pure move: the memory followed it
    (repo / path).write_text((repo / path).read_text().replace("text.split(',')", "text.split(';')"))
    git(repo, "commit", "-qam", f"{name} splits on semicolons")
    code, out, err = run_cli(repo, "check", "--base", "main")
    assert code == 1 and f"stale: {mid}" in out, (out, err)


def test_a_memory_made_in_the_change_and_broken_later_in_it_is_a_problem(tmp_path: Path, run_cli) -> None:
    """A memory (an invariant) written on the branch, then one of its sites changed by a later commit of the
    same branch: stale and invariant problems, not ok because the memory is new to the change."""
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "docs.py": "def separator():\n    return ','\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gitmem")
    git(repo, "checkout", "-q", "-b", "feature")
    code, out, _ = run_cli(repo, "remember", "The separator is defined in two places", "--invariant",
                           "--anchor", "csvish.py::parse", "--anchor", "docs.py::separator", "--json")
    mid = json.loads(out)["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    assert run_cli(repo, "check", "--base", "main")[0] == 0  # new, true: fine
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    git(repo, "commit", "-qam", "semicolons in parse only")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    kinds = sorted(p["kind"] for p in json.loads(out)["problems"] if p["subject"] == mid)
    assert code == 1 and kinds == ["invariant", "stale"], out


def test_a_token_pasted_into_a_retired_or_superseded_file_fails(tmp_path: Path, run_cli) -> None:
    """Every committed file of the memory folder is scanned: retired, superseded, unparsable, stray."""
    repo, mid = _repo(tmp_path, run_cli)
    code, out, err = run_cli(repo, "supersede", mid, "parse splits on commas and strips blanks", "--json")
    assert code == 0, err
    code, out, err = run_cli(repo, "remember", "render joins with commas", "--anchor", "csvish.py::render", "--json")
    retired = json.loads(out)["id"]
    assert run_cli(repo, "retire", retired, "--reason", "render is going away")[0] == 0
    commit(repo, "memories superseded and retired")
    assert run_cli(repo, "check", "--base", "main")[0] == 0
    folder = repo / ".gitmem" / "memories"
    old = folder / f"{mid}.md"  # superseded: retired, linked to its successor
    assert "superseded_by" in old.read_text() and "retired" in old.read_text()
    jwt_like = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJlX29mX3RoZV90b2tlbl8xMjM0"
    old.write_text(old.read_text() + f"\nci deploys with curl -u deploy:{jwt_like}\n")
    ret = folder / f"{retired}.md"
    ret.write_text(ret.read_text() + "\ngh token: ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n")
    commit(repo, "notes")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    found = {p["subject"]: p["message"] for p in json.loads(out)["problems"] if p["kind"] == "secret"}
    assert code == 1
    assert set(found) == {mid, retired}, found
    assert f".gitmem/memories/{retired}.md" in found[retired] and "github-token" in found[retired]
    assert jwt_like not in out  # the report never repeats the secret


def test_a_secret_in_a_stray_or_unparsable_file_of_the_folder_fails(tmp_path: Path, run_cli) -> None:
    repo, _ = _repo(tmp_path, run_cli)
    folder = repo / ".gitmem" / "memories"
    (folder / "notes.txt").write_text("export STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n")
    (folder / "old").mkdir()
    (folder / "old" / "01BADBADBADBADBADBADBADBAD.md").write_text("---\nid: [\n---\npassword: hunter2hunter2\n")
    commit(repo, "stray files")
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    found = {p["subject"]: p["message"] for p in json.loads(out)["problems"] if p["kind"] == "secret"}
    assert code == 1 and sorted(found) == [".gitmem/memories/notes.txt", "01BADBADBADBADBADBADBADBAD"]
    assert found["01BADBADBADBADBADBADBADBAD"].startswith(".gitmem/memories/old/01BADBADBADBADBADBADBADBAD.md holds")


def test_a_moved_anchor_is_labelled_moved_not_stale(tmp_path: Path, run_cli) -> None:
    """Without the hooks to follow it, a renamed function's memory is a problem labelled ``moved``, like ``stale``
    and ``show`` word it, with where the code is now."""
    code_py = ("def parse(text):\n    fields = [f.strip() for f in text.split(',')]\n"
               "    return [f for f in fields if f and not f.startswith('#')]\n")
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": code_py})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = json.loads(run_cli(repo, "remember", "parse splits on commas", "--anchor", "csvish.py::parse",
                             "--json")[1])["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, "rename parse", {"csvish.py": code_py.replace("def parse(", "def parse_line(")})
    code, out, err = run_cli(repo, "check", "--base", "main")
    assert code == 1, (out, err)
    assert f"moved: {mid}" in out and "csvish.py::parse moved (now csvish.py::parse_line)" in out, out
    assert "stale:" not in out
    code, out, _ = run_cli(repo, "check", "--base", "main", "--json")
    assert [p["kind"] for p in json.loads(out)["problems"]] == ["moved"]
