"""The real Claude Code, offline: ``claude -p`` against a scripted Messages API server on 127.0.0.1.

Opt-in: runs only when ``GITMEM_CLAUDE_BIN`` names the ``claude`` binary (Claude Code 2.1.328:
``npm install --prefix /tmp/claude-code @anthropic-ai/claude-code@2.1.328``, then ``node
install.cjs`` in ``node_modules/@anthropic-ai/claude-code`` (it puts the native binary in place),
then ``GITMEM_CLAUDE_BIN=/tmp/claude-code/node_modules/.bin/claude``). No login: ``ANTHROPIC_BASE_URL``
and ``ANTHROPIC_API_KEY``, telemetry and other traffic off, ``HOME`` a temp folder.

The evidence is what the model received (the server's request log, ``testing/messages_server.py``):
gitmem's session-start context in a ``system`` message; the read file's memories, a stale one with
its warning, in the ``system`` message Claude Code adds right after the ``Read`` result; the MCP
``search`` tool's answer once ``ToolSearch`` has loaded it. After the session (``claude -p`` exits
before its asynchronous hooks run: the Stop hook never runs), a local memory of the edit whose body
is the final assistant message, which only the transcript has: the consolidation reconciles the
spool with it (``agents/reconcile.py``). The next session's read of the file gives that memory. The
first session runs in a fresh clone: no per-clone state yet. A capture delayed past the exit (the
handler wrapped in ``sleep``) still yields the memory. Each session takes 5-20 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.integrations.agents import claude_install, installing
from testing.messages_server import MessagesServer, blocks, messages_server
from testing.repos import commit, git, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for

CLAUDE = os.environ.get("GITMEM_CLAUDE_BIN", "")
pytestmark = pytest.mark.skipif(not (CLAUDE and os.access(CLAUDE, os.X_OK)),
                                reason="set GITMEM_CLAUDE_BIN to a Claude Code 2.1.328 binary")

CLIENT_PY = ("import requests\n\n\ndef fetch(url):\n    resp = requests.get(url, timeout=10)\n"
             "    return parse(resp)\n\n\ndef parse(resp):\n    return resp.json()\n")
OLD = "    resp = requests.get(url, timeout=10)\n"
NEW = "    resp = _get_with_retry(url, timeout=10)\n"
FINAL = "Added `_get_with_retry`; fetch() uses it."


def claude_p(repo: Path, home: Path, base_url: str, prompt: str) -> float:
    """Run ``claude -p prompt`` in ``repo``; asserts it succeeds; returns its wall time in seconds."""
    env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "x",
           "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1"}
    started = time.monotonic()
    proc = subprocess.run([CLAUDE, "-p", prompt, "--dangerously-skip-permissions", "--mcp-config", ".mcp.json",
                           "--output-format", "json"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=180)
    assert proc.returncode == 0, (proc.stdout + proc.stderr).decode()[-2000:]
    assert json.loads(proc.stdout)["result"] == FINAL
    return time.monotonic() - started


def script(repo: Path, old: str, new: str, *, search: bool = False) -> list[dict[str, Any]]:
    """Read src/client.py, replace ``old`` with ``new`` in it, (load and call the MCP ``search``,) finish."""
    client = str(repo / "src" / "client.py")
    steps: list[dict[str, Any]] = [
        {"call": "Read", "input": {"file_path": client}},
        {"call": "Edit", "input": {"file_path": client, "old_string": old, "new_string": new, "replace_all": False}}]
    if search:
        steps += [{"call": "ToolSearch", "input": {"query": "select:mcp__gitmem__search", "max_results": 5}},
                  {"call": "mcp__gitmem__search", "input": {"query": "gateway timeout"}}]
    return steps + [{"say": FINAL}]


def text_of(block: dict[str, Any]) -> str:
    """The text of a content block: a text block's, or a tool result's (string or text blocks)."""
    if block.get("type") == "text":
        return str(block.get("text") or "")
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(text_of(b) for b in content if isinstance(b, dict)) if isinstance(content, list) else ""


def turns(server: MessagesServer) -> list[dict[str, Any]]:
    """The session's turns (requests offering tools), in order."""
    return [r for r in server.requests if r.get("tools")]


