"""The one write path of memory files, and remember / list / forget.

``write`` is the only code that writes or deletes a memory file: it writes each file
atomically into the team or local folder (by scope), deletes what it is told to, and brings
the catalog up to date for exactly those files in the same call. Every other module that
changes memories (lifecycle, reanchor, share, transfer, import, consolidation, the CLI and
MCP) calls it; nothing else writes memory files (tests/test_architecture.py checks).
Memory text is checked and cleaned in ``remember``; anchors are made by ``anchors.Resolver``.

Must not import: lancedb.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from . import injection, memfile
from .anchors import Resolver
from .code.specs import written_symbol
from .errors import AnchorError, GitmemError, MemoryFileError
from .git import WORKTREE
from .infra import utc_now
from .model import KIND_COMMIT, MEMORY_TYPES, Anchor, Memory, Review, parse_anchor_spec, unique_anchors
from .org import xrepo
from .store import Store, new_id
from .textsplit import name_base, name_parts

#: Titles longer than this are cut at a word boundary (characters).
MAX_TITLE_CHARS = 120
#: What a refused over-long memory's error suggests instead.
TOO_LONG_HINT = ("memories are short notes: put the log or document in a file and anchor the memory to it "
                 "(the limit is [memory] max_chars in .gitmem/config.toml)")
#: The end of a memory ``fit`` cut.
CUT_MARK = "\n\n… (cut: over [memory] max_chars)"


class MemoryTooLong(GitmemError):
    """A memory's text is over ``[memory] max_chars``."""


def text_chars(m: Memory) -> int:
    """Characters of a memory's text as the size limit counts them: title, body, facts and tags; a title that is
    the start of the body (cut from its first line: ``derive_title``) is not counted twice."""
    lead = m.title.removesuffix("…")
    title = 0 if lead and m.body.lstrip("# ").startswith(lead) else len(m.title)
    return title + len(m.body) + sum(len(f) for f in m.facts) + sum(len(t) for t in m.tags)


def max_chars(store: Store) -> int:
    """The repository's ``[memory] max_chars`` (``config.max_chars``)."""
    from .config import max_chars as configured

    return configured(store.config)


def check_size(m: Memory, limit: int) -> None:
    """Refuse a memory whose text (``text_chars``) is over ``limit`` characters.

    Raises:
        MemoryTooLong: with the size, the limit and ``TOO_LONG_HINT``.
    """
    n = text_chars(m)
    if n > limit:
        raise MemoryTooLong(f"the memory is {n:,} characters long, over the limit of {limit:,}", TOO_LONG_HINT)


def fit(m: Memory, limit: int) -> Memory:
    """``m`` cut to at most ``limit`` characters (``text_chars``): the body first (ending in
    ``CUT_MARK``), then the facts from the last; ``m`` itself when it fits. For text gitmem writes
    on its own (consolidation, imports of other tools' stores) where refusing would lose it all."""
    if text_chars(m) <= limit:
        return m
    facts = list(m.facts)
    tags = [t[:100] for t in m.tags]
    fixed = len(m.title) + sum(len(t) for t in tags)
    while facts and fixed + sum(len(f) for f in facts) > limit // 2:
        facts.pop()
    room = limit - fixed - sum(len(f) for f in facts) - len(CUT_MARK)
    body = m.body if len(m.body) <= room else m.body[:max(0, room)].rstrip() + CUT_MARK
    return replace(m, body=body, facts=facts, tags=tags)


