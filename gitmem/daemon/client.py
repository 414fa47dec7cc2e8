"""Talk to the user's warm process: one JSON request, one JSON reply, over its Unix domain socket.

Owns: the wire protocol (``PROTOCOL``; one request line ``{"protocol", "op", "params", "version", "install",
"config", "root", "start_by"}``; for an op that may wait its turn (``cli``, ``search``, ``org_search``) the
server says ``{"start": true}`` when its turn comes and starts only once the client answers ``go`` (the
client answers only within its wait, else it closes: the work is then the client's, never both's;
``start_by``, the wall-clock time after which the server does not even ask); then one reply line ``{"ok":
true, "result": {...}}`` or ``{"ok": false, "error": str, "restart": bool}``, and the server closes the
connection), when the warm process is off
(``GITMEM_NO_DAEMON=1``, ``[daemon] enabled = false``), the config fingerprint each request carries for
its root, starting a server (detached, never waited for) and saying so once on standard error.

One process per user (``layout.daemon_run_dir``: ``~/.cache/gitmem/run/``, 0700) serves every repository
and worktree: each request names its ``root``, and the server keeps each root's state apart.

Guarantees: ``request``, ``status`` and ``stop`` never raise for a missing, dead, slow, foreign or
confused server: they return None / False and append one line saying why to the root's
``<logs>/daemon.log``. A client only talks to a server that runs as its own user (``SO_PEERCRED``)
through a socket in a folder only that user can enter. A request is worked on by the server or by its
client, never both, unless the server stops answering after it started (``request``'s ``timeout_s``).

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(``layout``, ``infra``, ``config``): the per-tool-call agent hooks import this module
(``tests/test_hot_path.py``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from .. import __version__, config, infra

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ..layout import Layout

#: Version of the request/reply format; a server answers another one with ``restart``. 2: one process per user
#: (the root of each request selects its state; ``status`` / ``stop`` take ``{"all": bool}``). 3: ``start_by``
#: and the ``start`` / ``go`` exchange before the work of an op that may wait its turn (``request``'s ``start_s``).
PROTOCOL = 3
#: The line the server sends when a request's turn comes, and the client's answer that it still waits for it.
START_LINE = b'{"start": true}\n'
GO_LINE = b"go\n"
#: The key of the line a server sends as it queues a ``cli`` request: ``{"queued": commands ahead, "eta_s":
#: seconds until its turn, estimated}`` (``request``'s ``queue_s``).
QUEUED = "queued"
#: ``GITMEM_NO_DAEMON=1``: never talk to nor start a warm process (tests, scripts, benchmarks of the cold path).
NO_DAEMON_ENV = "GITMEM_NO_DAEMON"
#: The module ``python -m`` runs as the warm process.
SERVER_MODULE = "gitmem.daemon"
#: The log each client line goes to, in its clone's logs folder; the server's is ``server_log()``.
LOG_NAME = "daemon.log"
#: What the command that started the warm process says on standard error, once (``{pid}``).
STARTED = ("gitmem: started the warm process (pid {pid}, one per user, exits after [daemon] idle_minutes "
           "without a request; `gitmem daemon stop --all` stops it)\n")
#: How a reply telling the client to start a new process is logged.
RESTART = "restarting it"
#: Which install of gitmem this process runs: its Python environment (``sys.prefix``) and its package folder. A
#: warm process started by another install (a lean CI venv beside the full ``uv tool`` one, two venvs of one
#: clone) is told to restart rather than answer with what that install can do (BM25 only, say).
INSTALL = f"{os.path.realpath(sys.prefix)}:{os.path.dirname(os.path.dirname(os.path.realpath(__file__)))}"
#: Largest reply read (bytes): the JSON of ``gitmem list --json`` at 100k memories is ~40 MB.
MAX_REPLY_BYTES = 256 * 1024 * 1024


def log(lay: Layout | None, line: str) -> None:
    """Append ``<UTC> pid <pid> <line>`` to ``lay``'s ``<logs>/daemon.log`` (None: the server's, ``server_log``);
    never raises."""
    infra.append_log(lay.log_file(LOG_NAME) if lay is not None else server_log(),
                     f"{infra.utc_now()} pid {os.getpid()} {line}\n")


def server_log() -> Path:
    """The warm process's own log (its start, the roots it loads and drops, its exit, its output):
    ``<run>/daemon.log``."""
    from ..layout import daemon_run_dir

    return daemon_run_dir() / LOG_NAME


def log_server(line: str) -> None:
    """Append ``<UTC> pid <pid> <line>`` to the server's log (``server_log``); never raises."""
    infra.append_log(server_log(), f"{infra.utc_now()} pid {os.getpid()} {line}\n")


