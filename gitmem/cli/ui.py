"""Seeing the memories: ``ui`` (a local web page)."""

from __future__ import annotations

import os
import sys

import click

from .base import _store, cli


@cli.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
def ui(port: int, no_browser: bool) -> None:
    """A local web page: the memories on a map of the code, their review, and what agent sessions were given.

    Serves 127.0.0.1 only; the URL it prints carries a secret token for this launch (another local user
    or web page cannot read or change memories). The page updates when memories are written or go stale.
    Ctrl-C stops it.

    \b
    Example usage:
      gitmem ui
      gitmem ui --port 8765 --no-browser
    """
    from ..errors import GitmemError
    from ..ui.server import run

    store = _store()
    try:
        run(store, port=port, open_browser=not no_browser, echo=lambda line: click.echo(line))
    except OSError as e:
        raise GitmemError(f"cannot serve on 127.0.0.1:{port}: {e.strerror or e}",
                          "choose another --port, or 0 for a free one") from e
    # Stopped (Ctrl-C): end now. The background refresh may be inside LanceDB, whose native threads can abort
    # the interpreter's shutdown (SIGABRT, exit -6, seen in CI); nothing is left to write but the streams.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
