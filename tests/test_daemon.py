"""The user's warm process (``gitmem.daemon``), with real processes, sockets, repositories and indexes.

Every test starts its server itself in a run folder of its own (``GITMEM_RUN_DIR``) and stops it at the end
(``servers`` fixture); the rest of the suite runs with ``GITMEM_NO_DAEMON=1`` (``tests/conftest.py``), so no
other test leaves one behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.daemon import client
from testing.gitmem_cli import gitmem
from testing.repos import commit, git, make_repo

AUTH_PY = ('def login(user, password):\n    """Check the password."""\n    return user == "admin"\n\n\n'
           'def logout(user):\n    return None\n')


def wait_for(cond: Callable[[], Any], timeout_s: float = 60.0, what: str = "condition") -> Any:
    """Poll ``cond`` every 50 ms until it returns something truthy; fails the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def ok(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    p = gitmem(cwd, *args, env={client.NO_DAEMON_ENV: "1", **(env or {})})
    assert p.returncode == 0, f"gitmem {' '.join(args)} exited {p.returncode}: {p.stderr}"
    return p.stdout


def init_repo(path: Path, config_extra: str = "") -> Path:
    """A repository with gitmem initialised (no hooks) and two anchored memories."""
    repo = make_repo(path, {"app/auth.py": AUTH_PY, "README.md": "demo\n"})
    ok(repo, "init", "--no-hooks")
    if config_extra:
        cfg = repo / ".gitmem" / "config.toml"
        cfg.write_text(cfg.read_text() + config_extra)
    git(repo, "add", ".gitmem")
    commit(repo, "gitmem init")
    ok(repo, "remember", "Passwords are compared in constant time to avoid timing attacks",
       "--anchor", "app/auth.py::login", "--type", "gotcha")
    ok(repo, "remember", "Logout keeps the session row for the audit log", "--anchor", "app/auth.py::logout")
    return repo


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[layout.Layout]]:
    """The daemon allowed in this test (its run folder is its own: ``tests/conftest.py``); its process is stopped
    (and reaped) at the end. Layouts appended are the roots the test used."""
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    started: list[layout.Layout] = []
    try:
        yield started
    finally:
        client.stop(None)
        wait_for(lambda: not client.running(), 30, "the server to exit")
        for pid in server_pids():
            os.kill(pid, signal.SIGKILL)  # only this test's (same run folder): one a test left stopped


def start(lay: layout.Layout) -> dict[str, Any]:
    """Start ``lay``'s server through a first request (which answers None) and wait until it answers."""
    assert client.request(lay, "ping", {}, timeout_s=2.0) is None or client.running(lay)
    return wait_for(lambda: client.status(lay), 120, "the server to answer")  # type: ignore[no-any-return]


def in_process_hits(repo: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """What the ``search`` op must answer, computed in this process (``search.lexical.hybrid_hits``)."""
    from gitmem.git import Repo
    from gitmem.search.lexical import hybrid_hits
    from gitmem.store import Store

    hits = hybrid_hits(Store(Repo(os.fspath(repo))), query, limit)
    return [{"id": h.id, "score": h.score, "fts_rank": h.fts_rank, "vector_rank": h.vector_rank,
             "similarity": h.similarity} for h in hits]


def same_hits(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """The same ids and ranks in the same order, and the same scores and similarities (float noise aside)."""
    def key(h: dict[str, Any]) -> tuple[Any, ...]:
        return h["id"], h["fts_rank"], h["vector_rank"]

    return [key(h) for h in a] == [key(h) for h in b] and all(
        h["score"] == pytest.approx(g["score"]) and (h["similarity"] is None) == (g["similarity"] is None)
        and (h["similarity"] is None or h["similarity"] == pytest.approx(g["similarity"], abs=1e-5))
        for h, g in zip(a, b, strict=True))


def test_search_round_trips_and_follows_new_memories(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    st = start(lay)
    assert st["pid"] != os.getpid() and st["root"]["root"] == os.fspath(lay.root) and st["version"]
    assert os.stat(lay.daemon_socket).st_mode & 0o777 == 0o600

    got = client.request(lay, "search", {"query": "password timing", "limit": 5}, timeout_s=30)
    assert got is not None and got["hits"], got
    assert same_hits(got["hits"], in_process_hits(repo, "password timing", 5))

    # a memory written by another process is found by the next request
    ok(repo, "remember", "Rate limiting of login attempts lives in the gateway, not here",
       "--anchor", "app/auth.py::login")
    again = client.request(lay, "search", {"query": "rate limiting gateway", "limit": 5}, timeout_s=30)
    assert again is not None
    titles = json.loads(ok(repo, "list", "--json"))
    new_id = next(m["id"] for m in titles if "gateway" in m["title"].lower() or "gateway" in m.get("body", ""))
    assert again["hits"][0]["id"] == new_id
    assert client.status(lay)["requests"] >= 3  # type: ignore[index]

    # a bad request is an error reply (None), not a dead server
    assert client.request(lay, "search", {"query": 3}, timeout_s=10) is None
    assert client.request(lay, "no-such-op", {}, timeout_s=10) is None
    assert client.status(lay) is not None

    assert client.stop(lay)
    wait_for(lambda: not client.running(lay), 30, "the server to exit")
    assert not lay.daemon_socket.exists() and not lay.daemon_pid_file.exists()


def test_no_daemon_env_never_starts_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    monkeypatch.setenv(client.NO_DAEMON_ENV, "1")
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=1) is None
    assert not client.ensure_started(lay)
    time.sleep(0.3)
    assert not client.running(lay) and not lay.daemon_socket.exists()


def test_sigkill_then_stale_socket_recovered(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    pid = start(lay)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not client.running(lay), 30, "the killed server's lock to go")
    assert lay.daemon_socket.exists()  # left behind: nothing answers on it
    # the next client falls back (None) and starts a new server, which replaces the stale socket
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=2) is None
    st = wait_for(lambda: client.status(lay), 120, "a new server")
    assert st["pid"] != pid
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30) is not None


