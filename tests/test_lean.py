"""A lean install (``pip install gitmem-cli``, no ``all`` extra) works where it should, refuses in one line elsewhere.

Every ``gitmem`` here runs in a subprocess that sees only the lean install's distributions (``testing.lean``: the
venv's site-packages swapped for a view of what ``[project] dependencies`` installs), so ``import lancedb``,
``import mcp`` … fail as they do on a machine without the extra; the git hooks ``gitmem init`` installs run the
same way (they inherit the environment). On a real repository: init, remember, a commit that makes a memory
stale, ``stale``, ``check``, ``recall`` and ``context`` (BM25, labelled), ``sync``, ``doctor``; the warm process
answers searches with BM25 too; ``gitmem mcp`` and the ``org`` commands that need LanceDB exit 2 with one line
naming what is missing and the command that installs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.lean import all_only, lean_env
from testing.repos import git, make_repo

NET_PY = "def retry_after(header):\n    return int(header) * 1000\n\n\ndef backoff(n):\n    return 2 ** n\n"
#: What the one-line refusal must name (``extras.install_command``: a plain venv install here).
INSTALL = 'gitmem-cli[all]'


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return lean_env(tmp_path_factory.mktemp("lean-site"))


def run(cwd: Path, lean: dict[str, str], *args: str, env: dict[str, str] | None = None,
        stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m gitmem ARGS`` in ``cwd`` as a lean install runs it."""
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=cwd, capture_output=True, text=True,
                          input=stdin, timeout=120, env={**os.environ, **lean, **(env or {})})


def lean_git(repo: Path, lean: dict[str, str], *args: str) -> str:
    """git in ``repo`` with the lean environment: its hooks run gitmem as a lean install."""
    return git(repo, *args, env=lean)