def make_run_dir() -> Path:
    """Create the warm process's folder 0700 (``layout.daemon_run_dir``) and return it.

    Raises:
        OSError: it cannot be created, or it is not a private folder of this user (a link, another owner, or
            a mode that lets someone else in: it is never chmodded behind the user's back).
    """
    from ..layout import daemon_run_dir

    folder = daemon_run_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not private_dir_ok(folder):
        raise OSError(f"{folder} is not a private folder of this user (0700 and owned by uid {os.getuid()})")
    return folder


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


def _socket_dir_ok(path: Path) -> bool:
    """The socket's folder is a private folder of this user (``layout.daemon_run_dir`` or the short fallback)."""
    return private_dir_ok(path.parent)


def _exchange(lay: Layout | None, op: str, params: dict[str, Any], deadline: float,
              start_deadline: float | None = None, on_start: Callable[[], object] | None = None,
              queue_s: float = 0.0) -> tuple[dict[str, Any] | None, str, bool]:
    """One request for ``lay``'s root (None: no root, for ``status`` and ``stop``); returns (reply, why not,
    start one) — reply None when there was no usable answer.

    ``start_deadline`` (``time.monotonic``; default ``deadline``): by then the server must have said the request's
    turn came (``START_LINE``), else the client leaves and the server, which has not started it, drops it; once
    this client has answered ``GO_LINE`` the work is the server's and the client waits until ``deadline``.
    ``queue_s``: when the server says it queued the request (``QUEUED``) by ``start_deadline``, the client waits
    for its turn until ``start_deadline + queue_s`` if the server expects it by then, else leaves at once.
    ``on_start`` is called when the turn came, before ``GO_LINE`` is sent (tests pause the server there).
    """
    from ..layout import daemon_socket

    path = daemon_socket()
    if not _socket_dir_ok(path):
        if not os.path.lexists(path.parent):
            return None, "no warm process", True  # its server makes the private folder
        return None, f"{path.parent} is not a private folder of this user (0700): not used", False
    start_deadline = deadline if start_deadline is None else min(start_deadline, deadline)
    body = json.dumps({"protocol": PROTOCOL, "op": op, "params": params, "version": __version__,
                       "install": INSTALL, "config": config_fingerprint(lay) if lay is not None else "-",
                       "root": os.fspath(lay.root) if lay is not None else "",
                       "start_by": time.time() + start_deadline + queue_s - time.monotonic()}).encode() + b"\n"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    started = False
    try:
        sock.settimeout(max(start_deadline - time.monotonic(), 0.001))
        try:
            sock.connect(os.fspath(path))
        except (FileNotFoundError, ConnectionRefusedError) as e:
            what = "no warm process" if isinstance(e, FileNotFoundError) else "a stale socket (no process)"
            return None, what, True
        uid = peer_uid(sock)
        if uid is not None and uid != os.getuid():
            return None, f"the process at {path} runs as uid {uid}, not {os.getuid()}: not used", False
        sock.sendall(body)
        line, rest = _read_line(sock, start_deadline)
        if line.startswith(b'{"' + QUEUED.encode()):
            eta = json.loads(line).get("eta_s")
            if not isinstance(eta, (int, float)) or time.monotonic() + eta > start_deadline + queue_s:
                return (None, f"{op} queued for ~{eta} s behind other commands: ran here (the warm process drops it)",
                        False)
            start_deadline = min(start_deadline + queue_s, deadline)
            line, rest = _read_line(sock, start_deadline, rest)
        if line == START_LINE:
            if time.monotonic() > start_deadline:
                return None, f"{op} not started within its wait (its turn came too late): ran here", False
            if on_start is not None:
                on_start()
            sock.sendall(GO_LINE)
            started = True
            line, rest = _read_line(sock, deadline, rest)
    except TimeoutError:
        if started:
            return None, (f"{op} started in the warm process but not answered within "
                          f"{deadline - start_deadline:.3g} s more: ran here (its late answer is dropped)"), False
        return None, f"{op} not started within its wait: ran here (the warm process drops it)", False
    except _TooLarge:
        return None, f"reply larger than {MAX_REPLY_BYTES} bytes", False
    except ValueError as e:
        return None, f"{op}: not a JSON queued line ({e})", False
    except OSError as e:
        return None, f"{op}: {type(e).__name__}: {e}", False
    finally:
        sock.close()
    if not line:
        return None, (f"{op}: no reply (the warm process ended)" if started else
                      f"{op} dropped unstarted by the warm process (its turn came after the client's wait)"), False
    try:
        reply = json.loads(line)
    except ValueError:
        return None, f"{op}: not a JSON reply ({len(line) + len(rest)} bytes)", False
    if not isinstance(reply, dict):
        return None, f"{op}: not a JSON object", False
    if reply.get("ok") is True and isinstance(reply.get("result"), dict):
        return reply["result"], "", False
    if reply.get("restart"):
        return None, f"{RESTART}: {reply.get('error', '')}", True
    return None, f"{op} failed in the warm process: {reply.get('error', '?')}", False


