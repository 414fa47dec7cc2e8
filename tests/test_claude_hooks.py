"""Claude Code hooks: the fixtures replayed through the real entry point, bad inputs, scripted sessions.

Every hook run here is a real process (``python -m gitmem.integrations.agents.claude``)
fed a real event JSON on stdin, in a real git repository with gitmem initialised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from testing.repos import commit, git, make_repo, write

#: Copies of ../shared/fixtures/claude-code/ (the protocol reference's example events), so a clone
#: tests on its own.
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-code"
assert len(list(FIXTURES.glob("*.json"))) == 8, FIXTURES
FIXTURE_ROOT = "/home/dev/project"
SESSION = "3f2b8c1e-6a4d-4e2f-9b7a-1c5d8e9f0a12"

CLIENT_PY = """import requests


def _session():
    return requests.Session()


def fetch(url):
    session = _session()
    resp = session.get(url, timeout=10)
    resp.raise_for_status()
    return resp.json()


class Client:
    def get(self, path):
        return fetch(self.base + path)
"""

AUTH_PY = """def check_token(token):
    if not token:
        raise ValueError("empty token")
    return token.startswith("t-")
"""


def hook(payload: Any, cwd: Path, *, args: tuple[str, ...] = (), env: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, str, str]:
    """Run the hook entry point as a process; returns (exit code, stdout, stderr)."""
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude", *args], input=data,
                          cwd=cwd, capture_output=True, env={**os.environ, **(env or {})}, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def context_of(out: str, event: str) -> str:
    """The additionalContext of a hook's stdout, after checking the output shape."""
    data = json.loads(out)
    assert set(data) == {"hookSpecificOutput"}
    assert data["hookSpecificOutput"]["hookEventName"] == event
    text = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str) and 0 < len(text) < 10_000
    return text


def fixture(name: str, repo: Path, **changes: Any) -> dict[str, Any]:
    text = (FIXTURES / f"{name}.json").read_text()
    event = json.loads(text.replace(FIXTURE_ROOT, str(repo)))
    event.update(changes)
    return event


def wait_for(cond, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY,
                       "tests/test_client.py": "def test_x():\n    pass\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def remember(run_cli, repo: Path, text: str, *anchors: str, mtype: str = "constraint") -> str:
    args = ["remember", text, "--type", mtype, "--json"]
    for a in anchors:
        args += ["--anchor", a]
    code, out, err = run_cli(repo, *args)
    assert code == 0, err
    return json.loads(out)["id"]


# -- the fixtures ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_fixture_replayed_gives_valid_output(repo: Path, run_cli, name: str) -> None:
    remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s", "src/client.py::fetch")
    event = fixture(name, repo)
    code, out, err = hook(event, repo)
    assert code == 0 and err == ""
    kind = event["hook_event_name"]
    if kind in ("Stop", "SessionEnd", "PostToolUse"):
        assert out == ""
    elif out:
        context_of(out, kind)
    if kind in ("SessionStart", "PreToolUse"):
        assert "fetch must keep timeout=10" in context_of(out, kind)


def test_fixture_session_in_order(repo: Path, run_cli) -> None:
    """SessionStart gives the memory once; the Read of its file in the same session does not repeat it."""
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    code, out, _ = hook(fixture("SessionStart", repo), repo)
    assert mid in context_of(out, "SessionStart")
    assert "MCP tool `get`" in context_of(out, "SessionStart")  # how to expand an id
    code, out, _ = hook(fixture("PreToolUse.Read", repo), repo)
    assert code == 0 and out == ""  # already given in full this session
    code, out, _ = hook(fixture("PreToolUse.Read", repo, session_id="another-session"), repo)
    assert mid in context_of(out, "PreToolUse")
    # after compaction the agent lost it: SessionStart(compact) gives it again
    code, out, _ = hook(fixture("SessionStart", repo, source="compact"), repo)
    assert mid in context_of(out, "SessionStart")


# -- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b'"text"', b"{", b"\xff\xfe\x00",
                                 b'{"hook_event_name": "NoSuchEvent", "session_id": "s"}',
                                 b'{"hook_event_name": 42}', b'{"hook_event_name": "PreToolUse", "tool_input": "x"}'])
