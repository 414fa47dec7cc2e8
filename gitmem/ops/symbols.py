"""``gitmem symbols PATH``: what gitmem calls each thing in a file, so an anchor can be typed right the first time.

Each symbol as gitmem stores it (the name after ``PATH::`` in an anchor: ``aws_subnet.public``,
``jobs.build.steps[Name]``, ``Deploy.Rollback``, ``ns.A.f(int)``), its kind, its lines, and how many live memories
anchor it. The memories are counted where their code is now (``analyzer.evaluate`` at the working tree: a memory
recorded on ``A.f`` before an overload was added counts on ``A.f(int)``); at another revision, by their recorded
anchors.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..anchors import Resolver
from ..code.languages import language_for_path, symbol_file_types
from ..errors import GitmemError
from ..git import WORKTREE
from ..memories import _user_path, list_memories
from ..model import Status
from ..store import Store


@dataclass
class ListedSymbol:
    """One symbol of the file: ``name`` as an anchor takes it (``PATH::name``), ``kind``, its 1-based inclusive
    lines, the other names it is found by (``aliases``: a language's own written form) and the live memories
    anchoring it (``memories``)."""

    name: str
    kind: str
    start_line: int
    end_line: int
    aliases: tuple[str, ...] = ()
    memories: int = 0


@dataclass
class FileSymbols:
    """The symbols of ``path`` (repo-relative) at ``rev`` (None: the working tree) in the order of the file, read
    as ``language``; ``file_memories``: live memories anchored to the whole file; ``lfs_pointer``: the file is a
    git-lfs pointer whose content is not in this clone (no symbols can be read: ``Resolver.content_here``)."""

    path: str
    rev: str | None
    language: str
    symbols: list[ListedSymbol] = field(default_factory=list)
    file_memories: int = 0
    lfs_pointer: bool = False


def file_symbols(store: Store, path: str, rev: str | None = None, cwd: str | None = None) -> FileSymbols:
    """The symbols of ``path`` (relative to ``cwd`` like git, else to the repository root) at ``rev``.

    Raises:
        AnchorError: the path is outside the repository or the file does not exist at ``rev`` (the closest paths
            as ``candidates``), as ``remember --anchor PATH`` says it.
        GitmemError: the file type has no symbol support (the hint lists the types that have).
    """
    repo = store.repo
    rel = _user_path(store, path, cwd)
    sha = repo.resolve(rev) if rev else WORKTREE
    resolver = Resolver(repo)
    resolver.make(rel, None, sha)  # the file exists there: else AnchorError with the closest paths
    language = language_for_path(rel) or language_for_path(resolver.real_path(sha, rel))  # a link: its target's
    if language is None:
        raise GitmemError(f"{rel}: no symbol support for this file type (anchor the file itself: --anchor {rel})",
                          "symbols are found in " + " ".join(symbol_file_types()) + " files (docs/how-it-works.md)")
    table = resolver.table(sha, rel) or {}
    listed = {n: ListedSymbol(name=n, kind=s.kind, start_line=s.start_line, end_line=s.end_line,
                              aliases=tuple(s.aliases)) for n, s in table.items()}
    counts, whole = _memory_counts(store, rel, live_now=sha is WORKTREE)
    for name, n in counts.items():
        if name in listed:
            listed[name].memories = n
    return FileSymbols(path=rel, rev=rev, language=language, file_memories=whole,
                       lfs_pointer=not resolver.content_here(sha, rel),
                       symbols=sorted(listed.values(), key=lambda s: (s.start_line, -s.end_line, s.name)))


def _memory_counts(store: Store, rel: str, *, live_now: bool) -> tuple[Counter[str], int]:
    """(live memories per symbol name of ``rel``, live memories on the whole file). ``live_now``: count each
    anchor where its code is now (its status at the working tree), else by its recorded name."""
    mems = [m for m in list_memories(store, anchor=rel) if not m.retired]
    per: Counter[str] = Counter()
    whole = 0
    if live_now and mems:
        from .show import with_status

        for ms in with_status(store, mems):
            names: set[str] = set()
            for a in ms.anchors:
                if not a.anchor.local or a.status == Status.DELETED:
                    continue
                path = a.path_now or a.anchor.path
                symbol = a.symbol_now or a.anchor.symbol
                if path != rel:
                    continue
                if symbol:
                    names.add(symbol)
                else:
                    whole += 1
            per.update(names)
        return per, whole
    for m in mems:
        names = {a.symbol for a in m.anchors if a.path == rel and a.symbol and a.repo is None}
        whole += any(a.path == rel and not a.symbol and a.repo is None for a in m.anchors)
        per.update(n for n in names if n)
    return per, whole
