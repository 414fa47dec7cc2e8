"""Never silently absent: committed agent settings hold no machine path, and a session in a repository with
memories is told in one line when gitmem is missing or broken on this machine (issue 20, item 5).

Real repositories, real installs from two real venvs, the registered hook commands run by ``sh`` as the agents
run them, with a PATH that has no gitmem.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.integrations.agents import installers, installing
from testing.repos import commit, git, make_repo
from testing.venvs import second_venv

#: A PATH with git and sh but no gitmem.
BARE_PATH = "/usr/bin:/bin"

#: (agent, committed file holding the hook commands, session-start event, how its commands are listed)
AGENT_FILES = {
    "claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json",
    "copilot": ".github/hooks/gitmem.json", "cursor": ".cursor/hooks.json",
}
START = {"claude": "SessionStart", "codex": "SessionStart", "gemini": "SessionStart", "copilot": "sessionStart",
         "cursor": "sessionStart"}
COMMITTED = [*AGENT_FILES.values(), ".mcp.json", ".codex/config.toml", ".github/mcp.json", ".cursor/mcp.json",
             ".opencode/plugins/gitmem.js", "opencode.json"]


def commands(agent: str, repo: Path) -> dict[str, str]:
    """Event → the hook command registered for gitmem in ``agent``'s committed file of ``repo``."""
    data = json.loads((repo / AGENT_FILES[agent]).read_text())
    out: dict[str, str] = {}
    for event, entries in data["hooks"].items():
        if not isinstance(entries, list):
            continue
        for e in entries:
            for h in e.get("hooks", [e]):
                cmd = h.get("command") or h.get("bash") or ""
                if cmd.startswith(": gitmem"):
                    out[event] = cmd
    return out


def run_hook(cmd: str, cwd: Path, payload: dict[str, Any], path: str = BARE_PATH) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PATH": path}
    return subprocess.run(["sh", "-c", cmd], input=json.dumps(payload).encode(), capture_output=True, cwd=cwd,
                          env=env, timeout=60)


