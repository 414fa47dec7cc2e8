"""The per-tool-call hooks import only the standard library and gitmem's stdlib-only modules.

Each per-tool-call event (prompt, before a read, before an edit, after a tool, after a
failure, stop) runs through the Claude Code adapter's entry point (and the Codex adapter's:
its shell reads and patches) in its own process, on a
real repository with memories and a built hook index; a wrapper then writes the names in
``sys.modules`` to a file. Anything beyond what a bare ``python -c pass`` loads (the
interpreter's start-up, ``.pth`` import hooks), the standard library
(``sys.stdlib_module_names``) and ``HOT_PATH_MODULES`` fails the test: a heavy import added
anywhere on these paths shows up here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testing.repos import commit, make_repo
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, context_of, fixture, remember, wait_for

#: gitmem's modules the per-tool-call hooks may import (each standard library only itself).
HOT_PATH_MODULES = frozenset({
    "gitmem",
    "gitmem.layout",
    "gitmem.infra",
    "gitmem.config",
    "gitmem.usage",  # the use log's append and the decay factor (standard library only)
    "gitmem.agent_edits",  # the record of memory files an agent's file tools wrote (standard library only)
    "gitmem.errors",  # raised by config only when validating, never on a hook path today; harmless (no imports)
    "gitmem.provenance",  # the trust levels' ranking weights (standard library only)
    "gitmem.rank",
    "gitmem.rank.render",
    "gitmem.injection",  # the instruction-like line rules render withholds (standard library only)
    "gitmem.rank.mentions",
    "gitmem.rank.fusion",
    "gitmem.rank.relevance",  # the prompt hook's score floors (standard library only)
    "gitmem.stopwords",  # the prompt's content terms: stop words from resources/stopwords.json (standard library only)
    "gitmem.catalog",
    "gitmem.catalog.db",
    "gitmem.textsplit",
    "gitmem.capture",
    "gitmem.capture.spool",
    "gitmem.capture.redact",
    "gitmem.integrations",
    "gitmem.integrations.agents",
    "gitmem.integrations.agents.events",
    "gitmem.integrations.agents.core",
    "gitmem.integrations.agents.capture",
    "gitmem.integrations.agents.claude",
    "gitmem.integrations.agents.codex",
    "gitmem.integrations.agents.gemini",
    "gitmem.integrations.agents.shell_reads",
    "gitmem.integrations.agents.copilot",
    "gitmem.integrations.agents.cursor",
    "gitmem.integrations.agents.opencode",
    "gitmem.integrations.agents.vscode",
    "gitmem.integrations.agents.patches",
    "gitmem.integrations.agents.failures",
    "gitmem.shellwords",
    "gitmem.daemon",
    "gitmem.daemon.client",  # the prompt hook asks the warm process for vector hits
    "gitmem.personal",  # the personal repository's memories per prompt (standard library only)
})
#: Never on a per-tool-call path, whatever the allowlists say.
HEAVY = ("lancedb", "tree_sitter", "tree_sitter_language_pack", "git", "yaml", "openai", "numpy", "pyarrow",
         "wordllama", "httpx", "gitmem.git", "gitmem.store", "gitmem.model", "gitmem.rank.score", "gitmem.rank.focus",
         "gitmem.integrations.agents.session_start", "dataclasses", "typing", "tomllib")

#: Runs the entry point as ``gitmem-hook`` does, then writes sorted(sys.modules) to argv[1] (even if it raised).
WRAPPER = """
import json, sys
out = sys.argv[1]
del sys.argv[1]
try:
    from gitmem.integrations.agents.claude import main
    main()
