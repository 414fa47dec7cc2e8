"""The memory-file merge driver, through real git merges of two branches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gitmem.memfile import read
from testing.repos import commit, git, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _repo(tmp_path: Path, run_cli) -> tuple[Path, str, Path]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    assert "merge=gitmem" in (repo / ".gitmem" / ".gitattributes").read_text()
    code, out, _ = run_cli(repo, "remember", "parse splits on commas", "--anchor", "csvish.py::parse", "--tag", "csv",
                           "--json")
    mid = json.loads(out)["id"]
    commit(repo, "memory")
    return repo, mid, repo / ".gitmem" / "memories" / f"{mid}.md"


def _edit(path: Path, **changes: object) -> None:
    from gitmem.memfile import write

    m = read(path)[0]
    for k, v in changes.items():
        setattr(m, k, v)
    write(path, m)


def test_tags_and_anchors_merge_as_a_union(tmp_path: Path, run_cli) -> None:
    repo, mid, path = _repo(tmp_path, run_cli)
    git(repo, "checkout", "-q", "-b", "a")
    run_cli(repo, "remember", "x", "--anchor", "csvish.py::render")  # another memory, to change nothing here
    m = read(path)[0]
    from gitmem.anchors import Resolver
    from gitmem.git import WORKTREE, Repo

    render = Resolver(Repo(repo)).make("csvish.py", "render", WORKTREE)
    _edit(path, tags=[*m.tags, "parsing"], anchors=[*m.anchors, render], updated="2030-01-01T00:00:00Z")
    commit(repo, "a: tag and anchor")
    git(repo, "checkout", "-q", "main")
    _edit(path, tags=[*m.tags, "io"], title="parse splits on commas only", updated="2030-01-02T00:00:00Z")
    commit(repo, "main: tag and title")
    proc = subprocess.run(["git", "merge", "-q", "--no-edit", "a"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    merged = read(path)[0]
    assert merged.tags == ["csv", "io", "parsing"]
    assert [a.key for a in merged.anchors] == ["csvish.py::parse", "csvish.py::render"]
    assert merged.title == "parse splits on commas only" and merged.updated == "2030-01-02T00:00:00Z"


def test_both_rewrite_the_body_conflict_named_by_doctor(tmp_path: Path, run_cli) -> None:
    repo, mid, path = _repo(tmp_path, run_cli)
    git(repo, "checkout", "-q", "-b", "a")
    _edit(path, body="Quoted fields are not supported.", tags=["csv", "quoting"])
    commit(repo, "a: body")
    git(repo, "checkout", "-q", "main")
    _edit(path, body="Semicolons are next.")
    commit(repo, "main: body")
    proc = subprocess.run(["git", "merge", "-q", "--no-edit", "a"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode != 0 and "CONFLICT" in proc.stdout + proc.stderr
    text = path.read_text()
    assert "<<<<<<< ours\nSemicolons are next.\n=======\nQuoted fields are not supported.\n>>>>>>> theirs" in text
    assert "- quoting" in text  # the front matter merged anyway
    code, out, _ = run_cli(repo, "doctor", "--json")
    assert code == 1
    assert any(c["level"] == "error" and f"{mid}.md" in c["message"] and "conflict" in c["message"]
               for c in json.loads(out)["checks"])


def test_a_fact_removed_on_one_side_stays_removed(tmp_path: Path, run_cli) -> None:
    repo, mid, path = _repo(tmp_path, run_cli)
    _edit(path, facts=["right fact", "wrong fact"])
    commit(repo, "facts")
    git(repo, "checkout", "-q", "-b", "a")
    _edit(path, facts=["right fact"])
    commit(repo, "a: drop the wrong fact")
    git(repo, "checkout", "-q", "main")
    _edit(path, body="New body.")
    commit(repo, "main: body")
    assert subprocess.run(["git", "merge", "-q", "--no-edit", "a"], cwd=repo).returncode == 0
    merged = read(path)[0]
    assert merged.facts == ["right fact"] and merged.body == "New body."
