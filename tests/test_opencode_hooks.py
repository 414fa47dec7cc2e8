"""OpenCode hooks: the plugin's calls recorded from the real CLI through the real entry point, and the plugin itself.

Every hook call here was recorded from gitmem's plugin in the real ``opencode run`` (OpenCode 1.18.33,
offline against a scripted Chat Completions server; ``tests/fixtures/opencode/``, paths replaced by
``/home/dev/project``): a session that ran ``read`` of ``src/client.py``, an ``edit`` of it, ``bash``
``cat src/client.py``, a ``write`` of ``src/retry.py``, then finished; and one (a ``gpt-`` model, which
OpenCode gives ``apply_patch`` instead of ``edit``) that patched ``src/client.py``. Each hook run is a real
process (``python -m gitmem.integrations.agents.opencode EVENT``) in a real git repository with gitmem
initialised. The plugin (``gitmem/resources/opencode-plugin.js`` as the installer writes it) runs in
``node`` with OpenCode's hook inputs, spawning the real hook.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations.agents import opencode, opencode_install
from gitmem.integrations.agents.events import AfterTool, BeforeFile, BeforeShell, Prompt, SessionEnd, SessionStart, Stop
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, remember, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY, spooled

REAL = Path(__file__).resolve().parent / "fixtures" / "opencode"
REAL_ROOT = "/home/dev/project"
MEMORY = "fetch must keep timeout=10: the gateway cuts requests at 12 s"
NODE = shutil.which("node")


def real_event(name: str, repo: Path, session: str) -> dict[str, Any]:
    event = json.loads((REAL / f"{name}.json").read_text().replace(REAL_ROOT, str(repo)))
    event["input"]["sessionID"] = session
    return event


def event_of(name: str) -> str:
    """The hook's EVENT argument of fixture ``name`` (``tool.execute.before.read`` → ``tool.execute.before``)."""
    return next(e for e in ("tool.execute.before", "tool.execute.after") if name.startswith(e)) \
        if name.startswith("tool.") else name


def hook(event_name: str, payload: Any, cwd: Path) -> tuple[int, str, str]:
    """Run the adapter's entry point as a process; returns (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.opencode", event_name],
                          input=json.dumps(payload).encode(), cwd=cwd, capture_output=True, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def context_of(out: str) -> str:
    data = json.loads(out)
    assert set(data) == {"context"}
    text = data["context"]
    assert isinstance(text, str) and 0 < len(text) < 10_000
    return str(text)


def injected(repo: Path, name: str, event: dict[str, Any]) -> str:
    """The context a hook injects once the hook index has it (waits for the first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook(event_of(name), event, repo)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out))
        return bool(out)

    assert wait_for(got, timeout=30)
    return texts[-1]


@pytest.fixture
def real_repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def test_the_recorded_events_are_all_there() -> None:
    tools = ("read", "edit", "bash", "write", "apply_patch")
    assert sorted(p.stem for p in REAL.glob("*.json")) == sorted(
        ["session.start", "chat.message", "session.idle", "session.end"]
        + [f"tool.execute.{when}.{t}" for when in ("before", "after") for t in tools])


