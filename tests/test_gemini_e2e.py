"""The real Gemini CLI, offline: ``gemini -p`` against a scripted Gemini API server on 127.0.0.1.

Opt-in: runs only when ``GITMEM_GEMINI_BIN`` names the ``gemini`` binary (Gemini CLI 0.61.0:
``npm install --prefix /tmp/gemini-cli @google/gemini-cli@0.61.0``, then
``GITMEM_GEMINI_BIN=/tmp/gemini-cli/node_modules/.bin/gemini``). Each session takes a few seconds.

The evidence is what the model received (the server's request log, ``testing/gemini_server.py``):
gitmem's session-start context in ``<hook_context>`` before the prompt, the read file's memories
appended to the ``read_file`` output (Gemini CLI takes no context before a tool), and after the
session, a local memory of the ``replace`` edit, given to the next session; that session's ``cat`` of
the file (through ``run_shell_command``) brings the file's memories not given yet. A memory is added
while each session runs (``on_turn``, before the read), so the read has one the session start did
not give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents.gemini_install import install
from testing.gemini_server import gemini_server
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

GEMINI = os.environ.get("GITMEM_GEMINI_BIN", "")
pytestmark = pytest.mark.skipif(not (GEMINI and os.access(GEMINI, os.X_OK)),
                                reason="set GITMEM_GEMINI_BIN to a Gemini CLI 0.61.0 binary")

OLD = "    resp = requests.get(url, timeout=10)\n"
NEW = "    resp = _get_with_retry(url, timeout=10)\n"


def script(repo: Path, read: dict[str, Any]) -> list[dict[str, Any]]:
    return [read,
            {"call": "replace", "args": {"file_path": str(repo / "src" / "client.py"), "old_string": OLD,
                                         "new_string": NEW, "instruction": "retry"}},
            {"say": "Added `_get_with_retry`; fetch() uses it."}]


def gemini_p(repo: Path, home: Path, base_url: str, prompt: str) -> None:
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(auth))
    env = {**os.environ, "HOME": str(home), "GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": base_url,
           "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    proc = subprocess.run([GEMINI, "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"], cwd=repo, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]


def gitmem(repo: Path, *args: str) -> Any:
    """``gitmem ARGS`` in ``repo`` as a process (this interpreter's installation); its JSON output."""
    proc = subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def texts(request: dict[str, Any]) -> list[str]:
    """Every text part of a request's contents, in order."""
    return [p["text"] for c in request.get("contents") or [] for p in c.get("parts") or [] if "text" in p]


def tool_output(request: dict[str, Any], tool: str) -> str:
    """The output the model received for the first call of ``tool`` (``functionResponse``)."""
    for c in request.get("contents") or []:
        for p in c.get("parts") or []:
            fr = p.get("functionResponse")
            if fr and fr.get("name") == tool:
                return json.dumps(fr.get("response"))
    return ""


def turns(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests if ":streamGenerateContent" in r["path"]]


def test_two_gemini_sessions_get_and_make_memories(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    for i in range(12):  # newer memories elsewhere fill the session start, so files' memories come per file
        remember(run_cli, repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="constraint")
    install(repo)
    # the hook index, built now rather than by the first hook's background refresh (which may finish after the read)
    subprocess.run([sys.executable, "-m", "gitmem.catalog.sync", str(repo)], cwd=repo, check=True, timeout=120)
    home = tmp_path / "home"
    # session 1: a prompt naming nothing; it reads the file, edits it, finishes
    read = {"call": "read_file", "args": {"file_path": "src/client.py"}}
    late: list[str] = []

    def remember_late(n: int, body: dict[str, Any]) -> None:  # after the session start, before the read
        if n == 0:
            late.append(gitmem(repo, "remember", "fetch returns parsed JSON: callers never see the response",
                               "--type", "gotcha", "--anchor", "src/client.py::fetch", "--json")["id"])
            subprocess.run([sys.executable, "-m", "gitmem.catalog.sync", str(repo)], cwd=repo, check=True,
                           timeout=120)

    with gemini_server(script(repo, read), on_turn=remember_late) as server:
        gemini_p(repo, home, server.base_url, "Please make the networking more robust")
    first, last = turns(server)[0], turns(server)[-1]
    start = "\n".join(texts(first))
    assert "<hook_context>" in start and "# gitmem" in start, start[-3000:]
    assert start.index("# gitmem") < start.index("Please make the networking more robust")
    out = tool_output(last, "read_file")
    assert mid in start
    assert "# gitmem: memories about src/client.py" in out and late[0] in out, out[:2000]
    # given in full once: by the session start (then not again with the read), or, when the session start's
    # budget listed it as an index line only (the order of equal-aged memories varies with the machine's load),
    # by the read
    assert (f"### {mid}" in start) != (f"### {mid}" in out), (start[-3000:], out[:2000])
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"].startswith("Added `_get_with_retry`")
    assert m["title"] == "Please make the networking more robust"
    # session 2: the file read through the shell brings session 1's memory with the command's output
    subprocess.run(["git", "checkout", "-q", "src/client.py"], cwd=repo, check=True)
    read = {"call": "run_shell_command", "args": {"command": "cat src/client.py"}}
    late.clear()
    with gemini_server(script(repo, read), on_turn=remember_late) as server:
        gemini_p(repo, home, server.base_url, "Please make the networking more robust")
    out = tool_output(turns(server)[-1], "run_shell_command")
    assert m["id"] in "\n".join(texts(turns(server)[0]))  # session 1's memory, at the session start
    assert "# gitmem: memories about src/client.py" in out and late[0] in out, out[:2000]
    assert wait_for(lambda: spool_empty(repo), timeout=60)
    assert len(local_memories(repo)) == 2  # session 2's own edit, once


def test_a_lost_edit_capture_is_recovered_from_the_chat(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The replace's AfterTool hook never runs (as when ``gemini -p`` exits first); the memory of the edit
    still appears: the consolidation reconciles the spool with Gemini CLI's chat file (``transcript_path``)."""
    from tests.test_transcripts import consolidate_log, lose_post_tool_hook

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    install(repo)
    lose_post_tool_hook(repo / ".gemini" / "settings.json", "AfterTool", '"tool_name":"replace"')
    with gemini_server(script(repo, {"call": "read_file", "args": {"file_path": "src/client.py"}})) as server:
        gemini_p(repo, tmp_path / "home", server.base_url,
                 "Add retry with exponential backoff to fetch() in src/client.py")
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
    assert wait_for(lambda: "reconciled with the transcript" in consolidate_log(repo) and spool_empty(repo),
                    timeout=60), consolidate_log(repo)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"].startswith("Added `_get_with_retry`")
    assert "reconciled with the transcript: 1 event added" in consolidate_log(repo)


def test_a_hostile_memory_reaches_the_model_fenced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A memory file a pull request filled with forged gitmem lines, a ``curl … | sh`` line and a fake frame tag
    reaches Gemini's model (session start, ``<hook_context>``) fenced: its note quoted, nothing forged at the start
    of a line, no download command."""
    from tests.test_fence import assert_fenced_in_requests, hostile_memory

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    install(repo)
    mid, _ = hostile_memory(run_cli, repo)
    subprocess.run([sys.executable, "-m", "gitmem.catalog.sync", str(repo)], cwd=repo, check=True, timeout=120)
    read = {"call": "read_file", "args": {"file_path": "src/client.py"}}
    with gemini_server(script(repo, read)) as server:
        gemini_p(repo, tmp_path / "home", server.base_url, "Please make the networking more robust")
    assert mid in "\n".join(texts(turns(server)[0]))
    assert_fenced_in_requests(server.requests, mid)


def test_gemini_without_gitmem_gets_the_one_line_notice(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """gitmem absent from the machine (nothing on PATH, no bin-dir file in the clone), a repository with memories:
    the model receives the one-line notice in ``<hook_context>``, from the committed hook command alone."""
    from gitmem import layout
    from gitmem.integrations.agents.installing import ABSENT_NOTICE

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s", "src/client.py::fetch")
    install(repo)
    layout.of(repo).bin_pointer.unlink()
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not (Path(p) / "gitmem-gemini-hook").exists() and not (Path(p) / "gitmem").exists())
    read = {"call": "read_file", "args": {"file_path": "src/client.py"}}
    saved = os.environ["PATH"]
    os.environ["PATH"] = path
    try:
        with gemini_server(script(repo, read)) as server:
            gemini_p(repo, tmp_path / "home", server.base_url, "Please make the networking more robust")
    finally:
        os.environ["PATH"] = saved
    start = "\n".join(texts(turns(server)[0]))
    assert "<hook_context>" in start and ABSENT_NOTICE in start, start[-3000:]
    assert "# gitmem" not in start and "# gitmem" not in tool_output(turns(server)[-1], "read_file")
    assert "_get_with_retry" in (repo / "src" / "client.py").read_text()