def system_texts(request: dict[str, Any]) -> list[str]:
    """The texts of the ``system`` messages among a request's messages (where Claude Code puts hook context)."""
    return [text_of(b) for m in request.get("messages") or [] if m.get("role") == "system" for b in blocks(m)]


def after_result(request: dict[str, Any], tool: str) -> tuple[dict[str, Any], list[str]]:
    """(the ``tool_result`` block of the first call of ``tool``, the texts of the messages that follow it up to
    the next assistant message)."""
    msgs = request.get("messages") or []
    ids = {b["id"] for m in msgs if m.get("role") == "assistant" for b in blocks(m)
           if b.get("type") == "tool_use" and b.get("name") == tool}
    for i, m in enumerate(msgs):
        for b in blocks(m):
            if b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
                rest = []
                for later in msgs[i + 1:]:
                    if later.get("role") == "assistant":
                        break
                    rest += [text_of(x) for x in blocks(later)]
                return b, rest
    return {}, []


def dump(server: MessagesServer) -> str:
    """The last turn's messages, shortened, for an assertion message."""
    last = turns(server)[-1]["messages"] if turns(server) else []
    return json.dumps([(m.get("role"), [text_of(b)[:600] or b.get("type") for b in blocks(m)]) for m in last])[:6000]


@pytest.fixture
def clone(tmp_path: Path, run_cli) -> tuple[Path, str, str]:  # type: ignore[no-untyped-def]
    """A fresh clone (no per-clone state) of a project whose memories and Claude Code settings are committed:
    (clone, id of a memory on fetch, id of a memory on parse made stale by a later commit)."""
    origin = make_repo(tmp_path / "origin")
    commit(origin, "init", {"src/client.py": CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    assert run_cli(origin, "init", "--no-hooks")[0] == 0
    mid = remember(run_cli, origin, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    stale = remember(run_cli, origin, "parse returns the decoded JSON body", "src/client.py::parse", mtype="discovery")
    time.sleep(1.1)  # creation times are to the second: the notes below are strictly newer
    for i in range(12):  # newer memories elsewhere fill the session start, so the file's memories come with the read
        remember(run_cli, origin, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    claude_install.install(origin)
    commit(origin, "memories and Claude Code settings")
    commit(origin, "parse returns None on an empty body",
           {"src/client.py": CLIENT_PY.replace("    return resp.json()\n",
                                               "    return resp.json() if resp.content else None\n")})
    repo = tmp_path / "project"
    git(tmp_path, "clone", "-q", str(origin), str(repo))
    assert not layout.of(repo).spool_dir.exists()
    installing.write_pointer(repo)  # the teammate's `gitmem install` (or `gitmem hooks install`) on this machine
    return repo, mid, stale


def test_a_clone_without_gitmem_gets_the_one_line_notice(tmp_path: Path, clone: tuple[Path, str, str]) -> None:
    """A teammate without gitmem (nothing on PATH, no bin-dir file in the clone) who starts Claude Code in a
    repository with memories: the model is told in one line at session start, by the committed hook command
    alone; the session goes on (the other hooks stay silent)."""
    repo, _, _ = clone
    layout.of(repo).bin_pointer.unlink()
    home = tmp_path / "home"
    home.mkdir()
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not (Path(p) / "gitmem-hook").exists() and not (Path(p) / "gitmem").exists())
    with messages_server(script(repo, OLD, NEW)) as server:
        env_path = os.environ["PATH"]
        os.environ["PATH"] = path
        try:
            claude_p(repo, home, server.base_url, "Carry on.")
        finally:
            os.environ["PATH"] = env_path
    start = "\n".join(system_texts(turns(server)[0]))
    assert f"SessionStart hook additional context: {installing.ABSENT_NOTICE}" in start, dump(server)
    assert "# gitmem" not in dump(server)
    assert NEW in (repo / "src" / "client.py").read_text()


def test_two_claude_sessions_get_and_make_memories(tmp_path: Path, clone: tuple[Path, str, str]) -> None:
    repo, mid, stale = clone
    home = tmp_path / "home"
    home.mkdir()
    # session 1, the clone's first: a prompt naming nothing; it reads the file, edits it, searches, finishes
    with messages_server(script(repo, OLD, NEW, search=True)) as server:
        took = claude_p(repo, home, server.base_url, "Carry on.")
    print(f"session 1: {took:.1f} s")
    first, last = turns(server)[0], turns(server)[-1]
    start = "\n".join(system_texts(first))
    assert start.startswith("SessionStart hook additional context: # gitmem") and "other() note 11" in start, \
        dump(server)
    read, beside = after_result(last, "Read")
    assert "def fetch(url)" in text_of(read)
    (per_file,) = [t for t in beside if "# gitmem" in t]
    assert per_file.startswith("PreToolUse:Read hook additional context: # gitmem: memories about src/client.py")
    assert mid in per_file, dump(server)
    warning = per_file[per_file.index(stale):].split("\n###")[0]
    assert "⚠ stale: src/client.py::parse body changed" in warning, per_file
    loaded, _ = after_result(last, "ToolSearch")
    assert {"type": "tool_reference", "tool_name": "mcp__gitmem__search"} in loaded["content"], loaded
    answer, _ = after_result(last, "mcp__gitmem__search")
    assert json.loads(text_of(answer))["hits"][0]["id"] == mid, answer
    assert NEW in (repo / "src" / "client.py").read_text()
    # the memory of the edit: its body is the final message, which only the transcript has
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["title"] == "Carry on." and m["body"].strip() == FINAL, m
    # session 2, the edit undone: the session start lists session 1's memory, its read of the file gives it in full
    git(repo, "checkout", "-q", "src/client.py")
    with messages_server(script(repo, OLD, NEW)) as server:
        took = claude_p(repo, home, server.base_url, "Go ahead.")
    print(f"session 2: {took:.1f} s")
    _, beside = after_result(turns(server)[-1], "Read")
    (per_file,) = [t for t in beside if "# gitmem" in t]
    assert m["id"] in per_file and FINAL in per_file, dump(server)
    assert FINAL not in "\n".join(system_texts(turns(server)[0]))
    assert wait_for(lambda: len(local_memories(repo)) == 2 and spool_empty(repo), timeout=60)  # its own edit, once


def delay_capture(repo: Path, seconds: int) -> None:
    """Make gitmem's PostToolUse handlers in ``.claude/settings.json`` sleep ``seconds`` before they run (their
    timeout raised to match)."""
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for group in settings["hooks"]["PostToolUse"]:
        for handler in group["hooks"]:
            if installing.is_marked(handler, claude_install.HOOK_COMMAND):
                handler["command"] = f"sleep {seconds}; {handler['command']}"
                handler["timeout"] = seconds + 10
    path.write_text(json.dumps(settings, indent=2))


def test_a_capture_delayed_past_the_exit_still_yields_the_memory(tmp_path: Path,
                                                                 clone: tuple[Path, str, str]) -> None:
    """The edit is the last tool call and its capture would spool it 30 s after the edit, long after ``claude
    -p`` has exited (which cancels it): the memory of the edit is there before, from the transcript."""
    repo, _, _ = clone
    delay = 30
    delay_capture(repo, delay)
    home = tmp_path / "home"
    home.mkdir()
    edited: list[float] = []

    def after_edit(n: int, body: dict[str, Any]) -> None:  # the turn after the Edit's result: its hook has started
        if n == 2:
            edited.append(time.monotonic())

    with messages_server(script(repo, OLD, NEW), on_turn=after_edit) as server:
        took = claude_p(repo, home, server.base_url, "Carry on.")
    print(f"session: {took:.1f} s")
    assert NEW in (repo / "src" / "client.py").read_text() and edited
    left = edited[0] + delay - time.monotonic()
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=left), \
        "no memory of the edit before its delayed capture could have run"
    print(f"memory {time.monotonic() - edited[0]:.1f} s after the edit")
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"].strip() == FINAL


def test_a_bash_call_gets_the_scripts_constraint_and_a_failure_its_bugfix(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Before a ``Bash`` call that runs a script, the script's ``constraint`` reaches the model next to the call's
    result; after a ``Bash`` call that fails with a known error, the ``bugfix`` whose text matches it does."""
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"scripts/check.sh": "#!/bin/sh\necho checked\n",
                          "scripts/load.sh": "#!/bin/sh\necho \"KeyError: 'tz_offset'\" >&2\nexit 1\n",
                          "src/dates.py": "def parse_dates(rows):\n    return rows\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    rule = remember(run_cli, repo, "check.sh must run before every commit: CI runs the same", "scripts/check.sh")
    fix = remember(run_cli, repo, "parse_dates: KeyError: 'tz_offset' on v1 rows; default the offset to 0",
                   "src/dates.py::parse_dates", mtype="bugfix")
    cfg = repo / ".gitmem" / "config.toml"  # the session start gives nothing: the Bash calls get them
    cfg.write_text(cfg.read_text().replace("session_budget = 1500", "session_budget = 1"))
    claude_install.install(repo)
    home = tmp_path / "home"
    home.mkdir()
    steps: list[dict[str, Any]] = [
        {"call": "Bash", "input": {"command": "sh scripts/check.sh", "description": "check"}},
        {"call": "Bash", "input": {"command": "sh scripts/load.sh", "description": "load"}},
        {"say": FINAL}]
    with messages_server(steps) as server:
        claude_p(repo, home, server.base_url, "Proceed.")  # a prompt naming nothing: the prompt hook gives nothing
    last = turns(server)[-1]
    msgs = last.get("messages") or []
    results = [(i, b) for i, m in enumerate(msgs) for b in blocks(m) if b.get("type") == "tool_result"]
    assert len(results) == 2, dump(server)
    (i_ok, ok), (i_failed, failed) = results
    beside_ok = [text_of(b) for m in msgs[i_ok + 1:i_failed] if m.get("role") != "assistant" for b in blocks(m)]
    beside_failed = [text_of(b) for m in msgs[i_failed + 1:] if m.get("role") != "assistant" for b in blocks(m)]
    assert "checked" in text_of(ok)
    found = [t for t in beside_ok + [text_of(ok)] if "# gitmem: before you run `sh scripts/check.sh`" in t]
    assert len(found) == 1, dump(server) + "\n" + (repo / ".claude" / "settings.json").read_text()
    before = found[0]
    assert rule in before and "constraint (must hold)" in before, dump(server)
    assert "KeyError" in text_of(failed) and failed.get("is_error"), failed
    (seen,) = [t for t in beside_failed + [text_of(failed)] if "# gitmem: seen before" in t]
    assert fix in seen, dump(server)


def test_a_hostile_memory_reaches_the_model_fenced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A memory file a pull request filled with a forged gitmem header, a forged "constraint (must hold)" entry, a
    ``curl … | sh`` line, a forged quote boundary and a fake ``</system-reminder>``: what the model receives holds
    its note quoted, none of the forged lines at the start of a line, and no download command."""
    from tests.test_fence import assert_fenced_in_requests, hostile_memory

    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/client.py": CLIENT_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    claude_install.install(repo)
    commit(repo, "Claude Code settings")
    mid, _ = hostile_memory(run_cli, repo)
    home = tmp_path / "home"
    home.mkdir()
    with messages_server(script(repo, OLD, NEW)) as server:
        claude_p(repo, home, server.base_url, "Carry on.")
    assert mid in "\n".join(system_texts(turns(server)[0])), dump(server)  # the session start gave it
    assert_fenced_in_requests(server.requests, mid)


def test_a_memory_given_fresh_comes_again_after_a_reset_the_agent_ran(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The agent reads a file (its memory comes, fresh), runs ``git reset --hard`` to a commit that rewrites the
    memory's function (git runs no hook), and reads the file again: the model receives the memory again,
    saying it was given fresh and may be stale now, with the file as the reason (issue 20: truth within the
    session)."""
    auth = "def check_token(token):\n    if not token:\n        raise ValueError('empty token')\n    return True\n"
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"src/auth.py": auth})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    rule = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    cfg = repo / ".gitmem" / "config.toml"  # the session start gives nothing: the first Read gives it
    cfg.write_text(cfg.read_text().replace("session_budget = 1500", "session_budget = 1"))
    claude_install.install(repo)
    commit(repo, "memories and Claude Code settings")
    git(repo, "checkout", "-q", "-b", "loose")
    commit(repo, "loosen auth", {"src/auth.py": auth.replace("raise ValueError('empty token')", "return False")})
    git(repo, "checkout", "-q", "main")
    assert run_cli(repo, "stale")[0] == 0  # every status checked now
    home = tmp_path / "home"
    home.mkdir()
    path = str(repo / "src" / "auth.py")
    steps: list[dict[str, Any]] = [
        {"call": "Read", "input": {"file_path": path}},
        {"call": "Bash", "input": {"command": "git reset -q --hard loose", "description": "reset"}},
        {"call": "Read", "input": {"file_path": path}},
        {"say": FINAL}]
    time.sleep(0.05)
    with messages_server(steps) as server:
        claude_p(repo, home, server.base_url, "Proceed.")
    msgs = turns(server)[-1].get("messages") or []
    reads = {b["id"] for m in msgs if m.get("role") == "assistant" for b in blocks(m)
             if b.get("type") == "tool_use" and b.get("name") == "Read"}
    at = [i for i, m in enumerate(msgs) for b in blocks(m)
          if b.get("type") == "tool_result" and b.get("tool_use_id") in reads]
    assert len(at) == 2, dump(server)

    def beside(i: int) -> str:  # the tool result and the hook context that follows it, up to the next call
        out = []
        for m in msgs[i:]:
            if m.get("role") == "assistant":
                break
            out += [text_of(b) for b in blocks(m)]
        return "\n".join(out)

    first, second = beside(at[0]), beside(at[1])
    assert rule in first and "· fresh" in first, dump(server)
    assert rule in second, dump(server)
    assert ("was given as fresh at a read of src/auth.py; now ⚠ may be stale: src/auth.py changed since gitmem "
            "last checked it") in second, dump(server)


def test_personal_memories_reach_the_model_in_two_repositories_and_stay_out_of_them(
        tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 21's personal scope through the real Claude Code: the developer's personal memories (their own git
    repository, ``GITMEM_PERSONAL_DIR``) reach the model at session start in two different repositories, fenced and
    labelled ``personal``, and neither repository's tree, index or history gains anything."""
    monkeypatch.setenv("GITMEM_PERSONAL_DIR", str(tmp_path / "me"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    repos = []
    for name in ("first", "second"):
        repo = make_repo(tmp_path / name)
        commit(repo, "init", {"src/client.py": CLIENT_PY})
        assert run_cli(repo, "init", "--no-hooks")[0] == 0
        claude_install.install(repo)
        commit(repo, "gitmem and Claude Code settings")
        repos.append(repo)
    assert run_cli(repos[0], "personal", "init")[0] == 0
    ids = []
    for text, mtype in (("I prefer small commits whose body says why the change was made", "preference"),
                        ("Never force-push a branch someone else has pulled", "constraint")):
        code, out, err = run_cli(repos[0], "remember", "--personal", text, "--type", mtype, "--json")
        assert code == 0, err
        ids.append(json.loads(out)["id"])
    for repo in repos:
        state = (git(repo, "status", "--porcelain", "--untracked-files=all"), git(repo, "ls-files", "-s"),
                 git(repo, "rev-parse", "HEAD"))
        home = tmp_path / f"home-{repo.name}"
        home.mkdir()
        with messages_server([{"say": FINAL}]) as server:
            claude_p(repo, home, server.base_url, "Tidy up the branch.")
        start = "\n".join(system_texts(turns(server)[0]))
        assert "# gitmem: the developer's personal memories" in start, dump(server)
        for mid in ids:
            assert mid in start, dump(server)
        assert f"### {ids[1]} · constraint (must hold) · person-written · personal" in start
        assert "> Never force-push a branch someone else has pulled" in start
        after = (git(repo, "status", "--porcelain", "--untracked-files=all"), git(repo, "ls-files", "-s"),
                 git(repo, "rev-parse", "HEAD"))
        assert after == state
        assert not any(mid in p.name for p in (repo / ".gitmem" / "memories").iterdir() for mid in ids)