def test_malformed_input_prints_nothing(repo: Path, raw: bytes) -> None:
    for event in ("SessionStart", "PreToolUse", "PostToolUse", "Stop"):
        code, out, err = hook(None, repo, raw=raw, args=(event,))
        assert (code, out, err) == (0, "", "")


def test_outside_any_repository_prints_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    for name in ("SessionStart", "UserPromptSubmit", "PreToolUse.Read", "PostToolUse.Bash", "SessionEnd"):
        event = json.loads((FIXTURES / f"{name}.json").read_text().replace(FIXTURE_ROOT, str(outside)))
        assert hook(event, outside) == (0, "", "")


def test_repository_without_gitmem_prints_nothing(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "plain")
    commit(r, "init", {"src/client.py": CLIENT_PY})
    for name in ("SessionStart", "PreToolUse.Read", "PostToolUse.Edit", "Stop", "SessionEnd"):
        assert hook(fixture(name, r), r) == (0, "", "")
    assert not (r / ".gitmem").exists()


def test_cwd_outside_repository_resolved_from_file_path(repo: Path, run_cli, tmp_path: Path) -> None:
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    event = fixture("PreToolUse.Read", repo, cwd=str(elsewhere))
    code, out, _ = hook(event, elsewhere)
    assert mid in context_of(out, "PreToolUse")


