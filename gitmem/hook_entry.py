"""The Python side of gitmem's git hooks: ``python -m gitmem.hook_entry <hook-name> [args...]``.

Owns the wrapper every git hook goes through (the shims ``gitmem hooks install``
writes, ``hooks/git-hook``, or a hook manager calling this module directly):
find the work tree from the current directory (git runs hooks at the work tree
root), do nothing outside a repository with a ``.gitmem/`` folder, read stdin
once, call ``gitmem.integrations.git_hook_actions.run_hook`` under a time limit, print what it
returns to stderr, and log. A pre-commit step stopped by the time limit says so in one line
(``cut_short_line``); it marks, before it starts, that it has not shared yet
(``mark_share_pending``), so the next commit shares what it left.

Guarantees: ``main`` returns 0 and writes nothing to stdout, whatever happens
(errors, ``SystemExit``, Ctrl-C, the time limit); nothing but ``run_hook``'s own
message (or the one line of a pre-commit step cut short) reaches the terminal. Each run is one record in
``<common-dir>/gitmem/logs/hooks.log`` (``hook_log_path``), with the traceback when it
failed; the log is rotated to ``hooks.log.1`` past ``infra.LOG_MAX_BYTES``.

Must not import at module level anything beyond the stdlib (it starts on every
commit, merge and checkout); ``gitmem.git`` and ``gitmem.integrations.git_hook_actions`` are
imported only once the repository is known to use gitmem. Never imports lancedb,
tree-sitter or an LLM client itself.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

from . import __version__, infra, layout

#: Set while gitmem's hook code runs; a hook started by a git command that gitmem
#: itself runs sees it and does nothing (no recursion).
ACTIVE_ENV = "GITMEM_HOOK_ACTIVE"

#: Seconds a hook may take before it is stopped (it then exits 0 and logs "timeout").
#: An upper bound so that a commit, merge or checkout never waits on gitmem for long,
#: not a target: actions are expected to finish far sooner.
TIME_LIMIT_S = 10.0

#: Overrides ``TIME_LIMIT_S`` (seconds, a float; 0 or less: no limit).
TIME_LIMIT_ENV = "GITMEM_HOOK_TIMEOUT"

#: Grace after the time limit before the process is ended outright, for code that
#: swallows the timeout exception (or a platform without SIGALRM).
HARD_EXIT_GRACE_S = 2.0


class HookTimeout(BaseException):
    """The time limit is up. A BaseException so that ``except Exception`` in actions lets it through."""


def hook_log_path(root: Path) -> Path:
    """The hook log of the work tree at ``root``: ``<common-dir>/gitmem/logs/hooks.log``.

    Raises:
        OSError: ``root/.git`` cannot be read.
    """
    return layout.of(root).log_file("hooks.log")


find_root = layout.find_root


def _time_limit_s() -> float:
    raw = os.environ.get(TIME_LIMIT_ENV, "")
    try:
        return float(raw) if raw.strip() else TIME_LIMIT_S
    except ValueError:
        return TIME_LIMIT_S


class _Run:
    """One hook run: what it was asked, how it ended, and its log record."""

    def __init__(self, root: Path, name: str, args: list[str]) -> None:
        self.root = root
        self.name = name
        self.args = args
        self.stdin_bytes = 0
        self.started = time.monotonic()
        self.wall_started = time.time()
        self.outcome = "ok"
        self.detail = ""
        self.trace = ""
        self.logged = False
        #: The index git gave the hook (``GIT_INDEX_FILE``, absolute), once ``_run`` has read it.
        self.index_file: str | None = None

    def fail(self, outcome: str, detail: str, exc: BaseException | None) -> None:
        self.outcome = outcome
        self.detail = detail
        if exc is not None:
            self.trace = infra.format_exception(exc)

    def log(self) -> None:
        """Append this run's record to the hook log (once); never raises."""
        if self.logged:
            return
        self.logged = True
        elapsed = time.monotonic() - self.started
        line = (f"{infra.utc_now()} {self.name} {self.outcome} {elapsed:.3f}s gitmem {__version__} "
                f"args={self.args!r} stdin={self.stdin_bytes}B")
        if self.detail:
            line += f": {self.detail}"
        text = line + "\n"
        if self.trace:
            text += f"  python {platform.python_version()} on {platform.platform()}\n"
            text += self.trace
        try:
            infra.append_log(hook_log_path(self.root), text)
        except OSError:
            pass


