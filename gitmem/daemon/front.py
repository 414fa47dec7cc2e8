"""The ``gitmem`` command's first step: a read command is answered by the user's warm process when it can.

Owns: which commands the warm process may run (``READ_COMMANDS``: they only read, never prompt and
never read stdin), how long a client waits for each, and what travels with the request (argv, the
current folder, the few environment variables and terminal facts that can change output). The
output is made by the same click command in the warm process (``server.Server.op_cli``), so it is
the in-process output byte for byte; the exit code travels too.

Guarantees: when the warm process is off, absent, starting, has not started the command within
``START_WAIT_S`` (busy, stopped; ``QUEUE_WAIT_S`` more when it says it queued the command and expects to
start it by then; both stretched on a loaded machine: ``load_factor``), is of another version or config,
or answers anything unusable, the command runs in this process and nothing is said (``<logs>/daemon.log``
says why); the first command with no warm process starts one detached. A command runs in one process,
never both, unless the warm process started it and then gave no answer within its ``READ_COMMANDS`` bound.

Must not import: anything outside the standard library and ``layout``, ``infra``, ``config``,
``daemon.client`` before it knows the command runs in-process (click, GitPython, LanceDB cost
0.1–1.3 s: ``python -X importtime -m gitmem recall x``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .. import layout
from . import client

#: Seconds a client waits for the warm process to start its command (``client.request``'s ``start_s``). An idle
#: warm process starts one in ~1 ms and answers a read command in tens of milliseconds; when it does not start
#: it by then it is busy with other commands (it runs one at a time), stopped or still loading, and the client
#: runs the command itself (the warm process then drops it, unrun). A cold command costs ~10–75× ``python -c
#: pass`` (bench/cli.py, bench/README.md): waiting longer only adds to that; a shorter wait would send a
#: command to the cold path whenever another short one (~0.1 s) runs before it.
START_WAIT_S = 0.3
#: Seconds more a client waits for its turn when the warm process says it queued the command behind others and
#: expects to start it by then (``client.request``'s ``queue_s``): about a cold command's cost on a quiet machine
#: (~1.3 s, bench/README.md; several times more on a loaded one), so that commands run at once by an agent are
#: answered warm one after the other, and a command queued behind a long one (``list`` or ``stale`` of 10,000
#: memories: seconds) runs here at once.
QUEUE_WAIT_S = 1.0
#: Most the two waits above are stretched on a loaded machine (``load_factor``): a cold command's cost grows with
#: the load (75× ``python -c pass`` = 11–37 s at load 7–21 on 2 cores, bench/README.md) while a warm one's stays
#: about a second, so waiting longer for the warm process is still the faster way; bounded so that a stopped
#: warm process costs at most ~3 s more.
MAX_LOAD_FACTOR = 10.0


def load_factor() -> float:
    """How many times busier than its processors the machine is: the 1-minute load average divided by the CPU
    count, between 1 and ``MAX_LOAD_FACTOR`` (1 where the platform has no load average). One read of
    ``/proc/loadavg`` (``os.getloadavg``)."""
    try:
        return min(max(os.getloadavg()[0] / (os.cpu_count() or 1), 1.0), MAX_LOAD_FACTOR)
    except (OSError, AttributeError):
        return 1.0
#: Commands the warm process runs, and seconds a client waits for the answer of one the warm process started
#: (counted from the request): only a stuck process takes that long (a warm ``list`` of 10,000 memories takes
#: ~3 s, a warm ``context`` ~0.2–0.9 s on a loaded machine: bench/README.md), and the client then runs the
#: command itself too (the warm process's late answer is dropped; a ``show`` may then count as two openings).
#: Never less than the cold command would take on a loaded machine (~11–13 s at load 7–20: bench/README.md),
#: or giving up would cost more than the wait it saves.
READ_COMMANDS = {"recall": 20.0, "context": 20.0, "show": 20.0, "list": 60.0, "log": 20.0, "stale": 60.0}
#: Environment variables that may change what a command prints (colour, width, terminal type).
FORWARDED_ENV = ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM")
#: Variables that point git (and so gitmem) at another repository, index or object store: a command
#: run with one of them set runs here, where it applies.
GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")
#: Arguments that make a command print something else than its result (click answers them itself), and
#: ``--personal``: the personal repository is found from this process's environment (``GITMEM_PERSONAL_DIR``,
#: ``XDG_CONFIG_HOME``), which the warm process of the project does not share, and is not that project's store.
_NOT_FORWARDED_ARGS = frozenset({"-h", "--help", "--version", "--personal"})


#: Commands run here, not in the warm process, in a partial clone: they fetch an object the clone lacks (bounded,
#: ``git.FETCH_SECONDS``), which the warm process never does (its answers are due in seconds).
FETCHING_COMMANDS = frozenset({"stale", "show", "log"})


def _partial_clone(lay: layout.Layout) -> bool:
    """Whether the clone's config names a promisor remote (``git clone --filter=…``): one small file read, no git."""
    try:
        text = (lay.common_dir / "config").read_bytes().lower()
    except OSError:
        return False
    return b"promisor" in text or b"partialclone" in text


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def forwardable(args: list[str]) -> str | None:
    """The command of ``args`` when the warm process may run it here and now, else None.

    Not: a command off ``READ_COMMANDS``, ``--help``/``--version``, a git redirect in the
    environment (``GIT_REDIRECTS``), ``stale`` on a terminal without ``--list``/``--json``
    (it would walk the memories interactively), or ``recall --org`` (the object store's endpoint and
    credentials are this shell's ``AWS_*`` variables, not the warm process's).
    """
    if not args or args[0] not in READ_COMMANDS or _NOT_FORWARDED_ARGS.intersection(args):
        return None
    if args[0] == "recall" and "--org" in args:
        return None
    if any(v in os.environ for v in GIT_REDIRECTS):
        return None
    if args[0] == "stale" and _isatty(sys.stdin) and _isatty(sys.stdout) and not {"--list", "--json"} & set(args):
        return None
    return args[0]


