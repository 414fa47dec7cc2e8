"""The warm process of one working tree (``python -m gitmem.daemon ROOT``): the index, the embedding model and
the catalog kept open, answering ``gitmem.daemon.client`` over a Unix domain socket.

Owns: the server side of the protocol (``client`` owns the format), its life (one per worktree: the
``flock`` of ``layout.daemon_lock`` held from start to exit; a second starter exits quietly; idle exit
after ``[daemon] idle_minutes``; exit on ``stop``, SIGTERM, or a client of another gitmem version,
protocol or config.toml, or when a gitmem source file it runs changed on disk: the client is told
``restart``), and its socket: bound under a 0177 umask (the file is 0600), in ``<git-dir>/gitmem/run/``
or a private 0700 fallback folder, a stale file of a killed server replaced, each peer's uid checked
(``SO_PEERCRED``) against its own.

Ops:

* ``search`` ``{"query": str, "limit": int}`` → ``{"hits": [{"id", "score", "fts_rank", "vector_rank",
  "similarity"}]}``: ``search.recall.relevant(search_healing(...))`` after ``sync_index`` (the index
  follows the catalog's change log on every request, so a memory written by any process is found by
  the next request). Serialised with other searches, never behind a CLI command.
* ``org_search`` ``{"query": str, "limit": int, "exclude": [str] (optional)}`` → ``{"configured", "exclude",
  "hits": [shapes.org_hit_json], "inject", "session_budget", "prompt_budget"}``: the organisation index's hits
  (``org.search.search``) for this worktree's ``[org]`` settings (its config.toml and the user's, re-read when
  they change: ``org_settings``) through the long-lived connection and table handles ``org.search`` keeps for the
  process (LanceDB's caches of manifests and index files stay warm; each query still sees the latest commit),
  this repository's own memories left out (``exclude`` absent: its org name,
  ``org.repos.this_name``). One at a time, beside (never behind) the local searches and CLI commands.
* ``ping`` / ``status`` → pid, version, root, started, uptime, requests served, idle timeout, socket, RSS.
* ``stop`` → ``{"stopping": true}``, then exits once the requests in flight are answered.
* ``cli`` → ``{"code", "stdout", "stderr"}``: a read command of the ``gitmem`` CLI (``front.READ_COMMANDS``)
  run here by the same click command as in-process, its output captured (``op_cli``). One at a time.

It never runs a write op: ``search`` only reads, and ``cli`` refuses every command off the read list."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .. import __version__, config, infra, layout
from . import client

#: What the read commands import when they run (``cli`` and its command modules, the ops they call), loaded at
#: start so that no request pays for it.
WARM_MODULES = ("gitmem.cli", "gitmem.memories", "gitmem.ops.context", "gitmem.ops.history", "gitmem.ops.show",
                "gitmem.ops.stale", "gitmem.analyzer", "gitmem.rank.focus", "gitmem.code.symbols")
#: Seconds between two looks at gitmem's source files (``Server.code_changed``: ~100 ``stat`` calls).
CODE_CHECK_S = 1.0
#: Seconds between two looks at the idle clock and the stop flag while no request comes.
TICK_S = 0.5
#: Seconds a starting server waits for the daemon lock: a server told to restart releases it once it has
#: answered its requests in flight (a second starter of a running server just waits this long, then exits).
LOCK_WAIT_S = 10.0
#: Largest request line accepted (bytes).
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Seconds a connection may take to send its request.
REQUEST_READ_TIMEOUT_S = 5.0


def rss_bytes() -> int | None:
    """Resident memory of this process in bytes (``/proc/self/statm``; elsewhere the peak from ``getrusage``)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        try:
            import resource

            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return int(peak if sys.platform == "darwin" else peak * 1024)
        except (ImportError, OSError):
            return None


class _Captured(io.TextIOWrapper):
    """A standard stream for one ``cli`` request: text encoded as the client's stream encodes it, into a
    ``BytesIO``; a terminal when the client's stream is one (click and the commands ask ``isatty``)."""

    def __init__(self, buffer: io.BytesIO, *, encoding: str, errors: str, tty: bool) -> None:
        super().__init__(buffer, encoding=encoding, errors=errors, newline=None, write_through=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _client_gone(conn: socket.socket | None) -> bool:
    """Whether the client of ``conn`` closed its end (a non-blocking peek reads end of file); False when it is
    still there or when this cannot tell."""
    if conn is None:
        return False
    timeout = conn.gettimeout()
    try:
        conn.setblocking(False)  # a socket with a timeout would wait for data (and time out) instead
        return conn.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, InterruptedError):
        return False  # connected, nothing more sent: it waits for the reply
    except OSError:
        return True
    finally:
        try:
            conn.settimeout(timeout)
        except OSError:
            pass


