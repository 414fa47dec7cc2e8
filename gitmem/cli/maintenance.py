"""Keeping things running: ``sync``, ``consolidate``, ``tidy``, ``mcp``, ``daemon status|stop``, and the hidden
``merge-file`` (git's merge driver)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .. import shapes
from .base import EXIT_ERROR, State, _note, _out, _store, _warn, _warn_invalid, cli, json_option

if TYPE_CHECKING:
    from ..layout import Layout
    from ..ops.tidy import TidyReport


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
        if rep.search.note:
            _note(rep.search.note)
    if quiet and not State.json:
        return
    if res is None:  # a lean install: the catalog is the only index
        _out(shapes.sync_json(None, len(rep.errors), rep.search.name, rep.catalog_rows),
             f"gitmem: catalog {'rebuilt' if rebuild else 'synced'}: {rep.catalog_rows} memories "
             "(no search index in this install: full-text search from the catalog)")
        return
    _out(shapes.sync_json(res, len(rep.errors), rep.search.name),
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
@click.option("--apply", "do_apply", is_flag=True,
              help="Merge the duplicates and retire the long-deleted memories (default: a dry run, nothing written).")
@click.option("--no-llm", is_flag=True, help="Judge contradictions by the rules even when [llm] is configured.")
@json_option
def tidy(do_apply: bool, no_llm: bool) -> None:
    """Find near-duplicate memories, contradictions and memories of long-deleted code.

    Near-duplicates on the same code are merged into the most complete one
    (the others superseded; facts, tags and anchors united). Contradicting
    memories on the same code are flagged for review, never changed (by the
    [llm] model when configured, else by rules). Memories whose code has all
    been deleted for [tidy] deleted_days (30) are retired. A dry run unless
    --apply. Exit status: 0 nothing found (or --apply done), 1 a dry run found
    something.

    \b
    Example usage:
      gitmem tidy
      gitmem tidy --apply && git add .gitmem && git commit -m "gitmem tidy"
    """
    from ..ops.tidy import tidy as do_tidy

    store = _store()
    rep = do_tidy(store, do_apply=do_apply, use_llm=not no_llm)
    _out(shapes.tidy_json(rep), lambda: render_tidy(rep))
    if rep.findings and not do_apply:
        sys.exit(EXIT_ERROR)


def render_tidy(rep: TidyReport) -> str:
    """``tidy``'s report as text: each finding, then one summary line."""
    out = []
    if rep.duplicates:
        out.append(f"near-duplicates ({len(rep.duplicates)} group{'s' if len(rep.duplicates) != 1 else ''}):")
        for g in rep.duplicates:
            out.append(f"  keep  {g.keep.id}  [{g.keep.type}] {g.keep.title}")
            out += [f"  merge {m.id}  [{m.type}] {m.title}  (similarity {s:.2f})" for m, s in g.merged]
    if rep.contradictions:
        out.append(f"contradictions ({len(rep.contradictions)}, for review; judged by {rep.how}):")
        for f in rep.contradictions:
            out += [f"  {f.a.id}  [{f.a.type}] {f.a.title}", f"  {f.b.id}  [{f.b.type}] {f.b.title}",
                    f"    {f.rule}: {f.reason}"]
    if rep.deleted:
        out.append(f"code deleted for {rep.deleted_days}+ days ({len(rep.deleted)}):")
        out += [f"  {d.memory.id}  [{d.memory.type}] {d.memory.title}  (deleted {d.since[:10]} by {d.commit[:12]}, "
                f"{d.days} days ago)" for d in rep.deleted]
    out += [f"note: {n}" for n in rep.notes]
    if rep.applied:
        merged = sum(len(g.merged) for g in rep.duplicates)
        out.append(f"gitmem tidy: merged {merged} memor{'y' if merged == 1 else 'ies'} into {len(rep.duplicates)}, "
                   f"retired {len(rep.deleted)} of deleted code"
                   + (f"; {len(rep.contradictions)} contradiction(s) left for review" if rep.contradictions else "")
                   + ("  (commit .gitmem/ to share)" if rep.to_apply else ""))
    elif rep.findings:
        out.append(f"gitmem tidy: {rep.findings} finding(s) in {rep.checked} memories"
                   + (" (`gitmem tidy --apply` merges the duplicates and retires the deleted)" if rep.to_apply
                      else " (contradictions: resolve with gitmem supersede, retire or an edit)"))
    else:
        out.append(f"gitmem tidy: nothing to merge, flag or retire in {rep.checked} memories")
    return "\n".join(out)


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
    from .. import extras
    from ..integrations import mcp_front

    extras.require("gitmem mcp", ("mcp",))
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


@cli.group()
def daemon() -> None:
    """The warm process of this working tree (it answers recall, context, stale, show, list and log).

    Started by the first such command (or an agent's session start), it exits after
    [daemon] idle_minutes without a request; [daemon] enabled = false or GITMEM_NO_DAEMON=1
    turns it off.
    """


def _daemon_layout() -> Layout:
    """The layout of the repository holding the current directory (the store checks it is one)."""
    return _store().layout


@daemon.command("status")
@json_option
def daemon_status() -> None:
    """Whether the warm process runs: pid, uptime, requests, memory, socket, idle timeout.

    Exits 0 when it runs and answers, 1 otherwise.

    \b
    Example usage:
      gitmem daemon status
      gitmem daemon status --json
    """
    from ..ops.daemon import status

    st = status(_daemon_layout())

    def text() -> str:
        i = st.info
        off = "" if st.enabled else " (turned off: [daemon] enabled = false or GITMEM_NO_DAEMON)"
        if st.state == "running":
            rss = f"{i['rss_bytes'] / 2**20:.0f} MiB" if isinstance(i.get("rss_bytes"), int) else "?"
            lines = [f"running{off}: pid {i.get('pid')}, gitmem {i.get('version')}, up {i.get('uptime_s', 0):.0f} s "
                     f"(since {i.get('started')}), {i.get('requests')} requests, {rss} resident",
                     f"socket: {st.socket}", f"exits after {float(i.get('idle_s', 0)) / 60:g} idle minutes"]
        elif st.state == "starting":
            lines = [f"starting{off}: loading the index and the embedding model", f"socket: {st.socket}"]
        elif st.state == "not answering":
            lines = [f"not answering{off}: process {i.get('pid', '?')} holds the warm process's lock but does "
                     "not answer (starting, or stuck: `gitmem daemon stop` ends it, with SIGKILL if it must)",
                     f"socket: {st.socket}"]
        else:
            lines = [f"not running{off}" + ("" if off else " (the next read command starts it)"),
                     f"socket: {st.socket}",
                     f"idle timeout: {st.idle_minutes:g} minutes"]
            lines += [f"stale: {p} (left by a process that died; the next start replaces it)" for p in st.stale]
        return "\n".join(lines)

    _out(shapes.daemon_status_json(st), text)
    if st.state != "running":
        sys.exit(EXIT_ERROR)


@daemon.command("stop")
@json_option
def daemon_stop() -> None:
    """End the warm process (it answers the requests in flight first); the next read command starts a new one.

    Exits 0 when none runs any more, 1 when it could not be stopped.

    \b
    Example usage:
      gitmem daemon stop
    """
    from ..ops.daemon import stop

    stopped, message = stop(_daemon_layout())
    _out(shapes.daemon_stop_json(stopped, message), message)
    if not stopped:
        sys.exit(EXIT_ERROR)
