"""Issue 25, round 2 (break lane): what the merged work did wrong on hostile or odd input, one test per finding.

Real git repositories in temp dirs, the real CLI in a subprocess where a hang is the failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.rank import mentions as M
from testing.repos import commit, make_repo

APP = '''\
class Session:
    def send(self, req):
        return req


def parse_config(path):
    return {}
'''


def _gitmem(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITMEM_NO_DAEMON": "1"}
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, env=env, text=True,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def app_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    assert _gitmem(repo, "init").returncode == 0
    made = _gitmem(repo, "remember", "config order is env > yaml", "--anchor", "src/app.py::parse_config")
    assert made.returncode == 0, made.stderr
    commit(repo, "memories")
    return repo


# -- a prompt holding a long run of non-space characters (a pasted blob, a minified line) -------------------------

@pytest.mark.parametrize("run", ["x" * 100_000, "a." * 50_000, "a$" * 50_000, "a:" * 50_000, "_" * 100_000,
                                 "`" + "a" * 100_000, ("a$" * 127 + " ") * 400])
def test_long_runs_read_in_linear_time(run: str) -> None:
    """Each expression once retried a whole run from every position of it: 20,000 characters took 15 s, 100,000
    minutes. Run in a subprocess with a limit far above the linear cost (well under a second)."""
    code = ("import sys; from gitmem.rank.mentions import read_prompt; "
            "r = read_prompt(sys.stdin.read(), {'src/app.py'}); print(len(r.identifiers))")
    subprocess.run([sys.executable, "-c", code], input=run + " see src/app.py", text=True, check=True,
                   capture_output=True, timeout=60)


def test_reading_unchanged_by_the_long_run_guard() -> None:
    blob = "QUJD" * 100  # 400 characters of base64: dropped
    r = M.read_prompt(f"fix $foo_bar and `obj.meth` in a/b.py::Foo, then {blob} Session.request(", {"a/b.py"})
    assert r.identifiers == ["foo_bar", "obj.meth", "Session.request"]
    assert r.qualified == [("a/b.py", "Foo")] and r.paths == {"a/b.py"}
    assert not any(len(w) > M.MAX_RUN_CHARS for w in r.words)


def test_many_paths_named_against_many_files() -> None:
    """A path named by its suffix was looked up by a scan of every file: 3,000 named of 20,000 took 24 s."""
    paths = {f"pkg/mod{i}/file{i}.py" for i in range(20_000)} | {"a/auth/jwt.py", "b/auth/jwt.py"}
    r = M.read_prompt(" ".join(f"mod{i}/file{i}.py" for i in range(3_000)) + " auth/jwt.py", paths)
    assert len(r.paths) == 3_000 and "a/auth/jwt.py" not in r.paths  # an ambiguous suffix names nothing


def test_cli_context_with_a_pasted_blob(app_repo: Path) -> None:
    out = _gitmem(app_repo, "context", "--file", "src/app.py", "--prompt", "fix parse_config " + "x" * 100_000,
                  timeout=60)
    assert out.returncode == 0, out.stderr
    assert "config order is env > yaml" in out.stdout


# -- a file of 22,000 symbols, every method edited ----------------------------------------------------------------

def test_context_over_a_file_of_many_changed_members(tmp_path: Path) -> None:
    """Each changed container looked for its members by scanning the whole table (and split the whole file
    into lines again): 11,000 symbols all changed took 83 s, 22,000 four times that. Linear now: a sorted
    index of the names per table, the file's lines split once."""
    big = "\n".join(f"class C{c}:\n" + "".join(f"    def m{m}(self):\n        return {m}\n\n" for m in range(10))
                    for c in range(2000))
    repo = make_repo(tmp_path / "repo", {"big.py": big})
    assert _gitmem(repo, "init").returncode == 0
    for c in (1, 2):
        assert _gitmem(repo, "remember", f"note on C{c}.m{c}", "--anchor", f"big.py::C{c}.m{c}").returncode == 0
    commit(repo, "memories")
    (repo / "big.py").write_text(big.replace("        return ", "        return 1 + "))
    out = _gitmem(repo, "context", timeout=90)
    assert out.returncode == 0, out.stderr
    assert "note on C1.m1" in out.stdout and "note on C2.m2" in out.stdout


def test_members_of_a_large_table_in_table_order() -> None:
    from gitmem.code import contain
    from gitmem.model import Symbol

    def sym(name: str, a: int, b: int) -> Symbol:
        return Symbol(name=name, kind="method", start_line=a, end_line=b, fingerprint="f")

    table = {"Z": sym("Z", 1, 500)}
    table.update({f"Z.m{i}": sym(f"Z.m{i}", 2 + i, 2 + i) for i in range(200, 100, -1)})
    table["Za.x"] = sym("Za.x", 3, 3)  # a prefix of the name, not a member
    table.update({f"Y{i}": sym(f"Y{i}", 600 + i, 600 + i) for i in range(100)})
    got = [s.name for s in contain.members(table, "Z")]
    assert got == [f"Z.m{i}" for i in range(200, 100, -1)]
