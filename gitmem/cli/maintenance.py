"""Keeping things running: ``sync``, ``consolidate``, ``mcp``, and the hidden ``merge-file`` (git's merge driver)."""

from __future__ import annotations

import sys

import click

from .. import shapes
from ..errors import GitmemError
from .base import State, _out, _store, _warn, _warn_invalid, cli, json_option


@cli.command()
@click.option("--rebuild", is_flag=True, help="Drop the index and rebuild it from the memory files.")
@click.option("--quiet", is_flag=True, help="Print nothing on success.")
@json_option
def sync(rebuild: bool, quiet: bool) -> None:
    """Sync the search index (and the hooks' index) with the memory files (incremental; queries do this too).

    \b
    Example usage:
      gitmem sync
      gitmem sync --rebuild
    """
    from ..ops.sync import sync as do_sync

    store = _store()
    rep = do_sync(store, rebuild=rebuild, warn=_warn)
    res = rep.index
    if not quiet:
        _warn_invalid(store, rep.errors)
    if quiet and not State.json:
        return
    _out(shapes.sync_json(res, len(rep.errors)),
         f"gitmem: index {'rebuilt (' + res.reason + ')' if res.rebuilt else 'synced'}: "
         f"{res.added} added, {res.updated} updated, {res.deleted} removed")


@cli.command()
@click.option("--session", help="Only this session (its id as Claude Code gives it).")
@click.option("--no-llm", is_flag=True, help="Use the deterministic rules even when [llm] is configured.")
@json_option
def consolidate(session: str | None, no_llm: bool) -> None:
    """Turn captured sessions (the spool) into local memories now.

    SessionEnd runs this in the background; run it by hand after a crash or to
    see what a session produced. Uses [llm] from config.toml when set.
    """
    from ..ops.consolidate import consolidate as do_consolidate

    outcomes = do_consolidate(_store(), session=session, use_llm=not no_llm, warn=_warn)

    def text() -> str:
        if not outcomes:
            return "nothing to consolidate"
        out = []
        quiet = [o for o in outcomes if not o.written and not o.notes]
        for o in outcomes:
            if o in quiet:
                continue
            n = len(o.written)
            out.append(f"session {o.session}: {o.events} events → {n} memor{'y' if n == 1 else 'ies'} ({o.path})"
                       + "".join(f"\n  {mid}" for mid in o.written) + "".join(f"\n  note: {note}" for note in o.notes))
        if quiet:
            out.append(f"{len(quiet)} session(s) with nothing worth a memory (only reads, searches or commands)")
        return "\n".join(out)

    _out([shapes.consolidation_json(o) for o in outcomes], text)


@cli.command()
@click.option("--repo", type=click.Path(exists=True, file_okay=False), metavar="PATH",
              help="The repository to serve (default: the current directory).")
def mcp(repo: str | None) -> None:
    """Run the MCP server on stdio: tools search, get, remember, stale, context.

    The repository is looked up on every call, so errors (not a repository,
    not initialised) come back as tool errors and the server keeps running.

    \b
    Example usage:
      claude mcp add gitmem -- gitmem mcp
      gitmem mcp --repo ~/src/project
    """
    import importlib.util

    from ..integrations import mcp_front

    if importlib.util.find_spec("mcp") is None:
        raise GitmemError("the MCP server needs the mcp package", "pip install 'mcp>=2.3,<3'")
    code = mcp_front.serve(repo)
    if code:
        raise SystemExit(code)


@cli.command("merge-file", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("name", required=False, default="")
def merge_file_cmd(base: str, ours: str, theirs: str, name: str) -> None:
    """Git merge driver for memory files (git runs it: merge.gitmem.driver)."""
    from ..integrations.merge_driver import merge_file

    sys.exit(merge_file(base, ours, theirs, name))
