"""Codex CLI hooks: its documented event JSON through the real entry point, on real repositories with memories.

Every hook run here is a real process (``python -m gitmem.integrations.agents.codex``) fed an
event built as Codex 0.169.0 sends it (common fields ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``, ``model``; ``Bash`` with the command line in
``tool_input.command``; ``apply_patch`` with the patch in ``tool_input.command``), in a real git
repository with gitmem initialised; the events at the end are replayed as recorded from the real
``codex exec`` (``tests/fixtures/codex/``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.capture import spool
from gitmem.integrations.agents import codex, patches
from testing.repos import commit, make_repo
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, context_of, local_memories, remember, spool_empty, wait_for

OLD_LINE = "    resp = session.get(url, timeout=10)\n"
NEW_LINE = "    resp = _get_with_retry(session, url, timeout=10)\n"


def codex_event(name: str, repo: Path, session: str, **fields: Any) -> dict[str, Any]:
    """A Codex hook input: the common fields plus ``fields``."""
    return {"session_id": session, "transcript_path": None, "cwd": str(repo), "hook_event_name": name,
            "model": "gpt-5.5", **fields}


def patch_for(path: str, old: str, new: str) -> str:
    """A Codex ``apply_patch`` patch replacing line ``old`` by ``new`` in ``path`` (one hunk)."""
    return (f"*** Begin Patch\n*** Update File: {path}\n@@ def fetch(url):\n     session = _session()\n"
            f"-{old}+{new}*** End Patch\n")


def hook(payload: Any, cwd: Path, *, raw: bytes | None = None) -> tuple[int, str, str]:
    """Run the Codex hook entry point as a process; returns (exit code, stdout, stderr)."""
    data = raw if raw is not None else json.dumps(payload).encode()
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.codex"], input=data, cwd=cwd,
                          capture_output=True, env=dict(os.environ), timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY,
                       "tests/test_client.py": "def test_x():\n    pass\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def injected(repo: Path, event: dict[str, Any], name: str) -> str:
    """The context a hook injects for ``event`` once the hook index has it (waits for the first build)."""
    texts: list[str] = []

    def got() -> bool:
        code, out, err = hook(event, repo)
        assert code == 0 and err == "", err
        if out:
            texts.append(context_of(out, name))
        return bool(out)

    assert wait_for(got, timeout=30), f"{name}: nothing injected"
    return texts[-1]


def spooled(repo: Path, session: str) -> list[dict[str, Any]]:
    """The session's spooled records, oldest first: the batches a consolidation has claimed (a session end or an
    idle event hands the live file over, and a fast worker may have claimed it already), then the live file."""
    key = spool.session_key(session)
    out: list[dict[str, Any]] = []
    for path in [*spool.batches(repo, key), spool.live_path(repo, key)]:
        try:
            out += [json.loads(ln) for ln in path.read_text().splitlines()]
        except FileNotFoundError:  # consolidated meanwhile
            continue
    return out


# -- parsing: command lines and patches ------------------------------------------------------------


@pytest.mark.parametrize(("line", "files"), [
    ("cat src/client.py", ["src/client.py"]),
    ("head -n 20 src/client.py", ["src/client.py"]),
    ("tail -5 src/auth.py", ["src/auth.py"]),
    ("sed -n '1,40p' src/client.py", ["src/client.py"]),
    ("rg -n fetch src/client.py src/auth.py", ["src/client.py", "src/auth.py"]),
    ("grep -e timeout src/client.py", ["src/client.py"]),
    ("grep -rn timeout src", []),  # a folder: not a file read
    ("cd src && cat client.py missing.py", ["src/client.py"]),  # relative to the cd's folder
    ("cd src; head -5 ../src/auth.py && cd .. && cat src/client.py", ["src/auth.py", "src/client.py"]),
    ("(cd src && cat client.py) && cat src/auth.py", ["src/client.py", "src/auth.py"]),  # the cd ends with `)`
    ("cd $DIR && cat client.py", []),  # a folder it cannot know: no file taken
    ("cd && cat src/client.py", []),  # cd alone goes home
    ("pushd src >/dev/null && nl client.py", ["src/client.py"]),
    ("cd {repo}/src && cat client.py", ["{repo}/src/client.py"]),  # an absolute folder: an absolute file
    ("cat src/client.py | nl > src/auth.py", ["src/client.py"]),  # a redirection's target is not read
    ("sed -i 's/a/b/' src/client.py", []),  # an edit, not a read
    ("python -m pytest -q", []),
    ("cat 'unterminated", []),
])
def test_read_files_of_a_command_line(repo: Path, line: str, files: list[str]) -> None:
    cwd = str(repo)
    got = codex.read_files(line.replace("{repo}", cwd), cwd)
    files = [f.replace("{repo}", cwd) for f in files]
    assert got == [f for f in files if (repo / f).is_file()]


def test_command_given_as_argv() -> None:
    assert codex.command_line({"command": ["bash", "-lc", "cat src/x.py"]}) == "cat src/x.py"
    assert codex.command_line({"command": "cat a"}) == "cat a"


def test_parse_patch_finds_every_file_and_the_first_hunk() -> None:
    patch = ("*** Begin Patch\n*** Update File: pkg/mod.py\n@@ def f():\n     a = 1\n-    b = 2\n+    b = 3\n@@\n"
             "-x\n+y\n*** Add File: pkg/new.py\n+print(1)\n*** Delete File: old.py\n*** Update File: a.py\n"
             "*** Move to: b.py\n@@\n-q\n+r\n*** End of File\n*** End Patch\n")
    files = patches.parse_patch(patch)
    assert [(f.path, f.action, f.move_to) for f in files] == [
        ("pkg/mod.py", "update", ""), ("pkg/new.py", "add", ""), ("old.py", "delete", ""), ("a.py", "update", "b.py")]
    assert files[0].old == ["    a = 1", "    b = 2"] and files[0].new == ["    a = 1", "    b = 3"]
    assert files[1].new == ["print(1)"]
    assert patches.parse_patch("not a patch") == []


# -- the events through the entry point ------------------------------------------------------------


def test_session_start_gives_the_context(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    code, out, err = hook(codex_event("SessionStart", repo, "s-start", source="startup"), repo)
    assert code == 0 and err == ""
    assert mid in context_of(out, "SessionStart")


def test_bash_read_gets_that_files_memories(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    other = remember(run_cli, repo, "check_token accepts only t- tokens", "src/auth.py::check_token")
    text = injected(repo, codex_event("PreToolUse", repo, "s-read", tool_name="Bash", tool_use_id="call_1",
                                      tool_input={"command": "cat src/client.py"}), "PreToolUse")
    assert mid in text and other not in text
    # a command reading two files gets both files' memories in one answer
    text = injected(repo, codex_event("PreToolUse", repo, "s-read2", tool_name="Bash",
                                      tool_input={"command": "sed -n '1,20p' src/client.py; head src/auth.py"}),
                    "PreToolUse")
    assert mid in text and other in text
    # a command that reads no file prints nothing
    assert hook(codex_event("PreToolUse", repo, "s-read3", tool_name="Bash",
                            tool_input={"command": "python -m pytest -q"}), repo) == (0, "", "")


def test_apply_patch_gets_the_patched_files_memories_and_is_captured(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    other = remember(run_cli, repo, "check_token accepts only t- tokens", "src/auth.py::check_token")
    patch = (patch_for("src/client.py", OLD_LINE, NEW_LINE).removesuffix("*** End Patch\n")
             + "*** Update File: src/auth.py\n@@\n-    return token.startswith(\"t-\")\n"
               "+    return token.startswith((\"t-\", \"u-\"))\n*** End Patch\n")
    text = injected(repo, codex_event("PreToolUse", repo, "s-patch", tool_name="apply_patch", tool_use_id="call_2",
                                      tool_input={"command": patch}), "PreToolUse")
    assert mid in text and other in text
    assert "src/client.py (the edit is at lines" in text  # the first hunk's old text located the edit
    (repo / "src" / "client.py").write_text(CLIENT_PY.replace(OLD_LINE, NEW_LINE))  # what the patch did
    code, out, _ = hook(codex_event("PostToolUse", repo, "s-patch", tool_name="apply_patch", tool_use_id="call_2",
                                    tool_input={"command": patch}, tool_response="Success."), repo)
    assert (code, out) == (0, "")
    recs = [r for r in spooled(repo, "s-patch") if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"], r["input"]["file_path"]) for r in recs] == [
        ("apply_patch", "edit", "src/client.py"), ("apply_patch", "edit", "src/auth.py")]
    assert NEW_LINE.strip() in recs[0]["input"]["new_string"]


def test_a_session_consolidates_from_stop_once(repo: Path) -> None:
    """Stop hands the spool to consolidation (Codex may give SessionEnd no time); SessionEnd after it adds nothing."""
    s = "s-session"
    assert hook(codex_event("SessionStart", repo, s, source="startup"), repo)[0] == 0
    assert hook(codex_event("UserPromptSubmit", repo, s, turn_id="t1",
                            prompt="Add retry with exponential backoff to fetch() in src/client.py"), repo)[0] == 0
    hook(codex_event("PostToolUse", repo, s, tool_name="Bash", tool_use_id="c1",
                     tool_input={"command": "cat src/client.py"}, tool_response=CLIENT_PY), repo)
    patch = patch_for("src/client.py", OLD_LINE, NEW_LINE)
    (repo / "src" / "client.py").write_text(CLIENT_PY.replace(OLD_LINE, NEW_LINE))
    hook(codex_event("PostToolUse", repo, s, tool_name="apply_patch", tool_use_id="c2",
                     tool_input={"command": patch}, tool_response="Success. Updated the following files:\n"
                                                                 "M src/client.py\n"), repo)
    hook(codex_event("PostToolUse", repo, s, tool_name="Bash", tool_use_id="c3",
                     tool_input={"command": "python -m pytest -q tests/test_client.py"},
                     tool_response="1 passed in 0.01s\n"), repo)
    assert hook(codex_event("Stop", repo, s, turn_id="t1", stop_hook_active=False,
                            last_assistant_message="Added `_get_with_retry`; fetch() uses it."), repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(repo)) and spool_empty(repo), timeout=60)
    (m,) = local_memories(repo)
    assert m["title"] == "Add retry with exponential backoff to fetch() in src/client.py"
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert "_get_with_retry" in m["body"]
    assert hook(codex_event("SessionEnd", repo, s, reason="exit"), repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(repo), timeout=60)
    assert [x["id"] for x in local_memories(repo)] == [m["id"]]  # consolidated once, not twice


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b"\"PreToolUse\"", b"{\"hook_event_name\": 3}",
                                 b"{\"hook_event_name\": \"Unknown\", \"cwd\": \"/\"}"])
def test_bad_input_prints_nothing(repo: Path, raw: bytes) -> None:
    assert hook(None, repo, raw=raw) == (0, "", "")


def test_outside_a_repository_prints_nothing(tmp_path: Path) -> None:
    ev = codex_event("PreToolUse", tmp_path, "s-out", tool_name="Bash", tool_input={"command": "cat x"})
    assert hook(ev, tmp_path) == (0, "", "")


def test_silent_events_print_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    for ev in (codex_event("PostToolUse", repo, "s-q", tool_name="Bash", tool_input={"command": "cat src/client.py"},
                           tool_response="x"),
               codex_event("PreToolUse", repo, "s-q", tool_name="mcp__gitmem__search", tool_input={"q": "x"})):
        assert hook(ev, repo) == (0, "", "")
    assert layout.of(repo).spool_dir.is_dir()


# -- real events recorded from codex-cli 0.169.0 (tests/fixtures/codex/) -----------------------------

#: Events recorded from the real ``codex exec`` (0.169.0, offline against a scripted Responses API
#: server): a session that ran ``cat src/client.py``, then an ``apply_patch`` of it, then finished.
#: Paths replaced by ``/home/dev/project`` and ``/home/dev/.codex``.
REAL = Path(__file__).resolve().parent / "fixtures" / "codex"
REAL_ROOT = "/home/dev/project"
REAL_CLIENT_PY = ("import requests\n\n\ndef fetch(url):\n    resp = requests.get(url, timeout=10)\n"
                  "    return resp.json()\n")


def real_event(name: str, repo: Path, session: str) -> dict[str, Any]:
    event = json.loads((REAL / f"{name}.json").read_text().replace(REAL_ROOT, str(repo)))
    event["session_id"] = session
    return event


@pytest.fixture
def real_repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def test_the_recorded_events_are_all_there() -> None:
    assert sorted(p.stem for p in REAL.glob("*.json")) == sorted([
        "SessionStart", "UserPromptSubmit", "PreToolUse.Bash", "PostToolUse.Bash", "PreToolUse.apply_patch",
        "PostToolUse.apply_patch", "Stop", "SessionEnd"])


@pytest.mark.parametrize("name", sorted(p.stem for p in REAL.glob("*.json") if not p.stem.startswith("Stop")))
def test_recorded_event_gives_valid_output(real_repo: Path, run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, real_repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
             "src/client.py::fetch")
    code, out, err = hook(real_event(name, real_repo, f"rec-{name}"), real_repo)
    assert code == 0 and err == ""
    event = name.split(".")[0]
    if out:
        assert event in codex.PRINTING
        context_of(out, event)
    else:
        assert event not in ("SessionStart", "UserPromptSubmit")


def test_recorded_read_and_patch_get_the_files_memories(real_repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, real_repo, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    text = injected(real_repo, real_event("PreToolUse.Bash", real_repo, "rec-read"), "PreToolUse")
    assert mid in text and "# gitmem: memories about src/client.py" in text
    text = injected(real_repo, real_event("PreToolUse.apply_patch", real_repo, "rec-patch"), "PreToolUse")
    assert mid in text and "src/client.py (the edit is at line 5)" in text


def test_recorded_session_is_captured_and_consolidated_once(real_repo: Path) -> None:
    s = "rec-session"
    for name in ("SessionStart", "UserPromptSubmit", "PreToolUse.Bash", "PostToolUse.Bash", "PreToolUse.apply_patch"):
        assert hook(real_event(name, real_repo, s), real_repo)[0] == 0
    (real_repo / "src" / "client.py").write_text(REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
    assert hook(real_event("PostToolUse.apply_patch", real_repo, s), real_repo) == (0, "", "")
    recs = [r for r in spooled(real_repo, s) if r["event"] == "PostToolUse"]
    assert [(r["tool"], r["kind"]) for r in recs] == [("Bash", "shell"), ("apply_patch", "edit")]
    assert recs[1]["input"]["file_path"] == "src/client.py"
    assert "Success. Updated the following files" in recs[1]["response"]["output"]
    assert hook(real_event("Stop", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: bool(local_memories(real_repo)) and spool_empty(real_repo), timeout=60)
    assert hook(real_event("SessionEnd", real_repo, s), real_repo) == (0, "", "")
    assert wait_for(lambda: spool_empty(real_repo), timeout=60)
    (m,) = local_memories(real_repo)
    assert m["title"] == "Add retry with exponential backoff to fetch() in src/client.py"
    assert m["body"].startswith("Added `_get_with_retry`")
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
