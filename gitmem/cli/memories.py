"""One memory at a time: ``remember``, ``forget``, ``show``, ``review``, ``list``, ``supersede``, ``retire``,
``reanchor``, ``share``, ``log``."""

from __future__ import annotations

import os

import click

from .. import provenance, shapes, usage
from ..errors import AnchorError
from ..model import MEMORY_TYPES, STATUS_FILTERS, Memory, MemoryStatus
from ..rank.render import was_note
from .base import _note, _out, _store, _warn, _warn_invalid, cli, json_option
from .text import where_now


def writer() -> tuple[str, str | None]:
    """(source, origin) of text typed at this command line: a person's (``user``), unless an agent's shell runs
    it (``provenance.agent_from_env``: then ``agent`` and the agent's name)."""
    agent = provenance.agent_from_env(os.environ)
    return ("user", None) if agent is None else ("agent", agent)


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
@click.option("--personal", is_flag=True,
              help="Your personal repository (gitmem personal): given in every repository, never in this one's files. "
                   "No anchors.")
@click.option("--invariant", is_flag=True,
              help="The anchors must change together (a commit changing only some is flagged).")
@json_option
def remember(text: str, title: str | None, mtype: str, anchors: tuple[str, ...], rev: str | None,
             tags: tuple[str, ...], facts: tuple[str, ...], local: bool, personal: bool, invariant: bool) -> None:
    """Record a memory, anchored to files, symbols or commits; prints its id.

    TEXT `-` reads the text from standard input (until end of file); TEXT is
    never read from standard input otherwise, so an agent's shell that leaves
    standard input open never waits.

    Typed by a person, it is recorded as person-written and reviewed by its
    author; run from an agent's shell (CLAUDECODE, GEMINI_CLI, CODEX_THREAD_ID …
    set), as the agent's.

    \b
    Example usage:
      gitmem remember "Retries are capped at 3: the upstream rate-limits" \\
        --type decision --anchor src/client.py::Client.fetch --tag retries
      gitmem remember "Parser chokes on BOM" --anchor lib/parse.js --rev v1.2.0
      gitmem remember --personal "I run the tests with -x first" --type preference --tag testing
      git log -1 --format=%B | gitmem remember - --anchor src/client.py
    """
    from ..memories import RememberRequest
    from ..memories import remember as do_remember

    text = _stdin_text() if text == "-" else text
    source, origin = writer()
    if personal:
        if local or invariant:
            raise click.UsageError("--personal cannot be combined with --local or --invariant")
        from ..ops import personal as personal_ops

        m = personal_ops.remember(RememberRequest(text=text, title=title, type=mtype, anchors=anchors, tags=tags,
                                                  facts=facts, rev=rev, source=source, origin=origin), warn=_warn)
        _out(shapes.personal_memory_json(m), f"{m.id} (personal)")
        return
    try:
        m = do_remember(_store(), RememberRequest(text=text, title=title, type=mtype, anchors=anchors,
                                                  tags=tags, facts=facts, rev=rev,
                                                  scope="local" if local else "team", cwd=os.getcwd(),
                                                  invariant=invariant, source=source, origin=origin),
                         warn=_warn, note=_note)
    except AnchorError as e:
        path = _unknown_symbol_path(e, anchors)
        if path:  # the hint names the closest; this names the command that lists them all
            e.hint = (f"{e.hint}; " if e.hint else "") + f"gitmem symbols {path} lists every name"
        raise
    _out(shapes.memory_json(m), m.id)
    _whole_file_hints(m, _store().repo.root)


#: Most bytes ``remember -`` reads from standard input: far over any memory (``[memory] max_chars``, 4,000 by
#: default), so an endless or huge stream (``yes | gitmem remember -``) is refused instead of filling memory.
STDIN_MAX_BYTES = 16 * 1024 * 1024


def _stdin_text() -> str:
    """The memory text of ``remember -``: standard input read to its end (UTF-8, undecodable bytes replaced),
    trailing blank lines dropped.

    Raises:
        click.UsageError: standard input is empty or blank.
        MemoryTooLong: it holds more than ``STDIN_MAX_BYTES``.
    """
    import sys

    if sys.stdin.isatty():
        _note("reading the memory text from standard input (end it with Ctrl-D)")
    raw = sys.stdin.buffer.read(STDIN_MAX_BYTES + 1)
    if len(raw) > STDIN_MAX_BYTES:
        from ..memories import TOO_LONG_HINT, MemoryTooLong

        raise MemoryTooLong(f"standard input holds more than {STDIN_MAX_BYTES:,} bytes: not read to its end",
                            TOO_LONG_HINT)
    data = raw.decode("utf-8", errors="replace").rstrip()
    if not data.strip():
        raise click.UsageError("`remember -` read no text from standard input")
    return data


