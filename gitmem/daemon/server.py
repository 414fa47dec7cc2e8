"""The user's warm process (``python -m gitmem.daemon [--warm ROOT]``): every repository's and worktree's index,
catalog and settings kept open beside one embedding model, answering ``gitmem.daemon.client`` over one Unix
domain socket.

Owns: the server side of the protocol (``client`` owns the format), its life (one per user: the ``flock`` of
``<run>/daemon.lock`` (``layout.daemon_run_dir``) held from start to exit; a second starter exits quietly; exit
on ``stop --all``, SIGTERM, a client of another gitmem version or protocol, or when a gitmem source file it runs
changed on disk: the client is told ``restart``; exit once it holds no repository's state), each root's state
(``Root``: loaded by the first request naming it, dropped after that root's ``[daemon] idle_minutes`` without
a request, when it is gone (moved, ``git worktree remove``d), by ``gitmem daemon stop`` there, or the least
recently used one beyond ``MAX_ROOTS``; reloaded when the request's config.toml fingerprint differs: a changed
config reloads that root, not the process), and its socket: bound under a 0177 umask (the file is 0600) in the
user's 0700 run folder, a stale file of a killed server replaced, each peer's uid checked (``SO_PEERCRED``)
against its own.

Shared between roots: the embedding model (``search.embed`` keeps one per process), the imported libraries,
the organisation index's connections (``org.search``, per store URI), the content-keyed caches (symbol tables
by blob SHA), the search's vector matrices (``search.hybrid``, per catalog mark). Kept apart: the store, its
config and catalog, the ``[org]`` settings.

Ops (each request names its ``root``):

* ``search`` ``{"query": str, "limit": int}`` → ``{"hits": [{"id", "score", "fts_rank", "vector_rank",
  "similarity"}]}``: ``search.lexical.hybrid_hits`` (what ``gitmem recall`` runs cold; its vectors
  follow the catalog's change log on every request, so a memory written by any process is found by
  the next request). Serialised with the same root's other searches, never behind a CLI command.
* ``org_search`` ``{"query": str, "limit": int, "exclude": [str] (optional)}`` → ``{"configured", "exclude",
  "hits": [shapes.org_hit_json], "inject", "session_budget", "prompt_budget"}``: the organisation index's hits
  (``org.search.search``) for the root's ``[org]`` settings (its config.toml and the user's, re-read when
  they change: ``Root.org_settings``) through the long-lived connection and table handles ``org.search`` keeps for
  the process (LanceDB's caches of manifests and index files stay warm; each query still sees the latest commit),
  the root's own repository left out (``exclude`` absent: its org name, ``org.repos.this_name``). One at a time
  per root, beside (never behind) the local searches and CLI commands.
* ``ping`` / ``status`` ``{"all": bool}`` → the process (pid, version, started, uptime, requests served, requests
  dropped unworked and requests started by op, socket, RSS and PSS, roots loaded, ``MAX_ROOTS``), ``"root"``:
  the request's root's state or null (never loaded by asking), and with ``all``, ``"roots"``: every root's
  (``Root.info``).
* ``stop`` ``{"all": bool}`` → ``{"dropped": bool, "exiting": bool}``: without ``all``, the request's root's
  state dropped (and the process exits when that was its last root); with ``all``, the process exits once
  the requests in flight are answered.
* ``cli`` → ``{"code", "stdout", "stderr"}``: a read command of the ``gitmem`` CLI (``front.READ_COMMANDS``)
  run here by the same click command as in-process, in the client's folder (which must be in the request's
  root), its output captured (``op_cli``). One at a time, whatever the root: the current folder, the standard
  streams, the forwarded environment and click's state are the process's, set for each command and put back.

``search``, ``org_search`` and ``cli`` wait for their turn (their lock); when it comes, ``Server.begin`` starts
the work only if the client still waits for it (``client.START_LINE`` / ``client.GO_LINE``, the request's
``start_by``), else the request is dropped unworked (``status``: ``"dropped"``): its client did the work.

It never runs a write op: ``search`` only reads, and ``cli`` refuses every command off the read list."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
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
#: Seconds between two looks at the idle clocks and the stop flag while no request comes.
TICK_S = 0.5
#: Seconds a starting server waits for the daemon lock: a server told to restart releases it once it has
#: answered its requests in flight (a second starter of a running server just waits this long, then exits).
LOCK_WAIT_S = 10.0
#: Largest request line accepted (bytes).
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Seconds a connection may take to send its request.
REQUEST_READ_TIMEOUT_S = 5.0
#: Most roots whose state is kept at once; loading one more drops the least recently used. Each costs its
#: open catalog, search vectors and caches: ~10–25 MB at 1,000 memories (bench/daemon_rss.py), beside the
#: ~250 MB the process itself and the embedding model take once.
MAX_ROOTS = 16
#: Seconds the process stays up holding no root (its last one dropped, or none loaded): then it exits.
EMPTY_EXIT_S = 5.0
#: Seconds past a request's ``start_by`` the server waits for the client's ``go`` once it said ``start``: the
#: client answers at once (it is reading), so this only bounds a client stopped or gone without closing.
GO_GRACE_S = 1.0
#: Latest ``start_by`` accepted, in seconds after the request came: a client cannot hold a turn for longer.
MAX_START_WAIT_S = 600.0


#: Weight of a command's last duration in its running mean (an exponentially weighted moving average): the
#: estimate follows a change of load within a few commands without jumping at one slow one.
CLI_EWMA = 0.3
#: Seconds a command is guessed to take before one of its kind ran here (a warm read command: tens of ms to a
#: few tenths of a second on a loaded machine, bench/README.md).
CLI_GUESS_S = 0.2


class NotStarted(Exception):
    """A request whose turn came after its client's wait (``start_by`` passed, or no ``go``): dropped unworked,
    its client does the work."""


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


def pss_bytes() -> int | None:
    """Proportional set size of this process in bytes (``/proc/self/smaps_rollup``: shared pages divided among
    the processes mapping them), or None where there is none."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _root_log(lay: layout.Layout, line: str) -> None:
    """``client.log`` for a root this process holds, without making its folders again: the root may have been
    moved or deleted (then its ``<git common dir>/gitmem`` is gone, and ``client.log`` would create
    ``<old path>/.git/gitmem/logs/``: a deleted repository back as a folder, a moved one unable to move back)."""
    try:
        os.mkdir(lay.logs_dir)  # not ``parents``: only when the repository's gitmem folder is still there
    except FileExistsError:
        pass
    except OSError:
        return
    client.log(lay, line)


