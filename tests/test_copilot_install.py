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


def test_user_scope_writes_copilot_home_and_leaves_no_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             run_cli) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "copilot-home"
    home.mkdir()
    (home / "mcp-config.json").write_text(json.dumps({"mcpServers": {"other": {"command": "o"}}}, indent=2) + "\n")
    before = (home / "mcp-config.json").read_bytes()
    monkeypatch.setenv("COPILOT_HOME", str(home))
    code, out, err = run_cli(tmp_path, "install", "copilot", "--user", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mcp"] and data["files"] == {"hooks": str(home / "hooks" / "gitmem.json"),
                                             "mcp_file": str(home / "mcp-config.json")}
    doc = json.loads((home / "hooks" / "gitmem.json").read_text())
    for handlers in doc["hooks"].values():
        (h,) = handlers
        assert h["env"] == {"GITMEM_COPILOT_SCOPE": "user"} and h["bash"].startswith(copilot_install.MARKER)
    assert "gitmem" in json.loads((home / "mcp-config.json").read_text())["mcpServers"]
    assert copilot_install.status(None, user=True)["installed"]
    code, out, err = run_cli(tmp_path, "uninstall", "copilot", "--user")
    assert code == 0, err
    assert not (home / "hooks").exists() and (home / "mcp-config.json").read_bytes() == before and home.is_dir()


@pytest.mark.parametrize("theirs", [
    {"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo mine"}]}},
    {"version": 1, "hooks": {}},  # no handler at all: not gitmem's either
    None,  # not JSON
])
def test_a_users_own_gitmem_json_is_never_overwritten_removed_or_counted(
        repo: Path, run_cli, theirs: dict | None) -> None:  # type: ignore[no-untyped-def]
    from gitmem.integrations.agents import installers

    path = repo / ".github" / "hooks" / "gitmem.json"
    path.parent.mkdir(parents=True)
    text = json.dumps(theirs) if theirs is not None else "{mine"
    path.write_text(text)
    assert not copilot_install.status(repo)["installed"] and installers.installed(repo) == []
    code, out, err = run_cli(repo, "uninstall")  # gitmem was never installed: nothing to uninstall
    assert code == 1 and "installed for no agent" in err
    res = copilot_install.uninstall(repo)
    assert path.read_text() == text and any("not gitmem's" in n for n in res.notes) and not res.changed
    with pytest.raises(SettingsError) as e:
        copilot_install.install(repo)
    assert "not gitmem's" in e.value.message and "rename it" in e.value.hint
    assert path.read_text() == text and not (repo / ".github" / "mcp.json").exists()  # nothing written
    mixed = {"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo mine"},
                                                      *copilot_install.hooks_document(None)["hooks"]["sessionStart"]]}}
    path.write_text(json.dumps(mixed))  # gitmem's handler beside the user's: still the user's file
    with pytest.raises(SettingsError):
        copilot_install.install(repo)
    copilot_install.uninstall(repo)
    assert json.loads(path.read_text()) == mixed
