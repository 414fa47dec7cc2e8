"""Cursor hooks: the documented event JSON through the real entry point.

Cursor cannot be installed from a package registry, so the events are written from its
documentation (``tests/fixtures/cursor/``, each with its source in the README there; paths
``/home/dev/project``). Every hook run is a real process (``python -m
gitmem.integrations.agents.cursor``) in a real git repository with gitmem initialised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import claude, cursor
from gitmem.integrations.agents.events import (
    AfterTool,
    AfterToolFailure,
    BeforeCompact,
    BeforeFile,
    BeforeShell,
    Prompt,
    Stop,
)
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY
from tests.test_gemini_hooks import spooled

DOCS = Path(__file__).resolve().parent / "fixtures" / "cursor"
DOC_ROOT = "/home/dev/project"
MEMORY = "fetch must keep timeout=10: the gateway cuts requests at 12 s"


def doc_event(name: str, repo: Path, session: str, **fields: Any) -> dict[str, Any]:
    event = json.loads((DOCS / f"{name}.json").read_text().replace(DOC_ROOT, str(repo)))
    event["conversation_id"] = session
    return {**event, **fields}


def hook(payload: Any, cwd: Path, *, raw: bytes | None = None,
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the Cursor hook entry point as a process; returns (exit code, stdout, stderr)."""
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.cursor"], input=data, cwd=cwd,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def context_of(out: str) -> str:
    data = json.loads(out)
    assert set(data) == {"additional_context"}  # never a permission, a denial or a follow-up
    text = data["additional_context"]
    assert isinstance(text, str) and 0 < len(text) < 10_000
    return str(text)


