"""The warm process under a budget: a command is worked on by the warm process or by its own process, never both.

A real warm process made slow: stopped (``SIGSTOP``), or busy with another request whose client holds its turn
(a raw client that read ``client.START_LINE`` and has not answered ``client.GO_LINE`` yet: the server holds the
lock that request queued for, as a long command does). Each test checks that the command answers with the
in-process output, in about its wait (``front.START_WAIT_S``, ``QUEUE_WAIT_S``) plus its own work, and from the
server's counters (``status``: ``dropped``, ``started_ops``) that the work was done once.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from gitmem import __version__, layout
from gitmem.daemon import client, front
from tests.test_daemon import cold_gitmem, init_repo, log_lines, servers, start, wait_for, warm_gitmem

__all__ = ["servers"]  # the fixture, used by name

#: Seconds of slack for a busy test machine beyond the wait and the command's own in-process time.
SLACK_S = 3.0


def counters(lay: layout.Layout) -> tuple[int, dict[str, int]]:
    """(requests dropped unworked, requests started by op) of the running warm process."""
    st = wait_for(lambda: client.status(lay, timeout_s=5.0), 60, "the server to answer")
    return int(st["dropped"]), dict(st["started_ops"])


def cli_params(cwd: Path, argv: list[str]) -> dict[str, Any]:
    """The ``cli`` op's parameters as ``front.run_warm`` sends them (not a terminal)."""
    stream = {"encoding": "utf-8", "errors": "strict", "tty": False}
    return {"argv": argv, "cwd": os.fspath(cwd), "env": {}, "stdout": stream, "stderr": stream}


def hold_a_turn(lay: layout.Layout, op: str, params: dict[str, Any]) -> tuple[socket.socket, Any]:
    """Send ``op`` as a client that waits up to a minute for its turn, and read the server's ``START_LINE`` (after
    its ``client.QUEUED`` line for a ``cli`` request): from then on the server holds that op's lock until this
    socket answers ``GO_LINE`` (or closes). Returns the socket and its reader."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(os.fspath(layout.daemon_socket()))
    sock.sendall(json.dumps({"protocol": client.PROTOCOL, "op": op, "params": params, "version": __version__,
                             "install": client.INSTALL, "config": client.config_fingerprint(lay),
                             "root": os.fspath(lay.root), "start_by": time.time() + 60}).encode() + b"\n")
    reader = sock.makefile("rb")
    line = reader.readline()
    if op == "cli":
        assert json.loads(line)[client.QUEUED] == 0, line  # nothing ahead of it
        line = reader.readline()
    assert line == client.START_LINE
    return sock, reader


def finish_turn(held: tuple[socket.socket, Any]) -> dict[str, Any]:
    """Answer ``GO_LINE`` on a held turn and return the server's reply."""
    sock, reader = held
    sock.sendall(client.GO_LINE)
    data = reader.read()
    reader.close()
    sock.close()
    reply = json.loads(data)
    assert reply["ok"] is True, reply
    return reply["result"]  # type: ignore[no-any-return]


def timed_warm(cwd: Path, *args: str) -> tuple[float, Any]:
    t = time.monotonic()
    proc = warm_gitmem(cwd, *args)
    return time.monotonic() - t, proc


