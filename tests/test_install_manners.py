"""Issue 23, item 4: installer manners. Options on either side of the agent's name; ``gitmem install vscode``
(``.vscode/mcp.json`` and the hooks VS Code runs); every agent's dry run shows the exact bytes the install writes
(a diff that ``git apply`` applies to give byte for byte what the real install writes, and the text in
``--json``); committed files hold no path of this machine. Real repositories, the real CLI, ``git apply``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.integrations.agents import installers
from testing.repos import commit, git, make_repo


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare machine: an empty HOME, no agent folder variables, a PATH with git and no agent."""
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    return home


#: Files a user already has, so that every dry run shows updates as well as new files (CRLF and no final newline
#: in one of them: the bytes must still come out exact).
USER_FILES = {
    ".claude/settings.json": json.dumps({"permissions": {"allow": ["Bash(npm test)"]}}, indent=4) + "\n",
    ".mcp.json": json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}, indent=2) + "\n",
    ".codex/config.toml": '# mine\nmodel = "gpt-5.5"  # fast\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n',
    ".gemini/settings.json": json.dumps({"general": {"vimMode": True}}, indent=2) + "\n",
    ".vscode/mcp.json": ('{\r\n  "inputs": [],\r\n  "servers": {\r\n    "github": {"type": "http", "url": "https://x"}\r\n'
                         '  }\r\n}'),
    "opencode.json": json.dumps({"theme": "dark"}, indent=2) + "\n",
}


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"a.py": "x = 1\n", **USER_FILES})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    git(r, "add", "-A")
    git(r, "commit", "-qm", "gitmem init")
    return r


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but .git/, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] != ".git"}


def _clone_dir(repo: Path, dest: Path) -> Path:
    """A copy of ``repo``'s work tree and git folder (the dry run is applied there)."""
    shutil.copytree(repo, dest, symlinks=True)
    return dest


# -- options on either side of the agent's name ------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["install", "uninstall"])
@pytest.mark.parametrize("opts", [["--dry-run"], ["--dry-run", "--json"], ["--project", "--dry-run"],
                                  ["--user", "--dry-run"], ["--user", "--dry-run", "--json"]])
def test_every_option_works_before_and_after_the_agent(repo: Path, machine: Path, run_cli, verb: str,  # type: ignore[no-untyped-def]
                                                       opts: list[str]) -> None:
    if verb == "uninstall":
        assert run_cli(repo, "install", "claude")[0] == 0
    before = _tree(repo)
    after_name = run_cli(repo, verb, "claude", *opts)
    before_name = run_cli(repo, verb, *opts, "claude")
    split = run_cli(repo, verb, opts[0], "claude", *opts[1:])
    assert after_name[0] == 0, after_name
    assert after_name == before_name == split
    assert _tree(repo) == before and not (machine / ".claude").exists()  # dry runs: nothing written
    if "--json" in opts:
        assert json.loads(after_name[1])["dry_run"] is True


@pytest.mark.parametrize("position", ["before", "after"])
def test_user_and_json_work_on_either_side_for_a_real_install(repo: Path, machine: Path, run_cli,  # type: ignore[no-untyped-def]
                                                              position: str) -> None:
    def args(verb: str) -> list[str]:
        return [verb, "--user", "--json", "claude"] if position == "before" else [verb, "claude", "--user", "--json"]

    before = _tree(repo)
    code, out, err = run_cli(repo, *args("install"))
    assert code == 0, err
    assert json.loads(out)["agent"] == "claude" and (machine / ".claude" / "settings.json").is_file()
    assert _tree(repo) == before  # --user: nothing in the project
    code, out, err = run_cli(repo, *args("uninstall"))
    assert code == 0, err
    assert not (machine / ".claude" / "settings.json").exists()


def test_user_without_an_agent_and_for_an_agent_without_user_settings_are_refused(repo: Path, machine: Path,  # type: ignore[no-untyped-def]
                                                                                 run_cli) -> None:
    code, _, err = run_cli(repo, "install", "--user")
    assert code == 2 and "--user needs an agent" in err
    for args in (["install", "vscode", "--user"], ["install", "--user", "vscode"]):
        code, _, err = run_cli(repo, *args)
        assert code == 2 and "profile" in err