def test_relative_file_path_is_taken_from_cwd(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    event = fixture("PreToolUse.Read", repo, cwd=str(repo / "src"))
    event["tool_input"] = {"file_path": "client.py"}
    code, out, _ = hook(event, repo / "src")
    assert mid in context_of(out, "PreToolUse")
    event["tool_input"] = {"file_path": "../src/./client.py"}
    event["session_id"] = "s2"
    assert mid in context_of(hook(event, repo / "src")[1], "PreToolUse")


def test_huge_context_stays_under_the_cap(repo: Path, run_cli) -> None:
    (repo / ".gitmem" / "config.toml").write_text("[claude]\nsession_budget = 100000\nfile_budget = 100000\n")
    for i in range(40):
        remember(run_cli, repo, f"note {i} about fetch\n" + "long text " * 300, "src/client.py::fetch")
    for name, kind in (("SessionStart", "SessionStart"), ("PreToolUse.Read", "PreToolUse")):
        code, out, _ = hook(fixture(name, repo, session_id=f"cap-{name}"), repo)
        assert len(context_of(out, kind)) < 10_000


# -- PreToolUse: the symbol being edited --------------------------------------------------------


def test_edit_targets_the_symbol_its_old_string_is_in(repo: Path, run_cli) -> None:
    on_fetch = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    on_get = remember(run_cli, repo, "Client.get joins base and path without a slash", "src/client.py::Client.get",
                      mtype="gotcha")
    event = fixture("PreToolUse.Edit", repo, session_id="edit-1")
    event["tool_input"]["old_string"] = "        return fetch(self.base + path)\n"
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert text.index(on_get) < text.index(on_fetch)
    assert "Client.get joins base" in text.split(on_fetch)[0]  # the edited symbol's memory in full, first
    assert "(the edit is at line 17)" in text


def test_stale_memory_comes_with_its_reason(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    commit(repo, "loosen auth", {"src/auth.py": AUTH_PY.replace('raise ValueError("empty token")', "return False")})
    hook(fixture("SessionStart", repo, session_id="st-0"), repo)  # refreshes the hook index
    wait_for(lambda: _status_known(repo, mid))
    event = fixture("PreToolUse.Read", repo, session_id="st-1")
    event["tool_input"] = {"file_path": str(repo / "src" / "auth.py")}
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert mid in text and "⚠ stale" in text and "src/auth.py::check_token" in text


def test_an_uncommitted_edit_is_never_shown_as_fresh(repo: Path, run_cli) -> None:
    """The agent edits an anchored function (not committed): the next read of that file must not say "fresh"
    from a status checked before the edit; it says it may be stale, re-checks, and the next read is exact."""
    mid = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    hook(fixture("SessionStart", repo, session_id="un-0"), repo)
    wait_for(lambda: _status_known(repo, mid))
    event = fixture("PreToolUse.Read", repo, session_id="un-1")
    event["tool_input"] = {"file_path": str(repo / "src" / "auth.py")}
    assert "· fresh" in context_of(hook(event, repo)[1], "PreToolUse")
    time.sleep(0.01)
    write(repo, {"src/auth.py": AUTH_PY.replace('raise ValueError("empty token")', "return False")})  # the edit
    event["session_id"] = "un-2"
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert mid in text and "⚠ may be stale: src/auth.py changed since gitmem last checked it" in text
    assert "· fresh" not in text

    def rechecked() -> bool:  # the background re-check the hook started
        event["session_id"] = f"un-{time.monotonic_ns()}"
        return "⚠ stale" in context_of(hook(event, repo)[1], "PreToolUse")

    assert wait_for(rechecked, 30)
    event["session_id"] = "un-2"  # the same session: the unsure answer was not counted as given
    assert "⚠ stale" in context_of(hook(event, repo)[1], "PreToolUse")


def _status_known(repo: Path, mid: str) -> bool:
    import sqlite3

    db = layout.of(repo).catalog_file
    if not db.exists():
        return False
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT status FROM memories WHERE id = ?", (mid,)).fetchone()
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return bool(row and row[0])


# -- UserPromptSubmit ----------------------------------------------------------------------------


def test_prompt_gets_memories_it_names_once(repo: Path, run_cli) -> None:
    on_token = remember(run_cli, repo, "Tokens start with t- by convention of the gateway", "src/auth.py::check_token")
    remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    hook(fixture("SessionStart", repo, session_id="p-0"), repo)
    event = fixture("UserPromptSubmit", repo, session_id="p-1", prompt="Why does `check_token` reject my token?")
    text = context_of(hook(event, repo)[1], "UserPromptSubmit")
    assert on_token in text and "fetch must keep" not in text
    assert hook(event, repo)[1] == ""  # not given twice in one session
    # a word match (BM25) without naming anything
    event = fixture("UserPromptSubmit", repo, session_id="p-2", prompt="which gateway convention do tokens follow")
    assert on_token in context_of(hook(event, repo)[1], "UserPromptSubmit")
    # nothing relevant: nothing printed
    event = fixture("UserPromptSubmit", repo, session_id="p-3", prompt="hello there")
    assert hook(event, repo)[1] == ""


# -- scripted sessions: capture → consolidation → the next session -----------------------------


def scripted_session(repo: Path, session: str, *, secret_prompt: str = "") -> None:
    """A session that reads, edits (really) and tests src/client.py, then ends."""
    base = {"session_id": session, "transcript_path": "", "cwd": str(repo)}
    prompt = "Add retry with exponential backoff to fetch() in src/client.py" + secret_prompt
    assert hook({**base, "hook_event_name": "SessionStart", "source": "startup"}, repo)[0] == 0
    assert hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, repo)[0] == 0
    path = str(repo / "src" / "client.py")
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
          "tool_response": {"type": "text", "file": {"filePath": path, "content": CLIENT_PY, "numLines": 17}},
          "tool_use_id": "t1"}, repo)
    old, new = "    resp = session.get(url, timeout=10)\n", "    resp = _get_with_retry(session, url, timeout=10)\n"
    (repo / "src" / "client.py").write_text(CLIENT_PY.replace(old, new))  # what Edit did to the file
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
          "tool_response": {"filePath": path, "oldString": old, "newString": new, "originalFile": CLIENT_PY},
          "tool_use_id": "t2"}, repo)
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "python -m pytest -q tests/test_client.py"},
          "tool_response": {"stdout": "4 passed in 0.42s\n", "stderr": "", "interrupted": False},
          "tool_use_id": "t3"}, repo)
    assert hook({**base, "hook_event_name": "Stop", "stop_hook_active": False,
                 "last_assistant_message": "Added `_get_with_retry` with backoff; fetch() uses it."},
                repo) == (0, "", "")
    started = time.monotonic()
    assert hook({**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, repo) == (0, "", "")
    assert time.monotonic() - started < 1.5


def local_memories(repo: Path) -> list[dict[str, Any]]:
    from gitmem.memfile import read
    from gitmem.shapes import memory_json

    folder = layout.of(repo).local_memories_dir
    return [memory_json(read(p)[0]) for p in sorted(folder.glob("*.md"))] if folder.is_dir() else []


def spool_empty(repo: Path) -> bool:
    folder = layout.of(repo).spool_dir
    return not any(p.suffix in (".jsonl", ".batch") or p.name.endswith(".plan.json") for p in folder.iterdir())


def test_deterministic_session_then_next_session_sees_it(repo: Path) -> None:
    scripted_session(repo, "det-1")
    assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
    (m,) = local_memories(repo)
    assert m["type"] == "change" and m["scope"] == "local" and m["source"] == "agent"
    assert m["title"] == "Add retry with exponential backoff to fetch() in src/client.py"
    assert "_get_with_retry" in m["body"]
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert "Ran: python -m pytest -q tests/test_client.py" in m["facts"]
    # the next session is told at start, and again when it reads the file in another session
    text = context_of(hook({"session_id": "det-2", "cwd": str(repo), "hook_event_name": "SessionStart",
                            "source": "startup"}, repo)[1], "SessionStart")
    assert m["id"] in text
    event = fixture("PreToolUse.Read", repo, session_id="det-3")
    assert m["id"] in context_of(hook(event, repo)[1], "PreToolUse")


def test_read_only_session_records_nothing(repo: Path, run_cli) -> None:
    base = {"session_id": "ro", "cwd": str(repo)}
    path = str(repo / "src" / "client.py")
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
          "tool_response": {"type": "text", "file": {"content": CLIENT_PY}}}, repo)
    code, out, _ = run_cli(repo, "consolidate", "--json")
    assert code == 0 and json.loads(out)[0]["written"] == [] and local_memories(repo) == []
    assert spool_empty(repo)


