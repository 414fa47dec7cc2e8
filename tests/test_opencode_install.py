"""``gitmem install opencode`` / ``gitmem uninstall opencode``: gitmem's own plugin file, the MCP entry merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.integrations.agents import installers, opencode_install
from gitmem.integrations.agents.installing import SettingsError
from testing.repos import commit, make_repo

THEIRS_JS = "export const Theirs = async () => ({})\n"


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"a.py": "x = 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def test_install_writes_its_own_plugin_and_uninstall_removes_it_whole(repo: Path) -> None:
    plugins = repo / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "theirs.js").write_text(THEIRS_JS)
    config = repo / "opencode.json"
    theirs = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4-5",
              "plugin": ["opencode-wakatime"], "mcp": {"other": {"type": "remote", "url": "https://x"}}}
    config.write_text(json.dumps(theirs, indent=4))
    res = opencode_install.install(repo)
    ours = plugins / "gitmem.js"
    assert res.mcp and sorted(res.changed) == sorted([str(ours), str(config)])
    assert ours.read_text().startswith(opencode_install.MARKER) and "__GITMEM_CONFIG__" not in ours.read_text()
    data = json.loads(config.read_text())
    assert {k: v for k, v in data.items() if k != "mcp"} == {k: v for k, v in theirs.items() if k != "mcp"}
    assert data["mcp"]["other"] == theirs["mcp"]["other"]
    entry = data["mcp"]["gitmem"]
    assert entry["type"] == "local" and entry["enabled"] is True and entry["command"][:2] == ["sh", "-c"]
    assert config.read_text().startswith('{\n    "$schema"')  # the file's indentation is kept
    assert opencode_install.install(repo).changed == []  # idempotent
    assert opencode_install.status(repo) == {"plugin": str(ours), "installed": True, "config": str(config),
                                             "mcp": True}
    res = opencode_install.uninstall(repo)
    assert sorted(res.changed) == sorted([str(ours), str(config)])
    assert not ours.exists() and (plugins / "theirs.js").read_text() == THEIRS_JS
    assert json.loads(config.read_text()) == theirs
    assert opencode_install.uninstall(repo).changed == []
    assert opencode_install.status(repo)["installed"] is False


def test_uninstall_removes_what_install_created(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "install", "opencode", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mcp"] and len(data["changed"]) == 2
    assert (repo / ".opencode" / "plugins" / "gitmem.js").is_file() and (repo / "opencode.json").is_file()
    code, out, err = run_cli(repo, "uninstall", "opencode", "--json")
    assert code == 0, err
    assert not (repo / ".opencode").exists() and not (repo / "opencode.json").exists()


def test_user_scope_writes_the_config_folder(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.json").write_text('{"theme": "dark"}\n')
    res = opencode_install.install(None, user=True, home=home)
    assert (folder / "plugins" / "gitmem.js").is_file() and res.mcp
    assert json.loads((folder / "opencode.json").read_text())["theme"] == "dark"
    assert not (repo / ".opencode").exists()  # the project is untouched
    assert opencode_install.status(None, user=True, home=home)["installed"] is True
    opencode_install.uninstall(None, user=True, home=home)
    assert json.loads((folder / "opencode.json").read_text()) == {"theme": "dark"}
    assert not (folder / "plugins").exists() and folder.is_dir()


def test_jsonc_is_refused_with_what_to_add_and_nothing_is_written(repo: Path) -> None:
    config = repo / "opencode.jsonc"
    text = '{\n  // my model\n  "model": "anthropic/claude-sonnet-4-5",\n}\n'
    config.write_text(text)
    with pytest.raises(SettingsError) as e:
        opencode_install.install(repo)
    assert "opencode.jsonc is not plain JSON" in e.value.message and '"mcp": {"gitmem"' in e.value.hint
    assert config.read_text() == text and not (repo / ".opencode").exists() and not (repo / "opencode.json").exists()
    with pytest.raises(SettingsError):
        opencode_install.uninstall(repo)
    assert "error" in opencode_install.status(repo)


@pytest.mark.parametrize("text", ['{"mcp": [1]}', "[1, 2]", '{"mcp": '])
def test_invalid_config_is_refused(repo: Path, text: str) -> None:
    (repo / "opencode.json").write_text(text)
    with pytest.raises(SettingsError):
        opencode_install.install(repo)
    assert (repo / "opencode.json").read_text() == text and not (repo / ".opencode").exists()


def test_a_foreign_gitmem_server_and_plugin_are_left_alone(repo: Path) -> None:
    config = repo / "opencode.json"
    foreign = {"mcp": {"gitmem": {"type": "local", "command": ["my-gitmem"]}}}
    config.write_text(json.dumps(foreign))
    res = opencode_install.install(repo)
    assert not res.mcp and any("not `gitmem mcp`" in n for n in res.notes)
    assert json.loads(config.read_text()) == foreign
    ours = repo / ".opencode" / "plugins" / "gitmem.js"
    ours.write_text(THEIRS_JS)  # a user's own gitmem.js
    res = opencode_install.uninstall(repo)
    assert ours.read_text() == THEIRS_JS and any("not gitmem's" in n for n in res.notes)
    assert json.loads(config.read_text()) == foreign


def test_the_registry_knows_opencode(tmp_path: Path, repo: Path) -> None:
    assert "opencode" in installers.names() and installers.get("opencode") is opencode_install
    home = tmp_path / "empty-home"
    home.mkdir()
    assert opencode_install.detect(repo, home) is None or "opencode on PATH" in str(opencode_install.detect(repo, home))
    (repo / ".opencode").mkdir()
    assert opencode_install.detect(repo, home) == ".opencode in this repository"


def test_a_users_own_plugin_of_gitmems_name_is_never_replaced_nor_removed(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    ours = repo / ".opencode" / "plugins" / "gitmem.js"
    ours.parent.mkdir(parents=True)
    ours.write_text(THEIRS_JS)
    with pytest.raises(SettingsError) as e:
        opencode_install.install(repo)
    assert "not gitmem's" in e.value.message and "rename it" in e.value.hint
    assert ours.read_text() == THEIRS_JS and not (repo / "opencode.json").exists()  # nothing written
    code, out, err = run_cli(repo, "install", "opencode")
    assert code == 1 and "not gitmem's" in err and ours.read_text() == THEIRS_JS
    assert not installers.is_installed(opencode_install.status(repo))
    code, out, err = run_cli(repo, "uninstall", "opencode")
    assert code == 0 and ours.read_text() == THEIRS_JS and "not gitmem's" in out
