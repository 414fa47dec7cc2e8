"""``gitmem daemon status|stop`` and ``doctor``'s look at the warm process (``gitmem.daemon``).

States of a worktree's warm process, by what can be seen from outside:

* ``running``: it answers on its socket (``status`` gives pid, uptime, requests, RSS).
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
from typing import Any

from .. import config, infra
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
        enabled: commands may use a warm process (``client.enabled``).
        socket: the socket path (``layout.daemon_socket``).
        idle_minutes: ``[daemon] idle_minutes`` of the config (what a new process would use).
        info: the process's own ``status`` answer when running (pid, version, root, started, uptime_s,
            requests, idle_s, socket, rss_bytes), else {}; ``pid`` from its record file when not answering.
        stale: files of a dead process still there (socket, record), as display paths.
    """

    state: str
    enabled: bool
    socket: str
    idle_minutes: float
    info: dict[str, Any] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)


def _record(lay: Layout) -> dict[str, Any]:
    """The running process's record file (``layout.daemon_pid_file``), or {}."""
    try:
        data = json.loads(lay.daemon_pid_file.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def status(lay: Layout, *, timeout_s: float = 2.0) -> DaemonState:
    """The state of ``lay``'s warm process; never starts one."""
    st = DaemonState("not running", client.enabled(lay), os.fspath(lay.daemon_socket),
                     config.daemon_idle_s(config.read_cached(lay)) / 60.0)
    info = client.status(lay, timeout_s=timeout_s)
    if info is not None:
        st.state, st.info = "running", info
    elif client.running(lay):
        pid = _record(lay).get("pid")
        st.state = "not answering" if isinstance(pid, int) else "starting"
        st.info = {"pid": pid} if isinstance(pid, int) else {}
    else:
        st.stale = [lay.display(p) for p in (lay.daemon_socket, lay.daemon_pid_file) if os.path.lexists(p)]
    return st


def clean_stale(lay: Layout) -> list[str]:
    """Remove a dead process's socket and record file, under the daemon lock (so never a live one's).

    Returns the display paths that could not be removed ([] when all went, or when a process holds the
    lock: then they are not stale).
    """
    left = []
    try:
        with infra.file_lock(lay.daemon_lock, timeout_s=0):
            for p in (lay.daemon_socket, lay.daemon_pid_file):
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
                except OSError:
                    left.append(lay.display(p))
    except TimeoutError:
        return []
    except OSError:
        return [lay.display(p) for p in (lay.daemon_socket, lay.daemon_pid_file) if os.path.lexists(p)]
    return left


def _is_server(pid: int) -> bool:
    """Whether process ``pid`` runs ``python -m gitmem.daemon`` (``/proc``; False where it cannot tell)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return client.SERVER_MODULE.encode() in argv


def stop(lay: Layout) -> tuple[bool, str]:
    """End ``lay``'s warm process: asked over its socket, else (not answering) SIGTERM to the pid of its record
    when that process is gitmem's server; SIGKILL when it still runs ``STOP_WAIT_S`` later (it holds only
    derived state). Waits until it has released its lock.

    Returns (whether no warm process runs now, one line saying what happened).
    """
    if not client.running(lay):
        clean_stale(lay)
        return True, "no warm process was running"
    info = client.status(lay, timeout_s=1.0)
    pid = info.get("pid") if info else _record(lay).get("pid")
    how = "stopped"
    if not client.stop(lay, timeout_s=1.0):
        if not isinstance(pid, int) or not _is_server(pid):
            return False, "a process holds the warm process's lock but does not answer, and its pid is unknown"
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError as e:
            return False, f"could not signal process {pid}: {e.strerror or e}"
        how = "stopped (SIGTERM: it did not answer)"
    if _wait_gone(lay, STOP_WAIT_S):
        return True, f"{how}: process {pid}" if pid else how
    if not isinstance(pid, int) or not _is_server(pid):
        return False, f"the warm process still runs after {STOP_WAIT_S:g} s and its pid is unknown"
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as e:
        return False, f"could not kill process {pid}: {e.strerror or e}"
    if _wait_gone(lay, KILL_WAIT_S):
        clean_stale(lay)
        return True, f"killed (SIGKILL: it did not end within {STOP_WAIT_S:g} s): process {pid}"
    return False, f"process {pid} still runs after SIGKILL (kill -9 {pid} by hand, as its owner)"


def _wait_gone(lay: Layout, seconds: float) -> bool:
    """Whether ``lay``'s warm process released its lock within ``seconds`` (polled every 50 ms)."""
    deadline = time.monotonic() + seconds
    while client.running(lay):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