def _llm_config(repo: Path, base_url: str) -> None:
    (repo / ".gitmem" / "config.toml").write_text(
        f'[llm]\nbase_url = "{base_url}"\nmodel = "test-model"\napi_key_env = "GITMEM_TEST_KEY"\ntimeout = 10\n'
        'extra_body = { chat_template_kwargs = { enable_thinking = false } }\n')


OBSERVATION = {"observations": [{
    "type": "decision", "title": "fetch retries with exponential backoff",
    "body": "Requests through the gateway fail transiently; fetch() retries 3 times, base 0.5 s.",
    "facts": ["3 attempts", "base delay 0.5 s"], "tags": ["http", "retry"],
    "files": ["src/client.py"], "symbols": ["src/client.py::fetch", "src/client.py::no_such_function", "Client.get"]}]}


def test_llm_session_then_next_session_sees_it(repo: Path) -> None:
    from testing.chat_server import chat_server

    with chat_server() as server:
        _llm_config(repo, server.base_url)
        server.replies.append({"content": "<think>the user wants retries</think>\n```json\n"
                                          + json.dumps(OBSERVATION) + "\n```",
                               "reasoning_content": "SECRET-THINKING-TEXT"})
        scripted_session(repo, "llm-1")
        assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
        (req,) = server.requests
        assert req["model"] == "test-model"
        assert req["chat_template_kwargs"] == {"enable_thinking": False}  # extra_body merged
        assert "EDIT src/client.py" in req["messages"][1]["content"]
    (m,) = local_memories(repo)
    assert (m["type"], m["source"], m["model"], m["scope"]) == ("decision", "llm", "test-model", "local")
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch", "src/client.py::Client.get"]
    assert "think" not in json.dumps(m) and "SECRET-THINKING-TEXT" not in json.dumps(m)
    event = fixture("PreToolUse.Read", repo, session_id="llm-2")
    assert m["id"] in context_of(hook(event, repo)[1], "PreToolUse")