def test_the_view_hides_the_all_extra_and_keeps_the_base(lean: dict[str, str], tmp_path: Path) -> None:
    """The simulation is a real import failure: ``ModuleNotFoundError``, ``find_spec`` None, metadata absent."""
    assert {"lancedb", "pyarrow", "numpy", "mcp", "openai", "pydantic"} <= all_only()
    code = ("import importlib.util, importlib.metadata as md\n"
            "for m in ('lancedb', 'pyarrow', 'numpy', 'wordllama', 'tokenizers', 'safetensors', 'openai', 'mcp',"
            " 'obstore', 'pydantic'):\n"
            "    assert importlib.util.find_spec(m) is None, m\n"
            "    try:\n        __import__(m)\n    except ModuleNotFoundError as e:\n        assert e.name == m\n"
            "    else:\n        raise SystemExit(m + ' imported')\n"
            "import yaml, click, tree_sitter_language_pack, filelock, ulid, tomlkit, pygments, gitmem.cli\n"
            "try:\n    md.version('lancedb')\nexcept md.PackageNotFoundError:\n    print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **lean})
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


@pytest.fixture
def repo(tmp_path: Path, lean: dict[str, str]) -> Path:
    """A repository initialised by a lean gitmem (its git hooks installed), with a first commit of ``src/net.py``."""
    r = make_repo(tmp_path / "project", {"src/net.py": NET_PY})
    p = run(r, lean, "init")
    assert p.returncode == 0, p.stderr
    return r


def test_a_lean_install_does_the_daily_work(repo: Path, lean: dict[str, str]) -> None:
    p = run(repo, lean, "remember", "retry_after returns milliseconds: the gateway sends seconds",
            "--anchor", "src/net.py::retry_after")
    assert p.returncode == 0, p.stderr
    mid = p.stdout.strip()
    lean_git(repo, lean, "add", "-A")
    lean_git(repo, lean, "commit", "-qm", "remember the retry unit")
    lean_git(repo, lean, "checkout", "-qb", "feature")
    (repo / "src/net.py").write_text(NET_PY.replace("* 1000", "* 1000 + 1"))
    lean_git(repo, lean, "commit", "-qam", "change retry_after")  # the post-commit hook re-checks, as a lean install

    stale = run(repo, lean, "stale", "--list")
    assert stale.returncode == 0 and mid in stale.stdout and "stale" in stale.stdout, stale.stderr
    check = run(repo, lean, "check", "--base", "main")
    assert check.returncode == 1 and mid in check.stdout and check.stdout.startswith("stale:"), check.stderr
    assert "Traceback" not in check.stderr

    recall = run(repo, lean, "recall", "gateway seconds")
    assert recall.returncode == 0 and mid in recall.stdout, recall.stderr
    notes = [ln for ln in recall.stderr.splitlines() if "BM25" in ln]
    assert len(notes) == 1 and "numpy is not installed" in notes[0] and INSTALL in notes[0], recall.stderr
    hits = json.loads(run(repo, lean, "recall", "--json", "gateway seconds").stdout)
    assert [h["id"] for h in hits] == [mid]
    assert hits[0]["search"] == "bm25" and hits[0]["fts_rank"] == 1 and hits[0]["vector_rank"] is None
    assert run(repo, lean, "recall", "nothing-like-this").stdout.strip() == "no matches"

    ctx = run(repo, lean, "context", "--prompt", "why does the gateway retry in seconds")
    assert ctx.returncode == 0 and mid in ctx.stdout, ctx.stderr
    assert len([ln for ln in ctx.stderr.splitlines() if "BM25" in ln]) == 1
    doc = json.loads(run(repo, lean, "context", "--json", "--prompt", "gateway seconds").stdout)
    assert doc["search"] == "bm25" and mid in doc["detailed"] + doc["indexed"]
    assert json.loads(run(repo, lean, "context", "--json", "--file", "src/net.py").stdout)["search"] is None

    sync = json.loads(run(repo, lean, "sync", "--json").stdout)
    assert sync["index"] is False and sync["catalog"] == 1 and sync["search"] == "bm25"
    checks = json.loads(run(repo, lean, "doctor", "--json").stdout)["checks"]
    extra = [c for c in checks if c["name"] == "extras"]
    assert extra and extra[0]["level"] == "warn" and "lean install" in extra[0]["message"], checks
    assert INSTALL in extra[0]["hint"]
    assert not [c for c in checks if c["name"] == "index"]  # no vectors to check, none claimed

    hook_log = (repo / ".git/gitmem/logs/hooks.log").read_text()
    assert " post-commit ok " in hook_log and " pre-commit ok " in hook_log  # the git hooks ran, lean
    assert "Traceback" not in hook_log and " ERROR " not in hook_log


@pytest.mark.parametrize("args", [["mcp"], ["mcp", "--repo", "."], ["org", "index"], ["org", "status"],
                                  ["org", "remove", "ledger"], ["recall", "--org", "retry"]],
                         ids=lambda a: " ".join(a))
def test_what_needs_the_all_extra_says_so_in_one_line(repo: Path, lean: dict[str, str], args: list[str]) -> None:
    p = run(repo, lean, *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"error: gitmem {args[0]}") and "`all` extra" in lines[0]
    assert "is not installed" in lines[0] and INSTALL in lines[0]
    assert p.stdout == ""


def test_the_refusal_in_json_mode_is_a_json_error(repo: Path, lean: dict[str, str]) -> None:
    p = run(repo, lean, "org", "status", "--json")
    assert p.returncode == 2
    err = json.loads(p.stderr)
    assert "lancedb is not installed" in err["error"] and INSTALL in err["error"]


def test_the_warm_process_searches_with_bm25_on_a_lean_install(repo: Path, lean: dict[str, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A lean warm process starts (no index opened) and answers ``search`` with the catalog's BM25 hits."""
    from gitmem import layout
    from gitmem.daemon import client
    from tests.test_claude_hooks import wait_for

    mid = run(repo, lean, "remember", "backoff doubles per attempt", "--anchor", "src/net.py::backoff").stdout.strip()
    lay = layout.of(repo)
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)  # this process talks to it
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    proc = subprocess.Popen([sys.executable, "-m", "gitmem.daemon", "--warm", str(repo)], cwd=repo,
                            env={**env, **lean}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: client.request(lay, "status", {}, timeout_s=5, start=False) is not None,
                        timeout=60), client.server_log().read_text() if client.server_log().exists() else "no log"
        reply = client.request(lay, "search", {"query": "backoff attempt", "limit": 5}, timeout_s=10, start=False)
        assert reply is not None and reply["mode"] == "bm25"
        assert [h["id"] for h in reply["hits"]] == [mid] and reply["hits"][0]["vector_rank"] is None
        warm = run(repo, lean, "recall", "--json", "backoff attempt", env={"GITMEM_NO_DAEMON": ""})
        assert [h["id"] for h in json.loads(warm.stdout)] == [mid] and warm.returncode == 0, warm.stderr
    finally:
        client.stop(lay)
        proc.wait(timeout=60)


def test_the_agent_hooks_work_on_a_lean_install(repo: Path, lean: dict[str, str]) -> None:
    """Claude Code's hooks as a lean install runs them: the session start gives the memories, the prompt hook finds
    one by the prompt's words (BM25 over the catalog), the before-edit hook names the memory of the file."""
    from tests.test_claude_hooks import context_of, fixture

    mid = run(repo, lean, "remember", "retry_after returns milliseconds: the gateway sends seconds",
              "--anchor", "src/net.py::retry_after", "--type", "constraint").stdout.strip()

    def hook(event: dict[str, object]) -> str:
        proc = subprocess.run([sys.executable, "-c", "from gitmem.integrations.agents.claude import main; main()"],
                              cwd=repo, input=json.dumps(event), capture_output=True, text=True, timeout=120,
                              env={**os.environ, **lean})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        return proc.stdout

    assert mid in context_of(hook(fixture("SessionStart", repo, session_id="lean")), "SessionStart")
    prompt = fixture("UserPromptSubmit", repo, session_id="lean-2",
                     prompt="Why does the gateway retry in seconds and not milliseconds?")
    assert mid in context_of(hook(prompt), "UserPromptSubmit")
    edit = fixture("PreToolUse.Edit", repo, session_id="lean-3",
                   tool_input={"file_path": str(repo / "src/net.py"), "old_string": "1000", "new_string": "1"})
    assert mid in hook(edit)


@pytest.mark.parametrize(("marker", "command"), [
    ("uv-receipt.toml", 'uv tool install --reinstall "gitmem-cli[all]"'),
    ("pipx_metadata.json", 'pipx install --force "gitmem-cli[all]"'),
    (None, 'pip install "gitmem-cli[all]"'),
])
def test_the_fix_names_the_installer_in_use(tmp_path: Path, marker: str | None, command: str) -> None:
    """``extras.install_command`` for an environment made by ``uv tool`` (its receipt), pipx (its metadata), else
    pip: a real venv with the marker file, gitmem imported from this checkout (``extras`` is standard library)."""
    venv = tmp_path / "tool-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    if marker:
        (venv / marker).write_text("")
    root = Path(__file__).resolve().parent.parent
    code = f"import sys; sys.path.insert(0, {str(root)!r}); from gitmem import extras; print(extras.install_command())"
    proc = subprocess.run([str(venv / "bin/python"), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == command, proc.stderr
