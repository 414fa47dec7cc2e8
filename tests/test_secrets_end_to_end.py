"""No secret of the corpus (tests/fixtures/secrets.json) lands anywhere under .gitmem/ or in an LLM request.

A whole session carries every corpus example in a prompt, a shell command, its
output, an edit, a written file and the agent's last message, through the real
hook processes; then it is consolidated (by the LLM path against a real HTTP
server on 127.0.0.1, and by rules), the LanceDB index and the hook index are
synced, and every byte under .gitmem/ plus every request body is searched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem import layout
from testing.chat_server import chat_server
from testing.repos import commit, make_repo
from tests.test_claude_hooks import hook, wait_for

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "secrets.json").read_text())


def needles() -> list[tuple[str, str]]:
    """(kind, text) pairs to search for: each secret, and each long line of a multi-line one."""
    out = []
    for item in CORPUS:
        secret = item["secret"]
        parts = [ln.strip() for ln in secret.splitlines() if len(ln.strip()) >= 12] if "\n" in secret else [secret]
        out += [(item["kind"], p) for p in parts]
    return out


def all_bytes(folder: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in folder.rglob("*") if p.is_file()]


def leaks(blobs: list[tuple[str, bytes]]) -> list[str]:
    found = []
    for kind, needle in needles():
        raw = needle.encode()
        escaped = json.dumps(needle)[1:-1].encode()  # as it would appear inside JSON
        for where, data in blobs:
            if raw in data or escaped in data:
                found.append(f"{kind}: {needle[:30]}… in {where}")
    return found


@pytest.mark.parametrize("use_llm", [True, False])
def test_no_secret_reaches_gitmem_files_or_the_llm(tmp_path: Path, run_cli, use_llm: bool) -> None:
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"app/settings.py": "def load():\n    return {}\n"})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    examples = "\n".join(item["example"] for item in CORPUS)
    with chat_server() as server:
        if use_llm:
            (repo / ".gitmem" / "config.toml").write_text(
                f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\n[embeddings]\nprovider = "none"\n')
            reply = {"observations": [{"type": "gotcha", "title": "settings load keeps credentials out",
                                       "body": "load() returns an empty dict", "files": ["app/settings.py"],
                                       "symbols": ["app/settings.py::load"]}]}
            server.replies.append({"content": json.dumps(reply)})
        else:
            (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
        base = {"session_id": f"sec-{use_llm}", "cwd": str(repo)}
        path = str(repo / "app" / "settings.py")
        hook({**base, "hook_event_name": "SessionStart", "source": "startup"}, repo)
        hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Use these credentials:\n" + examples}, repo)
        hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
              "tool_input": {"command": "deploy --verbose " + examples.replace("\n", " ")},
              "tool_response": {"stdout": examples, "stderr": examples}}, repo)
        new_code = "def load():\n    return {}\n\n\nCONFIG = '''\n" + examples + "\n'''\n"
        (repo / "app" / "settings.py").write_text(new_code)
        hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
              "tool_input": {"file_path": path, "old_string": "    return {}\n", "new_string": new_code},
              "tool_response": {"originalFile": examples}}, repo)
        hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Write",
              "tool_input": {"file_path": str(repo / "app" / "notes.md"), "content": examples}}, repo)
        hook({**base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
              "tool_input": {"command": "curl " + examples.splitlines()[0]}, "error": examples}, repo)
        hook({**base, "hook_event_name": "Stop", "last_assistant_message": "Done. Used:\n" + examples}, repo)
        hook({**base, "hook_event_name": "SessionEnd", "reason": "other"}, repo)
        assert wait_for(lambda: any((layout.of(repo).local_memories_dir).glob("*.md")), 60)
        requests = [("LLM request", raw) for raw in server.raw_requests]
    assert (len(requests) == 1) == use_llm
    code, _, err = run_cli(repo, "sync")
    assert code == 0, err
    code, out, _ = run_cli(repo, "recall", "credentials", "--json")
    assert code == 0
    memory_text = "".join(p.read_text() for p in (layout.of(repo).local_memories_dir).glob("*.md"))
    assert "[REDACTED" in memory_text or use_llm  # the secrets reached the memory only as markers
    lay = layout.of(repo)  # everything gitmem keeps: committed files, per-clone and per-worktree state
    blobs = [(str(p), data) for folder in (repo / ".gitmem", lay.clone_dir, lay.worktree_dir)
             for p, data in all_bytes(folder)]
    assert any("spool" in w for w, _ in blobs) and any("catalog.sqlite" in w for w, _ in blobs)
    assert leaks(blobs + requests) == []


def test_remember_redacts_whoever_asks(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "project")
    commit(repo, "init", {"db.py": "def connect():\n    pass\n"})
    run_cli(repo, "init", "--no-hooks")
    text = ("connect() uses postgres://app:Hunter2Secret!@db.internal:5432/app and "
            "token ghp_1234567890abcdefghijABCDEFGHIJ123456")
    code, out, err = run_cli(repo, "remember", text, "--anchor", "db.py::connect", "--fact",
                             "DB_PASSWORD=Hunter2Secret!", "--json")
    assert code == 0 and "redacted" in err
    blobs = [(str(p), p.read_bytes()) for p in (repo / ".gitmem").rglob("*") if p.is_file()]
    assert not [w for w, b in blobs if b"Hunter2Secret" in b or b"ghp_1234567890" in b]
    assert "postgres://app:" in json.loads(out)["title"] + json.loads(out)["body"]