def _whole_file_hints(m: Memory, root: os.PathLike[str]) -> None:
    """One note per whole-file anchor of ``m`` on a file whose language has symbols: such an anchor goes stale on
    any change in the file, a symbol's only when the symbol changes. None for a path whose symbolic links lead
    outside the repository at ``root`` (judged by the link only: no symbol of it can be anchored)."""
    from ..code.languages import language_for_path
    from ..model import KIND_FILE

    top = os.path.realpath(root)
    for a in m.anchors:
        if a.kind == KIND_FILE and a.local and a.path and language_for_path(a.path) is not None:
            real = os.path.realpath(os.path.join(top, a.path))
            if os.path.commonpath([top, real]) != top:
                continue
            _note(f"whole-file anchor: stale on any change in {a.path}; anchor a symbol with {a.path}::NAME "
                  f"(gitmem symbols {a.path})")


def _unknown_symbol_path(e: AnchorError, specs: tuple[str, ...]) -> str | None:
    """The PATH (as typed) of the ``PATH::NAME`` spec whose name ``e`` says is not in the file (``no symbol X in
    PATH``, several definitions of X), else None (an unknown file, a file type without symbols, another error)."""
    if "symbol support" in e.message or e.message.startswith("no file "):
        return None
    named = [(path, name) for path, sep, name in (spec.partition("::") for spec in specs)
             if sep and name and path and path.rsplit("/", 1)[-1] in e.message]
    exact = [path for path, name in named if name in e.message]
    if exact:
        return exact[0]
    return named[0][0] if len(named) == 1 else None  # the name as typed may read otherwise (ns::A::f is ns.A.f)


@cli.command()
@click.argument("mem_id", metavar="ID")
@click.option("--personal", is_flag=True, help="A memory of your personal repository (deletion committed there).")
@json_option
def forget(mem_id: str, personal: bool) -> None:
    """Delete a memory (its file; commit the deletion to share it).

    \b
    Example usage:
      gitmem forget 01JD3V6Q
      gitmem forget --personal 01JD3V6Q
    """
    from ..memories import forget as do_forget

    if personal:
        from ..ops import personal as personal_ops

        m = personal_ops.forget(mem_id)
    else:
        m = do_forget(_store(), mem_id)
    _out(shapes.forgotten_json(m), f"forgot {m.id} {m.title}")


@cli.command()
@click.argument("mem_id", metavar="ID")
@click.option("--rev", help="Evaluate anchor status at this revision (default: working tree).")
@click.option("--personal", is_flag=True, help="A memory of your personal repository (gitmem personal).")
@json_option
def show(mem_id: str, rev: str | None, personal: bool) -> None:
    """Show one memory in full, with the status of each anchor.

    \b
    Example usage:
      gitmem show 01JD3V6Q
      gitmem show --personal 01JD3V6Q
    """
    from ..ops.show import show as do_show

    if personal:
        from ..ops.personal import open_store

        store = open_store()
    else:
        store = _store()
    shown = do_show(store, mem_id, rev=rev)
    usage.record(store.layout, usage.OPENED, "show", [shown.status.memory.id])
    ms = shown.status
    m = ms.memory

    def text() -> str:
        lines = [f"{m.id}  [{m.type}] {m.title}", f"status: {ms.status.value}   "
                 f"scope: {shapes.PERSONAL_LABEL if personal else m.scope}   "
                 f"author: {m.author or '-'}   created: {m.created}   updated: {m.updated}",
                 f"trust: {trust_line(m)}"]
        for a in ms.anchors:
            line = f"  {a.status.value:8} {a.anchor.key}{was_note(a.anchor.key, a.anchor.was)}{where_now(a)}"
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

    detail = shapes.memory_detail_json(ms, shown.path)
    _out(detail | {"label": shapes.PERSONAL_LABEL} if personal else detail, text)


def trust_line(m: Memory) -> str:
    """How a memory came to be, for a person: its trust label, source, and its review (or why it lapsed)."""
    trust = provenance.of(m)
    src = m.source + (f" ({m.origin})" if m.origin else "") + (f", model {m.model}" if m.model else "")
    if m.reviewed is None:
        review = "not reviewed (gitmem review ID)"
    elif trust.level == provenance.REVIEWED:
        review = f"reviewed by {m.reviewed.by or '?'} on {m.reviewed.at}"
    else:
        review = f"review by {m.reviewed.by or '?'} on {m.reviewed.at} lapsed: the text changed since"
    return f"{trust.label or 'unknown'}   source: {src}   {review}"


@cli.command()
@click.argument("mem_ids", nargs=-1, required=True, metavar="ID...")
@json_option
def review(mem_ids: tuple[str, ...]) -> None:
    """Record that you have read these memories' text as it is now (a person's review).

    A reviewed memory may be shown to agents as a rule ("constraint (must hold)")
    whoever wrote it, ranks as person-written, and passes `gitmem check
    --require-reviewed`. Any later change of its text (a model's rewrite, a
    merge, an edit) lapses the review by itself. Commit the files to share it.
    Refused in an agent's shell (CLAUDECODE, GEMINI_CLI, CODEX_THREAD_ID … set).

    \b
    Example usage:
      gitmem show 01KB0Y1R9W3Q
      gitmem review 01KB0Y1R9W3Q
    """
    from ..errors import GitmemError
    from ..ops.review import mark_reviewed

    agent = provenance.agent_from_env(os.environ)
    if agent is not None:  # an agent reviewing text would make its own memories rules
        raise GitmemError(f"a review is a person's, and this command runs in an agent's shell ({agent or 'AI_AGENT'}"
                          " is set): nothing was marked reviewed",
                          "read the memory (gitmem show ID) and run gitmem review ID in your own terminal")
    done = mark_reviewed(_store(), list(mem_ids))
    _out([shapes.memory_json(m) for m in done],
         lambda: "\n".join(f"reviewed {m.id} {m.title} ({provenance.of(m).label})" for m in done))


