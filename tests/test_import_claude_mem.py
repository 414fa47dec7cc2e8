"""``gitmem import claude-mem``: a database with claude-mem's table layout, rows of two projects."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from testing.repos import commit, make_repo

SCHEMA = """
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL,
  memory_session_id TEXT UNIQUE, project TEXT NOT NULL, user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'active');
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL, text TEXT, type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT,
  concepts TEXT, files_read TEXT, files_modified TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL, request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT,
  files_read TEXT, files_edited TEXT, notes TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
"""

CODE = ("class Cache:\n    def get(self, key):\n        return self.data.get(key)\n\n\n"
        "def warm(cache):\n    cache.get('x')\n")


def test_only_this_repositorys_rows_come_in_anchored(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "shop")
    commit(repo, "init", {"app/cache.py": CODE, "README.md": "x\n"})
    run_cli(repo, "init", "--no-hooks")
    db = tmp_path / "claude-mem.db"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    rows = [
        ("s1", "shop", "gotcha", "Cache.get returns None for expired keys", "expiry is lazy",
         ["expired keys are evicted on read"], "Cache.get does not raise; warm() relies on it.", ["caching"],
         [str(repo / "README.md")], [str(repo / "app" / "cache.py")], 1764500000000),
        ("s1", "shop", "discovery", "README explains setup", None, [], "Nothing special.", [],
         [str(repo / "README.md")], [], 1764500001000),
        ("s2", "other-project", "decision", "Use Postgres", None, [], "Chosen for JSONB.", [],
         ["/home/dev/other/db.py"], ["/home/dev/other/db.py"], 1764500002000),
        ("s3", "shop", "bugfix", "token AKIAIOSFODNN7EXAMPLE leaked in logs", None, [], "Rotated.", [], [], [],
         1764500003000),
    ]
    for sess, project, typ, title, sub, facts, narrative, concepts, read, modified, epoch in rows:
        con.execute("INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, narrative, "
                    "concepts, files_read, files_modified, created_at, created_at_epoch) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (sess, project, typ, title, sub, json.dumps(facts), narrative, json.dumps(concepts),
                     json.dumps(read), json.dumps(modified), "2025-11-30T10:00:00Z", epoch))
    con.execute("INSERT INTO session_summaries (memory_session_id, project, request, learned, completed, files_read, "
                "files_edited, created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?,?)",
                ("s9", "other-project", "Migrate DB", "x", "y", "[]", json.dumps(["/elsewhere/a.py"]), "t",
                 1764500004000))
    con.commit()
    con.close()
    code, out, err = run_cli(repo, "import", "claude-mem", str(db), "--json")
    assert code == 0, err
    r = json.loads(out)
    assert len(r["written"]) == 3 and r["other_projects"] == 2
    mems = {m["title"]: m for m in json.loads(run_cli(repo, "list", "--json")[1])}
    gotcha = mems["Cache.get returns None for expired keys"]
    assert gotcha["type"] == "gotcha" and gotcha["scope"] == "local" and gotcha["tags"] == ["caching"]
    assert [a["anchor"] for a in gotcha["anchors"]] == ["app/cache.py::Cache.get", "app/cache.py::warm"]
    assert gotcha["facts"] == ["expired keys are evicted on read"] and gotcha["created"] == "2025-11-30T10:53:20Z"
    assert (gotcha["source"], gotcha["origin"], gotcha["reviewed"]) == ("import", "claude-mem", None)
    assert gotcha["trust"] == {"level": "imported", "label": "imported (claude-mem)", "rule": False}
    assert [a["anchor"] for a in mems["README explains setup"]["anchors"]] == ["README.md"]
    assert not any("AKIAIOSFODNN7EXAMPLE" in t for t in mems)  # redacted like every way in
    code, out, _ = run_cli(repo, "import", "claude-mem", str(db), "--json")
    assert json.loads(out)["written"] == [] and json.loads(out)["already"] == 3


def test_not_a_claude_mem_database(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "x = 1\n"})
    run_cli(repo, "init", "--no-hooks")
    (tmp_path / "x.db").write_bytes(b"not sqlite at all" * 100)
    code, _, err = run_cli(repo, "import", "claude-mem", str(tmp_path / "x.db"))
    assert code == 1 and "x.db" in err and "hint:" in err
    code, _, err = run_cli(repo, "import", "claude-mem", str(tmp_path / "missing.db"))
    assert code == 1 and "no claude-mem database" in err


def test_hostile_rows_are_rejected_one_by_one(tmp_path: Path, run_cli) -> None:
    """A row with a control character, a bidi override or a BLOB where text belongs is rejected with its table
    and id; the other rows of the database are imported all the same (exit 1)."""
    repo = make_repo(tmp_path / "shop")
    commit(repo, "init", {"app/cache.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    db = tmp_path / "claude-mem.db"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    modified = json.dumps([str(repo / "app" / "cache.py")])
    rows: list[tuple[object, object]] = [
        ("Cache.get is lazy", "fine"),
        ("escape \x1b]0;pwned\x07 in the title", "x"),
        ("fine title", "user\u202e\u2066 // admin only\u2069\u2066"),
        (b"\x00\x01 a blob", "x"),
        ("Cache.get misses return None", "also fine"),
    ]
    for i, (title, narrative) in enumerate(rows):
        con.execute("INSERT INTO observations (memory_session_id, project, type, title, narrative, files_modified, "
                    "created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?)",
                    ("s1", "shop", "gotcha", title, narrative, modified, "t", 1764500000000 + i))
    con.commit()
    con.close()
    code, out, err = run_cli(repo, "import", "claude-mem", str(db), "--json")
    r = json.loads(out)
    assert code == 1 and len(r["written"]) == 2, (out, err)
    assert [x.split(":", 1)[0] for x in r["rejected"]] == ["observations row 2", "observations row 3",
                                                          "observations row 4"]
    assert "U+001B" in r["rejected"][0] and "U+202E" in r["rejected"][1] and "not text" in r["rejected"][2]
    texts = "".join(p.read_text() for p in layout_files(repo))
    assert "\x1b" not in texts and "\u202e" not in texts


def layout_files(repo: Path) -> list[Path]:
    from gitmem.layout import Layout

    return sorted(Layout(repo).local_memories_dir.glob("*.md"))
