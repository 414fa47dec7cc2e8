"""GitHub Copilot CLI hooks: the events recorded from the real CLI through the real entry point.

Every event here was recorded from the real ``copilot -p`` (Copilot CLI 1.0.102, offline against a
scripted Chat Completions server; ``tests/fixtures/copilot/``, paths replaced by
``/home/dev/project`` and ``/home/dev/.copilot``): a session that ran ``view`` of
``src/client.py``, an ``edit`` of it, ``bash`` ``cat src/client.py``, a ``create`` of
``src/retry.py``, then finished. Each hook run is a real process (``python -m
gitmem.integrations.agents.copilot EVENT``) in a real git repository with gitmem initialised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import claude, copilot, copilot_install
from gitmem.integrations.agents.events import AfterTool, AfterToolFailure, BeforeFile, BeforeShell, SessionStart, Stop
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY, spooled

REAL = Path(__file__).resolve().parent / "fixtures" / "copilot"
REAL_ROOT = "/home/dev/project"
MEMORY = "fetch must keep timeout=10: the gateway cuts requests at 12 s"


def real_event(name: str, repo: Path, session: str) -> dict[str, Any]:
    event = json.loads((REAL / f"{name}.json").read_text().replace(REAL_ROOT, str(repo)))
    event["sessionId"] = session
    return event


def hook(event_name: str, payload: Any, cwd: Path, *, module: str = "copilot",
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run an adapter's entry point as a process; returns (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", f"gitmem.integrations.agents.{module}", event_name],
                          input=json.dumps(payload).encode(), cwd=cwd, capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def context_of(out: str) -> str:
    data = json.loads(out)
    assert set(data) == {"additionalContext"}
    text = data["additionalContext"]
    assert isinstance(text, str) and 0 < len(text) < 10_000
    return str(text)


def injected(repo: Path, name: str, event: dict[str, Any]) -> str:
    """The context a hook injects once the hook index has it (waits for the first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook(name, event, repo)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out))
        return bool(out)

    assert wait_for(got, timeout=30)
    return texts[-1]


@pytest.fixture
def real_repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def test_the_recorded_events_are_all_there() -> None:
    assert sorted(p.stem for p in REAL.glob("*.json")) == sorted([
        "sessionStart", "userPromptSubmitted", "preToolUse.view", "postToolUse.view", "preToolUse.edit",
        "postToolUse.edit", "preToolUse.bash", "postToolUse.bash", "preToolUse.create", "postToolUse.create",
        "agentStop", "sessionEnd"])


