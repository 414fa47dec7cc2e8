"""Finding and checking memories: ``recall``, ``context``, ``stale``, ``check``, ``scan``, ``stats``; and what to
anchor: ``symbols``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from .. import shapes, usage
from ..model import MemoryStatus, Status
from .base import EXIT_ERROR, State, _note, _out, _store, _warn, _warn_invalid, cli, json_option
from .text import render_stats, render_statuses

if TYPE_CHECKING:
    from ..ops.symbols import FileSymbols
    from ..store import Store


@cli.command()
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--personal", is_flag=True, help="Search your personal repository (gitmem personal) instead.")
@click.option("--org", "org", is_flag=True, help="Search the organisation index ([org] uri): every indexed "
              "repository's memories, labelled with their repository and status.")
@click.option("--repo", "repos", multiple=True, metavar="NAME", help="With --org: only this repository. Repeatable.")
@json_option
def recall(query: str, limit: int, personal: bool, org: bool, repos: tuple[str, ...]) -> None:
    """Search memories: full-text (BM25) and semantic, fused by reciprocal rank fusion.

    Without gitmem's `all` extra (a lean `pip install gitmem-cli`): full text
    (BM25) only, said once on stderr; --json hits carry "search": "bm25".

    \b
    Example usage:
      gitmem recall "why are retries capped"
      gitmem recall --personal "how do I like commits"
      gitmem recall --org "retry_after units" --repo ledger
    """
    if not query.strip():
        raise click.UsageError('the query is empty: say what to search for (gitmem recall "why are retries capped")')
    if org and personal:
        raise click.UsageError("--org and --personal search different stores: give one of them")
    if org:
        from .org import recall_org

        recall_org(query, limit, repos)
        return
    if repos:
        raise click.UsageError("--repo needs --org")
    from ..ops.show import statuses_now
    from ..search.lexical import found as do_recall

    if personal:
        from ..ops import personal as personal_ops

        found, how = personal_ops.recall(query, limit, warn=_warn, note=_note)
        _out([shapes.personal_recall_hit_json(h, s, how.name) for h, s in found],
             lambda: "\n".join(f"{h.memory.id}  {h.score:.4f}  personal  [{h.memory.type}] {h.memory.title}"
                               for h, _ in found) or "no matches")
        return

    store = _store()
    hits, how = do_recall(store, query, limit, warn=_warn, note=_note)
    statuses = statuses_now(store, [h.memory for h in hits])  # the catalog's recorded ones while they hold
    usage.record(store.layout, usage.SEARCHED, "recall", [h.memory.id for h in hits])
    _out([shapes.recall_hit_json(h, s, how.name) for h, s in zip(hits, statuses, strict=True)],
         lambda: "\n".join(f"{h.memory.id}  {h.score:.4f}  {s.label:9} [{h.memory.type}] {h.memory.title}"
                           for h, s in zip(hits, statuses, strict=True)) or "no matches")


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
    from ..catalog.files import file_errors
    from ..ops.context import build_context

    store = _store()
    for f in files:  # a file the task will create is a fair focus; a typo should not pass unsaid
        if not os.path.lexists(f):
            _warn(f"{f} does not exist (yet): taken as a file in focus with no code to read; check the path")
    # JSON prints each shown memory's anchors' statuses: evaluated then; text needs only the status and reason
    res = build_context(store, files=files, prompt=prompt, budget=budget, cwd=os.getcwd(), anchor_detail=State.json)
    usage.record(store.layout, usage.GIVEN, "context", res.packed.detailed)  # given in full, as the hooks' are
    if res.search_note:
        _note(res.search_note)
    unreadable = [] if res.total else file_errors(store)
    if unreadable:
        _warn_invalid(store, unreadable)
        empty = f"gitmem: no readable memory; {len(unreadable)} memory file(s) could not be read (gitmem doctor)"
    elif not res.total:
        empty = "gitmem: no memories yet (gitmem remember …)"
    elif not res.ranked:
        empty = f"gitmem: none of the {res.total} memories is about this focus (try gitmem recall)"
    else:
        empty = f"gitmem: {len(res.ranked)} memories are relevant but none fits a budget of {res.budget} tokens"
    _out(shapes.context_json(res), res.packed.text or empty)


@cli.command()
@click.option("--rev", help="Evaluate at this revision, without a checkout (default: the working tree).")
@click.option("--all", "show_all", is_flag=True, help="Show every memory, fresh ones too.")
@click.option("--list", "as_list", is_flag=True, help="Only list them (the default when not on a terminal).")
@json_option
def stale(rev: str | None, show_all: bool, as_list: bool) -> None:
    """Memories whose anchors are not fresh: stale, moved or deleted; unchecked when gitmem could not check
    (an object this clone lacks, another repository out of reach); unwritten at a --rev before their code
    existed. Each with the reason.

    On a terminal, walks them one by one with the diff of their code and asks:
    [k]eep (re-anchor), [e]dit, [r]etire, s[u]persede (type the new text, then
    confirm), [s]kip (or Enter), [q]uit. Elsewhere (or with --list, --json,
    --rev) prints the list.

    \b
    Example usage:
      gitmem stale
      gitmem stale --rev v2.0.0 --json
    """
    from ..catalog.files import file_errors
    from ..ops.stale import stale as do_stale

    store = _store()
    rows = do_stale(store, rev=rev, show_all=show_all)
    errors = file_errors(store)
    _warn_invalid(store, errors)
    interactive = (not as_list and not State.json and rev is None and not show_all
                   and sys.stdin.isatty() and sys.stdout.isatty())
    if interactive and rows:
        # the review (a person is there) says what tidy finds; the listing stays fast (tidy reads every memory)
        tidy_line = _tidy_line(store, rows)
        if tidy_line:
            click.echo(tidy_line)
        from ..ops.review import review

        res = review(store, rows, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        click.echo(f"\nkept {len(res.kept)}, edited {len(res.edited)}, retired {len(res.retired)}, "
                   f"superseded {len(res.superseded)}, skipped {len(res.skipped)}"
                   + ("  (commit .gitmem/ to share)" if len(res.skipped) < len(rows) else ""))
        return
    _out([shapes.memory_status_json(s) for s in rows], lambda: render_statuses(rows, show_all, len(errors)))


def _tidy_line(store: Store, rows: list[MemoryStatus]) -> str:
    """``tidy: N finding(s) …`` when ``gitmem tidy`` (its rules) has something to merge, flag or retire, else ""."""
    from ..errors import GitmemError
    from ..ops.tidy import find

    try:
        rep = find(store, use_llm=False, statuses=[s for s in rows if s.status != Status.FRESH])
    except GitmemError:
        return ""
    if not rep.findings:
        return ""
    return f"tidy: {rep.summary()} (gitmem tidy)"


@cli.command()
@click.option("--base", help="Check the change BASE..HEAD (default: the merge base with the default branch).")
@click.option("--require-reviewed", is_flag=True,
              help="Also fail for each team memory no person has reviewed since its text last changed.")
@json_option
def check(base: str | None, require_reviewed: bool) -> None:
    """Fail (exit 1) when a change leaves team memories stale, invalid or holding a secret.

    One line per problem. For CI on pull requests; a memory made stale is
    resolved in the same change with `gitmem reanchor`, `retire` or `supersede`.
    Every file of .gitmem/memories/ is scanned for secrets, retired and
    superseded memories included.
    With --require-reviewed, every team memory must also carry a person's review
    of its text as it is now (`gitmem review ID` after reading it).

    \b
    Example usage:
      gitmem check --base origin/main
      gitmem check --base origin/main --require-reviewed
    """
    from ..ops.check import check as do_check

    res = do_check(_store(), base, require_reviewed=require_reviewed)
    for w in res.warnings:
        _warn(w)
    problems = res.problems
    where = (f"HEAD is in {res.base_ref}: no change to check; memory files checked" if res.base == res.head
             else f"change {res.base[:12]}..{res.head[:12]}, base {res.base_ref}")
    _out(shapes.check_json(res),
         lambda: "\n".join([f"{p.kind}: {p.message}" for p in problems]
                           + [f"gitmem check: {len(problems)} problem(s) ({where})"]) if problems
         else f"gitmem check: ok ({where})")
    if problems:
        sys.exit(EXIT_ERROR)


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
    from ..ops.scan import scan as do_scan

    res = do_scan(_store(), rev_range)
    not_fresh = sum(1 for s in res.statuses if s.status != Status.FRESH)
    _out(shapes.scan_json(res),
         lambda: f"gitmem: scanned {res.commits} commit(s); {not_fresh} of {len(res.statuses)} "
                 "memories not fresh" + (" (gitmem stale)" if not_fresh else ""))


@cli.command()
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 10_000),
              help="Memories listed as most used, least used and fading.")
@json_option
def stats(limit: int) -> None:
    """How memories are used in this clone, and which fade.

    Per memory: how often it was given to an agent (session start, prompt, before a file,
    MCP context), found by a search (recall, MCP search) and opened (show, MCP get), and
    when last. Fading: never used, and idle (not written, used, nor its code committed)
    for more than one decay half-life ([ranking] decay_half_life_days): they rank lower.
    Totals per type and status.

    \b
    Example usage:
      gitmem stats
      gitmem stats --limit 30 --json
    """
    from ..ops.stats import stats as do_stats

    st = do_stats(_store(), limit=limit)
    _out(shapes.stats_json(st), lambda: render_stats(st))


@cli.command("symbols")
@click.argument("path")
@click.option("--rev", help="The file at this revision (default: the working tree).")
@json_option
def symbols_cmd(path: str, rev: str | None) -> None:
    """List a file's symbols as gitmem names them: what goes after PATH:: in an anchor.

    One line per symbol: its lines, kind, name, and how many memories anchor
    it. Names are gitmem's (`Class.method`, `ns.A.f(int)` for overloads,
    `production.pool`, `jobs.build`, `Deploy.Rollback`, `aws_subnet.public`);
    the language's own spelling (`ns::A::f`) is accepted too when anchoring.

    \b
    Example usage:
      gitmem symbols src/client.py
      gitmem symbols config/database.yml --json
      gitmem remember "…" --anchor docs/runbook.md::Deploy.Rollback
    """
    from ..ops.symbols import file_symbols

    fs = file_symbols(_store(), path, rev=rev, cwd=os.getcwd())
    _out(shapes.symbols_json(fs), lambda: render_symbols(fs))


def render_symbols(fs: FileSymbols) -> str:
    """``path (language): N symbols`` then ``  start-end  kind  name  (also alias)  (N memories)`` per symbol."""
    def memories(n: int) -> str:
        return f"{n} memory" if n == 1 else f"{n} memories"

    at = f" at {fs.rev}" if fs.rev else ""
    head = f"{fs.path}{at} ({fs.language}): {len(fs.symbols)} symbol{'' if len(fs.symbols) == 1 else 's'}"
    if fs.file_memories:
        head += f"; {memories(fs.file_memories)} on the whole file"
    if not fs.symbols and fs.lfs_pointer:
        return head + (f"\nit is a git-lfs pointer here: its content is not in this clone (git lfs pull, with git-lfs "
                       f"installed); anchor the file itself: --anchor {fs.path}")
    if not fs.symbols:
        return head + f"\ngitmem finds no symbols in it; anchor the file itself: --anchor {fs.path}"
    width = max(len(s.kind) for s in fs.symbols)
    span = max(len(f"{s.start_line}-{s.end_line}") for s in fs.symbols)
    lines = [head]
    for s in fs.symbols:
        line = f"  {f'{s.start_line}-{s.end_line}':>{span}}  {s.kind:<{width}}  {s.name}"
        if s.aliases:
            line += f"  (also {', '.join(s.aliases)})"
        if s.memories:
            line += f"  ({memories(s.memories)})"
        lines.append(line)
    lines.append(f"anchor one: --anchor {fs.path}::NAME")
    return "\n".join(lines)
