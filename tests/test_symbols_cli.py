"""``gitmem symbols PATH``: a file's symbols as gitmem names them, on real repositories; and ``list`` naming an
anchor where its code is now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.repos import commit, make_repo

PY = "class Client:\n    def fetch(self, url):\n        return url\n\n\ndef helper():\n    return 1\n"
YML = "production:\n  pool: 5\n  host: db\ndevelopment:\n  pool: 2\n"
WORKFLOW = ("on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Test\n"
            "        run: make test\n")
RUNBOOK = "# Deploy\n\nship it\n\n## Rollback\n\nrevert the tag\n\n# Monitoring\n\nwatch\n"
HPP = ("namespace ns {\nclass A {\n public:\n  int f(int x) const;\n  int f(const char* s);\n  A();\n};\n"
       "}  // namespace ns\n")


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:
    root = make_repo(tmp_path / "r")
    commit(root, "init", {"src/client.py": PY, "config/database.yml": YML, ".github/workflows/ci.yml": WORKFLOW,
                          "docs/runbook.md": RUNBOOK, "include/a.hpp": HPP, "notes.txt": "hello\n"})
    assert run_cli(root, "init", "--no-hooks")[0] == 0
    return root


def _symbols(run_cli, cwd: Path, *args: str) -> dict:
    code, out, err = run_cli(cwd, "symbols", *args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    return doc


def test_a_python_file_lists_names_kinds_lines_and_memory_counts(repo: Path, run_cli) -> None:
    for spec in ("src/client.py::Client.fetch", "src/client.py::Client.fetch", "src/client.py"):
        assert run_cli(repo, "remember", f"about {spec}", "--anchor", spec)[0] == 0
    doc = _symbols(run_cli, repo, "src/client.py")
    assert doc["path"] == "src/client.py" and doc["language"] == "python" and doc["file_memories"] == 1
    got = [(s["name"], s["kind"], s["start_line"], s["end_line"], s["memories"]) for s in doc["symbols"]]
    assert got == [("Client", "class", 1, 3, 0), ("Client.fetch", "method", 2, 3, 2), ("helper", "function", 6, 7, 0)]
    assert doc["symbols"][1]["anchor"] == "src/client.py::Client.fetch"
    code, out, _ = run_cli(repo / "src", "symbols", "client.py")  # relative to the current folder, like git
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "src/client.py (python): 3 symbols; 1 memory on the whole file"
    assert lines[2].split() == ["2-3", "method", "Client.fetch", "(2", "memories)"]
    assert "--anchor src/client.py::NAME" in lines[-1]
    # every name listed is one an anchor takes
    for s in doc["symbols"]:
        assert run_cli(repo, "remember", "x y z", "--anchor", s["anchor"])[0] == 0


def test_yaml_keys_and_ci_jobs_are_listed_as_anchors_take_them(repo: Path, run_cli) -> None:
    doc = _symbols(run_cli, repo, "config/database.yml")
    assert [(s["name"], s["kind"]) for s in doc["symbols"]][:3] == [
        ("production", "key"), ("production.pool", "key"), ("production.host", "key")]
    assert doc["language"] == "yaml"
    ci = {s["name"]: s for s in _symbols(run_cli, repo, ".github/workflows/ci.yml")["symbols"]}
    assert ci["jobs.build"]["kind"] == "job"
    step = next(n for n in ci if n.startswith("jobs.build.steps[") and n.count(".") == 2)
    assert run_cli(repo, "remember", "the test step runs make", "--anchor", f".github/workflows/ci.yml::{step}")[0] == 0
    assert {s["name"]: s["memories"] for s in _symbols(run_cli, repo, ".github/workflows/ci.yml")["symbols"]}[
        step] == 1


def test_markdown_sections_are_listed_with_their_nested_names(repo: Path, run_cli) -> None:
    doc = _symbols(run_cli, repo, "docs/runbook.md")
    sections = {s["name"]: s for s in doc["symbols"]}
    assert all(s["kind"] == "section" for s in doc["symbols"])
    rollback = next(s for s in doc["symbols"] if s["name"] == "Deploy.Rollback" or "Deploy.Rollback" in s["aliases"])
    assert rollback["start_line"] == 5 and rollback["end_line"] in (7, 8)
    assert "Deploy" in sections and "Monitoring" in sections
    code, out, _ = run_cli(repo, "symbols", "docs/runbook.md")
    assert code == 0 and "Deploy.Rollback" in out
    assert run_cli(repo, "remember", "rollback reverts", "--anchor", "docs/runbook.md::Deploy.Rollback")[0] == 0
    assert next(s for s in _symbols(run_cli, repo, "docs/runbook.md")["symbols"]
                if s["name"] == rollback["name"])["memories"] == 1


def test_a_cpp_header_lists_overloads_by_parameter_types(repo: Path, run_cli) -> None:
    doc = _symbols(run_cli, repo, "include/a.hpp")
    kinds = {s["name"]: s["kind"] for s in doc["symbols"]}
    assert kinds["ns"] == "namespace" and kinds["ns.A"] == "class"
    overloads = sorted(n for n in kinds if n.startswith("ns.A.f("))
    assert len(overloads) == 2 and all(kinds[n] == "method" for n in overloads)
    assert any("int" in n and "char" not in n for n in overloads) and any("const char*" in n for n in overloads)
    for name in overloads:  # the names listed are the names an anchor takes
        code, out, err = run_cli(repo, "remember", "f is cheap enough", "--anchor", f"include/a.hpp::{name}", "--json")
        assert code == 0, err
        assert json.loads(out)["anchors"][0]["symbol"] == name


def test_a_revision_lists_the_file_as_it_was(repo: Path, run_cli) -> None:
    commit(repo, "more", {"src/client.py": PY + "\n\ndef later():\n    return 2\n"})
    now = [s["name"] for s in _symbols(run_cli, repo, "src/client.py")["symbols"]]
    before = _symbols(run_cli, repo, "src/client.py", "--rev", "HEAD~1")
    assert "later" in now and "later" not in [s["name"] for s in before["symbols"]]
    assert before["rev"] == "HEAD~1"


def test_a_file_without_symbol_support_says_so_with_the_types_that_have(repo: Path, run_cli) -> None:
    code, out, err = run_cli(repo, "symbols", "notes.txt")
    assert code == 1 and out == ""
    first, hint = err.splitlines()
    assert first.startswith("error: notes.txt: no symbol support for this file type")
    assert "--anchor notes.txt" in first
    assert hint.startswith("hint: symbols are found in") and " .py " in hint and " .yml " in hint and ".md" in hint
    code, _, err = run_cli(repo, "symbols", "notes.txt", "--json")
    assert code == 1 and "no symbol support" in json.loads(err)["error"]


def test_a_missing_file_names_the_closest_paths(repo: Path, run_cli) -> None:
    code, out, err = run_cli(repo, "symbols", "src/clent.py")
    assert code == 1 and out == ""
    assert "no file src/clent.py in the working tree" in err and "closest: src/client.py" in err
    code, _, err = run_cli(repo, "symbols", "src/client.py", "--rev", "no-such-rev")
    assert code == 1 and "no-such-rev" in err


def test_list_names_an_anchor_where_its_code_is_now_like_show(repo: Path, run_cli) -> None:
    """A memory anchored on ``A.g`` before an overload was added: ``list`` says where it is now, as ``show``."""
    one = "namespace ns {\nclass A {\n public:\n  int g(int* p) const;\n};\n}  // namespace ns\n"
    commit(repo, "g", {"include/b.hpp": one})
    code, out, err = run_cli(repo, "remember", "g reads through p", "--anchor", "include/b.hpp::ns.A.g", "--json")
    assert code == 0, err
    mid, recorded = json.loads(out)["id"], json.loads(out)["anchors"][0]["symbol"]
    commit(repo, "overload", {"include/b.hpp": one.replace("  int g(int* p) const;\n",
                                                           "  int g(int* p) const;\n  int g(long n);\n")})
    now = {s["name"] for s in _symbols(run_cli, repo, "include/b.hpp")["symbols"]} - {"ns", "ns.A"}
    assert recorded not in now and len(now) == 2
    shown = json.loads(run_cli(repo, "show", mid, "--json")[1])["anchor_statuses"][0]
    assert shown["symbol_now"] in now and "int*" in shown["symbol_now"]
    code, out, _ = run_cli(repo, "list")
    line = next(ln for ln in out.splitlines() if ln.startswith(mid))
    assert f"include/b.hpp::{recorded} → include/b.hpp::{shown['symbol_now']}" in line
    code, out, _ = run_cli(repo, "show", mid)
    assert f"→ include/b.hpp::{shown['symbol_now']}" in out
    listed = next(m for m in json.loads(run_cli(repo, "list", "--json")[1]) if m["id"] == mid)
    assert listed["anchor_statuses"][0]["symbol_now"] == shown["symbol_now"]
    # symbols counts the memory on the name its code has now
    assert {s["name"]: s["memories"] for s in _symbols(run_cli, repo, "include/b.hpp")["symbols"]}[
        shown["symbol_now"]] == 1


def test_a_wrong_name_at_remember_points_to_gitmem_symbols(repo: Path, run_cli) -> None:
    code, _, err = run_cli(repo / "src", "remember", "fetch retries", "--anchor", "client.py::Client.fetsh")
    assert code == 1 and "no symbol Client.fetsh" in err
    hint = next(ln for ln in err.splitlines() if ln.startswith("hint:"))
    assert "Client.fetch" in hint and hint.endswith("gitmem symbols client.py lists every name")
    code, _, err = run_cli(repo, "remember", "x y z", "--anchor", "include/a.hpp::ns::A::g")
    assert code == 1 and "gitmem symbols include/a.hpp lists every name" in err
    for spec in ("src/clent.py", "notes.txt::hello", "src/clent.py::fetch"):  # not a wrong name: no pointer
        code, _, err = run_cli(repo, "remember", "x y z", "--anchor", spec)
        assert code == 1 and "gitmem symbols" not in err, err
