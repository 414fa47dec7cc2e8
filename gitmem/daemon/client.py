"""Talk to this worktree's warm process: one JSON request, one JSON reply, over its Unix domain socket.

Owns: the wire protocol (``PROTOCOL``; one request line ``{"protocol", "op", "params", "version",
"config", "root"}``, one reply line ``{"ok": true, "result": {...}}`` or ``{"ok": false, "error":
str, "restart": bool}``, then the server closes the connection), when the warm process is off
(``GITMEM_NO_DAEMON=1``, ``[daemon] enabled = false``), the config fingerprint a server is
started with, and starting a server (detached, never waited for).

Guarantees: ``request``, ``status`` and ``stop`` never raise for a missing, dead, slow, foreign or
confused server: they return None / False and append one line saying why to
``<logs>/daemon.log``. A client only talks to a server that runs as its own user (``SO_PEERCRED``)
through a socket in a folder only that user can enter.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(``layout``, ``infra``, ``config``): the per-tool-call agent hooks import this module
(``tests/test_hot_path.py``).
"""

from __future__ import annotations

import json
import os
import socket
import time

from .. import __version__, config, infra

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from pathlib import Path
    from typing import Any

    from ..layout import Layout

#: Version of the request/reply format; a server answers another one with ``restart``.
PROTOCOL = 1
#: ``GITMEM_NO_DAEMON=1``: never talk to nor start a warm process (tests, scripts, benchmarks of the cold path).
NO_DAEMON_ENV = "GITMEM_NO_DAEMON"
#: The module ``python -m`` runs as the warm process.
SERVER_MODULE = "gitmem.daemon"
#: The log every client and server line goes to, in the clone's logs folder.
LOG_NAME = "daemon.log"
#: How a reply telling the client to start a new process is logged.
RESTART = "restarting it"
#: Largest reply read (bytes): the JSON of ``gitmem list --json`` at 100k memories is ~40 MB.
MAX_REPLY_BYTES = 256 * 1024 * 1024


def log(lay: Layout, line: str) -> None:
    """Append ``<UTC> pid <pid> <line>`` to ``<logs>/daemon.log``; never raises."""
    infra.append_log(lay.log_file(LOG_NAME), f"{infra.utc_now()} pid {os.getpid()} {line}\n")


def enabled(lay: Layout) -> bool:
    """Whether commands may use the warm process: not ``GITMEM_NO_DAEMON=1``, not ``[daemon] enabled = false``."""
    if os.environ.get(NO_DAEMON_ENV, "") not in ("", "0"):
        return False
    return config.daemon_enabled(config.read_cached(lay))


def config_fingerprint(lay: Layout) -> str:
    """A digest of config.toml's bytes (``"-"`` when there is none): a server started with another one restarts.

    By content, not by modification time: a checkout that rewrites the same bytes keeps the server.
    """
    import hashlib

    try:
        data = lay.config_file.read_bytes()
    except OSError:
        return "-"
    return hashlib.sha256(data).hexdigest()[:16]


def private_dir_ok(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) owned by this user that no one else may enter (0700)."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of Unix socket ``sock`` (``SO_PEERCRED``: Linux), or None
    where the platform cannot tell."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    import struct

    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
    return int(uid)


def _socket_dir_ok(lay: Layout, path: Path) -> bool:
    """The socket's folder is gitmem's run folder, or a private fallback folder (``layout.short_socket_dir``)."""
    return path.parent == lay.run_dir or private_dir_ok(path.parent)


