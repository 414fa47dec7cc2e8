"""What every command module of the CLI shares: the root group, ``--json``, output, warnings, the store.

Imports: click and gitmem's light modules only (``gitmem --help`` imports this); the store, git and
the catalog are imported when a command runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..shapes import JSONObject, dumps_document, dumps_line, note_json, versioned, warning_json

if TYPE_CHECKING:
    from ..errors import MemoryFileError
    from ..store import Store

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPT = 0, 1, 2, 3, 130


class State:
    """Per-run state: whether ``--json`` was given (reset by ``main``)."""

    json = False


def _store(require: bool = True) -> Store:
    """The store of the repository holding the current directory (with the on-disk symbol cache); a warning on
    stderr when its config.toml has sections or keys of a newer gitmem (``Store.config_warnings``).

    Raises:
        NotARepository: not inside a git work tree.
        NotInitialized: ``require`` and the repository has no ``.gitmem/``.
    """
    from ..errors import ConfigError
    from ..git import Repo
    from ..store import Store

    store = Store(Repo(os.getcwd()), require=require)
    store.enable_symbol_cache()
    if store.dir.is_dir():
        try:
            store.config  # noqa: B018 - read now, for its warnings; an invalid file is the command's to report
        except ConfigError:
            pass
        for w in store.config_warnings:
            _warn(w)
    return store


def _out(obj: JSONObject | Sequence[JSONObject], text: str | Callable[[], str]) -> None:
    """Print ``obj`` as a versioned JSON document in JSON mode (``shapes.document``), else ``text``."""
    if State.json:
        click.echo(dumps_document(obj))
    else:
        t = text() if callable(text) else text
        if t:  # memory text and code are anyone's: no escape sequence of theirs reaches the terminal
            from ..rank.render import visible

            click.echo(visible(t.rstrip("\n")))


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--json`` flag: sets ``State.json`` before the command's other options are processed."""
    def cb(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        if value:
            State.json = True
        return value

    return click.option("--json", "as_json", is_flag=True, expose_value=False, callback=cb,
                        is_eager=True, help="Print JSON (stdout holds only JSON).")(f)


def _warn(message: str) -> None:
    """A warning on stderr (a JSON object in JSON mode)."""
    from ..rank.render import visible  # a warning can quote a memory's title

    click.echo(dumps_line(versioned(warning_json(message))) if State.json else visible(f"warning: {message}"),
               err=True)


def _note(message: str) -> None:
    """Information on stderr, not a warning: the message alone (``{"note"}`` in JSON mode)."""
    from ..rank.render import visible

    click.echo(dumps_line(versioned(note_json(message))) if State.json else visible(message), err=True)


def _warn_invalid(store: Store, errors: list[MemoryFileError] | None = None) -> None:
    """One warning per invalid memory file (``errors``, default: the catalog's)."""
    if errors is None:
        from ..catalog.files import file_errors

        errors = file_errors(store)
    for e in errors:
        if State.json:
            click.echo(dumps_line(versioned(warning_json(e.message, e.hint))), err=True)
        else:
            click.echo(f"warning: {e.message}" + (f" ({e.hint})" if e.hint else ""), err=True)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: ``gitmem-cli X.Y.Z`` and how this gitmem is installed, from where (``gitmem.dist``)."""
    if not value or ctx.resilient_parsing:
        return
    from ..dist import version_text

    click.echo(version_text())
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and which install of gitmem runs (editable clone, uv tool, pipx, venv).")
def cli() -> None:
    """gitmem: long-term memory for coding agents, anchored to the code.

    \b
    Example usage:
      gitmem init
      gitmem remember "Config load order is env > yaml > defaults" --anchor src/config.py::parse_config
      gitmem context --prompt "change how config is loaded"
      gitmem stale
    """
