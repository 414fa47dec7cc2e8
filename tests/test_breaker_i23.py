"""Issue 23, breaker: the newest features attacked (one warm process per user, the lean install, installers,
``remember -``, the catalog's in-place edits). Real git repositories, real processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem import layout
from gitmem.daemon import client
from tests.test_daemon import init_repo, log_lines, servers, start, wait_for  # noqa: F401 - the fixture

# -- the warm process ------------------------------------------------------------------------------------------


def test_a_moved_or_deleted_repository_is_not_made_again_by_the_warm_process(
        tmp_path: Path, servers: list[layout.Layout]) -> None:  # noqa: F811 - the fixture
    """Dropping a repository that is gone must not write its log where it was: that made ``<old>/.git/gitmem/logs/
    daemon.log`` again, so a deleted repository came back as a folder and moving one back put it inside it."""
    keep = init_repo(tmp_path / "keep")
    gone = init_repo(tmp_path / "gone")
    moved = init_repo(tmp_path / "moved")
    klay, glay, mlay = layout.of(keep), layout.of(gone), layout.of(moved)
    servers.extend([klay, glay, mlay])
    start(klay)
    for lay in (glay, mlay):
        assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=60) is not None
    import shutil

    shutil.rmtree(gone)
    moved.rename(tmp_path / "elsewhere")
    for path in (gone, moved):
        wait_for(lambda p=path: any(f"dropped {p}: gone" in ln for ln in log_lines(None)), 30, f"{path} dropped")
    assert client.status(klay) is not None  # the process still serves the repository that stayed
    assert not gone.exists(), sorted(os.fspath(p.relative_to(tmp_path)) for p in gone.rglob("*"))
    assert not moved.exists(), sorted(os.fspath(p.relative_to(tmp_path)) for p in moved.rglob("*"))


def test_stop_all_right_after_the_start_message_ends_the_process(
        tmp_path: Path, servers: list[layout.Layout]) -> None:  # noqa: F811 - the fixture
    """The start message says ``gitmem daemon stop --all`` stops it; run at once (the process still loading its
    libraries and model, seconds) it answered "its pid is unknown", exit 1, and the process stayed."""
    from tests.test_daemon import warm_gitmem

    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    assert client.ensure_started(lay, announce=False)
    wait_for(client.running, 30, "the server to hold its lock")
    assert client.status(lay, timeout_s=0.5) is None, "it answered already: this machine is too fast to tell"
    p = warm_gitmem(repo, "daemon", "stop", "--all")
    assert p.returncode == 0, p.stdout + p.stderr
    assert not client.running()


# -- the catalog sees in-place edits ---------------------------------------------------------------------------


def _rename_title(path: Path, old: str, new: str) -> None:
    """Edit memory file ``path`` in place (same inode, as an editor saving over it)."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    with open(path, "r+", encoding="utf-8") as f:
        f.seek(0)
        f.write(text.replace(old, new))
        f.truncate()


def test_an_in_place_edit_through_a_symlinked_memory_file_is_seen(tmp_path: Path) -> None:
    """A memory file that is a link to a file inside the repository, its target edited in place: ``show`` read
    the new text while ``recall`` and ``context`` kept the old one (links were left out of ``edited_in_place``)."""
    from tests.test_daemon import cold_gitmem, ok

    repo = init_repo(tmp_path / "repo")
    mid = ok(repo, "remember", "Walrus pipeline flushes every night", "--anchor", "app/auth.py::login").strip()
    memory = repo / ".gitmem" / "memories" / f"{mid}.md"
    target = repo / "docs" / "walrus.md"
    target.parent.mkdir()
    memory.rename(target)
    memory.symlink_to(os.path.relpath(target, memory.parent))
    assert "Walrus pipeline" in ok(repo, "recall", "pipeline")
    for old, new in (("Walrus", "Narwhal"), ("Narwhal", "Penguin")):
        _rename_title(target, f"title: {old} pipeline", f"title: {new} pipeline")
        assert f"{new} pipeline" in ok(repo, "show", mid)
        assert f"{new} pipeline" in ok(repo, "recall", "pipeline"), new
        assert f"{new} pipeline" in cold_gitmem(repo, "context", "--prompt", "pipeline flushes").stdout, new


