"""``gitmem install`` / ``gitmem uninstall`` with no agent: detection, dry run, symmetry; the registry's protocol."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitmem.integrations.agents import installers
from testing.repos import commit, make_repo


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare machine: an empty HOME, no agent folder variables, a PATH with no agent on it."""
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"a.py": "x = 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def test_every_registered_installer_follows_the_protocol() -> None:
    for name in installers.names():
        mod = installers.get(name)
        assert mod.NAME == name and isinstance(mod.USER_SCOPE, bool)
        for fn in ("install", "uninstall", "status", "detect"):
            assert callable(getattr(mod, fn)), (name, fn)
        assert installers.help_text(name)


@pytest.mark.parametrize(("marks", "expected"), [
    ({".claude/settings.local.json": "{}"}, {"claude": ".claude in this repository"}),
    ({"CLAUDE.md": "# notes\n"}, {"claude": "CLAUDE.md in this repository"}),
    ({"AGENTS.md": "# agents\n"}, {"codex": "AGENTS.md in this repository"}),
    ({".codex/config.toml": 'model = "gpt-5.5"\n'}, {"codex": ".codex in this repository"}),
    ({"GEMINI.md": "x\n", ".gemini/settings.json": "{}"}, {"gemini": ".gemini in this repository"}),
    ({".github/copilot-instructions.md": "x\n"}, {"copilot": ".github/copilot-instructions.md in this repository"}),
    ({".github/workflows/ci.yml": "on: push\n"}, {}),  # .github/ alone says nothing about Copilot
])
def test_project_marks_are_detected(repo: Path, machine: Path, marks: dict[str, str],
                                    expected: dict[str, str]) -> None:
    for rel, text in marks.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    assert dict(installers.detect_all(repo, machine)) == expected


def test_machine_marks_are_detected(repo: Path, machine: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (machine / ".claude").mkdir()
    (machine / ".gemini").mkdir()
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    copilot = tmp_path / "bin" / "copilot"
    copilot.write_text("#!/bin/sh\n")
    copilot.chmod(0o755)
    found = dict(installers.detect_all(repo, machine))
    assert found == {"claude": "~/.claude on this machine", "codex": f"{codex_home} on this machine",
                     "gemini": "~/.gemini on this machine", "copilot": f"copilot on PATH ({copilot})"}
    (machine / ".codex").mkdir()  # ~/.codex does not count when CODEX_HOME points elsewhere
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nowhere"))
    assert "codex" not in dict(installers.detect_all(repo, machine))


def test_no_agent_detected_exits_1_with_the_choices(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "install")
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("error: no agent detected") and "gitmem install AGENT" in line
    assert all(name in line for name in installers.names())
    code, out, err = run_cli(repo, "install", "--json")
    assert code == 1 and out == "" and "no agent detected" in json.loads(err)["error"]
    code, out, err = run_cli(repo, "uninstall")
    assert code == 1 and "installed for no agent" in err
    assert sorted(p.name for p in repo.iterdir()) == [".git", ".gitmem", "a.py"]  # nothing written


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but .git/ and .gitmem/, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".gitmem")}


def test_install_then_uninstall_gives_back_the_repository_byte_for_byte(repo: Path, machine: Path,
                                                                         run_cli) -> None:  # type: ignore[no-untyped-def]
    files = {
        ".claude/settings.json": json.dumps({"permissions": {"allow": ["Bash(npm test)"]},
                                             "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                            "command": "say done"}]}]}},
                                            indent=4) + "\n",
        ".mcp.json": json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}, indent=2) + "\n",
        "AGENTS.md": "# Agents\n",
        ".codex/config.toml": '# mine\nmodel = "gpt-5.5"  # fast\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n',
        ".gemini/settings.json": json.dumps({"general": {"vimMode": True}}, indent=2) + "\n",
        ".github/copilot-instructions.md": "Be brief.\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    before = _tree(repo)
    code, out, err = run_cli(repo, "install", "--dry-run", "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["dry_run"] and [a["agent"] for a in plan["agents"]] == ["claude", "codex", "gemini", "copilot"]
    assert not any(a["installed"] for a in plan["agents"]) and "changed" not in plan["agents"][0]
    assert _tree(repo) == before  # a dry run writes nothing
    code, out, err = run_cli(repo, "install")
    assert code == 0, err
    assert "claude: installed (.claude in this repository)" in out
    assert "copilot: installed (.github/copilot-instructions.md in this repository)" in out
    assert sorted(installers.installed(repo)) == ["claude", "codex", "copilot", "gemini"]
    after = _tree(repo)
    assert {".github/hooks/gitmem.json", ".github/mcp.json", ".codex/hooks.json"} <= set(after)
    assert all(after[rel] != before[rel] for rel in (".claude/settings.json", ".codex/config.toml",
                                                     ".gemini/settings.json", ".mcp.json"))
    code, out, err = run_cli(repo, "install", "--json")  # a second time: nothing changes
    assert code == 0 and all(a["changed"] == [] and a["installed"] for a in json.loads(out)["agents"])
    code, out, err = run_cli(repo, "uninstall", "--json")
    assert code == 0, err
    assert sorted(a["agent"] for a in json.loads(out)["agents"]) == ["claude", "codex", "copilot", "gemini"]
    assert _tree(repo) == before  # the user's files byte-identical, gitmem's own gone
    assert not (repo / ".github" / "hooks").exists()
    assert installers.installed(repo) == []


def test_install_into_a_bare_repository_detected_from_the_machine(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (machine / ".gemini").mkdir()
    code, out, err = run_cli(repo, "install")
    assert code == 0, err
    assert out.startswith("gemini: installed (~/.gemini on this machine)")
    assert (repo / ".gemini" / "settings.json").is_file()
    assert not (machine / ".gemini" / "settings.json").exists()  # project scope only
    code, out, err = run_cli(repo, "uninstall", "--dry-run")
    assert code == 0 and "gemini: would uninstall" in out and (repo / ".gemini").exists()
    code, out, err = run_cli(repo, "uninstall")
    assert code == 0, err
    assert not (repo / ".gemini").exists()


def test_user_flag_is_refused_in_one_line_for_an_agent_without_user_settings(
        repo: Path, machine: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    claude = installers.get("claude")
    monkeypatch.setattr(claude, "USER_SCOPE", False)
    monkeypatch.setattr(claude, "NO_USER_SCOPE", "claude keeps no user-level settings here", raising=False)
    code, out, err = run_cli(repo, "install", "claude", "--user")
    assert code == 2 and "claude keeps no user-level settings here" in err
    assert not (machine / ".claude").exists() and not (repo / ".claude").exists()


def test_agent_commands_are_built_from_the_registry(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    for name in installers.names():
        code, out, _ = run_cli(repo, "install", name, "--help")
        assert code == 0 and f"gitmem uninstall {name}" in out and "--user" in out
    code, _, err = run_cli(repo, "install", "nosuchagent")
    assert code == 2 and "nosuchagent" in err
    assert os.environ.get("HOME")  # the session's temp HOME (conftest): nothing here touched the real one