# -- helpers for the process-level tests ---------------------------------------------------------------------


def server_pids() -> list[int]:
    """Pids of the ``python -m gitmem.daemon`` processes of this test's run folder (``GITMEM_RUN_DIR`` in their
    environment: ``/proc``)."""
    from gitmem.ops.daemon import _run_dir_env

    pids = []
    here = os.environ.get(layout.RUN_DIR_ENV, "")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if client.SERVER_MODULE.encode() in argv and _run_dir_env(int(entry)) == here:
            pids.append(int(entry))
    return pids


def servers_of(root: Path) -> list[int]:
    """Pids of the warm processes this test may have started (one per user: whatever the root)."""
    return server_pids()


def warm_gitmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m gitmem ARGS`` with the warm process allowed."""
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def cold_gitmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return gitmem(cwd, *args, env={client.NO_DAEMON_ENV: "1"})


def log_lines(lay: layout.Layout | None) -> list[str]:
    """The lines of ``lay``'s ``daemon.log`` (None: the server's own, in the run folder)."""
    try:
        return (lay.log_file(client.LOG_NAME) if lay else client.server_log()).read_text().splitlines()
    except OSError:
        return []


def test_two_clients_at_once_one_server(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    expected = cold_gitmem(repo, "recall", "password")
    assert expected.returncode == 0 and "constant time" in expected.stdout
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    procs = [subprocess.Popen([sys.executable, "-m", "gitmem", "recall", "password"], cwd=repo, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out == expected.stdout
    wait_for(lambda: client.status(lay), 120, "the server")
    # every starter but one found the lock taken and exited
    wait_for(lambda: len(servers_of(repo)) == 1, 30, "one server")
    # and two requests at once are both answered by it
    results: list[Any] = [None, None]

    def ask(i: int) -> None:
        results[i] = client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] is not None and results[0] == results[1]
    assert len(servers_of(repo)) == 1


def test_client_while_the_server_is_killed(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    expected = cold_gitmem(repo, "list")
    pid = start(lay)["pid"]
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "list"], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == expected.stdout  # answered by the server before it died, or in-process after
    wait_for(lambda: (st := client.status(lay)) and st["pid"] != pid, 120, "a new server")
    again = warm_gitmem(repo, "list")
    assert again.returncode == 0 and again.stdout == expected.stdout


def test_a_stale_socket_file_is_replaced(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    lay.daemon_socket.parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(os.fspath(lay.daemon_socket))  # a socket file no process listens on (a crash leaves this)
    dead.close()
    assert lay.daemon_socket.exists()
    lay.daemon_pid_file.write_text(json.dumps({"pid": 999_999_999, "version": "0.0.0"}))
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=2) is None
    wait_for(lambda: client.status(lay), 120, "a server on the stale socket's path")
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30) is not None
    assert json.loads(lay.daemon_pid_file.read_text())["pid"] == client.status(lay)["pid"]  # type: ignore[index]


def test_a_version_change_restarts_it_a_config_change_reloads_the_root(
        tmp_path: Path, servers: list[layout.Layout], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    first = start(lay)["pid"]
    with monkeypatch.context() as m:
        m.setattr(client, "__version__", "999.0")  # a client of another gitmem version
        assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=10) is None
    wait_for(lambda: first not in servers_of(repo), 30, "the outdated server to exit")
    second = wait_for(lambda: (st := client.status(lay)) and st["pid"] != first and st["pid"], 120, "a new server")
    assert any("restarting it" in ln for ln in log_lines(lay))
    loaded = client.status(lay)["root"]["loaded"]  # type: ignore[index]
    # config.toml changed: the same process reloads this root's state and answers at once
    cfg = repo / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text().replace("budget = 1500", "budget = 1400"))
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30) is not None
    st = client.status(lay)
    assert st is not None and st["pid"] == second and servers_of(repo) == [second]
    assert any("config.toml changed: reloading it" in ln for ln in log_lines(None))
    assert st["root"]["requests"] == 1 and st["root"]["loaded"] >= loaded


def test_a_client_of_another_install_restarts_it(tmp_path: Path, servers: list[layout.Layout],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two installs of one version (a lean CI venv beside the full `uv tool` one): the warm process one of them
    started never answers the other (it would give a full install BM25-only results); it is told to restart."""
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    first = start(lay)["pid"]
    with monkeypatch.context() as m:
        m.setattr(client, "INSTALL", "/elsewhere/venv:/elsewhere/venv/lib/site-packages/gitmem")
        assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=10) is None
    wait_for(lambda: first not in servers_of(repo), 30, "the other install's server to exit")
    assert any("restarting it: the warm process runs another install" in ln for ln in log_lines(lay))
    wait_for(lambda: (st := client.status(lay)) and st["pid"] != first and st["pid"], 120, "a new server")