class _TooLarge(Exception):
    """A reply line longer than ``MAX_REPLY_BYTES``."""


def _read_line(sock: socket.socket, deadline: float, pending: bytes = b"") -> tuple[bytes, bytes]:
    """(the first line of ``pending`` and then ``sock`` with its newline, or all it sent before closing; what came
    after it) by ``deadline`` (``time.monotonic``).

    Raises:
        TimeoutError: no whole line by ``deadline``.
        _TooLarge: more than ``MAX_REPLY_BYTES`` without a newline.
        OSError: the connection failed.
    """
    end = pending.find(b"\n")
    if end >= 0:
        return pending[:end + 1], pending[end + 1:]
    chunks: list[bytes] = [pending]
    size = len(pending)
    while True:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(1 << 16)
        if not chunk:
            return b"".join(chunks), b""
        end = chunk.find(b"\n")
        if end >= 0:
            chunks.append(chunk[:end + 1])
            return b"".join(chunks), chunk[end + 1:]
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise _TooLarge


def request(lay: Layout, op: str, params: dict[str, Any], *, timeout_s: float, start_s: float | None = None,
            queue_s: float = 0.0, start: bool = True) -> dict[str, Any] | None:
    """Send ``op`` with ``params`` (JSON) for ``lay``'s root to the user's warm process; its result, or None.

    None when the warm process is off for this root (``enabled``), there is none, it has not started the
    request within ``start_s`` seconds (default: ``timeout_s``; busy with other requests, stopped, loading: it
    then drops the request, never runs it, and the caller does the work; a ``cli`` request the server says it
    queued behind others waits ``queue_s`` more when the server expects to start it by then, else leaves at
    once), it does not answer within
    ``timeout_s`` seconds (connect, send and reply together; only a stuck process, once it started: the caller
    then does the work too, and the late answer is dropped), it runs another gitmem version or
    protocol (it then exits), or it answers with an error; then, when ``start`` and no process
    holds the user's lock, one is started detached (not waited for; ``ensure_started`` says so on
    standard error) and the caller works in-process. A changed config.toml is not an error: the server
    reloads that root's state and answers. Never raises; each None is logged with its reason
    (``<logs>/daemon.log``).

    Ops (``gitmem.daemon.server``): ``search`` ``{"query", "limit"}`` → ``{"hits": [{"id", "score",
    "fts_rank", "vector_rank", "similarity"}]}``; ``status`` / ``ping`` ``{"all"?}`` → the process (``{"pid",
    "version", "started", "uptime_s", "requests", "dropped", "started_ops", "socket", "rss_bytes", "pss_bytes",
    "roots_loaded", "max_roots"}``), ``"root"``: this root's state or null, and with ``all`` ``"roots"``: every root's;
    ``org_search`` ``{"query", "limit", "exclude"?}`` → ``{"configured", "exclude", "hits": [org hit], "inject",
    "session_budget", "prompt_budget"}``; ``stop`` ``{"all"?}`` → ``{"dropped": bool, "exiting": bool}``;
    ``cli`` (see ``gitmem.daemon.server``).
    """
    try:
        if not enabled(lay):
            return None
        now = time.monotonic()
        reply, why, spawn = _exchange(lay, op, params, now + timeout_s,
                                      now + (timeout_s if start_s is None else start_s), queue_s=queue_s)
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