# -- VS Code --------------------------------------------------------------------------------------------------

def test_install_vscode_writes_its_mcp_json_and_the_hooks_vscode_runs(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    before = _tree(repo)
    code, out, err = run_cli(repo, "install", "vscode")
    assert code == 0, err
    assert "Did you mean" not in err
    data = json.loads((repo / ".vscode" / "mcp.json").read_text())
    assert data["inputs"] == [] and data["servers"]["github"] == {"type": "http", "url": "https://x"}  # the user's
    ours = data["servers"]["gitmem"]
    assert ours["type"] == "stdio" and ours["command"] == "sh" and ours["args"][0] == "-c"
    assert "gitmem mcp" in ours["args"][1] and "mcpServers" not in data
    written = (repo / ".vscode" / "mcp.json").read_bytes()
    assert written.count(b"\r\n") == written.count(b"\n") and not written.endswith(b"\n")  # its CRLF, no final newline
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test)"]}
    assert set(settings["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    assert "enabledMcpjsonServers" not in settings  # Claude Code's own MCP server is not VS Code's install
    assert (repo / ".mcp.json").read_bytes() == before[".mcp.json"]
    assert installers.get("vscode").status(repo)["mcp"] is True
    from gitmem.integrations.agents import probe

    (mcp,) = [p for p in probe.registered(repo) if p.agent == "vscode"]  # gitmem doctor runs it
    assert mcp.kind == "mcp" and mcp.ours and mcp.portable
    code, out, err = run_cli(repo, "install", "vscode", "--json")  # idempotent
    assert code == 0 and json.loads(out)["changed"] == []
    code, out, err = run_cli(repo, "uninstall", "vscode")
    assert code == 0, err
    assert _tree(repo) == before  # the user's files byte for byte


def test_vscode_alone_creates_its_folder_and_uninstall_removes_it(tmp_path: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "bare")
    commit(r, "init", {"a.py": "x = 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    before = _tree(r)
    code, out, err = run_cli(r, "install", "vscode")
    assert code == 0, err
    assert json.loads((r / ".vscode" / "mcp.json").read_text())["servers"]["gitmem"]["type"] == "stdio"
    code, out, err = run_cli(r, "uninstall", "vscode")
    assert code == 0, err
    assert _tree(r) == before and not (r / ".vscode").exists() and not (r / ".claude").exists()


def test_uninstall_vscode_keeps_the_hooks_claude_code_uses_too(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli(repo, "install", "claude")[0] == 0
    with_claude = json.loads((repo / ".claude" / "settings.json").read_text())
    assert run_cli(repo, "install", "vscode")[0] == 0
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == with_claude  # the same handlers
    code, out, err = run_cli(repo, "uninstall", "vscode")
    assert code == 0 and "hooks kept" in out, err
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == with_claude
    assert "gitmem" not in json.loads((repo / ".vscode" / "mcp.json").read_text())["servers"]


def test_uninstall_claude_keeps_the_hooks_vscode_runs_then_uninstall_vscode_removes_them(  # type: ignore[no-untyped-def]
        repo: Path, machine: Path, run_cli) -> None:
    before = _tree(repo)
    assert run_cli(repo, "install", "vscode")[0] == 0
    assert run_cli(repo, "install", "claude")[0] == 0
    code, out, err = run_cli(repo, "uninstall", "claude")
    assert code == 0 and "hooks kept" in out and "uninstall vscode" in out, err
    hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks and all("gitmem" in json.dumps(v) for v in hooks.values())
    code, out, err = run_cli(repo, "doctor")
    assert "vscode: 0 hook" not in out, out
    assert run_cli(repo, "uninstall", "vscode")[0] == 0
    assert _tree(repo) == before


def test_install_with_no_agent_writes_claude_and_vscode_once_and_gives_everything_back(repo: Path, machine: Path,  # type: ignore[no-untyped-def]
                                                                                       run_cli) -> None:
    before = _tree(repo)
    code, out, err = run_cli(repo, "install", "--json")
    assert code == 0, err
    doc = json.loads(out)
    agents = {a["agent"]: a for a in doc["agents"]}
    assert {"claude", "vscode"} <= set(agents)
    assert agents["vscode"]["reason"] == ".vscode in this repository"
    assert not any(p.endswith(".claude/settings.json") for p in agents["vscode"]["changed"])  # written by claude's
    assert {s["agent"] for s in doc["skipped"]} == set(installers.names()) - set(agents)
    code, out, err = run_cli(repo, "install", "--json")
    assert code == 0 and all(a["changed"] == [] for a in json.loads(out)["agents"])
    code, out, err = run_cli(repo, "uninstall", "--json")
    assert code == 0, err
    assert _tree(repo) == before


# -- dry runs: the exact bytes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", installers.names())
def test_a_dry_runs_bytes_are_the_real_installs_bytes(repo: Path, machine: Path, run_cli, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      name: str) -> None:
    """The dry run's diff, applied by ``git apply`` to a copy, and its ``--json`` texts, give byte for byte what
    the install then writes; the same for the uninstall after it."""
    for verb in ("install", "uninstall"):
        copy = _clone_dir(repo, tmp_path / f"{verb}-copy")
        before = _tree(repo)
        code, shown, err = run_cli(repo, verb, name, "--dry-run")
        assert code == 0, err
        code, doc, err = run_cli(repo, verb, name, "--dry-run", "--json")
        assert code == 0, err
        (agent,) = json.loads(doc)["agents"]
        assert _tree(repo) == before  # nothing written
        assert run_cli(repo, verb, name)[0] == 0
        after = _tree(repo)
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert changed, f"{verb} {name} changed nothing"
        # --json: each file's text afterwards (null: removed), exactly
        files = {Path(f["path"]).relative_to(repo).as_posix(): f for f in agent["files"]}
        assert set(files) == changed
        for rel, f in files.items():
            assert (f["after"].encode("utf-8") if f["after"] is not None else None) == after.get(rel), rel
        # the text: a diff that git apply applies to the copy, giving the same bytes
        proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=copy, input=shown.encode(),
                              capture_output=True)
        assert proc.returncode == 0, proc.stderr.decode()
        assert _tree(copy) == after
        shutil.rmtree(copy)


# -- committed files hold no machine path ---------------------------------------------------------------------

@pytest.mark.parametrize("name", installers.names())
def test_an_installs_project_files_hold_no_path_of_this_machine(repo: Path, machine: Path, run_cli,  # type: ignore[no-untyped-def]
                                                               name: str) -> None:
    before = _tree(repo)
    assert run_cli(repo, "install", name)[0] == 0
    after = _tree(repo)
    written = {k: v for k, v in after.items() if before.get(k) != v}
    assert written
    local = {str(Path.home()), str(machine), sys.prefix, str(Path(sys.executable).parent), str(repo)}
    for rel, data in written.items():
        text = data.decode("utf-8")
        for path in local:
            assert path not in text, (name, rel, path)


def test_a_vscode_mcp_json_with_comments_is_refused_with_the_entry_to_add(repo: Path, machine: Path,  # type: ignore[no-untyped-def]
                                                                          run_cli) -> None:
    jsonc = '{\n  // my servers\n  "servers": {}\n}\n'
    (repo / ".vscode" / "mcp.json").write_text(jsonc)
    before = _tree(repo)
    for args in (["install", "vscode"], ["install", "vscode", "--dry-run"]):
        code, out, err = run_cli(repo, *args)
        assert code == 1 and "is not plain JSON (comments or a syntax error)" in out + err
        assert '"servers": {"gitmem": {"type": "stdio", "command": "sh"' in out + err  # the hint: what to add
        assert _tree(repo) == before


def test_a_dry_run_of_a_current_install_says_so(repo: Path, machine: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Not "would refresh" then "nothing to change": an install with nothing to change says it is current."""
    assert run_cli(repo, "install", "claude")[0] == 0
    code, out, err = run_cli(repo, "install", "claude", "--dry-run")
    assert code == 0, err
    assert "claude: already installed and current" in out and "would refresh" not in out, out
