"""Gemini CLI hooks: the event JSON recorded from the real Gemini CLI 0.61.0 through the real entry point.

Every hook run here is a real process (``python -m gitmem.integrations.agents.gemini``) fed an
event as ``gemini -p`` sent it (``tests/fixtures/gemini/``: recorded offline against
``testing/gemini_server.py`` in a session that ran ``read_file``, ``run_shell_command`` with ``cat``,
``replace`` and ``write_file``, then finished; paths replaced by ``/home/dev/project`` and
``/home/dev``), in a real git repository with gitmem initialised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.capture import spool
from gitmem.integrations.agents import gemini
from gitmem.integrations.agents.events import AfterTool, BeforeFile, BeforeShell, Prompt, Stop
from testing.repos import commit, make_repo
from tests.test_claude_hooks import context_of, local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

REAL = Path(__file__).resolve().parent / "fixtures" / "gemini"
REAL_ROOT = "/home/dev/project"


def real_event(name: str, repo: Path, session: str, **fields: Any) -> dict[str, Any]:
    event = json.loads((REAL / f"{name}.json").read_text().replace(REAL_ROOT, str(repo)))
    event["session_id"] = session
    return {**event, **fields}


def hook(payload: Any, cwd: Path, *, raw: bytes | None = None) -> tuple[int, str, str]:
    """Run the Gemini hook entry point as a process; returns (exit code, stdout, stderr)."""
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.gemini"], input=data, cwd=cwd,
                          capture_output=True, env=dict(os.environ), timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def injected(repo: Path, event: dict[str, Any], name: str) -> str:
    """The context a hook injects for ``event`` once the hook index has it (waits for the first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook(event, repo)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out, name))
        return bool(out)

    assert wait_for(got, timeout=30), f"{name}: nothing injected"
    return texts[-1]


def spooled(repo: Path, session: str) -> list[dict[str, Any]]:
    path = spool.live_path(repo, spool.session_key(session))
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def test_the_recorded_events_are_all_there() -> None:
    assert sorted(p.stem for p in REAL.glob("*.json")) == sorted([
        "SessionStart", "BeforeAgent", "BeforeTool.read_file", "AfterTool.read_file", "BeforeTool.run_shell_command",
        "AfterTool.run_shell_command", "BeforeTool.replace", "AfterTool.replace", "BeforeTool.write_file",
        "AfterTool.write_file", "PreCompress", "AfterAgent", "SessionEnd"])


def test_events_map_to_the_core_events(tmp_path: Path) -> None:
    r = tmp_path
    (r / "src").mkdir()
    (r / "src" / "client.py").write_text(REAL_CLIENT_PY)
    assert gemini.to_event(real_event("BeforeTool.read_file", r, "s")) is None  # Gemini takes no context there
    after, before = gemini.to_event(real_event("AfterTool.read_file", r, "s"))  # type: ignore[misc]
    assert isinstance(after, AfterTool) and after.kind == "read" and after.response == {"chars": len(REAL_CLIENT_PY)}
    assert isinstance(before, BeforeFile) and (before.kind, before.path) == ("read", "src/client.py")
    after, before = gemini.to_event(real_event("AfterTool.replace", r, "s"))  # type: ignore[misc]
    assert after.kind == "edit" and after.input["old_string"].startswith("    resp = requests.get(")
    assert isinstance(before, BeforeFile) and before.old_text == "    resp = _get_with_retry(url, timeout=10)\n"
    after, shell, before = gemini.to_event(real_event("AfterTool.run_shell_command", r, "s"))  # type: ignore[misc]
    assert after.kind == "shell" and "def fetch" in after.response["stdout"]
    assert isinstance(shell, BeforeShell) and shell.command == "cat src/client.py"
    assert isinstance(before, BeforeFile) and before.path == "src/client.py"
    after, before = gemini.to_event(real_event("AfterTool.write_file", r, "s"))  # type: ignore[misc]
    assert (after.kind, after.content_key, before.kind) == ("write", "content", "write")
    stop = gemini.to_event(real_event("AfterAgent", r, "s"))
    assert isinstance(stop, Stop) and stop.consolidate and stop.last_message.startswith("Added `_get_with_retry`")
    prompt = gemini.to_event(real_event("BeforeAgent", r, "s", prompt="<hook_context># gitmem: x\n</hook_context>\n\n"
                                                                      "Fix fetch"))
    assert isinstance(prompt, Prompt) and prompt.prompt == "Fix fetch"
    failed = gemini.to_event(real_event("AfterTool.replace", r, "s", tool_response={"error": "no match"}))
    assert type(failed).__name__ == "AfterToolFailure"


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b"{\"hook_event_name\": \"BeforeModel\", \"cwd\": \"/\"}"])
def test_bad_input_prints_nothing(repo: Path, raw: bytes) -> None:
    assert hook(None, repo, raw=raw) == (0, "", "")


@pytest.mark.parametrize("name", sorted(p.stem for p in REAL.glob("*.json") if p.stem != "AfterAgent"))
def test_recorded_event_gives_valid_output(repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s", "src/client.py::fetch")
    code, out, err = hook(real_event(name, repo, f"rec-{name}"), repo)
    assert code == 0 and err == ""
    event = name.split(".")[0]
    if out:
        assert event in gemini.PRINTING
        context_of(out, event)
    else:
        assert event not in ("SessionStart",)


def test_reads_and_edits_get_the_files_memories_with_the_tools_output(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    for i, name in enumerate(("AfterTool.read_file", "AfterTool.run_shell_command")):
        text = injected(repo, real_event(name, repo, f"rec-read-{i}"), "AfterTool")
        assert mid in text and "# gitmem: memories about src/client.py" in text
    (repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    text = injected(repo, real_event("AfterTool.replace", repo, "rec-edit"), "AfterTool")
    assert mid in text and "src/client.py (the edit is at line 5)" in text


def test_recorded_session_is_captured_and_consolidated_once(repo: Path) -> None:
    s = "rec-session"
    for name in ("SessionStart", "BeforeAgent", "BeforeTool.read_file", "AfterTool.read_file",
                 "AfterTool.run_shell_command", "BeforeTool.replace"):
        assert hook(real_event(name, repo, s), repo)[0] == 0
    (repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    assert hook(real_event("AfterTool.replace", repo, s), repo)[0] == 0
    recs = [r for r in spooled(repo, s) if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"]) for r in recs] == [("read_file", "read"), ("run_shell_command", "shell"),
                                                      ("replace", "edit")]
    assert recs[2]["input"]["file_path"] == "src/client.py"
    assert hook(real_event("AfterAgent", repo, s), repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    assert hook(real_event("SessionEnd", repo, s), repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert m["title"] == "Add retry with exponential backoff to fetch() in src/client.py"
    assert m["body"].startswith("Added `_get_with_retry`")
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