@pytest.fixture
def project(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    """A repository with one team memory, gitmem installed for every agent from this venv."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    assert run_cli(repo, "remember", "f returns one on purpose", "--anchor", "a.py::f")[0] == 0
    for agent in installers.names():
        installers.get(agent).install(repo)
    return repo


def test_two_installs_from_two_venvs_write_identical_committed_bytes(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    other = second_venv(tmp_path / "teammate venv")  # a space in the path, too
    written = []
    for python in (sys.executable, str(other / "python")):
        for agent in installers.names():
            proc = subprocess.run([python, "-m", "gitmem", "install", agent], cwd=repo, capture_output=True,
                                  text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
        written.append({rel: (repo / rel).read_bytes() for rel in COMMITTED if (repo / rel).exists()})
        pointer = layout.of(repo).bin_pointer.read_text()
        assert pointer == f"{Path(python).parent}\n"
    assert written[0] == written[1] and len(written[0]) == len(COMMITTED)
    for rel, data in written[0].items():
        text = data.decode()
        assert str(Path(sys.executable).parent) not in text and str(other) not in text, rel
        assert str(tmp_path) not in text, rel


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
def test_gitmem_absent_gives_the_one_line_notice_at_session_start_only(project: Path, agent: str) -> None:
    layout.of(project).bin_pointer.unlink()
    cmds = commands(agent, project)
    start = START[agent]
    proc = run_hook(cmds[start], project, {"session_id": "s", "cwd": str(project), "hook_event_name": start,
                                           "source": "startup"})
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.count(b"\n") == 1
    out = json.loads(proc.stdout)
    text = (out.get("hookSpecificOutput") or {}).get("additionalContext") or out.get("additionalContext") \
        or out.get("additional_context")
    assert text == installing.ABSENT_NOTICE and "\n" not in text
    assert "gitmem install" in text
    if agent in ("claude", "codex", "gemini"):
        assert out["hookSpecificOutput"]["hookEventName"] == start
    for event, cmd in cmds.items():
        if event != start:
            p = run_hook(cmd, project, {"session_id": "s", "cwd": str(project), "hook_event_name": event})
            assert (p.returncode, p.stdout, p.stderr) == (0, b"", b""), event


def test_no_notice_in_a_repository_without_memories(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "empty")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    installers.get("claude").install(repo)
    layout.of(repo).bin_pointer.unlink()
    proc = run_hook(commands("claude", repo)["SessionStart"], repo, {"session_id": "s", "source": "startup"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_the_pointer_finds_gitmem_with_a_bare_path_from_a_subfolder_and_a_linked_worktree(project: Path) -> None:
    cmd = commands("claude", project)["SessionStart"]
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    (project / "sub").mkdir()
    for cwd in (project, project / "sub"):
        out = json.loads(run_hook(cmd, cwd, payload).stdout)
        assert "f returns one on purpose" in out["hookSpecificOutput"]["additionalContext"], cwd
    git(project, "add", "-A")
    git(project, "commit", "-qm", "memories and settings")
    wt = project.parent / "wt"
    git(project, "worktree", "add", "-q", str(wt))
    out = json.loads(run_hook(cmd, wt, {**payload, "cwd": str(wt)}).stdout)
    assert "f returns one on purpose" in out["hookSpecificOutput"]["additionalContext"]


def test_a_broken_gitmem_gives_the_notice(project: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    hook = broken / "gitmem-hook"
    hook.write_text("#!/bin/sh\necho 'ModuleNotFoundError: gitmem' >&2\nexit 1\n")
    hook.chmod(0o755)
    layout.of(project).bin_pointer.write_text(f"{broken}\n")
    cmds = commands("claude", project)
    proc = run_hook(cmds["SessionStart"], project, {"session_id": "s", "source": "startup"})
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == installing.ABSENT_NOTICE
    p = run_hook(cmds["PreToolUse"], project, {"session_id": "s", "tool_name": "Read",
                                               "tool_input": {"file_path": str(project / "a.py")}})
    assert (p.returncode, p.stdout) == (0, b"")



def test_a_b_in_the_environment_never_chooses_the_script(project: Path, tmp_path: Path) -> None:
    """The committed command reads the folder of gitmem's scripts into ``b``; with no bin-dir file, a ``b``
    exported by the agent's environment must not choose what runs."""
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "ran"
    hook = planted / "gitmem-hook"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    layout.of(project).bin_pointer.unlink()
    cmds = commands("claude", project)
    env = {**os.environ, "PATH": BARE_PATH, "b": str(planted)}
    proc = subprocess.run(["sh", "-c", cmds["SessionStart"]], input=b'{"session_id": "s", "source": "startup"}',
                          capture_output=True, cwd=project, env=env, timeout=60)
    assert proc.returncode == 0 and not marker.exists()
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == installing.ABSENT_NOTICE

def test_gitmem_on_path_is_used_without_the_pointer(project: Path) -> None:
    layout.of(project).bin_pointer.unlink()
    cmd = commands("claude", project)["SessionStart"]
    proc = run_hook(cmd, project, {"session_id": "s", "source": "startup"},
                    path=f"{Path(sys.executable).parent}:{BARE_PATH}")
    assert "f returns one on purpose" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_mcp_command_finds_gitmem_through_the_pointer(project: Path) -> None:
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["gitmem"]
    assert not installing.machine_paths(entry["args"][1])
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    proc = subprocess.run([entry["command"], *entry["args"]], input=(json.dumps(init) + "\n").encode(),
                          capture_output=True, cwd=project, env={**os.environ, "PATH": BARE_PATH}, timeout=60)
    assert json.loads(proc.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "gitmem", proc.stderr


def test_an_old_absolute_path_install_is_upgraded_in_place(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    old = "/home/ada/.venv/bin/gitmem-hook"
    old_cmd = (f": gitmem-hook; if [ -x {old} ]; then exec {old} SessionStart; fi; if command -v gitmem-hook "
               ">/dev/null 2>&1; then exec gitmem-hook SessionStart; fi; exit 0")
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "./mine.sh"}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [mine]}, {"matcher": "startup", "hooks": [
        {"type": "command", "command": old_cmd, "timeout": 15}]}]}}, indent=2))
    assert installing.machine_paths(old_cmd)
    assert run_cli(repo, "install", "claude")[0] == 0
    text = settings.read_text()
    assert "/home/ada" not in text
    data = json.loads(text)
    starts = data["hooks"]["SessionStart"]
    assert starts[0] == {"hooks": [mine]} and len(starts) == 2
    assert not any(installing.machine_paths(c) for c in commands("claude", repo).values())