def test_a_long_run_folder_gives_one_socket_path_whatever_xdg_runtime_dir(
        tmp_path: Path, servers: list[layout.Layout], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A run folder too long for a socket path moved the socket to ``$XDG_RUNTIME_DIR/gitmem`` when set, else
    ``/tmp/gitmem-<uid>``: a process started from a desktop session (set) was never reached from an ssh session
    or a cron job (unset), whose every command ran cold and whose ``daemon status`` said "not answering"."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="gm-long-"))
    run = base / ("x" * 90)
    monkeypatch.setenv(layout.RUN_DIR_ENV, os.fspath(run))
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    try:
        repo = init_repo(tmp_path / "repo")
        lay = layout.of(repo)
        servers.append(lay)
        monkeypatch.setenv("XDG_RUNTIME_DIR", os.fspath(runtime))
        with_runtime = layout.daemon_socket()
        start(lay)
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        assert layout.daemon_socket() == with_runtime
        assert client.status(lay) is not None
    finally:
        client.stop(None)
        wait_for(lambda: not client.running(), 30, "the server to exit")
        shutil.rmtree(base, ignore_errors=True)


def test_a_run_folder_others_may_enter_is_said_not_the_next_command_starts_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder that is not private (0755, a link) is never used: no process starts and every command runs
    cold. ``daemon status`` said "not running (the next read command starts it)" and ``doctor`` "ok"."""
    import json

    from tests.test_daemon import warm_gitmem

    repo = init_repo(tmp_path / "repo")
    run = Path(os.environ[layout.RUN_DIR_ENV])
    run.chmod(0o755)
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    assert warm_gitmem(repo, "recall", "password").returncode == 0
    assert not client.running()
    status = warm_gitmem(repo, "daemon", "status")
    assert status.returncode == 1 and "the next read command starts it" not in status.stdout, status.stdout
    assert "not a private folder" in status.stdout
    assert "not a private folder" in json.loads(warm_gitmem(repo, "daemon", "status", "--json").stdout)["problem"]
    doctor = warm_gitmem(repo, "doctor")
    assert "not a private folder" in doctor.stdout + doctor.stderr


def test_a_warm_process_of_another_install_of_the_same_version_does_not_answer(
        tmp_path: Path, servers: list[layout.Layout]) -> None:  # noqa: F811 - the fixture
    """One process per user, and two installs of one version (a lean venv and the full tool install, an editable
    checkout and a wheel): the full install's ``recall`` was answered by the lean install's process (BM25 only,
    with its "needs the all extra" note), an edited checkout's commands by the other install's code."""
    import shutil
    import subprocess
    import sys

    from tests.test_daemon import cold_gitmem, log_lines, warm_gitmem

    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    other = tmp_path / "other-install"
    shutil.copytree(Path(client.__file__).parents[1], other / "gitmem",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cli_init = other / "gitmem" / "cli" / "__init__.py"
    cli_init.write_text(cli_init.read_text().replace(
        '    State.json = False\n', '    State.json = False\n    print("OTHER INSTALL")\n', 1))
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    env["PYTHONPATH"] = os.fspath(other)

    def other_gitmem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, capture_output=True, text=True,
                              timeout=120, env=env)

    assert "OTHER INSTALL" in other_gitmem("list").stdout  # in-process, and it starts the warm process
    wait_for(lambda: '"state": "running"' in other_gitmem("daemon", "status", "--json").stdout, 120,
             "the other install's process to answer")  # asked by that install: this one's question restarts it
    mine = warm_gitmem(repo, "list")
    assert "OTHER INSTALL" not in mine.stdout
    assert mine.stdout == cold_gitmem(repo, "list").stdout
    assert any("restarting it" in ln for ln in log_lines(lay))
    wait_for(lambda: client.status(lay) is not None, 120, "this install's process (started by that command)")


# -- remember - -----------------------------------------------------------------------------------------------


def test_remember_dash_refuses_an_endless_stdin_instead_of_reading_it_all(tmp_path: Path) -> None:
    """``yes | gitmem remember -`` read standard input to its end: memory grew until the process was killed."""
    import subprocess
    import sys
    import threading

    repo = init_repo(tmp_path / "repo")
    env = {**os.environ, client.NO_DAEMON_ENV: "1"}
    p = subprocess.Popen([sys.executable, "-m", "gitmem", "remember", "-"], cwd=repo, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdin is not None

    def feed() -> None:
        line = b"an endless stream of the same line\n" * 1024
        try:
            for _ in range(3_000):  # ~110 MB: far past the cap (16 MiB), short of filling a machine
                p.stdin.write(line)  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        assert p.stderr is not None
        err = p.stderr.read()  # its few lines; it exits once it refused
        code = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert code == 1, err
    assert b"standard input holds more than" in err
    assert b"Traceback" not in err


# -- installers -----------------------------------------------------------------------------------------------


def test_install_never_writes_outside_the_repository_through_a_committed_link(tmp_path: Path) -> None:
    """A repository that commits ``.vscode/mcp.json`` (or ``.claude/settings.json``) as a link leading out of it
    makes ``gitmem install`` create or rewrite that file outside the repository: a dangling link's target is
    created wherever it points (as root: anywhere), an existing JSON file there is rewritten."""
    from tests.test_daemon import cold_gitmem

    repo = init_repo(tmp_path / "repo")
    outside = tmp_path / "elsewhere" / "victim.json"
    outside.parent.mkdir()
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "mcp.json").symlink_to(os.path.relpath(outside, repo / ".vscode"))
    for args in (("install", "vscode", "--dry-run"), ("install", "vscode"), ("install", "claude")):
        p = cold_gitmem(repo, *args)
        assert not outside.exists(), outside.read_text()
        assert "Traceback" not in p.stderr
        if args[1] == "vscode":
            assert p.returncode == 1 and "leads outside the repository" in p.stdout + p.stderr, p.stdout + p.stderr
    outside.write_text("{}\n")
    assert cold_gitmem(repo, "install", "vscode").returncode == 1
    assert outside.read_text() == "{}\n"
    (repo / ".claude").mkdir(exist_ok=True)
    inside = repo / "shared-settings.json"  # a link within the repository is written through, as before
    inside.write_text("{}\n")
    (repo / ".claude" / "settings.json").unlink(missing_ok=True)
    (repo / ".claude" / "settings.json").symlink_to("../shared-settings.json")
    assert cold_gitmem(repo, "install", "claude").returncode == 0
    assert "hooks" in inside.read_text()