def test_recorded_events_map_to_the_normalised_events(real_repo: Path) -> None:
    def ev(name: str) -> Any:
        return copilot.to_event(real_event(name, real_repo, "s"), name.split(".")[0])

    assert isinstance(ev("sessionStart"), SessionStart) and ev("sessionStart").source == "startup"
    view, edit, create = ev("preToolUse.view"), ev("preToolUse.edit"), ev("preToolUse.create")
    assert isinstance(view, BeforeFile) and view.kind == "read" and view.path == str(real_repo / "src/client.py")
    assert isinstance(edit, BeforeFile) and edit.kind == "edit" and "requests.get" in (edit.old_text or "")
    assert isinstance(create, BeforeFile) and create.kind == "write"
    shell, cat = ev("preToolUse.bash")
    assert isinstance(shell, BeforeShell) and shell.command == "cat src/client.py"
    assert isinstance(cat, BeforeFile) and cat.kind == "read" and cat.path == "src/client.py"
    after = ev("postToolUse.edit")
    assert isinstance(after, AfterTool) and after.kind == "edit" and after.input["file_path"].endswith("client.py")
    assert after.input["new_string"].startswith("    resp = _get_with_retry(")
    assert ev("postToolUse.create").content_key == "content"
    assert ev("postToolUse.bash").response["stdout"].startswith("import requests")
    assert isinstance(ev("agentStop"), Stop) and ev("agentStop").consolidate
    assert copilot.to_event(real_event("sessionStart", real_repo, "s"), None) is None
    assert copilot.to_event({"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "make"}},
                            "preToolUse").__class__ is BeforeShell
    failed = {"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "false"},
              "toolResult": {"resultType": "failure", "textResultForLlm": "exit 1"}}
    assert isinstance(copilot.to_event(failed, "postToolUse"), AfterToolFailure)


@pytest.mark.parametrize("name", sorted(p.stem for p in REAL.glob("*.json") if p.stem != "agentStop"))
def test_recorded_event_gives_valid_output(real_repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    event = name.split(".")[0]
    code, out, err = hook(event, real_event(name, real_repo, f"rec-{name}"), real_repo)
    assert code == 0 and err == ""
    if out:
        assert event in copilot.PRINTING
        context_of(out)
    else:
        assert event not in ("sessionStart",)


def test_recorded_view_bash_and_edit_get_the_files_memories(real_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    for name, session in (("preToolUse.view", "r1"), ("preToolUse.bash", "r2")):
        text = injected(real_repo, "preToolUse", real_event(name, real_repo, session))
        assert mid in text and "# gitmem: memories about src/client.py" in text
    text = injected(real_repo, "preToolUse", real_event("preToolUse.edit", real_repo, "r3"))
    assert mid in text and "src/client.py (the edit is at line 5)" in text


def test_bad_input_prints_nothing(real_repo: Path) -> None:
    for name, payload in (("preToolUse", [1]), ("nosuchEvent", {"cwd": str(real_repo)}), ("", {})):
        assert hook(name, payload, real_repo) == (0, "", "")


def test_recorded_session_is_captured_and_consolidated_once(real_repo: Path) -> None:
    s = "rec-session"
    for name in ("sessionStart", "userPromptSubmitted", "preToolUse.view", "postToolUse.view", "preToolUse.edit"):
        assert hook(name.split(".")[0], real_event(name, real_repo, s), real_repo)[0] == 0
    (real_repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    assert hook("postToolUse", real_event("postToolUse.edit", real_repo, s), real_repo) == (0, "", "")
    recs = [r for r in spooled(real_repo, s) if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"]) for r in recs] == [("view", "read"), ("edit", "edit")]
    assert recs[1]["input"]["file_path"] == "src/client.py"
    assert hook("agentStop", real_event("agentStop", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(real_repo)) and spool_empty(real_repo), timeout=60)
    assert hook("sessionEnd", real_event("sessionEnd", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(real_repo), timeout=60)
    (m,) = local_memories(real_repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]


# -- Copilot CLI also runs .claude/settings.json's hooks: gitmem acts once -------------------------------

CLAUDE_UNDER_COPILOT = {"hook_event_name": "PreToolUse", "session_id": "dup", "tool_name": "Read",
                        "tool_input": {"path": "src/client.py", "file_path": "src/client.py"}}


def test_the_claude_hooks_step_aside_under_copilot_when_its_hooks_are_installed(real_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    event = {**CLAUDE_UNDER_COPILOT, "cwd": str(real_repo)}
    env = {"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(real_repo)}
    assert not claude.copilot_hooks_installed(str(real_repo), env)
    # only the Claude hooks installed: they serve Copilot
    assert wait_for(lambda: mid in hook("PreToolUse", event, real_repo, module="claude", env=env)[1], timeout=30)
    copilot_install.install(real_repo)
    assert claude.copilot_hooks_installed(str(real_repo), env)
    assert not claude.copilot_hooks_installed(str(real_repo), {})  # Claude Code itself
    assert hook("PreToolUse", {**event, "session_id": "dup2"}, real_repo, module="claude", env=env) == (0, "", "")
    post = {**event, "hook_event_name": "PostToolUse", "session_id": "dup3", "tool_response": {}}
    assert hook("PostToolUse", post, real_repo, module="claude", env=env) == (0, "", "")
    assert spooled(real_repo, "dup3") == []
    # Claude Code (no COPILOT_CLI) still acts
    assert mid in hook("PreToolUse", {**event, "session_id": "dup4"}, real_repo, module="claude",
                       env={"COPILOT_CLI": ""})[1]


def test_user_level_hooks_step_aside_in_a_project_with_its_own(real_repo: Path, run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``gitmem install copilot --user`` and a project's own Copilot hooks: Copilot runs both; gitmem acts once
    (the user-level handler, run with GITMEM_COPILOT_SCOPE=user, steps aside). The Claude Code hooks step aside
    under Copilot when the user-level hooks are installed."""
    mid = remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    home = tmp_path / "copilot-home"
    copilot_install.install(None, user=True, home=home)
    event = real_event("preToolUse.view", real_repo, "scope1")
    user_env = {"COPILOT_HOME": str(home), "GITMEM_COPILOT_SCOPE": "user"}
    assert wait_for(lambda: mid in hook("preToolUse", event, real_repo, env=user_env)[1], timeout=30)  # no project file
    env = {"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(real_repo), "COPILOT_HOME": str(home)}
    assert claude.copilot_hooks_installed(str(real_repo), env)
    copilot_install.install(real_repo)
    assert hook("preToolUse", {**event, "sessionId": "scope2"}, real_repo, env=user_env) == (0, "", "")
    assert mid in hook("preToolUse", {**event, "sessionId": "scope3"}, real_repo, env={"COPILOT_HOME": str(home)})[1]
