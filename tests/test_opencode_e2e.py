"""The real OpenCode, offline: ``opencode run`` against a scripted Chat Completions server on 127.0.0.1.

Opt-in: runs only when ``GITMEM_OPENCODE_BIN`` names the ``opencode`` binary (OpenCode 1.18.33:
``npm install --prefix /tmp/opencode opencode-ai@1.18.33``, then
``GITMEM_OPENCODE_BIN=/tmp/opencode/node_modules/.bin/opencode``). The model is a custom provider
(``@ai-sdk/openai-compatible``, bundled in the binary) given in ``OPENCODE_CONFIG_CONTENT``;
``OPENCODE_DISABLE_MODELS_FETCH`` keeps models.dev away; ``HOME`` and ``XDG_*`` are temp folders.
OpenCode also installs ``@opencode-ai/plugin`` from npm into every config folder (``.opencode/``,
``~/.config/opencode/``) at startup unless it finds it there (a ``node_modules/`` and a
``package-lock.json`` naming it): the test leaves that record in both folders, so nothing reaches the
network (gitmem's plugin imports only ``node:`` modules and needs no package).

The evidence is what the model received (the server's request log): gitmem's session-start context
in the system prompt, the file's memories right after the ``read`` of that file in the tool's
result; after the session a local memory of its edit, which the next session gets at its start.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import opencode_install
from testing.chat_completions_server import chat_completions_server
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

OPENCODE = os.environ.get("GITMEM_OPENCODE_BIN", "")
pytestmark = pytest.mark.skipif(not (OPENCODE and os.access(OPENCODE, os.X_OK)),
                                reason="set GITMEM_OPENCODE_BIN to an OpenCode 1.18.33 binary")
MODEL = "test-model"


def no_plugin_install(folder: Path) -> None:
    """Record ``@opencode-ai/plugin`` as installed in OpenCode config folder ``folder`` (see the module docstring)."""
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    deps = {"@opencode-ai/plugin": "1.18.33"}
    (folder / "package.json").write_text(json.dumps({"dependencies": deps}))
    (folder / "package-lock.json").write_text(json.dumps({"packages": {"": {"dependencies": deps}}}))


def opencode_run(repo: Path, home: Path, base_url: str, prompt: str) -> None:
    config = {"provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
                                        "options": {"baseURL": base_url, "apiKey": "x"},
                                        "models": {MODEL: {"name": MODEL, "tool_call": True}}}},
              "model": f"scripted/{MODEL}", "autoupdate": False, "share": "disabled"}
    for folder in (home / ".config" / "opencode", repo / ".opencode"):
        no_plugin_install(folder)
    env = {**os.environ, "PWD": str(repo), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state"),
           "XDG_CACHE_HOME": str(home / ".cache"), "OPENCODE_CONFIG_CONTENT": json.dumps(config),
           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
           "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1"}
    proc = subprocess.run([OPENCODE, "run", prompt], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=240, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr).decode()[-2000:]


def text_of(message: dict[str, Any]) -> str:
    c = message.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c if isinstance(c, str) else ""


def test_opencode_sessions_get_and_make_memories(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch", mtype="discovery")
    time.sleep(1.1)  # creation times are to the second: the notes below are strictly newer
    for i in range(12):  # newer memories elsewhere fill the session start, so the file's memory comes with the read
        remember(run_cli, repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    res = opencode_install.install(repo)
    assert res.mcp and (repo / ".opencode" / "plugins" / "gitmem.js").is_file()
    home = tmp_path / "opencode-home"
    home.mkdir()
    client = str(repo / "src" / "client.py")
    edit = {"filePath": client, "oldString": "    resp = requests.get(url, timeout=10)\n",
            "newString": "    resp = _get_with_retry(url, timeout=10)\n"}
    script = [{"call": "read", "arguments": {"filePath": client}}, {"call": "edit", "arguments": edit},
              {"say": "Added `_get_with_retry`; fetch() uses it."}]
    with chat_completions_server(script) as server:
        opencode_run(repo, home, server.base_url, "Carry on.")
    main = [r for r in server.requests if r.get("tools")]
    first, last = main[0], main[-1]
    system = [text_of(m) for m in first["messages"] if m.get("role") == "system"]
    assert any("# gitmem" in t for t in system), json.dumps(system)[-2000:]
    msgs = last["messages"]
    read = next(m for m in msgs if m.get("role") == "tool")
    assert "# gitmem: memories about src/client.py" in text_of(read) and mid in text_of(read), text_of(read)[-3000:]
    assert sum(text_of(m).count("# gitmem: memories about src/client.py") for m in msgs) == 1, \
        "the file's memories reached the model more than once"
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]

    # the next session starts with that memory
    with chat_completions_server([{"say": "Nothing to do."}]) as server:
        opencode_run(repo, home, server.base_url, "What changed in fetch?")
    first = next(r for r in server.requests if r.get("tools"))
    system = "\n".join(text_of(msg) for msg in first["messages"] if msg.get("role") == "system")
    assert m["id"] in system, system[-3000:]


def test_a_hostile_memory_reaches_the_model_fenced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A memory file a pull request filled with a forged gitmem header, a forged "constraint (must hold)" entry, a
    ``curl … | sh`` line, a forged quote boundary and a fake ``</system-reminder>`` reaches OpenCode's model (its
    title in the session start's system prompt, the whole memory in the ``read`` tool's result) fenced: its note
    quoted, none of the forged lines at the start of a line, no download command. OpenCode passes the plugin's
    text on unchanged."""
    from tests.test_fence import assert_fenced_in_requests, hostile_memory

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    opencode_install.install(repo)
    mid, _ = hostile_memory(run_cli, repo)
    time.sleep(1.1)  # creation times are to the second: the notes below are strictly newer
    for i in range(12):  # newer memories elsewhere fill the session start, so the file's memory comes with the read
        remember(run_cli, repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    home = tmp_path / "opencode-home"
    home.mkdir()
    client = str(repo / "src" / "client.py")
    with chat_completions_server([{"call": "read", "arguments": {"filePath": client}}, {"say": "Done."}]) as server:
        opencode_run(repo, home, server.base_url, "Carry on.")
    main = [r for r in server.requests if r.get("tools")]
    system = "\n".join(text_of(m) for m in main[0]["messages"] if m.get("role") == "system")
    assert "# gitmem" in system and f"### {mid}" not in system, system[-3000:]  # the newer notes in full
    read = next(m for m in main[-1]["messages"] if m.get("role") == "tool")
    assert f"### {mid}" in text_of(read), text_of(read)[-3000:]  # the read of its file gave it in full
    assert_fenced_in_requests(server.requests, mid)
