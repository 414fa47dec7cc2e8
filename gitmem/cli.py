"""The ``gitmem`` command line: parse arguments, call the library, render text or JSON.

No git calls, file writes or ranking here. Errors are rendered in one place
(``main``): an expected ``GitmemError`` prints ``error:`` and ``hint:`` lines
on stderr and exits 1; a usage error exits 2; a bug exits 3 with the path of a
log under ``<common-dir>/gitmem/logs/``; Ctrl-C exits 130. With ``--json`` stdout
holds only JSON, and errors go to stderr as a JSON object.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from . import __version__, infra, layout
from .errors import GitmemError
from .git import WORKTREE, Repo
from .model import MEMORY_TYPES, Status
from .shapes import dumps, memory_json, memory_status_json, scored_json

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPT = 0, 1, 2, 3, 130


class _State:
    json = False


def _store(require: bool = True):  # type: ignore[no-untyped-def]
    from .store import Store

    store = Store(Repo(os.getcwd()), require=require)
    store.enable_symbol_cache()
    return store


def _out(obj: Any, text: str | Callable[[], str]) -> None:
    """Print ``obj`` as JSON in JSON mode, else ``text``."""
    if _State.json:
        click.echo(dumps(obj))
    else:
        t = text() if callable(text) else text
        if t:
            click.echo(t.rstrip("\n"))


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    def cb(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        if value:
            _State.json = True
        return value

    return click.option("--json", "as_json", is_flag=True, expose_value=False, callback=cb,
                        is_eager=True, help="Print JSON (stdout holds only JSON).")(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="gitmem")
def cli() -> None:
    """gitmem: long-term memory for coding agents, anchored to the code.

    \b
    Example usage:
      gitmem init
      gitmem remember "Config load order is env > yaml > defaults" --anchor src/config.py::parse_config
      gitmem context --prompt "change how config is loaded"
      gitmem stale
    """


# -- setup -------------------------------------------------------------------------------------


@cli.command()
@click.option("--no-hooks", is_flag=True, help="Create .gitmem/ only; install no git hooks.")
@json_option
def init(no_hooks: bool) -> None:
    """Create .gitmem/ (config, memories, ignore file) and install the git hooks.

    Idempotent. Existing hooks are kept and chained (they still run first).
    Undo the hooks with `gitmem hooks uninstall`.

    \b
    Example usage:
      gitmem init
    """
    from .integrations import git_hooks
    from .store import init_layout

    repo = Repo(os.getcwd())
    created = init_layout(repo)
    from .integrations.merge_driver import install as install_driver

    created += [c for c in install_driver(repo.root) if c.startswith(".gitmem/")]
    report = None if no_hooks else git_hooks.install(repo)
    obj = {"root": str(repo.root), "created": created,
           "hooks": None if report is None else {
               "dir": str(report.hooks_dir), "installed": report.installed, "already": report.already,
               "chained": report.chained, "notes": report.notes}}

    def text() -> str:
        lines = [f"gitmem: initialised {repo.root}" if created else f"gitmem: already initialised in {repo.root}"]
        lines += [f"  created {c}" for c in created]
        if report is not None:
            if report.installed:
                lines.append(f"  hooks installed in {report.hooks_dir}: {', '.join(report.installed)}")
            if report.chained:
                lines.append(f"  existing hooks kept and chained: {', '.join(report.chained)}")
            if report.already and not report.installed:
                lines.append(f"  hooks already installed in {report.hooks_dir}")
            lines += [f"  note: {n}" for n in report.notes]
        lines.append("Next: gitmem remember \"what to remember\" --anchor path/to/file.py::Symbol")
        lines.append("With Claude Code: gitmem install claude   (memories at session start, per prompt, per file)")
        return "\n".join(lines)

    _out(obj, text)


@cli.group()
def hooks() -> None:
    """Install, remove or inspect gitmem's git hooks."""