finally:
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
"""


def modules_after(argv: list[str], event: dict[str, Any] | None, cwd: Path, out: Path,
                  adapter: str = "claude") -> tuple[set[str], str]:
    """(modules loaded when the process ended, its stdout); ``adapter``: the module under ``agents``."""
    wrapper = WRAPPER.replace("agents.claude import", f"agents.{adapter} import")
    proc = subprocess.run([sys.executable, "-c", wrapper, str(out), *argv], cwd=cwd, capture_output=True,
                          input=json.dumps(event).encode() if event is not None else b"", timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return set(json.loads(out.read_text())), proc.stdout.decode()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """What this interpreter loads for ``python -c pass`` (start-up, site, .pth hooks such as an editable finder)."""
    out = tmp_path_factory.mktemp("baseline") / "mods.json"
    subprocess.run([sys.executable, "-c", f"import json, sys; json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))"],
                   check=True)
    return set(json.loads(out.read_text()))


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def not_allowed(mods: set[str], baseline: set[str]) -> list[str]:
    def ok(name: str) -> bool:
        return (name in baseline or name in HOT_PATH_MODULES
                or (not name.startswith("gitmem") and name.split(".")[0] in sys.stdlib_module_names))

    return sorted(m for m in mods if not ok(m))


def _events(repo: Path) -> dict[str, dict[str, Any]]:
    client = str(repo / "src" / "client.py")
    read = fixture("PreToolUse.Read", repo, session_id="hot-read")
    read["tool_input"] = {"file_path": client}
    failure = fixture("PostToolUse.Bash", repo, session_id="hot-fail", hook_event_name="PostToolUseFailure",
                      error=("Exit code 1\nTraceback (most recent call last):\n"
                             '  File "src/client.py", line 9, in fetch\n' "KeyError: 'timeout'\n"))
    shell = fixture("PreToolUse.Read", repo, session_id="hot-shell", tool_name="Bash",
                    tool_input={"command": "uv run python src/client.py --check"})
    return {
        "prompt": fixture("UserPromptSubmit", repo, session_id="hot-prompt",
                          prompt="Why must `fetch` keep its timeout for the gateway?"),
        "before read": read,
        "before edit": fixture("PreToolUse.Edit", repo, session_id="hot-edit"),
        "after tool": fixture("PostToolUse.Edit", repo, session_id="hot-after"),
        "before shell": shell,
        "after failure": failure,
        "stop": fixture("Stop", repo, session_id="hot-stop"),
    }


#: Events that read no names and so import neither the catalog nor ``textsplit`` (issue 22: ``shellwords``, which
#: every hook imports, once pulled ``textsplit`` onto the after-a-tool hook at module level).
NAMELESS = ("after tool", "stop")
#: Events that must inject memories here (so the catalog read and the renderer ran).
INJECTING = {"prompt": "UserPromptSubmit", "before read": "PreToolUse", "before edit": "PreToolUse",
             "before shell": "PreToolUse", "after failure": "PostToolUseFailure"}


def test_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli, baseline: set[str],  # type: ignore[no-untyped-def]
                                                              tmp_path: Path) -> None:
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    # SessionStart builds the hook index (it may import the library: it is not per tool call)
    start = fixture("SessionStart", repo, session_id="hot-start")
    mods, _ = modules_after([], start, repo, out)
    assert "gitmem.integrations.agents.session_start" in mods  # the wrapper sees a heavy path when there is one
    evs = _events(repo)
    assert wait_for(lambda: mid in modules_after([], evs["prompt"], repo, out)[1], timeout=30), \
        "the prompt hook never injected the memory: no hook index?"
    evs = {k: {**e, "session_id": e["session_id"] + "-2"} for k, e in evs.items()}
    for name, event in evs.items():
        mods, stdout = modules_after([], event, repo, out)
        if name in INJECTING:
            assert mid in context_of(stdout, INJECTING[name]), name
        else:
            assert stdout == "", name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name
        if name in NAMELESS:
            assert not {"gitmem.textsplit", "gitmem.catalog.db"} & mods, name


def test_the_prompt_hook_with_a_personal_repository_imports_only_the_standard_library(
        repo: Path, run_cli, baseline: set[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Per prompt, the personal repository's memories come from its catalog (stdlib ``catalog.db``): no library."""
    monkeypatch.setenv("GITMEM_PERSONAL_DIR", str(tmp_path / "me"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    assert run_cli(repo, "personal", "init")[0] == 0
    code, out, err = run_cli(repo, "remember", "--personal", "Never force-push a branch others pulled", "--type",
                             "constraint", "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    out_file = tmp_path / "mods.json"
    event = fixture("UserPromptSubmit", repo, session_id="hot-personal", prompt="may I force-push this branch?")
    modules_after([], event, repo, out_file)  # the first hook caches config.toml as JSON (tomllib once)
    mods, stdout = modules_after([], {**event, "session_id": "hot-personal-2"}, repo, out_file)
    assert mid in context_of(stdout, "UserPromptSubmit") and "gitmem.personal" in mods
    assert not_allowed(mods, baseline) == []
    assert not [m for m in HEAVY if m in mods]


def test_the_check_catches_a_heavy_import(repo: Path, baseline: set[str], tmp_path: Path) -> None:
    """The wrapper and the allowlist do see a library module (here: a bad event's path through ``gitmem.store``
    reading a memory file, which imports PyYAML)."""
    out = tmp_path / "mods.json"
    read = ("import gitmem.memfile, gitmem.store\ntry:\n    gitmem.memfile.loads('---\\nid: x\\n---\\n')\n"
            "except Exception:\n    pass\n")
    proc = subprocess.run([sys.executable, "-c", read + WRAPPER, str(out)], cwd=repo,
                          input=json.dumps(fixture("Stop", repo)).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    mods = set(json.loads(out.read_text()))
    assert "gitmem.store" in not_allowed(mods, baseline) and "yaml" in not_allowed(mods, baseline)


def _codex_events(repo: Path) -> dict[str, dict[str, Any]]:
    """Codex's per-tool-call events, as documented (``tests/test_codex_hooks.py`` builds the same)."""
    from tests.test_codex_hooks import codex_event, patch_for

    patch = patch_for("src/client.py", "    resp = session.get(url, timeout=10)\n",
                      "    resp = session.get(url, timeout=12)\n")
    return {
        "prompt": codex_event("UserPromptSubmit", repo, "hot-prompt",
                              prompt="Why must `fetch` keep its timeout for the gateway?"),
        "before read": codex_event("PreToolUse", repo, "hot-read", tool_name="Bash",
                                   tool_input={"command": "cat src/client.py"}),
        "before edit": codex_event("PreToolUse", repo, "hot-edit", tool_name="apply_patch",
                                   tool_input={"command": patch}),
        "before shell": codex_event("PreToolUse", repo, "hot-shell", tool_name="Bash",
                                    tool_input={"command": "python src/client.py --check"}),
        "after shell": codex_event("PostToolUse", repo, "hot-after", tool_name="Bash",
                                   tool_input={"command": "python -m pytest -q"}, tool_response="1 passed"),
        "after patch": codex_event("PostToolUse", repo, "hot-after-patch", tool_name="apply_patch",
                                   tool_input={"command": patch}, tool_response="Success."),
    }


def test_codex_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                    baseline: set[str], tmp_path: Path) -> None:
    """The same check for the Codex adapter (Stop is left out: it starts a detached consolidation)."""
    from tests.test_codex_hooks import codex_event

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after([], codex_event("SessionStart", repo, "hot-start", source="startup"), repo, out,
                            "codex")
    assert "gitmem.integrations.agents.session_start" in mods
    evs = _codex_events(repo)
    assert wait_for(lambda: mid in modules_after([], evs["prompt"], repo, out, "codex")[1], timeout=30)
    evs = {k: {**e, "session_id": e["session_id"] + "-2"} for k, e in evs.items()}
    for name, event in evs.items():
        mods, stdout = modules_after([], event, repo, out, "codex")
        if name in INJECTING:
            assert mid in context_of(stdout, INJECTING[name]), name
        else:
            assert stdout == "", name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_gemini_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                     baseline: set[str], tmp_path: Path) -> None:
    """The same check for the Gemini CLI adapter: its recorded prompt and tool events (AfterTool brings a read
    file's memories; AfterAgent is left out: it starts a detached consolidation)."""
    from tests.test_gemini_hooks import real_event

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after([], real_event("SessionStart", repo, "hot-start"), repo, out, "gemini")
    assert "gitmem.integrations.agents.session_start" in mods
    warm = real_event("AfterTool.read_file", repo, "hot-warm")
    assert wait_for(lambda: mid in modules_after([], warm, repo, out, "gemini")[1], timeout=30)
    events = {name: real_event(name, repo, f"hot-{name}") for name in
              ("BeforeAgent", "AfterTool.read_file", "AfterTool.run_shell_command", "AfterTool.replace",
               "PreCompress")}
    for name, event in events.items():
        mods, stdout = modules_after([], event, repo, out, "gemini")
        if name in ("AfterTool.read_file", "AfterTool.run_shell_command"):
            assert mid in context_of(stdout, "AfterTool"), name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_copilot_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                      baseline: set[str], tmp_path: Path) -> None:
    """The same check for the GitHub Copilot CLI adapter, with its recorded events (agentStop left out)."""
    from tests.test_copilot_hooks import REAL_ROOT

    def ev(name: str, session: str, **fields: Any) -> dict[str, Any]:
        path = Path(__file__).resolve().parent / "fixtures" / "copilot" / f"{name}.json"
        event = json.loads(path.read_text().replace(REAL_ROOT, str(repo)))
        return {**event, "sessionId": session, **fields}

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after(["sessionStart"], ev("sessionStart", "hot-start"), repo, out, "copilot")
    assert "gitmem.integrations.agents.session_start" in mods
    prompt = ev("userPromptSubmitted", "hot-prompt", prompt="Why must `fetch` keep its timeout for the gateway?")
    assert wait_for(lambda: mid in modules_after(["userPromptSubmitted"], prompt, repo, out, "copilot")[1],
                    timeout=30)
    edit = ev("preToolUse.edit", "hot-edit")
    edit["toolArgs"]["old_str"] = "    resp = session.get(url, timeout=10)\n"
    evs = {"prompt": ("userPromptSubmitted", {**prompt, "sessionId": "hot-prompt-2"}),
           "before read": ("preToolUse", ev("preToolUse.view", "hot-read")),
           "before cat": ("preToolUse", ev("preToolUse.bash", "hot-cat")),
           "before edit": ("preToolUse", edit),
           "after view": ("postToolUse", ev("postToolUse.view", "hot-after")),
           "after bash": ("postToolUse", ev("postToolUse.bash", "hot-after-bash"))}
    for name, (event_name, event) in evs.items():
        mods, stdout = modules_after([event_name], event, repo, out, "copilot")
        if event_name in ("userPromptSubmitted", "preToolUse"):
            assert mid in json.loads(stdout)["additionalContext"], name
        else:
            assert stdout == "", name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_cursor_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                     baseline: set[str], tmp_path: Path) -> None:
    """The same check for the Cursor adapter, with its documented events (postToolUse brings a read file's
    memories; stop is left out: it starts a detached consolidation)."""
    from tests.test_cursor_hooks import doc_event

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after([], doc_event("sessionStart", repo, "hot-start"), repo, out, "cursor")
    assert "gitmem.integrations.agents.session_start" in mods
    warm = doc_event("postToolUse.Read", repo, "hot-warm")
    assert wait_for(lambda: mid in modules_after([], warm, repo, out, "cursor")[1], timeout=30)
    names = ("beforeSubmitPrompt", "postToolUse.Read", "postToolUse.Shell", "postToolUse.Write", "afterFileEdit",
             "postToolUseFailure.Shell", "afterAgentResponse", "preCompact")
    for name in names:
        mods, stdout = modules_after([], doc_event(name, repo, f"hot-{name}"), repo, out, "cursor")
        if name in ("postToolUse.Read", "postToolUse.Shell"):
            assert mid in json.loads(stdout)["additional_context"], name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_opencode_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                       baseline: set[str], tmp_path: Path) -> None:
    """The same check for the OpenCode adapter, with the plugin's recorded calls (session.idle left out)."""
    from tests.test_opencode_hooks import REAL_ROOT

    def ev(name: str, session: str) -> dict[str, Any]:
        path = Path(__file__).resolve().parent / "fixtures" / "opencode" / f"{name}.json"
        event = json.loads(path.read_text().replace(REAL_ROOT, str(repo)))
        event["input"]["sessionID"] = session
        return dict(event)

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after(["session.start"], ev("session.start", "hot-start"), repo, out, "opencode")
    assert "gitmem.integrations.agents.session_start" in mods
    prompt = ev("chat.message", "hot-prompt")
    prompt["output"]["parts"] = [{"type": "text", "text": "Why must `fetch` keep its timeout for the gateway?"}]
    assert wait_for(lambda: mid in modules_after(["chat.message"], prompt, repo, out, "opencode")[1], timeout=30)
    edit = ev("tool.execute.before.edit", "hot-edit")
    edit["output"]["args"]["oldString"] = "    resp = session.get(url, timeout=10)\n"
    prompt2 = json.loads(json.dumps(prompt))
    prompt2["input"]["sessionID"] = "hot-prompt-2"
    evs = {"prompt": ("chat.message", prompt2),
           "before read": ("tool.execute.before", ev("tool.execute.before.read", "hot-read")),
           "before cat": ("tool.execute.before", ev("tool.execute.before.bash", "hot-cat")),
           "before edit": ("tool.execute.before", edit),
           "after read": ("tool.execute.after", ev("tool.execute.after.read", "hot-after")),
           "after bash": ("tool.execute.after", ev("tool.execute.after.bash", "hot-after-bash"))}
    for name, (event_name, event) in evs.items():
        mods, stdout = modules_after([event_name], event, repo, out, "opencode")
        if event_name in ("chat.message", "tool.execute.before"):
            assert mid in json.loads(stdout)["context"], name
        else:
            assert stdout == "", name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_vscode_per_tool_call_hooks_import_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                     baseline: set[str], tmp_path: Path) -> None:
    """The same check for VS Code's input through the Claude Code entry point (Stop left out: it starts a
    detached consolidation), a patch and a file URI among them."""
    from tests.test_vscode_hooks import fixture

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    mods, _ = modules_after([], fixture("SessionStart", repo, session_id="hot-start"), repo, out)
    assert "gitmem.integrations.agents.session_start" in mods
    prompt = fixture("UserPromptSubmit", repo, session_id="hot-prompt")
    assert wait_for(lambda: mid in modules_after([], prompt, repo, out)[1], timeout=30)
    uri = fixture("PreToolUse.read_file", repo, session_id="hot-uri")
    uri["tool_input"] = {"filePath": f"file://{repo}/src/client.py"}
    evs = {"prompt": {**prompt, "session_id": "hot-prompt-2"}, "before read uri": uri}
    for name in ("PreToolUse.read_file", "PreToolUse.replace_string_in_file", "PreToolUse.apply_patch",
                 "PreToolUse.run_in_terminal", "PostToolUse.replace_string_in_file", "PostToolUse.run_in_terminal"):
        evs[name] = fixture(name, repo, session_id=f"hot-{name}")
    for name, event in evs.items():
        mods, stdout = modules_after([], event, repo, out)
        if name.startswith("PreToolUse") or name in ("prompt", "before read uri"):
            assert mid in context_of(stdout, event["hook_event_name"]), name
        else:
            assert stdout == "", name
        assert not_allowed(mods, baseline) == [], name
        assert not [m for m in HEAVY if m in mods], name