def test_llm_repeat_observation_raises_confidence(repo: Path, run_cli) -> None:
    from testing.chat_server import chat_server

    with chat_server() as server:
        _llm_config(repo, server.base_url)
        server.replies += [{"content": json.dumps(OBSERVATION)}, {"content": json.dumps(OBSERVATION)}]
        scripted_session(repo, "rep-1")
        assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
        git(repo, "checkout", "--", "src/client.py")
        scripted_session(repo, "rep-2")
        assert wait_for(lambda: spool_empty(repo) and len(server.requests) == 2)
        assert wait_for(lambda: local_memories(repo)[0]["confidence"] > 0.6)
    (m,) = local_memories(repo)
    assert m["confidence"] == pytest.approx(0.7)


def test_llm_empty_reasoning_reply_records_nothing(repo: Path, run_cli) -> None:
    from testing.chat_server import chat_server

    with chat_server() as server:
        _llm_config(repo, server.base_url)
        server.replies.append({"content": "", "finish_reason": "stop", "reasoning_content": "nothing new here"})
        scripted_session(repo, "empty-1")
        assert wait_for(lambda: spool_empty(repo) and len(server.requests) == 1)
    time.sleep(0.3)
    assert local_memories(repo) == []


def test_llm_malformed_twice_falls_back_to_rules(repo: Path, run_cli) -> None:
    from testing.chat_server import chat_server

    with chat_server() as server:
        _llm_config(repo, server.base_url)
        server.replies += [{"content": "Sure! Here are the observations: type=decision"},
                           {"content": '{"observations": "not a list"}'}]
        scripted_session(repo, "bad-1")
        assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
        assert len(server.requests) == 2
        assert "not valid JSON" in server.requests[1]["messages"][-1]["content"]
    (m,) = local_memories(repo)
    assert m["source"] == "agent" and m["type"] == "change"  # the rules' memory


def test_llm_malformed_once_is_retried(repo: Path, run_cli) -> None:
    from testing.chat_server import chat_server

    with chat_server() as server:
        _llm_config(repo, server.base_url)
        server.replies += [{"content": "{not json"}, {"content": json.dumps(OBSERVATION)}]
        scripted_session(repo, "retry-1")
        assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
    (m,) = local_memories(repo)
    assert m["source"] == "llm"


def test_unreachable_llm_falls_back_and_keeps_nothing_pending(repo: Path, run_cli) -> None:
    _llm_config(repo, "http://127.0.0.1:9/v1")  # discard port: connection refused
    scripted_session(repo, "down-1")
    log = layout.of(repo).log_file("consolidate.log")
    # the detached consolidation may not have written its log when the memory appears (seen on a busy machine)
    assert wait_for(lambda: local_memories(repo) and spool_empty(repo) and log.is_file())
    assert local_memories(repo)[0]["source"] == "agent"
    assert wait_for(lambda: "LLM request to http://127.0.0.1:9/v1 failed" in log.read_text())


def test_consolidation_resumes_a_plan_left_by_a_crash(repo: Path, run_cli) -> None:
    """A plan written before a kill is applied by the next run: the memory appears once."""
    from gitmem.capture import spool
    from gitmem.capture.consolidate import Plan, plan_batch
    from gitmem.git import Repo
    from gitmem.store import Store

    base = {"session_id": "crash", "cwd": str(repo)}
    path = str(repo / "src" / "auth.py")
    (repo / "src" / "auth.py").write_text(AUTH_PY.replace("empty token", "no token"))
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": path, "old_string": "empty token", "new_string": "no token"}}, repo)
    store = Store(Repo(repo))
    batch = spool.claim(repo, "crash")
    records, _ = spool.read_records(batch)
    plan, _ = plan_batch(store, "crash", records, use_llm=False, notes=[])
    plan_path = batch.with_name(batch.name.removesuffix(".batch") + ".plan.json")
    plan_path.write_bytes(plan.to_json())  # ...and the process is killed here
    assert Plan.from_json(plan_path.read_bytes()).write[0].id == plan.write[0].id
    code, out, err = run_cli(repo, "consolidate", "--json")
    assert code == 0, err
    assert [m["id"] for m in local_memories(repo)] == [plan.write[0].id]
    assert spool_empty(repo)
    code, out, _ = run_cli(repo, "consolidate", "--json")
    assert json.loads(out) == [] and len(local_memories(repo)) == 1