def test_recorded_events_map_to_the_normalised_events(real_repo: Path) -> None:
    def ev(name: str) -> Any:
        return opencode.to_event(real_event(name, real_repo, "s"), event_of(name))

    start = ev("session.start")
    assert isinstance(start, SessionStart) and start.source == "startup" and start.session_id == "s"
    assert start.cwd == str(real_repo)
    prompt = ev("chat.message")
    assert isinstance(prompt, Prompt) and "Add a retry to fetch." in prompt.prompt
    read, edit, write = (ev(f"tool.execute.before.{t}") for t in ("read", "edit", "write"))
    assert isinstance(read, BeforeFile) and read.kind == "read" and read.path == str(real_repo / "src/client.py")
    assert isinstance(edit, BeforeFile) and edit.kind == "edit" and "requests.get" in (edit.old_text or "")
    assert isinstance(write, BeforeFile) and write.kind == "write" and write.path.endswith("src/retry.py")
    shell, cat = ev("tool.execute.before.bash")
    assert isinstance(shell, BeforeShell) and shell.command == "cat src/client.py"
    assert isinstance(cat, BeforeFile) and cat.kind == "read" and cat.path == "src/client.py"
    (patch,) = ev("tool.execute.before.apply_patch")
    assert isinstance(patch, BeforeFile) and patch.kind == "edit" and patch.path == "src/client.py"
    assert "_get_with_retry(url, timeout=10)" in (patch.old_text or "")
    after = ev("tool.execute.after.edit")
    assert isinstance(after, AfterTool) and after.kind == "edit" and after.input["file_path"].endswith("client.py")
    assert after.input["new_string"].startswith("    resp = _get_with_retry(") and after.tool_use_id == "call_3"
    assert ev("tool.execute.after.write").content_key == "content"
    assert ev("tool.execute.after.bash").response["stdout"].startswith("import requests")
    assert ev("tool.execute.after.bash").response["exit_code"] == 0
    (patched,) = ev("tool.execute.after.apply_patch")
    assert isinstance(patched, AfterTool) and patched.input["new_string"].endswith("timeout=12)\n")
    assert isinstance(ev("session.idle"), Stop) and ev("session.idle").consolidate
    assert isinstance(ev("session.end"), SessionEnd)
    assert opencode.to_event(real_event("session.start", real_repo, "s"), None) is None
    make = {"input": {"tool": "bash", "sessionID": "s"}, "output": {"args": {"command": "make"}}}
    assert isinstance(opencode.to_event(make, "tool.execute.before"), BeforeShell)
    todo = {"input": {"tool": "todowrite", "sessionID": "s"}, "output": {"args": {"todos": []}}}
    assert opencode.to_event(todo, "tool.execute.before") is None
    synthetic = {"input": {"sessionID": "s"}, "output": {"parts": [
        {"type": "text", "text": "mine"}, {"type": "text", "text": "# gitmem: …", "synthetic": True},
        {"type": "file", "text": "x"}]}}
    assert opencode.to_event(synthetic, "chat.message").prompt == "mine"  # type: ignore[union-attr]


