"""``gitmem install`` / ``gitmem uninstall`` with no agent: detection, dry run, symmetry; the registry's protocol."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gitmem.integrations.agents import installers
from gitmem.integrations.agents.installing import SettingsError
from testing.repos import commit, git, make_repo


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare machine: an empty HOME, no agent folder variables, a PATH with no agent on it."""
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")  # git, and no agent
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
    git(r, "add", "-A")
    git(r, "commit", "-qm", "gitmem init")
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
    ({"AGENTS.md": "# agents\n"}, {}),  # read by many agents: says nothing about which
    ({".codex/config.toml": 'model = "gpt-5.5"\n'}, {"codex": ".codex/config.toml in this repository"}),
    ({"GEMINI.md": "x\n", ".gemini/settings.json": "{}"}, {"gemini": ".gemini/settings.json in this repository"}),
    ({".github/copilot-instructions.md": "x\n"}, {"copilot": ".github/copilot-instructions.md in this repository"}),
    ({".vscode/settings.json": "{}"}, {"vscode": ".vscode in this repository"}),
    ({".github/workflows/ci.yml": "on: push\n"}, {}),  # .github/ alone says nothing about Copilot
])
def test_project_marks_are_detected(repo: Path, machine: Path, marks: dict[str, str],
                                    expected: dict[str, str]) -> None:
    for rel, text in marks.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    assert dict(installers.detect_all(repo, machine)) == expected