class _Captured(io.TextIOWrapper):
    """A standard stream for one ``cli`` request: text encoded as the client's stream encodes it, into a
    ``BytesIO``; a terminal when the client's stream is one (click and the commands ask ``isatty``)."""

    def __init__(self, buffer: io.BytesIO, *, encoding: str, errors: str, tty: bool) -> None:
        super().__init__(buffer, encoding=encoding, errors=errors, newline=None, write_through=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class Root:
    """One repository's (one worktree's) state in the warm process: its store (config, catalog), whether its
    search has run (its vectors then held by ``search.hybrid``), its ``[org]`` settings; the clocks ``status``
    shows.

    Raises (constructor): ValueError when ``root`` is not the top of a git work tree; whatever opening the store
    raises (NotARepository, NotInitialized, ConfigError).
    """

    def __init__(self, root: Path) -> None:
        from ..git import Repo
        from ..search import lexical
        from ..store import Store

        top = layout.find_root(root)
        if top is None or os.path.realpath(top) != os.fspath(root):
            raise ValueError(f"{root} is not the top folder of a git work tree")
        self.lay = layout.of(root)
        self.fingerprint = client.config_fingerprint(self.lay)
        self.store = Store(Repo(os.fspath(self.lay.root)))
        self.store.enable_symbol_cache()
        self.idle_s = config.daemon_idle_s(self.store.config)
        #: Without the all extra (a lean install): searches are BM25 over the catalog, no vector is loaded.
        self.search_mode = lexical.mode(self.store)
        self.searched = False  # a search of this root has run (its vectors are held): ``index_open`` in ``info``
        self.loaded = infra.utc_now()
        self.last_used = time.monotonic()
        self.requests = 0
        #: This root's searches run one at a time (one catalog writer); org searches too; the two never wait for
        #: each other nor for a CLI command.
        self.search_lock = threading.Lock()
        self.org_lock = threading.Lock()
        self._org: tuple[Any, str] | None = None  # (OrgSettings, this repository's org name) as last read

    def gone(self) -> bool:
        """Whether the work tree, or its folder in git's (``layout.worktree_dir``), is gone: moved, or
        ``git worktree remove``d. Two ``stat`` calls."""
        return not (os.path.isdir(self.lay.root) and os.path.isdir(self.lay.worktree_dir))

    def idle_for(self) -> float:
        """Seconds since this root's last request."""
        return time.monotonic() - self.last_used

    def info(self) -> dict[str, Any]:
        """``{"root", "loaded" (UTC), "requests", "idle_for_s", "idle_timeout_s", "index_open"}``; ``index_open``:
        a search of this root has run here (its search's state is loaded)."""
        return {"root": os.fspath(self.lay.root), "loaded": self.loaded, "requests": self.requests,
                "idle_for_s": round(self.idle_for(), 3), "idle_timeout_s": self.idle_s,
                "index_open": self.searched}

    def search(self, params: dict[str, Any], begin: Callable[[], None] = lambda: None) -> dict[str, Any]:
        """``search``: the hybrid hits of ``params["query"]`` (at most ``params["limit"]``, default 10); without
        the all extra, the catalog's BM25 hits (``search.lexical``; no ``vector_rank``). ``"mode"``: which.
        ``begin`` is called when its turn comes (``Server.begin``; it raises ``NotStarted`` to drop it)."""
        query = params.get("query")
        limit = params.get("limit", 10)
        if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError("search takes {\"query\": str, \"limit\": int >= 1}")
        if self.search_mode.lean:
            from ..search import lexical

            with self.search_lock:
                begin()
                found = lexical.search(self.store, query, limit)
                self.searched = True
            return {"mode": self.search_mode.name,
                    "hits": [{"id": mid, "score": score, "fts_rank": rank, "vector_rank": None, "similarity": None}
                             for rank, (mid, score) in enumerate(found, start=1)]}
        from ..search.lexical import hybrid_hits

        with self.search_lock:  # the one hybrid search, as `gitmem recall` runs it cold (warm == cold)
            begin()
            hits = hybrid_hits(self.store, query, limit)
            self.searched = True
        return {"mode": self.search_mode.name,
                "hits": [{"id": h.id, "score": h.score, "fts_rank": h.fts_rank, "vector_rank": h.vector_rank,
                          "similarity": h.similarity} for h in hits]}

    def org_settings(self) -> tuple[Any, str]:
        """(``OrgSettings``, this repository's org name) from the root's config.toml and the user's (cached
        copies, re-parsed only when a file changed: ``config.read_cached``); the name is derived again (git:
        the origin URL) only when the settings changed."""
        from ..org.repos import this_name
        from ..org.settings import of_config

        settings = of_config(config.read_cached(self.lay), config.read_user_cached(self.lay))[0]
        if self._org is None or self._org[0] != settings:
            self._org = (settings, this_name(settings, self.lay.root) if settings.configured else "")
        return self._org

    def org_search(self, params: dict[str, Any], begin: Callable[[], None] = lambda: None) -> dict[str, Any]:
        """``org_search``: the organisation index's hits for ``params["query"]`` (at most ``params["limit"]``,
        default 10), without the repositories in ``params["exclude"]`` (absent: this one). ``begin``: see
        ``search``."""
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
            begin()
            hits = org_search(settings, query, limit=limit, exclude=left_out)
        reply["hits"] = [shapes.org_hit_json(h) for h in hits]
        return reply


class Server:
    """The user's warm process. ``run()`` serves until stopped, outdated, or holding no root.

    Raises (constructor): OSError when the run folder cannot be made private (``client.make_run_dir``).
    """

    def __init__(self) -> None:
        self.run_dir = client.make_run_dir()
        self.socket_path = layout.daemon_socket()
        self.record = self.run_dir / "daemon.json"
        self.started = infra.utc_now()
        self.started_mono = time.monotonic()
        self.requests = 0
        #: Requests dropped before their work started (their client did it: ``begin``), and those started, by op.
        self.dropped = 0
        self.started_ops: dict[str, int] = {}
        self.last_request = time.monotonic()
        self.stopping = threading.Event()
        self._count_lock = threading.Lock()
        self._active = 0
        #: Root state by real path; ``_roots_lock`` guards the dict, each ``_loading`` lock one root's (re)load.
        self.roots: dict[str, Root] = {}
        self._roots_lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}
        #: CLI commands one at a time, whatever their root (cwd, click's state, stdout are the process's); the
        #: commands waiting for it, the one holding it (name, ``time.monotonic`` of its start), the mean time
        #: each command took (``_cli_eta``).
        self.cli_lock = threading.Lock()
        self._cli_waiting: dict[object, str] = {}
        self._cli_running: tuple[str, float] | None = None
        self._cli_took: dict[str, float] = {}
        self._listener: socket.socket | None = None
        self._code = self._code_stamps()
        self._code_checked = 0.0
        self._inode: int | None = None

    # -- roots --------------------------------------------------------------------------------

    def root_for(self, req: dict[str, Any]) -> Root:
        """The state of the request's root, loaded when absent and reloaded when the request's config.toml
        fingerprint differs from the one it was loaded with; its clock and count touched.

        Raises:
            ValueError: no root, or one that is not the top of a git work tree; what ``Root`` raises.
        """
        raw = req.get("root")
        if not isinstance(raw, str) or not os.path.isabs(raw):
            raise ValueError("the request names no root (an absolute path)")
        path = os.path.realpath(raw)
        with self._roots_lock:
            state = self.roots.get(path)
            load_lock = self._loading.setdefault(path, threading.Lock())
        if state is None or state.fingerprint != req.get("config") or state.gone():
            with load_lock:
                with self._roots_lock:
                    state = self.roots.get(path)
                if state is not None and state.gone():
                    self.drop(path, "gone (moved, or the worktree removed)")
                    state = None
                if state is not None and state.fingerprint != req.get("config"):
                    self.drop(path, "config.toml changed: reloading it")
                    state = None
                if state is None:
                    state = Root(Path(path))
                    with self._roots_lock:
                        self.roots[path] = state
                        over = sorted((r for p, r in self.roots.items() if p != path),
                                      key=lambda r: r.last_used)[:max(len(self.roots) - MAX_ROOTS, 0)]
                    for old in over:
                        self.drop(os.fspath(old.lay.root), f"more than {MAX_ROOTS} roots: the least recently used")
                    self._say(state, f"serving {path} (idle drop after {state.idle_s:g} s)")
        state.last_used = time.monotonic()
        state.requests += 1
        return state

    def drop(self, path: str, why: str) -> bool:
        """Forget root ``path``'s state (its index, catalog, settings); whether it was loaded. Its memory goes
        back to the allocator (LanceDB's and Arrow's pools may keep some for the next root)."""
        with self._roots_lock:
            state = self.roots.pop(path, None)
            self._loading.pop(path, None)
        if state is None:
            return False
        self._say(state, f"dropped {path}: {why}")
        del state
        import gc

        gc.collect()
        return True

    def _say(self, state: Root, line: str) -> None:
        """Log ``line`` to the server's log and to the root's own ``daemon.log``."""
        client.log_server(f"server: {line}")
        _root_log(state.lay, f"server: {line}")

    # -- ops ----------------------------------------------------------------------------------

    def op_status(self, req: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """``status`` / ``ping``: who and how this process is; the request's root's state; every root's with
        ``params["all"]``. Loads nothing."""
        raw = req.get("root")
        with self._roots_lock:
            roots = list(self.roots.values())
            mine = self.roots.get(os.path.realpath(raw)) if isinstance(raw, str) and raw else None
        reply: dict[str, Any] = {
            "pid": os.getpid(), "version": __version__, "started": self.started,
            "uptime_s": round(time.monotonic() - self.started_mono, 3), "requests": self.requests,
            "dropped": self.dropped, "started_ops": dict(self.started_ops),
            "socket": os.fspath(self.socket_path), "rss_bytes": rss_bytes(), "pss_bytes": pss_bytes(),
            "roots_loaded": len(roots), "max_roots": MAX_ROOTS, "root": mine.info() if mine else None}
        if params.get("all"):
            reply["roots"] = [r.info() for r in sorted(roots, key=lambda r: os.fspath(r.lay.root))]
        return reply

    def op_stop(self, req: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """``stop``: with ``params["all"]``, exit once the requests in flight are answered; else drop the
        request's root (and exit when it was the last one)."""
        if params.get("all"):
            self.stopping.set()
            return {"dropped": False, "exiting": True}
        raw = req.get("root")
        dropped = isinstance(raw, str) and bool(raw) and self.drop(os.path.realpath(raw), "gitmem daemon stop")
        with self._roots_lock:
            last = not self.roots
        if last:
            self.stopping.set()
        return {"dropped": dropped, "exiting": last}

    def op_cli(self, req: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """``cli``: ``gitmem ARGV`` run here as in the client's folder, output captured (``front.run_warm``).

        ``params``: ``{"argv": [str], "cwd": str, "env": {NAME: value} (``front.FORWARDED_ENV``),
        "stdout"/"stderr": {"encoding", "errors", "tty"}}``. Returns ``{"code": int, "stdout": base64,
        "stderr": base64}``: the bytes the command wrote, encoded as the client's streams encode.
        One command at a time, whatever its root (the folder, the standard streams, the forwarded environment
        and click's state are the process's: set for this command, put back after it).

        Raises:
            ValueError: a command off ``front.READ_COMMANDS`` (never run: the warm process writes
                nothing), or a folder outside the request's root.
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
        state = self.root_for(req)
        root = layout.find_root(Path(cwd))
        if root is None or os.path.realpath(root) != os.fspath(state.lay.root):
            raise ValueError(f"{cwd} is not in {state.lay.root}")

        def stream(spec: Any) -> _Captured:
            spec = spec if isinstance(spec, dict) else {}
            return _Captured(io.BytesIO(), encoding=str(spec.get("encoding") or "utf-8"),
                             errors=str(spec.get("errors") or "strict"), tty=bool(spec.get("tty")))

        out, err = stream(params.get("stdout")), stream(params.get("stderr"))
        with self._cli_turn(req, argv[0]):  # not run when its client left (it ran the command itself)
            saved_env = {k: os.environ.get(k) for k in FORWARDED_ENV}
            saved = sys.stdin, sys.stdout, sys.stderr
            old_cwd = os.fspath(self.run_dir)  # the process's own folder (``main``): no repository's
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
                try:
                    os.chdir(old_cwd)
                except OSError:
                    os.chdir("/")
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

    def warm(self, root: str | None) -> None:
        """Load what the first request for ``root`` would: its catalog and search vectors, the embedding model,
        the CLI's modules, its organisation index when configured. A root that cannot be loaded is logged (the
        process still serves others; it exits after ``EMPTY_EXIT_S`` when none comes)."""
        import importlib

        if root:
            try:
                lay = layout.of(Path(os.path.realpath(root)))
                state = self.root_for({"root": os.fspath(lay.root), "config": client.config_fingerprint(lay)})
                state.requests -= 1  # warming is not a request
                state.search({"query": "warm up", "limit": 1})
            except Exception as e:  # noqa: BLE001 - one root's failure is not the process's end
                client.log_server(f"server: could not load {root}:\n{infra.format_exception(e)}")
                state = None
        else:
            state = None
        for name in WARM_MODULES:
            importlib.import_module(name)
        if state is not None:
            state.last_used = time.monotonic()  # its idle clock starts when it is ready, not when loading began
            try:  # the organisation index, when one is configured: its connection opened before a prompt needs it
                if state.org_settings()[0].configured:
                    state.org_search({"query": "warm up", "limit": 1})
            except Exception as e:  # noqa: BLE001 - an unreachable store is each org_search's error, not the server's end
                client.log(state.lay, f"server: the organisation index could not be opened: {type(e).__name__}: {e}")
        self._code = self._code_stamps()

    # -- serving ------------------------------------------------------------------------------

    def _cli_eta(self) -> float:
        """Seconds until a ``cli`` request queued now would start: what the running command has left and the
        waiting ones take, each by the mean time of its command (``CLI_EWMA``; ``CLI_GUESS_S`` before one ran).
        The caller holds ``_count_lock``."""
        took = self._cli_took
        eta = sum(took.get(name, CLI_GUESS_S) for name in self._cli_waiting.values())
        if self._cli_running is not None:
            name, began = self._cli_running
            eta += max(took.get(name, CLI_GUESS_S) - (time.monotonic() - began), 0.0)
        return eta

    @contextlib.contextmanager
    def _cli_turn(self, req: dict[str, Any], name: str) -> Iterator[None]:
        """Queue for the CLI lock as command ``name``: tell the client first (``client.QUEUED``: how many are
        ahead and ``_cli_eta``), then hold the lock and ``begin`` (raises ``NotStarted``); the time the command
        took goes into its mean (``CLI_EWMA``)."""
        conn: socket.socket | None = getattr(self._conn, "value", None)
        ticket = object()
        with self._count_lock:
            ahead, eta = len(self._cli_waiting) + (self._cli_running is not None), self._cli_eta()
            self._cli_waiting[ticket] = name
        try:
            if conn is not None:
                try:
                    conn.sendall(json.dumps({client.QUEUED: ahead, "eta_s": round(eta, 3)}).encode() + b"\n")
                except OSError as e:
                    raise NotStarted(f"its client left ({type(e).__name__})") from e
            with self.cli_lock:
                with self._count_lock:
                    self._cli_waiting.pop(ticket, None)
                    self._cli_running = (name, time.monotonic())
                try:
                    self.begin(req)
                    began = time.monotonic()
                    yield
                    with self._count_lock:
                        old = self._cli_took.get(name)
                        took = time.monotonic() - began
                        self._cli_took[name] = took if old is None else old + CLI_EWMA * (took - old)
                finally:
                    with self._count_lock:
                        self._cli_running = None
        finally:
            with self._count_lock:
                self._cli_waiting.pop(ticket, None)

    def begin(self, req: dict[str, Any]) -> None:
        """Start the work of ``req`` (its turn came: the caller holds the lock it queued for) only if its client
        still waits: not past its ``start_by``, and the client answers ``client.GO_LINE`` to ``client.START_LINE``
        (within ``start_by`` + ``GO_GRACE_S``). A client that left (it does the work itself) closes instead.
        Counts each request started by op (``status``: ``"started_ops"``).

        Raises:
            NotStarted: its client no longer waits for it (the request is dropped, unworked).
        """
        conn: socket.socket | None = getattr(self._conn, "value", None)
        op = str(req.get("op"))
        if conn is not None:
            start_by = req.get("start_by")
            if isinstance(start_by, (int, float)) and not isinstance(start_by, bool):
                start_by = min(float(start_by), self._came.value + MAX_START_WAIT_S)
                if time.time() > start_by:
                    raise NotStarted(f"its turn came {time.time() - start_by:.3f} s after its client's wait")
            else:
                start_by = time.time()
            try:
                conn.settimeout(max(start_by - time.time(), 0.0) + GO_GRACE_S)
                conn.sendall(client.START_LINE)
                answer = conn.recv(len(client.GO_LINE))
            except OSError as e:  # TimeoutError among them
                raise NotStarted(f"no answer to its turn ({type(e).__name__})") from e
            if answer != client.GO_LINE:
                raise NotStarted("its client left before its turn (it did the work itself)")
        with self._count_lock:
            self.started_ops[op] = self.started_ops.get(op, 0) + 1

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        """The reply to one decoded request (see ``client`` for the format)."""
        if req.get("protocol") != client.PROTOCOL or req.get("version") != __version__:
            self.stopping.set()
            return {"ok": False, "restart": True,
                    "error": f"server is gitmem {__version__} protocol {client.PROTOCOL}, client "
                             f"{req.get('version')} protocol {req.get('protocol')}"}
        if req.get("install", client.INSTALL) != client.INSTALL:
            self.stopping.set()
            return {"ok": False, "restart": True,
                    "error": f"the warm process runs another install of gitmem ({client.INSTALL.partition(':')[0]})"}
        if self.code_changed():
            self.stopping.set()
            return {"ok": False, "restart": True, "error": "gitmem's code changed (an upgrade or an edit)"}
        op = req.get("op")
        params = req.get("params")
        params = params if isinstance(params, dict) else {}
        if op in ("status", "ping"):
            return {"ok": True, "result": self.op_status(req, params)}
        if op == "stop":
            return {"ok": True, "result": self.op_stop(req, params)}
        if op == "cli":
            return {"ok": True, "result": self.op_cli(req, params)}
        if op == "search":
            return {"ok": True, "result": self.root_for(req).search(params, lambda: self.begin(req))}
        if op == "org_search":
            return {"ok": True, "result": self.root_for(req).org_search(params, lambda: self.begin(req))}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _serve_connection(self, conn: socket.socket) -> None:
        """Read one request line from ``conn``, answer it, close it; never raises."""
        try:
            with conn:
                uid = client.peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    client.log_server(f"server: refused a connection from uid {uid}")
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
                self._came.value = time.time()
                try:
                    req = json.loads(data)
                    if not isinstance(req, dict):
                        raise ValueError("not an object")
                except ValueError as e:
                    reply: dict[str, Any] = {"ok": False, "error": f"bad request: {e}"}
                else:
                    try:
                        reply = self.handle(req)
                    except NotStarted as e:
                        self._dropped(req, str(e))
                        return
                    except Exception as e:  # noqa: BLE001 - one request's failure is its reply, not the server's end
                        client.log_server(f"server: {req.get('op')} for {req.get('root')} failed:\n"
                                          f"{infra.format_exception(e)}")
                        reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                conn.settimeout(None)
                conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError as e:
            client.log_server(f"server: connection dropped: {type(e).__name__}: {e}")
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
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not client.private_dir_ok(folder):
            raise OSError(f"{folder} is not a private folder of this user (0700 and owned by uid {os.getuid()})")
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
            if json.loads(self.record.read_bytes()).get("pid") == os.getpid():
                os.unlink(self.record)
        except (OSError, ValueError, AttributeError):
            pass

    #: The connection each serving thread answers, and when its request came (``time.time``): ``begin``.
    _conn = threading.local()
    _came = threading.local()

    def _dropped(self, req: dict[str, Any], why: str) -> None:
        """Count and log a request dropped before its work started (``NotStarted``)."""
        with self._count_lock:
            self.dropped += 1
        argv = req.get("params", {}).get("argv") if isinstance(req.get("params"), dict) else None
        what = f"{req.get('op')} {' '.join(argv[:1]) if isinstance(argv, list) else ''}".strip()
        client.log_server(f"server: dropped {what} for {req.get('root')}, not started: {why}")

    def _tidy_roots(self) -> None:
        """Drop the roots that are gone or idle past their ``[daemon] idle_minutes``."""
        with self._roots_lock:
            roots = list(self.roots.items())
        for path, state in roots:
            if state.gone():
                self.drop(path, "gone (moved, or the worktree removed)")
            elif state.idle_for() >= state.idle_s:
                self.drop(path, f"idle for {state.idle_s:g} s")

    def _empty(self) -> bool:
        """Whether the process holds no root, answers no request, and has had none for ``EMPTY_EXIT_S``."""
        with self._roots_lock:
            if self.roots:
                return False
        with self._count_lock:
            return self._active == 0 and time.monotonic() - self.last_request >= EMPTY_EXIT_S

    def run(self) -> None:
        """Bind, then accept connections (one thread each) until stopped, outdated or holding no root; then unbind.

        Raises:
            OSError: the socket cannot be bound.
        """
        self._listener = listener = self._bind()
        infra.atomic_write(self.record, json.dumps(
            {"pid": os.getpid(), "version": __version__, "socket": os.fspath(self.socket_path),
             "started": self.started}).encode(), fsync=False)
        client.log_server(f"server: gitmem {__version__} serving on {self.socket_path}")
        with self._roots_lock:
            shortest = min([r.idle_s for r in self.roots.values()] + [TICK_S])
        listener.settimeout(min(TICK_S, shortest))
        self.last_request = time.monotonic()
        why = "stopped"
        try:
            while not self.stopping.is_set():
                self._tidy_roots()
                if self._empty():
                    why = "no repository left to serve"
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
        with self._roots_lock:
            left = list(self.roots.values())
        for state in left:
            _root_log(state.lay, f"server: exit ({why})")
        client.log_server(f"server: exit ({why}) after {self.requests} requests")


def main(argv: list[str] | None = None) -> int:
    """``python -m gitmem.daemon [--warm ROOT]``: the user's warm process (ROOT's state loaded first); 0 when
    done or when another process serves, 1 when it could not serve, 2 on a usage error."""
    args = sys.argv[1:] if argv is None else argv
    warm = None
    if len(args) == 2 and args[0] == "--warm":
        warm = args[1]
    elif args:
        sys.stderr.write("usage: python -m gitmem.daemon [--warm ROOT]\n")
        return 2
    from ..git import no_fetching, scrub_git_env

    scrub_git_env()  # started from a git or agent hook: its GIT_DIR and the like are no root's
    no_fetching()  # its answers are due in seconds: an object a partial clone lacks is said, not fetched
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        run = client.make_run_dir()
        os.chdir(run)  # not any repository's folder: one may be removed while this process serves others
        with infra.file_lock(run / "daemon.lock", timeout_s=LOCK_WAIT_S):
            try:
                os.unlink(run / client.STARTING_NAME)  # this process starts: the next client may start another
            except OSError:
                pass
            record = run / "daemon.json"
            # its pid known from now on, not only once it serves (after seconds of loading): ``gitmem daemon stop
            # --all`` right after the start message can then end it (``ops.daemon._end``)
            infra.atomic_write(record, json.dumps({"pid": os.getpid(), "version": __version__, "starting": True,
                                                   "started": infra.utc_now()}).encode(), fsync=False)
            try:
                server = Server()
                server.stopping = stop
                server.warm(warm)
                if not stop.is_set():
                    server.run()
            finally:
                try:
                    if json.loads(record.read_bytes()).get("pid") == os.getpid():
                        os.unlink(record)
                except (OSError, ValueError, AttributeError):
                    pass
    except TimeoutError:
        return 0  # another process serves (or is starting to serve) this user
    except Exception as e:  # noqa: BLE001 - a detached process: its failure goes to the log, clients go in-process
        client.log_server(f"server: could not serve:\n{infra.format_exception(e)}")
        return 1
    return 0