@pytest.mark.parametrize("name", sorted(p.stem for p in REAL.glob("*.json") if p.stem != "session.idle"))
def test_recorded_event_gives_valid_output(real_repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    event = event_of(name)
    code, out, err = hook(event, real_event(name, real_repo, f"rec-{name}"), real_repo)
    assert code == 0 and err == ""
    if out:
        assert event in opencode.PRINTING
        context_of(out)
    else:
        assert event != "session.start"


def test_recorded_read_bash_edit_and_patch_get_the_files_memories(real_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    for name, session in (("tool.execute.before.read", "r1"), ("tool.execute.before.bash", "r2")):
        text = injected(real_repo, name, real_event(name, real_repo, session))
        assert mid in text and "# gitmem: memories about src/client.py" in text
    text = injected(real_repo, "tool.execute.before.edit", real_event("tool.execute.before.edit", real_repo, "r3"))
    assert mid in text and "src/client.py (the edit is at line 5)" in text
    (real_repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    name = "tool.execute.before.apply_patch"
    assert mid in injected(real_repo, name, real_event(name, real_repo, "r4"))


def test_bad_input_prints_nothing(real_repo: Path) -> None:
    for name, payload in (("tool.execute.before", [1]), ("nosuch.event", {"cwd": str(real_repo)}), ("", {}),
                          ("tool.execute.before", {"input": "x", "output": None})):
        assert hook(name, payload, real_repo) == (0, "", "")


def test_recorded_session_is_captured_and_consolidated(real_repo: Path) -> None:
    s = "rec-session"
    for name in ("session.start", "chat.message", "tool.execute.before.read", "tool.execute.after.read",
                 "tool.execute.before.edit"):
        assert hook(event_of(name), real_event(name, real_repo, s), real_repo)[0] == 0
    (real_repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    name = "tool.execute.after.edit"
    assert hook(event_of(name), real_event(name, real_repo, s), real_repo) == (0, "", "")
    recs = [r for r in spooled(real_repo, s) if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"]) for r in recs] == [("read", "read"), ("edit", "edit")]
    assert recs[1]["input"]["file_path"] == "src/client.py"
    assert hook("session.idle", real_event("session.idle", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(real_repo)) and spool_empty(real_repo), timeout=60)
    assert hook("session.end", real_event("session.end", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(real_repo), timeout=60)
    (m,) = local_memories(real_repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]


# -- the plugin, in node ------------------------------------------------------------------------------

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: Drives the plugin as OpenCode 1.18.33 does (the order of ``opencode run``), with the hook inputs it
#: records; prints what the plugin changed and how long each step took.
HARNESS = textwrap.dedent("""
    const [plugin, directory, file, sid] = process.argv.slice(2);
    const mod = await import(plugin);
    const hooks = await mod.GitmemPlugin({ directory });
    const ms = {};
    const timed = async (name, f) => { const t = Date.now(); await f(); ms[name] = Date.now() - t; };
    await timed("created", () => hooks.event({ event: { type: "session.created",
                                                        properties: { sessionID: sid, info: { id: sid } } } }));
    const msg = { message: { id: "msg_1", sessionID: sid, role: "user" },
                  parts: [{ id: "prt_1", sessionID: sid, messageID: "msg_1", type: "text",
                            text: "Why does fetch in src/client.py keep timeout=10?" }] };
    await timed("chat.message", () => hooks["chat.message"]({ sessionID: sid }, msg));
    const system = { system: ["You are opencode."] };
    await timed("system", () => hooks["experimental.chat.system.transform"]({ sessionID: sid, model: {} }, system));
    const args = { filePath: file };
    await timed("before", () => hooks["tool.execute.before"]({ tool: "read", sessionID: sid, callID: "c1" },
                                                               { args }));
    const out = { title: "client.py", output: "<content>…</content>", metadata: {} };
    await timed("after", () => hooks["tool.execute.after"]({ tool: "read", sessionID: sid, callID: "c1", args },
                                                             out));
    const todo = { title: "todo", output: "ok", metadata: {} };
    await hooks["tool.execute.before"]({ tool: "todowrite", sessionID: sid, callID: "c2" }, { args: {} });
    await hooks["tool.execute.after"]({ tool: "todowrite", sessionID: sid, callID: "c2", args: {} }, todo);
    await timed("idle", () => hooks.event({ event: { type: "session.idle", properties: { sessionID: sid } } }));
    await timed("dispose", () => hooks.dispose());
    console.log(JSON.stringify({ parts: msg.parts, system: system.system, output: out.output,
                                 todo: todo.output, ms }));
""")


def run_plugin(tmp_path: Path, repo: Path, source: str, session: str) -> dict[str, Any]:
    """Write ``source`` as an ES module and drive it with ``HARNESS`` in ``node``; returns what it printed."""
    plugin = tmp_path / "gitmem.mjs"
    plugin.write_text(source)
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS)
    proc = subprocess.run([str(NODE), str(harness), plugin.as_uri(), str(repo), str(repo / "src" / "client.py"),
                           session], capture_output=True, timeout=120, cwd=repo,
                          env={**os.environ, "PATH": os.environ.get("PATH", "")})
    assert proc.returncode == 0, proc.stderr.decode()
    return dict(json.loads(proc.stdout))


def hook_script(tmp_path: Path, body: str) -> Path:
    """An executable shell script standing for ``gitmem-opencode-hook``."""
    p = tmp_path / "hook.sh"
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return p


@needs_node
def test_the_plugin_puts_each_context_where_the_model_reads_it(tmp_path: Path, real_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    commit(real_repo, "other", {"src/other.py": "def other():\n    return 1\n"})
    mid = remember(run_cli, real_repo, MEMORY, "src/client.py::fetch")
    time.sleep(1.1)  # creation times are to the second: the notes below are strictly newer
    for i in range(12):  # newer memories elsewhere fill the session start: the file's memory comes with the read
        remember(run_cli, real_repo, f"other() note {i}: " + "lorem ipsum " * 30, "src/other.py::other",
                 mtype="discovery")
    subprocess.run([sys.executable, "-m", "gitmem.catalog.sync", str(real_repo)], check=True, cwd=real_repo)
    script = hook_script(tmp_path, f'exec {sys.executable} -m gitmem.integrations.agents.opencode "$@"')
    got = run_plugin(tmp_path, real_repo, opencode_install.plugin_source(script), "node-1")
    (start,) = [t for t in got["system"] if "# gitmem" in t]  # the session start, in the system prompt
    assert "other() note 11" in start and got["system"][0] == "You are opencode."
    mine, ours = got["parts"]  # the prompt names src/client.py: its memory, in a part after the user's
    assert ours["synthetic"] is True and ours["id"] > mine["id"] and mid in ours["text"]
    assert got["todo"] == "ok"
    recs = spooled(real_repo, "node-1")
    assert [r["event"] for r in recs][:3] == ["SessionStart", "UserPromptSubmit", "PostToolUse"]
    assert wait_for(lambda: spool_empty(real_repo), timeout=60)  # session.idle handed it to consolidation


@needs_node
def test_the_prompts_context_is_a_synthetic_part_after_the_users(tmp_path: Path, real_repo: Path) -> None:
    answer = json.dumps({"context": "# gitmem: memories relevant to this prompt\n- m1"})
    got = run_plugin(tmp_path, real_repo, opencode_install.plugin_source(
        hook_script(tmp_path, f"cat >/dev/null; printf '%s' '{answer}'")), "fake")
    mine, ours = got["parts"]
    assert ours == {"id": "prt_1gitmem", "sessionID": "fake", "messageID": "msg_1", "type": "text",
                    "text": "# gitmem: memories relevant to this prompt\n- m1", "synthetic": True}
    assert sorted([ours["id"], "prt_2", mine["id"]]) == [mine["id"], ours["id"], "prt_2"]  # OpenCode sorts by id
    assert got["system"][1].startswith("# gitmem") and got["output"].endswith("\n\n# gitmem: memories "
                                                                              "relevant to this prompt\n- m1")
    assert got["todo"] == "ok"  # a tool that cannot get context: no hook before it, nothing appended


@needs_node
@pytest.mark.parametrize("body", [
    "exit 3",  # fails
    "echo 'not json'",  # answers nonsense
    "kill -9 $$",  # dies
    "sleep 30",  # hangs: the plugin gives up at its time limit
])
def test_a_failing_hook_changes_nothing_and_breaks_nothing(tmp_path: Path, real_repo: Path, body: str) -> None:
    source = opencode_install.plugin_source(hook_script(tmp_path, "cat >/dev/null; " + body),
                                            timeouts_ms=dict.fromkeys(opencode_install.TIMEOUTS_MS, 300))
    t = time.monotonic()
    got = run_plugin(tmp_path, real_repo, source, "fail")
    assert time.monotonic() - t < 30
    assert got["system"] == ["You are opencode."] and len(got["parts"]) == 1
    assert got["output"] == "<content>…</content>" and max(got["ms"].values()) < 2_000


@needs_node
def test_without_gitmem_the_plugin_does_nothing(tmp_path: Path, real_repo: Path) -> None:
    source = opencode_install.plugin_source(tmp_path / "no-such-script", command="no-such-gitmem-opencode-hook")
    got = run_plugin(tmp_path, real_repo, source, "none")
    assert got["system"] == ["You are opencode."] and len(got["parts"]) == 1 and got["output"] == "<content>…</content>"