def _exchange(lay: Layout, op: str, params: dict[str, Any], deadline: float) -> tuple[dict[str, Any] | None, str, bool]:
    """One request; returns (reply, why not, start one) — reply None when there was no usable answer."""
    path = lay.daemon_socket
    if not _socket_dir_ok(lay, path):
        if not os.path.lexists(path.parent):
            return None, "no warm process", True  # its server makes the private folder
        return None, f"{path.parent} is not a private folder of this user (0700): not used", False
    body = json.dumps({"protocol": PROTOCOL, "op": op, "params": params, "version": __version__,
                       "config": config_fingerprint(lay), "root": os.fspath(lay.root)}).encode() + b"\n"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            sock.connect(os.fspath(path))
        except (FileNotFoundError, ConnectionRefusedError) as e:
            what = "no warm process" if isinstance(e, FileNotFoundError) else "a stale socket (no process)"
            return None, what, True
        uid = peer_uid(sock)
        if uid is not None and uid != os.getuid():
            return None, f"the process at {path} runs as uid {uid}, not {os.getuid()}: not used", False
        sock.sendall(body)
        chunks: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                return None, f"reply larger than {MAX_REPLY_BYTES} bytes", False
    except TimeoutError:
        return None, f"no answer to {op} in time", False
    except OSError as e:
        return None, f"{op}: {type(e).__name__}: {e}", False
    finally:
        sock.close()
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        return None, f"{op}: not a JSON reply ({size} bytes)", False
    if not isinstance(reply, dict):
        return None, f"{op}: not a JSON object", False
    if reply.get("ok") is True and isinstance(reply.get("result"), dict):
        return reply["result"], "", False
    if reply.get("restart"):
        return None, f"{RESTART}: {reply.get('error', '')}", True
    return None, f"{op} failed in the warm process: {reply.get('error', '?')}", False


def request(lay: Layout, op: str, params: dict[str, Any], *, timeout_s: float, start: bool = True
            ) -> dict[str, Any] | None:
    """Send ``op`` with ``params`` (JSON) to this worktree's warm process; its result, or None.

    None when the warm process is off (``enabled``), there is none, it does not answer within
    ``timeout_s`` seconds (connect, send and reply together), it runs another gitmem version or
    config (it then exits), or it answers with an error; then, when ``start`` and no process
    holds this worktree, one is started detached (not waited for) and the caller works in-process.
    Never raises; each None is logged with its reason (``<logs>/daemon.log``).

    Ops (``gitmem.daemon.server``): ``search`` ``{"query", "limit"}`` → ``{"hits": [{"id", "score",
    "fts_rank", "vector_rank", "similarity"}]}``; ``status`` / ``ping`` → ``{"pid", "version", "root",
    "started", "uptime_s", "requests", "idle_s", "socket", "rss_bytes"}``; ``org_search`` ``{"query", "limit",
    "exclude"?}`` → ``{"configured", "exclude", "hits": [org hit], "inject", "session_budget", "prompt_budget"}``;
    ``stop`` → ``{"stopping": true}``;
    ``cli`` (see ``gitmem.daemon.server``).
    """
    try:
        if not enabled(lay):
            return None
        reply, why, spawn = _exchange(lay, op, params, time.monotonic() + timeout_s)
        if reply is not None:
            return reply
        log(lay, f"client {op}: {why}")
        if start and spawn:
            # told to restart: the old process still holds the lock while it exits; the new one waits for it
            ensure_started(lay, force=why.startswith(RESTART))
        return None
    except Exception as e:  # noqa: BLE001 - the warm process is an optimisation: never fail a command on it
        log(lay, f"client {op}: unexpected {type(e).__name__}: {e}")
        return None


def running(lay: Layout) -> bool:
    """Whether a process holds this worktree's daemon lock (serving, starting or stopping); never raises."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(lay.daemon_lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def ensure_started(lay: Layout, *, force: bool = False) -> bool:
    """Start this worktree's warm process detached unless one holds its lock (or ``force``: one that is exiting
    does); returns whether one was started.

    Never waits for it and never raises (a failure to start is logged). Two starters at once are
    fine: the second server finds the lock held and exits.
    """
    try:
        if not enabled(lay) or (running(lay) and not force):
            return False
        infra.spawn_detached(SERVER_MODULE, os.fspath(lay.root), cwd=lay.root, log=lay.log_file(LOG_NAME))
        return True
    except Exception as e:  # noqa: BLE001 - see request
        log(lay, f"client: could not start the warm process: {type(e).__name__}: {e}")
        return False


def status(lay: Layout, *, timeout_s: float = 2.0) -> dict[str, Any] | None:
    """The running warm process's status (the ``status`` op's result), or None when none answers; starts none."""
    try:
        return _exchange(lay, "status", {}, time.monotonic() + timeout_s)[0]
    except Exception:  # noqa: BLE001 - see request
        return None


def stop(lay: Layout, *, timeout_s: float = 5.0) -> bool:
    """Ask the warm process to exit; True when it answered (it exits once current requests are done)."""
    try:
        return _exchange(lay, "stop", {}, time.monotonic() + timeout_s)[0] is not None
    except Exception:  # noqa: BLE001 - see request
        return False
