"""The real Codex CLI, offline: ``codex exec`` against a scripted Responses API server on 127.0.0.1.

Opt-in: runs only when ``GITMEM_CODEX_BIN`` names the ``codex`` binary (codex-cli 0.169.0:
``npm install --prefix /tmp/codex-cli @openai/codex@0.169.0``, then
``GITMEM_CODEX_BIN=/tmp/codex-cli/node_modules/.bin/codex``). Each session takes a few seconds.

The evidence is what the model received (the server's request log): gitmem's context as
``developer`` messages at session start, per prompt and after a ``cat`` of a file; and after a
session that patched a file, a local memory of that edit, given to the next session when it
reads the file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents.codex_install import install
from testing.repos import commit, make_repo
from testing.responses_server import responses_server
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

CODEX = os.environ.get("GITMEM_CODEX_BIN", "")
pytestmark = pytest.mark.skipif(not (CODEX and os.access(CODEX, os.X_OK)),
                                reason="set GITMEM_CODEX_BIN to a codex-cli 0.169.0 binary")

PATCH = ("*** Begin Patch\n*** Update File: src/client.py\n@@ def fetch(url):\n"
         "-    resp = requests.get(url, timeout=10)\n+    resp = _get_with_retry(url, timeout=10)\n*** End Patch\n")
SCRIPT = [{"call": "exec_command", "arguments": {"cmd": "cat src/client.py"}},
          {"custom": "apply_patch", "input": PATCH},
          {"say": "Added `_get_with_retry`; fetch() uses it."}]


def codex_exec(repo: Path, home: Path, base_url: str, prompt: str) -> None:
    (home / "config.toml").write_text(
        f'model = "gpt-5.5"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
        f'base_url = "{base_url}"\nenv_key = "MOCK_API_KEY"\nwire_api = "responses"\n\n'
        f'[projects."{repo}"]\ntrust_level = "trusted"\n')
    proc = subprocess.run([CODEX, "exec", "--dangerously-bypass-approvals-and-sandbox",
                           "--dangerously-bypass-hook-trust", "--skip-git-repo-check", prompt],
                          cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, timeout=180,
                          env={**os.environ, "CODEX_HOME": str(home), "MOCK_API_KEY": "x"})
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]


def developer_texts(request: dict[str, Any]) -> list[tuple[int, str]]:
    """(position in the input, text) of every developer message of a request that came from gitmem."""
    out = []
    for i, item in enumerate(request.get("input") or []):
        if item.get("type") == "message" and item.get("role") == "developer":
            text = "".join(c.get("text", "") for c in item.get("content") or [])
            if text.startswith("# gitmem"):
                out.append((i, text))
    return out


def test_two_codex_sessions_get_and_make_memories(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    for i in range(12):  # newer memories elsewhere fill the session start, so files' memories come per file
        remember(run_cli, repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    install(repo)
    home = tmp_path / "codex-home"
    home.mkdir()
    # session 1: the prompt names the file; it reads it, patches it, finishes
    with responses_server(SCRIPT) as server:
        codex_exec(repo, home, server.base_url, "Add retry with exponential backoff to fetch() in src/client.py")
    first, last = server.requests[0], server.requests[-1]
    assert developer_texts(first), "no session-start context"
    assert any(mid in t for _, t in developer_texts(last)), "the file's memory never reached the model"
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"].startswith("Added `_get_with_retry`")
    # session 2: a prompt that names nothing; the `cat` of the file brings session 1's memory
    subprocess.run(["git", "checkout", "-q", "src/client.py"], cwd=repo, check=True)
    with responses_server(SCRIPT) as server:
        codex_exec(repo, home, server.base_url, "Please make the networking more robust")
    last = server.requests[-1]
    call = next(i for i, item in enumerate(last["input"]) if item.get("type") == "function_call")
    per_file = [(i, t) for i, t in developer_texts(last) if t.startswith("# gitmem: memories about src/client.py")]
    assert per_file and per_file[0][0] > call and m["id"] in per_file[0][1], json.dumps(developer_texts(last))[:2000]
    assert wait_for(lambda: spool_empty(repo), timeout=60)
    assert len(local_memories(repo)) == 2  # session 2's own edit, once


def test_codex_lists_the_mcp_server_of_a_trusted_project_only(tmp_path: Path) -> None:
    """``gitmem install codex`` writes ``[mcp_servers.gitmem]`` where codex 0.169.0 reads it: the project's
    ``.codex/config.toml``, once the project is trusted (``codex mcp list``, offline)."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    install(repo)
    home = tmp_path / "codex-home"
    home.mkdir()

    def listed() -> str:
        proc = subprocess.run([CODEX, "mcp", "list"], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=60, env={**os.environ, "CODEX_HOME": str(home)})
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        return proc.stdout.decode()

    assert "gitmem" not in listed()  # an untrusted project's config is not read
    (home / "config.toml").write_text(f'[projects."{repo}"]\ntrust_level = "trusted"\n')
    out = listed()
    assert "gitmem" in out and ": gitmem-mcp;" in out


def test_a_lost_patch_capture_is_recovered_from_the_rollout(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The apply_patch's PostToolUse hook never runs (as when ``codex exec`` exits first); the memory of the
    edit still appears: the consolidation reconciles the spool with Codex's rollout (``transcript_path``)."""
    from tests.test_transcripts import consolidate_log, lose_post_tool_hook

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    install(repo)
    lose_post_tool_hook(repo / ".codex" / "hooks.json", "PostToolUse", '"tool_name":"apply_patch"')
    home = tmp_path / "codex-home"
    home.mkdir()
    with responses_server(SCRIPT) as server:
        codex_exec(repo, home, server.base_url, "Add retry with exponential backoff to fetch() in src/client.py")
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: "reconciled with the transcript" in consolidate_log(repo) and spool_empty(repo),
                    timeout=60), consolidate_log(repo)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"].startswith("Added `_get_with_retry`")
    assert "reconciled with the transcript: 1 event added" in consolidate_log(repo)


def test_a_hostile_memory_reaches_the_model_fenced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A memory file a pull request filled with forged gitmem lines, a ``curl … | sh`` line and a fake frame tag
    reaches Codex's model (developer messages) fenced: its note quoted, nothing forged at the start of a line."""
    from tests.test_fence import assert_fenced_in_requests, hostile_memory

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    install(repo)
    mid, _ = hostile_memory(run_cli, repo)
    home = tmp_path / "codex-home"
    home.mkdir()
    with responses_server(SCRIPT) as server:
        codex_exec(repo, home, server.base_url, "Add retry with exponential backoff to fetch() in src/client.py")
    assert_fenced_in_requests(server.requests, mid)
