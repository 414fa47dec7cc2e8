"""Capture that loses nothing: the spool reconciled with Claude Code's transcript when a session ends.

Real repositories, real hook processes writing the real spool, real consolidation (rules, no model),
and a transcript written here in Claude Code's JSON Lines format (``transcript_path``): the hooks
of a headless run may be cut short (an asynchronous PostToolUse killed, the Stop hook cancelled),
the transcript still has every tool call and the final message.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.git import Repo
from gitmem.store import Store
from testing.repos import commit, make_repo
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, hook, local_memories, spool_empty, wait_for

OLD = "    resp = session.get(url, timeout=10)\n"
NEW = "    resp = _get_with_retry(session, url, timeout=10)\n"
PROMPT = "Add retry with exponential backoff to fetch() in src/client.py"
FINAL = "Added `_get_with_retry` (3 attempts, exponential backoff) and fetch() now uses it."
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture(autouse=True)
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's folder (``CLAUDE_CONFIG_DIR``): only transcripts under its ``projects/`` are read."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path / "claude"


@pytest.fixture
def repo(tmp_path: Path, run_cli: Any) -> Path:
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def _line(kind: str, session: str, repo: Path, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(repo),
            "sessionId": session, "version": "2.1.328", "gitBranch": "main", "type": kind,
            "message": message, "uuid": os.urandom(16).hex(), "timestamp": "2026-08-01T10:00:00.000Z", **extra}


def transcript(tmp_path: Path, repo: Path, session: str, *,
               extra_tools: list[tuple[str, str, dict[str, Any], Any]] | None = None, final: str = FINAL) -> Path:
    """A Claude Code transcript: prompt, Read (t1), Edit (t2) of src/client.py, the extra tools, the final text."""
    path = str(repo / "src" / "client.py")
    tools: list[tuple[str, str, dict[str, Any], Any]] = [
        ("t1", "Read", {"file_path": path}, {"type": "text", "file": {"filePath": path, "content": CLIENT_PY,
                                                                      "numLines": 17}}),
        ("t2", "Edit", {"file_path": path, "old_string": OLD, "new_string": NEW, "replace_all": False},
         {"filePath": path, "oldString": OLD, "newString": NEW, "originalFile": CLIENT_PY, "replaceAll": False}),
        *(extra_tools or [])]
    lines = [{"type": "summary", "summary": "retry in fetch", "leafUuid": "x"},
             _line("user", session, repo, {"role": "user", "content": PROMPT})]
    for i, (tid, name, inp, result) in enumerate(tools):
        lines.append(_line("assistant", session, repo, {
            "id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-5",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}], "stop_reason": "tool_use"}))
        lines.append(_line("user", session, repo, {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": "ok", "is_error": False}]}, toolUseResult=result))
    lines.append(_line("assistant", session, repo, {
        "id": "msg_final", "type": "message", "role": "assistant", "model": "claude-sonnet-5",
        "content": [{"type": "text", "text": final}], "stop_reason": "end_turn"}))
    out = tmp_path / "claude" / "projects" / "-project" / f"{session}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    return out


def headless_session(repo: Path, session: str, tpath: Path | str, *, edit_hook: bool, stop_hook: bool,
                     end_hook: bool) -> None:
    """``claude -p``: read, edit (really), finish; the Edit's PostToolUse and the Stop hook may be lost.

    ``end_hook``: SessionEnd runs as the real hook (its detached worker consolidates); else the SessionEnd
    record is spooled here, and the test consolidates in-process.
    """
    base = {"session_id": session, "transcript_path": str(tpath), "cwd": str(repo)}
    path = str(repo / "src" / "client.py")
    assert hook({**base, "hook_event_name": "SessionStart", "source": "startup"}, repo)[0] == 0
    assert hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}, repo)[0] == 0
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
          "tool_response": {"type": "text", "file": {"filePath": path, "content": CLIENT_PY, "numLines": 17}},
          "tool_use_id": "t1"}, repo)
    (repo / "src" / "client.py").write_text(CLIENT_PY.replace(OLD, NEW))  # what Edit did to the file
    if edit_hook:
        late_edit(repo, session, tpath)
    if stop_hook:
        hook({**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": FINAL}, repo)
    if end_hook:
        assert hook({**base, "hook_event_name": "SessionEnd", "reason": "other"}, repo) == (0, "", "")
    else:
        from gitmem.integrations.agents import capture

        capture.spool_record(repo, session, "SessionEnd",
                             {"reason": "other", "agent": "claude", "transcript": str(tpath)})


def late_edit(repo: Path, session: str, tpath: Path | str) -> None:
    path = str(repo / "src" / "client.py")
    hook({"session_id": session, "transcript_path": str(tpath), "cwd": str(repo), "hook_event_name": "PostToolUse",
          "tool_name": "Edit", "tool_input": {"file_path": path, "old_string": OLD, "new_string": NEW,
                                              "replace_all": False},
          "tool_response": {"filePath": path, "oldString": OLD, "newString": NEW, "originalFile": CLIENT_PY},
          "tool_use_id": "t2"}, repo)


def consolidate(repo: Path, session: str) -> Any:
    from gitmem.capture.consolidate import consolidate_session

    return consolidate_session(Store(Repo(repo)), session, use_llm=False)


def spool_text(repo: Path) -> str:
    folder = layout.of(repo).spool_dir
    return "".join(p.read_text() for p in sorted(folder.iterdir()) if p.name.endswith((".jsonl", ".batch")))


# (a) ------------------------------------------------------------------------------------------------


def test_lost_edit_hook_still_yields_the_memory_of_the_edit(repo: Path, tmp_path: Path) -> None:
    """The Edit's asynchronous PostToolUse never reached the spool; the transcript has it."""
    tpath = transcript(tmp_path, repo, "lost-edit")
    headless_session(repo, "lost-edit", tpath, edit_hook=False, stop_hook=True, end_hook=True)
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=20)
    (m,) = local_memories(repo)
    assert m["session"] == "lost-edit" and m["title"] == PROMPT
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert m["body"] == FINAL
    log = (layout.of(repo).logs_dir / "consolidate.log").read_text()
    assert "reconciled with the transcript: 1 event added" in log


