"""The real GitHub Copilot CLI, offline: ``copilot -p`` against a scripted Chat Completions server on 127.0.0.1.

Opt-in: runs only when ``GITMEM_COPILOT_BIN`` names the ``copilot`` binary (Copilot CLI 1.0.102:
``npm install --prefix /tmp/copilot-cli @github/copilot@1.0.102``, then
``GITMEM_COPILOT_BIN=/tmp/copilot-cli/node_modules/.bin/copilot``). No GitHub login: a custom
provider (``COPILOT_OFFLINE``, ``COPILOT_PROVIDER_BASE_URL``, ...). ``XDG_CACHE_HOME`` is kept
(``GITMEM_COPILOT_CACHE`` overrides it): a fresh cache unpacks 235 MB on every run.

The evidence is what the model received (the server's request log): gitmem's session-start
context in the first user message, the file's memories in the user message Copilot adds right
after the ``view`` of that file, each once although gitmem's Claude Code hooks (which Copilot
also runs) are installed too; and after the session, a local memory of its edit.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import claude_install, copilot_install
from testing.chat_completions_server import chat_completions_server
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

COPILOT = os.environ.get("GITMEM_COPILOT_BIN", "")
pytestmark = pytest.mark.skipif(not (COPILOT and os.access(COPILOT, os.X_OK)),
                                reason="set GITMEM_COPILOT_BIN to a Copilot CLI 1.0.102 binary")


def copilot_p(repo: Path, home: Path, base_url: str, prompt: str) -> None:
    cache = os.environ.get("GITMEM_COPILOT_CACHE") or os.environ.get("XDG_CACHE_HOME") \
        or os.path.expanduser("~/.cache")
    env = {**os.environ, "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": base_url,
           "COPILOT_PROVIDER_API_KEY": "x", "COPILOT_MODEL": "claude-sonnet-4.5", "COPILOT_ALLOW_ALL": "true",
           "COPILOT_HOME": str(home), "XDG_CACHE_HOME": cache}
    proc = subprocess.run([COPILOT, "-p", prompt, "--no-auto-update", "--no-ask-user"], cwd=repo,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=240, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr).decode()[-2000:]


def text_of(message: dict[str, Any]) -> str:
    c = message.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c if isinstance(c, str) else ""


def test_copilot_session_gets_and_makes_memories_once(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch", mtype="discovery")
    time.sleep(1.1)  # creation times are to the second: the notes below are strictly newer
    for i in range(12):  # newer memories elsewhere fill the session start, so the file's memory comes with the read
        remember(run_cli, repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    copilot_install.install(repo)
    claude_install.install(repo)  # Copilot runs these too: gitmem must still act once
    home = tmp_path / "copilot-home"
    home.mkdir()
    client = str(repo / "src" / "client.py")
    script = [{"call": "view", "arguments": {"path": client}},
              {"call": "edit", "arguments": {"path": client, "old_str": "    resp = requests.get(url, timeout=10)\n",
                                             "new_str": "    resp = _get_with_retry(url, timeout=10)\n"}},
              {"say": "Added `_get_with_retry`; fetch() uses it."}]
    with chat_completions_server(script) as server:
        copilot_p(repo, home, server.base_url, "Carry on.")
    main = [r for r in server.requests if r.get("tools")]
    first, last = main[0], main[-1]
    opening = [text_of(m) for m in first["messages"] if m.get("role") == "user"]
    assert any("# gitmem" in t for t in opening), json.dumps(opening)[:2000]
    assert all(t.count("# gitmem") <= 1 for t in opening), "the session start was injected twice"
    msgs = last["messages"]
    view = next(i for i, m in enumerate(msgs) if m.get("role") == "tool")
    after = [text_of(m) for m in msgs[view + 1:] if m.get("role") == "user"]
    per_file = [t for t in after if "# gitmem: memories about src/client.py" in t]
    assert per_file and mid in per_file[0], json.dumps([text_of(m) for m in msgs])[:3000]
    assert sum(text_of(m).count("# gitmem: memories about src/client.py") for m in msgs) == 1, \
        "the file's memories reached the model more than once"
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]


def test_user_level_install_reaches_a_session(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """``gitmem install copilot --user``: Copilot CLI 1.0.102 runs ``$COPILOT_HOME/hooks/gitmem.json`` (the
    session-start context reaches the model) and lists ``$COPILOT_HOME/mcp-config.json``'s server."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch", mtype="discovery")
    home = tmp_path / "copilot-home"
    copilot_install.install(None, user=True, home=home)
    with chat_completions_server([{"say": "Nothing to do."}]) as server:
        copilot_p(repo, home, server.base_url, "Carry on.")
    first = next(r for r in server.requests if r.get("tools"))
    opening = [text_of(m) for m in first["messages"] if m.get("role") == "user"]
    assert any("# gitmem" in t and mid in t for t in opening), json.dumps(opening)[:2000]
    proc = subprocess.run([COPILOT, "mcp", "list"], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=60, env={**os.environ, "COPILOT_HOME": str(home)})
    assert proc.returncode == 0 and "gitmem" in proc.stdout.decode(), proc.stdout.decode()[-1000:]


