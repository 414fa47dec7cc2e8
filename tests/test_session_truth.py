"""Truth within a session (issue 20): a memory given in a session is given again, with what it was given as,
at the next event touching its code once its status changed — after ``git pull``, ``git checkout``,
``git rebase`` (git hooks ran), ``git reset --hard`` (none ran) or the agent's own edit — and never again
when nothing changed. Real git repositories, real hook processes (Claude Code's entry point)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.capture import spool
from gitmem.integrations.agents import core
from testing.repos import commit, git, make_repo, write
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, context_of, fixture, hook, remember, wait_for

#: check_token as the other side of each git operation has it: its anchored body changed.
LOOSE_AUTH_PY = AUTH_PY.replace('raise ValueError("empty token")', "return False")
#: The status note of a memory given fresh at session start and stale (or in doubt) now.
AGAIN = "was given as fresh at session start; now ⚠"
OPS = ("pull", "checkout", "reset", "rebase", "edit")
EVENTS = ("read", "edit", "prompt", "shell")


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY,
                       "tests/test_client.py": "def test_x():\n    pass\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def _setup(repo: Path, run_cli) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Two committed rules (on check_token, on fetch), gitmem's git hooks installed, statuses checked."""
    on_auth = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    on_fetch = remember(run_cli, repo, "fetch must keep timeout=10", "src/client.py::fetch")
    assert run_cli(repo, "hooks", "install")[0] == 0
    commit(repo, "memories")
    assert run_cli(repo, "stale")[0] == 0  # the hook index current, every status checked
    return on_auth, on_fetch


def _start(repo: Path, session: str, *mids: str) -> None:
    """Start a session; each of ``mids`` is given fresh at its start."""
    text = context_of(hook(fixture("SessionStart", repo, session_id=session), repo)[1], "SessionStart")
    for mid in mids:
        assert mid in text
    assert "⚠" not in text
    time.sleep(0.05)  # what changes next is later than the check, at any file time granularity


def _change(repo: Path, op: str, tmp_path: Path) -> None:
    """Change check_token's body by ``op`` (the branches it needs were made before the session started)."""
    if op == "pull":
        git(repo, "pull", "-q", "--no-rebase", str(tmp_path / "other"), "main")
    elif op == "checkout":
        git(repo, "checkout", "-q", "loose")
    elif op == "reset":
        git(repo, "reset", "-q", "--hard", "loose")  # git runs no hook
    elif op == "rebase":
        git(repo, "rebase", "-q", "loose")
    else:
        write(repo, {"src/auth.py": LOOSE_AUTH_PY})  # what the agent's Edit tool does


def _prepare(repo: Path, op: str, tmp_path: Path) -> None:
    """What ``op`` needs, before the session starts: a clone with the change (pull), a branch with it
    (checkout, reset, rebase); for a rebase the session works on a branch with a commit of its own."""
    if op == "pull":
        other = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(repo), str(other))
        git(other, "config", "user.email", "o@example.com")
        git(other, "config", "user.name", "Other")
        commit(other, "loosen auth", {"src/auth.py": LOOSE_AUTH_PY}, no_verify=True)
    elif op in ("checkout", "reset", "rebase"):
        git(repo, "checkout", "-q", "-b", "loose")
        commit(repo, "loosen auth", {"src/auth.py": LOOSE_AUTH_PY})
        git(repo, "checkout", "-q", "main")
        if op == "rebase":
            git(repo, "checkout", "-q", "-b", "feature")
            commit(repo, "notes", {"NOTES.md": "notes\n"})


