"""``gitmem install codex`` / ``uninstall codex``: the user's hooks untouched, idempotent, symmetric."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from gitmem.integrations.agents.codex_install import (
    EVENTS,
    MARKER,
    MCP_TRUST_NOTE,
    TRUST_NOTE,
    install,
    status,
    uninstall,
)
from gitmem.integrations.agents.installing import SettingsError
from testing.repos import commit, make_repo

USER_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 guard.py",
                                                      "statusMessage": "Checking"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 30}]}],
        "PreCompact": [{"matcher": "*", "hooks": [{"type": "command", "command": "sh pre.sh"}]}],
    },
}


def ours(data: dict, event: str) -> list[dict]:  # type: ignore[type-arg]
    return [h for g in data["hooks"].get(event, []) for h in g["hooks"] if h["command"].startswith(MARKER)]


def test_install_merges_is_idempotent_and_uninstall_restores(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_HOOKS, indent=4))
    res = install(tmp_path)
    config = tmp_path / ".codex" / "config.toml"
    assert res.changed == [str(path), str(config)] and res.mcp
    assert TRUST_NOTE in res.notes and MCP_TRUST_NOTE in res.notes
    data = json.loads(path.read_text())
    for event, matcher, _ in EVENTS:
        (h,) = ours(data, event)
        assert f"gitmem-codex-hook {event}" in h["command"], event
        group = next(g for g in data["hooks"][event] if h in g["hooks"])
        assert group.get("matcher") == matcher
    # the user's handlers are all still there, first, unchanged
    assert data["hooks"]["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    assert data["hooks"]["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    assert data["hooks"]["PreCompact"] == USER_HOOKS["hooks"]["PreCompact"]
    assert all(status(tmp_path)["events"].values())
    # a second install changes nothing
    before = path.read_bytes()
    assert install(tmp_path).changed == []
    assert path.read_bytes() == before
    # uninstall gives back exactly what the user had; a second one changes nothing
    assert uninstall(tmp_path).changed == [str(config), str(path)]
    assert json.loads(path.read_text()) == USER_HOOKS and not config.exists()
    assert uninstall(tmp_path).changed == []
    assert not any(status(tmp_path)["events"].values())


def test_install_into_nothing_and_uninstall_leaves_no_trace(tmp_path: Path) -> None:
    install(tmp_path)
    assert (tmp_path / ".codex" / "hooks.json").is_file() and (tmp_path / ".codex" / "config.toml").is_file()
    uninstall(tmp_path)
    assert not (tmp_path / ".codex").exists()


def test_uninstall_keeps_a_codex_folder_with_other_files(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')
    install(tmp_path)
    uninstall(tmp_path)
    assert not (tmp_path / ".codex" / "hooks.json").exists()
    assert (tmp_path / ".codex" / "config.toml").read_text() == 'model = "gpt-5.5"\n'


USER_CONFIG = """# my Codex settings
model = "gpt-5.5"   # the fast one

[mcp_servers.github]
command = "gh-mcp"  # the GitHub server
args = ["--read-only"]

