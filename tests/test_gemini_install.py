"""``gitmem install|uninstall gemini``: merged with the user's settings, idempotent, symmetric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.integrations.agents import gemini_install as gi
from gitmem.integrations.agents.installing import SettingsError

USER = {"general": {"vimMode": True},
        "hooks": {"AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "lint.sh",
                                                                        "timeout": 3000}]}]},
        "mcpServers": {"other": {"command": "other-mcp"}}}


def settings(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((root / ".gemini" / "settings.json").read_text())


def test_install_into_nothing_and_uninstall_removes_the_file_and_folder(tmp_path: Path) -> None:
    res = gi.install(tmp_path)
    data = settings(tmp_path)
    assert res.changed == [str(tmp_path / ".gemini" / "settings.json")] and res.mcp
    assert sorted(data["hooks"]) == sorted(e for e, _, _ in gi.EVENTS)
    assert "BeforeTool" not in data["hooks"]  # Gemini CLI takes no context there
    h = data["hooks"]["SessionStart"][0]["hooks"][0]
    assert h["command"].startswith(gi.MARKER) and h["timeout"] == 15_000  # milliseconds
    assert data["mcpServers"]["gitmem"]["command"] == "sh" and "type" not in data["mcpServers"]["gitmem"]
    assert all(gi.status(tmp_path)["events"].values()) and gi.status(tmp_path)["mcp"]
    assert gi.install(tmp_path).changed == []  # idempotent
    assert gi.uninstall(tmp_path).changed
    assert not (tmp_path / ".gemini").exists()
    assert gi.uninstall(tmp_path).changed == []


def test_the_users_settings_hooks_and_servers_are_kept(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(json.dumps(USER))
    gi.install(tmp_path)
    gi.install(tmp_path)
    data = settings(tmp_path)
    assert data["general"] == USER["general"] and data["mcpServers"]["other"] == USER["mcpServers"]["other"]
    after = data["hooks"]["AfterTool"]
    assert after[0] == USER["hooks"]["AfterTool"][0] and len(after) == 2  # the user's first, gitmem's once
    gi.uninstall(tmp_path)
    assert settings(tmp_path) == USER


def test_a_foreign_gitmem_server_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    mine = {"mcpServers": {"gitmem": {"command": "my-own-gitmem"}}}
    (tmp_path / ".gemini" / "settings.json").write_text(json.dumps(mine))
    res = gi.install(tmp_path)
    assert not res.mcp and any("not `gitmem mcp`" in n for n in res.notes)
    gi.uninstall(tmp_path)
    assert settings(tmp_path) == mine


def test_user_scope_removes_only_a_file_gitmem_created(tmp_path: Path) -> None:
    gi.install(None, user=True, home=tmp_path)
    path = tmp_path / ".gemini" / "settings.json"
    assert path.exists()
    gi.uninstall(None, user=True, home=tmp_path)
    assert not path.exists() and (tmp_path / ".gemini").is_dir()  # gitmem made the file; ~/.gemini is the CLI's
    path.write_text("{}")  # the user's own, empty once gitmem's entries are removed: kept byte for byte
    gi.install(None, user=True, home=tmp_path)
    gi.uninstall(None, user=True, home=tmp_path)
    assert path.read_text() == "{}"


def test_invalid_json_is_never_rewritten(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text("{not json")
    with pytest.raises(SettingsError):
        gi.install(tmp_path)
    assert (tmp_path / ".gemini" / "settings.json").read_text() == "{not json"


def test_cli_install_and_uninstall(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    from testing.repos import make_repo

    repo = make_repo(tmp_path / "p")
    code, out, err = run_cli(repo, "install", "gemini", "--json")
    assert code == 0, err
    assert json.loads(out)["mcp"] is True and (repo / ".gemini" / "settings.json").exists()
    code, out, err = run_cli(repo, "uninstall", "gemini")
    assert code == 0 and "removed" in out, err
    assert not (repo / ".gemini").exists()
