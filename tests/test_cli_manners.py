"""Issue 23, item 6: ``remember -`` reads standard input, ``gitmem log`` says each thing once, ``gitmem context``'s
deliveries count as uses in ``gitmem stats``, and a whole-file anchor on a file with symbols says it goes stale on any
change. Real repositories, the real CLI (a ``python -m gitmem`` process where standard input matters)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import layout, usage
from testing.repos import commit, git, make_repo

A_PY = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "code", {"src/a.py": A_PY, "notes.txt": "plain text\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def _gitmem(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_remember_dash_reads_the_text_from_standard_input(repo: Path, run_json) -> None:  # type: ignore[no-untyped-def]
    text = "Retries are capped at 3\n\nthe upstream rate-limits past that\n\n"
    proc = _gitmem(repo, "remember", "-", "--anchor", "src/a.py::f", "--json", stdin=text)
    assert proc.returncode == 0, proc.stderr
    mid = json.loads(proc.stdout)["id"]
    shown = run_json(repo, "show", mid)
    assert shown["title"] == "Retries are capped at 3"
    assert shown["body"] == "the upstream rate-limits past that"  # trailing blank lines dropped
    assert [m["title"] for m in run_json(repo, "list")] == ["Retries are capped at 3"]


def test_remember_dash_with_empty_standard_input_is_refused(repo: Path, run_json) -> None:  # type: ignore[no-untyped-def]
    proc = _gitmem(repo, "remember", "-", stdin="  \n")
    assert proc.returncode == 2 and "read no text from standard input" in proc.stderr
    assert run_json(repo, "list") == []


def test_remember_without_text_never_waits_on_an_open_standard_input(repo: Path) -> None:
    # an agent's shell may leave standard input open: no TEXT is a usage error, not a read
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "remember"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=60)  # stdin never closed by the writer before the answer
    finally:
        proc.kill()
    assert proc.returncode == 2 and "TEXT" in err


def test_log_says_memory_once(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "remember", "f returns one", "--anchor", "src/a.py::f")
    assert code == 0, err
    mid = out.strip()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "remember f")
    commit(repo, "change f", {"src/a.py": A_PY.replace("return 1", "return 11")})
    code, out, err = run_cli(repo, "log", mid)
    assert code == 0, err
    assert "memory written — remember f" in out and "memory memory" not in out
    assert "src/a.py::f: code changed — change f" in out
    code, out, _ = run_cli(repo, "log", mid, "--json")
    kinds = {(e["kind"], e["what"]) for e in json.loads(out)}
    assert ("memory", "memory written") in kinds  # the JSON keeps both fields


def test_context_deliveries_count_as_uses_in_stats(repo: Path, run_cli, run_json) -> None:  # type: ignore[no-untyped-def]
    mid = run_json(repo, "remember", "f returns one: callers count on it", "--anchor", "src/a.py::f")["id"]
    assert run_json(repo, "stats")["uses"]["given"] == 0
    res = run_json(repo, "context", "--file", "src/a.py")
    assert [m["id"] for m in res["memories"]] == [mid]
    records = usage.read(layout.of(repo).usage_log)[0]
    assert [(r["use"], r["via"], r["ids"]) for r in records] == [("given", "context", [mid])]
    st = run_json(repo, "stats")
    assert st["uses"]["given"] == 1 and st["most_used"][0]["id"] == mid and st["most_used"][0]["given"] == 1
    code, out, _ = run_cli(repo, "context", "--file", "src/a.py")  # the text form counts the same
    assert code == 0 and mid in out
    assert run_json(repo, "stats")["most_used"][0]["given"] == 2


def test_whole_file_anchor_on_a_file_with_symbols_says_it_goes_stale_on_any_change(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "remember", "a.py is the entry point", "--anchor", "src/a.py")
    assert code == 0 and out.strip()
    assert err.strip() == ("whole-file anchor: stale on any change in src/a.py; anchor a symbol with "
                           "src/a.py::NAME (gitmem symbols src/a.py)")
    code, out, err = run_cli(repo, "remember", "f returns one", "--anchor", "src/a.py::f")
    assert code == 0 and "whole-file" not in err  # a symbol anchor: no hint
    code, out, err = run_cli(repo, "remember", "notes are plain", "--anchor", "notes.txt")
    assert code == 0 and "whole-file" not in err  # no symbols in a .txt file: nothing better to offer
    code, out, err = run_cli(repo, "remember", "a.py again", "--anchor", "src/a.py", "--json")
    assert code == 0 and json.loads(out)["id"]
    assert "whole-file anchor" in json.loads(err.strip().splitlines()[-1])["note"]  # JSON mode: a note object


def test_an_empty_recall_query_is_a_usage_error(repo: Path) -> None:
    """An empty or blank query is refused (exit 2, what to do), not answered "no matches" as if searched."""
    for query in ("", "   "):
        proc = _gitmem(repo, "recall", query)
        assert proc.returncode == 2, proc
        assert "the query is empty" in proc.stderr and "no matches" not in proc.stdout


def test_context_says_when_a_given_file_does_not_exist(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A file the task will create is a fair focus (exit 0), but a typo is said on stderr, not passed over."""
    assert run_cli(repo, "remember", "f returns one", "--anchor", "src/a.py::f")[0] == 0
    proc = _gitmem(repo, "context", "--file", "src/a.py", "--file", "src/nope.py", "--prompt", "fix it")
    assert proc.returncode == 0, proc.stderr
    assert "src/nope.py does not exist (yet)" in proc.stderr and "a.py does not" not in proc.stderr
    assert "f returns one" in proc.stdout
