"""End to end on a real repository with Python, JavaScript and Go files, through the CLI and real git hooks."""

from __future__ import annotations

from pathlib import Path

from testing.repos import commit, git, git_proc, make_repo, write

PY = '''\
import os


def parse_config(path):
    """Load config: env > yaml > defaults."""
    data = {"debug": False}
    if os.environ.get("DEBUG"):
        data["debug"] = True
    return data


def unrelated(x):
    return x + 1


def legacy_helper(a, b):
    total = a + b
    return total * 2
'''

JS = '''\
class Router {
  constructor(routes) {
    this.routes = routes;
  }

  // Find the handler for a request.
  handle(req) {
    const route = this.routes[req.path];
    if (!route) { return null; }
    return route(req);
  }
}

module.exports = { Router };
'''

JS_REFORMATTED = '''\
class Router {
  constructor(routes) {
    this.routes = routes;
  }

  /**
   * Dispatch a request to its route handler.
   * (comment rewritten, code reformatted)
   */
  handle(req)
  {
      const route = this.routes[ req.path ];
      if (!route) {
          return null;
      }
      return route(req);
  }
}

module.exports = { Router };
'''

GO = '''\
package store

import "errors"

type DB struct {
	path string
}

// Open opens the database at path.
func Open(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("empty path")
	}
	return &DB{path: path}, nil
}

func (d *DB) Close() error {
	return nil
}
'''


def _status_by_id(rows: list[dict]) -> dict[str, dict]:
    return {r["id"]: r for r in rows}