@hooks.command("install")
@json_option
def hooks_install() -> None:
    """Install the git hooks where git runs them (chaining existing ones).

    \b
    Example usage:
      gitmem hooks install
    """
    from .integrations import git_hooks

    repo = Repo(os.getcwd())
    r = git_hooks.install(repo)
    if (repo.root / ".gitmem").is_dir():
        from .integrations.merge_driver import install as install_driver

        r.notes.extend(f"merge driver: {c}" for c in install_driver(repo.root))
    _out({"dir": str(r.hooks_dir), "installed": r.installed, "already": r.already, "chained": r.chained,
          "skipped": r.skipped, "notes": r.notes},
         lambda: "\n".join([f"hooks dir: {r.hooks_dir}", f"installed: {', '.join(r.installed) or '-'}",
                            f"already: {', '.join(r.already) or '-'}", f"chained: {', '.join(r.chained) or '-'}"]
                           + [f"note: {n}" for n in r.notes]))


@hooks.command("uninstall")
@json_option
def hooks_uninstall() -> None:
    """Remove gitmem's git hooks; restore the hooks they had chained.

    \b
    Example usage:
      gitmem hooks uninstall
    """
    from .integrations import git_hooks

    removed = git_hooks.uninstall(Repo(os.getcwd()))
    _out({"removed": removed}, f"removed: {', '.join(removed) or 'nothing (no gitmem hooks found)'}")


@hooks.command("status")
@json_option
def hooks_status() -> None:
    """Show each hook: installed, chained, and whether git will run it."""
    from .integrations import git_hooks

    states = git_hooks.status(Repo(os.getcwd()))
    _out([{"name": h.name, "path": str(h.path), "installed": h.installed, "current": h.ours_current,
           "legacy": str(h.legacy) if h.legacy else None, "will_run": h.will_run, "problem": h.problem,
           "note": h.note}
          for h in states],
         lambda: "\n".join(f"{h.name:14} {'runs' if h.will_run and h.installed else 'NOT RUN'}  {h.path}"
                           + (f"  ({h.problem})" if h.problem else "") + (f"  [{h.note}]" if h.note else "")
                           for h in states))


# -- writing -----------------------------------------------------------------------------------


@cli.command()
@click.argument("text")
@click.option("--title", help="Title (default: the first line of TEXT).")
@click.option("--type", "mtype", type=click.Choice(MEMORY_TYPES), default="discovery", show_default=True)
@click.option("--anchor", "anchors", multiple=True, metavar="PATH[::SYMBOL]",
              help="What the memory is about: a file, a symbol, or commit:REV. Repeatable.")
@click.option("--rev", help="Anchor against this revision instead of the working tree.")
@click.option("--tag", "tags", multiple=True, help="A tag (concept). Repeatable.")
@click.option("--fact", "facts", multiple=True, help="A short fact. Repeatable.")
@click.option("--local", is_flag=True, help="Local scope: this clone only, never committed.")
@click.option("--invariant", is_flag=True, help="The anchors must change together (a commit changing only some is flagged).")
@json_option
def remember(text: str, title: str | None, mtype: str, anchors: tuple[str, ...], rev: str | None,
             tags: tuple[str, ...], facts: tuple[str, ...], local: bool, invariant: bool) -> None:
    """Record a memory, anchored to files, symbols or commits; prints its id.

    \b
    Example usage:
      gitmem remember "Retries are capped at 3: the upstream rate-limits" \\
        --type decision --anchor src/client.py::Client.fetch --tag retries
      gitmem remember "Parser chokes on BOM" --anchor lib/parse.js --rev v1.2.0
    """
    from .memories import RememberRequest
    from .memories import remember as do_remember

    m = do_remember(_store(), RememberRequest(text=text, title=title, type=mtype, anchors=anchors,
                                              tags=tags, facts=facts, rev=rev,
                                              scope="local" if local else "team", cwd=os.getcwd(),
                                              invariant=invariant),
                     warn=_warn)
    _out(memory_json(m), m.id)


@cli.command()
@click.argument("mem_id", metavar="ID")
@json_option
def forget(mem_id: str) -> None:
    """Delete a memory (its file; commit the deletion to share it).

    \b
    Example usage:
      gitmem forget 01JD3V6Q
    """
    from .memories import forget as do_forget

    m = do_forget(_store(), mem_id)
    _out({"id": m.id, "forgotten": True}, f"forgot {m.id} {m.title}")


# -- reading -----------------------------------------------------------------------------------