def test_a_stopped_warm_process_costs_the_wait_not_the_work(tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    pid = start(lay)["pid"]
    argv = ("context", "--file", "app/auth.py")
    t = time.monotonic()
    cold = cold_gitmem(repo, *argv)
    cold_s = time.monotonic() - t
    assert cold.returncode == 0 and "constant time" in cold.stdout
    assert warm_gitmem(repo, *argv).stdout == cold.stdout  # served warm while it runs
    dropped, started = counters(lay)
    os.kill(pid, signal.SIGSTOP)
    try:
        took, warm = timed_warm(repo, *argv)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    # it waited for the start (stretched on a loaded machine), not for the answer (front.READ_COMMANDS: 20 s),
    # then did the work itself
    waits = (front.START_WAIT_S + front.QUEUE_WAIT_S) * front.MAX_LOAD_FACTOR
    assert took < waits + 2 * cold_s + SLACK_S, (took, cold_s)
    assert any("cli not started within its wait" in ln for ln in log_lines(lay)[-3:]), log_lines(lay)[-3:]
    # once running again, the server drops the request it had not started: the work was done once, here
    wait_for(lambda: counters(lay)[0] >= dropped + 1, 30, "the queued request to be dropped")
    assert counters(lay)[1].get("cli") == started.get("cli")
    assert any("dropped cli context" in ln for ln in log_lines(None))


def test_busy_with_another_request_the_command_runs_here_once(tmp_path: Path,
                                                              servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    first, second = ["context", "--file", "app/auth.py"], ["recall", "password"]
    expected_first = cold_gitmem(repo, *first)
    t = time.monotonic()
    expected_second = cold_gitmem(repo, *second)
    cold_s = time.monotonic() - t
    assert warm_gitmem(repo, *second).stdout == expected_second.stdout
    dropped, started = counters(lay)
    held = hold_a_turn(lay, "cli", cli_params(repo, first))  # the warm process is busy with this one
    try:
        took, warm = timed_warm(repo, *second)
        assert (warm.returncode, warm.stdout) == (0, expected_second.stdout), warm.stderr
        assert any("cli not started within its wait" in ln for ln in log_lines(lay)[-3:])
    finally:
        reply = finish_turn(held)
    # the request it was busy with is answered, whatever the wait of the other one
    import binascii

    assert binascii.a2b_base64(reply["stdout"]).decode() == expected_first.stdout
    wait_for(lambda: counters(lay)[0] >= dropped + 1, 30, "the second request to be dropped")
    assert counters(lay)[1].get("cli") == started.get("cli", 0) + 1  # the held one only
    assert took < (front.START_WAIT_S + front.QUEUE_WAIT_S) * front.MAX_LOAD_FACTOR + 2 * cold_s + SLACK_S, took


def test_a_search_waits_for_its_turn_only_start_s(tmp_path: Path, servers: list[layout.Layout]) -> None:
    """The hooks' and MCP's ``search`` op: a request that does not get its turn within ``start_s`` is None at
    once (the caller searches itself) and dropped by the server."""
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=60)  # index open
    dropped, started = counters(lay)
    held = hold_a_turn(lay, "search", {"query": "logout", "limit": 3})
    try:
        t = time.monotonic()
        assert client.request(lay, "search", {"query": "password", "limit": 3}, timeout_s=30, start_s=0.3) is None
        took = time.monotonic() - t
    finally:
        got = finish_turn(held)
    assert got["hits"], got
    assert took < 0.3 + SLACK_S, took
    wait_for(lambda: counters(lay)[0] == dropped + 1, 30, "the second search to be dropped")
    assert counters(lay)[1].get("search") == started.get("search", 0) + 1


def test_once_started_the_client_waits_for_the_answer_up_to_its_bound(tmp_path: Path,
                                                                      servers: list[layout.Layout]) -> None:
    """Stopped right after it started a command, for longer than the start wait: the client waits and gets the
    warm answer; stopped for longer than the whole bound: the client gives up (the work is then done twice:
    the one case, a stuck process, where it is)."""
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    pid = start(lay)["pid"]
    argv = ["context", "--file", "app/auth.py"]
    expected = cold_gitmem(repo, *argv)
    dropped, started = counters(lay)
    pause_s = 3.0

    def pause() -> None:  # the server said start; it is stopped before it reads the client's go
        os.kill(pid, signal.SIGSTOP)
        threading.Timer(pause_s, os.kill, (pid, signal.SIGCONT)).start()

    t = time.monotonic()
    reply, why, _ = client._exchange(lay, "cli", cli_params(repo, argv), t + 60, t + front.START_WAIT_S,
                                     on_start=pause)
    took = time.monotonic() - t
    assert reply is not None, why
    import binascii

    assert binascii.a2b_base64(reply["stdout"]).decode() == expected.stdout
    assert took >= pause_s
    assert counters(lay) == (dropped, {**started, "cli": started.get("cli", 0) + 1})

    # stopped for longer than the bound: the client stops waiting at the bound, and says why
    t = time.monotonic()
    reply, why, _ = client._exchange(lay, "cli", cli_params(repo, argv), t + 1.5, t + front.START_WAIT_S,
                                     on_start=pause)
    took = time.monotonic() - t
    assert reply is None and "started in the warm process but not answered" in why, why
    assert 1.5 <= took < pause_s, took
    wait_for(lambda: counters(lay)[1].get("cli") == started.get("cli", 0) + 2, 30, "the late one to run")


def queue_behind(lay: layout.Layout, repo: Path, argv: list[str]) -> tuple[socket.socket, Any]:
    """A raw client queued for the CLI lock (its ``client.QUEUED`` line read), waiting up to a minute."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(os.fspath(layout.daemon_socket()))
    sock.sendall(json.dumps({"protocol": client.PROTOCOL, "op": "cli", "params": cli_params(repo, argv),
                             "version": __version__, "install": client.INSTALL,
                             "config": client.config_fingerprint(lay), "root": os.fspath(lay.root),
                             "start_by": time.time() + 60}).encode() + b"\n")
    reader = sock.makefile("rb")
    assert client.QUEUED in json.loads(reader.readline())
    return sock, reader


def test_a_queued_command_waits_for_a_turn_due_soon_and_leaves_one_due_late(
        tmp_path: Path, servers: list[layout.Layout]) -> None:
    repo = init_repo(tmp_path / "repo")
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    dropped, started = counters(lay)
    params = cli_params(repo, ["recall", "password"])
    # due soon: one command ahead, released 0.5 s later; the client waits for its turn and gets the warm answer
    held = hold_a_turn(lay, "cli", cli_params(repo, ["show", "nonexistent-id"]))
    threading.Timer(0.5, finish_turn, (held,)).start()
    t = time.monotonic()
    got = client.request(lay, "cli", params, timeout_s=60, start_s=0.3, queue_s=20)
    assert got is not None and got["code"] == 0 and time.monotonic() - t >= 0.5
    assert counters(lay) == (dropped, {**started, "cli": started.get("cli", 0) + 2})
    # due late: eight commands ahead, never run here before (each guessed at CLI_GUESS_S = 0.2 s): 1.6 s away,
    # more than the 1 s it may wait: it leaves at once, without waiting for its start wait
    from gitmem.daemon.server import CLI_GUESS_S

    held = hold_a_turn(lay, "cli", cli_params(repo, ["show", "nonexistent-id"]))
    queued = [queue_behind(lay, repo, ["log", "nonexistent-id"]) for _ in range(8)]
    assert 8 * CLI_GUESS_S > front.START_WAIT_S + front.QUEUE_WAIT_S
    t = time.monotonic()
    assert client.request(lay, "cli", params, timeout_s=60, start_s=front.START_WAIT_S,
                          queue_s=front.QUEUE_WAIT_S) is None
    assert time.monotonic() - t < front.START_WAIT_S + front.QUEUE_WAIT_S  # it did not wait for it
    assert any("queued for ~" in ln for ln in log_lines(lay)[-2:]), log_lines(lay)[-2:]
    for sock, reader in queued:  # their clients leave: each is dropped unrun when its turn comes
        reader.close()
        sock.close()
    finish_turn(held)
    wait_for(lambda: counters(lay)[0] == dropped + 9, 30, "the eight and the late one to be dropped")
    assert counters(lay)[1] == {**started, "cli": started.get("cli", 0) + 3}
