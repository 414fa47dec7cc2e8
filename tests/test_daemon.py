"""The warm per-worktree process (``gitmem.daemon``), with real processes, sockets, repositories and indexes.

Every test starts its servers itself and stops them at the end (``servers`` fixture); the rest of the
suite runs with ``GITMEM_NO_DAEMON=1`` (``tests/conftest.py``), so no other test leaves one behind.
"""

from __future__ import annotations

import json
import os
import signal
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
    """The daemon allowed in this test; every layout appended is stopped (and its server reaped) at the end."""
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    started: list[layout.Layout] = []
    yield started
    for lay in started:
        client.stop(lay)
        wait_for(lambda lay=lay: not client.running(lay), 30, "the server to exit")


def start(lay: layout.Layout) -> dict[str, Any]:
    """Start ``lay``'s server through a first request (which answers None) and wait until it answers."""
    assert client.request(lay, "ping", {}, timeout_s=2.0) is None or client.running(lay)
    return wait_for(lambda: client.status(lay), 120, "the server to answer")  # type: ignore[no-any-return]


def in_process_hits(repo: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """What the ``search`` op must answer, computed in this process."""
    from gitmem.git import Repo
    from gitmem.search.recall import close_source, relevant, search_healing, sync_index
    from gitmem.store import Store

    store = Store(Repo(os.fspath(repo)))
    index, _, source = sync_index(store, strict=False)
    try:
        hits = relevant(search_healing(store, index, source, query, limit))
    finally:
        close_source(source)
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
    assert st["pid"] != os.getpid() and st["root"] == os.fspath(lay.root) and st["version"]
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
