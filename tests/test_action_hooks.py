"""At the moment of action: before a shell command, after a failed tool call, before an edit, after a compaction.

The parsers (``shellwords``, ``failures``) on command lines and failure texts; then real hook
processes (Claude Code's entry point, and Codex's, Gemini CLI's and Cursor's) fed real event JSON
in a real git repository with gitmem initialised and memories written through the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import shellwords
from gitmem.integrations.agents.failures import failure_terms
from testing.repos import commit, make_repo, write
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, context_of, fixture, hook, remember

DATES_PY = """def parse_dates(rows):
    return [r["when"] + r.get("tz_offset", 0) for r in rows]


def format_date(d):
    return str(d)
"""
TEST_DATES_PY = """from src.dates import parse_dates


def test_parse_dates():
    assert parse_dates([{"when": 1}]) == [1]


class TestFormat:
    def test_iso(self):
        pass
"""
DEPLOY_SH = "#!/bin/sh\nrsync -a build/ prod:/srv/app\n"
MAKEFILE = "migrate:\n\tuv run alembic upgrade head\n"
PYTEST_FAILURE = """Exit code 1
============================= test session starts ==============================
collected 1 item

tests/test_dates.py F                                                    [100%]

=================================== FAILURES ===================================
_______________________________ test_parse_dates _______________________________

    def test_parse_dates():
>       assert parse_dates([{"when": 1}]) == [1]

src/dates.py:2: in parse_dates
    return [r["when"] + r["tz_offset"] for r in rows]
E   KeyError: 'tz_offset'
=========================== short test summary info ============================
FAILED tests/test_dates.py::test_parse_dates - KeyError: 'tz_offset'
============================== 1 failed in 0.03s ===============================
"""


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY, "src/dates.py": DATES_PY,
                       "tests/test_dates.py": TEST_DATES_PY, "scripts/deploy.sh": DEPLOY_SH, "Makefile": MAKEFILE,
                       "lib/other.py": "def helper():\n    return 1\n",
                       "package.json": '{"scripts": {"build": "x"}}\n'})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def bash(repo: Path, command: str, session: str) -> dict[str, Any]:
    """Claude Code's PreToolUse of a Bash call."""
    return fixture("PreToolUse.Read", repo, session_id=session, tool_name="Bash",
                   tool_input={"command": command, "description": "run"})


def failure(repo: Path, command: str, error: str, session: str) -> dict[str, Any]:
    """Claude Code's PostToolUseFailure of a Bash call (its ``error``: ``Exit code N`` and the output)."""
    return {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": f"toolu_{session}",
            "error": error}


# -- the parsers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "expected"), [
    ("python scripts/migrate.py --dry-run", [("scripts/migrate.py", None)]),
    ("bash scripts/deploy.sh prod", [("scripts/deploy.sh", None)]),
    ("./scripts/deploy.sh", [("./scripts/deploy.sh", None)]),
    ("cd scripts && sh deploy.sh", [("scripts/deploy.sh", None)]),
    ("make migrate", [("Makefile", "migrate")]),
    ("make -C sub build", [("sub/Makefile", None)]),  # no rule `build` in sub/Makefile: the file as a whole
    ("npm run build", [("package.json", None)]),  # no script `build` in package.json: the file as a whole
    ("uv run pytest tests/test_dates.py::TestFormat::test_iso -q",
     [("tests/test_dates.py", "TestFormat.test_iso")]),
    ("python -m pytest tests/test_dates.py -k test_parse_dates",
     [("tests/test_dates.py", None), ("tests/test_dates.py", "test_parse_dates")]),
    ("sudo -u app env X=1 python3 scripts/migrate.py", [("scripts/migrate.py", None)]),
    ("mypy src/dates.py missing.py", [("src/dates.py", None)]),
    ("git status", []),
    ("echo 'unterminated", []),
])
def test_targets_of_a_command_line(tmp_path: Path, line: str, expected: list[tuple[str, str | None]]) -> None:
    write(tmp_path, {"scripts/migrate.py": "", "scripts/deploy.sh": "", "Makefile": MAKEFILE, "sub/Makefile": "",
                     "package.json": "{}", "tests/test_dates.py": "", "src/dates.py": ""})
    assert shellwords.targets(line, str(tmp_path)) == expected


