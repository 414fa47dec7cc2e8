"""VS Code's agent mode running gitmem's Claude Code hooks: its input through the real ``gitmem-hook``.

VS Code cannot run here (no binary, no network): the events are ``tests/fixtures/vscode/``, built
from the Copilot Chat extension's code that writes them (see their README). Every hook run is a
real process (``python -m gitmem.integrations.agents.claude``, or the Copilot CLI entry point,
which VS Code runs too) fed the event on stdin, in a real git repository with gitmem initialised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import claude_install, copilot_install, vscode
from gitmem.integrations.agents.events import AfterTool, BeforeFile, BeforeShell, Prompt, SessionStart, Stop
from testing.repos import commit, make_repo
from tests.test_claude_hooks import (
    AUTH_PY,
    CLIENT_PY,
    context_of,
    local_memories,
    remember,
    spool_empty,
    wait_for,
)
from tests.test_codex_hooks import spooled

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "vscode"
assert len(list(FIXTURES.glob("*.json"))) == 12, FIXTURES
FIXTURE_ROOT = "/home/dev/project"
MEMORY = "fetch must keep timeout=10: the gateway cuts requests at 12 s"
AUTH_MEMORY = "check_token rejects empty tokens before any lookup"


def fixture(name: str, repo: Path, **changes: Any) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text()
    event = json.loads(text.replace(FIXTURE_ROOT, str(repo)))
    event.update(changes)
    return event


def hook(payload: Any, cwd: Path, *, module: str = "claude", args: tuple[str, ...] = (),
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run an entry point as VS Code does (a shell command in the workspace folder, the event on stdin)."""
    proc = subprocess.run([sys.executable, "-m", f"gitmem.integrations.agents.{module}", *args],
                          input=json.dumps(payload).encode(), cwd=cwd, capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def injected(repo: Path, event: dict[str, Any], name: str, **kw: Any) -> str:
    """The context a hook injects for ``event`` once the hook index has it (waits for its first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook({**event, "session_id": f"{event.get('session_id')}-{len(texts)}-{os.urandom(3).hex()}"},
                              repo, **kw)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out, name))
        return bool(out)

    assert wait_for(got, timeout=30), f"{name}: nothing injected"
    return texts[-1]


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY,
                       "tests/test_client.py": "def test_x():\n    pass\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


# -- the input mapped ------------------------------------------------------------------------------


def test_vscode_input_is_told_from_claude_codes_and_copilots() -> None:
    for p in FIXTURES.glob("*.json"):
        assert vscode.is_vscode(json.loads(p.read_text())), p.name
    claude_dir = Path(__file__).resolve().parent / "fixtures" / "claude-code"
    for p in claude_dir.glob("*.json"):
        assert not vscode.is_vscode(json.loads(p.read_text())), p.name
    for p in (Path(__file__).resolve().parent / "fixtures" / "copilot").glob("*.json"):
        assert not vscode.is_vscode(json.loads(p.read_text())), p.name
    # Copilot CLI running .claude/settings.json's hooks sends Claude Code's input
    assert not vscode.is_vscode({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Read"})


def test_events_of_each_fixture(tmp_path: Path) -> None:
    repo = str(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "client.py").write_text(CLIENT_PY)

    def ev(name: str) -> Any:
        return vscode.to_event(fixture(name, tmp_path))

    start = ev("SessionStart")
    assert isinstance(start, SessionStart) and start.source == "startup" and start.agent == "vscode"
    assert start.session_id == "b6f0c2d4-3e8a-4f51-9c27-5d1e8a0b7f63" and start.transcript.endswith(".jsonl")
    assert isinstance(ev("UserPromptSubmit"), Prompt)
    stop = ev("Stop")
    assert isinstance(stop, Stop) and stop.consolidate
    (read,) = ev("PreToolUse.read_file")
    assert isinstance(read, BeforeFile) and (read.kind, read.path) == ("read", f"{repo}/src/client.py")
    (edit,) = ev("PreToolUse.replace_string_in_file")
    assert edit.kind == "edit" and edit.old_text == "    resp = session.get(url, timeout=10)\n"
    multi = ev("PreToolUse.multi_replace_string_in_file")
    assert [(e.kind, e.path) for e in multi] == [("edit", f"{repo}/src/client.py"), ("edit", f"{repo}/src/auth.py")]
    assert multi[1].old_text == "    if not token:\n"
    (write,) = ev("PreToolUse.create_file")
    assert (write.kind, write.path) == ("write", f"{repo}/src/retry.py")
    (patched,) = ev("PreToolUse.apply_patch")
    assert (patched.kind, patched.path) == ("edit", f"{repo}/src/client.py")
    assert "    resp = session.get(url, timeout=10)\n" in (patched.old_text or "")
    shell, shell_read = ev("PreToolUse.run_in_terminal")  # `cd src && cat client.py`
    assert isinstance(shell, BeforeShell) and shell.command == "cd src && cat client.py"
    assert (shell_read.kind, shell_read.path) == ("read", "src/client.py")
    (docs,) = ev("PreToolUse.editFiles.docs")  # the documented camelCase shape
    assert (docs.kind, docs.path, docs.session_id) == ("edit", "src/client.py", start.session_id)
    (after,) = ev("PostToolUse.replace_string_in_file")
    assert isinstance(after, AfterTool) and after.input["file_path"] == f"{repo}/src/client.py"
    assert after.input["old_string"].startswith("    resp = session.get") and after.kind == "edit"
    shell = ev("PostToolUse.run_in_terminal")
    assert shell.kind == "shell" and shell.response == {"stdout": "4 passed in 0.42s"}
    assert vscode.to_event({**fixture("PreToolUse.run_in_terminal", tmp_path),
                            "tool_input": {"command": "python -m pytest"}}).__class__ is BeforeShell
    assert vscode.to_event({**fixture("PreToolUse.read_file", tmp_path), "tool_name": "get_errors"}) is None


@pytest.mark.parametrize(("given", "path"), [
    ("file:///home/dev/project/src/a%20b.py", "/home/dev/project/src/a b.py"),
    ("file:///c%3A/work/a.py", "c:/work/a.py"),
    ("/abs/a.py", "/abs/a.py"),
    ("src/a.py", "src/a.py"),
    (None, ""),
])
def test_paths_as_vscode_gives_them(given: Any, path: str) -> None:
    assert vscode.file_path(given) == path


def test_the_marker_is_the_claude_installers() -> None:
    assert vscode.CLAUDE_HOOK_MARKER == claude_install.MARKER


# -- through the real entry point ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_fixture_replayed_gives_valid_output(repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    remember(run_cli, repo, AUTH_MEMORY, "src/auth.py::check_token")
    event = fixture(name, repo)
    kind = event.get("hook_event_name") or event["hookEventName"]
    if kind in ("Stop", "PostToolUse") or name == "PreToolUse.create_file":
        code, out, err = hook(event, repo)
        assert (code, out, err) == (0, "", ""), name  # nothing to give: a new file, or an event without context
        return
    text = injected(repo, event, kind)
    assert "fetch must keep timeout=10" in text, name
    if name == "PreToolUse.multi_replace_string_in_file":  # both files' memories, in one answer
        assert AUTH_MEMORY in text


def test_session_start_then_the_read_does_not_repeat_it(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    assert mid in context_of(hook(fixture("SessionStart", repo), repo)[1], "SessionStart")
    assert hook(fixture("PreToolUse.read_file", repo), repo) == (0, "", "")  # given this session already
    assert mid in injected(repo, fixture("PreToolUse.read_file", repo, session_id="other"), "PreToolUse")


def test_a_file_uri_and_a_relative_path_find_the_memory(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    for given in (f"file://{repo}/src/client.py", "src/client.py"):
        event = fixture("PreToolUse.read_file", repo, tool_input={"filePath": given})
        assert mid in injected(repo, event, "PreToolUse"), given


def test_tool_calls_are_captured_one_record_per_file(repo: Path) -> None:
    event = fixture("PreToolUse.multi_replace_string_in_file", repo, hook_event_name="PostToolUse",
                    session_id="cap", tool_response="The following files were successfully edited")
    assert hook(event, repo) == (0, "", "")
    recs = [r for r in spooled(repo, "cap") if r.get("event") == "PostToolUse"]
    assert [(r["kind"], r["input"]["file_path"]) for r in recs] == [("edit", "src/client.py"), ("edit", "src/auth.py")]
    assert len({r["id"] for r in recs}) == 2
    log = repo / ".git" / "gitmem" / "logs" / "vscode-hooks.log"
    assert not log.exists()


def test_a_session_is_consolidated_from_stop_and_the_next_session_sees_it(repo: Path) -> None:
    """VS Code runs no SessionEnd: the turn's Stop hands the spool to consolidation."""
    s = "vs-1"
    assert hook(fixture("SessionStart", repo, session_id=s), repo)[0] == 0
    assert hook(fixture("UserPromptSubmit", repo, session_id=s), repo)[0] == 0
    old, new = "    resp = session.get(url, timeout=10)\n", "    resp = _get_with_retry(session, url, timeout=10)\n"
    (repo / "src" / "client.py").write_text(CLIENT_PY.replace(old, new))  # what the edit did
    assert hook(fixture("PostToolUse.replace_string_in_file", repo, session_id=s), repo) == (0, "", "")
    assert hook(fixture("PostToolUse.run_in_terminal", repo, session_id=s), repo) == (0, "", "")
    assert hook(fixture("Stop", repo, session_id=s), repo) == (0, "", "")
    assert wait_for(lambda: local_memories(repo) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert "Ran: python -m pytest -q tests/test_client.py" in m["facts"]
    assert m["id"] in injected(repo, fixture("PreToolUse.read_file", repo, session_id="vs-2"), "PreToolUse")


# -- Copilot CLI's stepping aside does not misfire under VS Code ---------------------------------


def test_vscode_input_is_served_even_with_copilot_cli_in_the_environment(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """``COPILOT_CLI`` leaked into VS Code's environment (started from a Copilot CLI shell), Copilot's hooks
    installed: the Claude Code hooks still act on VS Code's input."""
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    copilot_install.install(repo)
    env = {"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(repo)}
    assert mid in injected(repo, fixture("PreToolUse.read_file", repo), "PreToolUse", env=env)


def test_the_copilot_hooks_vscode_runs_act_once(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """VS Code also runs ``.github/hooks/gitmem.json``: its handler answers VS Code's input in VS Code's form
    when gitmem's Claude Code hooks are not installed, and steps aside when they are (they act)."""
    mid = remember(run_cli, repo, MEMORY, "src/client.py::fetch")
    copilot_install.install(repo)
    event = fixture("PreToolUse.read_file", repo)
    assert mid in injected(repo, event, "PreToolUse", module="copilot", args=("preToolUse",))
    claude_install.install(repo)
    assert vscode.claude_hooks_installed(str(repo))
    assert hook({**event, "session_id": "aside"}, repo, module="copilot", args=("preToolUse",)) == (0, "", "")
    assert mid in injected(repo, event, "PreToolUse")  # the Claude Code hooks act
    post = fixture("PostToolUse.run_in_terminal", repo, session_id="aside-post")
    assert hook(post, repo, module="copilot", args=("postToolUse",)) == (0, "", "")
    assert spooled(repo, "aside-post") == []


def test_user_level_claude_hooks_count(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    assert not vscode.claude_hooks_installed(str(tmp_path / "nowhere"), str(home))
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": claude_install.handler_command("Stop")}]}]}}))
    assert vscode.claude_hooks_installed(str(tmp_path / "nowhere"), str(home))