def test_a_lost_edit_capture_and_the_final_message_come_from_the_transcript(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The edit's postToolUse hook never runs (as when ``copilot -p`` exits first), and agentStop carries no
    final message; the memory of the edit still appears, its body Copilot's final message: the consolidation
    reconciles the spool with Copilot's events.jsonl (agentStop's ``transcriptPath``)."""
    from tests.test_transcripts import consolidate_log, lose_post_tool_hook

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    copilot_install.install(repo)
    lose_post_tool_hook(repo / ".github" / "hooks" / "gitmem.json", "postToolUse", '"toolName":"edit"')
    home = tmp_path / "copilot-home"
    home.mkdir()
    client = str(repo / "src" / "client.py")
    script = [{"call": "view", "arguments": {"path": client}},
              {"call": "edit", "arguments": {"path": client, "old_str": "    resp = requests.get(url, timeout=10)\n",
                                             "new_str": "    resp = _get_with_retry(url, timeout=10)\n"}},
              {"say": "Added `_get_with_retry`; fetch() uses it."}]
    with chat_completions_server(script) as server:
        copilot_p(repo, home, server.base_url, "Add retry with exponential backoff to fetch() in src/client.py")
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: "reconciled with the transcript" in consolidate_log(repo) and spool_empty(repo),
                    timeout=60), consolidate_log(repo)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"] == "Added `_get_with_retry`; fetch() uses it."
    assert "reconciled with the transcript: 2 events added" in consolidate_log(repo)  # the edit and the final message


def test_a_hostile_memory_reaches_the_model_fenced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A memory file a pull request filled with a forged gitmem header, a forged "constraint (must hold)" entry, a
    ``curl … | sh`` line, a forged quote boundary and a fake ``</system-reminder>`` reaches Copilot's model (the
    session start in the first user message, the file's memories in the user message after the ``view``) fenced:
    its note quoted, none of the forged lines at the start of a line, no download command. Copilot passes the
    hook's text on unchanged."""
    from tests.test_fence import assert_fenced_in_requests, hostile_memory

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    copilot_install.install(repo)
    mid, _ = hostile_memory(run_cli, repo)
    home = tmp_path / "copilot-home"
    home.mkdir()
    client = str(repo / "src" / "client.py")
    with chat_completions_server([{"call": "view", "arguments": {"path": client}}, {"say": "Done."}]) as server:
        copilot_p(repo, home, server.base_url, "Please make the networking more robust")
    first = next(r for r in server.requests if r.get("tools"))
    opening = [text_of(m) for m in first["messages"] if m.get("role") == "user"]
    assert any(mid in t for t in opening), json.dumps(opening)[:2000]  # the session start gave it
    assert_fenced_in_requests(server.requests, mid)