def test_the_warm_process_client_imports_only_the_standard_library(repo: Path, baseline: set[str],
                                                                   tmp_path: Path) -> None:
    """``gitmem.daemon.client.request`` with no warm process (it answers None, starting none here)."""
    from gitmem import config, layout

    config.read_cached(layout.of(repo))  # as SessionStart does: the hooks read config.toml's JSON copy
    out = tmp_path / "mods.json"
    code = ("import json, sys\nfrom pathlib import Path\nfrom gitmem import layout\nfrom gitmem.daemon import client\n"
            "r = client.request(layout.of(Path.cwd()), 'search', {'query': 'x', 'limit': 3}, timeout_s=0.5, "
            "start=False)\n"
            f"json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))\nprint(r)\n")
    env = {k: v for k, v in os.environ.items() if k != "GITMEM_NO_DAEMON"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, timeout=60, env=env)
    assert proc.returncode == 0 and proc.stdout == b"None\n", proc.stderr.decode()
    mods = set(json.loads(out.read_text()))
    assert "gitmem.daemon.client" in mods
    assert not_allowed(mods, baseline) == []
    assert not [m for m in HEAVY if m in mods]


def test_the_prompt_hook_with_a_warm_process_imports_only_the_standard_library(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                               baseline: set[str], tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt hook's warm path (``core.warm_search``: a thread, the client, the socket) against a real warm
    process: the memory comes with vectors fused in, and nothing beyond the allowlist is imported."""
    from gitmem import layout
    from gitmem.daemon import client

    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    out = tmp_path / "mods.json"
    modules_after([], fixture("SessionStart", repo, session_id="hot-start"), repo, out)  # builds the catalog
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    lay = layout.of(repo)
    try:
        client.ensure_started(lay)
        assert wait_for(lambda: client.request(lay, "search", {"query": "gateway", "limit": 3}, timeout_s=30,
                                               start=False) is not None, timeout=120), "no warm process"
        served = client.status(lay)["requests"]  # type: ignore[index]
        event = fixture("UserPromptSubmit", repo, session_id="hot-warm",
                        prompt="Why must `fetch` keep its timeout for the gateway?")
        mods, stdout = modules_after([], event, repo, out)
        assert mid in context_of(stdout, "UserPromptSubmit")
        # the status call before counts one; the hook's search another (counted once answered)
        assert wait_for(lambda: client.status(lay)["requests"] > served + 1, timeout=30)  # type: ignore[index]
        assert "gitmem.daemon.client" in mods and "gitmem.rank.fusion" in mods
        assert not_allowed(mods, baseline) == []
        assert not [m for m in HEAVY if m in mods]
    finally:
        client.stop(lay)
        assert wait_for(lambda: not client.running(lay), timeout=30)


def test_the_prompt_hook_with_org_memories_imports_only_the_standard_library(tmp_path: Path, baseline: set[str],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``[org] inject = true`` with a warm process serving an org index (``tests/test_org_surfaces.py``'s): the
    prompt gets the organisation's memory through ``daemon.client``, and the hook imports neither LanceDB nor
    obstore nor ``gitmem.org`` (nor ``dataclasses``, which ``org.settings`` would bring)."""
    from gitmem import layout
    from gitmem.daemon import client
    from tests import test_org_surfaces as org_tests

    home = org_tests.isolated_home(tmp_path, monkeypatch)
    project = org_tests.make_project(tmp_path)
    org_tests.build_org(project, home, tmp_path)
    out = tmp_path / "mods.json"
    modules_after([], fixture("SessionStart", project, session_id="org-start"), project, out)
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    lay = layout.of(project)
    try:
        client.ensure_started(lay)
        assert wait_for(lambda: client.request(lay, "org_search", {"query": "tokens", "limit": 3}, timeout_s=30,
                                               start=False) is not None, timeout=180), "no warm process"
        event = fixture("UserPromptSubmit", project, session_id="org-prompt",
                        prompt="how long do card tokens from tokenize stay valid?")
        mods, stdout = modules_after([], event, project, out)
        assert "· org: payments" in context_of(stdout, "UserPromptSubmit")
        assert not_allowed(mods, baseline) == []
        assert not [m for m in (*HEAVY, "obstore", "gitmem.org", "gitmem.org.settings") if m in mods]
    finally:
        client.stop(lay)
        assert wait_for(lambda: not client.running(lay), timeout=30)


#: The top-level packages of gitmem's ``all`` extra (``gitmem.extras.MODULES``) and what only they bring.
ALL_EXTRA = ("lancedb", "pyarrow", "numpy", "wordllama", "tokenizers", "safetensors", "openai", "mcp", "obstore",
             "pydantic", "httpx", "lance")

#: Runs ``gitmem ARGS`` in this process (as the console script does), then writes sorted(sys.modules) to argv[1].
CLI_WRAPPER = """
import json, sys
out = sys.argv[1]
sys.argv[:] = ["gitmem", *sys.argv[2:]]
try:
    from gitmem.__main__ import main
    main()
finally:
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
"""


@pytest.mark.parametrize("args", [["check", "--base", "main"], ["stale", "--list"], ["stale", "--json"]],
                         ids=lambda a: " ".join(a))
def test_check_and_stale_never_import_the_all_extra(tmp_path: Path, run_cli, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The pull-request check and the stale review run on a lean install (``pip install gitmem-cli``): on a branch
    that made a memory stale (both find it), neither imports LanceDB, the embedder, the MCP SDK or the LLM client
    (``GITMEM_NO_DAEMON``: the work is done in this process)."""
    from gitmem import extras

    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    mid = remember(run_cli, r, "fetch must keep timeout=10", "src/client.py::fetch")
    commit(r, "remember")
    subprocess.run(["git", "checkout", "-qb", "feature"], cwd=r, check=True)
    commit(r, "change fetch", {"src/client.py": CLIENT_PY.replace("timeout=10", "timeout=20")})
    out = tmp_path / "mods.json"
    proc = subprocess.run([sys.executable, "-c", CLI_WRAPPER, str(out), *args], cwd=r, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "GITMEM_NO_DAEMON": "1"})
    assert mid in proc.stdout, proc.stderr
    assert proc.returncode == (1 if args[0] == "check" else 0), proc.stderr
    mods = set(json.loads(out.read_text()))
    assert "gitmem.cli" in mods
    assert set(extras.MODULES) <= set(ALL_EXTRA)
    assert sorted(m for m in mods if m.split(".")[0] in ALL_EXTRA) == []
