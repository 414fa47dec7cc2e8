"""The ``gitmem`` command line: parse arguments, call an op, render text or JSON.

Thin: no git calls, SQL, file writes or ranking here; each command calls one op (``gitmem.ops``)
or library function and renders its result, as text or through ``gitmem.shapes`` (``--json``).

Errors are rendered in one place (``main``): an expected ``GitmemError`` prints ``error:`` and
``hint:`` lines on stderr and exits 1 (``MissingExtra``, a feature of the ``all`` extra on a lean
install: one line, exit 2; so does any import of the extra's packages a command did not expect); a
usage error exits 2; a bug exits 3 with the path of a log under ``<common-dir>/gitmem/logs/``;
Ctrl-C exits 130. With ``--json`` stdout holds only JSON, and errors go to stderr as a JSON object
(``shapes.error_json``, versioned).

The commands, by noun group (importing a module registers its commands on ``base.cli``):

* ``base``         the root group, ``--json``, output and warnings, the store (shared by the rest)
* ``setup``        init, hooks install|uninstall|status, install|uninstall [AGENT] (from the installers registry),
                   doctor
* ``memories``     remember, forget, show, list, reanchor, retire, supersede, log, share
* ``retrieve``     recall, context, stale, check, scan, stats, symbols
* ``transfer``     export, import
* ``maintenance``  sync, consolidate, tidy, mcp, daemon status|stop, merge-file (hidden)
* ``org``          org index|status (the organisation index: ``gitmem.org``); ``recall --org`` calls its search;
                   org check (cross-repository anchors: ``gitmem.org.xrepo``)
* ``ui``           ui (the local web page: ``gitmem.ui``)
* ``personal``     personal init|push|pull|status|path (the personal scope: ``ops.personal``)
* ``text``         text renderings the commands share

Imports: click and gitmem's light modules at import time (``gitmem --help`` stays fast); the
store, git, LanceDB and the MCP SDK only inside the commands that use them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__, infra, layout
from ..errors import GitmemError
from ..shapes import dumps_line, error_json, versioned
from . import maintenance, memories, org, personal, retrieve, setup, transfer, ui  # noqa: F401 - registers the commands
from .base import EXIT_BUG, EXIT_ERROR, EXIT_INTERRUPT, EXIT_OK, EXIT_USAGE, State, cli

__all__ = ["EXIT_BUG", "EXIT_ERROR", "EXIT_INTERRUPT", "EXIT_OK", "EXIT_USAGE", "cli", "entry", "main"]


def _bug_log(exc: BaseException) -> Path | None:
    """Write a bug report under the clone's logs folder (or the temp dir); returns its path."""
    return infra.bug_report(layout.logs_dir_near(Path.cwd()), exc, version=__version__)


def _error(message: str, hint: str) -> None:
    """An expected error on stderr: a JSON object in JSON mode, else ``error:`` and ``hint:`` lines."""
    if State.json:
        click.echo(dumps_line(versioned(error_json(message, hint))), err=True)
    else:
        click.echo(f"error: {message}", err=True)
        if hint:
            click.echo(f"hint: {hint}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 error, 2 usage, 3 bug, 130 interrupted)."""
    State.json = False
    try:
        cli.main(args=argv, prog_name="gitmem", standalone_mode=False)
        return EXIT_OK
    except click.exceptions.Exit as e:
        return int(e.exit_code or 0)
    except click.UsageError as e:
        e.show()
        return EXIT_USAGE
    except click.Abort:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPT
    except GitmemError as e:
        _error(e.message, e.hint)
        return e.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPT
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) or e.code is None else EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except ModuleNotFoundError as e:
        from .. import extras

        if not extras.is_extra_module(e.name):
            return _bug(e)
        missing = extras.error(f"`gitmem {_command_words(argv)}`", str(e.name))  # a lean install: one line, exit 2
        _error(missing.message, missing.hint)
        return missing.exit_code
    except OSError as e:  # a file gitmem must read or write is not accessible
        where = f": {e.filename}" if e.filename else ""
        _error(f"{e.strerror or type(e).__name__}{where}", "check the permissions and free space of .gitmem/ "
                                                           "(gitmem doctor)")
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - the one place a bug becomes a message
        return _bug(e)


def _bug(e: BaseException) -> int:
    """A bug: one line on stderr with the path of its report (``_bug_log``); returns ``EXIT_BUG``."""
    log = _bug_log(e)
    click.echo(f"gitmem: unexpected error: {type(e).__name__}: {e}", err=True)
    if log:
        click.echo(f"a report was written to {log}; please attach it to a bug report", err=True)
    return EXIT_BUG


def _command_words(argv: list[str] | None) -> str:
    """The command as the user named it (``org index``, ``recall``): the first word of ``argv`` (default
    ``sys.argv[1:]``) not an option, and the next when the first is a group."""
    words = [w for w in (sys.argv[1:] if argv is None else argv) if not w.startswith("-")][:2]
    if not words:
        return ""
    group = cli.commands.get(words[0])
    return " ".join(words if isinstance(group, click.Group) else words[:1])


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
