"""``gitmem daemon status|stop [--all]`` and ``doctor``'s look at the warm process (``gitmem.daemon``).

One warm process per user serves every repository and worktree (``layout.daemon_run_dir``). Without ``--all``
the commands mean this repository: ``status`` says whether the process runs and whether it holds this root's
state; ``stop`` drops this root's state (the process ends when that was its last root). With ``--all`` they mean
the process: ``status --all`` lists every root it serves, its resident memory and each root's idle time;
``stop --all`` ends it, and the per-worktree processes of gitmem before 0.2 this user still runs.

States of the warm process, by what can be seen from outside:

* ``running``: it answers on its socket (``status`` gives pid, uptime, requests, RSS, the roots).
* ``starting``: a process holds the daemon lock and has not written its record yet (it binds its socket
  once LanceDB and the embedding model are loaded: seconds).
* ``not answering``: a process holds the lock, has written its record, and does not answer in time (stuck,
  or busy past the wait).
* ``not running``: nothing holds the lock. A socket or record file left behind (a SIGKILL, a crash)
  is stale: ``clean_stale`` removes it under the lock, as the next server would.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config, infra, layout
from ..daemon import client
from ..layout import Layout

#: Seconds ``stop`` waits for the process to exit after asking it (it first answers the requests in flight).
STOP_WAIT_S = 5.0
#: Seconds ``stop`` waits after SIGKILL (the last resort for a process that neither answers nor ends on
#: SIGTERM: stuck, or stopped with SIGSTOP). It holds only derived state (index, caches), so killing loses nothing.
KILL_WAIT_S = 2.0


@dataclass
class DaemonState:
    """What ``status`` found.

    Attributes:
        state: ``running``, ``starting``, ``not answering`` or ``not running``.
        enabled: commands of this repository may use the warm process (``client.enabled``); True for ``--all``.
        socket: the socket path (``layout.daemon_socket``).
        idle_minutes: ``[daemon] idle_minutes`` of this repository's config (after which its state is dropped).
        info: the process's own ``status`` answer when running (pid, version, started, uptime_s, requests,
            socket, rss_bytes, pss_bytes, roots_loaded, max_roots, ``root``: this repository's state or None,
            ``roots`` with ``--all``), else {}; ``pid`` from its record file when not answering.
        stale: files of a dead process still there (socket, record), as display paths.
        legacy: per-worktree processes of gitmem before 0.2 (``legacy_servers``): ``{"pid", "root", "rss_bytes"}``.
        legacy_note: why those could not be looked for ("" when they could).
        problem: why no warm process can run here ("" when one can: ``unusable_folder``), when none runs.
    """

    state: str
    enabled: bool
    socket: str
    idle_minutes: float
    info: dict[str, Any] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    legacy: list[dict[str, Any]] = field(default_factory=list)
    legacy_note: str = ""
    problem: str = ""


def unusable_folder() -> str:
    """Why the warm process's folders cannot be used ("" when they can): the run folder or the socket's exists but
    is not a private folder of this user (a link, another owner, a mode letting others in, not a folder). Then no
    process ever starts and every command runs in its own process (``client.make_run_dir`` never chmods it)."""
    for folder in dict.fromkeys((layout.daemon_run_dir(), layout.daemon_socket().parent)):
        if os.path.lexists(folder) and not client.private_dir_ok(folder):
            return (f"{folder} is not a private folder of this user (a folder, not a link, owned by uid "
                    f"{os.getuid()}, mode 0700): no warm process starts, every command runs cold")
    return ""


def _record() -> dict[str, Any]:
    """The running process's record file (``<run>/daemon.json``), or {}."""
    try:
        data = json.loads((layout.daemon_run_dir() / "daemon.json").read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _files() -> list[Path]:
    return [layout.daemon_socket(), layout.daemon_run_dir() / "daemon.json"]


def status(lay: Layout | None, *, timeout_s: float = 2.0, all_roots: bool = False) -> DaemonState:
    """The state of the user's warm process, as seen from ``lay``'s repository (None: from nowhere, for
    ``--all``); ``all_roots``: every root it serves, and the older per-worktree processes. Never starts one."""
    idle = config.daemon_idle_s(config.read_cached(lay)) / 60.0 if lay is not None else config.DEFAULT_IDLE_MINUTES
    st = DaemonState("not running", client.enabled(lay) if lay is not None else True,
                     os.fspath(layout.daemon_socket()), idle)
    info = client.status(lay, timeout_s=timeout_s, all_roots=all_roots)
    if info is not None:
        st.state, st.info = "running", info
    elif client.running():
        record = _record()
        pid = record.get("pid")
        st.state = "not answering" if isinstance(pid, int) and not record.get("starting") else "starting"
        st.info = {"pid": pid} if isinstance(pid, int) else {}
    else:
        st.stale = [lay.display(p) if lay else os.fspath(p) for p in _files() if os.path.lexists(p)]
        st.problem = unusable_folder()
    if all_roots:
        found = legacy_servers()
        st.legacy, st.legacy_note = (found, "") if found is not None else ([], LEGACY_UNKNOWN)
    return st


def clean_stale(lay: Layout | None = None) -> list[str]:
    """Remove a dead process's socket and record file, under the daemon lock (so never a live one's).

    Returns the paths that could not be removed ([] when all went, or when a process holds the
    lock: then they are not stale).
    """
    def show(p: Path) -> str:
        return lay.display(p) if lay is not None else os.fspath(p)

    left = []
    try:
        with infra.file_lock(layout.daemon_run_dir() / "daemon.lock", timeout_s=0):
            for p in _files():
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
                except OSError:
                    left.append(show(p))
    except TimeoutError:
        return []
    except OSError:
        return [show(p) for p in _files() if os.path.lexists(p)]
    return left


def _cmdline(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return None


def _is_server(pid: int) -> bool:
    """Whether process ``pid`` runs ``python -m gitmem.daemon`` (``/proc``; False where it cannot tell)."""
    argv = _cmdline(pid)
    return argv is not None and client.SERVER_MODULE.encode() in argv


#: What ``status --all`` / ``stop --all`` say where the older per-worktree processes cannot be looked for.
LEGACY_UNKNOWN = ("per-worktree warm processes of gitmem before 0.2 cannot be looked for here (no /proc): each "
                  "exits after its [daemon] idle_minutes (30 by default)")


def _run_dir_env(pid: int) -> str | None:
    """``$GITMEM_RUN_DIR`` in process ``pid``'s environment ("" when unset), None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    key = layout.RUN_DIR_ENV.encode() + b"="
    return next((os.fsdecode(e[len(key):]) for e in env if e.startswith(key)), "")


def legacy_servers() -> list[dict[str, Any]] | None:
    """The per-worktree warm processes of gitmem before 0.2 run by this user: ``python -m gitmem.daemon ROOT``
    (one argument that is not an option; this version's is ``--warm ROOT`` or none), as ``{"pid", "root",
    "rss_bytes"}``; None where processes cannot be listed (no ``/proc``).

    Only those started with the same ``$GITMEM_RUN_DIR`` as this process (both unset, usually): a test or a
    benchmark that sets it to a folder of its own sees only the processes it started."""
    if not os.path.isdir("/proc/self"):
        return None
    found = []
    module = client.SERVER_MODULE.encode()
    scope = os.environ.get(layout.RUN_DIR_ENV, "")
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
        except OSError:
            continue
        argv = [a for a in (_cmdline(int(entry)) or []) if a]
        if module not in argv:
            continue
        rest = argv[argv.index(module) + 1:]
        if len(rest) != 1 or rest[0].startswith(b"-") or _run_dir_env(int(entry)) != scope:
            continue
        found.append({"pid": int(entry), "root": os.fsdecode(rest[0]), "rss_bytes": _rss(int(entry))})
    return sorted(found, key=lambda d: d["pid"])


def _rss(pid: int) -> int | None:
    """Resident memory of process ``pid`` in bytes (``/proc/PID/statm``), or None."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def stop(lay: Layout) -> tuple[bool, str]:
    """Drop ``lay``'s repository's state from the warm process; the process exits when that was its last root.
    A process that does not answer is ended as ``stop_all`` does (a stuck process serves no one).

    Returns (whether the warm process no longer holds this repository, one line saying what happened).
    """
    if not client.running():
        clean_stale(lay)
        return True, "no warm process was running"
    answer = client.stop(lay, timeout_s=1.0, all_roots=False)
    if answer is None:
        return _end(lay, None)
    pid = _record().get("pid", "?")
    if answer.get("exiting"):
        gone = _wait_gone(STOP_WAIT_S)
        what = "this repository was its only one" if answer.get("dropped") else "it held no repository"
        return True, (f"stopped: process {pid} ({what})" if gone else
                      f"process {pid} is exiting ({what}); it answers the requests in flight first")
    if answer.get("dropped"):
        return True, (f"dropped this repository's state from the warm process (pid {pid}); it keeps serving the "
                      "others (`gitmem daemon stop --all` ends it)")
    return True, f"the warm process (pid {pid}) held no state of this repository"


def stop_all(lay: Layout | None = None) -> tuple[bool, str]:
    """End the user's warm process (asked over its socket, else SIGTERM to the pid of its record when that
    process is gitmem's server; SIGKILL when it still runs ``STOP_WAIT_S`` later: it holds only derived state),
    waiting until it has released its lock; then SIGTERM the per-worktree processes of gitmem before 0.2
    (``legacy_servers``), waiting for them too.

    Returns (whether none of them runs now, one line per thing done, joined by newlines).
    """
    ok, line = (True, "no warm process was running") if not client.running() else _end(lay, "all")
    lines = [line]
    old = legacy_servers()
    if old is None:
        lines.append(LEGACY_UNKNOWN)
    for proc in old or []:
        pid = proc["pid"]
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        except OSError as e:
            ok = False
            lines.append(f"could not signal the older per-worktree process {pid} of {proc['root']}: "
                         f"{e.strerror or e}")
            continue
        deadline = time.monotonic() + STOP_WAIT_S
        while _is_server(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_server(pid):
            ok = False
            lines.append(f"the older per-worktree process {pid} of {proc['root']} still runs after SIGTERM "
                         f"(kill {pid})")
        else:
            lines.append(f"stopped an older per-worktree process (gitmem before 0.2): {pid} of {proc['root']}")
    return ok, "\n".join(lines)


def _end(lay: Layout | None, how_asked: str | None) -> tuple[bool, str]:
    """End the running warm process: asked over its socket (``how_asked``: "all"; None: it did not answer
    already), else SIGTERM, else SIGKILL. Returns (whether it ended, one line)."""
    info = client.status(lay, timeout_s=1.0) if how_asked else None
    pid = info.get("pid") if info else _record().get("pid")
    how = "stopped"
    if not (how_asked and client.stop(lay, timeout_s=1.0, all_roots=True) is not None):
        if not isinstance(pid, int) or not _is_server(pid):
            return False, "a process holds the warm process's lock but does not answer, and its pid is unknown"
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError as e:
            return False, f"could not signal process {pid}: {e.strerror or e}"
        how = "stopped (SIGTERM: it did not answer)"
    if _wait_gone(STOP_WAIT_S):
        return True, f"{how}: process {pid}" if pid else how
    if not isinstance(pid, int) or not _is_server(pid):
        return False, f"the warm process still runs after {STOP_WAIT_S:g} s and its pid is unknown"
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as e:
        return False, f"could not kill process {pid}: {e.strerror or e}"
    if _wait_gone(KILL_WAIT_S):
        clean_stale(lay)
        return True, f"killed (SIGKILL: it did not end within {STOP_WAIT_S:g} s): process {pid}"
    return False, f"process {pid} still runs after SIGKILL (kill -9 {pid} by hand, as its owner)"


def _wait_gone(seconds: float) -> bool:
    """Whether the warm process released its lock within ``seconds`` (polled every 50 ms)."""
    deadline = time.monotonic() + seconds
    while client.running():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