# (b) ------------------------------------------------------------------------------------------------


def test_without_a_stop_record_the_body_is_the_transcripts_final_message(repo: Path, tmp_path: Path) -> None:
    tpath = transcript(tmp_path, repo, "no-stop")
    headless_session(repo, "no-stop", tpath, edit_hook=True, stop_hook=False, end_hook=False)
    out = consolidate(repo, "no-stop")
    (m,) = local_memories(repo)
    assert out.written == [m["id"]] and m["body"] == FINAL
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert any("1 event added" in n for n in out.notes)  # the final message; the Edit was spooled


# (c) ------------------------------------------------------------------------------------------------


def test_late_hooks_and_reruns_add_nothing_twice(repo: Path, tmp_path: Path) -> None:
    tpath = transcript(tmp_path, repo, "late")
    headless_session(repo, "late", tpath, edit_hook=False, stop_hook=False, end_hook=False)
    # an Edit hook that was only slow lands after the SessionEnd record, before the consolidation claims
    late_edit(repo, "late", tpath)
    first = consolidate(repo, "late")
    (m,) = local_memories(repo)
    assert first.written == [m["id"]] and m["body"] == FINAL
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    folder = layout.of(repo).local_memories_dir
    before = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    # the same hooks again, after the reconciliation: the Edit and the Stop with the same message
    late_edit(repo, "late", tpath)
    hook({"session_id": "late", "transcript_path": str(tpath), "cwd": str(repo), "hook_event_name": "Stop",
          "last_assistant_message": FINAL}, repo)
    second = consolidate(repo, "late")
    assert second.written == [] and second.events == 0 and spool_empty(repo)
    # the session resumed and ended again: the reconciliation runs again and finds nothing new
    from gitmem.integrations.agents import capture

    capture.spool_record(repo, "late", "SessionEnd", {"reason": "other", "agent": "claude", "transcript": str(tpath)})
    third = consolidate(repo, "late")
    assert third.written == [] and not any("reconciled" in n for n in third.notes)
    assert {p.name: p.read_bytes() for p in folder.glob("*.md")} == before


def test_a_new_tool_call_after_the_reconciliation_is_still_consolidated(repo: Path, tmp_path: Path) -> None:
    """Dedupe is by tool-use id: a genuinely new late call is not dropped."""
    tpath = transcript(tmp_path, repo, "new-late")
    headless_session(repo, "new-late", tpath, edit_hook=False, stop_hook=True, end_hook=False)
    consolidate(repo, "new-late")
    hook({"session_id": "new-late", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
          "tool_input": {"command": "python -m pytest -q tests/test_client.py"},
          "tool_response": {"stdout": "4 passed\n", "stderr": ""}, "tool_use_id": "t9"}, repo)
    out = consolidate(repo, "new-late")
    (m,) = local_memories(repo)
    assert out.events == 1 and "Ran: python -m pytest -q tests/test_client.py" in m["facts"]


