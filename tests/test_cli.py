"""The CLI over real repositories: exit codes, JSON errors, doctor, scan, sync, hooks after merge/rebase/checkout."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from gitmem import layout
from gitmem.shapes import SCHEMA_VERSION
from testing.repos import commit, git, git_proc, make_repo, write

PY = "def load(path):\n    return open(path).read()\n\n\ndef save(path, data):\n    open(path, 'w').write(data)\n"


def _init(tmp_path: Path, run_cli, files: dict[str, str] | None = None, hooks: bool = True) -> Path:
    repo = make_repo(tmp_path / "r", files or {"io.py": PY})
    code, _, err = run_cli(repo, "init", *([] if hooks else ["--no-hooks"]))
    assert code == 0, err
    return repo


def test_exit_codes_and_json_errors(tmp_path: Path, run_cli) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    code, out, err = run_cli(outside, "list")
    assert code == 1 and err.startswith("error: not a git repository") and "hint:" in err
    repo = make_repo(tmp_path / "r", {"io.py": PY})
    code, out, err = run_cli(repo, "list", "--json")
    assert code == 1 and out == ""
    assert json.loads(err)["error"].startswith("no .gitmem/") and "gitmem init" in json.loads(err)["hint"]
    assert err.count("\n") == 1  # one line per error object: a stream of them parses line by line
    run_cli(repo, "init", "--no-hooks")
    code, out, err = run_cli(repo, "show", "NOPE")
    assert code == 1 and "no memory with id NOPE" in err
    code, out, err = run_cli(repo, "remember", "x", "--type", "wish")
    assert code == 2
    code, out, err = run_cli(repo, "stale", "--rev", "no-such-rev")
    assert code == 1 and "unknown revision: no-such-rev" in err


def test_show_forget_and_id_prefix(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli, hooks=False)
    mid = run_json(repo, "remember", "Loading reads the whole file\n\nFine for configs under 1 MB.",
                   "--anchor", "io.py::load", "--tag", "io", "--fact", "no streaming")["id"]
    shown = run_json(repo, "show", mid[:10].lower())
    assert shown["id"] == mid and shown["title"] == "Loading reads the whole file"
    assert shown["body"] == "Fine for configs under 1 MB." and shown["facts"] == ["no streaming"]
    assert shown["anchor_statuses"][0]["status"] == "fresh"
    assert run_json(repo, "forget", mid) == {"schema_version": SCHEMA_VERSION, "id": mid, "forgotten": True}
    assert run_json(repo, "list") == []


def test_remember_from_subdirectory_and_local_scope(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli, {"pkg/io.py": PY}, hooks=False)
    mid = run_json(repo / "pkg", "remember", "local note", "--anchor", "io.py::save", "--local")["id"]
    assert (layout.of(repo).local_memories_dir / f"{mid}.md").is_file()
    assert run_json(repo, "show", mid)["anchors"][0]["anchor"] == "pkg/io.py::save"
    status = git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert [ln for ln in status.splitlines() if not ln.startswith("?? .gitmem/")] == [], status  # nothing ignored
    assert "local" not in status


def test_invalid_file_reported_and_others_work(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli, hooks=False)
    good = run_json(repo, "remember", "good one", "--anchor", "io.py")["id"]
    (repo / ".gitmem/memories/01BAD.md").write_text("---\nid: 01BAD\ntype: decision\ntitle: [oops\n---\n")
    code, out, err = run_cli(repo, "list")
    assert code == 0 and good in out
    assert "warning: .gitmem/memories/01BAD.md" in err and "invalid YAML" in err
    code, out, err = run_cli(repo, "doctor")
    assert code == 1 and ".gitmem/memories/01BAD.md" in out


def test_doctor_hooks_husky_and_hookspath(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "r", {"io.py": PY})
    husky = repo / ".husky"
    husky.mkdir()
    (husky / "post-commit").write_text("#!/bin/sh\necho husky-ran >> \"$(git rev-parse --show-toplevel)/husky.log\"\n")
    (husky / "post-commit").chmod(0o755)
    git(repo, "config", "core.hooksPath", ".husky")
    run_cli(repo, "init")
    rep = run_json(repo, "doctor")
    hooks = [c for c in rep["checks"] if c["name"] == "hook"]
    assert len(hooks) == 5 and all(c["level"] == "ok" for c in hooks)
    assert any("chained" in c["message"] and "post-commit" in c["message"] for c in hooks)
    run_json(repo, "remember", "load reads all", "--anchor", "io.py::load")
    commit(repo, "m")
    write(repo, {"io.py": PY.replace("read()", "read(100)")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "-m", "change load")
    assert p.returncode == 0 and b"gitmem: 1 memory may be stale" in p.stderr
    assert (repo / "husky.log").read_text().count("husky-ran") == 2
    # point git somewhere else: doctor must say git will not run gitmem's hooks
    git(repo, "config", "core.hooksPath", ".elsewhere")
    code, out, err = run_cli(repo, "doctor")
    assert code == 1
    assert "not installed" in out or "will not run" in out


def test_existing_post_commit_hook_still_runs(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "r", {"io.py": PY})
    hook = repo / ".git/hooks/post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine >> \"$(git rev-parse --show-toplevel)/mine.log\"\nexit 3\n")
    hook.chmod(0o755)
    run_cli(repo, "init")
    run_json(repo, "remember", "save overwrites", "--anchor", "io.py::save")
    commit(repo, "m")
    write(repo, {"io.py": PY.replace("'w'", "'a'")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "-m", "append")
    assert p.returncode == 0 and b"gitmem: 1 memory may be stale" in p.stderr
    assert (repo / "mine.log").read_text() == "mine\nmine\n"
    run_cli(repo, "hooks", "uninstall")
    assert hook.read_text().startswith("#!/bin/sh\necho mine")


def test_hook_never_breaks_commit(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli)
    run_json(repo, "remember", "x", "--anchor", "io.py::load")
    # a corrupt memory file and an unreadable hook index must not fail the commit
    (repo / ".gitmem/memories/01BAD.md").write_text("<<<<<<< HEAD\n")
    (layout.of(repo).catalog_file).write_text("{not a database")
    write(repo, {"io.py": PY.replace("read()", "read(1)")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "-m", "c")
    assert p.returncode == 0 and b"Traceback" not in p.stderr


def test_scan_and_merge_rebase_checkout(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli)
    mid = run_json(repo, "remember", "load reads everything", "--anchor", "io.py::load")["id"]
    commit(repo, "memory")
    git(repo, "checkout", "-q", "-b", "topic")
    commit(repo, "change load", {"io.py": PY.replace("read()", "read(10)")}, no_verify=True)
    git(repo, "checkout", "-q", "main")
    p = git_proc(repo, "merge", "-q", "--no-ff", "--no-edit", "topic")
    assert p.returncode == 0
    assert b"gitmem: 1 memory may be stale" in p.stderr  # post-merge re-checked the changed file
    from gitmem.catalog import db as catalog_db

    con = catalog_db.connect(repo)  # the hooks recorded the status where the Claude Code hooks read it
    assert con is not None and catalog_db.rows(con, [mid])[0]["status"] == "stale"
    con.close()
    scanned = run_json(repo, "scan", "HEAD~2..HEAD")
    assert scanned["commits"] >= 1 and [m["id"] for m in scanned["not_fresh"]] == [mid]
    p = git_proc(repo, "checkout", "-q", "HEAD~2")  # detached HEAD before the change
    assert p.returncode == 0
    assert run_json(repo, "stale") == []
    git(repo, "checkout", "-q", "main")
    # rebase: post-rewrite analyses the rewritten commits
    git(repo, "checkout", "-q", "-b", "r2", "HEAD~1")
    commit(repo, "other", {"other.py": "X = 1\n"}, no_verify=True)
    p = git_proc(repo, "rebase", "-q", "main")
    assert p.returncode == 0, p.stderr


def test_sync_and_recall_heal_a_corrupt_catalog(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli, hooks=False)
    mid = run_json(repo, "remember", "streaming reads would fix memory blowups", "--anchor", "io.py::load")["id"]
    first = run_json(repo, "sync")
    assert first["added"] == 1 or first["rebuilt"]
    assert run_json(repo, "sync") | {"reason": ""} == {"schema_version": SCHEMA_VERSION, "added": 0, "updated": 0,
                                                      "deleted": 0, "rebuilt": False, "reason": "", "invalid": 0,
                                                      "catalog": 1, "search": "hybrid"}
    catalog = layout.of(repo).catalog_file
    catalog.write_bytes(b"garbage" * 1000)
    hits = run_json(repo, "recall", "streaming reads")
    assert hits and hits[0]["id"] == mid
    catalog.unlink()
    assert run_json(repo, "recall", "memory blowups")[0]["id"] == mid
    assert run_json(repo, "recall", "🚀 \"unterminated AND OR ( -x") is not None
    catalog.write_bytes(b"garbage" * 1000)
    rebuilt = run_json(repo, "sync", "--rebuild")
    assert rebuilt["rebuilt"] and rebuilt["added"] == 1 and rebuilt["catalog"] == 1


def test_hooks_install_idempotent_and_undo(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli)
    hook = repo / ".git/hooks/post-commit"
    before = hook.read_bytes()
    again = run_json(repo, "hooks", "install")
    assert again["installed"] == [] and sorted(again["already"]) == sorted(
        ["post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-commit"])
    assert hook.read_bytes() == before and os.stat(hook).st_mode & stat.S_IXUSR
    assert sorted(run_json(repo, "hooks", "uninstall")["removed"]) == sorted(
        ["post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-commit"])
    assert not hook.exists()


def test_bad_config_is_a_one_line_error(tmp_path: Path, run_cli) -> None:
    repo = _init(tmp_path, run_cli, hooks=False)
    cfg = repo / ".gitmem/config.toml"
    cfg.write_text('[context]\nbudget = "lots"\n')
    code, out, err = run_cli(repo, "context")
    assert code == 1 and "context.budget must be an integer >= 1" in err and "Traceback" not in err
    cfg.write_text('[contxt]\nbudget = 3\n')  # a typo, or a newer gitmem's section: one warning, never an outage
    code, out, err = run_cli(repo, "doctor")
    assert "[contxt] unknown to this gitmem" in out and "warn" in out
    code, out, err = run_cli(repo, "context")
    assert code == 0 and err.count("[contxt] unknown to this gitmem") == 1
    cfg.write_text('[embeddings]\nprovider = "wordlama"\n')
    code, out, err = run_cli(repo, "doctor")
    assert code == 1 and "wordlama" in out


def test_anchor_path_from_subdirectory_root_relative_fallback(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli, {"src/py/io.py": PY}, hooks=False)
    a = run_json(repo / "src/py", "remember", "cwd-relative", "--anchor", "io.py::load")["anchors"][0]
    b = run_json(repo / "src/py", "remember", "root-relative", "--anchor", "src/py/io.py::load")["anchors"][0]
    assert a["anchor"] == b["anchor"] == "src/py/io.py::load"


def test_hook_lines_are_not_repeated(tmp_path: Path, run_cli, run_json) -> None:
    repo = _init(tmp_path, run_cli)
    run_json(repo, "remember", "load reads everything", "--anchor", "io.py::load")
    commit(repo, "memory")
    write(repo, {"io.py": PY.replace("read()", "read(5)")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "--amend", "--no-edit")
    assert p.stderr.count(b"gitmem:") == 1  # post-commit reports; post-rewrite (amend) stays quiet
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "touch io again", {"io.py": PY.replace("read()", "read(6)")})
    git(repo, "checkout", "-q", "main")
    p = git_proc(repo, "merge", "-q", "--no-edit", "side")
    assert p.returncode == 0 and b"gitmem:" not in p.stderr  # already stale before: no news


def test_remember_warns_about_duplicate_names(tmp_path: Path, run_cli) -> None:
    src = "class A {\n  get x() { return this._x; }\n  set x(v) { this._x = v; }\n}\n"
    repo = _init(tmp_path, run_cli, {"a.js": src}, hooks=False)
    code, out, err = run_cli(repo, "remember", "x is cached", "--anchor", "a.js::A.x")
    assert code == 0 and "defines A.x more than once" in err and "A.x#2" in err


def test_remember_on_a_python_property_takes_it_whole(tmp_path: Path, run_cli) -> None:
    # Python binds a name once per scope: getter and setter are one symbol, no #2 to pick.
    src = ("class A:\n    @property\n    def x(self):\n        return self._x\n\n"
           "    @x.setter\n    def x(self, v):\n        self._x = v\n")
    repo = _init(tmp_path, run_cli, {"a.py": src}, hooks=False)
    code, out, err = run_cli(repo, "remember", "x is cached", "--anchor", "a.py::A.x")
    assert code == 0 and "more than once" not in err


def test_context_puts_a_deleted_symbols_memory_first(tmp_path: Path, run_cli, run_json) -> None:
    # Deleting a function is changing it: its memory ranks as the same symbol, not as the same file.
    src = "def keep():\n    return 1\n\n\ndef legacy_hook():\n    return 2\n"
    repo = make_repo(tmp_path / "r", {"lib/plug.py": src})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    run_json(repo, "remember", "legacy_hook is called by name from the plugin loader", "--anchor",
             "lib/plug.py::legacy_hook")
    run_json(repo, "remember", "keep returns one on purpose", "--anchor", "lib/plug.py::keep")
    (repo / "lib/plug.py").write_text("def keep():\n    return 1\n")
    out = run_json(repo, "context")
    assert "lib/plug.py::legacy_hook" in out["focus"]["symbols"]
    first = out["memories"][0]
    assert first["anchors"] == ["lib/plug.py::legacy_hook"] and first["near"] == "deleted lib/plug.py::legacy_hook"
    assert first["proximity"] == 1.0 and first["status"] == "deleted"
    assert out["memories"][1]["proximity"] == 0.6
