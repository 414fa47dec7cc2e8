"""``gitmem check --base``: a branch that rewrites anchored code without touching the memory fails; fixes pass."""

from __future__ import annotations

import json
from pathlib import Path

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
    (line,) = out.strip().splitlines()
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