def test_user_folders_alone_are_not_agents_their_commands_are(repo: Path, machine: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in (".claude", ".codex", ".gemini", ".copilot", ".cursor", ".config/opencode"):
        (machine / folder).mkdir(parents=True)  # left behind by agents since uninstalled
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert installers.detect_all(repo, machine) == []
    skipped = {d.agent: d.reason for d in installers.detect_report(repo, machine)}
    assert skipped["gemini"] == ("gemini not on PATH; no .gemini/settings.json or GEMINI.md in this repository; "
                                 "~/.gemini alone does not count")
    assert skipped["codex"].endswith(f"{codex_home} alone does not count")
    copilot = tmp_path / "bin" / "copilot"
    copilot.write_text("#!/bin/sh\n")
    copilot.chmod(0o755)
    assert installers.detect_all(repo, machine) == [("copilot", f"copilot on PATH ({copilot})")]


def test_no_agent_detected_exits_1_with_the_choices(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(repo, "install")
    assert code == 1 and out == ""
    *skipped, line, hint = err.strip().splitlines()
    assert [s.split(":")[0] for s in skipped] == installers.names()  # each agent, and why it was skipped
    assert all(": skipped (" in s and "not on PATH" in s for s in skipped)
    assert line.startswith("error: no agent detected") and "gitmem install AGENT" in line
    assert hint.startswith("hint: an agent counts when its command is on PATH or its project files are here")
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
    gemini = machine.parent / "bin" / "gemini"
    gemini.write_text("#!/bin/sh\n")
    gemini.chmod(0o755)
    code, out, err = run_cli(repo, "install")
    assert code == 0, err
    assert out.startswith(f"gemini: installed (gemini on PATH ({gemini}))")
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



@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_dry_run_for_one_agent_writes_nothing_before_or_after_its_name(repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    """``gitmem install --dry-run AGENT`` and ``gitmem install AGENT --dry-run`` print the plan and write nothing
    (the first once wrote every file); so do both forms of ``uninstall`` after a real install."""
    before = _tree(repo)
    for args in (["install", "--dry-run", name], ["install", name, "--dry-run"]):
        code, out, err = run_cli(repo, *args, "--json")
        assert code == 0, err
        plan = json.loads(out)
        assert plan["dry_run"] and [a["agent"] for a in plan["agents"]] == [name] and plan["agents"][0]["would_change"]
        assert _tree(repo) == before
    assert run_cli(repo, "install", name)[0] == 0
    installed = _tree(repo)
    assert installed != before
    for args in (["uninstall", "--dry-run", name], ["uninstall", name, "--dry-run"]):
        code, out, err = run_cli(repo, *args)
        assert code == 0 and "would uninstall" in out, err
        assert _tree(repo) == installed


# -- what gitmem created, what it found: the install record (issue 11's installer defects 3, 4, 8, 9) ----------


def _status(repo: Path) -> str:
    """``git status --porcelain`` of every file, untracked ones included ('' when the work tree is as committed)."""
    return git(repo, "status", "--porcelain", "--untracked-files=all")


#: A user's committed file of each agent that is empty once gitmem's entries are removed from it.
EMPTY_ONCE_CLEANED = [
    ("claude", ".claude/settings.json", "{}\n"),
    ("claude", ".claude/settings.json", '{"hooks": {}, "enabledMcpjsonServers": []}\n'),
    ("claude", ".mcp.json", '{"mcpServers": {}}\n'),
    ("codex", ".codex/config.toml", ""),
    ("codex", ".codex/config.toml", "[mcp_servers]\n"),
    ("codex", ".codex/hooks.json", '{"hooks":{}}'),
    ("gemini", ".gemini/settings.json", '{"hooks": {}}\n'),
    ("copilot", ".github/mcp.json", '{"mcpServers": {}}\n'),
    ("cursor", ".cursor/hooks.json", '{"version": 1}\n'),
    ("cursor", ".cursor/mcp.json", '{"mcpServers": {}}\n'),
    ("opencode", "opencode.json", "{}"),
]


@pytest.mark.parametrize(("agent", "rel", "text"), EMPTY_ONCE_CLEANED)
def test_a_users_committed_file_empty_once_cleaned_is_given_back_not_deleted(
        repo: Path, machine: Path, agent: str, rel: str, text: str) -> None:
    commit(repo, "mine", {rel: text})
    mod = installers.get(agent)
    res = mod.install(repo)
    assert str(repo / rel) in res.changed
    mod.uninstall(repo)
    assert _status(repo) == ""  # byte for byte; the files gitmem created are gone
    mod.install(repo)
    (repo / rel).unlink()  # the user deletes their file while gitmem is installed: theirs to delete
    mod.uninstall(repo)
    assert not (repo / rel).exists() and mod.status(repo).get("mcp") is False


@pytest.mark.parametrize("agent", installers.names())
def test_files_gitmem_created_and_emptied_go_and_a_second_clone_keeps_a_committed_one(
        repo: Path, machine: Path, tmp_path: Path, agent: str) -> None:
    mod = installers.get(agent)
    created = mod.install(repo).changed
    assert created and all(Path(p).exists() for p in created)
    mod.uninstall(repo)
    assert _status(repo) == ""  # every file (and folder) gitmem created is gone
    mod.install(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "share gitmem's settings")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    mod.uninstall(clone)  # this clone did not create them: emptied, never deleted
    assert all((clone / Path(p).relative_to(repo)).exists() or Path(p).suffix == ".js" or "hooks/gitmem" in p
               for p in created)
    assert not installers.is_installed(mod.status(clone))


#: Files of the user's in a compact or one-line style, with a number that a rewrite would change (1.50).
STYLED = [
    ("claude", ".claude/settings.json", '{"permissions":{"allow":["Bash(ls)"]},"cleanupPeriodDays":1.50}'),
    ("claude", ".mcp.json", '{"mcpServers": {"gh": {"command": "gh-mcp"}}}\n'),
    ("codex", ".codex/hooks.json", '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say"}]}]}}\n'),
    ("gemini", ".gemini/settings.json", '{"general":{"vimMode":true},"ui":{"theme":"\\u00e9t\\u00e9"}}'),
    ("cursor", ".cursor/hooks.json", '{"version": 1, "hooks": {"stop": [{"command": "echo hi"}]}}\n'),
    ("cursor", ".cursor/mcp.json", '{\n\t"mcpServers": {\n\t\t"gh": {"command": "gh-mcp"}\n\t}\n}'),
    ("opencode", "opencode.json", '{"$schema":"https://opencode.ai/config.json","theme":"x"}\n'),
    ("copilot", ".github/mcp.json", '{\r\n  "mcpServers": {\r\n    "gh": {"command": "gh-mcp"}\r\n  }\r\n}\r\n'),
]


@pytest.mark.parametrize(("agent", "rel", "text"), STYLED)
def test_install_then_uninstall_gives_back_the_exact_bytes_and_keeps_the_style_otherwise(
        repo: Path, machine: Path, agent: str, rel: str, text: str) -> None:
    commit(repo, "mine", {rel: text})
    mod = installers.get(agent)
    mod.install(repo)
    installed = (repo / rel).read_bytes().decode()
    assert ("\n" in text.strip()) == ("\n" in installed.strip())  # one line stays one line while installed
    assert ("\r\n" in text) == ("\r\n" in installed)
    mod.uninstall(repo)
    assert (repo / rel).read_bytes().decode() == text and _status(repo) == ""
    mod.install(repo)  # the user changes something else while gitmem is installed
    data = json.loads((repo / rel).read_text())
    data["mine"] = True
    edited = (json.dumps(data, separators=(",", ":")) if "\n" not in text.strip() else
              json.dumps(data, indent="\t" if "\t" in text else 2))
    (repo / rel).write_bytes((edited.replace("\n", "\r\n") if "\r\n" in text else edited).encode())
    mod.uninstall(repo)
    after = (repo / rel).read_bytes().decode()
    assert json.loads(after) == {**json.loads(text), "mine": True}
    assert ("\n" in after.strip()) == ("\n" in text.strip())  # compact stays compact, pretty stays pretty
    assert ("\r\n" in after) == ("\r\n" in text)


@pytest.mark.parametrize("bad", ['{"big": 1e400}', '{"x": NaN}', '{"x": -Infinity}', '{"x": 0.1000000000000000000001}',
                                 '{"a": 1, "a": 2}'])
@pytest.mark.parametrize(("agent", "rel"), [("claude", ".claude/settings.json"), ("claude", ".mcp.json"),
                                            ("codex", ".codex/hooks.json"), ("gemini", ".gemini/settings.json"),
                                            ("copilot", ".github/mcp.json"), ("cursor", ".cursor/hooks.json"),
                                            ("cursor", ".cursor/mcp.json"), ("opencode", "opencode.json")])
def test_json_that_cannot_be_written_back_unchanged_is_refused(repo: Path, machine: Path, agent: str, rel: str,
                                                                bad: str) -> None:
    commit(repo, "mine", {rel: bad})
    mod = installers.get(agent)
    for act in (mod.install, mod.uninstall):
        with pytest.raises(SettingsError) as e:
            act(repo)
        assert rel.rsplit("/", 1)[-1] in e.value.message and e.value.hint
    assert _status(repo) == ""  # nothing written, no other file of the agent either


@pytest.mark.parametrize("agent", installers.names())
def test_an_agent_writes_nothing_when_any_of_its_files_is_refused(repo: Path, machine: Path, agent: str) -> None:
    mod = installers.get(agent)
    paths = [Path(p).relative_to(repo).as_posix() for p in mod.plan_install(repo).paths]
    assert paths
    for rel in paths:
        bad = "[table\n" if rel.endswith(".toml") else "// mine\n" if rel.endswith(".js") else "{not json"
        commit(repo, f"bad {rel}", {rel: bad})
        with pytest.raises(SettingsError):
            mod.install(repo)
        assert _status(repo) == "", rel
        git(repo, "rm", "-q", rel)
        git(repo, "commit", "-qm", "gone")


@pytest.mark.parametrize(("agent", "rel"), [("claude", ".claude/settings.json"), ("claude", ".mcp.json"),
                                            ("codex", ".codex/hooks.json"), ("codex", ".codex/config.toml"),
                                            ("gemini", ".gemini/settings.json"), ("copilot", ".github/mcp.json"),
                                            ("cursor", ".cursor/hooks.json"), ("opencode", "opencode.json")])
def test_a_symlinked_settings_file_is_cleaned_through_the_link_never_removed(
        repo: Path, machine: Path, tmp_path: Path, agent: str, rel: str) -> None:
    real = tmp_path / "dotfiles" / rel.replace("/", "_")
    real.parent.mkdir(exist_ok=True)
    text = "" if rel.endswith(".toml") else "{}\n"
    real.write_text(text)
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).symlink_to(real)
    mod = installers.get(agent)
    mod.install(repo)
    assert (repo / rel).is_symlink() and real.read_text() != text  # written through the link
    mod.uninstall(repo)
    assert (repo / rel).is_symlink() and real.read_text() == text
    mod.install(repo)
    Path(os.path.realpath(mod.plan_install(repo).record)).unlink()  # no record (an older gitmem installed it)
    mod.uninstall(repo)
    assert (repo / rel).is_symlink() and not installers.is_installed(mod.status(repo))


def test_install_with_no_agent_checks_every_agent_before_writing_anything(repo: Path, machine: Path,
                                                                           run_cli) -> None:  # type: ignore[no-untyped-def]
    commit(repo, "agents", {".claude/settings.json": "{}\n", "GEMINI.md": "# g\n",
                            "opencode.json": '{\n  // mine\n  "theme": "x"\n}\n'})
    code, out, err = run_cli(repo, "install", "--dry-run")
    assert code == 1, (out, err)
    assert "claude: would install" in out and f"would create {repo / '.mcp.json'}" in out
    assert "opencode: refused:" in out and "not plain JSON" in out and "hint: add this to it yourself" in out
    code, out, err = run_cli(repo, "install")
    assert code == 1 and "opencode: refused:" in out and "nothing was written" in out
    assert "claude: not installed" in out and "gemini: not installed" in out
    assert _status(repo) == ""
    code, out, err = run_cli(repo, "install", "--json")
    assert code == 1
    agents = {a["agent"]: a for a in json.loads(out)["agents"]}
    assert "not plain JSON" in agents["opencode"]["error"] and "error" not in agents["claude"]
    commit(repo, "fixed", {"opencode.json": '{"theme": "x"}\n'})
    code, out, err = run_cli(repo, "install")
    assert code == 0 and "opencode: installed" in out
    code, out, err = run_cli(repo, "uninstall")
    assert code == 0 and _status(repo) == ""


@pytest.mark.parametrize("agent", installers.names())
def test_a_teammates_install_from_another_venv_leaves_the_committed_files_unchanged(
        repo: Path, machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    """The committed files hold no machine path: a teammate's install in a clone, from another Python, writes
    the same bytes (``git status`` stays clean); only the clone's bin-dir file names that teammate's folder."""
    from gitmem import layout

    mod = installers.get(agent)
    mod.install(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "share gitmem's settings")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    other = tmp_path / "teammate" / "venv" / "bin"
    other.mkdir(parents=True)
    monkeypatch.setattr("sys.executable", str(other / "python"))
    mod.install(clone)
    assert _status(clone) == ""
    assert layout.of(clone).bin_pointer.read_text() == f"{other}\n"