def test_git_hooks_install_writes_the_pointer(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A teammate's first step after cloning (`gitmem hooks install`) tells the committed agent hooks where
    gitmem is on this machine."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init")[0] == 0
    assert layout.of(repo).bin_pointer.read_text() == f"{Path(sys.executable).parent}\n"
    assert shutil.which("sh")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("present", [True, False])
def test_the_opencode_plugin_finds_gitmem_through_the_pointer_or_gives_the_notice(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, present: bool) -> None:
    from tests.test_opencode_hooks import run_plugin

    (project / "src").mkdir()
    (project / "src" / "client.py").write_text("x = 1\n")
    source = (project / ".opencode" / "plugins" / "gitmem.js").read_text()
    assert str(Path(sys.executable).parent) not in source
    if not present:
        layout.of(project).bin_pointer.unlink()
    node_dir = str(Path(shutil.which("node") or "/usr/bin/node").parent)
    monkeypatch.setenv("PATH", f"{node_dir}:{BARE_PATH}")
    got = run_plugin(tmp_path, project, source, "absent")
    if present:
        (start,) = [t for t in got["system"] if t.startswith("# gitmem")]
        assert "f returns one on purpose" in start
    else:
        assert got["system"] == ["You are opencode.", installing.ABSENT_NOTICE]
        assert len(got["parts"]) == 1 and got["output"] == "<content>…</content>"


