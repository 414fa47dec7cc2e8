"""Keeping things running: ``sync``, ``consolidate``, ``tidy``, ``mcp``, ``daemon status|stop [--all]``, and the hidden
``merge-file`` (git's merge driver)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .. import shapes
from .base import EXIT_ERROR, State, _note, _out, _store, _warn, _warn_invalid, cli, json_option

if TYPE_CHECKING:
    from ..layout import Layout
    from ..ops.daemon import DaemonState
    from ..ops.tidy import TidyReport


@cli.command()
@click.option("--rebuild", is_flag=True, help="Drop the catalog and its search tables and rebuild them from the "
              "memory files.")
@click.option("--quiet", is_flag=True, help="Print nothing on success.")
@json_option
def sync(rebuild: bool, quiet: bool) -> None:
    """Sync the catalog and its search tables (vectors, full text) with the memory files (incremental; queries do
    this too).

    \b
    Example usage:
      gitmem sync
      gitmem sync --rebuild
    """
    from ..ops.sync import sync as do_sync

    store = _store()
    rep = do_sync(store, rebuild=rebuild)
    res = rep.index
    if not quiet:
        _warn_invalid(store, rep.errors)
        if rep.search.note:
            _note(rep.search.note)
        if rep.removed_old_index:
            _note(f"gitmem: removed the LanceDB index of an older gitmem ({store.display(store.layout.index_dir)}; "
                  "no longer read)")
    if quiet and not State.json:
        return
    if res is None:  # a lean install: the catalog's BM25 is the whole search
        _out(shapes.sync_json(None, len(rep.errors), rep.search.name, rep.catalog_rows),
             f"gitmem: catalog {'rebuilt' if rebuild else 'synced'}: {rep.catalog_rows} memories "
             "(no vectors in this install: full-text search from the catalog)")
        return
    _out(shapes.sync_json(res, len(rep.errors), rep.search.name, rep.catalog_rows),
         f"gitmem: catalog and search vectors {'rebuilt (' + res.reason + ')' if res.rebuilt else 'synced'}: "
         f"{res.added} added, {res.updated} updated, {res.deleted} removed ({rep.catalog_rows} memories)"
         + (f"; {res.reason}" if res.reason and not res.rebuilt else ""))


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
    """The warm process: one per user, serving every repository and worktree (it answers recall, context,
    stale, show, list and log, and the agent hooks' searches).

    Started by the first such command (or an agent's session start), which says so on stderr. A repository's
    state is dropped after its [daemon] idle_minutes without a request; the process exits once it holds none.
    [daemon] enabled = false or GITMEM_NO_DAEMON=1 keeps a repository's commands off it.
    """


def _daemon_layout() -> Layout:
    """The layout of the repository holding the current directory (the store checks it is one)."""
    return _store().layout


def _mib(n: object) -> str:
    return f"{n / 2**20:.0f} MiB" if isinstance(n, int) else "?"


def _minutes(seconds: object) -> str:
    return f"{float(seconds) / 60:.1f} min" if isinstance(seconds, (int, float)) else "?"


@daemon.command("status")
@click.option("--all", "all_roots", is_flag=True,
              help="The whole process: every repository it serves, its memory, each one's idle time.")
@json_option
def daemon_status(all_roots: bool) -> None:
    """Whether the warm process runs and serves this repository: pid, uptime, requests, memory, socket.

    With --all: every repository and worktree it serves and how long each has been idle, and any
    per-worktree process of gitmem before 0.2 still running. Exits 0 when it runs and answers, 1 otherwise.

    \b
    Example usage:
      gitmem daemon status
      gitmem daemon status --all --json
    """
    from ..ops.daemon import status

    if all_roots:
        st = status(None, all_roots=True)
        _out(shapes.daemon_status_all_json(st), lambda: _status_all_text(st))
    else:
        st = status(_daemon_layout())
        _out(shapes.daemon_status_json(st), lambda: _status_text(st))
    if st.state != "running":
        sys.exit(EXIT_ERROR)


def _process_line(st: DaemonState) -> str:
    i = st.info
    return (f"running: pid {i.get('pid')}, gitmem {i.get('version')}, up {i.get('uptime_s', 0):.0f} s "
            f"(since {i.get('started')}), {i.get('requests')} requests, {_mib(i.get('rss_bytes'))} resident "
            f"(PSS {_mib(i.get('pss_bytes'))}), {i.get('roots_loaded')} repositories")


def _not_running_lines(st: DaemonState, off: str = "") -> list[str]:
    i = st.info
    if st.state == "starting":
        return [f"starting{off}: loading the index and the embedding model", f"socket: {st.socket}"]
    if st.state == "not answering":
        return [f"not answering{off}: process {i.get('pid', '?')} holds the warm process's lock but does "
                "not answer (starting, or stuck: `gitmem daemon stop --all` ends it, with SIGKILL if it must)",
                f"socket: {st.socket}"]
    if st.problem and not off:
        return [f"not running: {st.problem}", f"socket: {st.socket}"]
    lines = [f"not running{off}" + ("" if off else " (the next read command starts it)"), f"socket: {st.socket}"]
    return lines + [f"stale: {p} (left by a process that died; the next start replaces it)" for p in st.stale]


def _status_text(st: DaemonState) -> str:
    off = "" if st.enabled else " (turned off here: [daemon] enabled = false or GITMEM_NO_DAEMON)"
    if st.state != "running":
        return "\n".join(_not_running_lines(st, off)
                         + ([f"idle timeout: {st.idle_minutes:g} minutes"] if st.state == "not running" else []))
    mine = st.info.get("root")
    this = (f"this repository: served ({mine.get('requests')} requests, idle {_minutes(mine.get('idle_for_s'))}; "
            f"dropped after {st.idle_minutes:g} idle minutes)" if isinstance(mine, dict) else
            "this repository: not loaded (its next read command loads it)")
    return "\n".join([_process_line(st) + off, this, f"socket: {st.socket}"])


def _status_all_text(st: DaemonState) -> str:
    if st.state == "running":
        lines = [_process_line(st), f"socket: {st.socket}"]
        roots = st.info.get("roots") or []
        lines += [f"  {r.get('root')}: {r.get('requests')} requests, idle {_minutes(r.get('idle_for_s'))} "
                  f"(dropped at {_minutes(r.get('idle_timeout_s'))})" for r in roots if isinstance(r, dict)]
    else:
        lines = _not_running_lines(st)
    lines += [f"older per-worktree process (gitmem before 0.2): pid {p['pid']}, {p['root']}, "
              f"{_mib(p.get('rss_bytes'))} resident (`gitmem daemon stop --all` ends it)" for p in st.legacy]
    if st.legacy_note:
        lines.append(st.legacy_note)
    return "\n".join(lines)


@daemon.command("stop")
@click.option("--all", "all_roots", is_flag=True,
              help="End the warm process itself (every repository), and older per-worktree ones.")
@json_option
def daemon_stop(all_roots: bool) -> None:
    """Drop this repository's state from the warm process (it ends when that was its last repository).

    With --all: end the warm process (it answers the requests in flight first), and any per-worktree process
    of gitmem before 0.2. The next read command starts a new one. Exits 0 when done, 1 when something could
    not be stopped.

    \b
    Example usage:
      gitmem daemon stop
      gitmem daemon stop --all
    """
    from ..ops.daemon import stop, stop_all

    stopped, message = stop_all(None) if all_roots else stop(_daemon_layout())
    _out(shapes.daemon_stop_json(stopped, message), message)
    if not stopped:
        sys.exit(EXIT_ERROR)