def _settled(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Every status checked at the working tree as it is now (no background check left to race with)."""
    assert run_cli(repo, "stale")[0] == 0


def _event(repo: Path, kind: str, session: str) -> tuple[dict[str, Any], str]:
    """The hook event of ``kind`` touching check_token, and the event name its answer carries."""
    auth = str(repo / "src" / "auth.py")
    if kind == "read":
        event = fixture("PreToolUse.Read", repo, session_id=session)
        event["tool_input"] = {"file_path": auth}
        return event, "PreToolUse"
    if kind == "edit":
        event = fixture("PreToolUse.Edit", repo, session_id=session)
        event["tool_input"] = {"file_path": auth, "old_string": "def check_token(token):\n",
                               "new_string": "def check_token(token: str):\n", "replace_all": False}
        return event, "PreToolUse"
    if kind == "prompt":
        return fixture("UserPromptSubmit", repo, session_id=session,
                       prompt="Why does `check_token` reject my token?"), "UserPromptSubmit"
    return fixture("PreToolUse.Read", repo, session_id=session, tool_name="Bash",
                   tool_input={"command": "python src/auth.py", "description": "run"}), "PreToolUse"


@pytest.mark.parametrize("kind", EVENTS)
@pytest.mark.parametrize("op", OPS)
def test_a_memory_given_fresh_is_given_again_once_its_code_changed(repo: Path, run_cli, tmp_path: Path, op: str,
                                                                   kind: str) -> None:
    on_auth, on_fetch = _setup(repo, run_cli)
    _prepare(repo, op, tmp_path)
    _settled(repo, run_cli)
    session = f"{op}-{kind}"
    _start(repo, session, on_auth)
    event, name = _event(repo, kind, session)
    assert hook(event, repo)[1] == ""  # given at session start, nothing changed: not given again
    _change(repo, op, tmp_path)
    assert (repo / "src" / "auth.py").read_text() == LOOSE_AUTH_PY
    text = context_of(hook(event, repo)[1], name)
    assert on_auth in text and f"{AGAIN} " in text, text
    assert "src/auth.py" in text.split(AGAIN, 1)[1].splitlines()[0]  # the reason names the code
    assert on_fetch not in text  # its code did not change


@pytest.mark.parametrize("op", ("pull", "checkout", "rebase"))
def test_given_again_once_per_change_after_a_git_hook_checked_it(repo: Path, run_cli, tmp_path: Path,
                                                                 op: str) -> None:
    """After an operation git's hooks re-checked, the memory is given stale once; the next read gets nothing,
    and a second read in another session sees it stale without the "was given" note."""
    on_auth, _ = _setup(repo, run_cli)
    _prepare(repo, op, tmp_path)
    _settled(repo, run_cli)
    _start(repo, "once", on_auth)
    _change(repo, op, tmp_path)
    event, name = _event(repo, "read", "once")
    text = context_of(hook(event, repo)[1], name)
    assert f"{AGAIN} stale: src/auth.py::check_token" in text
    assert hook(event, repo)[1] == ""
    assert hook(_event(repo, "prompt", "once")[0], repo)[1] == ""  # the prompt naming it: given already


def test_reset_hard_is_first_a_doubt_then_the_checked_status(repo: Path, run_cli, tmp_path: Path) -> None:
    """No git hook runs for ``reset --hard``: the first event says "may be stale" and starts a re-check; the
    first event after the re-check gives the checked status, saying what it was given as before."""
    on_auth, _ = _setup(repo, run_cli)
    _prepare(repo, "reset", tmp_path)
    _settled(repo, run_cli)
    _start(repo, "rs", on_auth)
    _change(repo, "reset", tmp_path)
    prompt = _event(repo, "prompt", "rs")[0]
    text = context_of(hook(prompt, repo)[1], "UserPromptSubmit")
    assert f"{AGAIN} may be stale: src/auth.py changed since gitmem last checked it" in text
    assert "· fresh" not in text

    def rechecked() -> bool:
        con = __import__("sqlite3").connect(layout.of(repo).catalog_file)
        try:
            row = con.execute("SELECT status FROM memories WHERE id = ?", (on_auth,)).fetchone()
        finally:
            con.close()
        return bool(row and row[0] == "stale")

    assert wait_for(rechecked, 30)
    read = _event(repo, "read", "rs")[0]
    text = context_of(hook(read, repo)[1], "PreToolUse")
    assert "was given as ⚠ may be stale at a prompt; now ⚠ stale: src/auth.py::check_token" in text
    assert hook(read, repo)[1] == ""


def test_a_change_elsewhere_gives_nothing_again(repo: Path, run_cli, tmp_path: Path) -> None:
    """A pull that changes only another file: the memory on check_token is not given again (read, prompt,
    shell); the one on the changed function is, at the read of its file."""
    on_auth, on_fetch = _setup(repo, run_cli)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    commit(other, "fetch with a longer timeout", {"src/client.py": CLIENT_PY.replace("timeout=10", "timeout=30")},
           no_verify=True)
    _start(repo, "el", on_auth, on_fetch)
    git(repo, "pull", "-q", "--no-rebase", str(other), "main")
    for kind in EVENTS:
        assert hook(_event(repo, kind, "el")[0], repo)[1] == "", kind
    event = fixture("PreToolUse.Read", repo, session_id="el")
    event["tool_input"] = {"file_path": str(repo / "src" / "client.py")}
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert on_fetch in text and AGAIN in text and on_auth not in text


def test_an_older_given_file_of_bare_ids_still_reads(repo: Path, run_cli) -> None:
    """A session file written by an older gitmem (bare ids): its memories count as given (``given_ids``, the
    ui's sessions view) and are not given again, changed or not (their status was not recorded)."""
    on_auth = remember(run_cli, repo, "check_token rejects empty tokens only", "src/auth.py::check_token")
    assert run_cli(repo, "stale")[0] == 0
    lay = layout.of(repo)
    key = spool.session_key("old-1")
    lay.sessions_dir.mkdir(parents=True, exist_ok=True)
    (lay.sessions_dir / f"{key}.given").write_text(f"{on_auth}\n")
    assert core.given_ids(lay, key) == {on_auth}
    event, _ = _event(repo, "read", "old-1")
    assert hook(event, repo)[1] == ""
    time.sleep(0.05)
    write(repo, {"src/auth.py": LOOSE_AUTH_PY})
    assert hook(event, repo)[1] == ""
    # what it records now is the new format, read by the same reader
    core.mark_given(lay, key, ["01NEW"], {"01NEW": "fresh"}, "a read of src/auth.py")
    assert core.given_statuses(lay, key) == {on_auth: ("", "", ""),
                                             "01NEW": ("fresh", "a read of src/auth.py", "fresh")}
    assert core.given_ids(lay, key) == {on_auth, "01NEW"}


@pytest.mark.parametrize(("was", "now", "again"), [
    (None, "fresh", True),
    (("fresh", "session start", "fresh"), "fresh", False),
    (("fresh", "session start", "fresh"), "stale", True),
    (("fresh", "session start", "fresh"), "moved", True),
    (("fresh", "session start", "fresh"), "may be stale", True),
    # a doubt settled as it was (the agent's own edit left the memory fresh): not again, nor the next doubt
    (("may be stale", "a read of a.py", "fresh"), "fresh", False),
    (("may be stale", "a read of a.py", "fresh"), "may be stale", False),
    (("may be stale", "a read of a.py", "fresh"), "stale", True),
    # first given as a doubt: its checked status comes once, whatever it is
    (("may be stale", "a prompt", ""), "fresh", True),
    (("may be stale", "a prompt", ""), "stale", True),
    (("stale", "a read of a.py", "stale"), "may be stale", False),
    (("stale", "a read of a.py", "stale"), "fresh", True),
    (("stale", "a read of a.py", "stale"), "deleted", True),
    (("unchecked", "session start", "unchecked"), "fresh", False),
    (("unchecked", "session start", "unchecked"), "stale", True),
    (("", "", ""), "stale", False),
])
def test_what_counts_as_news(was: tuple[str, str, str] | None, now: str, again: bool) -> None:
    assert core.is_news(was, now) is again


def test_the_last_checked_status_survives_a_doubt(repo: Path) -> None:
    """``.given`` keeps, per memory, the last status shown and the last checked one (a doubt does not erase it)."""
    lay = layout.of(repo)
    key = spool.session_key("doubt-1")
    core.mark_given(lay, key, ["01A", "01B"], {"01A": "fresh", "01B": "may be stale"}, core.SESSION_START)
    core.mark_given(lay, key, ["01A"], {"01A": "may be stale"}, "a read of src/a.py")
    assert core.given_statuses(lay, key) == {"01A": ("may be stale", "a read of src/a.py", "fresh"),
                                             "01B": ("may be stale", "session start", "")}


def test_editing_a_file_does_not_bring_its_memories_back_at_every_event(repo: Path, run_cli) -> None:
    """The agent's own edits: the memory given fresh comes once as "may be stale"; once re-checked and still
    fresh (the edit was elsewhere in the file), the next edits and reads give it no more."""
    on_auth, _ = _setup(repo, run_cli)
    _start(repo, "ed", on_auth)
    read, _ = _event(repo, "read", "ed")
    for n in range(3):
        write(repo, {"src/auth.py": AUTH_PY + f"\n\nLIMIT_{n} = {n}\n"})  # an edit outside check_token
        out = hook(read, repo)[1]
        if n == 0:
            assert f"{AGAIN} may be stale: src/auth.py" in context_of(out, "PreToolUse")
        else:
            assert out == "", out
        _settled(repo, run_cli)
        assert hook(read, repo)[1] == ""  # re-checked: still fresh, nothing to correct
        time.sleep(0.05)


def test_the_event_log_says_what_was_given_again(repo: Path, run_cli, tmp_path: Path) -> None:
    """The session's event log (read by ``gitmem ui``) lists the memory at the event that gave it again."""
    on_auth, _ = _setup(repo, run_cli)
    _prepare(repo, "checkout", tmp_path)
    _settled(repo, run_cli)
    _start(repo, "log", on_auth)
    _change(repo, "checkout", tmp_path)
    assert on_auth in context_of(hook(_event(repo, "shell", "log")[0], repo)[1], "PreToolUse")
    lines = [json.loads(ln) for ln in core.events_path(layout.of(repo), spool.session_key("log")).read_text()
             .splitlines()]
    assert [ln["event"] for ln in lines] == ["SessionStart", "BeforeShell"]
    assert lines[-1]["ids"] == [on_auth]


def test_a_command_running_changed_code_corrects_a_memory_of_any_type(repo: Path, run_cli, tmp_path: Path) -> None:
    """The shell hook gives only rules and traps; but a memory of any type the session was given fresh comes
    again before a command that runs its file once its code changed (here a ``decision``)."""
    why = remember(run_cli, repo, "check_token raises on empty tokens: the gateway sends none",
                   "src/auth.py::check_token", mtype="decision")
    assert run_cli(repo, "hooks", "install")[0] == 0
    commit(repo, "memories")
    _prepare(repo, "checkout", tmp_path)
    _settled(repo, run_cli)
    _start(repo, "dec", why)
    shell, _ = _event(repo, "shell", "dec")
    assert hook(shell, repo)[1] == ""  # a decision: not for the seconds before a command, and given already
    _change(repo, "checkout", tmp_path)
    text = context_of(hook(shell, repo)[1], "PreToolUse")
    assert why in text and f"{AGAIN} stale: src/auth.py::check_token" in text
    assert hook(shell, repo)[1] == ""


# -- broken by a demanding user (the break branch) ----------------------------------------------------------


@pytest.mark.parametrize("kind", ("read", "prompt"))
def test_a_pulled_memory_that_replaces_one_given_says_so(repo: Path, run_cli, tmp_path: Path, kind: str) -> None:
    """A teammate supersedes a rule this session was given; after the pull, the replacement comes with the id it
    replaces (before: two contradicting "must hold" rules, the first never withdrawn)."""
    on_auth, _ = _setup(repo, run_cli)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    git(other, "config", "user.email", "o@example.com")
    git(other, "config", "user.name", "Other")
    code, out, err = run_cli(other, "supersede", on_auth, "check_token also rejects whitespace-only tokens", "--json")
    assert code == 0, err
    new = json.loads(out)["id"]
    commit(other, "supersede", no_verify=True)
    _settled(repo, run_cli)
    session = f"sup-{kind}"
    _start(repo, session, on_auth)
    git(repo, "pull", "-q", "--no-rebase", str(other), "main")
    _settled(repo, run_cli)
    event, name = _event(repo, kind, session)
    text = context_of(hook(event, repo)[1], name)
    assert new in text and f"replaces {on_auth} given at session start (retired: this one holds instead)" in text, text