@cli.command()
@click.argument("mem_id", metavar="ID")
@click.option("--rev", help="Evaluate anchor status at this revision (default: working tree).")
@json_option
def show(mem_id: str, rev: str | None) -> None:
    """Show one memory in full, with the status of each anchor.

    \b
    Example usage:
      gitmem show 01JD3V6Q
    """
    from .analyzer import evaluate

    store = _store()
    m = store.get(mem_id)
    ms = evaluate(store, store.repo.resolve(rev) if rev else WORKTREE, [m])[0]
    obj = memory_json(m) | {"status": ms.status.value,
                            "anchor_statuses": memory_status_json(ms)["anchors"],
                            "path": store.display(store.path_for(m))}

    def text() -> str:
        lines = [f"{m.id}  [{m.type}] {m.title}", f"status: {ms.status.value}   scope: {m.scope}   "
                 f"author: {m.author or '-'}   created: {m.created}   updated: {m.updated}"]
        for a in ms.anchors:
            line = f"  {a.status.value:8} {a.anchor.key}{_where_now(a)}"
            if a.reason:
                line += f"  — {a.reason}"
            lines.append(line)
        if m.retired:
            lines.append(f"retired: {m.retired}" + (f"   superseded by: {', '.join(m.superseded_by)}"
                                                     if m.superseded_by else ""))
        if m.supersedes:
            lines.append("supersedes: " + ", ".join(m.supersedes))
        if m.tags:
            lines.append("tags: " + ", ".join(m.tags))
        if m.body:
            lines += ["", m.body]
        if m.facts:
            lines += [""] + [f"- {f}" for f in m.facts]
        return "\n".join(lines)

    _out(obj, text)


@cli.command("list")
@click.option("--type", "mtype", type=click.Choice(MEMORY_TYPES), help="Only this type.")
@click.option("--anchor", metavar="PATH[::SYMBOL]", help="Only memories anchored there (or nested inside).")
@json_option
def list_cmd(mtype: str | None, anchor: str | None) -> None:
    """List memories, newest first (invalid files are reported on stderr).

    \b
    Example usage:
      gitmem list --type decision
      gitmem list --anchor src/auth/
    """
    from .memories import list_memories

    store = _store()
    mems = list_memories(store, type=mtype, anchor=anchor, cwd=os.getcwd())
    _warn_invalid(store)
    _out([memory_json(m) for m in mems],
         lambda: "\n".join(f"{m.id}  {m.type:10} {m.title}  ({', '.join(a.key for a in m.anchors) or '-'})"
                           for m in mems) or "no memories")


@cli.command()
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@json_option
def recall(query: str, limit: int) -> None:
    """Search memories: full-text (BM25) and semantic, fused by reciprocal rank fusion.

    \b
    Example usage:
      gitmem recall "why are retries capped"
    """
    from .search.recall import recall as do_recall

    hits = do_recall(_store(), query, limit, warn=_warn)
    _out([memory_json(h.memory) | {"score": round(h.score, 6), "fts_rank": h.fts_rank,
                                   "vector_rank": h.vector_rank} for h in hits],
         lambda: "\n".join(f"{h.memory.id}  {h.score:.4f}  [{h.memory.type}] {h.memory.title}"
                           for h in hits) or "no matches")


@cli.command()
@click.option("--file", "files", multiple=True, metavar="PATH", help="A file in focus. Repeatable.")
@click.option("--prompt", default="", help="What you are about to do (paths and symbols in it count).")
@click.option("--budget", type=click.IntRange(1, 1_000_000), help="Token budget (default: config, 1500).")
@json_option
def context(files: tuple[str, ...], prompt: str, budget: int | None) -> None:
    """The memories closest to the code you are working on, packed into a token budget.

    Focus: dirty files and their changed symbols, files the branch changed
    since it left the default branch, --file, and paths/symbols named in
    --prompt; fused with text relevance to the prompt. Not-fresh memories are
    marked with their reason (or left out: [context] stale = "omit").

    \b
    Example usage:
      gitmem context
      gitmem context --file src/config.py --prompt "make env override yaml" --budget 800
    """
    from .ops.context import build_context

    res = build_context(_store(), files=files, prompt=prompt, budget=budget, cwd=os.getcwd())
    shown = set(res.packed.detailed) | set(res.packed.indexed)
    obj = {"budget": res.budget, "tokens": res.packed.tokens, "text": res.packed.text,
           "detailed": res.packed.detailed, "indexed": res.packed.indexed,
           "left_out": res.packed.left_out,
           "focus": {"files": {p: {"weight": w, "why": why} for p, (w, why) in sorted(res.focus.files.items())},
                     "symbols": [f"{p}::{n}" for (p, n) in sorted(res.focus.symbols)],
                     "names": sorted(res.focus.names)},
           "memories": [scored_json(s) for s in res.ranked if s.memory.id in shown]}
    if not res.total:
        empty = "gitmem: no memories yet (gitmem remember …)"
    elif not res.ranked:
        empty = f"gitmem: none of the {res.total} memories is about this focus (try gitmem recall)"
    else:
        empty = f"gitmem: {len(res.ranked)} memories are relevant but none fits a budget of {res.budget} tokens"
    _out(obj, res.packed.text or empty)