def test_quoted_commands_and_the_rule_of_concern() -> None:
    text = ("Run migrations with `make migrate`, never `alembic upgrade` by hand. `Cache.get` is code, "
            "`x = f(1)` too, and `pytest` alone names no command.\n```\n$ git push --force-with-lease\n```")
    quoted = shellwords.quoted_commands(text)
    assert quoted == [["make", "migrate"], ["alembic", "upgrade"], ["git", "push", "--force-with-lease"]]
    alembic = ["alembic", "upgrade"]
    for line, concerned in (("alembic upgrade head", True), ("uv run alembic upgrade head", True),
                            ("cd db && python -m alembic upgrade +1", True), ("alembic downgrade -1", False),
                            ("alembic -c x.ini upgrade head", False), ("echo alembic upgrade", False)):
        assert any(shellwords.concerns(alembic, c) for c in shellwords.line_commands(line)) is concerned, line
    force = ["git", "push", "--force-with-lease"]
    assert shellwords.concerns(force, ["git", "push", "--force-with-lease", "origin", "main"])
    assert not shellwords.concerns(force, ["git", "push", "origin", "main"])
    assert not shellwords.concerns(["pytest"], ["pytest", "-q"])  # one word concerns nothing


def test_a_heredoc_body_does_not_hide_the_commands_before_it() -> None:
    line = "alembic upgrade head && cat <<EOF\nit's done\nEOF"
    assert shellwords.line_commands(line)[0] == ["alembic", "upgrade", "head"]
    assert shellwords.line_commands("ls 'unclosed") == []


