"""``gitmem install copilot`` / ``gitmem uninstall copilot``: gitmem's own hooks file, the MCP entry merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.integrations.agents import copilot_install
from gitmem.integrations.agents.installing import SettingsError
from testing.repos import commit, make_repo


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"a.py": "x = 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def test_install_writes_its_own_file_and_uninstall_removes_it_whole(repo: Path) -> None:
    hooks_dir = repo / ".github" / "hooks"
    hooks_dir.mkdir(parents=True)
    theirs = hooks_dir / "theirs.json"
    theirs.write_text('{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}}\n')
    mcp = repo / ".github" / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    before = theirs.read_bytes()
    res = copilot_install.install(repo)
    doc = json.loads((hooks_dir / "gitmem.json").read_text())
    assert doc["version"] == 1
    assert sorted(doc["hooks"]) == sorted(e for e, _ in copilot_install.EVENTS)
    for event, handlers in doc["hooks"].items():
        (h,) = handlers
        assert h["type"] == "command" and h["bash"].startswith(copilot_install.MARKER) and event in h["bash"]
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["other"] == {"command": "other-server"} and "gitmem" in servers and res.mcp
    assert copilot_install.install(repo).changed == []  # idempotent
    assert copilot_install.status(repo) == {"hooks": str(hooks_dir / "gitmem.json"), "installed": True, "mcp": True}
    copilot_install.uninstall(repo)
    assert not (hooks_dir / "gitmem.json").exists() and theirs.read_bytes() == before
    assert json.loads(mcp.read_text()) == {"mcpServers": {"other": {"command": "other-server"}}}
    assert copilot_install.uninstall(repo).changed == []


def test_uninstall_removes_what_install_created(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "install", "copilot", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mcp"] and len(data["changed"]) == 2
    assert (repo / ".github" / "hooks" / "gitmem.json").is_file()
    code, out, err = run_cli(repo, "uninstall", "copilot", "--json")
    assert code == 0, err
    assert not (repo / ".github").exists()


def test_a_foreign_gitmem_server_and_bad_json_are_left_alone(repo: Path) -> None:
    mcp = repo / ".github" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text(json.dumps({"mcpServers": {"gitmem": {"command": "something-else"}}}))
    res = copilot_install.install(repo)
    assert not res.mcp and any("not `gitmem mcp`" in n for n in res.notes)
    assert json.loads(mcp.read_text()) == {"mcpServers": {"gitmem": {"command": "something-else"}}}
    copilot_install.uninstall(repo)
    assert json.loads(mcp.read_text()) == {"mcpServers": {"gitmem": {"command": "something-else"}}}
    mcp.write_text("{not json")
    with pytest.raises(SettingsError):
        copilot_install.install(repo)
    assert mcp.read_text() == "{not json"