def test_core_end_to_end(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "proj", {"app/config.py": PY, "web/router.js": JS, "svc/store.go": GO})
    code, out, err = run_cli(repo, "init")
    assert code == 0, err
    assert (repo / ".gitmem/config.toml").is_file()
    assert "post-commit" in (repo / ".git/hooks/post-commit").read_text() or \
        (repo / ".git/hooks/post-commit").is_file()
    # this test watches moves being detected and reported; following them is tested in test_reanchor.py
    cfg = repo / ".gitmem/config.toml"
    cfg.write_text(cfg.read_text().replace("follow_moves = true", "follow_moves = false"))

    mem_py = run_json(repo, "remember", "Config load order is env > yaml > defaults", "--type", "decision",
                      "--anchor", "app/config.py::parse_config")["id"]
    mem_js = run_json(repo, "remember", "Router.handle returns null for unknown paths, callers 404",
                      "--anchor", "web/router.js::Router.handle")["id"]
    mem_go = run_json(repo, "remember", "Open rejects the empty path", "--type", "constraint",
                      "--anchor", "svc/store.go::Open")["id"]
    mem_del = run_json(repo, "remember", "legacy_helper doubles the sum for old clients",
                       "--anchor", "app/config.py::legacy_helper")["id"]
    commit(repo, "add memories")
    a_rev = git(repo, "rev-parse", "HEAD").strip()
    assert run_json(repo, "stale") == []

    # (e) a different function in the same file changes: the anchored memory stays fresh
    write(repo, {"app/config.py": PY.replace("return x + 1", "return x + 2")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "-m", "tweak unrelated")
    assert p.returncode == 0
    assert b"gitmem" not in p.stderr  # nothing went stale: the hook is silent
    assert run_json(repo, "stale") == []

    # (a) the Python function's body changes: stale, naming that commit, and the hook says so
    write(repo, {"app/config.py": PY.replace('data = {"debug": False}', 'data = {"debug": None}')
                 .replace("return x + 1", "return x + 2")})
    git(repo, "add", "-A")
    p = git_proc(repo, "commit", "-q", "-m", "change parse_config defaults")
    assert p.returncode == 0
    assert b"gitmem: 1 memory may be stale (gitmem stale)" in p.stderr
    b_rev = git(repo, "rev-parse", "HEAD").strip()
    rows = _status_by_id(run_json(repo, "stale"))
    assert set(rows) == {mem_py}
    anchor = rows[mem_py]["anchors"][0]
    assert anchor["status"] == "stale" and anchor["commit"] == b_rev
    assert anchor["path_now"] == "app/config.py"
    assert "body" in anchor["reason"] and b_rev[:12] in anchor["reason"]

    # (b) the JS method is only reformatted and re-commented: fresh
    commit(repo, "reformat router", {"web/router.js": JS_REFORMATTED})
    assert mem_js not in _status_by_id(run_json(repo, "stale"))

    # (c) git mv the Go file: moved, with the new path
    (repo / "svc/db").mkdir()
    git(repo, "mv", "svc/store.go", "svc/db/store.go")
    git(repo, "commit", "-q", "-m", "move store")
    c_rev = git(repo, "rev-parse", "HEAD").strip()
    rows = _status_by_id(run_json(repo, "stale"))
    go = rows[mem_go]["anchors"][0]
    assert rows[mem_go]["status"] == "moved"
    assert go["path_now"] == "svc/db/store.go" and go["commit"] == c_rev

    # (d) a symbol is deleted: deleted
    new_py = (repo / "app/config.py").read_text()
    new_py = new_py[:new_py.index("def legacy_helper")].rstrip() + "\n"
    commit(repo, "drop legacy_helper", {"app/config.py": new_py})
    d_rev = git(repo, "rev-parse", "HEAD").strip()
    rows = _status_by_id(run_json(repo, "stale"))
    assert rows[mem_del]["status"] == "deleted"
    assert rows[mem_del]["anchors"][0]["commit"] == d_rev
    assert set(rows) == {mem_py, mem_go, mem_del}

    # `stale --rev` answers for past revisions without a checkout
    assert run_json(repo, "stale", "--rev", a_rev) == []
    at_b = _status_by_id(run_json(repo, "stale", "--rev", b_rev))
    assert set(at_b) == {mem_py}
    at_c = _status_by_id(run_json(repo, "stale", "--rev", c_rev))
    assert set(at_c) == {mem_py, mem_go}
    assert git(repo, "rev-parse", "HEAD").strip() == d_rev  # nothing was checked out
    assert git(repo, "status", "--porcelain") == ""

    # show / list / recall / context see the memories
    shown = run_json(repo, "show", mem_go)
    assert shown["status"] == "moved"
    listed = run_json(repo, "list", "--anchor", "app/config.py")
    assert {m["id"] for m in listed} == {mem_py, mem_del}
    hits = run_json(repo, "recall", "empty path database")
    assert hits and hits[0]["id"] == mem_go
    ctx = run_json(repo, "context", "--file", "web/router.js", "--budget", "400")
    assert ctx["detailed"][0] == mem_js
    assert ctx["tokens"] <= 400


def test_remember_unknown_symbol_lists_closest(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "p", {"app/config.py": PY})
    run_cli(repo, "init", "--no-hooks")
    code, out, err = run_cli(repo, "remember", "x", "--anchor", "app/config.py::parse_cfg")
    assert code == 1
    assert "no symbol parse_cfg in app/config.py" in err
    assert "parse_config" in err
    code, out, err = run_cli(repo, "remember", "x", "--anchor", "app/nope.py")
    assert code == 1 and "no file app/nope.py" in err
    code, out, err = run_cli(repo, "remember", "x", "--anchor", "../outside.py")
    assert code == 1 and "outside the repository" in err


def test_remember_at_rev_anchors_past_code(tmp_path: Path, run_json) -> None:
    repo = make_repo(tmp_path / "p", {"app/config.py": PY})
    old = git(repo, "rev-parse", "HEAD").strip()
    run_json(repo, "init", "--no-hooks")
    commit(repo, "rename", {"app/config.py": PY.replace("legacy_helper", "old_helper")})
    mem = run_json(repo, "remember", "old helper", "--anchor", "app/config.py::legacy_helper", "--rev", old)
    assert mem["anchors"][0]["commit"] == old
    rows = run_json(repo, "stale")
    assert rows[0]["status"] == "moved"
    assert rows[0]["anchors"][0]["symbol_now"] == "old_helper"


def test_branches_adding_memories_merge_cleanly(tmp_path: Path, run_cli, run_json) -> None:
    repo = make_repo(tmp_path / "p", {"app/config.py": PY, "svc/store.go": GO})
    run_cli(repo, "init")
    commit(repo, "init gitmem")
    git(repo, "checkout", "-q", "-b", "feature")
    m1 = run_json(repo, "remember", "feature branch memory", "--anchor", "svc/store.go::Open")["id"]
    commit(repo, "memory on feature")
    git(repo, "checkout", "-q", "main")
    m2 = run_json(repo, "remember", "main branch memory", "--anchor", "app/config.py::unrelated")["id"]
    commit(repo, "memory on main")
    p = git_proc(repo, "merge", "-q", "--no-edit", "feature")
    assert p.returncode == 0, p.stderr
    assert git(repo, "status", "--porcelain") == ""
    run_json(repo, "sync")
    listed = {m["id"] for m in run_json(repo, "list")}
    assert {m1, m2} <= listed
    hits = {h["id"] for h in run_json(repo, "recall", "branch memory")}
    assert {m1, m2} <= hits