[profiles.deep]
model = "gpt-5.5-pro"  # for hard bugs
"""


@pytest.mark.parametrize("text", [USER_CONFIG, 'model = "gpt-5.5"\n', "# only a comment\n",
                                  '[projects."/x"]\ntrust_level = "trusted"\n', ""])
def test_mcp_server_round_trip_keeps_the_users_config_byte_for_byte(tmp_path: Path, text: str) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    res = install(tmp_path)
    assert res.mcp and str(config) in res.changed
    data = tomllib.loads(config.read_text())
    server = data["mcp_servers"]["gitmem"]
    assert server["command"] == "sh" and server["args"][1].startswith(": gitmem-mcp;")
    after = config.read_text()
    for line in text.splitlines():  # every line of the user's, comments included, is still there
        assert line in after
    if "github" in text:
        assert data["mcp_servers"]["github"] == {"command": "gh-mcp", "args": ["--read-only"]}
        assert data["profiles"] == {"deep": {"model": "gpt-5.5-pro"}}
    assert install(tmp_path).changed == [] and config.read_text() == after  # idempotent
    assert status(tmp_path)["mcp"]
    uninstall(tmp_path)
    assert (config.read_text() if config.exists() else "") == text
    assert config.exists() and config.read_text() == text  # the user's file stays, even a blank one


def test_a_foreign_gitmem_server_and_bad_toml_are_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    theirs = '[mcp_servers.gitmem]\ncommand = "/opt/other/gitmem-server"\n'
    config.write_text(theirs)
    res = install(tmp_path)
    assert not res.mcp and any("not `gitmem mcp`" in n for n in res.notes) and config.read_text() == theirs
    uninstall(tmp_path)
    assert config.read_text() == theirs
    config.write_text("model = [unclosed\n")
    with pytest.raises(SettingsError):
        install(tmp_path)
    assert not (tmp_path / ".codex" / "hooks.json").exists()  # nothing written
    assert config.read_text() == "model = [unclosed\n"


def test_an_earlier_hand_written_server_is_recognised_and_updated(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.gitmem]\ncommand = "gitmem"\nargs = ["mcp"]\n')
    res = install(tmp_path)
    assert res.mcp and tomllib.loads(config.read_text())["mcp_servers"]["gitmem"]["command"] == "sh"
    uninstall(tmp_path)
    assert config.read_text() == "" and not (tmp_path / ".codex" / "hooks.json").exists()  # the config was not
    # gitmem's creation: emptied, kept; the hooks file gitmem created goes


def test_invalid_hooks_file_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(SettingsError):
        install(tmp_path)
    with pytest.raises(SettingsError):
        uninstall(tmp_path)
    assert path.read_text() == "{not json"


def test_user_scope_uses_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "gpt-5.5"\n')
    res = install(None, user=True, home=home)
    assert res.path("hooks") == home / "hooks.json" and res.path("hooks").is_file()
    assert MCP_TRUST_NOTE not in res.notes and "gitmem" in tomllib.loads((home / "config.toml").read_text())[
        "mcp_servers"]
    uninstall(None, user=True, home=home)
    assert not res.path("hooks").exists() and home.is_dir()
    assert (home / "config.toml").read_text() == 'model = "gpt-5.5"\n'


def test_cli_install_and_uninstall_codex(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    code, out, err = run_cli(repo, "install", "codex")
    assert code == 0, err
    assert f"created {repo / '.codex' / 'hooks.json'}" in out and "/hooks" in out
    code, out, err = run_cli(repo, "install", "codex", "--json")
    assert code == 0 and json.loads(out)["changed"] == []
    code, out, err = run_cli(repo, "uninstall", "codex")
    assert code == 0 and f"removed {repo / '.codex' / 'hooks.json'}" in out
    assert not (repo / ".codex").exists()
    # Claude Code's install is untouched by any of this
    assert not (repo / ".claude").exists()


@pytest.mark.parametrize("text", [
    'mcp_servers = { other = { command = "x" } }\n',
    'model = "gpt-5.5"\nmcp_servers.other.command = "x"\n',
    '[mcp_servers]\nother = { command = "x" }\n',
    '[mcp_servers]\n',
])
def test_every_layout_of_mcp_servers_takes_and_gives_back_gitmems_server(tmp_path: Path, text: str) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    res = install(tmp_path)
    data = tomllib.loads(config.read_text())
    assert res.mcp and data["mcp_servers"]["gitmem"]["command"] == "sh"
    assert {k: v for k, v in data["mcp_servers"].items() if k != "gitmem"} == tomllib.loads(text)["mcp_servers"]
    assert install(tmp_path).changed == []
    uninstall(tmp_path)
    assert config.read_text() == text and not (tmp_path / ".codex" / "hooks.json").exists()


def test_a_config_gitmem_cannot_change_is_refused_before_the_hooks_file_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.integrations.agents import codex_install

    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('mcp_servers = { other = { command = "x" } }\n')

    def refuse(*_: object) -> str:  # tomlkit failing on a layout it cannot edit, as 0.13 did on inline tables
        raise ValueError("Inline tables cannot contain a table")

    monkeypatch.setattr(codex_install, "_with_server", refuse)
    with pytest.raises(SettingsError) as e:
        install(tmp_path)
    assert "cannot add gitmem's server" in e.value.message and "[mcp_servers.gitmem]" in e.value.hint
    assert not (tmp_path / ".codex" / "hooks.json").exists() and config.read_text().startswith("mcp_servers = {")