def running(lay: Layout | None = None) -> bool:
    """Whether a process holds the user's daemon lock (serving, starting or stopping); never raises.

    ``lay`` is accepted for the callers of one process per worktree; the lock is the user's.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    from ..layout import daemon_run_dir

    try:
        fd = os.open(daemon_run_dir() / "daemon.lock", os.O_RDONLY)
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


def ensure_started(lay: Layout, *, force: bool = False, announce: bool = True) -> bool:
    """Start the user's warm process detached, warming ``lay``'s root first, unless one holds the user's lock
    (or ``force``: one that is exiting does); returns whether one was started.

    When it starts one and ``announce``, says so once on this process's standard error (``STARTED``: its pid,
    and how to stop it); never on standard output (an agent hook's is its answer). Never waits for it and
    never raises (a failure to start is logged). Two starters at once are fine: the second server finds
    the lock held and exits (both starters then name a pid; the first one's is the server).
    """
    try:
        if not enabled(lay) or (running(lay) and not force):
            return False
        folder = make_run_dir()
        if not _claim_start(folder, force=force):
            return False
        pid = infra.spawn_detached(SERVER_MODULE, "--warm", os.fspath(lay.root), cwd=folder, log=server_log())
        if announce:
            try:
                import sys

                sys.stderr.write(STARTED.format(pid=pid))
                sys.stderr.flush()
            except (OSError, ValueError, AttributeError):
                pass  # a closed or absent standard error: the log says it
        log(lay, f"client: started the warm process (pid {pid})")
        return True
    except Exception as e:  # noqa: BLE001 - see request
        log(lay, f"client: could not start the warm process: {type(e).__name__}: {e}")
        return False


#: The file a starter creates before it spawns a server, removed by that server once it holds the lock: within
#: ``START_GRACE_S`` of it no other client spawns one (a burst of commands while the first server imports its
#: libraries would otherwise start one process each, each waiting for the lock and then exiting).
STARTING_NAME = "daemon.starting"
#: Seconds a start claim holds (a server that died before taking the lock frees it then).
START_GRACE_S = 15.0


def _claim_start(folder: Path, *, force: bool) -> bool:
    """Create ``<run>/daemon.starting`` (``O_EXCL``); False when another client created it less than
    ``START_GRACE_S`` ago (it starts the server). ``force`` (a restart) claims it whatever its age."""
    marker = folder / STARTING_NAME
    for _ in range(2):
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return True
        except FileExistsError:
            try:
                fresh = time.time() - os.stat(marker).st_mtime < START_GRACE_S
            except OSError:
                fresh = False
            if fresh and not force:
                return False
            try:
                os.unlink(marker)
            except OSError:
                pass
    return force


def status(lay: Layout | None, *, timeout_s: float = 2.0, all_roots: bool = False) -> dict[str, Any] | None:
    """The running warm process's status (the ``status`` op's result, ``"root"``: ``lay``'s root's state or
    null; ``all_roots``: ``"roots"`` too), or None when none answers; starts none."""
    try:
        return _exchange(lay, "status", {"all": all_roots}, time.monotonic() + timeout_s)[0]
    except Exception:  # noqa: BLE001 - see request
        return None


def stop(lay: Layout | None, *, timeout_s: float = 5.0, all_roots: bool = True) -> dict[str, Any] | None:
    """Ask the warm process to drop ``lay``'s root's state (``all_roots`` false; it exits when that was its last
    root) or to exit (``all_roots``); its answer ``{"dropped", "exiting"}``, or None when none answered. It
    exits once the requests in flight are answered."""
    try:
        return _exchange(lay, "stop", {"all": all_roots}, time.monotonic() + timeout_s)[0]
    except Exception:  # noqa: BLE001 - see request
        return None
