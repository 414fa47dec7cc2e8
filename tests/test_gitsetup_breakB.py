"""Breaking the issue 24 setups (issue 24, breaker B): cases the setup tests did not cover, each with real git.

* A deepened shallow clone whose anchor's commit is still missing: a rename made after the boundary is followed
  (the code moved, it was not deleted), and no commit is blamed for a deletion that did not happen.
* ``stale --rev`` at a commit of an unrelated (orphan) history: the code was never written there, nothing was
  deleted.
* A blobless clone offline whose anchor's blob (and the ones after it) are missing: the checked-out code decides the
  verdict (stale, commit not guessed), never "unchecked" because the question of the past could not be read.
* ``gitmem init`` in a sparse checkout leaving out the committed ``.gitmem/``: refused with the hint, never a new
  empty ``.gitmem/`` that hides the team's memories; a cone narrowed after init is said too, never "no memories".
* A merge that resolves a conflict with code of neither side: the merge is named, not the other line's commit
  that never had the memory's code.
* ``--rev`` naming history a shallow clone lacks: says it is a shallow clone and how to deepen, not only "give a
  commit that exists".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from testing.repos import commit, git, make_repo

CODE = "def parse(p):\n    return p\n\n\ndef other(q):\n    return q\n"


def _sha(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).strip()


def _memory(tmp_path: Path, run_cli, anchor: str = "tool.py::parse") -> tuple[Path, str]:
    repo = make_repo(tmp_path / "origin", {"README.md": "readme\n"})
    commit(repo, "code", {"tool.py": CODE})
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "parse returns p", "--anchor", anchor, "--json")
    assert code == 0, err
    commit(repo, "memory")
    return repo, json.loads(out)["id"]


def _anchor(run_json, repo: Path, mid: str, *rev: str) -> dict:
    rows = run_json(repo, "stale", "--all", *(("--rev", *rev) if rev else ()))
    (row,) = [r for r in rows if r["id"] == mid]
    return row["anchors"][0]


def test_deepened_shallow_clone_follows_a_rename_after_the_boundary(tmp_path: Path, run_cli, run_json) -> None:
    origin, mid = _memory(tmp_path, run_cli)
    commit(origin, "edit parse", {"tool.py": CODE.replace("return p\n", "return p + 1\n")}, no_verify=True)
    for i in range(3):
        commit(origin, f"pad {i}", {"README.md": f"readme {i}\n"}, no_verify=True)
    git(origin, "mv", "tool.py", "tools.py")
    renamed = commit(origin, "rename", no_verify=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "3", f"file://{origin}", str(clone)], check=True)
    # the boundary (pad 1) still has tool.py; the anchor's commit is not in the clone
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    for rev in ((), ("HEAD",)):
        a = _anchor(run_json, clone, mid, *rev)
        assert a["status"] == "stale", a  # moved and changed, never "deleted"
        assert a["path_now"] == "tools.py", a
        assert a["commit"] != renamed, a  # the rename did not change parse's body
        assert "deleted" not in a["reason"], a


def test_rev_on_an_unrelated_orphan_history_is_not_deleted(tmp_path: Path, run_cli, run_json) -> None:
    repo, mid = _memory(tmp_path, run_cli)
    git(repo, "checkout", "-q", "--orphan", "pages")
    git(repo, "rm", "-q", "-rf", ".")
    commit(repo, "pages", {"index.html": "<p>hi</p>\n"}, no_verify=True)
    orphan = _sha(repo)
    git(repo, "checkout", "-q", "main")
    a = _anchor(run_json, repo, mid, "pages")
    assert a["status"] == "unwritten", a  # never there: nothing was deleted
    assert a["commit"] is None, a
    assert orphan[:12] in a["reason"], a
    # an orphan branch made from the work tree (a squashed history) with the code changed: stale, and its root
    # commit, which "adds" every file, is not named as the one that changed the code
    git(repo, "checkout", "-q", "--orphan", "squashed")
    squashed = commit(repo, "squashed", {"tool.py": CODE.replace("return p\n", "return p * 2\n")}, no_verify=True)
    git(repo, "checkout", "-q", "main")
    a = _anchor(run_json, repo, mid, "squashed")
    assert a["status"] == "stale" and a["commit"] is None, a
    assert squashed[:12] not in a["reason"].split("(")[0], a


def _blobless_offline(origin: Path, dest: Path) -> Path:
    git(origin, "config", "uploadpack.allowFilter", "true")
    git(dest.parent, "clone", "-q", "--filter=blob:none", f"file://{origin}", str(dest))
    git(dest, "remote", "set-url", "origin", f"file://{dest.parent}/gone-away")
    return dest


def test_blobless_offline_stale_on_checked_out_code_after_two_changes(tmp_path: Path, run_cli, run_json) -> None:
    """The anchor's blob and the one between are missing; the checked-out code differs from the recorded
    fingerprint: the verdict (stale) is given, not "unchecked"; the commit is not guessed."""
    origin, mid = _memory(tmp_path, run_cli)
    commit(origin, "one", {"tool.py": CODE.replace("return p\n", "return p + 1\n")}, no_verify=True)
    commit(origin, "two", {"tool.py": CODE.replace("return p\n", "return p + 2\n")}, no_verify=True)
    clone = _blobless_offline(origin, tmp_path / "clone")
    a = _anchor(run_json, clone, mid)
    assert a["status"] == "stale", a
    assert a["commit"] in (None, _sha(clone)), a
    # the hook's record agrees (list reads the catalog the post-commit hook and re-check write)
    rows = run_json(clone, "list")
    assert {r["id"]: r["status"] for r in rows}[mid] == "stale"


def test_init_in_a_sparse_checkout_leaving_out_gitmem_does_not_hide_the_teams_memories(tmp_path: Path, run_cli,
                                                                                         run_json) -> None:
    """``gitmem init`` in a fresh clone whose sparse cone leaves out the committed ``.gitmem/``: refused with the
    sparse-checkout hint (exit 1), nothing written: a new empty ``.gitmem/`` would hide the team's memories."""
    origin, mid = _memory(tmp_path, run_cli)
    commit(origin, "code in a folder", {"pkg/x.py": "def x():\n    return 1\n"}, no_verify=True)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", f"file://{origin}", str(clone))
    git(clone, "sparse-checkout", "set", "--cone", "pkg")
    assert not (clone / ".gitmem").exists()
    code, out, err = run_cli(clone, "init")
    assert code == 1, (out, err)
    assert "git sparse-checkout add .gitmem" in err
    assert not (clone / ".gitmem").exists()
    assert git(clone, "status", "--porcelain") == ""
    git(clone, "sparse-checkout", "add", ".gitmem")
    assert run_cli(clone, "init")[0] == 0
    assert mid in {r["id"] for r in run_json(clone, "list")}