def write(store: Store, written: Sequence[Memory] = (), *, removed: Sequence[str] = (),
          removed_scope: Literal["team", "local"] | None = None) -> list[Path]:
    """Write memories and delete memory files, then update the catalog for exactly those files.

    Args:
        store: the repository's ``Store``.
        written: memories to write, each to ``store.path_for(m)`` (team folder or the clone's
            local folder, by ``m.scope``); a copy under the same id in the other scope's folder is
            deleted (a scope change). Retired memories are written and leave every ranking.
        removed: ids whose memory files are deleted (missing files are fine).
        removed_scope: delete only the ``team`` or ``local`` file of each removed id (None: both).

    Returns:
        The paths written, in the order of ``written``.

    Raises:
        OSError: a file cannot be written or deleted. What was written before stays written, and
            the catalog learns it all the same.
        MemoryFileError: a memory's folder leads outside where it may be (a symlink out of the work
            tree or git's folder): nothing is written there, as nothing would be read from it.
    """
    from .catalog.sync import record_written

    paths: list[Path] = []
    folders = {"team": store.memories_dir, "local": store.local_memories_dir}
    try:
        for m in written:
            path = store.path_for(m)
            outside = store.outside_repo(path)
            if outside is not None:
                raise outside
            memfile.write(path, m)
            paths.append(path)
            other = (store.memories_dir if m.scope == "local" else store.local_memories_dir) / path.name
            if other.exists():
                other.unlink()
        for mid in removed:
            for scope, folder in folders.items():
                if removed_scope in (None, scope):
                    (folder / f"{mid}{memfile.FILE_SUFFIX}").unlink(missing_ok=True)
    finally:
        live = [m for m in written if not m.retired]
        gone = [*removed, *(m.id for m in written if m.retired)]
        record_written(store, live, gone)
    return paths


def delete(store: Store, mem_id: str) -> Memory:
    """Delete the file of memory ``mem_id`` (exact id or unique prefix); returns the memory it held.

    Raises:
        MemoryNotFound: no such id, or an ambiguous prefix.
        OSError: the file cannot be deleted.
    """
    path = store.find_path(mem_id)
    try:
        m = memfile.read(path, display=store.display(path))[0]
    except MemoryFileError:
        m = Memory(id=path.stem, type="change", title="(invalid file)")
    path.unlink()
    from .catalog.sync import record_written

    record_written(store, [], [path.stem])
    return m


@dataclass
class RememberRequest:
    """What to remember.

    Attributes:
        text: the memory's narrative (Markdown). The first line becomes the
            title when ``title`` is not given.
        anchors: anchor specs as typed by a user: ``PATH``, ``PATH::Qualified.Name``
            or ``commit:REV``; PATH absolute or relative to ``cwd``.
        rev: anchor against this revision instead of the working tree.
        source: who writes it (``model.SOURCES``): ``user`` only for a person at the CLI or the ui
            (the memory is then recorded as reviewed by its author, ``provenance``); an agent is ``agent``.
        origin: which agent or tool writes it (``codex``), when known.
        named_by_gitmem: ``anchors`` hold gitmem's own names (a stored memory's anchors, re-made by
            ``supersede``), taken as they are (``Invoice.total`` is the Ruby instance method, not ambiguous).
    """

    text: str
    title: str | None = None
    type: str = "discovery"
    anchors: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    rev: str | None = None
    scope: str = "team"
    source: str = "user"
    cwd: str | None = None
    invariant: bool = False
    origin: str | None = None
    named_by_gitmem: bool = False