# (d) ------------------------------------------------------------------------------------------------


def test_transcript_secrets_are_redacted_and_private_files_not_captured(repo: Path, tmp_path: Path) -> None:
    env = repo / ".env"
    env.write_text("API_KEY=hunter2-very-secret\n")
    tpath = transcript(tmp_path, repo, "secret", extra_tools=[
        ("t3", "Bash", {"command": f"curl -H 'Authorization: token {SECRET}' https://api.github.com/user"},
         {"stdout": "{}", "stderr": "", "interrupted": False}),
        ("t4", "Read", {"file_path": str(env)},
         {"type": "text", "file": {"filePath": str(env), "content": env.read_text(), "numLines": 1}}),
    ])
    headless_session(repo, "secret", tpath, edit_hook=False, stop_hook=False, end_hook=False)
    from gitmem.capture import spool
    from gitmem.capture.consolidate import reconcile_with_transcript

    notes: list[str] = []
    reconcile_with_transcript(Store(Repo(repo)), "secret", spool.read_seen(repo, "secret"), notes)
    text = spool_text(repo)
    assert notes == ["reconciled with the transcript: 3 events added"]  # Edit, Bash, final message; not .env
    assert '"id":"t3"' in text and SECRET not in text and "[REDACTED" in text
    assert '"id":"t4"' not in text and ".env" not in text and "hunter2" not in text
    consolidate(repo, "secret")
    (m,) = local_memories(repo)
    assert SECRET not in json.dumps(m) and "hunter2" not in json.dumps(m)


# (e) ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "relative", "directory", "fifo", "unreadable", "huge", "garbage",
                                  "outside", "dotdot", "symlink"])
def test_a_bad_transcript_leaves_the_spool_alone(repo: Path, tmp_path: Path, kind: str) -> None:
    good = transcript(tmp_path, repo, "bad", final="a message only the transcript has", extra_tools=[
        ("t3", "Bash", {"command": "echo only-the-transcript-has-this"}, {"stdout": "x", "stderr": ""})])
    tpath: str = str(good)
    if kind == "missing":
        good.unlink()
    elif kind == "relative":
        tpath = os.path.relpath(good)
    elif kind == "directory":
        tpath = str(tmp_path / "dir.jsonl")
        os.mkdir(tpath)
    elif kind == "fifo":
        tpath = str(tmp_path / "fifo.jsonl")
        os.mkfifo(tpath)
    elif kind == "unreadable":
        good.chmod(0)
    elif kind == "huge":  # the transcript's lines, then 40 MB more: only the end is read, and it holds nothing
        from gitmem.integrations.agents.reconcile import MAX_TRANSCRIPT_BYTES

        with good.open("r+b") as f:
            f.truncate(MAX_TRANSCRIPT_BYTES + 8 * 1024 * 1024)
    elif kind == "outside":  # a real transcript, but not in Claude Code's folder: never read
        tpath = str(tmp_path / "elsewhere.jsonl")
        os.replace(good, tpath)
    elif kind == "dotdot":  # names the folder, leaves it
        moved = tmp_path / "elsewhere.jsonl"
        os.replace(good, moved)
        tpath = str(good.parent / ".." / ".." / ".." / moved.name)
    elif kind == "symlink":  # a link in the folder to a file outside it
        moved = tmp_path / "elsewhere.jsonl"
        os.replace(good, moved)
        good.symlink_to(moved)
    elif kind == "garbage":
        good.write_bytes(b"\x00\xff not json\n[1, 2]\n{\"type\": \"assistant\", \"message\": 3}\n" * 1000)
    headless_session(repo, "bad", tpath, edit_hook=True, stop_hook=True, end_hook=False)
    started = time.monotonic()
    out = consolidate(repo, "bad")
    assert time.monotonic() - started < 20
    (m,) = local_memories(repo)
    assert out.written == [m["id"]] and [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    if kind != "unreadable" or os.geteuid() != 0:  # root reads a file whatever its mode
        assert m["body"] == FINAL and not any("reconciled" in n for n in out.notes)
    assert spool_empty(repo)