@cli.command("list")
@click.option("--type", "mtype", type=click.Choice(MEMORY_TYPES), help="Only this type.")
@click.option("--anchor", metavar="PATH[::SYMBOL]", help="Only memories anchored there (or nested inside).")
@click.option("--status", type=click.Choice(STATUS_FILTERS),
              help="Only memories with this status at the working tree (not-fresh: moved, stale or deleted).")
@click.option("--scope", type=click.Choice(["team", "local"]), help="Only team (committed) or local memories.")
@click.option("--personal", is_flag=True, help="Your personal repository's memories (gitmem personal) instead.")
@json_option
def list_cmd(mtype: str | None, anchor: str | None, status: str | None, scope: str | None, personal: bool) -> None:
    """List memories, newest first, each with its status (invalid files are reported on stderr).

    \b
    Example usage:
      gitmem list --type decision
      gitmem list --anchor src/auth/
      gitmem list --status not-fresh --scope team
      gitmem list --personal
    """
    from ..memories import list_memories
    from ..ops.show import listed

    if personal:
        if anchor or status or scope:
            raise click.UsageError("--personal takes only --type (personal memories have no anchors)")
        from ..ops import personal as personal_ops

        mine = personal_ops.list_all(mtype=mtype)
        _out([shapes.personal_listed_json(r) for r in mine],
             lambda: "\n".join(f"{r.memory.id}  personal  {r.memory.type:10} {r.memory.title}"
                               + (f"  (tags: {', '.join(r.memory.tags)})" if r.memory.tags else "") for r in mine)
             or "no personal memories")
        return
    store = _store()
    rows = listed(store, list_memories(store, type=mtype, anchor=anchor, cwd=os.getcwd()), status=status,
                  scope=scope)
    _warn_invalid(store)
    _out([shapes.listed_memory_json(r) for r in rows],
         lambda: "\n".join(f"{r.memory.id}  {r.status.label:9} {r.memory.type:10} {r.memory.title}  "
                           f"({anchors_now(r) or '-'})" for r in rows)
         or "no memories")


def anchors_now(ms: MemoryStatus) -> str:
    """A memory's anchors as ``show`` gives them: each recorded key, then `` → path::Name`` where its code is now
    when that differs (a rename, a move, an overload added: ``a.cpp::A.f → a.cpp::A.f(int*)const``)."""
    if not ms.anchors:
        return ", ".join(a.key for a in ms.memory.anchors)
    return ", ".join(f"{a.anchor.key}{where_now(a)}" for a in ms.anchors)


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
    from ..ops.reanchor import reanchor as do_reanchor

    store = _store()
    done = [do_reanchor(store, mid, drop_deleted=drop_deleted) for mid in mem_ids]
    _out([shapes.reanchored_json(r) for r in done],
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
    from ..ops.lifecycle import retire as do_retire

    m = do_retire(_store(), mem_id, reason)
    _out(shapes.retired_json(m), f"retired {m.id} {m.title}")


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
    from ..memories import RememberRequest
    from ..ops.lifecycle import supersede as do_supersede

    source, origin = writer()
    res = do_supersede(_store(), mem_id, RememberRequest(text=text, title=title, type=mtype or "",
                                                         anchors=anchors, tags=tags, facts=facts,
                                                         source=source, cwd=os.getcwd(), origin=origin))
    _out(shapes.superseded_json(res), f"{res.new.id} supersedes {res.old.id} (retired)")


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

    from ..ops.history import memory_log

    entries = memory_log(_store(), mem_id)

    def day(t: int) -> str:
        return _dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d")

    _out([shapes.log_entry_json(e) for e in entries],
         lambda: "\n".join(f"{e.commit[:12]} {day(e.time)} {e.what} — {e.subject} ({e.author})"
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
    from ..ops.share import share

    store = _store()
    was_team = {mid: store.get(mid).scope == "team" for mid in mem_ids}
    done = [share(store, mid) for mid in mem_ids]
    _out([shapes.shared_json(m, store.display(store.path_for(m))) for m in done],
         lambda: "\n".join((f"already a team memory: {m.id} {m.title} ({store.display(store.path_for(m))})"
                            if was_team[mid] else f"shared {m.id} {m.title} → {store.display(store.path_for(m))}")
                           for mid, m in zip(mem_ids, done, strict=True)))
