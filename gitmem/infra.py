"""Infrastructure every part of gitmem shares: atomic writes, log lines, detached processes, the clock, locks.

Standard library only, and nothing imported at module level beyond ``os``, ``sys`` and ``time``:
the agent hooks use it on every tool call. Each job has this one owner; nothing else in
gitmem writes a file by temp-and-rename, appends to a log, starts a detached process or
formats a timestamp.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path

#: A log file is moved to ``<name>.1`` (replacing it) when it grows past this many bytes.
LOG_MAX_BYTES = 1_000_000
#: The timestamp format of memory files and logs: UTC, ISO 8601, seconds.
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime(UTC_FORMAT, time.gmtime())


def utc_stamp(seconds: float) -> str:
    """``seconds`` since the epoch as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    return time.strftime(UTC_FORMAT, time.gmtime(seconds))


def parse_utc(stamp: str | None) -> float | None:
    """Seconds since the epoch of a ``YYYY-MM-DDTHH:MM:SSZ`` stamp; None when it is not one."""
    import calendar

    try:
        return float(calendar.timegm(time.strptime(stamp or "", UTC_FORMAT)))
    except (ValueError, OverflowError):
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def atomic_write(path: Path, data: bytes, *, mode: int | None = None, fsync: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: a temp file ``.<name>.*.tmp`` in the same folder, then ``os.replace``.

    The folder is created when missing. ``mode``: permission bits of the new file (default:
    0666 minus the umask). ``fsync``: flush the data to disk before the rename (off only for
    caches, where a torn file is simply rebuilt).

    Raises:
        OSError: the folder is not writable, the disk is full.
    """
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, (0o666 & ~_UMASK) if mode is None else mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_log(path: Path, text: str) -> None:
    """Append ``text`` (one record, ending in a newline) to log ``path``; never raises.

    One ``write`` per record, so concurrent processes do not interleave lines; past
    ``LOG_MAX_BYTES`` the log is first moved to ``<name>.1``. Callers redact what may hold a
    secret before it gets here.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        with open(path, "a", encoding="utf-8", errors="replace") as f:
            f.write(text)
    except (OSError, ValueError):
        pass


#: Bytes one ``append_records`` write holds at most: POSIX's smallest PIPE_BUF (``_POSIX_PIPE_BUF``), the size
#: up to which an ``O_APPEND`` write is atomic by the standard (Linux's and macOS's local file systems append whole
#: writes of any size under the inode lock; 512 keeps the guarantee everywhere).
APPEND_ATOMIC_BYTES = 512


def append_records(path: Path, lines: list[str]) -> None:
    """Append ``lines`` (each one record, without its newline) to ``path`` (created with its folder, mode 0600).

    ``O_APPEND`` writes of whole lines, each write at most ``APPEND_ATOMIC_BYTES`` (a longer line is
    written alone): processes appending at once never interleave or tear a record, and none is lost.
    No rotation (the caller owns the file's size).

    Raises:
        OSError: the file cannot be opened or written.
    """
    if not lines:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks: list[bytes] = []
    cur = b""
    for line in lines:
        data = line.encode("utf-8", "replace") + b"\n"
        if cur and len(cur) + len(data) > APPEND_ATOMIC_BYTES:
            chunks.append(cur)
            cur = b""
        cur += data
    chunks.append(cur)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        for c in chunks:
            os.write(fd, c)
    finally:
        os.close(fd)


def format_exception(exc: BaseException) -> str:
    """The traceback of ``exc``, each line indented by two spaces, for a log record."""
    import traceback

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return "".join(f"  {ln}\n" for ln in tb.rstrip("\n").split("\n"))


def spawn_detached(module: str, *args: str, cwd: Path, log: Path | None = None) -> int:
    """Start ``python -P -m <module> <args>`` detached: its own session; the caller never waits. Returns its pid.

    No stdin; stdout and stderr go to ``log`` (appended; folder created) or nowhere. ``-P``:
    the work tree is never put on ``sys.path`` (a checked-out ``gitmem/`` must not run); the
    child finds this gitmem package first (``PYTHONPATH``), whatever the current folder.

    Raises:
        OSError: the process could not be started.
    """
    import subprocess

    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    argv = [sys.executable, "-P", "-m", module, *args]
    if log is None:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, env=env,
                                cwd=os.fspath(cwd)).pid
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                close_fds=True, env=env, cwd=os.fspath(cwd)).pid


def file_lock(path: Path, *, timeout_s: float | None = None) -> AbstractContextManager[None]:
    """An exclusive advisory lock on ``path`` (created, folder too) held for a ``with`` block.

    ``fcntl.flock`` where it exists; elsewhere no lock. For the hot paths, which cannot import
    the ``filelock`` package the slow paths use. ``timeout_s``: give up after that many seconds
    (polled every 50 ms); None waits as long as it takes.

    Raises:
        OSError: the lock file cannot be created.
        TimeoutError: another process held the lock for ``timeout_s``.
    """
    from contextlib import contextmanager

    @contextmanager
    def held() -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows
                yield
                return
            if timeout_s is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                deadline = time.monotonic() + timeout_s
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            raise TimeoutError(f"{path} is locked by another process") from None
                        time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    return held()


def bug_report(logs_dir: Path | None, exc: BaseException, *, version: str, context: str = "") -> Path | None:
    """Write a bug report (versions, platform, argv, ``context``, traceback) to a new file; returns its path.

    The file is ``<logs_dir>/crash-<UTC stamp>-<pid>.log``, or under ``<temp dir>/gitmem-logs`` when
    ``logs_dir`` is None (no repository). Returns None when it cannot be written; never raises.
    """
    import platform
    import tempfile
    from pathlib import Path

    folder = logs_dir if logs_dir is not None else Path(tempfile.gettempdir()) / "gitmem-logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.log"
        text = (f"gitmem {version}\npython {sys.version}\nplatform {platform.platform()}\nargv {sys.argv}\n"
                + (f"{context}\n" if context else "") + "\n" + format_exception(exc))
        path.write_text(text, "utf-8", errors="replace")
        return path
    except OSError:
        return None


def touch(path: Path) -> None:
    """Create marker file ``path`` (and its folder) or bump its modification time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a"):
        os.utime(path, None)


def age_s(path: Path) -> float | None:
    """Seconds since ``path`` was last modified, or None when it does not exist."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return None