def test_private_files_are_never_captured(repo: Path) -> None:
    write(repo, {".env": "API_TOKEN=tok-very-secret-123\n", "secrets/prod.sh": "export X=1\n"})
    base = {"session_id": "priv", "cwd": str(repo), "hook_event_name": "PostToolUse"}
    hook({**base, "tool_name": "Read", "tool_input": {"file_path": str(repo / ".env")},
          "tool_response": {"type": "text", "file": {"content": "API_TOKEN=tok-very-secret-123"}}}, repo)
    hook({**base, "tool_name": "Bash", "tool_input": {"command": "cat secrets/prod.sh"},
          "tool_response": {"stdout": "export X=1"}}, repo)
    hook({**base, "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "src"}}, repo)
    lines = (layout.of(repo).spool_dir / "priv.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["input"]["command"] == "ls"
    pre = {"session_id": "priv", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Read",
           "tool_input": {"file_path": str(repo / ".env")}}
    assert hook(pre, repo) == (0, "", "")


# -- hostile conditions (found by trying to break it) --------------------------------------------


def test_corrupt_hook_index_is_rebuilt_and_context_still_given(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    db = layout.of(repo).catalog_file
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(os.urandom(8192))
    assert mid in context_of(hook(fixture("SessionStart", repo, session_id="c1"), repo)[1], "SessionStart")
    assert mid in context_of(hook(fixture("PreToolUse.Read", repo, session_id="c2"), repo)[1], "PreToolUse")
    code, out, _ = run_cli(repo, "doctor", "--json")
    assert all(c["level"] == "ok" for c in json.loads(out)["checks"] if c["name"] == "hook-index")


def test_concurrent_session_starts_all_get_context(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    (layout.of(repo).catalog_file).unlink()
    procs = [subprocess.Popen([sys.executable, "-m", "gitmem.integrations.agents.claude"], cwd=repo,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(6)]
    for i, p in enumerate(procs):
        p.stdin.write(json.dumps(fixture("SessionStart", repo, session_id=f"par-{i}")).encode())
        p.stdin.close()
    outs = [p.stdout.read().decode() for p in procs]
    assert [p.wait(60) for p in procs] == [0] * 6
    assert all(mid in context_of(o, "SessionStart") for o in outs)
    log = layout.of(repo).log_file("claude-hooks.log")
    assert not log.exists() or "Error" not in log.read_text()


def test_an_invalid_config_is_said_at_session_start_not_swallowed(repo: Path, run_cli) -> None:
    remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    cfg = repo / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[daemon]\nidle_minutes = -1\n")
    code, out, _ = hook(fixture("SessionStart", repo, session_id="badcfg"), repo)
    text = context_of(out, "SessionStart")
    assert code == 0 and "no memories in this session" in text and "daemon.idle_minutes" in text
    code, out, _ = hook(fixture("UserPromptSubmit", repo, session_id="badcfg"), repo)
    assert code == 0  # later events stay quiet (said once, at session start)


def test_poison_spool_line_blocks_nothing(repo: Path, run_cli) -> None:
    folder = layout.of(repo).spool_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "aa.jsonl").write_text("[" * 100_000 + "\n" + "{torn\n")
    (repo / "src" / "auth.py").write_text(AUTH_PY.replace("empty token", "missing token"))
    hook({"session_id": "zz", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": str(repo / "src" / "auth.py"), "old_string": "empty token",
                         "new_string": "missing token"}}, repo)
    code, out, err = run_cli(repo, "consolidate", "--no-llm", "--json")
    assert code == 0, err
    assert [r["session"] for r in json.loads(out)] == ["aa", "zz"]
    assert [m["session"] for m in local_memories(repo)] == ["zz"] and spool_empty(repo)


def test_huge_and_deep_events_are_bounded_not_lost(repo: Path) -> None:
    deep: Any = "leaf"
    for _ in range(400):
        deep = {"k": deep}
    base = {"session_id": "big", "cwd": str(repo)}
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "mcp__x__y", "tool_input": deep,
          "tool_response": deep}, repo)
    started = time.monotonic()
    end = {**base, "session_id": "big-end", "hook_event_name": "SessionEnd", "reason": "x" * 10_000_000}
    assert hook(end, repo) == (0, "", "")
    assert time.monotonic() - started < 1.5 + 1.0  # budget plus the test's own process start on a busy machine
    (record,) = [json.loads(ln) for ln in (layout.of(repo).spool_dir / "big.jsonl").read_text().splitlines()]
    assert record["event"] == "PostToolUse" and "[nested too deep]" in json.dumps(record)
    assert len(json.dumps(record)) < 50_000


def test_private_key_cut_by_the_length_cap_leaves_no_lines(repo: Path) -> None:
    body = [("MIIEpAIBAAKCAQEA" + f"{i:02d}" + "x" * 46)[:64] for i in range(25)]
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----\n"
    hook({"session_id": "pem", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "cat deploy/key.txt"},
          "tool_response": {"stdout": "." * 600 + "\n" + key + "\n" + "tail " * 10}}, repo)
    text = (layout.of(repo).spool_dir / "pem.jsonl").read_text()
    assert not any(line[:20] in text for line in body)


def test_command_output_that_prints_a_private_file_loses_its_values(repo: Path) -> None:
    out = ".env:1:DATABASE_URL=postgres://u:sup3rs3cret@db/app\n.env:2:FEATURE_FLAG=on-7731\n3 passed\n"
    hook({"session_id": "grep", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "grep -rn = ."}, "tool_response": {"stdout": out}}, repo)
    text = (layout.of(repo).spool_dir / "grep.jsonl").read_text()
    assert "sup3rs3cret" not in text and "on-7731" not in text and "3 passed" in text