@cli.command()
@click.option("--rev", help="Evaluate at this revision, without a checkout (default: the working tree).")
@click.option("--all", "show_all", is_flag=True, help="Show every memory, fresh ones too.")
@click.option("--list", "as_list", is_flag=True, help="Only list them (the default when not on a terminal).")
@json_option
def stale(rev: str | None, show_all: bool, as_list: bool) -> None:
    """Memories whose anchors are not fresh: stale, moved or deleted, with the reason.

    On a terminal, walks them one by one with the diff of their code: keep
    (re-anchor), edit, retire, supersede or skip. Elsewhere (or with --list,
    --json, --rev) prints the list.

    \b
    Example usage:
      gitmem stale
      gitmem stale --rev v2.0.0 --json
    """
    from .analyzer import evaluate

    store = _store()
    target = store.repo.resolve(rev) if rev else WORKTREE
    statuses = None
    if target is WORKTREE and not show_all:
        from .catalog.sync import not_fresh

        try:
            statuses = not_fresh(store)  # cost follows what changed, not the number of memories
        except Exception:  # noqa: BLE001 - the hook index is a cache: evaluate everything instead
            statuses = None
    if statuses is None:
        statuses = evaluate(store, target)
    _warn_invalid(store)
    rows = [s for s in statuses if show_all or s.status != Status.FRESH]
    interactive = (not as_list and not _State.json and rev is None and not show_all
                   and sys.stdin.isatty() and sys.stdout.isatty())
    if interactive and rows:
        from .ops.review import review

        res = review(store, rows, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        click.echo(f"\nkept {len(res.kept)}, edited {len(res.edited)}, retired {len(res.retired)}, "
                   f"superseded {len(res.superseded)}, skipped {len(res.skipped)}"
                   + ("  (commit .gitmem/ to share)" if len(res.skipped) < len(rows) else ""))
        return
    _out([memory_status_json(s) for s in rows], lambda: _render_statuses(rows, show_all))


@cli.command()
@click.argument("mem_ids", nargs=-1, required=True, metavar="ID...")
@click.option("--drop-deleted", is_flag=True, help="Drop anchors whose code is gone (else: an error).")
@json_option
def reanchor(mem_ids: tuple[str, ...], drop_deleted: bool) -> None:
    """Mark memories as still true: record their anchors again against the code as it is now.

    Moved anchors follow their code; stale ones are re-made over the changed
    code; commit anchors stay. Commit the memory files to share the decision.

    \b
    Example usage:
      gitmem stale
      gitmem reanchor 01KB0Y1R9W3Q
    """
    from .ops.reanchor import reanchor as do_reanchor

    store = _store()
    done = [do_reanchor(store, mid, drop_deleted=drop_deleted) for mid in mem_ids]
    _out([{"id": r.memory.id, "anchors": [a.key for a in r.memory.anchors], "changes": r.changes,
           "dropped": r.dropped} for r in done],
         lambda: "\n".join(f"re-anchored {r.memory.id} {r.memory.title}"
                           + "".join(f"\n  {c}" for c in r.changes)
                           + "".join(f"\n  dropped {d}" for d in r.dropped) for r in done))


@cli.command()
@click.argument("mem_id", metavar="ID")
@click.option("--reason", default="", help="Why it is no longer true (kept as a fact).")
@json_option
def retire(mem_id: str, reason: str) -> None:
    """Retire a memory that is no longer true (its file stays, for history; commit it).

    \b
    Example usage:
      gitmem retire 01KB0Y1R9W3Q --reason "the cache was removed in v3"
    """
    from .ops.lifecycle import retire as do_retire

    m = do_retire(_store(), mem_id, reason)
    _out({"id": m.id, "retired": m.retired}, f"retired {m.id} {m.title}")


@cli.command()
@click.argument("mem_id", metavar="ID")
@click.argument("text")
@click.option("--title", help="Title (default: the first line of TEXT).")
@click.option("--type", "mtype", type=click.Choice(MEMORY_TYPES), help="Type (default: the old memory's).")
@click.option("--anchor", "anchors", multiple=True, metavar="PATH[::SYMBOL]",
              help="Anchor (default: the old memory's anchors, where their code is now). Repeatable.")
@click.option("--tag", "tags", multiple=True, help="A tag. Repeatable.")
@click.option("--fact", "facts", multiple=True, help="A short fact. Repeatable.")
@json_option
def supersede(mem_id: str, text: str, title: str | None, mtype: str | None, anchors: tuple[str, ...],
              tags: tuple[str, ...], facts: tuple[str, ...]) -> None:
    """Replace a memory with a new one (linked both ways); the old one is retired.

    \b
    Example usage:
      gitmem supersede 01KB0Y1R9W3Q "Retries are capped at 5 since the gateway allows bursts"
    """
    from .memories import RememberRequest
    from .ops.lifecycle import supersede as do_supersede

    res = do_supersede(_store(), mem_id, RememberRequest(text=text, title=title, type=mtype or "",
                                                         anchors=anchors, tags=tags, facts=facts,
                                                         source="user", cwd=os.getcwd()))
    _out({"id": res.new.id, "supersedes": res.old.id, "anchors": [a.key for a in res.new.anchors]},
         f"{res.new.id} supersedes {res.old.id} (retired)")


@cli.command()
@click.option("--base", help="Check the change BASE..HEAD (default: the merge base with the default branch).")
@json_option
def check(base: str | None) -> None:
    """Fail (exit 1) when a change leaves team memories stale, invalid or holding a secret.

    One line per problem. For CI on pull requests; a memory made stale is
    resolved in the same change with `gitmem reanchor`, `retire` or `supersede`.

    \b
    Example usage:
      gitmem check --base origin/main
    """
    from .ops.check import check as do_check

    store = _store()
    used, problems = do_check(store, base)
    _out({"base": used, "ok": not problems,
          "problems": [{"kind": p.kind, "subject": p.subject, "message": p.message} for p in problems]},
         lambda: "\n".join(f"{p.kind}: {p.message}" for p in problems)
         or f"gitmem check: ok ({'change ' + used[:12] + '..HEAD' if used else 'no base: memory files only'})")
    if problems:
        sys.exit(EXIT_ERROR)


@cli.command("log")
@click.argument("mem_id", metavar="ID")
@json_option
def log_cmd(mem_id: str) -> None:
    """A memory's history (its file in git) with the commits that changed its code, newest first.

    \b
    Example usage:
      gitmem log 01KB0Y1R9W3Q
    """
    import datetime as _dt

    from .ops.history import memory_log

    entries = memory_log(_store(), mem_id)

    def day(t: int) -> str:
        return _dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d")

    _out([{"kind": e.kind, "commit": e.commit, "time": e.time, "author": e.author, "subject": e.subject,
           "what": e.what} for e in entries],
         lambda: "\n".join(f"{e.commit[:12]} {day(e.time)} {e.kind:6} {e.what} — {e.subject} ({e.author})"
                           for e in entries) or "no history yet (the memory file is not committed)")


@cli.command("share")
@click.argument("mem_ids", nargs=-1, required=True, metavar="ID...")
@json_option
def share_cmd(mem_ids: tuple[str, ...]) -> None:
    """Make local memories team memories (their files move to .gitmem/memories/; commit them).

    With `[share] policy = "with-code"` (the default) this happens by itself when a
    commit changes the code a local memory is anchored to.

    \b
    Example usage:
      gitmem share 01KB0Y1R9W3Q
    """
    from .ops.share import share

    store = _store()
    done = [share(store, mid) for mid in mem_ids]
    _out([{"id": m.id, "scope": m.scope, "path": store.display(store.path_for(m))} for m in done],
         lambda: "\n".join(f"shared {m.id} {m.title} → {store.display(store.path_for(m))}" for m in done))


@cli.command("export")
@click.option("--local", "include_local", is_flag=True, help="Include local memories.")
@click.option("--retired", "include_retired", is_flag=True, help="Include retired memories.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-", show_default=True,
              help="File to write (- for stdout).")
def export_cmd(include_local: bool, include_retired: bool, output: str) -> None:
    """Write memories as JSON Lines (one memory per line, anchors included), for other tools or repositories.

    \b
    Example usage:
      gitmem export -o memories.jsonl
      gitmem export | (cd ../other-repo && gitmem import -)
    """
    from .ops.transfer import export_lines

    lines = export_lines(_store(), include_local=include_local, include_retired=include_retired)
    with click.open_file(output, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")


@cli.command("import")
@click.argument("source", metavar="FILE|claude-mem")
@click.argument("db", required=False, metavar="[DB]")
@json_option
def import_cmd(source: str, db: str | None) -> None:
    """Import memories: a JSON Lines FILE from `gitmem export` (- for stdin), or `claude-mem [DB]`.

    claude-mem: this repository's observations and session summaries of the
    database (default ~/.claude-mem/claude-mem.db), anchored to the files they
    modified and the symbols their text names; local scope; re-importing adds nothing.

    Anchors are kept when their commit exists here, else re-made against the
    working tree where their file and symbol exist, else dropped. Ids that exist
    are skipped. Text is redacted.

    \b
    Example usage:
      gitmem import memories.jsonl
      gitmem import claude-mem
    """
    from .ops.transfer import import_lines

    store = _store()
    if source == "claude-mem":
        from .ops.import_claude_mem import import_claude_mem

        rep = import_claude_mem(store, db)
        _out({"written": rep.written, "already": rep.already, "other_projects": rep.other_projects,
              "unanchored": rep.unanchored},
             f"imported {len(rep.written)} memories from claude-mem (local scope), {rep.already} imported before, "
             f"{rep.other_projects} of other projects left out, {rep.unanchored} without an anchor here")
        return
    with click.open_file(source, "r", encoding="utf-8", errors="replace") as f:
        report = import_lines(store, f)
    _out({"written": report.written, "skipped": report.skipped, "rejected": report.rejected,
          "dropped_anchors": report.dropped_anchors},
         lambda: "\n".join([f"imported {len(report.written)} memories, skipped {len(report.skipped)} "
                            f"(ids that exist), rejected {len(report.rejected)} lines, dropped "
                            f"{len(report.dropped_anchors)} anchors (not in this repository)"]
                           + [f"  rejected {r}" for r in report.rejected[:20]]))


@cli.command("merge-file", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("name", required=False, default="")
def merge_file_cmd(base: str, ours: str, theirs: str, name: str) -> None:
    """Git merge driver for memory files (git runs it: merge.gitmem.driver)."""
    from .integrations.merge_driver import merge_file

    sys.exit(merge_file(base, ours, theirs, name))


def _where_now(a: Any) -> str:
    """`` → path::Name`` when the anchored code now lives elsewhere, else ""."""
    if a.path_now and (a.path_now != a.anchor.path or (a.symbol_now and a.symbol_now != a.anchor.symbol)):
        return f" → {a.path_now}" + (f"::{a.symbol_now}" if a.symbol_now else "")
    return ""


def _render_statuses(rows: list[Any], show_all: bool) -> str:
    if not rows:
        return "gitmem: all memories are fresh" if not show_all else "no memories"
    lines = []
    for s in rows:
        lines.append(f"{s.status.value:8} {s.memory.id}  {s.memory.title}")
        for a in s.anchors:
            lines.append(f"    {a.status.value:8} {a.anchor.key}{_where_now(a)}" + (f"  — {a.reason}" if a.reason else ""))
    return "\n".join(lines)


@cli.command()
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@json_option
def scan(rev_range: str | None) -> None:
    """Re-run the analyzer over a range of commits (catch up after bypassed hooks or a clone).

    REV_RANGE `A..B` analyses each commit of the range in order, then evaluates
    every memory at B. A single revision (default HEAD) only evaluates there.

    \b
    Example usage:
      gitmem scan                # evaluate every memory at HEAD
      gitmem scan origin/main..HEAD
    """
    from .ops.scan import scan as do_scan

    res = do_scan(_store(), rev_range)
    _out({"commits": res.commits, "evaluated": len(res.statuses),
          "not_fresh": [memory_status_json(s) for s in res.statuses if s.status != Status.FRESH]},
         lambda: f"gitmem: scanned {res.commits} commit(s); "
                 f"{sum(1 for s in res.statuses if s.status != Status.FRESH)} of {len(res.statuses)} "
                 "memories not fresh" + (" (gitmem stale)" if any(s.status != Status.FRESH for s in res.statuses) else ""))


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
    from .catalog.sync import sync_hook_index
    from .search.recall import close_source, open_index, sync_index

    store = _store()
    index = open_index(store)
    if rebuild:
        from .catalog.db import db_path

        for suffix in ("", "-wal", "-shm"):
            Path(str(db_path(store.repo.root)) + suffix).unlink(missing_ok=True)
    try:
        sync_hook_index(store, full=True)  # the hooks' SQLite mirror: every file stat-ed, changed ones read
    except Exception as e:  # noqa: BLE001 - a cache: report, the LanceDB sync reads the files itself
        _warn(f"the hook index was not updated ({type(e).__name__}: {e})")
    if rebuild:
        loaded = store.load_all()
        mems = loaded.memories
        res = index.rebuild(loaded.hashes, lambda i: mems[i])
        errors = loaded.errors
    else:
        _, res, src = sync_index(store, None, index)
        close_source(src)
        from .catalog.files import file_errors

        errors = file_errors(store)
    if not quiet:
        _warn_invalid(store, SimpleNamespace(errors=errors))
    obj = {"added": res.added, "updated": res.updated, "deleted": res.deleted, "rebuilt": res.rebuilt,
           "reason": res.reason, "invalid": len(errors)}
    if quiet and not _State.json:
        return
    _out(obj, f"gitmem: index {'rebuilt (' + res.reason + ')' if res.rebuilt else 'synced'}: "
              f"{res.added} added, {res.updated} updated, {res.deleted} removed")


@cli.command()
@json_option
def doctor() -> None:
    """Check hooks (will git run them?), memory files, config and the index.

    Exits 1 when something is wrong.

    \b
    Example usage:
      gitmem doctor
    """
    from .ops.doctor import diagnose

    report = diagnose(_store())
    _out({"ok": report.ok, "checks": [{"name": c.name, "level": c.level, "message": c.message, "hint": c.hint}
                                      for c in report.checks]},
         lambda: "\n".join(f"{c.level:5} {c.message}" + (f"\n      hint: {c.hint}" if c.hint and c.level != 'ok'
                                                         else "") for c in report.checks))
    if not report.ok:
        sys.exit(EXIT_ERROR)


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
    try:
        from .integrations.mcp_server import serve
    except ImportError as e:
        raise GitmemError(f"the MCP server needs the mcp package: {e}", "pip install 'mcp>=2.3,<3'") from e
    serve(repo)


@cli.group("install")
def install_group() -> None:
    """Register gitmem with an agent."""


@cli.group("uninstall")
def uninstall_group() -> None:
    """Remove what `gitmem install` registered."""


def _claude_target(user: bool) -> Path | None:
    return None if user else _store(require=False).repo.root


def _render_claude(res: Any, verb: str) -> str:
    lines = [f"{verb if Path(p).exists() else 'removed'} {p}" for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


@install_group.command("claude")
@click.option("--project", "scope", flag_value="project", default=True,
              help="The project's .claude/settings.json and .mcp.json (default).")
@click.option("--user", "scope", flag_value="user", help="~/.claude/settings.json and ~/.claude.json.")
@json_option
def install_claude(scope: str) -> None:
    """Register gitmem's Claude Code hooks and MCP server (merged with what is there; idempotent).

    \b
    Hooks: SessionStart, UserPromptSubmit and PreToolUse (Read|Edit|Write) inject
    memories; PostToolUse, Stop and SessionEnd capture the session for consolidation.
    Undo with `gitmem uninstall claude`.
    """
    from .integrations.agents.claude_install import install

    user = scope == "user"
    res = install(_claude_target(user), user=user)
    _out({"changed": res.changed, "notes": res.notes, "command": res.command,
          "settings": str(res.settings), "mcp": str(res.mcp)}, lambda: _render_claude(res, "updated"))


@uninstall_group.command("claude")
@click.option("--project", "scope", flag_value="project", default=True, help="The project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="The user's settings.")
@json_option
def uninstall_claude(scope: str) -> None:
    """Remove gitmem's Claude Code hooks and MCP server; everything else stays as it is."""
    from .integrations.agents.claude_install import uninstall

    user = scope == "user"
    res = uninstall(_claude_target(user), user=user)
    _out({"changed": res.changed}, lambda: _render_claude(res, "updated"))


@cli.command()
@click.option("--session", help="Only this session (its id as Claude Code gives it).")
@click.option("--no-llm", is_flag=True, help="Use the deterministic rules even when [llm] is configured.")
@json_option
def consolidate(session: str | None, no_llm: bool) -> None:
    """Turn captured sessions (the spool) into local memories now.

    SessionEnd runs this in the background; run it by hand after a crash or to
    see what a session produced. Uses [llm] from config.toml when set.
    """
    from .capture.consolidate import consolidate_all, consolidate_session
    from .capture.spool import session_key
    from .catalog.sync import sync_hook_index

    store = _store()
    if session:
        one = consolidate_session(store, session_key(session), use_llm=not no_llm)
        if one is None:
            raise GitmemError(f"session {session} is being consolidated by another process", "try again in a moment")
        outcomes = [one]
    else:
        outcomes = consolidate_all(store, use_llm=not no_llm)
    try:
        sync_hook_index(store)
    except Exception as e:  # noqa: BLE001 - the memories are written; the hook index is a cache
        _warn(f"the hook index was not updated ({type(e).__name__}: {e}); the next session start retries")
    rows = [{"session": o.session, "events": o.events, "batches": o.batches, "path": o.path,
             "written": o.written, "removed": o.removed, "notes": o.notes} for o in outcomes]
    from .capture.worker import log_line

    for r in rows:
        log_line(store.repo.root, f"session {r['session']} (by hand): {r['events']} events → {r['path']}; "
                                  f"wrote {len(r['written'])} memor{'y' if len(r['written']) == 1 else 'ies'} {' '.join(r['written'])}")

    def text() -> str:
        if not rows:
            return "nothing to consolidate"
        out = []
        quiet = [r for r in rows if not r["written"] and not r["notes"]]
        for r in rows:
            if r in quiet:
                continue
            out.append(f"session {r['session']}: {r['events']} events → {len(r['written'])} memor{'y' if len(r['written']) == 1 else 'ies'} ({r['path']})"
                       + "".join(f"\n  {mid}" for mid in r["written"]) + "".join(f"\n  note: {n}" for n in r["notes"]))
        if quiet:
            out.append(f"{len(quiet)} session(s) with nothing worth a memory (only reads, searches or commands)")
        return "\n".join(out)

    _out(rows, text)


def _warn(message: str) -> None:
    """A warning on stderr (a JSON object in JSON mode)."""
    click.echo(dumps({"warning": message}) if _State.json else f"warning: {message}", err=True)


def _warn_invalid(store: Any, loaded: Any = None) -> None:
    from .catalog.files import file_errors

    for e in (loaded.errors if loaded is not None else file_errors(store)):
        if _State.json:
            click.echo(dumps({"warning": e.message, "hint": e.hint}), err=True)
        else:
            click.echo(f"warning: {e.message}" + (f" ({e.hint})" if e.hint else ""), err=True)


# -- error rendering ---------------------------------------------------------------------------


def _bug_log(exc: BaseException) -> Path | None:
    """Write a bug report under the clone's logs folder (or the temp dir); returns its path."""
    return infra.bug_report(layout.logs_dir_near(Path.cwd()), exc, version=__version__)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 error, 2 usage, 3 bug, 130 interrupted)."""
    _State.json = False
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
        if _State.json:
            click.echo(dumps({"error": e.message, "hint": e.hint}), err=True)
        else:
            click.echo(f"error: {e.message}", err=True)
            if e.hint:
                click.echo(f"hint: {e.hint}", err=True)
        return e.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPT
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) or e.code is None else EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # a file gitmem must read or write is not accessible
        where = f": {e.filename}" if e.filename else ""
        msg = f"{e.strerror or type(e).__name__}{where}"
        hint = "check the permissions and free space of .gitmem/ (gitmem doctor)"
        if _State.json:
            click.echo(dumps({"error": msg, "hint": hint}), err=True)
        else:
            click.echo(f"error: {msg}\nhint: {hint}", err=True)
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - the one place a bug becomes a message
        log = _bug_log(e)
        click.echo(f"gitmem: unexpected error: {type(e).__name__}: {e}", err=True)
        if log:
            click.echo(f"a report was written to {log}; please attach it to a bug report", err=True)
        return EXIT_BUG


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