def run_warm(args: list[str]) -> int | None:
    """Run ``gitmem ARGS`` in the warm process: its output written here and its exit code, or None
    (run it in-process). Never raises."""
    command = forwardable(args)
    if command is None:
        return None
    try:
        cwd = os.getcwd()
        root = layout.find_root(Path(cwd))
        if root is None or not (root / layout.GITMEM_DIR).is_dir():
            return None
        lay = layout.of(root)
        if command in FETCHING_COMMANDS and _partial_clone(lay):
            return None  # it may fetch what the clone lacks, here, bounded: the warm process never does
        out, err = sys.stdout, sys.stderr
        if not (hasattr(out, "buffer") and hasattr(err, "buffer")):
            return None
        params = {"argv": args, "cwd": cwd,
                  "env": {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ},
                  "stdout": {"encoding": out.encoding, "errors": out.errors, "tty": _isatty(out)},
                  "stderr": {"encoding": err.encoding, "errors": err.errors, "tty": _isatty(err)}}
    except (OSError, ValueError):
        return None
    stretch = load_factor()
    reply = client.request(lay, "cli", params, timeout_s=READ_COMMANDS[command], start_s=START_WAIT_S * stretch,
                           queue_s=QUEUE_WAIT_S * stretch)
    if reply is None:
        return None
    try:
        import binascii

        code = reply["code"]
        stdout, stderr = binascii.a2b_base64(reply["stdout"]), binascii.a2b_base64(reply["stderr"])
        if not isinstance(code, int):
            raise TypeError("code")
    except (KeyError, TypeError, ValueError, binascii.Error) as e:
        client.log(lay, f"client cli: unusable reply ({type(e).__name__}: {e})")
        return None
    try:
        if stderr:
            err.flush()
            err.buffer.write(stderr)
            err.buffer.flush()
        out.flush()
        out.buffer.write(stdout)
        out.buffer.flush()
    except BrokenPipeError:
        pass
    except OSError:
        return 1
    return code


def main(argv: list[str] | None = None) -> int:
    """The ``gitmem`` command: the warm process's answer when it gives one, else ``gitmem.cli.main``."""
    args = sys.argv[1:] if argv is None else list(argv)
    code = run_warm(args)
    if code is not None:
        return code
    from ..cli import main as cli_main

    return cli_main(args)


def entry() -> None:
    """Console-script entry point (``gitmem``)."""
    sys.exit(main())