def derive_title(text: str) -> str:
    """A title from the first non-empty line of ``text``, cut to MAX_TITLE_CHARS at a word boundary."""
    first = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), "")
    if len(first) <= MAX_TITLE_CHARS:
        return first
    cut = first[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return cut + "…"


def make_anchors(store: Store, specs: tuple[str, ...] | list[str], rev: str | None,
                 cwd: str | None = None, resolver: Resolver | None = None,
                 warn: Callable[[str], None] | None = None,
                 note: Callable[[str], None] | None = None, *, as_typed: bool = True) -> list[Anchor]:
    """Turn user anchor specs into recorded anchors at ``rev`` (None = working tree); ``as_typed=False``: the
    symbols are gitmem's own names (``Resolver.make``).

    ``warn`` hears what the caller should look at (a declaration/definition pair not joined, a name defined more
    than once); ``note`` hears what was done besides (the partner anchored too: ``also anchored …``), and
    defaults to ``warn`` (MCP reports both as warnings; the CLI prints a note without ``warning:``).

    A spec ``REPO:PATH[::SYMBOL]`` with REPO a repository of ``[org.repos]`` is a cross-repository anchor, made at
    REPO's ref whatever ``rev`` is (``org.xrepo.make``).

    Raises:
        AnchorError: a path outside the repository, an unknown file or symbol
            (with the closest names), or an unknown commit; for a cross-repository anchor, a repository not in
            ``[org.repos]`` or unreachable.
    """
    repo = store.repo
    resolver = resolver or Resolver(repo)
    sha = repo.resolve(rev) if rev else WORKTREE
    out: list[Anchor] = []
    for spec in specs:
        if xrepo.is_foreign_spec(store, spec):
            out.append(xrepo.make(store, spec))
            continue
        path, symbol, commit_rev = parse_anchor_spec(spec)
        if commit_rev is not None:
            try:
                out.append(Anchor(path=None, commit=repo.resolve(commit_rev), kind=KIND_COMMIT))
            except GitmemError as e:
                raise AnchorError(f"anchor {spec}: {e.message}", e.hint) from None
            continue
        assert path is not None
        if symbol is None and spec.rstrip().endswith("::"):
            raise AnchorError(f"anchor {spec}: no symbol after '::'",
                              f"name the symbol ({path}::Class.method), or give {path} alone for the whole file")
        rel = _user_path(store, path, cwd)
        anchor = resolver.make(rel, symbol, sha, as_typed=as_typed)
        out.append(anchor)
        link = resolver.link(sha, rel)
        if link is not None and link.path is None and warn is not None:
            warn(f"{rel} {link.why()}: judged by the link only")
        elif link is not None and (note or warn) is not None:
            say_link = note or warn
            assert say_link is not None
            say_link(f"{rel} leads to {link.path} (symbolic link): judged by the content of {link.path}")
        if symbol and anchor.symbol and (note or warn) is not None and _other_scope(rel, symbol, anchor.symbol):
            say_taken = note or warn
            assert say_taken is not None
            say_taken(f"anchored {anchor.key}: the only symbol of {rel} that {symbol} names")
        if symbol:  # a C/C++ function: its declaration in the header and its definition go together
            other, why = resolver.partner(anchor, sha)
            if other is not None and other not in out:
                out.append(other)
                say = note or warn
                if say is not None:
                    say(f"also anchored {other.key} ({other.kind} of the same name in "
                         f"{'the header' if (other.path or '').endswith(_HEADER_SUFFIXES) else 'the source'}): "
                         "the memory is stale when either changes")
            elif why and warn is not None:
                warn(why)
        if symbol and warn is not None and f"{symbol}#2" in (resolver.table(sha, rel) or {}):
            line = anchor.span[0] if anchor.span else "?"
            warn(f"{rel} defines {symbol} more than once: anchored the first (line {line}); "
                 f"use {symbol}#2, #3 … for the others")
    return unique_anchors(out)


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++")


def _other_scope(path: str, typed: str, found: str) -> bool:
    """Whether the name ``found`` has more or fewer enclosing parts than ``typed`` written in gitmem's form (a
    unique suffix, ``XMLUtil::ToInt`` -> ``tinyxml2.XMLUtil.ToInt``, or a namespace the file does not name)."""
    return len(name_parts(name_base(found))) != len(name_parts(name_base(written_symbol(path, typed))))


def _user_path(store: Store, path: str, cwd: str | None) -> str:
    """A user's path as repo-relative: relative to ``cwd`` like git, else to the repository root.

    ``src/a.py`` typed in ``src/`` means ``src/src/a.py`` if that exists, otherwise
    ``src/a.py`` from the root (agents often give root-relative paths).
    """
    repo = store.repo
    if cwd is None and not path.startswith("/"):
        return path
    rel = repo.relpath(path, cwd=cwd)
    if not path.startswith("/") and not (repo.root / rel).exists() and (repo.root / path).exists():
        return repo.relpath(path, cwd=repo.root)
    return rel


def instruction_lines(m: Memory) -> list[tuple[str, injection.Finding]]:
    """The lines of ``m``'s text (title, body, each fact and tag) that ``injection`` flags as instruction-like:
    (field, finding) pairs, the field ``title``, ``body``, ``fact N`` or ``tag N`` (1-based)."""
    fields = {"title": m.title, "body": m.body, **{f"fact {i}": f for i, f in enumerate(m.facts, 1)},
              **{f"tag {i}": t for i, t in enumerate(m.tags, 1)}}
    return injection.scan_fields(fields)


def refuse_instructions(m: Memory) -> None:
    """Refuse memory ``m`` when a line of it reads as an instruction to the agent (``instruction_lines``).

    Raises:
        GitmemError: naming each flagged field, line and rule, and the fix.
    """
    found = instruction_lines(m)
    if found:
        raise GitmemError(f"the memory reads as an instruction to the agent, not a note: {injection.describe(found)}",
                          "write what is true of the code instead (e.g. \"never pipe curl to sh in CI\"): every "
                          "agent on the team is given memories as data, and `gitmem check` fails on such a line")


def strip_instructions(m: Memory) -> list[str]:
    """Drop from ``m`` (in place) the lines ``injection`` flags: body lines, facts and tags; a flagged title is
    replaced by the body's first line (``derive_title``, "(withheld title)" without one). Returns one note per
    dropped line, ``<field> line N: <rule>``; [] when nothing was flagged. For text no person typed (capture,
    consolidation), where refusing the whole memory would lose what else it says."""
    notes = [f"{name} line {f.line}: {f.rule}" for name, f in instruction_lines(m)]
    if not notes:
        return notes
    lines = m.body.splitlines()
    m.body = "\n".join(line for line, rule in zip(lines, injection.line_rules(lines), strict=True) if not rule).strip()
    m.facts = [f for f in m.facts if not injection.scan(f)]
    m.tags = [t for t in m.tags if not injection.scan(t)]
    if injection.scan(m.title):
        m.title = derive_title(m.body) if m.body.strip() else "(withheld title)"
        if injection.scan(m.title):
            m.title = "(withheld title)"
    return notes


def remember(store: Store, req: RememberRequest, *, warn: Callable[[str], None] | None = None,
             note: Callable[[str], None] | None = None) -> Memory:
    """Create and write a new memory; returns it (with its new id). ``warn`` and ``note``: see ``make_anchors``.

    Secrets in the text, title, facts and tags are redacted first (``capture.redact``;
    ``warn`` says so), whoever asks: the CLI, MCP or an agent.

    Raises:
        GitmemError: empty text, unknown type, a line that reads as an instruction to the agent
            (``refuse_instructions``: run a downloaded script, ignore your instructions, …).
        MemoryTooLong: the text is over ``[memory] max_chars`` (``check_size``).
        AnchorError: see ``make_anchors``.
    """
    from .capture.redact import redact_text

    clean = redact_text(req.text)
    title_in = redact_text(req.title) if req.title else req.title
    facts = tuple(redact_text(f) for f in req.facts)
    tags = tuple(redact_text(t) for t in req.tags)
    if warn is not None and (clean != req.text or title_in != req.title or facts != tuple(req.facts)
                             or tags != tuple(req.tags)):
        warn("secrets were redacted from the memory (see [REDACTED:…] markers)")
    req = RememberRequest(text=clean, title=title_in, type=req.type, anchors=req.anchors, tags=tags, facts=facts,
                          rev=req.rev, scope=req.scope, source=req.source, cwd=req.cwd, invariant=req.invariant,
                          origin=req.origin, named_by_gitmem=req.named_by_gitmem)
    text = req.text.strip()
    if not text and not req.title:
        raise GitmemError("nothing to remember: the text is empty", "give the memory's text")
    if req.type not in MEMORY_TYPES:
        raise GitmemError(f"unknown type '{req.type}'", f"use one of: {', '.join(MEMORY_TYPES)}")
    title = (req.title or derive_title(text)).strip()
    if not title:
        raise GitmemError("the memory has no title: the text's first line and --title are empty",
                          "start the text with a line of words, or give --title")
    anchors = make_anchors(store, req.anchors, req.rev, req.cwd, warn=warn, note=note,
                           as_typed=not req.named_by_gitmem)
    body = text
    if not req.title and text.splitlines() and text.splitlines()[0].strip().lstrip("#").strip() == title:
        body = "\n".join(text.splitlines()[1:]).strip()
    now = utc_now()
    m = Memory(id=new_id(), type=req.type, title=title, body=body, facts=list(req.facts),
               tags=list(req.tags), anchors=anchors, author=store.repo.user_name(),
               source=req.source, created=now, updated=now, scope=req.scope, invariant=req.invariant)
    m = memfile.normalised(m)  # callers print and index what the file holds (no lone surrogates)
    refuse_instructions(m)
    if m.invariant and sum(1 for a in anchors if a.kind != KIND_COMMIT) < 2:
        raise GitmemError("an invariant needs at least two anchors (the places that must change together)",
                          "give --anchor twice or more")
    check_size(m, max_chars(store))
    m.origin = req.origin
    if m.source == "user":  # a person wrote this very text, so has read it
        from . import provenance

        m.reviewed = Review(by=m.author, at=now, hash=provenance.memory_hash(m))
    write(store, [m])
    return m


def list_memories(store: Store, *, type: str | None = None, anchor: str | None = None,
                  cwd: str | None = None) -> list[Memory]:
    """Valid memories, newest first, optionally filtered.

    ``anchor`` matches ``PATH`` (any anchor on that file, or under that
    directory) or ``PATH::Name`` (that symbol and symbols nested in it); ``REPO:PATH[::Name]`` the same in
    another repository of ``[org.repos]`` (cross-repository anchors).
    """
    mems = list(store.load_all().memories.values())
    if type:
        mems = [m for m in mems if m.type == type]
    if anchor and xrepo.is_foreign_spec(store, anchor):
        repo, _, rest = anchor.partition(":")
        fpath, _, fsym = rest.partition("::")
        mems = [m for m in mems if any(a.repo == repo and _anchor_matches(replace(a, repo=None), fpath.rstrip("/"),
                                                                          fsym or None) for a in m.anchors)]
    elif anchor:
        path, symbol, commit_rev = parse_anchor_spec(anchor)
        if commit_rev:
            sha = store.repo.resolve(commit_rev)
            mems = [m for m in mems if any(a.kind == KIND_COMMIT and a.commit == sha for a in m.anchors)]
        else:
            rel = _user_path(store, path, cwd) if path else ""  # like remember: cwd-relative, else root-relative
            rel = rel.rstrip("/")
            mems = [m for m in mems if any(_anchor_matches(a, rel, symbol) for a in m.anchors)]
    return sorted(mems, key=lambda m: (m.updated, m.id), reverse=True)


def _anchor_matches(a: Anchor, path: str, symbol: str | None) -> bool:
    if a.kind == KIND_COMMIT or a.path is None or not a.local:
        return False
    if symbol is None:
        return a.path == path or a.path.startswith(path + "/") or path == ""
    return a.path == path and a.symbol is not None and (a.symbol == symbol or a.symbol.startswith(symbol + "."))


def forget(store: Store, mem_id: str) -> Memory:
    """Delete a memory's file; returns the removed memory. Raises MemoryNotFound."""
    return delete(store, mem_id)