def test_a_cone_narrowed_after_init_says_gitmem_is_left_out(tmp_path: Path, run_cli) -> None:
    """An initialised clone whose sparse cone is then narrowed to leave out ``.gitmem/``: list/stale/context exit 1
    with the sparse-checkout hint, never "no memories"; the agent's session start stays silent and exits 0."""
    origin, _mid = _memory(tmp_path, run_cli)
    commit(origin, "code in a folder", {"pkg/x.py": "def x():\n    return 1\n"}, no_verify=True)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", f"file://{origin}", str(clone))
    assert run_cli(clone, "init")[0] == 0
    git(clone, "sparse-checkout", "set", "--cone", "pkg")
    for args in (("list",), ("stale", "--all"), ("context", "--file", "pkg/x.py")):
        code, out, err = run_cli(clone, *args)
        assert code == 1, (args, out, err)
        assert "git sparse-checkout add .gitmem" in err, (args, err)
        assert "no memories" not in out


def test_a_merge_that_rewrites_the_code_is_named_not_the_other_lines_commit(tmp_path: Path, run_cli,
                                                                             run_json) -> None:
    """The memory is written on a branch; main changed the code its own way; the merge resolves the conflict with
    code of neither side. At the merge (and on the work tree after it) the change is the merge's: main's commit
    never had the code the memory describes and did not change it. A clean merge of a change made on the other
    line still names the commit that made it."""
    repo = make_repo(tmp_path / "r", {"a.py": "def f(x):\n    return x\n", "b.py": "def g(x):\n    return x\n"})
    assert run_cli(repo, "init")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    commit(repo, "init gitmem")
    git(repo, "checkout", "-q", "-b", "feat")
    commit(repo, "feat: +1", {"a.py": "def f(x):\n    return x + 1\n"}, no_verify=True)
    ids = {}
    for anchor in ("a.py::f", "b.py::g"):
        code, out, err = run_cli(repo, "remember", f"about {anchor}", "--anchor", anchor, "--json")
        assert code == 0, err
        ids[anchor] = json.loads(out)["id"]
    commit(repo, "memories", no_verify=True)
    git(repo, "checkout", "-q", "main")
    main_change = commit(repo, "main: *2", {"a.py": "def f(x):\n    return x * 2\n",
                                            "b.py": "def g(x):\n    return x - 1\n"}, no_verify=True)
    subprocess.run(["git", "merge", "-q", "--no-verify", "feat"], cwd=repo, capture_output=True)
    (repo / "a.py").write_text("def f(x):\n    return x * 2 + 1\n")
    merge = commit(repo, "merge feat, resolved", no_verify=True)
    for rev in ((), ("HEAD",)):
        f = _anchor(run_json, repo, ids["a.py::f"], *rev)
        assert f["status"] == "stale" and f["commit"] == merge, f
        g = _anchor(run_json, repo, ids["b.py::g"], *rev)  # merged cleanly: main's commit made the change
        assert g["status"] == "stale" and g["commit"] == main_change, g


def test_rev_before_a_shallow_boundary_says_how_to_deepen(tmp_path: Path, run_cli) -> None:
    """``stale --rev`` naming history a shallow clone lacks: exit 1, "shallow clone" and the fetch that gets it,
    not only "give a commit that exists"; a name that exists nowhere in a full clone keeps the plain message."""
    origin, _mid = _memory(tmp_path, run_cli)
    for i in range(3):
        commit(origin, f"pad {i}", {"README.md": f"readme {i}\n"}, no_verify=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(clone)], check=True)
    code, out, err = run_cli(clone, "stale", "--all", "--rev", "HEAD~3")
    assert code == 1, (out, err)
    assert "shallow clone" in err and "git fetch --deepen=N" in err and "git fetch --unshallow" in err, err
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=clone, check=True)
    assert run_cli(clone, "stale", "--all", "--rev", "HEAD~3")[0] == 0
    code, _out, err = run_cli(origin, "stale", "--all", "--rev", "nosuch")
    assert code == 1 and "shallow" not in err and "git log --oneline" in err
