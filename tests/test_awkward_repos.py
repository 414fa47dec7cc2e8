"""Awkward repositories, end to end through the CLI, real git hooks and the Claude Code hook entry.

A path with spaces and non-ASCII characters, no commits yet, a detached HEAD, a
shallow clone, linked worktrees working at the same time, a submodule, a sparse
checkout: gitmem works, or says in one line what is wrong and what to do; no
commit fails. (Hostile files and file names: test_hostile.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gitmem import layout
from testing.repos import commit, git, make_repo, write

from test_claude_hooks import context_of, hook
from test_hostile import PY, commit_with_hooks, hook_log, no_follow

LIB = "def helper(v):\n    return v + 1\n\n\ndef stable(v):\n    return v\n"


def last_hook_ok(repo: Path, name: str = "post-commit") -> bool:
    lines = [ln for ln in hook_log(repo).splitlines() if f" {name} " in ln]
    return bool(lines) and f" {name} ok " in lines[-1]


def test_repository_at_a_path_with_spaces_and_non_ascii(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "we ird" / "näme ☃" / "repo", {"src/lib.py": LIB, "docs/ré sumé.md": "# hi\n"})
    code, out, err = run_cli(repo, "init")
    assert code == 0, err
    assert "pre-commit" in out and (repo / ".git/hooks/post-commit").is_file()
    mid = run_json(repo, "remember", "helper adds one", "--anchor", "src/lib.py::helper",
                   "--anchor", "docs/ré sumé.md")["id"]
    commit_with_hooks(repo, "memory")
    write(repo, {"src/lib.py": LIB.replace("v + 1", "v + 2")})
    stderr = commit_with_hooks(repo, "change helper")
    assert "gitmem: 1 memory may be stale (gitmem stale)" in stderr and last_hook_ok(repo)
    assert [r["id"] for r in run_json(repo, "stale")] == [mid]
    code, out, err = run_cli(repo, "doctor", "--json")
    hooks_ok = [c for c in json.loads(out)["checks"] if c["name"].startswith("hook") and c["level"] != "ok"]
    assert hooks_ok == [] or all(c["name"] == "hook index" for c in hooks_ok), hooks_ok

    # the Claude Code hook entry, started in that folder with a JSON event on stdin
    code, out, err = hook({"session_id": "s-1", "cwd": str(repo), "hook_event_name": "SessionStart",
                           "source": "startup", "transcript_path": str(repo / "t.jsonl")}, repo)
    assert code == 0 and err == "" and mid in context_of(out, "SessionStart")
    code, out, err = hook({"session_id": "s-2", "cwd": str(repo / "src"), "hook_event_name": "PreToolUse",
                           "tool_name": "Read", "tool_input": {"file_path": str(repo / "src/lib.py")}}, repo / "src")
    assert code == 0 and err == "" and mid in context_of(out, "PreToolUse")


def test_repository_with_no_commits(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo, {"src/lib.py": LIB})
    assert run_cli(repo, "init")[0] == 0
    mem = run_json(repo, "remember", "helper adds one", "--anchor", "src/lib.py::helper", "--anchor", "src/lib.py")
    assert all(a["commit"] is None for a in mem["anchors"])
    assert run_json(repo, "stale") == []
    assert [m["id"] for m in run_json(repo, "list")] == [mem["id"]]
    assert mem["id"] in run_json(repo, "context")["detailed"]
    code, out, err = run_cli(repo, "check")
    assert code == 1 and err.splitlines() == ["error: the repository has no commits yet", "hint: commit first"]
    stderr = commit_with_hooks(repo, "first commit, with the memory")  # the hooks on the very first commit
    assert "Traceback" not in stderr and last_hook_ok(repo) and last_hook_ok(repo, "pre-commit")
    assert run_json(repo, "stale") == []
    write(repo, {"src/lib.py": LIB.replace("v + 1", "v - 1")})
    stderr = commit_with_hooks(repo, "change helper")
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert "1 memory may be stale" in stderr
    [row] = run_json(repo, "stale")
    assert all(a["status"] == "stale" and a["commit"] == sha for a in row["anchors"])


def test_detached_head(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "repo", {"src/lib.py": LIB})
    assert run_cli(repo, "init")[0] == 0
    mid = run_json(repo, "remember", "helper adds one", "--anchor", "src/lib.py::helper")["id"]
    first = commit(repo, "memory")
    changed = commit(repo, "change helper", {"src/lib.py": LIB.replace("v + 1", "v + 3")})
    git(repo, "checkout", "-q", "--detach", first)
    assert last_hook_ok(repo, "post-checkout")
    assert run_json(repo, "stale") == []
    assert [r["id"] for r in run_json(repo, "stale", "--rev", changed)] == [mid]
    assert mid in run_json(repo, "context", "--file", "src/lib.py")["detailed"]
    other = run_json(repo, "remember", "stable is the identity", "--anchor", "src/lib.py::stable")["id"]
    write(repo, {"src/lib.py": LIB.replace("return v\n", "return v * 1\n")})
    stderr = commit_with_hooks(repo, "a commit on a detached HEAD")
    assert "1 memory may be stale" in stderr and last_hook_ok(repo)
    assert [r["id"] for r in run_json(repo, "stale")] == [other]


def test_shallow_clone_missing_anchor_commits(tmp_path: Path, run_cli, run_json) -> None:
    origin = make_repo(tmp_path / "origin", {"a.py": PY, "c.py": LIB})
    run_cli(origin, "init", "--no-hooks")
    moved = run_json(origin, "remember", "f returns x", "--anchor", "a.py::f")["id"]
    kept = run_json(origin, "remember", "stable is the identity", "--anchor", "c.py::stable")["id"]
    commit(origin, "memories")
    change = commit(origin, "change f", {"a.py": PY.replace("return x", "return x + 1")})
    git(origin, "mv", "a.py", "b.py")
    git(origin, "commit", "-q", "-m", "rename")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    assert run_cli(clone, "hooks", "install")[0] == 0

    rows = {r["id"]: r for r in run_json(clone, "stale", "--all")}
    assert rows[kept]["status"] == "fresh"  # its commit is missing, its code is the same
    a = rows[moved]["anchors"][0]
    assert a["status"] == "deleted" and a["commit"] is None
    assert a["reason"] == ("file not found (the anchor's commit is not in this clone: git fetch --unshallow "
                           "to name the commit)")
    code, out, err = run_cli(clone, "show", moved)
    assert code == 0 and "git fetch --unshallow" in out
    assert "git fetch --unshallow" in run_json(clone, "context", "--file", "b.py")["text"]
    assert run_cli(clone, "check")[0] == 0
    assert run_cli(clone, "log", moved)[0] == 0
    code, out, err = run_cli(clone, "reanchor", moved)
    assert code == 1 and len(err.splitlines()) == 2 and "git fetch --unshallow" in err
    code, out, err = run_cli(clone, "scan", "HEAD~1..HEAD")
    assert code == 1 and err.startswith("error: ") and "Traceback" not in err
    write(clone, {"n.txt": "x\n"})
    stderr = commit_with_hooks(clone, "a commit in the shallow clone")
    assert "Traceback" not in stderr and last_hook_ok(clone)

    git(clone, "fetch", "-q", "--unshallow")
    [row] = run_json(clone, "stale")
    a = row["anchors"][0]
    assert row["id"] == moved and a["status"] == "stale" and a["path_now"] == "b.py" and a["commit"] == change


def test_linked_worktrees_keep_their_own_index_and_caches(tmp_path: Path, run_cli, run_json) -> None:
    main = make_repo(tmp_path / "main", {"src/lib.py": LIB})
    assert run_cli(main, "init")[0] == 0
    commit(main, "gitmem")
    wt = tmp_path / "wt ☃"
    git(main, "worktree", "add", "-q", "-b", "feature", str(wt))
    assert last_hook_ok(wt, "post-checkout")
    in_main = run_json(main, "remember", "zebra memory of the main worktree", "--anchor", "src/lib.py::helper")["id"]
    in_wt = run_json(wt, "remember", "zebra memory of the linked worktree", "--anchor", "src/lib.py::stable")["id"]
    write(main, {"src/lib.py": LIB.replace("v + 1", "v + 5")})
    write(wt, {"src/lib.py": LIB.replace("return v\n", "return -v\n")})
    for r in (main, wt):
        git(r, "add", "-A")
    # both worktrees sync their index and commit (hooks writing caches) at the same time
    procs = [subprocess.Popen([sys.executable, "-m", "gitmem.cli", "sync", "--quiet"], cwd=r,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in (main, wt)]
    procs += [subprocess.Popen(["git", "commit", "-q", "-m", f"change in {r.name}"], cwd=r,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in (main, wt)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    for r, mine, _theirs in ((main, in_main, in_wt), (wt, in_wt, in_main)):
        assert last_hook_ok(r)
        assert (layout.of(r).catalog_file).is_file()
        hits = [h["id"] for h in run_json(r, "recall", "zebra memory")]
        assert hits == [mine], (r, hits)
        assert [s["id"] for s in run_json(r, "stale")] == [mine]
        code, out, _ = run_cli(r, "doctor", "--json")
        index = [c for c in json.loads(out)["checks"] if c["name"] == "index"]
        assert index and index[0]["level"] == "ok", index
    # the hook index of one worktree never holds the other's memories
    import sqlite3

    for r, theirs in ((main, in_wt), (wt, in_main)):
        con = sqlite3.connect(layout.of(r).catalog_file)
        try:
            tables = [t for (t,) in con.execute("select name from sqlite_master where type='table'")]
            # ``usage`` counts the clone's use of every memory by id (the use log is per clone, by design)
            dump = "\n".join(ln for ln in con.iterdump() if not ln.startswith('INSERT INTO "usage"'))
        finally:
            con.close()
        assert tables and theirs not in dump


def test_submodule(tmp_path: Path, run_cli, run_json) -> None:
    sub = make_repo(tmp_path / "sub", {"s.py": LIB})
    sup = make_repo(tmp_path / "super", {"top.py": PY})
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "libs/sub")
    git(sup, "commit", "-q", "-m", "add the submodule")
    assert run_cli(sup, "init")[0] == 0
    top = run_json(sup, "remember", "f returns x", "--anchor", "top.py::f")["id"]
    for anchor in ("libs/sub/s.py::helper", "libs/sub"):
        code, out, err = run_cli(sup, "remember", "x", "--anchor", anchor)
        assert code == 1 and "inside another repository (libs/sub, a submodule" in err, err
        assert "hint: run gitmem in libs/sub" in err
    commit_with_hooks(sup, "memory")

    # gitmem inside the submodule: its own .gitmem/, hooks in the superproject's .git/modules/
    inner = sup / "libs/sub"
    assert run_cli(inner, "init")[0] == 0
    assert (sup / ".git/modules/libs/sub/hooks/post-commit").is_file()
    mid = run_json(inner, "remember", "helper adds one", "--anchor", "s.py::helper")["id"]
    commit_with_hooks(inner, "submodule memory")
    write(inner, {"s.py": LIB.replace("v + 1", "v + 9")})
    stderr = commit_with_hooks(inner, "change helper in the submodule")
    assert "1 memory may be stale" in stderr and last_hook_ok(inner)
    assert [r["id"] for r in run_json(inner, "stale")] == [mid]

    # the superproject sees a moved gitlink, not the submodule's files or memories
    ctx = run_json(sup, "context")
    assert mid not in json.dumps(ctx)
    assert run_json(sup, "stale") == [] and [m["id"] for m in run_json(sup, "list")] == [top]
    stderr = commit_with_hooks(sup, "bump the submodule")
    assert "Traceback" not in stderr and last_hook_ok(sup)
    assert run_json(sup, "stale") == []


def test_sparse_checkout(tmp_path: Path, run_cli, run_json) -> None:
    origin = make_repo(tmp_path / "origin", {"keep/k.py": LIB, "away/a.py": PY, "README": "top\n"})
    run_cli(origin, "init", "--no-hooks")
    no_follow(origin)
    k = run_json(origin, "remember", "helper adds one", "--anchor", "keep/k.py::helper")["id"]
    a = run_json(origin, "remember", "f returns x", "--anchor", "away/a.py::f", "--anchor", "away/a.py")["id"]
    commit(origin, "memories")
    clone = tmp_path / "sparse"
    git(tmp_path, "clone", "-q", "--no-checkout", str(origin), str(clone))
    git(clone, "sparse-checkout", "set", "keep")
    git(clone, "checkout", "-q", "main")
    assert not (clone / ".gitmem").exists() and not (clone / "away").exists()
    code, out, err = run_cli(clone, "stale")
    assert code == 1 and err.splitlines() == [f"error: no .gitmem/ in {clone.resolve()}",
                                              "hint: the sparse checkout leaves it out: git sparse-checkout add "
                                              ".gitmem"]
    git(clone, "sparse-checkout", "add", ".gitmem")
    assert run_cli(clone, "hooks", "install")[0] == 0

    # files left out of the sparse checkout are unchanged, not deleted (git reads them from the index)
    assert run_json(clone, "stale") == []
    made = run_json(clone, "remember", "made outside the cone", "--anchor", "away/a.py::f")["id"]
    assert a in run_json(clone, "context", "--prompt", "change away/a.py")["detailed"]
    write(clone, {"keep/k.py": LIB.replace("v + 1", "v + 2")})
    stderr = commit_with_hooks(clone, "change keep")
    assert "1 memory may be stale" in stderr and last_hook_ok(clone)
    assert [r["id"] for r in run_json(clone, "stale")] == [k]

    # a change to a file outside the cone arrives by a pull: stale, as in a full checkout
    change = commit(origin, "change f", {"away/a.py": PY.replace("return x", "return x - 1")})
    git(clone, "pull", "-q", "--no-rebase", "--no-edit")
    assert last_hook_ok(clone, "post-merge")
    assert not (clone / "away").exists()
    rows = {r["id"]: r for r in run_json(clone, "stale")}
    assert set(rows) == {k, a, made}
    assert all(x["status"] == "stale" and x["commit"] == change for x in rows[a]["anchors"])