@contextmanager
def _time_limit(seconds: float, run: _Run) -> Iterator[None]:
    """Raise ``HookTimeout`` in this thread after ``seconds``; end the process ``HARD_EXIT_GRACE_S`` later.

    The soft stop uses SIGALRM (main thread, POSIX only); the hard stop is a daemon
    thread that logs and calls ``os._exit(0)``, for code that swallowed the soft one.
    Writes in gitmem are atomic (temp file + rename), so a stop loses work, not data.
    """
    if seconds <= 0:
        yield
        return

    def hard_exit() -> None:
        run.fail("timeout", f"killed after {seconds + HARD_EXIT_GRACE_S:g}s", None)
        run.log()
        if run.name == "pre-commit":
            _say(cut_short_line(run.root, seconds))
        os._exit(0)

    watchdog = threading.Timer(seconds + HARD_EXIT_GRACE_S, hard_exit)
    watchdog.daemon = True
    soft = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    old_handler = None
    if soft:
        def on_alarm(signum: int, frame: object) -> None:
            raise HookTimeout(f"time limit of {seconds:g}s reached")
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog.start()
    try:
        yield
    finally:
        watchdog.cancel()
        if soft:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)


def _say(line: str) -> None:
    """``line`` on stderr (the terminal of the commit); never raises."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _read_stdin() -> bytes:
    stdin = sys.stdin
    if stdin is None or stdin.closed:
        return b""
    try:
        if stdin.isatty():
            return b""
        return stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        return b""


def _has_local_memories(root: Path) -> bool:
    try:
        with os.scandir(layout.of(root).local_memories_dir) as it:
            return any(e.name.endswith(".md") for e in it)
    except OSError:
        return False


def _share_pending(root: Path) -> bool:
    try:
        return layout.of(root).share_pending.exists()
    except OSError:
        return False


def _agent_edits_pending(root: Path) -> bool:
    """Whether memory files an agent's file tools wrote wait to be marked as the agent's text (``agent_edits``):
    one ``stat`` when none was ever written, else one read of a small file."""
    from . import agent_edits

    try:
        lay = layout.of(root)
        return lay.agent_edits_log.exists() and bool(agent_edits.pending(lay))
    except OSError:
        return True


def _staged_touches_anchors(root: Path, index_file: str | None) -> bool:
    """Whether the staged change touches a file some memory is anchored to: only then can pre-commit have
    moved code to follow. Standard library only (one ``git diff --cached --name-only``, one catalog query),
    so a commit that touches no anchored file imports nothing more; True when it cannot tell (no catalog,
    rows behind the memory folders, git failed): the library then decides.
    """
    import subprocess

    from .catalog import db as catalog_db

    con = catalog_db.connect(root)
    if con is None:
        return True
    try:
        # the rows were built from the memory folders as they are (``catalog.files.rows_current`` without
        # git's tree: git and gitmem replace memory files, which moves the folders' times)
        if catalog_db.get_meta(con, "rows_signature") != catalog_db.folder_signature(root):
            return True
        # scrubbed of the hook's GIT_DIR and the like (``git.scrub_git_env``); a work tree whose git folder is
        # elsewhere (the dotfiles setup) gets its own back
        env = {**os.environ, **layout.git_env(root)}
        if index_file:
            env["GIT_INDEX_FILE"] = index_file
        try:
            proc = subprocess.run(["git", "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--"],
                                  cwd=root, env=env, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return True
        if proc.returncode != 0:
            return True
        paths = [p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p]
        return bool(catalog_db.ids_on_paths(con, [p for p in paths if not p.startswith(layout.GITMEM_DIR + "/")]))
    except Exception:  # noqa: BLE001 - a broken catalog: let the library decide
        return True
    finally:
        con.close()


def mark_share_pending(root: Path) -> None:
    """Write the worktree's ``share-pending`` file (``layout.Layout.share_pending``) unless an earlier step cut short
    left one: the commit HEAD is now (empty before the first commit). The pre-commit share removes it when done
    (``ops.share.done_pending``); left by a step cut short, the next commit shares what that one left. Never
    raises (one ``git rev-parse``)."""
    import subprocess

    try:
        path = layout.of(root).share_pending
        if path.exists():
            return
        proc = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=root,
                              env={**os.environ, **layout.git_env(root)}, capture_output=True, timeout=5)
        head = proc.stdout.decode("ascii", "replace").strip() if proc.returncode == 0 else ""
        infra.atomic_write(path, f"{head}\n".encode("ascii"), fsync=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        pass


def _drop_child_lock(index_file: str | None, since: float) -> None:
    """Remove ``<index_file>.lock`` when it was made after ``since`` (the step's start, seconds since the epoch): the
    lock of a ``git add`` of this hook's, stopped with the step (killed, it could not remove it), which would fail
    every later commit (``git commit -a`` gives the hook ``.git/index.lock`` as its index, so the child's lock is
    ``index.lock.lock``). Never raises."""
    if not index_file:
        return
    lock = index_file + ".lock"
    try:
        if os.stat(lock).st_mtime >= since - 1.0:  # 1 s: file-system times may be coarser than the clock
            os.unlink(lock)
    except OSError:
        pass


def cut_short_line(root: Path, seconds: float) -> str:
    """The line a pre-commit step stopped at its time limit prints (and records for ``doctor`` when it had not
    shared yet: ``problems.SHARE_PENDING``). Never raises."""
    try:
        pending = layout.of(root).share_pending.exists()
    except OSError:
        pending = False
    if not pending:
        return (f"gitmem: the pre-commit step stopped at its time limit ({seconds:g} s) after sharing; "
                "memories on moved code are re-anchored after the commit")
    from . import problems

    problems.record(root, problems.SHARE_PENDING,
                    f"a pre-commit step stopped at its time limit ({seconds:g} s) before it shared the local "
                    "memories on the committed code",
                    "commit again (the next commit shares them), or `gitmem share ID`")
    return (f"gitmem: the pre-commit step stopped at its time limit ({seconds:g} s): local memories on this "
            "commit's code were not shared; the next commit shares them (the commit goes on)")


def _run(run: _Run) -> None:
    """Everything past "this is a gitmem repository"; raises whatever goes wrong."""
    from .git import no_fetching, scrub_git_env

    # the index the commit is made from (git commit -a / PATH use a temporary one); pre-commit stages into it
    index_file = os.environ.get("GIT_INDEX_FILE")
    if index_file and not os.path.isabs(index_file):
        index_file = os.path.abspath(index_file)
    run.index_file = index_file
    scrub_git_env()
    no_fetching()  # a hook never waits on a remote: an object a partial clone lacks is said, not fetched
    stdin = _read_stdin()
    run.stdin_bytes = len(stdin)
    if run.name == "pre-commit" and not _share_pending(run.root) and not _agent_edits_pending(run.root) \
            and not _staged_touches_anchors(run.root, index_file):
        return  # nothing to share or mark, no anchored code staged: no library import, the commit waits for nothing
    try:
        from .integrations.git_hook_actions import run_hook
    except Exception as e:  # noqa: BLE001 - a missing or broken module must not break git
        run.fail("error", f"cannot import gitmem.integrations.git_hook_actions: {type(e).__name__}: {e}", e)
        return
    message = run_hook(run.name, run.args, stdin, run.root, index_file=index_file)
    if isinstance(message, str) and message:
        print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run hook ``argv[0]`` with git's arguments ``argv[1:]`` (default: ``sys.argv[1:]``).

    Returns:
        0, always.
    """
    run: _Run | None = None
    set_active = False
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        if not args or os.environ.get(ACTIVE_ENV):
            return 0
        root = find_root(Path.cwd())
        if root is None or not (root / layout.GITMEM_DIR).is_dir():
            return 0
        os.environ[ACTIVE_ENV] = "1"
        set_active = True
        run = _Run(root, args[0], args[1:])
        current = run

        def _thread_failed(info: threading.ExceptHookArgs) -> None:
            # errors in threads (git's output read beside the diff) go to the log, never to the terminal.
            exc = info.exc_value if isinstance(info.exc_value, BaseException) else RuntimeError(str(info.exc_type))
            current.fail("error", f"{info.exc_type.__name__} in a worker thread: {exc}", exc)

        threading.excepthook = _thread_failed
        if run.name == "pre-commit" and _has_local_memories(root):
            mark_share_pending(root)  # before the time limit starts: whatever it cuts short, the next commit sees
        try:
            with _time_limit(_time_limit_s(), run), redirect_stdout(sys.stderr):
                _run(run)
        except HookTimeout as e:
            run.fail("timeout", str(e), e)
            if run.name == "pre-commit":
                _drop_child_lock(run.index_file, run.wall_started)
                _say(cut_short_line(run.root, _time_limit_s()))
        except KeyboardInterrupt as e:
            run.fail("interrupted", "KeyboardInterrupt", e)
        except SystemExit as e:
            run.fail("error", f"SystemExit({e.code!r}) from hook actions", e)
        except BaseException as e:  # noqa: BLE001 - never break the host
            run.fail("error", f"{type(e).__name__}: {e}", e)
        run.log()
    except BaseException:  # noqa: BLE001 - even logging failed, or Ctrl-C while logging
        if run is not None:
            try:
                run.log()
            except BaseException:  # noqa: BLE001
                pass
    finally:
        if set_active:
            os.environ.pop(ACTIVE_ENV, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