def test_two_worktrees_one_server(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", os.fspath(other))
    # a team memory only in the second worktree's files (not committed)
    ok(other, "remember", "Sessions expire after 15 minutes of inactivity", "--anchor", "app/auth.py::logout")
    a, b = layout.of(repo), layout.of(other)
    servers.extend([a, b])
    assert a.daemon_socket == b.daemon_socket
    sa = start(a)
    ha = client.request(a, "search", {"query": "sessions expire inactivity", "limit": 5}, timeout_s=30)
    hb = client.request(b, "search", {"query": "sessions expire inactivity", "limit": 5}, timeout_s=30)
    assert ha is not None and hb is not None
    sb = client.status(b)
    assert sb is not None and sa["pid"] == sb["pid"] and sb["root"]["root"] == os.fspath(b.root)
    assert same_hits(ha["hits"], in_process_hits(repo, "sessions expire inactivity", 5))
    assert same_hits(hb["hits"], in_process_hits(other, "sessions expire inactivity", 5))
    assert {h["id"] for h in hb["hits"]} - {h["id"] for h in ha["hits"]}  # the new memory: only in b's
    assert warm_gitmem(other, "list").stdout == cold_gitmem(other, "list").stdout
    assert warm_gitmem(repo, "list").stdout == cold_gitmem(repo, "list").stdout
    assert servers_of(repo) == [sa["pid"]]


def test_a_removed_worktree_or_a_moved_repo_is_dropped(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", os.fspath(other))
    lay = layout.of(repo)
    servers.append(lay)
    pid = start(layout.of(other))["pid"]
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30) is not None
    git(repo, "worktree", "remove", "--force", os.fspath(other))
    wait_for(lambda: any(f"dropped {other}: gone" in ln for ln in log_lines(None)), 30, "the worktree dropped")
    st = client.status(lay, all_roots=True)
    assert st is not None and st["pid"] == pid and [r["root"] for r in st["roots"]] == [os.fspath(lay.root)]
    moved = tmp_path / "moved"
    repo.rename(moved)
    wait_for(lambda: any(f"dropped {repo}: gone" in ln for ln in log_lines(None)), 30, "the moved repo dropped")
    mlay = layout.of(moved)
    servers.append(mlay)
    assert client.request(mlay, "search", {"query": "password", "limit": 3}, timeout_s=30) is not None \
        or start(mlay)  # served again where it is now (by this process, or a new one if it had exited: empty)
    assert warm_gitmem(moved, "list").stdout == cold_gitmem(moved, "list").stdout


def test_idle_exit(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo", config_extra="\n[daemon]\nidle_minutes = 0.02\n")  # 1.2 s
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    assert any(f"serving {lay.root} (idle drop after 1.2 s)" in ln for ln in log_lines(lay))
    wait_for(lambda: not client.running(lay), 60, "the idle server to exit")  # its last root dropped: it exits
    assert not lay.daemon_socket.exists()
    assert any("idle for 1.2 s" in ln for ln in log_lines(lay))
    assert any("no repository left to serve" in ln for ln in log_lines(None))


def test_socket_is_private(tmp_path: Path, servers: list[layout.Layout], request: pytest.FixtureRequest) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    mode = os.stat(lay.daemon_socket).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    if os.getuid() != 0:
        pytest.skip("another user's connection needs root to set up (the mode is checked above)")
    # the socket's inode, reachable by another user through a link in a folder anyone may enter (same file
    # system: pytest's folders are under the temp dir too)
    shared = Path(tempfile.mkdtemp(prefix="gitmem-test-"))
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    shared.chmod(0o755)
    if any(os.stat(p).st_mode & 0o001 == 0 for p in shared.parents):
        pytest.skip(f"{shared.parent} is not searchable by other users")
    link = shared / "s"
    try:
        os.link(lay.daemon_socket, link)
    except OSError as e:
        pytest.skip(f"cannot link the socket into {shared}: {e}")
    nobody = 65534

    def as_nobody() -> str:
        """Connect to ``link`` from a forked child running as nobody; what it saw."""
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.close(read)
                os.setgid(nobody)
                os.setuid(nobody)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(30)
                try:
                    s.connect(os.fspath(link))
                    s.sendall(b'{"op": "status"}\n')
                    seen = "closed" if not s.recv(100) else "answered"
                except PermissionError:
                    seen = "denied"
                except (ConnectionResetError, BrokenPipeError):
                    seen = "closed"
                os.write(write, seen.encode())
                code = 0
            except BaseException as e:  # noqa: BLE001 - the child reports anything, then exits
                os.write(write, f"child: {type(e).__name__}: {e}".encode())
            finally:
                os._exit(code)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            seen = f.read().decode()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, seen
        return seen

    assert as_nobody() == "denied"  # 0600: another user cannot open it
    os.chmod(link, 0o666)  # even if the mode let it in, the server checks the peer's uid and says nothing
    assert as_nobody() == "closed"
    assert any("refused a connection from uid 65534" in ln for ln in log_lines(None))
    assert client.status(lay) is not None


def test_the_server_runs_no_write_command(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    mid = json.loads(ok(repo, "list", "--json"))[0]["id"]
    for argv in (["forget", mid], ["remember", "x"], ["sync"], ["stale", "--interactive"][:1] + ["--list"]):
        reply = client.request(lay, "cli", {"argv": argv, "cwd": os.fspath(repo), "env": {}}, timeout_s=30)
        assert (reply is None) == (argv[0] != "stale"), argv
    assert mid in ok(repo, "list")
    # a folder outside this worktree is refused too
    assert client.request(lay, "cli", {"argv": ["list"], "cwd": os.fspath(tmp_path), "env": {}}, timeout_s=30) is None


def test_daemon_status_stop_and_doctor(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    off = warm_gitmem(repo, "daemon", "status", "--json")
    assert off.returncode == 1 and json.loads(off.stdout)["state"] == "not running"
    assert "no warm process running" in warm_gitmem(repo, "doctor").stdout
    pid = start(lay)["pid"]
    on = warm_gitmem(repo, "daemon", "status", "--json")
    doc = json.loads(on.stdout)
    assert on.returncode == 0 and doc["state"] == "running" and doc["pid"] == pid and doc["rss_bytes"] > 0
    assert doc["socket"] == os.fspath(lay.daemon_socket) and doc["idle_minutes"] == 30
    assert f"pid {pid}" in warm_gitmem(repo, "daemon", "status").stdout
    assert f"warm process running: pid {pid}" in warm_gitmem(repo, "doctor").stdout
    stopped = warm_gitmem(repo, "daemon", "stop", "--json")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"]
    assert not client.running(lay)
    wait_for(lambda: pid not in servers_of(repo), 30, "the stopped process to end")
    assert warm_gitmem(repo, "daemon", "stop").stdout.strip() == "no warm process was running"
    # a dead process's socket: doctor removes it
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(os.fspath(lay.daemon_socket))
    dead.close()
    st = json.loads(cold_gitmem(repo, "daemon", "status", "--json").stdout)
    assert st["stale"] and not st["enabled"]
    doctor = cold_gitmem(repo, "doctor")
    assert "removed what a dead one left" in doctor.stdout and not lay.daemon_socket.exists()


def test_stop_ends_a_stuck_process(tmp_path: Path, servers: list[layout.Layout]) -> None:
    """A server that neither answers nor ends on SIGTERM (stopped with SIGSTOP) is ended with SIGKILL."""
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    pid = start(lay)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        stuck = warm_gitmem(repo, "daemon", "status")
        assert stuck.returncode == 1 and "not answering" in stuck.stdout and "SIGKILL" in stuck.stdout
        stopped = warm_gitmem(repo, "daemon", "stop")
        assert stopped.returncode == 0 and "killed (SIGKILL" in stopped.stdout, stopped.stdout + stopped.stderr
        wait_for(lambda: pid not in servers_of(repo), 30, "the killed process to end")
        assert not client.running(lay)
        assert warm_gitmem(repo, "daemon", "stop").stdout.strip() == "no warm process was running"
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


#: Read commands and their arguments (``{id}``: a memory id), each run warm and in-process, text and --json.
COMMANDS = (("recall", "password"), ("context", "--file", "app/auth.py"), ("context", "--prompt", "change login"),
            ("context",), ("stale",), ("stale", "--all"), ("show", "{id}"), ("list",), ("list", "--type", "gotcha"),
            ("log", "{id}"), ("show", "nonexistent-id"))


def test_warm_output_equals_in_process_output(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    commit(repo, "memories")
    commit(repo, "change login", {"app/auth.py": AUTH_PY.replace('"admin"', '"root"')})  # login's memory: stale
    lay = layout.of(repo)
    servers.append(lay)
    mid = json.loads(ok(repo, "list", "--json"))[0]["id"]
    start(lay)
    before = len(log_lines(lay))
    served = client.status(lay)["requests"]  # type: ignore[index]
    runs = 0
    for command in COMMANDS:
        argv = [a.replace("{id}", mid) for a in command]
        for extra in ([], ["--json"]):
            cold = cold_gitmem(repo / "app", *argv, *extra)  # from a subfolder: the warm process runs there too
            warm = warm_gitmem(repo / "app", *argv, *extra)
            runs += 1
            assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), argv
    assert not [ln for ln in log_lines(lay)[before:] if " client " in ln]  # no command fell back in-process
    assert client.status(lay)["requests"] >= served + runs  # type: ignore[index]


# -- one process per user: several repositories ------------------------------------------------------------------


def two_repos(tmp_path: Path) -> tuple[Path, Path]:
    """Two repositories, each with a memory the other lacks (and the two of ``init_repo``)."""
    a, b = init_repo(tmp_path / "alpha"), init_repo(tmp_path / "beta")
    ok(a, "remember", "Alpha caches invoices in Redis for ten minutes", "--anchor", "app/auth.py::login")
    ok(b, "remember", "Beta renders invoices as PDF with WeasyPrint", "--anchor", "app/auth.py::logout")
    return a, b


def test_two_repositories_one_process_each_its_own_answers(tmp_path: Path, servers: list[layout.Layout]) -> None:
    a, b = two_repos(tmp_path)
    la, lb = layout.of(a), layout.of(b)
    servers.extend([la, lb])
    pid = start(la)["pid"]
    for repo, lay in ((a, la), (b, lb)):
        got = client.request(lay, "search", {"query": "invoices", "limit": 5}, timeout_s=30)
        assert got is not None and same_hits(got["hits"], in_process_hits(repo, "invoices", 5))
    assert client.status(lb)["pid"] == pid and server_pids() == [pid]  # type: ignore[index]
    # their commands interleaved: four threads, two per repository, each answered with its own repository's
    expected = {r: cold_gitmem(r, "recall", "invoices") for r in (a, b)}
    assert "Redis" in expected[a].stdout and "WeasyPrint" not in expected[a].stdout
    assert "WeasyPrint" in expected[b].stdout and "Redis" not in expected[b].stdout
    before = client.status(la)
    got: dict[int, list[subprocess.CompletedProcess[str]]] = {}

    def run(i: int, repo: Path) -> None:
        got[i] = [warm_gitmem(repo if j % 2 else repo / "app", "recall", "invoices") for j in range(3)]

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate((a, b, a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, repo in enumerate((a, b, a, b)):
        for p in got[i]:
            assert (p.returncode, p.stdout, p.stderr) == (0, expected[repo].stdout, expected[repo].stderr)
    # each command ran once: warm, or here when its turn would have come too late (a loaded machine), then dropped
    # unrun by the server (tests/test_daemon_budget.py)
    assert before is not None
    def ran() -> int:
        st = client.status(la) or before
        return int(st["started_ops"].get("cli", 0) - before["started_ops"].get("cli", 0)
                   + st["dropped"] - before["dropped"])

    try:
        wait_for(lambda: ran() == 12, 30, "every command started or dropped")
    except AssertionError:
        raise AssertionError((ran(), before, client.status(la), log_lines(la)[-12:], log_lines(lb)[-12:],
                              log_lines(None)[-20:])) from None
    ran_here = ("not started within its wait", "queued for", "dropped unstarted")
    assert not [ln for lay in (la, lb) for ln in log_lines(lay)
                if " client cli" in ln and not any(w in ln for w in ran_here)]
    assert server_pids() == [pid]


def test_a_config_change_in_one_repository_leaves_the_other_alone(tmp_path: Path,
                                                                    servers: list[layout.Layout]) -> None:
    a, b = two_repos(tmp_path)
    la, lb = layout.of(a), layout.of(b)
    servers.extend([la, lb])
    pid = start(la)["pid"]
    assert client.request(lb, "search", {"query": "invoices", "limit": 5}, timeout_s=30) is not None
    roots = {r["root"]: r for r in client.status(None, all_roots=True)["roots"]}  # type: ignore[index]
    cfg = a / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[daemon]\nidle_minutes = 45\n")
    got = client.request(la, "search", {"query": "invoices", "limit": 5}, timeout_s=30)
    assert got is not None and same_hits(got["hits"], in_process_hits(a, "invoices", 5))
    hb = client.request(lb, "search", {"query": "invoices", "limit": 5}, timeout_s=30)
    assert hb is not None and same_hits(hb["hits"], in_process_hits(b, "invoices", 5))
    after = {r["root"]: r for r in client.status(None, all_roots=True)["roots"]}  # type: ignore[index]
    assert after[os.fspath(la.root)]["idle_timeout_s"] == 45 * 60  # reloaded with its new config
    assert after[os.fspath(lb.root)]["loaded"] == roots[os.fspath(lb.root)]["loaded"]  # untouched
    assert after[os.fspath(lb.root)]["requests"] == roots[os.fspath(lb.root)]["requests"] + 1
    assert after[os.fspath(lb.root)]["idle_timeout_s"] == 30 * 60
    assert server_pids() == [pid] and client.status(la)["pid"] == pid  # type: ignore[index]
    assert not any(f"dropped {lb.root}" in ln for ln in log_lines(None))


FAKE_LEGACY = '''import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("ready", flush=True)
time.sleep(600)
'''


def legacy_server(tmp_path: Path, root: Path) -> subprocess.Popen[str]:
    """A process that looks like gitmem 0.1's per-worktree warm process (``python -m gitmem.daemon ROOT``) and,
    like it, ends on SIGTERM: a module of that name in a folder of its own on PYTHONPATH."""
    pkg = tmp_path / "legacy" / "gitmem" / "daemon"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(FAKE_LEGACY)
    env = {**os.environ, "PYTHONPATH": os.fspath(tmp_path / "legacy")}
    proc = subprocess.Popen([sys.executable, "-m", "gitmem.daemon", os.fspath(root)], env=env, cwd=root,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_status_all_and_stop_all(tmp_path: Path, servers: list[layout.Layout]) -> None:
    a, b = two_repos(tmp_path)
    la, lb = layout.of(a), layout.of(b)
    servers.extend([la, lb])
    off = json.loads(warm_gitmem(tmp_path, "daemon", "status", "--all", "--json").stdout)
    assert off["state"] == "not running" and off["roots"] == []
    pid = start(la)["pid"]
    assert client.request(lb, "search", {"query": "invoices", "limit": 5}, timeout_s=30) is not None
    old = legacy_server(tmp_path, a)
    try:
        p = warm_gitmem(tmp_path, "daemon", "status", "--all", "--json")  # from outside any repository
        doc = json.loads(p.stdout)
        assert p.returncode == 0 and doc["pid"] == pid and doc["rss_bytes"] > 0 and doc["pss_bytes"] > 0
        assert [r["root"] for r in doc["roots"]] == sorted([os.fspath(la.root), os.fspath(lb.root)])
        assert all(r["idle_for_s"] >= 0 and r["idle_timeout_s"] == 1800 for r in doc["roots"])
        assert doc["legacy"] == [{"pid": old.pid, "root": os.fspath(a), "rss_bytes": doc["legacy"][0]["rss_bytes"]}]
        text = warm_gitmem(a, "daemon", "status", "--all").stdout
        assert f"pid {pid}" in text and os.fspath(lb.root) in text and f"pid {old.pid}" in text
        # without --all: this repository: its state dropped, the process serves the other
        mine = json.loads(warm_gitmem(a, "daemon", "status", "--json").stdout)
        assert mine["serving"] and mine["root"]["root"] == os.fspath(la.root)
        dropped = warm_gitmem(a, "daemon", "stop")
        assert dropped.returncode == 0 and "dropped this repository's state" in dropped.stdout
        left = json.loads(warm_gitmem(b, "daemon", "status", "--all", "--json").stdout)
        assert left["pid"] == pid and [r["root"] for r in left["roots"]] == [os.fspath(lb.root)]
        assert not json.loads(warm_gitmem(a, "daemon", "status", "--json").stdout)["serving"]
        stopped = warm_gitmem(tmp_path, "daemon", "stop", "--all", "--json")
        assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"], stopped.stdout
        message = json.loads(stopped.stdout)["message"]
        assert f"stopped: process {pid}" in message and f"older per-worktree process (gitmem before 0.2): {old.pid}" \
            in message
        assert old.wait(timeout=10) == 0 and not client.running()
        wait_for(lambda: server_pids() == [], 30, "the process to end")
        assert warm_gitmem(tmp_path, "daemon", "stop", "--all").stdout.strip() == "no warm process was running"
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()


def test_a_run_folder_others_may_enter_is_not_used(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    run = layout.daemon_run_dir()
    run.chmod(0o755)
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=2) is None
    assert not client.ensure_started(lay)  # it is not made private behind the user's back, nor used
    assert any("not a private folder of this user" in ln for ln in log_lines(lay))
    time.sleep(0.5)
    assert not client.running() and not lay.daemon_socket.exists()
    p = warm_gitmem(repo, "recall", "password")  # the command works in-process, saying nothing of it
    assert p.returncode == 0 and "constant time" in p.stdout and "warm process" not in p.stderr
    run.chmod(0o700)


def test_the_start_is_said_once_on_stderr_never_on_a_hook_stdout(tmp_path: Path,
                                                                  servers: list[layout.Layout]) -> None:
    a, b = two_repos(tmp_path)
    servers.extend([layout.of(a), layout.of(b)])
    first = warm_gitmem(a, "recall", "invoices")
    assert first.returncode == 0 and "Redis" in first.stdout and "warm process" not in first.stdout
    said = [ln for ln in first.stderr.splitlines() if "started the warm process" in ln]
    assert len(said) == 1, first.stderr
    st = wait_for(lambda: client.status(layout.of(a)), 120, "the server")
    assert said[0] == client.STARTED.format(pid=st["pid"]).rstrip("\n")
    for repo in (a, b, a):  # a running process: nothing more is said, in any repository
        p = warm_gitmem(repo, "recall", "invoices")
        assert p.returncode == 0 and "warm process" not in p.stderr
    client.stop(None)
    wait_for(lambda: not client.running(), 30, "the server to exit")
    # an agent's session start starts it too: said on the hook's stderr, its stdout is only the hook's JSON
    env = {k: v for k, v in os.environ.items() if k != client.NO_DAEMON_ENV}
    event = {"session_id": "s-1", "transcript_path": os.fspath(tmp_path / "t.jsonl"), "cwd": os.fspath(b),
             "hook_event_name": "SessionStart", "source": "startup"}
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"], input=json.dumps(event),
                          cwd=b, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "warm process" not in proc.stdout
    json.loads(proc.stdout)
    assert proc.stderr.count("started the warm process") == 1, proc.stderr
    wait_for(lambda: client.status(layout.of(b)), 120, "the server the hook started")