def injected(repo: Path, event: dict[str, Any]) -> str:
    """The context a hook injects for ``event`` once the hook index has it (waits for the first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook(event, repo)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out))
        return bool(out)

    assert wait_for(got, timeout=30), f"{event['hook_event_name']}: nothing injected"
    return texts[-1]


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def test_the_documented_events_are_all_there() -> None:
    assert sorted(p.stem for p in DOCS.glob("*.json")) == sorted([
        "sessionStart", "beforeSubmitPrompt", "beforeReadFile", "postToolUse.Read", "postToolUse.Shell",
        "postToolUse.Write", "postToolUseFailure.Shell", "afterFileEdit", "afterAgentResponse", "stop", "preCompact",
        "sessionEnd"])


def test_events_map_to_the_core_events(tmp_path: Path) -> None:
    r = tmp_path
    (r / "src").mkdir()
    (r / "src" / "client.py").write_text(REAL_CLIENT_PY)  # a shell read names files that exist
    assert cursor.to_event(doc_event("beforeReadFile", r, "s")) is None  # it only allows or denies
    prompt = cursor.to_event(doc_event("beforeSubmitPrompt", r, "s"))
    assert isinstance(prompt, Prompt) and prompt.cwd == str(r) and prompt.session_id == "s"
    after, before = cursor.to_event(doc_event("postToolUse.Read", r, "s"))  # type: ignore[misc]
    assert isinstance(after, AfterTool) and after.kind == "read" and after.response == {"chars": len(REAL_CLIENT_PY)}
    assert after.tool_use_id == "toolu_01"
    assert isinstance(before, BeforeFile) and (before.kind, before.path) == ("read", str(r / "src/client.py"))
    after, shell, before = cursor.to_event(doc_event("postToolUse.Shell", r, "s"))  # type: ignore[misc]
    assert after.kind == "shell" and after.response["stdout"].startswith("import requests")
    assert isinstance(shell, BeforeShell) and shell.command.startswith("cat ")
    assert isinstance(before, BeforeFile) and before.path == str(r / "src/client.py")
    edit = cursor.to_event(doc_event("postToolUse.Write", r, "s"))  # captured from afterFileEdit, not twice
    assert isinstance(edit, BeforeFile) and edit.kind == "edit" and edit.old_text.startswith("    resp = _get_with")
    captured = cursor.to_event(doc_event("afterFileEdit", r, "s"))
    assert isinstance(captured, AfterTool) and captured.kind == "edit"
    assert captured.input["old_string"].startswith("    resp = requests.get(")
    failed = cursor.to_event(doc_event("postToolUseFailure.Shell", r, "s"))
    assert isinstance(failed, AfterToolFailure) and failed.error == "Command failed with exit code 1"
    answer = cursor.to_event(doc_event("afterAgentResponse", r, "s"))
    assert isinstance(answer, Stop) and answer.last_message.startswith("Added") and not answer.consolidate
    stop = cursor.to_event(doc_event("stop", r, "s"))
    assert isinstance(stop, Stop) and stop.consolidate
    assert isinstance(cursor.to_event(doc_event("preCompact", r, "s")), BeforeCompact)
    write = cursor.to_event({**doc_event("afterFileEdit", r, "s"), "edits": [{"old_string": "", "new_string": "x"}]})
    assert isinstance(write, AfterTool) and (write.kind, write.content_key) == ("write", "content")


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b"{\"hook_event_name\": \"beforeTabFileRead\"}"])
def test_bad_input_prints_nothing(repo: Path, raw: bytes) -> None:
    assert hook(None, repo, raw=raw) == (0, "", "")


@pytest.mark.parametrize("name", sorted(p.stem for p in DOCS.glob("*.json") if p.stem != "stop"))
def test_documented_event_gives_valid_output_or_none(repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    code, out, err = hook(doc_event(name, repo, f"doc-{name}"), repo)
    assert code == 0 and err == ""
    event = name.split(".")[0]
    if out:
        assert event in cursor.PRINTING
        context_of(out)
    else:
        assert event != "sessionStart"


def test_session_start_gives_the_context(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    assert mid in injected(repo, doc_event("sessionStart", repo, "doc-start"))


def test_reads_edits_and_shell_reads_get_the_files_memories_after_the_tool(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    for i, name in enumerate(("postToolUse.Read", "postToolUse.Shell")):
        text = injected(repo, doc_event(name, repo, f"doc-read-{i}"))
        assert mid in text and "# gitmem: memories about src/client.py" in text
    (repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    text = injected(repo, doc_event("postToolUse.Write", repo, "doc-edit"))
    assert mid in text and "src/client.py (the edit is at line 5)" in text


def test_prompt_memories_come_with_the_first_tool_output(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    injected(repo, doc_event("postToolUse.Read", repo, "warm-up"))  # the hook index is built
    s = "doc-prompt"
    assert hook(doc_event("beforeSubmitPrompt", repo, s), repo) == (0, "", "")  # Cursor takes no context there
    shell = doc_event("postToolUse.Shell", repo, s, tool_input={"command": "make test", "working_directory": str(repo)})
    code, out, err = hook(shell, repo)  # a tool call naming no file: the prompt's memories alone
    assert code == 0 and err == ""
    text = context_of(out)
    assert text.startswith("# gitmem: memories relevant to this prompt") and mid in text
    assert hook(shell, repo) == (0, "", "")  # given once
    code, out, _ = hook(doc_event("postToolUse.Read", repo, s), repo)
    assert code == 0 and out == ""  # the prompt gave it in full: not repeated at the read


def test_capture_then_stop_makes_a_local_memory(repo: Path) -> None:
    s = "doc-session"
    for name in ("sessionStart", "beforeSubmitPrompt", "postToolUse.Read", "postToolUse.Shell"):
        assert hook(doc_event(name, repo, s), repo)[0] == 0
    (repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    for name in ("postToolUse.Write", "afterFileEdit", "afterAgentResponse"):
        assert hook(doc_event(name, repo, s), repo)[0] == 0
    recs = [r for r in spooled(repo, s) if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"]) for r in recs] == [("Read", "read"), ("Shell", "shell"), ("afterFileEdit", "edit")]
    assert recs[2]["input"]["file_path"] == "src/client.py"
    assert hook(doc_event("stop", repo, s), repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    assert hook(doc_event("sessionEnd", repo, s), repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]


def test_claude_hooks_step_aside_under_cursor_with_its_hooks_installed(repo: Path) -> None:
    cwd = str(repo)
    env = {"CURSOR_VERSION": "2.4.21", "HOME": str(repo / "home")}
    assert not cursor.cursor_hooks_installed(cwd, env)  # no gitmem Cursor hooks yet
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "hooks.json").write_text(json.dumps(
        {"version": 1, "hooks": {"stop": [{"command": "gitmem-cursor-hook stop"}]}}))
    assert cursor.cursor_hooks_installed(cwd, env)
    assert not cursor.cursor_hooks_installed(cwd, {"HOME": env["HOME"]})  # not a hook Cursor runs
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": cwd, "source": "startup"}
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"],
                          input=json.dumps(payload).encode(), cwd=repo, capture_output=True,
                          env={**os.environ, **env}, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert claude.to_event(payload) is not None  # Claude Code itself (no CURSOR_VERSION) is not affected