def test_a_commit_reaches_the_file_hook_without_a_new_session_start(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    assert run_cli(repo, "hooks", "install")[0] == 0
    hook(fixture("SessionStart", repo, session_id="cm-0"), repo)  # hook index current and fresh
    commit(repo, "loosen auth", {"src/auth.py": AUTH_PY.replace('raise ValueError("empty token")', "return False")})
    event = fixture("PreToolUse.Read", repo, session_id="cm-1")
    event["tool_input"] = {"file_path": str(repo / "src" / "auth.py")}
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert mid in text and "⚠ stale" in text and git(repo, "rev-parse", "--short=12", "HEAD").strip() in text


def test_session_start_with_nothing_near_shows_the_newest(repo: Path, run_cli) -> None:
    mid = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    write(repo, {"docs/notes.md": "unrelated work in progress\n"})  # the focus: a file no memory is near
    text = context_of(hook(fixture("SessionStart", repo, session_id="far"), repo)[1], "SessionStart")
    assert "no memory is about the code in focus yet; the newest of 1" in text and mid in text


def test_a_diff_of_a_private_file_is_not_captured(repo: Path) -> None:
    diff = ("diff --git a/.env b/.env\nindex 1..2 100644\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n"
            "-API_URL=https://old.example\n+DB_HOST_SECRETISH=zzprivatevalue21\n")
    hook({"session_id": "diff", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "git diff HEAD~1"}, "tool_response": {"stdout": diff}}, repo)
    assert not (layout.of(repo).spool_dir / "diff.jsonl").exists()
    patch = "+++ b/src/app.py\n+FEATURE_KEY=zzprivatevalue22\n 3 passed\n"
    hook({"session_id": "diff2", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "git stash show -p"}, "tool_response": {"stdout": patch}}, repo)
    text = (layout.of(repo).spool_dir / "diff2.jsonl").read_text()
    assert "zzprivatevalue22" not in text and "3 passed" in text