def test_doctor_runs_every_registered_command_and_names_those_that_do_not_reach_gitmem(
        project: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", BARE_PATH)
    code, out, _ = run_cli(project, "doctor", "--json")
    checks = [c for c in json.loads(out)["checks"] if c["name"] in installers.names()]
    assert sorted(c["name"] for c in checks) == sorted(installers.names())
    assert all(c["level"] == "ok" and "reach gitmem on this machine" in c["message"] for c in checks), checks
    claude = next(c for c in checks if c["name"] == "claude")
    assert "7 hook command(s) and the MCP server" in claude["message"]
    layout.of(project).bin_pointer.unlink()  # gitmem is nowhere the commands look
    code, out, _ = run_cli(project, "doctor", "--json")
    checks = [c for c in json.loads(out)["checks"] if c["name"] in installers.names()]
    assert code == 1 and sorted(c["name"] for c in checks) == sorted(installers.names())
    assert all(c["level"] == "error" for c in checks), checks
    claude = next(c for c in checks if c["name"] == "claude")
    assert claude["message"].startswith("claude: 8 of 8 registered command(s)") and "SessionStart" in claude["message"]
    assert "gitmem install claude" in claude["hint"]


def test_doctor_names_a_hook_command_that_does_not_exist_here(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """An earlier gitmem's committed exec-form handler, naming a teammate's venv: not ok, and not portable."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "x = 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "/home/ada/.venv/bin/gitmem-hook", "args": ["SessionStart"]}]}]}}))
    code, out, _ = run_cli(repo, "doctor", "--json")
    levels = [(c["level"], c["message"]) for c in json.loads(out)["checks"] if c["name"] == "claude"]
    assert code == 1 and levels[0][0] == "error", levels
    assert "names /home/ada/.venv/bin/gitmem-hook, which does not exist on this machine" in levels[0][1], levels
    assert levels[1][0] == "warn" and "names a path of one machine" in levels[1][1]


NEWER = '\n[ranking]\ndecay = true\nboost_reviewed = 2\n\n[provenance]\nrequire = "reviewed"\n'


def test_a_newer_gitmems_config_is_a_one_line_warning_never_an_outage(project: Path) -> None:
    """A teammate on a newer gitmem commits a section and a key this one does not know: session start, context,
    recall, doctor and check still work, each saying so in one line."""
    cfg = project / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + NEWER)
    env = {**os.environ, "PATH": BARE_PATH}
    for args in (["context"], ["recall", "returns one"], ["check"]):
        proc = subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=project, capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 0, (args, proc.stderr)
        lines = [ln for ln in proc.stderr.splitlines() if "unknown to this gitmem" in ln]
        assert len(lines) == 1 and "ranking.boost_reviewed, [provenance]" in lines[0], (args, proc.stderr)
        if args[0] != "check":
            assert "f returns one on purpose" in proc.stdout or "returns one" in proc.stdout, args
    doctor = subprocess.run([sys.executable, "-m", "gitmem", "doctor", "--json"], cwd=project, capture_output=True,
                            text=True, env=env, timeout=120)
    (warn,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "config"]
    assert warn["level"] == "warn" and "[provenance]" in warn["message"]
    cmd = commands("claude", project)["SessionStart"]
    out = run_hook(cmd, project, {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart",
                                  "source": "startup"})
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "f returns one on purpose" in text
    (line,) = [ln for ln in text.splitlines() if "unknown to this gitmem" in ln]
    assert line.startswith("gitmem warning: .gitmem/config.toml: ranking.boost_reviewed, [provenance]")


def test_stale_and_context_never_call_everything_fresh_when_a_file_could_not_be_read(tmp_path: Path,
                                                                                  run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    assert run_cli(repo, "remember", "f returns one on purpose", "--anchor", "a.py::f")[0] == 0
    code, out, _ = run_cli(repo, "stale", "--list")
    assert out.strip() == "gitmem: all memories are fresh"
    (repo / ".gitmem" / "memories" / "01ZZZZZZZZZZZZZZZZZZZZZZZZ.md").write_text("no front matter\n")
    code, out, err = run_cli(repo, "stale", "--list")
    assert "fresh" not in out.replace("no readable memory is stale", "")
    assert "1 memory file could not be read" in out and "01ZZZZZZZZZZZZZZZZZZZZZZZZ.md" in err
    # the team folder itself cannot be listed (here: a file where the folder should be)
    for p in (repo / ".gitmem" / "memories").iterdir():
        p.unlink()
    (repo / ".gitmem" / "memories").rmdir()
    (repo / ".gitmem" / "memories").write_text("not a folder\n")
    code, out, err = run_cli(repo, "stale", "--list")
    assert "all memories are fresh" not in out and "could not be read" in out, (out, err)
    assert "cannot read this memory folder" in err
    code, out, err = run_cli(repo, "context")
    assert "no memories yet" not in out and "could not be read" in out, (out, err)
    code, out, _ = run_cli(repo, "doctor", "--json")
    mem = [c for c in json.loads(out)["checks"] if c["name"] in ("memory", "memories")]
    assert code == 1 and all(c["level"] == "error" for c in mem) and len(mem) == 2, mem


def test_mcp_stale_never_says_all_fresh_with_an_unreadable_file(project: Path) -> None:
    from gitmem.integrations.mcp_server import GitmemTools

    (project / ".gitmem" / "memories" / "01ZZZZZZZZZZZZZZZZZZZZZZZZ.md").write_text("no front matter\n")
    text, _ = GitmemTools(project).stale()
    assert "are fresh" not in text and "1 memory file(s) could not be read" in text, text


def test_a_user_install_runs_this_installations_script_and_still_gives_the_notice(tmp_path: Path,
                                                                                    run_cli) -> None:  # type: ignore[no-untyped-def]
    """``--user`` settings are not committed: they name this installation's script (every repository, no bin-dir
    file needed); without it, the same notice."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    assert run_cli(repo, "remember", "f returns one on purpose", "--anchor", "a.py::f")[0] == 0
    layout.of(repo).bin_pointer.unlink(missing_ok=True)
    home = tmp_path / "home"
    installers.get("claude").install(None, user=True, home=home)
    data = json.loads((home / ".claude" / "settings.json").read_text())
    cmd = next(h["command"] for g in data["hooks"]["SessionStart"] for h in g["hooks"])
    assert str(Path(sys.executable).parent) in cmd
    payload = {"session_id": "u", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    out = json.loads(run_hook(cmd, repo, payload).stdout)
    assert "f returns one on purpose" in out["hookSpecificOutput"]["additionalContext"]
    gone = cmd.replace(str(Path(sys.executable).parent), str(tmp_path / "uninstalled"))
    out = json.loads(run_hook(gone, repo, payload).stdout)
    assert out["hookSpecificOutput"]["additionalContext"] == installing.ABSENT_NOTICE


def test_an_invalid_config_value_is_said_at_session_start_not_silent(project: Path) -> None:
    cfg = project / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text().replace('stale = "mark"', 'stale = "hide"'))
    out = run_hook(commands("claude", project)["SessionStart"], project,
                   {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"})
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith("gitmem: no memories in this session: ") and "context.stale" in text, text
    assert "\n" not in text


def test_doctor_never_runs_a_command_a_commit_put_in_the_settings(project: Path, run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A pull request that edits gitmem's hook command (marker kept) gets it reported, never run by doctor."""
    proof = tmp_path / "ran"
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for g in data["hooks"]["SessionStart"]:
        for h in g["hooks"]:
            h["command"] = f": gitmem-hook; touch {proof}; exit 0"
    settings.write_text(json.dumps(data))
    mcp = project / ".mcp.json"
    servers = json.loads(mcp.read_text())
    servers["mcpServers"]["gitmem"]["args"][1] = f": gitmem-mcp; touch {proof}"
    mcp.write_text(json.dumps(servers))
    code, out, _ = run_cli(project, "doctor", "--json")
    assert not proof.exists()
    (claude,) = [c for c in json.loads(out)["checks"] if c["name"] == "claude" and c["level"] == "error"]
    assert "2 of 8" in claude["message"] and "not run" in claude["message"], claude


# -- broken by a hostile teammate (the break branch) ------------------------------------------------------

START_PAYLOAD = {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}


@pytest.mark.parametrize("text", [
    "x = " + "{a = " * 5000 + "1" + "}" * 5000,  # nested past the parser's recursion limit
    "[context]\n" + "# padding\n" * 120_000,  # over MAX_CONFIG_BYTES
])
def test_a_hostile_committed_config_is_said_in_one_line_never_a_crash(project: Path, run_cli, text: str) -> None:  # type: ignore[no-untyped-def]
    (project / ".gitmem" / "config.toml").write_text(text)
    code, _, err = run_cli(project, "context", "--file", "a.py")
    assert code == 1 and "unexpected error" not in err and ".gitmem/config.toml: " in err, err
    out = run_hook(commands("claude", project)["SessionStart"], project, {**START_PAYLOAD, "cwd": str(project)})
    said = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said.startswith("gitmem: no memories in this session: .gitmem/config.toml: ") and "\n" not in said, said


def test_doctor_and_install_say_a_settings_file_nested_too_deep(project: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (project / ".claude" / "settings.json").write_text('{"hooks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out, err = run_cli(project, "doctor")
    assert "unexpected error" not in out + err and "claude" in out, out + err
    code, out, err = run_cli(project, "install", "claude")
    assert code == 1 and "nested too deeply" in err and "unexpected error" not in err, err