class Server:
    """One worktree's warm process. ``run()`` serves until idle, stopped or outdated.

    Raises (constructor): whatever opening the store raises (NotARepository, NotInitialized, ConfigError).
    """

    def __init__(self, root: Path) -> None:
        from ..git import Repo
        from ..search import lexical
        from ..store import Store

        self.lay = layout.of(root)
        self.fingerprint = client.config_fingerprint(self.lay)
        self.store = Store(Repo(os.fspath(self.lay.root)))
        self.store.enable_symbol_cache()
        self.idle_s = config.daemon_idle_s(self.store.config)
        #: Without the all extra (a lean install): searches are BM25 over the catalog, no index is opened.
        self.search_mode = lexical.mode(self.store)
        self.index: Any = None
        if not self.search_mode.lean:
            from ..search.recall import open_index

            self.index = open_index(self.store)
        self.socket_path = self.lay.daemon_socket
        self.started = infra.utc_now()
        self.started_mono = time.monotonic()
        self.requests = 0
        self.last_request = time.monotonic()
        self.stopping = threading.Event()
        self._count_lock = threading.Lock()
        self._active = 0
        #: Searches run one at a time (one index object); CLI commands one at a time (cwd, click's state,
        #: stdout); the two never wait for each other.
        self.search_lock = threading.Lock()
        self.cli_lock = threading.Lock()
        self.org_lock = threading.Lock()
        self._org: tuple[Any, str] | None = None  # (OrgSettings, this repository's org name) as last read
        self._listener: socket.socket | None = None
        self._code = self._code_stamps()
        self._code_checked = 0.0
        self._inode: int | None = None

    # -- ops ----------------------------------------------------------------------------------

    def op_search(self, params: dict[str, Any]) -> dict[str, Any]:
        """``search``: the hybrid hits of ``params["query"]`` (at most ``params["limit"]``, default 10); without
        the all extra, the catalog's BM25 hits (``search.lexical``; no ``vector_rank``). ``"mode"``: which."""
        query = params.get("query")
        limit = params.get("limit", 10)
        if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError("search takes {\"query\": str, \"limit\": int >= 1}")
        if self.search_mode.lean:
            from ..search import lexical

            with self.search_lock:
                found = lexical.search(self.store, query, limit)
            return {"mode": self.search_mode.name,
                    "hits": [{"id": mid, "score": score, "fts_rank": rank, "vector_rank": None, "similarity": None}
                             for rank, (mid, score) in enumerate(found, start=1)]}
        from ..search.recall import close_source, relevant, search_healing, sync_index

        with self.search_lock:
            index, _synced, source = sync_index(self.store, index=self.index, strict=False)
            try:
                hits = relevant(search_healing(self.store, index, source, query, limit))
            finally:
                close_source(source)
        return {"mode": self.search_mode.name,
                "hits": [{"id": h.id, "score": h.score, "fts_rank": h.fts_rank, "vector_rank": h.vector_rank,
                          "similarity": h.similarity} for h in hits]}

    def org_settings(self) -> tuple[Any, str]:
        """(``OrgSettings``, this repository's org name) from the worktree's config.toml and the user's (cached
        copies, re-parsed only when a file changed: ``config.read_cached``); the name is derived again (git:
        the origin URL) only when the settings changed."""
        from ..org.repos import this_name
        from ..org.settings import of_config

        settings = of_config(config.read_cached(self.lay), config.read_user_cached(self.lay))[0]
        if self._org is None or self._org[0] != settings:
            self._org = (settings, this_name(settings, self.lay.root) if settings.configured else "")
        return self._org

    def op_org_search(self, params: dict[str, Any]) -> dict[str, Any]:
        """``org_search``: the organisation index's hits for ``params["query"]`` (at most ``params["limit"]``,
        default 10), without the repositories in ``params["exclude"]`` (absent: this one)."""
        from .. import shapes

        query, limit, exclude = params.get("query"), params.get("limit", 10), params.get("exclude")
        if (not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
                or not (exclude is None or (isinstance(exclude, list) and all(isinstance(x, str) for x in exclude)))):
            raise ValueError("org_search takes {\"query\": str, \"limit\": int >= 1, \"exclude\": [str]}")
        settings, own = self.org_settings()
        left_out = [own] if exclude is None and own else list(exclude or [])
        reply = {"configured": settings.configured, "exclude": left_out, "hits": [], "inject": settings.inject,
                 "session_budget": settings.session_budget, "prompt_budget": settings.prompt_budget}
        if not settings.configured or not query.strip():
            return reply
        from ..org.search import search as org_search

        with self.org_lock:  # org.search keeps its connection and table handles for the process: kept warm here
            hits = org_search(settings, query, limit=limit, exclude=left_out)
        reply["hits"] = [shapes.org_hit_json(h) for h in hits]
        return reply

    def op_status(self, params: dict[str, Any]) -> dict[str, Any]:
        """``status`` / ``ping``: who and how this process is."""
        return {"pid": os.getpid(), "version": __version__, "root": os.fspath(self.lay.root), "started": self.started,
                "uptime_s": round(time.monotonic() - self.started_mono, 3), "requests": self.requests,
                "idle_s": self.idle_s, "socket": os.fspath(self.socket_path), "rss_bytes": rss_bytes()}

    def op_stop(self, params: dict[str, Any]) -> dict[str, Any]:
        """``stop``: exit once the requests in flight are answered."""
        self.stopping.set()
        return {"stopping": True}

    def op_cli(self, params: dict[str, Any]) -> dict[str, Any]:
        """``cli``: ``gitmem ARGV`` run here as in the client's folder, output captured (``front.run_warm``).

        ``params``: ``{"argv": [str], "cwd": str, "env": {NAME: value} (``front.FORWARDED_ENV``),
        "stdout"/"stderr": {"encoding", "errors", "tty"}}``. Returns ``{"code": int, "stdout": base64,
        "stderr": base64}``: the bytes the command wrote, encoded as the client's streams encode.
        One command at a time (the folder, the standard streams and click's state are the process's).

        Raises:
            ValueError: a command off ``front.READ_COMMANDS`` (never run: the warm process writes
                nothing), or a folder outside this worktree.
        """
        import binascii
        import io

        from ..cli import main as cli_main
        from .front import FORWARDED_ENV, READ_COMMANDS

        argv, cwd, env = params.get("argv"), params.get("cwd"), params.get("env", {})
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)
                and argv[0] in READ_COMMANDS):
            raise ValueError(f"not a read command this process runs: {argv!r}")
        if not isinstance(cwd, str) or not isinstance(env, dict):
            raise ValueError("cli takes {\"argv\", \"cwd\", \"env\", \"stdout\", \"stderr\"}")
        root = layout.find_root(Path(cwd))
        if root is None or os.path.realpath(root) != os.fspath(self.lay.root):
            raise ValueError(f"{cwd} is not in {self.lay.root}")

        def stream(spec: Any) -> _Captured:
            spec = spec if isinstance(spec, dict) else {}
            return _Captured(io.BytesIO(), encoding=str(spec.get("encoding") or "utf-8"),
                             errors=str(spec.get("errors") or "strict"), tty=bool(spec.get("tty")))

        out, err = stream(params.get("stdout")), stream(params.get("stderr"))
        with self.cli_lock:
            if _client_gone(getattr(self._conn, "value", None)):
                # the client gave up waiting and ran the command itself: running it again here would do its
                # side records twice (``usage``: a ``show`` counted as two openings)
                raise ValueError("the client left before its turn (it ran the command itself)")
            saved_env = {k: os.environ.get(k) for k in FORWARDED_ENV}
            saved = sys.stdin, sys.stdout, sys.stderr
            old_cwd = os.getcwd()
            try:
                for k in FORWARDED_ENV:
                    v = env.get(k)
                    if isinstance(v, str):
                        os.environ[k] = v
                    else:
                        os.environ.pop(k, None)
                os.chdir(cwd)
                sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
                code = cli_main(list(argv))
                out.flush()
                err.flush()
            finally:
                sys.stdin, sys.stdout, sys.stderr = saved
                os.chdir(old_cwd)
                for k, v in saved_env.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        raw_out, raw_err = out.buffer.getvalue(), err.buffer.getvalue()  # type: ignore[attr-defined]
        return {"code": code, "stdout": binascii.b2a_base64(raw_out, newline=False).decode("ascii"),
                "stderr": binascii.b2a_base64(raw_err, newline=False).decode("ascii")}

    def _code_stamps(self) -> dict[str, int]:
        """Modification time (ns) of every gitmem source file this process has loaded."""
        stamps = {}
        for name, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if (name == "gitmem" or name.startswith("gitmem.")) and path:
                try:
                    stamps[path] = os.stat(path).st_mtime_ns
                except OSError:
                    stamps[path] = -1
        return stamps

    def code_changed(self) -> bool:
        """Whether a gitmem source file this process runs was replaced or edited since it loaded them (a
        ``pip install -U`` keeping the version string, an edit in a development checkout); looked at no
        more than once per ``CODE_CHECK_S``."""
        now = time.monotonic()
        if now - self._code_checked < CODE_CHECK_S:
            return False
        self._code_checked = now
        for path, stamp in self._code.items():
            try:
                if os.stat(path).st_mtime_ns != stamp:
                    return True
            except OSError:
                return True
        return False

    def warm(self) -> None:
        """Load what the first request would: LanceDB, the index tables, the embedding model, the catalog."""
        self.op_search({"query": "warm up", "limit": 1})
        import importlib

        for name in WARM_MODULES:
            importlib.import_module(name)
        try:  # the organisation index, when one is configured: its connection opened before a prompt needs it
            if self.org_settings()[0].configured:
                self.op_org_search({"query": "warm up", "limit": 1})
        except Exception as e:  # noqa: BLE001 - an unreachable store is each org_search's error, not the server's end
            client.log(self.lay, f"server: the organisation index could not be opened: {type(e).__name__}: {e}")
        self._code = self._code_stamps()

    # -- serving ------------------------------------------------------------------------------

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        """The reply to one decoded request (see ``client`` for the format)."""
        if req.get("protocol") != client.PROTOCOL or req.get("version") != __version__:
            self.stopping.set()
            return {"ok": False, "restart": True,
                    "error": f"server is gitmem {__version__} protocol {client.PROTOCOL}, client "
                             f"{req.get('version')} protocol {req.get('protocol')}"}
        if self.code_changed():
            self.stopping.set()
            return {"ok": False, "restart": True, "error": "gitmem's code changed (an upgrade or an edit)"}
        if req.get("config") != self.fingerprint:
            self.stopping.set()
            return {"ok": False, "restart": True, "error": "config.toml changed"}
        if os.path.realpath(str(req.get("root", ""))) != os.fspath(self.lay.root):
            if self._gone():  # the work tree was moved or removed: a new server serves it where it is now
                self.stopping.set()
                return {"ok": False, "restart": True, "error": f"{self.lay.root} is gone (moved or removed)"}
            return {"ok": False, "error": f"this process serves {self.lay.root}, not {req.get('root')}"}
        ops = {"search": self.op_search, "status": self.op_status, "ping": self.op_status, "stop": self.op_stop,
               "cli": self.op_cli, "org_search": self.op_org_search}
        op = req.get("op")
        fn = ops.get(op) if isinstance(op, str) else None
        if fn is None:
            return {"ok": False, "error": f"unknown op {op!r}"}
        params = req.get("params")
        return {"ok": True, "result": fn(params if isinstance(params, dict) else {})}

    def _serve_connection(self, conn: socket.socket) -> None:
        """Read one request line from ``conn``, answer it, close it; never raises."""
        try:
            with conn:
                uid = client.peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    client.log(self.lay, f"server: refused a connection from uid {uid}")
                    return
                conn.settimeout(REQUEST_READ_TIMEOUT_S)
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(1 << 16)
                    if not chunk:
                        break
                    data += chunk
                    if len(data) > MAX_REQUEST_BYTES:
                        return
                self._conn.value = conn
                try:
                    req = json.loads(data)
                    if not isinstance(req, dict):
                        raise ValueError("not an object")
                except ValueError as e:
                    reply: dict[str, Any] = {"ok": False, "error": f"bad request: {e}"}
                else:
                    try:
                        reply = self.handle(req)
                    except Exception as e:  # noqa: BLE001 - one request's failure is its reply, not the server's end
                        client.log(self.lay, f"server: {req.get('op')} failed:\n{infra.format_exception(e)}")
                        reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                conn.settimeout(None)
                conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError as e:
            client.log(self.lay, f"server: connection dropped: {type(e).__name__}: {e}")
        finally:
            with self._count_lock:
                self._active -= 1
                self.requests += 1
                self.last_request = time.monotonic()

    def _bind(self) -> socket.socket:
        """Listen on ``socket_path`` (0600), replacing a stale file (we hold the lock: no one else serves it).

        Raises:
            OSError: the folder cannot be made private or the socket cannot be bound.
        """
        folder = self.socket_path.parent
        if folder != self.lay.run_dir:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not client.private_dir_ok(folder):
                raise OSError(f"{folder} is not a private folder of this user (0700 and owned by uid {os.getuid()})")
        folder.mkdir(parents=True, exist_ok=True)
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(os.fspath(self.socket_path))
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        sock.listen(64)
        self._inode = os.stat(self.socket_path).st_ino
        return sock

    def _unbind(self) -> None:
        """Stop listening; remove the socket and the record if they are still this process's."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        try:
            if self._inode is not None and os.stat(self.socket_path).st_ino == self._inode:
                os.unlink(self.socket_path)
        except OSError:
            pass
        try:
            if json.loads(self.lay.daemon_pid_file.read_bytes()).get("pid") == os.getpid():
                os.unlink(self.lay.daemon_pid_file)
        except (OSError, ValueError, AttributeError):
            pass

    #: The connection each serving thread answers (``op_cli`` checks its client is still there).
    _conn = threading.local()

    def _gone(self) -> bool:
        """Whether the work tree this process serves, or its folder in git's (``layout.worktree_dir``), is gone:
        moved, or ``git worktree remove``d. Two ``stat`` calls."""
        return not (os.path.isdir(self.lay.root) and os.path.isdir(self.lay.worktree_dir))

    def _idle(self) -> bool:
        with self._count_lock:
            return self._active == 0 and time.monotonic() - self.last_request >= self.idle_s

    def run(self) -> None:
        """Bind, then accept connections (one thread each) until stopped, idle or outdated; then unbind.

        Raises:
            OSError: the socket cannot be bound.
        """
        self._listener = listener = self._bind()
        infra.atomic_write(self.lay.daemon_pid_file, json.dumps(
            {"pid": os.getpid(), "version": __version__, "socket": os.fspath(self.socket_path),
             "started": self.started}).encode(), fsync=False)
        client.log(self.lay, f"server: serving {self.lay.root} on {self.socket_path} (idle exit after "
                             f"{self.idle_s:g} s)")
        listener.settimeout(min(TICK_S, self.idle_s))
        self.last_request = time.monotonic()
        why = "stopped"
        try:
            while not self.stopping.is_set():
                if self._idle():
                    why = f"idle for {self.idle_s:g} s"
                    break
                if self._gone():
                    why = f"{self.lay.root} or its git folder is gone (moved, or the worktree removed)"
                    break
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with self._count_lock:
                    self._active += 1
                threading.Thread(target=self._serve_connection, args=(conn,), daemon=True).start()
        finally:
            self._unbind()
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:  # answer the requests in flight (the lock is released by the caller)
            with self._count_lock:
                if self._active == 0:
                    break
            time.sleep(0.02)
        client.log(self.lay, f"server: exit ({why}) after {self.requests} requests")


def main(argv: list[str] | None = None) -> int:
    """``python -m gitmem.daemon ROOT``: serve ROOT's worktree; 0 when done or when another process serves it."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m gitmem.daemon ROOT\n")
        return 2
    from ..git import scrub_git_env

    scrub_git_env()  # started from a git or agent hook: its GIT_DIR and the like are not this worktree's
    lay = layout.of(Path(os.path.realpath(args[0])))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        lay.run_dir.mkdir(parents=True, exist_ok=True)
        with infra.file_lock(lay.daemon_lock, timeout_s=LOCK_WAIT_S):
            server = Server(lay.root)
            server.stopping = stop
            server.warm()
            if not stop.is_set():
                server.run()
    except TimeoutError:
        return 0  # another process serves (or is starting to serve) this worktree
    except Exception as e:  # noqa: BLE001 - a detached process: its failure goes to the log, clients go in-process
        client.log(lay, f"server: could not serve {lay.root}:\n{infra.format_exception(e)}")
        return 1
    return 0
