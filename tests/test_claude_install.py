"""``gitmem install claude`` / ``uninstall claude``, and the plugin files in ``hooks/``."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import layout
from gitmem.integrations.agents.claude_install import EVENTS, install, status, uninstall
from gitmem.integrations.agents.installing import ABSENT_NOTICE, SettingsError
from testing.repos import commit, make_repo

ROOT = Path(__file__).resolve().parents[1]

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]},
                       {"matcher": "Read|Edit|Write|NotebookEdit",
                        "hooks": [{"type": "command", "command": "echo mine", "timeout": 3}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "enabledMcpjsonServers": ["github"],
}


def test_install_merges_is_idempotent_and_uninstall_restores(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=4))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}))
    res = install(tmp_path)
    assert sorted(res.changed) == sorted([str(settings), str(tmp_path / ".mcp.json")])
    data = json.loads(settings.read_text())
    assert data["permissions"] == USER_SETTINGS["permissions"]
    for event, _matcher, _ in EVENTS:
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if h["command"].startswith(": gitmem-hook;")]
        assert len(ours) == 1 and f"gitmem-hook {event}" in ours[0]["command"], event
    # the user's handlers are all still there, first, unchanged
    assert data["hooks"]["PreToolUse"][:2] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert data["enabledMcpjsonServers"] == ["github", "gitmem"]
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["github"] == {"command": "gh-mcp"}
    assert "gitmem mcp" in mcp["mcpServers"]["gitmem"]["args"][1]
    assert all(status(tmp_path)["events"].values()) and status(tmp_path)["mcp"]
    # a second install changes nothing
    before = settings.read_bytes(), (tmp_path / ".mcp.json").read_bytes()
    assert install(tmp_path).changed == []
    assert (settings.read_bytes(), (tmp_path / ".mcp.json").read_bytes()) == before
    # uninstall gives back what the user had
    uninstall(tmp_path)
    assert json.loads(settings.read_text()) == USER_SETTINGS
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {"mcpServers": {"github": {"command": "gh-mcp"}}}
    assert not any(status(tmp_path)["events"].values())


def test_install_into_nothing_and_uninstall_leaves_no_trace(tmp_path: Path) -> None:
    install(tmp_path)
    assert (tmp_path / ".claude" / "settings.json").is_file() and (tmp_path / ".mcp.json").is_file()
    uninstall(tmp_path)
    assert not (tmp_path / ".claude").exists()  # gitmem made it; an uninstall leaves no trace
    assert not (tmp_path / ".mcp.json").exists()


def test_user_scope_writes_home_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home).mkdir()
    (home / ".claude.json").write_text(json.dumps({"numStartups": 7, "projects": {"/x": {}}}))
    res = install(None, user=True, home=home)
    assert res.path("settings") == home / ".claude" / "settings.json"
    data = json.loads((home / ".claude.json").read_text())
    assert data["numStartups"] == 7 and data["projects"] == {"/x": {}} and "gitmem" in data["mcpServers"]
    assert "enabledMcpjsonServers" not in json.loads(res.path("settings").read_text())
    uninstall(None, user=True, home=home)
    assert json.loads((home / ".claude.json").read_text()) == {"numStartups": 7, "projects": {"/x": {}}}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": {"Stop": [}'])
def test_invalid_settings_are_never_overwritten(tmp_path: Path, content: str, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "x = 1\n"})
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    code, out, err = run_cli(repo, "install", "claude")
    assert code == 1 and "settings.json" in err and "hint:" in err
    assert settings.read_text() == content
    assert not (repo / ".mcp.json").exists()


def test_cli_install_and_uninstall(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "x = 1\n"})
    code, out, err = run_cli(repo / "", "install", "claude", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["settings"] == str(repo / ".claude" / "settings.json")
    code, out, _ = run_cli(repo, "install", "claude")
    assert code == 0 and "nothing to change" in out
    code, out, _ = run_cli(repo, "uninstall", "claude")
    assert code == 0 and f"removed {repo / '.claude' / 'settings.json'}" in out  # gitmem created it
    assert not (repo / ".claude").exists() and not (repo / ".mcp.json").exists()


def test_handlers_from_other_tools_with_similar_names_are_kept(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-gitmem-hook-wrapper.sh"}]}]}}
    settings.write_text(json.dumps(theirs))
    install(tmp_path)
    uninstall(tmp_path)
    assert json.loads(settings.read_text()) == theirs


# -- the plugin ---------------------------------------------------------------------------------


def test_plugin_hooks_json_registers_every_event() -> None:
    data = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    for event, matcher, extra in EVENTS:
        (group,) = data["hooks"][event]
        assert group.get("matcher") == matcher
        (h,) = group["hooks"]
        assert h["args"] == ["${CLAUDE_PLUGIN_ROOT}/hooks/claude-hook", event]
        assert {k: v for k, v in h.items() if k not in ("type", "command", "args")} == extra
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "gitmem" and "hooks" not in manifest  # hooks/hooks.json loads by convention


def test_plugin_script_runs_the_hook(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
    run_cli(repo, "init", "--no-hooks")
    run_cli(repo, "remember", "f returns one on purpose", "--anchor", "a.py::f")
    event = {"session_id": "plug", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "hooks" / "claude-hook"), "SessionStart"],
                          input=json.dumps(event).encode(), capture_output=True, cwd=repo, env=env, timeout=60)
    assert proc.returncode == 0
    assert "f returns one on purpose" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_events_table_is_not_mutated_by_install(tmp_path: Path) -> None:
    before = copy.deepcopy(EVENTS)
    install(tmp_path)
    install(tmp_path)
    assert EVENTS == before


def test_doctor_reports_claude_llm_and_spool(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "x = 1\n"})
    run_cli(repo, "init")
    run_cli(repo, "install", "claude")
    (repo / ".gitmem" / "config.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\n'
                                                   '[embeddings]\nprovider = "none"\n')
    event = {"session_id": "open", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a.py"}}
    subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"], input=json.dumps(event).encode(),
                   cwd=repo, check=True, timeout=60)
    code, out, _ = run_cli(repo, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert code == 1
    assert checks["llm"]["level"] == "error" and "model" in checks["llm"]["message"]
    assert checks["claude"]["level"] == "ok"
    assert checks["spool"]["level"] == "warn" and "gitmem consolidate" in checks["spool"]["hint"]


def test_lookalike_handlers_odd_shapes_and_foreign_server_are_respected(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/bin/notify-gitmem-hook --x"},
                                            {"type": "command", "command": "gitmem-hook Stop && say done"}]}],
                        "Notification": []}}
    settings.write_text(json.dumps(theirs))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"gitmem": {"command": "/opt/other/server"}}}))
    res = install(tmp_path)
    assert any("already has an MCP server named 'gitmem'" in n for n in res.notes)
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {
        "mcpServers": {"gitmem": {"command": "/opt/other/server"}}}
    uninstall(tmp_path)
    assert json.loads(settings.read_text()) == theirs
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {
        "mcpServers": {"gitmem": {"command": "/opt/other/server"}}}


@pytest.mark.parametrize("settings_obj", [{"hooks": [1, 2]}, {"hooks": {"Stop": {"x": 1}}},
                                          {"enabledMcpjsonServers": "other"}])
def test_unexpected_shapes_are_refused_not_rewritten(tmp_path: Path, settings_obj: dict) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(settings_obj))
    with pytest.raises(SettingsError):
        install(tmp_path)
    with pytest.raises(SettingsError):
        uninstall(tmp_path)
    assert json.loads(settings.read_text()) == settings_obj


def test_mode_and_symlinks_of_settings_files_are_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles"
    (home / ".claude").mkdir(parents=True)
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text('{"theme": "dark"}')
    os.chmod(dotfiles / "settings.json", 0o640)
    (home / ".claude" / "settings.json").symlink_to(dotfiles / "settings.json")
    (home / ".claude.json").write_text('{"primaryApiKey": "x"}')
    os.chmod(home / ".claude.json", 0o600)
    install(None, user=True, home=home)
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "gitmem-hook" in (dotfiles / "settings.json").read_text()
    assert (dotfiles / "settings.json").stat().st_mode & 0o777 == 0o640
    assert (home / ".claude.json").stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    install(None, user=True, home=fresh)
    assert (fresh / ".claude.json").stat().st_mode & 0o777 == 0o600



@pytest.mark.parametrize("path_has_gitmem", [True, False])
def test_registered_command_runs_without_and_with_path(tmp_path: Path, run_cli, path_has_gitmem: bool) -> None:
    """The registered shell command works with a bare PATH (the clone's bin-dir file), and when neither that
    file nor PATH has gitmem (a teammate without it) exits 0 with the one-line notice (the repository has
    memories)."""
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
    run_cli(repo, "init", "--no-hooks")
    run_cli(repo, "remember", "f returns one on purpose", "--anchor", "a.py::f")
    install(repo)
    groups = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    cmd = groups[-1]["hooks"][0]["command"]
    event = json.dumps({"session_id": "p", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = "/usr/bin:/bin"
    assert str(Path(sys.executable).parent) not in cmd
    if not path_has_gitmem:
        layout.of(repo).bin_pointer.unlink()
    proc = subprocess.run(["sh", "-c", cmd], input=event.encode(), capture_output=True, cwd=repo, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b""
    if path_has_gitmem:
        assert "f returns one on purpose" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    else:
        assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == ABSENT_NOTICE


def test_install_in_a_repository_without_gitmem_says_so(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"a.py": "x = 1\n"})
    code, out, _ = run_cli(repo, "install", "claude")
    assert code == 0 and "gitmem init" in out
