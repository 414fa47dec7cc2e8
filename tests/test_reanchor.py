"""``gitmem reanchor``: a reviewed memory becomes fresh again; moved anchors follow their code."""

from __future__ import annotations

import json
from pathlib import Path

from testing.repos import commit, git, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _setup(tmp_path: Path, run_cli) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    code, out, _ = run_cli(repo, "remember", "parse and render agree on the separator", "--anchor",
                           "csvish.py::parse", "--anchor", "csvish.py::render", "--anchor", "commit:HEAD", "--json")
    assert code == 0
    return repo, json.loads(out)["id"]


def _statuses(run_cli, repo: Path) -> dict[str, str]:
    code, out, _ = run_cli(repo, "stale", "--all", "--json")
    return {a["anchor"]: a["status"] for m in json.loads(out) for a in m["anchors"]}


def test_stale_and_moved_anchors_become_fresh(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    git(repo, "mv", "csvish.py", "csvlite.py")
    commit(repo, "rename, and parse strips",
           {"csvlite.py": CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")})
    before = _statuses(run_cli, repo)
    assert before["csvish.py::parse"] == "stale" and before["csvish.py::render"] == "moved"
    code, out, err = run_cli(repo, "reanchor", mid[:12], "--json")
    assert code == 0, err
    (r,) = json.loads(out)
    assert r["anchors"][:2] == ["csvlite.py::parse", "csvlite.py::render"] and r["anchors"][2].startswith("commit:")
    assert any("csvish.py::render → csvlite.py::render (moved)" in c for c in r["changes"])
    assert set(_statuses(run_cli, repo).values()) == {"fresh"}
    assert run_cli(repo, "stale", "--json")[1].strip() == "[]"


def test_deleted_code_needs_drop_deleted(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    commit(repo, "drop render", {"csvish.py": CODE.split("\n\n\n")[0] + "\n"})
    before = (repo / ".gitmem" / "memories" / f"{mid}.md").read_bytes()
    code, _, err = run_cli(repo, "reanchor", mid)
    assert code == 1 and "csvish.py::render is gone" in err and "--drop-deleted" in err
    assert (repo / ".gitmem" / "memories" / f"{mid}.md").read_bytes() == before
    code, out, _ = run_cli(repo, "reanchor", mid, "--drop-deleted", "--json")
    assert code == 0 and json.loads(out)[0]["dropped"] == ["csvish.py::render"]
    assert _statuses(run_cli, repo) == {"csvish.py::parse": "fresh",
                                        next(k for k in _statuses(run_cli, repo) if k.startswith("commit:")): "fresh"}


def test_retire_keeps_the_file_and_leaves_every_listing(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    commit(repo, "parse strips", {"csvish.py": CODE.replace("text.split(',')", "[t for t in text.split(',')]")})
    assert json.loads(run_cli(repo, "stale", "--json")[1])[0]["id"] == mid
    code, out, err = run_cli(repo, "retire", mid, "--reason", "parse no longer splits on commas only", "--json")
    assert code == 0, err
    assert json.loads(out)["retired"]
    text = (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    assert "retired: " in text and "Retired: parse no longer splits" in text
    assert json.loads(run_cli(repo, "stale", "--json")[1]) == []
    assert json.loads(run_cli(repo, "list", "--json")[1]) == []
    assert mid not in run_cli(repo, "context", "--file", "csvish.py")[1]
    assert json.loads(run_cli(repo, "show", mid, "--json")[1])["id"] == mid  # still readable by id
    code, _, err = run_cli(repo, "retire", mid)
    assert code == 1 and "retired on" in err


def test_supersede_links_both_ways_and_follows_moved_code(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    git(repo, "mv", "csvish.py", "csvlite.py")
    commit(repo, "rename")
    code, out, err = run_cli(repo, "supersede", mid, "parse and render both use ';' now", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["supersedes"] == mid and r["anchors"][:2] == ["csvlite.py::parse", "csvlite.py::render"]
    new = json.loads(run_cli(repo, "show", r["id"], "--json")[1])
    old = json.loads(run_cli(repo, "show", mid, "--json")[1])
    assert new["supersedes"] == [mid] and new["type"] == "discovery"
    assert old["superseded_by"] == [r["id"]] and old["retired"]
    assert [m["id"] for m in json.loads(run_cli(repo, "list", "--json")[1])] == [r["id"]]
    # the memory file of the old one stays byte-stable when rewritten
    from gitmem.memfile import dumps, read

    p = repo / ".gitmem" / "memories" / f"{mid}.md"
    assert dumps(read(p)[0]) == p.read_text()


def test_log_interleaves_memory_and_code_history(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    commit(repo, "memory")
    commit(repo, "comment only", {"csvish.py": "# csv helpers\n" + CODE})
    stripped = CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")
    c1 = commit(repo, "parse strips", {"csvish.py": "# csv helpers\n" + stripped})
    run_cli(repo, "reanchor", mid)
    c2 = commit(repo, "memory re-anchored")
    code, out, err = run_cli(repo, "log", mid, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["kind"], r["subject"]) for r in rows] == [("memory", "memory re-anchored"), ("code", "parse strips"),
                                                         ("memory", "memory")]
    assert rows[0]["commit"] == c2 and any(r["commit"] == c1 and "csvish.py::parse" in r["what"] for r in rows)
    assert "comment only" not in [r["subject"] for r in rows]  # the symbol's code did not change
    assert rows[-1]["what"] == "memory written"


def test_post_commit_lets_a_moved_memory_follow_its_code(tmp_path: Path, run_cli) -> None:
    import subprocess

    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init")  # with the git hooks
    code, out, _ = run_cli(repo, "remember", "render joins", "--anchor", "csvish.py::render", "--json")
    mid = json.loads(out)["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    git(repo, "mv", "csvish.py", "csvlite.py")
    proc = subprocess.run(["git", "commit", "-qm", "rename"], cwd=repo, capture_output=True, text=True)
    assert "1 memory followed its moved code" in proc.stderr
    shown = json.loads(run_cli(repo, "show", mid, "--json")[1])
    assert [a["anchor"] for a in shown["anchors"]] == ["csvlite.py::render"] and shown["status"] == "fresh"
    # switched off: reported as moved instead
    (repo / ".gitmem" / "config.toml").write_text("[review]\nfollow_moves = false\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory followed; config")
    git(repo, "mv", "csvlite.py", "csv2.py")
    proc = subprocess.run(["git", "commit", "-qm", "rename again"], cwd=repo, capture_output=True, text=True)
    assert "moved with its code" in proc.stderr


def test_following_moves_never_stops_a_rebase(tmp_path: Path, run_cli) -> None:
    import subprocess

    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE, "other.txt": "1\n"})
    run_cli(repo, "init")
    code, out, _ = run_cli(repo, "remember", "render joins", "--anchor", "csvish.py::render", "--json")
    mid = json.loads(out)["id"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    git(repo, "checkout", "-q", "-b", "feat")
    git(repo, "mv", "csvish.py", "csvlite.py")
    git(repo, "commit", "-qm", "rename", "--no-verify")
    git(repo, "checkout", "--", ".")  # the hook may have re-anchored: start pick 2 from a clean tree
    mfile = repo / ".gitmem" / "memories" / f"{mid}.md"
    git(repo, "checkout", "-q", "HEAD", "--", str(mfile))
    mfile.write_text(mfile.read_text().replace("render joins", "render joins with commas"))
    git(repo, "commit", "-qam", "edit memory")
    git(repo, "checkout", "-q", "main")
    commit(repo, "unrelated", {"other.txt": "2\n"})
    git(repo, "checkout", "-q", "feat")
    proc = subprocess.run(["git", "rebase", "main"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_log_follows_a_renamed_file(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli)
    commit(repo, "memory")
    (repo / ".gitmem" / "config.toml").write_text("[review]\nfollow_moves = false\n")
    git(repo, "mv", "csvish.py", "csvlite.py")
    commit(repo, "rename")
    commit(repo, "parse strips",
           {"csvlite.py": CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")})
    rows = json.loads(run_cli(repo, "log", mid, "--json")[1])
    assert any(r["subject"] == "parse strips" and r["kind"] == "code" for r in rows)


def test_supersede_keeps_the_old_memory_s_tags_unless_given(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    code, out, _ = run_cli(repo, "remember", "parse splits on commas", "--anchor", "csvish.py::parse",
                           "--tag", "csv", "--tag", "separator", "--json")
    mid = json.loads(out)["id"]
    new = json.loads(run_cli(repo, "supersede", mid, "parse splits on semicolons", "--json")[1])["id"]
    assert json.loads(run_cli(repo, "show", new, "--json")[1])["tags"] == ["csv", "separator"]
    newer = json.loads(run_cli(repo, "supersede", new, "parse takes any separator", "--tag", "config",
                                "--json")[1])["id"]
    assert json.loads(run_cli(repo, "show", newer, "--json")[1])["tags"] == ["config"]
