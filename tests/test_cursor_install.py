"""``gitmem install|uninstall cursor``: merged with the user's hooks and MCP servers, idempotent, symmetric."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import cursor
from gitmem.integrations.agents import cursor_install as ci
from gitmem.integrations.agents.installing import SettingsError
from testing.repos import commit, make_repo
from tests.test_claude_hooks import remember, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

USER_HOOKS = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}],
                                      "beforeShellExecution": [{"command": "./hooks/audit.sh", "timeout": 5}]}}
USER_MCP = {"mcpServers": {"other": {"command": "other-mcp", "args": ["--stdio"]}}}


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_install_into_nothing_and_uninstall_removes_the_files_and_folder(tmp_path: Path) -> None:
    hooks, mcp = ci.locations(tmp_path)
    res = ci.install(tmp_path)
    assert res.agent == "cursor" and res.changed == [str(hooks), str(mcp)] and res.mcp
    data = read(hooks)
    assert data["version"] == 1 and sorted(data["hooks"]) == sorted(ci.EVENTS)
    assert not {"beforeReadFile", "preToolUse"} & set(data["hooks"])  # they only allow or deny
    (h,) = data["hooks"]["postToolUse"]
    assert set(h) == {"command"} and h["command"].startswith(": gitmem-cursor-hook;")
    assert h["command"].endswith("exit 0") and " postToolUse" in h["command"]
    assert read(mcp)["mcpServers"]["gitmem"]["command"] == "sh"
    st = ci.status(tmp_path)
    assert all(st["events"].values()) and st["mcp"]
    assert ci.install(tmp_path).changed == []  # idempotent
    assert read(hooks) == data
    assert sorted(ci.uninstall(tmp_path).changed) == sorted([str(hooks), str(mcp)])
    assert not (tmp_path / ".cursor").exists()  # gitmem created it and emptied it
    assert ci.uninstall(tmp_path).changed == []
    assert not any(ci.status(tmp_path)["events"].values())


def test_the_users_hooks_and_servers_are_kept(tmp_path: Path) -> None:
    hooks, mcp = ci.locations(tmp_path)
    hooks.parent.mkdir()
    hooks.write_text(json.dumps(USER_HOOKS))
    mcp.write_text(json.dumps(USER_MCP))
    ci.install(tmp_path)
    ci.install(tmp_path)
    data = read(hooks)
    assert data["hooks"]["afterFileEdit"][0] == USER_HOOKS["hooks"]["afterFileEdit"][0]
    assert len(data["hooks"]["afterFileEdit"]) == 2  # the user's first, gitmem's once
    assert data["hooks"]["beforeShellExecution"] == USER_HOOKS["hooks"]["beforeShellExecution"]
    assert read(mcp)["mcpServers"]["other"] == USER_MCP["mcpServers"]["other"]
    ci.uninstall(tmp_path)
    assert read(hooks) == USER_HOOKS and read(mcp) == USER_MCP  # symmetric


def test_a_foreign_gitmem_server_is_left_alone(tmp_path: Path) -> None:
    _, mcp = ci.locations(tmp_path)
    mcp.parent.mkdir()
    mine = {"mcpServers": {"gitmem": {"command": "my-own-gitmem"}}}
    mcp.write_text(json.dumps(mine))
    res = ci.install(tmp_path)
    assert not res.mcp and any("not `gitmem mcp`" in n for n in res.notes)
    ci.uninstall(tmp_path)
    assert read(mcp) == mine and not ci.locations(tmp_path)[0].exists()


def test_user_scope_writes_under_home_and_keeps_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    res = ci.install(None, user=True, home=home)
    assert res.changed == [str(home / ".cursor" / "hooks.json"), str(home / ".cursor" / "mcp.json")]
    assert ci.status(None, user=True, home=home)["mcp"]
    ci.uninstall(None, user=True, home=home)
    assert (home / ".cursor").is_dir() and not any((home / ".cursor").iterdir())


@pytest.mark.parametrize("name,text", [("hooks.json", "{not json"), ("mcp.json", "[1, 2]"),
                                       ("hooks.json", '{"hooks": []}'), ("hooks.json", '{"hooks": {"stop": {}}}'),
                                       ("mcp.json", '{"mcpServers": "x"}')])
def test_invalid_files_are_refused_and_never_rewritten(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / name).write_text(text)
    for op in (ci.install, ci.uninstall):
        with pytest.raises(SettingsError):
            op(tmp_path)
    assert (tmp_path / ".cursor" / name).read_text() == text
    assert sorted(p.name for p in (tmp_path / ".cursor").iterdir()) == [name]  # nothing else written
    assert "error" in ci.status(tmp_path)


def test_detect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    home = tmp_path / "home"
    assert ci.detect(tmp_path, home) is None
    (bin_dir / "cursor-agent").write_text("#!/bin/sh\n")
    (bin_dir / "cursor-agent").chmod(0o755)
    assert (ci.detect(tmp_path, home) or "").startswith("cursor-agent on PATH")
    (bin_dir / "cursor-agent").unlink()
    (home / ".cursor").mkdir(parents=True)
    assert ci.detect(tmp_path, home) is None  # ~/.cursor alone (Cursor uninstalled) does not count
    (bin_dir / "cursor").write_text("#!/bin/sh\n")
    (bin_dir / "cursor").chmod(0o755)
    assert (ci.detect(tmp_path, home) or "").startswith("cursor on PATH")
    (tmp_path / ".cursor").mkdir()
    assert ci.detect(tmp_path, home) == ".cursor in this repository"


def test_the_installed_command_runs_the_hook_and_answers(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The command written into hooks.json, run as Cursor runs it (a shell, the event on stdin), injects."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": REAL_CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    ci.install(repo)
    (command,) = (h["command"] for h in read(ci.locations(repo)[0])["hooks"]["postToolUse"])
    event = {"hook_event_name": "postToolUse", "conversation_id": "c", "workspace_roots": [str(repo)],
             "tool_name": "Read", "tool_input": {"file_path": str(repo / "src/client.py")}, "tool_output": ""}
    outs: list[str] = []

    def got() -> bool:
        proc = subprocess.run(["sh", "-c", command], input=json.dumps(event).encode(), cwd=repo,
                              capture_output=True, env=dict(os.environ), timeout=60)
        assert proc.returncode == 0
        outs.append(proc.stdout.decode())
        return bool(outs[-1])

    assert wait_for(got, timeout=30)
    assert mid in json.loads(outs[-1])["additional_context"]
    assert cursor.cursor_hooks_installed(str(repo), {"CURSOR_VERSION": "2.4", "HOME": str(tmp_path)})