def test_huge_commands_and_outputs_are_read_in_linear_time() -> None:
    """A megabyte of one word (as a command or an error) is cut and scanned once: the hook would otherwise overrun
    its time limit (a quadratic scan took 70 s at 200k characters). Bounded by the process's own timeout."""
    code = ("from gitmem.integrations.agents.failures import failure_terms\n"
            "from gitmem import shellwords\n"
            "big = 'python src/config.py ' + 'b' * 1_000_000\n"
            "assert failure_terms('KeyError: x', big)[0] == ['KeyError']\n"
            "failure_terms('b' * 1_000_000, '')\n"
            "shellwords.line_commands(big)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_failure_terms_are_the_names_not_the_output() -> None:
    terms, frames = failure_terms(PYTEST_FAILURE, "uv run pytest tests/test_dates.py")
    assert terms[:3] == ["test_parse_dates", "KeyError", "tz_offset"]
    assert ("tests/test_dates.py", "test_parse_dates") in frames
    assert failure_terms("Exit code 1\nCommand failed", "make") == ([], [])
    assert failure_terms("Exit code 1\nAssertionError\nassert 1 == 2", "pytest") == ([], [])
    traceback = ('Traceback (most recent call last):\n  File "/srv/app/src/dates.py", line 2, in parse_dates\n'
                 "ModuleNotFoundError: No module named 'yaml'\nsrc/x.ts(3,1): error TS2345: bad\n")
    terms, frames = failure_terms(traceback)
    assert terms == ["ModuleNotFoundError", "yaml", "TS2345"] and frames == [("/srv/app/src/dates.py", "parse_dates")]


# -- before a shell command (Claude Code) ----------------------------------------------------------------


def test_a_command_running_a_script_gets_its_constraint_first(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    rule = remember(run_cli, repo, "deploy.sh must run from a clean build: it rsyncs build/ as is",
                    "scripts/deploy.sh")
    note = remember(run_cli, repo, "deploy.sh was added to replace the Fabric task", "scripts/deploy.sh",
                    mtype="decision")
    code, out, err = hook(bash(repo, "bash scripts/deploy.sh", "sh-1"), repo)
    assert code == 0 and err == ""
    text = context_of(out, "PreToolUse")
    assert text.startswith("# gitmem: before you run `bash scripts/deploy.sh`")
    assert rule in text and "constraint (must hold)" in text and note not in text  # rules and traps only
    assert hook(bash(repo, "bash scripts/deploy.sh", "sh-1"), repo)[1] == ""  # given once per session


def test_a_stale_rule_before_a_command_comes_first_with_its_warning(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    from tests.test_claude_hooks import _status_known, wait_for

    fresh = remember(run_cli, repo, "dates.py is run by cron at 02:00 UTC", "src/dates.py", mtype="gotcha")
    stale = remember(run_cli, repo, "parse_dates must default a missing tz_offset to 0", "src/dates.py::parse_dates")
    commit(repo, "parse_dates: no default",
           {"src/dates.py": DATES_PY.replace('r.get("tz_offset", 0)', 'r["tz_offset"]')})
    hook(fixture("SessionStart", repo, session_id="st-0"), repo)  # refreshes the hook index
    assert wait_for(lambda: _status_known(repo, stale))
    text = context_of(hook(bash(repo, "python src/dates.py", "st-1"), repo)[1], "PreToolUse")
    assert text.index(stale) < text.index(fresh)  # the rule first, with its warning
    assert "⚠ stale: src/dates.py::parse_dates" in text


def test_a_command_quoting_a_memorys_forbidden_command_gets_it(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    trap = remember(run_cli, repo, "Run migrations with `make migrate`, never `alembic upgrade` by hand: it skips "
                    "the seed step", "Makefile", mtype="gotcha")
    text = context_of(hook(bash(repo, "cd /tmp && uv run alembic upgrade head", "sh-2"), repo)[1], "PreToolUse")
    assert trap in text and "never `alembic upgrade`" in text
    assert hook(bash(repo, "alembic downgrade -1", "sh-3"), repo)[1] == ""


def test_an_unrelated_command_gets_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, "deploy.sh must run from a clean build", "scripts/deploy.sh")
    remember(run_cli, repo, "never `alembic upgrade` by hand", "Makefile", mtype="gotcha")
    for i, line in enumerate(("git status", "ls -la src", "python -c 'print(1)'", "cat scripts/deploy.sh | wc -l")):
        code, out, err = hook(bash(repo, line, f"sh-none-{i}"), repo)
        assert (code, out, err) == (0, "", ""), line


def test_a_test_id_targets_the_memory_on_that_test_first(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    on_file = remember(run_cli, repo, "tests in test_dates need TZ=UTC", "tests/test_dates.py", mtype="gotcha")
    on_test = remember(run_cli, repo, "test_iso is flaky under xdist: run it alone",
                       "tests/test_dates.py::TestFormat.test_iso", mtype="gotcha")
    text = context_of(hook(bash(repo, "pytest tests/test_dates.py::TestFormat::test_iso", "sh-4"), repo)[1],
                      "PreToolUse")
    assert text.index(on_test) < text.index(on_file)


# -- after a failure ------------------------------------------------------------------------------


def test_a_failing_test_gets_the_bugfix_its_error_matches(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    fix = remember(run_cli, repo, "parse_dates: rows from the v1 API have no tz_offset (KeyError: 'tz_offset'); "
                   "use r.get('tz_offset', 0)", "src/dates.py::parse_dates", mtype="bugfix")
    other = remember(run_cli, repo, "format_date must stay ISO 8601", "src/dates.py::format_date")
    code, out, err = hook(failure(repo, "uv run pytest tests/test_dates.py", PYTEST_FAILURE, "f-1"), repo)
    assert code == 0 and err == ""
    text = context_of(out, "PostToolUseFailure")
    assert text.startswith("# gitmem: seen before") and fix in text and other not in text


def test_a_generic_failure_gets_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, "parse_dates: KeyError when a row has no tz_offset", "src/dates.py::parse_dates",
             mtype="bugfix")
    remember(run_cli, repo, "a failed command exits with code 1", "src/auth.py", mtype="gotcha")
    for i, error in enumerate(("Exit code 1\n", "Exit code 2\nmake: *** [Makefile:2: migrate] Error 1\n",
                               "Exit code 1\nAssertionError: assert 1 == 2\n")):
        code, out, err = hook(failure(repo, "make migrate", error, f"f-none-{i}"), repo)
        assert (code, out, err) == (0, "", ""), error


def test_a_failure_quoting_a_stop_word_gets_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    remember(run_cli, repo, "the parser of the dates: the offset is in the row", "src/dates.py", mtype="bugfix")
    error = "Exit code 1\nKeyError: 'the'\nValueError: 'which' is not a valid choice\n"
    assert hook(failure(repo, "python run.py", error, "f-stop"), repo) == (0, "", "")


# -- before an edit: the edited symbol's constraint, marked -----------------------------------------------


def test_an_edits_symbol_constraint_comes_first_and_is_marked(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    on_file = remember(run_cli, repo, "client.py talks to the gateway only", "src/client.py", mtype="decision")
    on_get = remember(run_cli, repo, "Client.get must never retry: the gateway is not idempotent",
                      "src/client.py::Client.get")
    event = fixture("PreToolUse.Edit", repo, session_id="e-1")
    event["tool_input"]["old_string"] = "        return fetch(self.base + path)\n"
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert text.index(on_get) < text.index(on_file)
    assert f"### {on_get} · constraint (must hold) · person-written\n" in text
    assert "> Client.get must never retry" in text


# -- compaction ------------------------------------------------------------------------------------


def test_a_compacted_session_gets_its_files_memories_again(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    worked = remember(run_cli, repo, "helper must stay pure: callers cache it", "lib/other.py::helper")
    focus = remember(run_cli, repo, "check_token rejects empty tokens", "src/auth.py::check_token")
    write(repo, {"src/auth.py": AUTH_PY + "\n"})  # the focus: a dirty file
    read = fixture("PreToolUse.Read", repo, session_id="c-1", tool_input={"file_path": str(repo / "lib/other.py")})
    start = context_of(hook(fixture("SessionStart", repo, session_id="c-1"), repo)[1], "SessionStart")
    assert focus in start and worked not in start  # lib/other.py is not in focus at the start
    assert worked in context_of(hook(read, repo)[1], "PreToolUse")
    assert hook(read, repo)[1] == ""  # given once
    again = context_of(hook(fixture("SessionStart", repo, session_id="c-1", source="compact"), repo)[1],
                       "SessionStart")
    assert worked in again and focus in again  # the file the session worked on is in focus again


def gemini_hook(payload: dict[str, Any], repo: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.gemini"],
                          input=json.dumps(payload).encode(), cwd=repo, capture_output=True, env=dict(os.environ),
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    out = proc.stdout.decode()
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def test_gemini_after_a_manual_compression_the_next_read_gets_the_files_memories(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "helper must stay pure", "lib/other.py::helper")
    common = {"session_id": "g-1", "transcript_path": "", "cwd": str(repo), "timestamp": "2026-12-01T22:40:03.965Z"}
    read = {**common, "hook_event_name": "AfterTool", "tool_name": "read_file",
            "tool_input": {"file_path": "lib/other.py"}, "tool_response": {"llmContent": "def helper(): …"}}
    assert mid in gemini_hook(read, repo)
    assert mid not in gemini_hook(read, repo)
    # Gemini CLI 0.61.0 fires an "auto" PreCompress on every turn, compressing or not: nothing is forgotten
    gemini_hook({**common, "hook_event_name": "PreCompress", "trigger": "auto"}, repo)
    assert mid not in gemini_hook(read, repo)
    gemini_hook({**common, "hook_event_name": "PreCompress", "trigger": "manual"}, repo)  # /compress
    assert mid in gemini_hook(read, repo)


# -- the other agents ----------------------------------------------------------------------------


def test_codex_bash_running_a_script_gets_its_constraint(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    from tests.test_codex_hooks import codex_event
    from tests.test_codex_hooks import hook as codex_hook

    rule = remember(run_cli, repo, "deploy.sh must run from a clean build", "scripts/deploy.sh")
    on_client = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    event = codex_event("PreToolUse", repo, "cx-1", tool_name="Bash", tool_use_id="call_1",
                        tool_input={"command": "sh scripts/deploy.sh && cat src/client.py"})
    code, out, err = codex_hook(event, repo)
    text = context_of(out, "PreToolUse")
    assert code == 0 and err == ""
    assert text.index(rule) < text.index(on_client)  # the command's rule first, then the file it reads
    assert codex_hook(codex_event("PreToolUse", repo, "cx-2", tool_name="Bash", tool_use_id="call_2",
                                  tool_input={"command": "git log -3"}), repo)[1] == ""


def test_gemini_failed_shell_gets_the_bugfix_with_its_output(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    fix = remember(run_cli, repo, "parse_dates: KeyError: 'tz_offset' on v1 rows; default it to 0",
                   "src/dates.py::parse_dates", mtype="bugfix")
    event = {"session_id": "g-2", "transcript_path": "", "cwd": str(repo), "timestamp": "2026-12-01T22:40:03.965Z",
             "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
             "tool_input": {"command": "pytest tests/test_dates.py"},
             "tool_response": {"llmContent": PYTEST_FAILURE, "returnDisplay": PYTEST_FAILURE,
                               "error": {"message": PYTEST_FAILURE, "type": "shell_error"}}}
    text = gemini_hook(event, repo)
    assert "seen before" in text and fix in text


def test_cursor_holds_a_failures_memories_for_the_next_tool_result(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Cursor's failure hook takes no context: what matches the failure comes with the next postToolUse."""
    from tests.test_cursor_hooks import doc_event
    from tests.test_cursor_hooks import hook as cursor_hook

    fix = remember(run_cli, repo, "parse_dates: KeyError: 'tz_offset' on v1 rows; default it to 0",
                   "src/dates.py::parse_dates", mtype="bugfix")
    failed = doc_event("postToolUseFailure.Shell", repo, "cu-1", error_message="E   KeyError: 'tz_offset'",
                       tool_input={"command": "pytest tests/test_dates.py", "working_directory": str(repo)})
    assert cursor_hook(failed, repo)[1] == ""  # held
    code, out, err = cursor_hook(doc_event("postToolUse.Shell", repo, "cu-1",
                                           tool_input={"command": "git status", "working_directory": str(repo)}),
                                 repo)
    assert code == 0 and err == ""
    text = json.loads(out)["additional_context"]
    assert "seen before" in text and fix in text
