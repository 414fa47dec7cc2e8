"""Anchors: make them from a user's ``PATH[::SYMBOL]``, and resolve them at a revision.

``Resolver.make`` records an anchor against a revision (or the working tree):
the commit, the symbol's kind, span and fingerprint. ``Resolver.status`` says
what became of it at another revision (or the working tree):

* ``fresh``   the fingerprint is unchanged at the same path and name;
* ``moved``   the same code is found under a renamed file (git's rename
  detection), in another file, or under another name;
* ``stale``   the symbol (or file) is there but its code tokens changed;
* ``deleted`` the symbol (or file) is gone;
* ``unwritten`` at a revision older than the anchor (or on another line of history), its code was not yet
  written there.

Each non-fresh status names what changed (body, signature, decorators,
content, rename, move, deletion) and, where one commit can be named, the
commit that made it so (found by walking the commits that touched the file).
A revision older than the anchor is answered by following the code back to where it was then
(``Resolver._past_status``: docs/git-setups/past.md); a shallow clone's boundary commit is never named as
the commit of a change (``shallow_note``).

Work is proportional to the anchors asked about: symbol tables are parsed once
per blob (cached by blob SHA in ``gitmem.code``), git diffs are run only when a
path or symbol has gone missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from . import layout, lfs
from .code.languages import language_for_path, symbol_file_types
from .code.specs import written_choices, written_symbol
from .code.symbols import (
    RAW_TAG,
    closest_names,
    file_fingerprint,
    file_fingerprint_as,
    lookup,
    same_shape,
    symbol_table,
    too_large,
)
from .errors import AnchorError, GitError, MissingObject
from .git import WORKTREE, FileChange, Link, Repo
from .memfile import check_anchor_path
from .model import KIND_COMMIT, KIND_FILE, Anchor, AnchorStatus, Change, Status, Symbol
from .org import checks as org_checks
from .org.checks import Checked
from .textsplit import name_base, name_parts, plain_name

#: How many commits that touched a file are examined to name the commit that
#: changed an anchored symbol. Past this, the newest such commit is named.
#: Bounds the cost of one anchor on a long history (each step parses one blob).
MAX_BLAME_COMMITS = 200

#: How many successive renames or moves of one symbol are followed through history.
MAX_TRACE_DEPTH = 4

#: How many anchors' commits are asked one by one (``git merge-base``) whether a revision descends from them
#: before that revision's ancestors are listed once (``git rev-list``) and asked in memory.
MAX_FORK_QUESTIONS = 4

#: How many merges a search back through history (``stale --rev`` older than an anchor) follows to the line of
#: history that brought the code in.
MAX_MERGE_HOPS = 16

#: How many commits after an anchor's commit are searched for the code it recorded, when that code
#: was not yet committed at the anchor's commit (made on the work tree, or by the pre-commit hook,
#: which records against HEAD): the commit that committed it is the first one touching the file.
MAX_RECORDED_LOOKUP = 8

#: How many changed files one search for a missing symbol's code elsewhere parses (``_find_elsewhere``),
#: nearest to the anchor's file first. A deleted symbol is looked for in every changed file of its language
#: in each commit where its name left; on a vendoring commit (docker/buildx: 1,579 ``.go`` files in one diff)
#: that was minutes per anchor, also in the post-commit hook. A move or rename almost always lands near where
#: the code was (same file, same directory), so the nearest files are the ones worth parsing.
MAX_MOVE_SEARCH_FILES = 64

#: How many bytes of changed files one search for a missing symbol's code elsewhere reads and parses, besides
#: the anchor's own file (which is always searched): bounds the search when the changed files are few but large.
MAX_MOVE_SEARCH_BYTES = 4 * 1024 * 1024

#: The longest text a symbolic link's blob is taken to hold (Linux's ``PATH_MAX``): a file read at a path is asked
#: whether it is a link (``Repo.follow``) only when it could be one, so an ordinary file costs nothing more.
MAX_LINK_TEXT = 4096


def maybe_link(data: bytes | None) -> bool:
    """Whether ``data``, read at a path (``Repo.read``: a link reads as its text), may be a symbolic link's text,
    or nothing was there (a file beyond a linked folder reads as absent): then the path is followed
    (``Resolver.link``). A file with a line break, a NUL or more than ``MAX_LINK_TEXT`` bytes is no link."""
    return data is None or (0 < len(data) <= MAX_LINK_TEXT and b"\n" not in data and b"\0" not in data)


#: Languages whose code moves between each other's files (a function moved from ``a.js`` to ``b.ts``, from
#: ``x.c`` to ``y.cpp``): the search for a missing symbol looks at files of the anchor's language or of its group.
#: Any other language only moves within itself (a Makefile target is not moved into a Go file).
MOVE_LANGUAGE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"javascript", "typescript", "tsx"}),
    frozenset({"c", "cpp"}),
)


def _plain_parts(name: str) -> list[str]:
    """``name``'s parts, each as a person writes it (``plain_name``)."""
    return [plain_name(p) for p in name_parts(name)]


def _ends_with(name: str, tail: list[str]) -> bool:
    """Whether ``name``'s last parts are ``tail`` (parts compared as written and as typed), with at least one
    part before them."""
    for parts in (name_parts(name), _plain_parts(name)):
        if len(parts) > len(tail) and parts[-len(tail):] == tail:
            return True
    return False


#: How many names an ambiguity message lists (all are in the error's ``candidates``).
MAX_LISTED = 8


def _listed(names: list[str]) -> str:
    more = len(names) - MAX_LISTED
    return ", ".join(names[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _ambiguous(spec_path: str, symbol: str, names: list[str], where: str) -> AnchorError:
    hint = "name one: " + _listed(names)
    if language_for_path(spec_path) == "ruby" and len(names) == 2 and names[1] == names[0] + "[self]":
        parts = name_parts(names[0])
        owner, leaf = "::".join(parts[:-1]), parts[-1]
        hint = (f"name one: {owner}#{leaf} (the instance method, {names[0]}) or {owner}::{leaf} "
                f"(the class method, {names[1]})")
    return AnchorError(f"{spec_path}::{symbol} may mean {len(names)} symbols {where}: {_listed(names)}",
                       hint, candidates=names)


def _exact(table: dict[str, Symbol], name: str) -> list[str]:
    """The table names ``name`` is: itself, else the one an earlier gitmem called so (``Symbol.aliases``),
    else the ones it is when written without gitmem's quoting (``Makefile::build/app.o``)."""
    if name in table:
        return [name]
    if len(_overloads(table, name)) > 1:  # separate implementations: an earlier name of one of them is no answer
        return []
    aliased = [n for n, s in table.items() if name in s.aliases]
    if aliased:
        return aliased
    return [n for n, s in table.items() if plain_name(n) == name or any(plain_name(a) == name for a in s.aliases)]


def _overloads(table: dict[str, Symbol], name: str) -> list[str]:
    """The table names that are ``name`` told apart by a key or number (``f(int)``, ``A.m[self]``, ``f#2``)."""
    return [n for n in table if n != name and name_base(n) == name and n.startswith(name)]


def _only(names: list[str]) -> list[str]:
    return names if len(names) == 1 else []


def _several(names: list[str]) -> list[str]:
    return names if len(names) > 1 else []


def _unkeyed(table: dict[str, Symbol], name: str) -> list[str]:
    """``[A.f]`` for a typed ``A.f(int)`` when the table has ``A.f`` alone, unkeyed (a function that is not
    overloaded has no key in its name)."""
    base = name_base(name)
    return [base] if base != name and base in table and not _overloads(table, base) else []


#: Languages whose typed names may carry leading namespaces that the file's table lacks (a namespace opened by
#: a macro, ``FMT_BEGIN_NAMESPACE``, is no symbol: ``fmt::file::close`` is ``file.close`` there; an SQL schema is
#: not part of a name: ``public.orders.status`` is ``orders.status``).
_NAMESPACE_LANGUAGES = frozenset({"c", "cpp", "sql"})


def find_symbol(table: dict[str, Symbol], spec_path: str, symbol: str, where: str) -> str | None:
    """The name of ``table`` (the symbols of ``spec_path``) that ``symbol``, as a person typed it, means; None
    when there is none (the caller lists the closest).

    In order, for each tier of ``specs.written_choices`` (the name as typed, the language's own forms: Ruby
    ``A#m`` / ``A::m``, C++ ``ns::A::f(const char *s)``, JS ``A#m``, SQL ``F(int, int)``): a name of the
    table (or an earlier gitmem's name of it, or it without quoting), else the only definition of that name
    told apart by a key (``f`` -> ``f(int)``). Then a unique suffix at a part boundary (``XMLUtil.ToInt`` ->
    ``tinyxml2.XMLUtil.ToInt``, ``cidr`` -> ``var.cidr``); then, in C/C++ and SQL, the name without leading
    parts that are no name of the table (``fmt.file.close`` -> ``file.close``, ``public.orders`` -> ``orders``).
    Never guesses among several.

    Raises:
        AnchorError: two names of one tier or several suffixes match (ambiguous, all named as ``candidates``),
            or the name has several definitions told apart by key and the typed key is none of them.
    """
    tiers = written_choices(spec_path, symbol)
    keyed: list[str] = []
    for tier in tiers:
        hits: list[str] = []
        for cand in tier:
            hits += _exact(table, cand) or _only(_overloads(table, cand)) or _unkeyed(table, cand)
        hits = list(dict.fromkeys(hits))
        if len(hits) > 1:
            raise _ambiguous(spec_path, symbol, hits, where)
        if hits:
            return hits[0]
        for cand in tier:
            keyed = keyed or _several(_overloads(table, cand))
            if not keyed and cand != name_base(cand):  # a key none of the overloads has
                keyed = _several(_overloads(table, name_base(cand)))
    names = [n for tier in tiers for n in tier]
    # the key as the language writes it: that of the most normalised candidate (`(int)` for `(int x)`)
    typed_key = next((c[len(name_base(c)):] for c in reversed(names) if name_base(c) != c), "")
    if keyed:
        base = name_base(keyed[0])
        why = f"has no overload of {base} with {typed_key}" if typed_key else f"defines {base} {len(keyed)} times"
        raise AnchorError(f"{spec_path} {why} {where}", "name one: " + _listed(keyed), candidates=keyed)
    for tier in tiers:  # a unique suffix at a part boundary
        found = list(dict.fromkeys(n for cand in tier for n in table if _ends_with(n, name_parts(cand))))
        if not found:  # told apart by a key: `Parse` ends `ns.A.Parse()` and `ns.A.Parse(int)`
            found = list(dict.fromkeys(n for cand in tier for n in table
                                       if name_base(n) != n and _ends_with(name_base(n), name_parts(cand))))
        if not found:  # typed with a key, defined once without one
            found = list(dict.fromkeys(n for cand in tier if name_base(cand) != cand for n in table
                                       if name_base(n) == n and not _overloads(table, n)
                                       and _ends_with(n, name_parts(name_base(cand)))))
        if len(found) > 1:
            raise _ambiguous(spec_path, symbol, found, where)
        if found:
            return found[0]
    for cand in names:  # a key typed for a suffix none of whose overloads has it
        if name_base(cand) != cand:
            keyed = [n for n in table if name_base(n) != n and _ends_with(name_base(n), name_parts(name_base(cand)))]
            if keyed:
                raise AnchorError(f"{spec_path} has no overload of {name_base(keyed[0])} with {typed_key} {where}",
                                  "name one: " + _listed(keyed), candidates=keyed)
    if language_for_path(spec_path) in _NAMESPACE_LANGUAGES:
        for cand in names:
            parts = name_parts(cand)
            for k in range(1, len(parts)):
                lead = ".".join(parts[:k])
                if any(n == lead or n.startswith(lead + ".") for n in table):
                    break  # a namespace the file has: the rest is not to be dropped
                rest = ".".join(parts[k:])
                found = _exact(table, rest) or _overloads(table, rest) or _unkeyed(table, rest)
                if len(found) > 1:
                    raise _ambiguous(spec_path, symbol, found, where)
                if found:
                    return found[0]
    return None


def _unfollowed(spec_path: str, symbol: str | None, link: Link, where: str) -> AnchorError:
    """The refusal of an anchor whose links lead nowhere in the repository (``Link.path`` None)."""
    if link.outside is not None and link.first == spec_path:  # asked for a symbol of a link leading outside
        return AnchorError(f"{spec_path} {link.why()}: no symbol {symbol} of it can be judged here",
                           f"anchor the link itself (--anchor {spec_path}: judged by the link only), or the file "
                           "where it really is, inside the repository")
    if link.outside is not None:
        return AnchorError(f"{spec_path} is beyond a symbolic link that points outside the repository "
                           f"({link.first} -> {link.outside})",
                           f"anchor the file where it really is, inside the repository, or the link itself "
                           f"(--anchor {link.first}: judged by the link only)")
    if link.loop:
        return AnchorError(f"{spec_path} {link.why()} {where}", "point the link at a file of the repository")
    return AnchorError(f"no file {spec_path} {where}: it {link.why()} (symbolic link {link.links[-1]})",
                       "point the link at a file of the repository, or anchor the file where it really is")


@dataclass
class _Then:
    """Where an anchor's code was at an older commit (``Resolver._back``).

    Attributes:
        path, name: its file and symbol there (name None: a file anchor); path None: not there (not yet written).
        moves: (commit, key before, key after) of each move or rename after the older commit, newest first.
        written: the commit that wrote it, when it was not there.
        changed: the newest commit after the older one that changed the code (empty: none found).
        ends: the code before and after each move of ``moves`` (what ``Resolver._code`` found), newest first.
    """

    path: str | None
    name: str | None
    moves: list[tuple[str, str, str]]
    written: str | None
    changed: list[str]
    ends: list[tuple[Symbol | str | None, Symbol | str | None]]


def _fp_of(code: Symbol | str | None) -> str | None:
    """The fingerprint of what ``Resolver._code`` found."""
    return code.fingerprint if isinstance(code, Symbol) else code


def _same_code(old: Symbol | str | None, new: Symbol | str | None) -> bool:
    """Whether two of ``Resolver._code``'s finds are the same code: an equal fingerprint, or for symbols the same
    code under another name (``same_shape``: a rename)."""
    if old is None or new is None:
        return False
    if _fp_of(old) == _fp_of(new):
        return True
    return isinstance(old, Symbol) and isinstance(new, Symbol) and same_shape(old, new)


def _key(path: str, name: str | None) -> str:
    return f"{path}::{name}" if name else path


@dataclass
class _Located:
    path: str
    name: str
    symbol: Symbol


class Resolver:
    """Makes and resolves anchors in one repository, caching per-revision lookups.

    One instance per command or hook run; it is not safe to keep across commits
    of the working tree (its caches assume revisions do not change).
    """

    def __init__(self, repo: Repo, *, foreign: Callable[[Anchor], AnchorStatus] | None = None) -> None:
        """``foreign``: how a cross-repository anchor's status is answered (``org.xrepo.live``: checked at its
        repository now); default: its last check, recorded in this clone (``org.checks``)."""
        self.repo = repo
        self._foreign_fn = foreign
        self._tables: dict[tuple[str | None, str], dict[str, Symbol] | None] = {}
        self._changes: dict[tuple[str | None, str | None], list[FileChange]] = {}
        self._touching: dict[tuple[str | None, ...], list[str]] = {}
        self._head = repo.head()
        self._from_root = False
        self._history_missing = False
        self._boundary: str | None = None  # the shallow boundary a walk for the changing commit stopped at
        self._older: dict[tuple[str, str], str | None] = {}
        #: (rev, anchor's commit) pairs whose histories do not meet in this clone (``_fork``)
        self._unrelated: set[tuple[str, str]] = set()
        self._ancestors: dict[str, frozenset[str]] = {}
        self._is_shallow: bool | None = None
        #: an object a partial clone lacks, met while naming the commit of a verdict (the verdict stands)
        self._unnamed: MissingObject | None = None
        self._foreign: dict[str, Checked] | None = None
        self._lfs_content: dict[str, bytes | None] = {}
        self._pointer_only: set[tuple[str | None, str]] = set()
        self._from_lfs: set[tuple[str | None, str]] = set()
        self._is_pointer: dict[tuple[str | None, str], bool] = {}
        self._links: dict[tuple[str | None, str], Link | None] = {}
        #: per anchored path, the links and files it led to at the revisions read: the commits touching those
        #: change what the path reads (``_commits``)
        self._via: dict[str, set[str]] = {}

    # -- lookups ----------------------------------------------------------------------------

    def source(self, rev: str | None, path: str) -> bytes | None:
        """Bytes of ``path`` at ``rev`` (WORKTREE = disk), None when absent.

        A path that is, or lies beyond, a symbolic link reads as the file the links lead to inside the
        repository (``link``); a link leading outside reads as its own text (judged by the link only, as git
        stores it); one leading to nothing or in a cycle, as absent.

        A git-lfs pointer (``lfs.parse_pointer``: a commit's blob of an LFS file, or a checkout without
        git-lfs) gives the content it names when git-lfs has it in this clone (``layout.lfs_object``: fetched,
        checked out or cleaned), so code in LFS files is read as code wherever the content is here; else the
        pointer itself, and ``content_here`` is False for ``(rev, path)`` from then on.
        """
        data = self.repo.read(rev, path)
        link = self._link_of(rev, path, data)
        if link is not None:
            if link.path is not None:
                data = self.repo.read(rev, link.path)
            elif link.outside is None:
                return None
        pointer = lfs.parse_pointer(data)  # (a blob over 1 KiB or not starting "version https://": no work)
        self._is_pointer[(rev, path)] = pointer is not None
        if pointer is None:
            return data
        if pointer.extended:  # git-lfs's object is the extensions' output, not the content
            self._pointer_only.add((rev, path))
            return data
        if pointer.oid not in self._lfs_content:
            try:
                content: bytes | None = layout.lfs_object(self.repo.lfs_dir, pointer.oid).read_bytes()
            except (OSError, GitError):
                content = None
            self._lfs_content[pointer.oid] = content if content is not None and len(content) == pointer.size else None
        got = self._lfs_content[pointer.oid]
        if got is None:
            self._pointer_only.add((rev, path))
            return data
        self._from_lfs.add((rev, path))
        return got

    def content_here(self, rev: str | None, path: str) -> bool:
        """False when ``path`` at ``rev`` is a git-lfs pointer whose content is not in this clone (git-lfs
        absent, or the object not fetched): its symbols cannot be read, only its content id
        (``lfs_pointer``). Reads the file once per Resolver (the symbol table's read)."""
        self.table(rev, path)
        return (rev, path) not in self._pointer_only

    def lfs_pointer(self, rev: str | None, path: str) -> lfs.Pointer | None:
        """The git-lfs pointer ``path`` holds at ``rev`` as stored (WORKTREE: on disk, a checkout without
        git-lfs), None when it holds content (or is absent)."""
        return lfs.parse_pointer(self.repo.read(rev, self.real_path(rev, path)))

    def _stored_as_pointer(self, rev: str | None, path: str) -> bool:
        """Whether ``path`` at ``rev`` is a git-lfs pointer as stored, from ``source``'s read (made if not yet)."""
        if (rev, path) not in self._is_pointer:
            self.source(rev, path)
        return self._is_pointer.get((rev, path), False)

    def lfs_id(self, rev: str | None, path: str) -> str | None:
        """``lfs1:<sha256 of the content>`` of ``path`` at ``rev``: read from its pointer, else hashed from
        the bytes there (an LFS file checked out through git-lfs; a file no longer, or not yet, in LFS);
        None when absent. The same for the same content, pointer or not."""
        data = self.repo.read(rev, self.real_path(rev, path))
        return None if data is None else lfs.fingerprint(data)

    def _lfs_in_worktree(self, path: str) -> bool:
        """Whether the work-tree file ``path`` (content, not a pointer) is an LFS file: HEAD holds a pointer
        for it; for a file HEAD lacks, its attributes say ``filter=lfs`` (one ``git check-attr``)."""
        at_head = self.repo.read("HEAD", path) if self._head else None
        if at_head is not None:
            return lfs.parse_pointer(at_head) is not None
        return self.repo.lfs_tracked(path)

    def _stored_pointer(self, rev: str | None, path: str) -> bytes | None:
        """``path``'s bytes at ``rev`` as stored (no git-lfs content put in their place) when they are a git-lfs
        pointer's text, else None. A file fingerprint (not ``lfs1:``) recorded over such text, compared with
        such text, is judged by those bytes: a fixture that only looks like a pointer (its ``size`` line
        changed is a change, which ``_lfs_status``'s content id would miss), or an older gitmem's anchor made
        on a pointer-only checkout."""
        if not self._stored_as_pointer(rev, path):  # (``source``'s answer: no second read of an ordinary file)
            return None
        stored = self.repo.read(rev, self.real_path(rev, path))
        return stored if lfs.parse_pointer(stored) is not None else None

    def _file_fp(self, recorded: str | None, rev: str | None, path: str, data: bytes | None = None) -> str | None:
        """``path``'s whole-file fingerprint at ``rev`` by ``recorded``'s algorithm (``file_fingerprint_as``;
        an ``lfs1:`` one from the pointer as stored, so no LFS content is hashed where git has the pointer);
        None when absent. ``data``: ``source(rev, path)`` when the caller has read it."""
        if lfs.is_fingerprint(recorded):
            return self.lfs_id(rev, path)
        data = data if data is not None else self.source(rev, path)
        return None if data is None else file_fingerprint_as(recorded, data, path)

    def link(self, rev: str | None, path: str) -> Link | None:
        """Where ``path`` leads through symbolic links at ``rev`` (``Repo.follow``); None when no link is on the
        way. Followed only where the data says a link may be (``maybe_link``): nothing more for an ordinary file."""
        key = (rev, path)
        if key in self._links:
            return self._links[key]
        return self._link_of(rev, path, self.repo.read(rev, path))

    def real_path(self, rev: str | None, path: str) -> str:
        """The path of the file ``path`` reads at ``rev``: where its links lead, else itself."""
        link = self.link(rev, path)
        return link.path if link is not None and link.path is not None else path

    def _link_of(self, rev: str | None, path: str, data: bytes | None) -> Link | None:
        key = (rev, path)
        if key not in self._links:
            try:
                link = self.repo.follow(rev, path) if path and maybe_link(data) else None
            except GitError:
                link = None
            self._links[key] = link
            if link is not None:
                self._via.setdefault(path, set()).update(
                    p for p in (*link.links, link.path) if p is not None and p != path)
        return self._links[key]

    def table(self, rev: str | None, path: str) -> dict[str, Symbol] | None:
        """Symbol table of ``path`` at ``rev`` (through links: of the file they lead to, in its language); None
        when the file is absent, {} when no symbols."""
        key = (rev, path)
        if key not in self._tables:
            data = self.source(rev, path)
            if data is None:
                self._tables[key] = None
            else:
                real = self.real_path(rev, path)
                # (LFS content is not the blob git has: cached by its own hash, not the pointer's blob id)
                self._tables[key] = symbol_table(data, real, blob_sha=self.repo.blob_sha(rev, real)
                                                 if rev is not WORKTREE and key not in self._from_lfs else None)
        return self._tables[key]

    def changes(self, old: str | None, new: str | None) -> list[FileChange]:
        key = (old, new)
        if key not in self._changes:
            try:
                self._changes[key] = self.repo.changed_files(old, new)
            except MissingObject as e:  # git's rename detection needs a blob a partial clone lacks
                where = f"renames from {(old or 'the first commit')[:12]} to {new[:12] if new else 'the work tree'}"
                raise self.repo.missing(e.oid, e.wanted or where) from None
        return self._changes[key]

    # -- making anchors ---------------------------------------------------------------------

    def make(self, spec_path: str, symbol: str | None, rev: str | None = WORKTREE, *, as_typed: bool = True) -> Anchor:
        """Record an anchor to ``spec_path`` (repo-relative) and optional ``symbol`` at ``rev``.

        ``rev`` WORKTREE anchors to the code on disk, recorded against HEAD.
        Returns the Anchor with commit, kind, span and fingerprint filled in. A
        name an earlier gitmem gave (``f#3``, ``Parser.parse#2``) is recorded
        under today's name (``f``, ``Parser.parse(int)``). A name typed by a person (``as_typed``) is found
        by :func:`find_symbol` (the language's own forms, a unique suffix); ``as_typed=False``: ``symbol`` is a
        name of the file's table (a stored anchor, a name gitmem listed) and is taken as it is when present.

        Raises:
            AnchorError: the path is outside the repository, the file does not
                exist at ``rev``, or the symbol is not in the file (with the
                closest names as ``candidates``), or it names several separate
                implementations (the overloads as ``candidates``), or is ambiguous (the names it may
                mean as ``candidates``).
        """
        why = check_anchor_path(spec_path)
        if why:
            raise AnchorError(why, "anchors are paths inside the repository")
        commit = self._head if rev is WORKTREE else rev
        if spec_path == ".git" or spec_path.startswith(".git/"):
            raise AnchorError(f"{spec_path} is git's own data, not code", "anchor a file of the work tree")
        nested = self._nested_repository(spec_path)
        if nested:
            raise AnchorError(f"{spec_path} is inside another repository ({nested}, a submodule or nested clone)",
                              f"run gitmem in {nested}: its commits are not this repository's")
        data = self.source(rev, spec_path)
        where = "in the working tree" if rev is WORKTREE else f"at {rev[:12]}"
        link = self.link(rev, spec_path)
        if link is not None and link.path is None and (link.outside is None or data is None or symbol is not None):
            raise _unfollowed(spec_path, symbol, link, where)
        # a path through links: recorded as typed, judged by the file they lead to (in that file's language)
        real = self.real_path(rev, spec_path)
        lang_path = spec_path if language_for_path(spec_path) == language_for_path(real) else real
        if data is None:
            import difflib

            try:
                known = self.repo.files_at(rev, skip_gitmem=True)
            except GitError:
                known = []
            near = difflib.get_close_matches(spec_path, known, n=3, cutoff=0.6)
            raise AnchorError(f"no file {spec_path} {where}",
                              (f"closest: {', '.join(near)}" if near else
                               "paths are relative to the current folder or the repository root "
                               "(`git ls-files` lists the files)"), candidates=near)
        if symbol is None:
            pointer = self.lfs_pointer(rev, spec_path)
            fp = (file_fingerprint_as(f"{RAW_TAG}:", data, spec_path)  # only looks like a pointer: a test fixture
                  if pointer is not None and not self.repo.lfs_tracked(real)
                  else pointer.fingerprint if pointer is not None
                  else lfs.content_fingerprint(data) if rev is WORKTREE and self._lfs_in_worktree(real)
                  else file_fingerprint(data, spec_path))
            return Anchor(path=spec_path, commit=commit, kind=KIND_FILE,
                          span=(1, max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))),
                          fingerprint=fp)
        table = self.table(rev, spec_path) or {}
        if language_for_path(lang_path) is None:
            raise AnchorError(f"{spec_path}: no symbol support for this file type",
                              f"anchor the file itself (--anchor {spec_path}); symbols are found in "
                              + " ".join(symbol_file_types()) + " files (docs/how-it-works.md)")
        found = find_symbol(table, lang_path, symbol, where) if as_typed or symbol not in table else symbol
        sym = table.get(found) if found else None
        if sym is None or found is None:
            symbol = written_symbol(lang_path, symbol)
            near = closest_names(table, symbol)
            if near:
                hint = "closest: " + ", ".join(near)
            elif not self.content_here(rev, spec_path):
                hint = (f"{spec_path} is a git-lfs pointer {where}: its content is not in this clone "
                        f"(git lfs pull, with git-lfs installed); or anchor the file itself: --anchor {spec_path}")
            elif table:
                hint = f"symbols in {spec_path}: " + ", ".join(list(table)[:8]) + (" …" if len(table) > 8 else "")
            elif too_large(len(data), language_for_path(lang_path) or ""):
                hint = (f"{spec_path} is larger than gitmem reads for symbols ({len(data) // 1024} KB); "
                        f"anchor the file itself: --anchor {spec_path}")
            else:
                hint = f"gitmem finds no symbols in {spec_path}; anchor the file itself: --anchor {spec_path}"
            raise AnchorError(f"no symbol {symbol} in {spec_path} {where}", hint, candidates=near)
        return Anchor(path=spec_path, symbol=found, commit=commit, kind=sym.kind,
                      span=(sym.start_line, sym.end_line), fingerprint=sym.fingerprint)

    def partner(self, anchor: Anchor, rev: str | None = WORKTREE) -> tuple[Anchor | None, str]:
        """The other half of a C/C++ function anchored by ``anchor`` (made by ``make`` at ``rev``): its
        declaration in a header when ``anchor`` is the definition in a source file, or the reverse.

        Candidates (``lang_c.partner_files``): for a header, the source files of the same stem; for a
        source file, the headers it ``#include``s (resolved in the repository) and those of the same
        stem. A candidate holds the partner when its symbol table has the anchor's name, else exactly one
        name of which it is the base (``A.f`` <-> ``A.f(int)``), else exactly one that ends with it or that
        it ends with after a ``.`` (``A.f`` <-> ``ns.A.f``: ``using namespace ns;`` in the source). When
        several files hold it, those of
        the same stem are kept; a tie is not guessed.

        Returns:
            (the partner's anchor, "") when exactly one is found; (None, why) when candidates tie (the
            message names them); (None, "") when there is none or the anchor is not a C/C++ function.
        """
        from .code import lang_c
        from .code.imports import cached_imports, resolve_imports

        path, symbol = anchor.path, anchor.symbol
        if path is None or symbol is None or anchor.kind not in lang_c.PARTNER_KINDS \
                or language_for_path(path) not in ("c", "cpp"):
            return None, ""
        data = self.source(rev, path)
        try:
            files = self.repo.files_at(rev, skip_gitmem=True)
        except GitError:
            return None, ""
        includes = resolve_imports(path, cached_imports(path, data), files) if data is not None else set()
        found: list[tuple[str, str]] = []
        for cand in lang_c.partner_files(path, files, includes):
            table = self.table(rev, cand) or {}
            if symbol in table:
                found.append((cand, symbol))
                continue
            base = name_base(symbol)
            names = [n for n in table if name_base(n) == base and (n == base or symbol == base)]
            if not names:  # `using namespace ns;` in the source: `A.f` there is `ns.A.f` in the header
                names = [n for n in table if n.endswith("." + symbol) or symbol.endswith("." + n)]
            if len(names) == 1 and table[names[0]].kind in lang_c.PARTNER_KINDS:
                found.append((cand, names[0]))
        if len(found) > 1:
            found = [f for f in found if lang_c.same_stem(f[0], path)] or found
        if len(found) > 1:
            return None, (f"{symbol} is also declared or defined in {' and '.join(p for p, _ in found)}: "
                          f"anchored {path} only; add the right one with --anchor PATH::{symbol}")
        if not found:
            return None, ""
        other, name = found[0]
        try:
            return self.make(other, name, rev, as_typed=False), ""
        except AnchorError:  # (cannot happen for a name of its table; never fail the anchor asked for)
            return None, ""

    def _nested_repository(self, path: str) -> str | None:
        """The directory of a submodule or nested repository that contains ``path``, if any."""
        parts = path.split("/")  # the path itself too: a submodule's folder is not a file of this repository
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if os.path.lexists(self.repo.root / d / ".git"):
                return d
        return None

    # -- status -----------------------------------------------------------------------------

    def status(self, anchor: Anchor, rev: str | None = WORKTREE, *, _depth: int = 0) -> AnchorStatus:
        """The status of ``anchor`` at ``rev`` (WORKTREE = files on disk), with its reason.

        Never raises for missing history: an anchor commit absent from this clone
        (shallow clone, rebased away) is resolved by path and name alone. Code a partial clone lacks (a blob or
        tree not fetched, its remote unreachable) gives ``unchecked`` naming the object and how to fetch it,
        never a verdict; a commit that cannot be named for that reason is said in the reason.
        """
        if not anchor.local:
            return self.foreign_status(anchor)
        if anchor.kind == KIND_COMMIT:
            return self._commit_status(anchor)
        assert anchor.path is not None
        base = anchor.commit if anchor.commit and self.repo.commit_exists(anchor.commit) else None
        # An anchor made before the first commit has no commit: its history starts at the root.
        outer = self._from_root, self._history_missing, self._boundary, self._unnamed
        self._from_root = anchor.commit is None
        self._history_missing = base is None and anchor.commit is not None
        self._boundary = None
        self._unnamed = None
        try:
            path_now, move_commit = self._follow_path(anchor.path, base, rev)
            if anchor.fingerprint is None:
                st = self._existence_status(anchor, rev, path_now)
            else:
                if anchor.symbol is None:
                    st = self._file_status(anchor, base, rev, path_now, move_commit)
                else:
                    st = self._symbol_status(anchor, base, rev, path_now, move_commit, _depth)
                if st.status != Status.FRESH and (not st.commit or not self.repo.parents(st.commit)) \
                        and base is not None and (rev is not WORKTREE or self._head is not None):
                    # not found as recorded at rev, and no commit of base..rev changed it: rev may be older than
                    # the anchor (the code elsewhere, or not yet written then). Fresh needs no such question (the
                    # same code at the same place), nor a change a commit of base..rev made (rev descends from
                    # base: the commit hooks' case, which so pays no git merge-base); a root commit named (another
                    # history altogether, whose root "adds" every file) does not descend from base: asked too
                    st = self._past_status(anchor, base, rev, st) or st
            return self._through_links(st, base, rev)
        except MissingObject as e:
            return AnchorStatus(anchor, Status.UNCHECKED,
                                reason=f"unknown: {e.message}; to check it: {e.fetch_command}")
        finally:
            self._from_root, self._history_missing, self._boundary, self._unnamed = outer

    def _through_links(self, st: AnchorStatus, base: str | None, rev: str | None) -> AnchorStatus:
        """``st`` with where its path leads through symbolic links at ``rev`` (``target``, ``links``) and, when
        it is not fresh, what the links did in its reason: ``(CLAUDE.md leads to AGENTS.md)``, ``now leads to
        …, was …``, ``points outside the repository (../x): judged by the link only``, ``was a link to …``.
        Nothing is asked of git for a path whose reads showed no link (``maybe_link``)."""
        a = st.anchor
        where = st.path_now or a.path
        if not where:
            return st
        now = self._links.get((rev, where))
        if now is not None and now.path is not None:
            st.target, st.links = now.path, now.links
        if st.status == Status.FRESH:
            return st
        try:
            then = self.link(base, a.path) if base is not None and a.path else None
        except MissingObject:  # a partial clone without the anchor's blob: the verdict stands, the link is not said
            then = None
        then_to = then.path if then is not None else None
        if (now is not None and now.outside is not None and os.path.isabs(now.outside) and base is not None
                and then_to is None and st.status != Status.UNCHECKED
                and not (a.symbol is None and base is not None
                         and self._file_fp(a.fingerprint, base, a.path or where) == a.fingerprint)):
            # made where the link led inside (an absolute link, in the clone it was made in): its file is not
            # read here, so no verdict (the link's own text is not what the anchor recorded)
            return AnchorStatus(a, Status.UNCHECKED, path_now=where, symbol_now=a.symbol, old_span=a.span,
                                reason=f"{where} {now.why()} in this clone: cannot be checked here (it led into "
                                       "the repository where the anchor was made; a relative link leads to the "
                                       "same file in every clone)")
        note = ""
        if now is not None and now.path is not None:
            note = (f"{where} leads to {now.path}; to {then_to} when anchored" if then_to and then_to != now.path
                    else f"{where} leads to {now.path}")
        elif now is not None and now.outside is not None:
            note = f"{where} {now.why()}: judged by the link only"
        elif now is not None:
            note = f"{where} {now.why()}"
        elif then_to and where == a.path:
            note = f"{a.path} was a link to {then_to}" + (", now a file" if st.status != Status.DELETED else "")
        if note:
            st.reason = f"{st.reason} ({note})" if st.reason else note
        return st

    def foreign_status(self, anchor: Anchor) -> AnchorStatus:
        """A cross-repository anchor's status as last checked at its repository (``gitmem.org.checks``; as made
        when never checked): never resolved against this repository's code, so nothing here (the commit hooks,
        ``stale``, re-anchoring, tidy) takes it for deleted because its path is not in this repository."""
        if self._foreign_fn is not None:
            return self._foreign_fn(anchor)
        if self._foreign is None:
            try:
                # the paths alone (no ``layout.of``: this may be another repository, or a bare one: OSError)
                self._foreign = org_checks.load(layout.Layout(self.repo.root).xrepo_checks_file)
            except OSError:
                self._foreign = {}
        return org_checks.as_status(anchor, self._foreign.get(org_checks.record_key(anchor)))

    def forget_foreign(self) -> None:
        """Read the foreign anchors' last checks again at the next ``status`` (``gitmem.org.xrepo`` wrote them)."""
        self._foreign = None

    def _existence_status(self, a: Anchor, rev: str | None, path_now: str | None) -> AnchorStatus:
        """A hand-written anchor with no fingerprint: only whether its file / symbol still exists."""
        note = "no fingerprint recorded: only existence is checked (gitmem can re-anchor it)"
        if path_now is None:
            return AnchorStatus(a, Status.DELETED, changes=[Change.DELETION], reason="file not found; " + note)
        if a.symbol and lookup(self.table(rev, path_now) or {}, a.symbol) is None:
            return AnchorStatus(a, Status.DELETED, path_now=path_now, changes=[Change.DELETION],
                                reason="symbol not found; " + note)
        return AnchorStatus(a, Status.FRESH, path_now=path_now, symbol_now=a.symbol)

    def _commit_status(self, anchor: Anchor) -> AnchorStatus:
        if anchor.commit and self.repo.commit_exists(anchor.commit):
            return AnchorStatus(anchor, Status.FRESH)
        return AnchorStatus(anchor, Status.DELETED, changes=[Change.DELETION],
                            reason="commit is not in this clone (rebased away, or a shallow clone)")

    def _follow_path(self, path: str, base: str | None, rev: str | None) -> tuple[str | None, str | None]:
        """Where ``path`` (at ``base``) is at ``rev``: (path or None, commit that renamed it)."""
        if self.source(rev, path) is not None:
            return path, None
        if base is None and not self._history_missing:
            return None, None
        # the anchor's commit missing (a shallow clone): renames in the history this clone has are still followed
        for ch in self.changes(base, rev) if base is not None else ():
            if ch.old_path == path and ch.status == "R" and ch.new_path:
                new = ch.new_path

                def renamed(c: str, old: str = path, new: str = new) -> bool:  # the rename is in c already
                    return self.source(c, new) is not None and self.source(c, old) is None

                return new, self._commit_changing(base, rev, new, renamed)
        # Over the whole range a rename followed by a rewrite looks like delete + add;
        # commit by commit git still sees the rename. Follow it step by step.
        at = base
        for _ in range(MAX_TRACE_DEPTH):
            def absent(c: str, p: str = path) -> bool:
                return self.source(c, p) is None

            gone = self._commit_changing(at, rev, path, absent, naming=False)
            parents = self.repo.parents(gone) if gone else []
            if not gone or not parents:
                return None, None
            nxt = next((ch.new_path for ch in self.changes(parents[0], gone)
                        if ch.old_path == path and ch.status == "R" and ch.new_path), None)
            if nxt is None:
                return None, None
            if self.source(rev, nxt) is not None:
                return nxt, gone
            path, at = nxt, gone
        return None, None

    def _file_status(self, a: Anchor, base: str | None, rev: str | None, path_now: str | None,
                     move_commit: str | None) -> AnchorStatus:
        if path_now is None:
            commit = self._commit_changing(base, rev, a.path or "", lambda c: self.source(c, a.path or "") is None)
            return AnchorStatus(a, Status.DELETED, old_span=a.span, commit=commit,
                                changes=[Change.DELETION],
                                reason=self._why("file not found" if self._history_missing else "file deleted",
                                                 commit, rev))
        data = self.source(rev, path_now) or b""
        fp = self._file_fp(a.fingerprint, rev, path_now, data)  # raw1 recorded before the type had a language
        span = (1, max(1, data.count(b"\n")))
        moved = path_now != a.path
        if fp != a.fingerprint and not lfs.is_fingerprint(a.fingerprint):
            now = self._stored_pointer(rev, path_now)
            if now is not None and file_fingerprint_as(a.fingerprint, now, path_now) == a.fingerprint:
                fp = a.fingerprint  # recorded over the pointer text as stored, unchanged
            elif not (now is not None and base and (then := self._stored_pointer(base, a.path or path_now))
                      and file_fingerprint_as(a.fingerprint, then, a.path or path_now) == a.fingerprint):
                judged = self._lfs_status(a, base, rev, path_now, move_commit)  # an older gitmem's anchor, LFS now
                if judged is not None:
                    return judged
        if fp == a.fingerprint:
            if moved:
                return AnchorStatus(a, Status.MOVED, path_now=path_now, commit=move_commit,
                                    changes=[Change.MOVE], old_span=a.span, new_span=span,
                                    reason=self._why(f"file renamed to {path_now}", move_commit,
                                                     self._unless_committed(rev, path_now)))
            return AnchorStatus(a, Status.FRESH, path_now=path_now, old_span=a.span, new_span=span)
        old_path = a.path or path_now

        def file_fp_at(c: str | None) -> str | None:
            p = path_now if self.source(c, path_now) is not None else old_path
            return self._file_fp(a.fingerprint, c, p)

        commit = self._blame(base, rev, path_now, a.fingerprint, file_fp_at, also=old_path)
        changes = [Change.CONTENT] + ([Change.MOVE] if moved else [])
        what = "file content changed" + (f" (file now {path_now})" if moved else "")
        return AnchorStatus(a, Status.STALE, path_now=path_now, commit=commit, changes=changes,
                            old_span=a.span, new_span=span, reason=self._why(what, commit, rev))

    def _symbol_status(self, a: Anchor, base: str | None, rev: str | None, path_now: str | None,
                       move_commit: str | None, _depth: int = 0) -> AnchorStatus:
        lacking: MissingObject | None = None
        try:
            table_base = (self.table(base, a.path or "") or {}) if base else {}
            now_missing = bool(path_now) and not self.content_here(rev, path_now or "")
            if (base and not self.content_here(base, a.path or "")) or now_missing:
                # git-lfs's content not here. Only the anchor's commit lacking it (a clone has HEAD's LFS
                # objects, not the history's), the symbol holding its recorded code at ``rev`` is fresh as usual;
                # else judged by the file's content id
                if now_missing or not self._holds_recorded(a, rev, path_now or ""):
                    judged = self._lfs_status(a, base, rev, path_now, move_commit)
                    if judged is not None:
                        return judged
            name_then = lookup(table_base, a.symbol or "", fingerprint=a.fingerprint)
            old_sym = self._recorded_symbol(a, table_base.get(name_then) if name_then else None, base, rev)
        except MissingObject as e:  # a partial clone without the anchor's code: its fingerprint still decides
            lacking, name_then, old_sym = e, None, None
        fp = _recorded(a.fingerprint, old_sym)
        want = name_then or a.symbol or ""  # the anchor's symbol as named today, at the anchor's commit
        table_now = self.table(rev, path_now) if path_now else None
        name = (lookup(table_now, want, like=old_sym, fingerprint=fp) if table_now else None) or want
        sym = (table_now or {}).get(name) if table_now is not None else None
        if sym is not None and old_sym is None and self._history_missing:
            fp = _recorded(fp, sym)  # no history: the definition the anchor recorded is unchanged
        moved_file = path_now is not None and path_now != a.path
        if sym is not None and path_now is not None:
            span = (sym.start_line, sym.end_line)
            if sym.fingerprint == fp:
                if moved_file:
                    return AnchorStatus(a, Status.MOVED, path_now=path_now, symbol_now=name,
                                        commit=move_commit, changes=[Change.MOVE], old_span=a.span,
                                        new_span=span,
                                        reason=self._why(f"file renamed to {path_now}", move_commit,
                                                         self._unless_committed(rev, path_now)))
                return AnchorStatus(a, Status.FRESH, path_now=path_now, symbol_now=name,
                                    old_span=a.span, new_span=span)
            changes = _what_changed(old_sym, sym) + ([Change.MOVE] if moved_file else [])
            pn, old_path = path_now, a.path or path_now

            def fp_at(c: str | None) -> str | None:  # before a rename, the code was at the old path
                t = self.table(c, pn)
                t = t if t is not None else self.table(c, old_path) or {}
                s = t.get(name) or t.get(want)
                return s.fingerprint if s else None

            commit = self._blame(base, rev, path_now, fp, fp_at, also=old_path)
            what = (_in_format_words(path_now, sym.kind, name, "changed")
                    or " and ".join(c.value for c in changes if c != Change.MOVE) + " changed")
            if moved_file:
                what += f" (file now {path_now})"
            return AnchorStatus(a, Status.STALE, path_now=path_now, symbol_now=name, commit=commit,
                                changes=changes, old_span=a.span, new_span=span,
                                reason=self._why(what, commit, rev))
        if lacking is not None:  # where the code went is only known from the code as it was
            raise lacking
        # The name is gone from its file: look for the same code elsewhere.
        found = self._find_elsewhere(fp, old_sym, base, rev, path_now, home=path_now or a.path)
        if found is not None:
            changes = []
            if found.name != name:
                changes.append(Change.RENAME)
            if found.path != a.path:
                changes.append(Change.MOVE)
            commit = self._commit_changing(
                base, rev, found.path, lambda c: found.name in (self.table(c, found.path) or {}))
            parts = []
            if found.name != name:
                parts.append(f"renamed to {found.name}")
            if found.path != a.path:
                parts.append(f"now in {found.path}")
            return AnchorStatus(a, Status.MOVED, path_now=found.path, symbol_now=found.name,
                                commit=commit, changes=changes, old_span=a.span,
                                new_span=(found.symbol.start_line, found.symbol.end_line),
                                reason=self._why(", ".join(parts), commit,
                                                 self._unless_committed(rev, found.path, found.name)))
        gone_path = path_now or a.path or ""
        traced = self._trace_rename(a, fp, want, base, rev, gone_path, _depth)
        if traced is not None:
            return traced
        commit = self._commit_changing(
            base, rev, gone_path, lambda c: lookup(self.table(c, gone_path) or {}, want, like=old_sym) is None)
        what = ((_in_format_words(path_now, old_sym.kind if old_sym else a.kind or "", want, "deleted")
                 or "symbol deleted") if path_now else "file not found" if self._history_missing else "file deleted")
        return AnchorStatus(a, Status.DELETED, path_now=None, commit=commit,
                            changes=[Change.DELETION], old_span=a.span,
                            reason=self._why(what, commit, rev))

    def _holds_recorded(self, a: Anchor, rev: str | None, path: str) -> bool:
        """Whether ``path`` at ``rev`` has ``a``'s symbol with the fingerprint ``a`` recorded."""
        table = self.table(rev, path) or {}
        name = lookup(table, a.symbol or "", fingerprint=a.fingerprint)
        return name is not None and table[name].fingerprint == a.fingerprint

    def _lfs_status(self, a: Anchor, base: str | None, rev: str | None, path_now: str | None,
                    move_commit: str | None) -> AnchorStatus | None:
        """An anchor on an LFS file that cannot be compared by what it recorded (a symbol, whose file's content
        is not in this clone; an older gitmem's ``raw1``/``ts1`` file fingerprint), judged by the file's content
        id: fresh (or moved, with its file) while ``lfs_id`` at ``rev`` is the one at the anchor's commit, stale
        from the commit that changed it; unchecked when the anchor's commit is not here to compare with.
        None when neither side is an LFS pointer (the caller judges as usual)."""
        old_path = a.path or ""
        if path_now is None:
            return None
        if not self._stored_as_pointer(rev, path_now):
            try:
                was = base is not None and self._stored_as_pointer(base, old_path)
            except MissingObject:  # a partial clone without the anchor's blob: judged as usual, by what it recorded
                was = False
            if not was:
                return None
        what = "symbols in it are not read here: git lfs pull" if a.symbol else "judged by its content id"
        then = self.lfs_id(base, old_path) if base else None
        if then is None and base is not None:
            # made on a file its commit did not have yet (the work tree; the pre-commit hook following a move
            # records against HEAD): the file as the first commit after it that has it
            for c in self._commits(base, rev, old_path)[:MAX_RECORDED_LOOKUP]:
                then = self.lfs_id(c, old_path)
                if then is not None:
                    break
        if then is None:
            missing = "the anchor's commit is not in this clone" if base is None else f"{old_path} is not in its commit"
            return AnchorStatus(a, Status.UNCHECKED, path_now=path_now, symbol_now=a.symbol, old_span=a.span,
                                reason=f"{path_now} is stored with git-lfs and {missing}: cannot be checked "
                                       f"({what}; gitmem reanchor records it again)")
        moved = path_now != a.path
        if self.lfs_id(rev, path_now) == then:
            if moved:
                return AnchorStatus(a, Status.MOVED, path_now=path_now, symbol_now=a.symbol, commit=move_commit,
                                    changes=[Change.MOVE], old_span=a.span,
                                    reason=_reason(f"file renamed to {path_now}", move_commit))
            return AnchorStatus(a, Status.FRESH, path_now=path_now, symbol_now=a.symbol, old_span=a.span)

        def id_at(c: str | None) -> str | None:
            return self.lfs_id(c, path_now if self.repo.read(c, path_now) is not None else old_path)

        commit = self._blame(base, rev, path_now, then, id_at, also=old_path)
        changes = [Change.CONTENT] + ([Change.MOVE] if moved else [])
        where = f" (file now {path_now})" if moved else ""
        return AnchorStatus(a, Status.STALE, path_now=path_now, symbol_now=a.symbol, commit=commit, changes=changes,
                            old_span=a.span, reason=self._why(f"LFS file content changed{where} ({what})", commit, rev))

    def _recorded_symbol(self, a: Anchor, at_base: Symbol | None, base: str | None,
                         rev: str | None) -> Symbol | None:
        """The anchored symbol as its anchor recorded it: ``at_base`` (the symbol at the anchor's commit)
        when it holds the recorded fingerprint (as the whole, or as one of its definitions); else the symbol
        in the first of the next ``MAX_RECORDED_LOOKUP`` commits touching its file that holds it (the anchor
        was made on code not committed at ``base``: on the work tree, or in the pre-commit hook, which
        records against HEAD); else ``at_base`` (None if absent).

        Its signature, body and shape say what changed later, and its shape finds it again under a new name.
        """
        fp, path = a.fingerprint, a.path or ""

        def holds(s: Symbol | None) -> bool:
            return s is not None and bool(fp) and (s.fingerprint == fp or fp in s.parts)

        if base is None or not fp or at_base is None and not a.symbol or holds(at_base):
            return at_base
        for c in self._commits(base, rev, path)[:MAX_RECORDED_LOOKUP]:
            t = self.table(c, path) or {}
            n = lookup(t, a.symbol or "", fingerprint=fp)
            sym = t.get(n) if n else None
            if holds(sym):
                return sym
        return at_base

    def origin(self, path: str, symbol: str | None, commit: str) -> tuple[str, str | None] | None:
        """Where ``path[::symbol]`` of ``commit`` was in the commit's first parent, when this commit moved it
        there: ``(old path, old symbol)``; None when it was not moved in (it was there already, it is new
        code, or no single place in the parent has its code).

        Moved in means: the file was renamed (git's rename detection), or the symbol's name is new here and
        exactly one symbol of the parent, gone from where it was, has the same code (an equal fingerprint:
        moved to another file) or the same code under another name (``same_shape``: renamed).
        The mirror of the move detection of ``status``, for ``gitmem log``. Cost: one diff, and the symbol
        tables of the files the commit changed in the symbol's language (``_move_languages``), at most
        ``MAX_MOVE_SEARCH_FILES`` of them, nearest first.
        """
        parents = self.repo.parents(commit)
        if not parents:
            return None
        parent = parents[0]
        changes = self.changes(parent, commit)
        renamed_from = next((ch.old_path for ch in changes
                             if ch.status == "R" and ch.new_path == path and ch.old_path), None)
        if symbol is None:
            return (renamed_from, None) if renamed_from else None
        now = (self.table(commit, path) or {}).get(symbol)
        if now is None:
            return None
        before_path = path if self.source(parent, path) is not None else renamed_from
        if before_path and symbol in (self.table(parent, before_path) or {}):
            return None if before_path == path else (before_path, symbol)
        langs = _move_languages(path)
        places = ([before_path] if before_path else []) + sorted(
            {ch.old_path for ch in changes if ch.old_path and ch.old_path != before_path
             and language_for_path(ch.old_path) in langs}, key=lambda q: (-_shared_dirs(q, path), q))[
            :MAX_MOVE_SEARCH_FILES]
        exact: list[tuple[str, str]] = []
        shaped: list[tuple[str, str]] = []
        for p in places:
            after = self.table(commit, path if p == before_path else p) or {}
            for n, s in (self.table(parent, p) or {}).items():
                if n in after:
                    continue  # still where it was: not what moved here
                if s.fingerprint == now.fingerprint:
                    exact.append((p, n))
                elif same_shape(now, s):
                    shaped.append((p, n))
        if len(exact) == 1:
            return exact[0][0], exact[0][1]
        if not exact and len(shaped) == 1:
            return shaped[0][0], shaped[0][1]
        return None

    def _find_elsewhere(self, fp: str | None, old_sym: Symbol | None, base: str | None, rev: str | None,
                        path_now: str | None, home: str | None = None) -> _Located | None:
        """The same code under another name or in another file, if exactly one place has it.

        Same code means an equal fingerprint (same name, other file) or, for a
        rename, ``symbols.same_shape`` (every token but the symbol's own name, the same kind).
        A symbol that was already there at ``base``, unchanged, is not a candidate: a
        configuration key deleted is not "renamed" to a sibling that always held the same value.
        When several places have it and exactly one is in the anchor's own file (``path_now``), that one.

        ``home``: the anchor's path (default ``path_now``); only changed files of its language are searched
        (:func:`_move_languages`), nearest to it first, at most ``MAX_MOVE_SEARCH_FILES`` files and
        ``MAX_MOVE_SEARCH_BYTES`` bytes besides ``path_now``.
        """
        home = home or path_now or ""
        places: list[str] = []
        if path_now:
            places.append(path_now)
        if base is not None:
            langs = _move_languages(home)
            others = [ch.new_path for ch in self.changes(base, rev)
                      if ch.new_path and ch.new_path not in places and language_for_path(ch.new_path) in langs]
            budget = MAX_MOVE_SEARCH_BYTES
            for p in sorted(others, key=lambda q: (-_shared_dirs(q, home), q))[:MAX_MOVE_SEARCH_FILES]:
                size = len(self.source(rev, p) or b"")
                if size > budget:
                    continue
                budget -= size
                places.append(p)
        exact: list[_Located] = []
        by_shape: list[_Located] = []
        # A configuration key with a short value (lang_data.MIN_SHAPE_VALUE_BYTES) under another name in another
        # file is a coincidence (a step `name: Checkout` in two workflows), not a move: followed in its own file only.
        from .code.lang_data import KEY_LANGUAGES, short_value  # here: only a missing symbol needs it

        keyed = language_for_path(home) in KEY_LANGUAGES
        for p in places:
            before = (self.table(base, p) or {}) if base is not None else {}
            for n, s in (self.table(rev, p) or {}).items():
                was = before.get(n)
                if was is not None and was.fingerprint == s.fingerprint:
                    continue  # there already, unchanged: not where the anchored code went
                if keyed and p != path_now and short_value(s) and (old_sym is None or n != old_sym.name):
                    continue
                if s.fingerprint == fp:
                    exact.append(_Located(p, n, s))
                elif old_sym is not None and same_shape(old_sym, s):
                    by_shape.append(_Located(p, n, s))
        for found in (exact, by_shape):
            if len(found) == 1:
                return found[0]
            own = [f for f in found if f.path == path_now]
            if len(own) == 1:
                return own[0]  # the same code added in several files, one of them the anchor's: renamed there
            if found:
                return None
        return None

    def _trace_rename(self, a: Anchor, fp: str | None, name: str, base: str | None, rev: str | None,
                      gone_path: str, depth: int) -> AnchorStatus | None:
        """Follow a symbol renamed or moved in some commit and changed afterwards.

        Finds the first commit after ``base`` where the name left ``gone_path``;
        if the same code is found under another name or file in that commit,
        re-anchors there and resolves that anchor at ``rev``. None when nothing is found.
        """
        if depth >= MAX_TRACE_DEPTH or base is None or not a.symbol:
            return None
        old_sym = self._recorded_symbol(a, (self.table(base, a.path or "") or {}).get(name), base, rev)
        for c in self._commits(base, rev, gone_path):
            if lookup(self.table(c, gone_path) or {}, name, like=old_sym, fingerprint=fp) is not None:
                continue
            found = self._find_elsewhere(fp, old_sym, base, c, gone_path if self.source(c, gone_path) else None,
                                         home=gone_path)
            if found is None:
                return None
            step = Anchor(path=found.path, symbol=found.name, commit=c, kind=found.symbol.kind,
                          span=(found.symbol.start_line, found.symbol.end_line),
                          fingerprint=found.symbol.fingerprint)
            later = self.status(step, rev, _depth=depth + 1)
            if later.status == Status.DELETED:
                return None
            changes = [Change.RENAME] if found.name != name else []
            if found.path != a.path:
                changes.append(Change.MOVE)
            changes += [ch for ch in later.changes if ch not in changes]
            where = f"renamed to {found.name}" if found.name != name else f"moved to {found.path}"
            if later.status == Status.STALE:
                what = (_in_format_words(later.path_now, found.symbol.kind, later.symbol_now or found.name, "")
                        or ", ".join(ch.value for ch in later.changes if ch not in (Change.MOVE, Change.RENAME))
                        or "code ").strip()
                reason = f"{where} in {c[:12]}, then {what} changed" + (
                    f" in {later.commit[:12]}" if later.commit else " (uncommitted)" if rev is WORKTREE else "")
                return AnchorStatus(a, Status.STALE, path_now=later.path_now, symbol_now=later.symbol_now,
                                    commit=later.commit or c, changes=changes, old_span=a.span,
                                    new_span=later.new_span, reason=reason)
            return AnchorStatus(a, Status.MOVED, path_now=later.path_now, symbol_now=later.symbol_now,
                                commit=later.commit or c, changes=changes, old_span=a.span,
                                new_span=later.new_span, reason=_reason(where, c))
        return None

    # -- the past: a revision older than the anchor -----------------------------------------

    def _code(self, c: str, path: str, name: str | None, recorded: str | None) -> Symbol | str | None:
        """What commit ``c`` holds at ``path``: the symbol ``name`` (exactly that name), or for a file anchor
        (``name`` None) the file's fingerprint by ``recorded``'s algorithm; None when absent."""
        if name is None:
            return self._file_fp(recorded, c, path)
        return (self.table(c, path) or {}).get(name)

    def _holds(self, a: Anchor, c: str) -> str | None:
        """The name under which commit ``c`` holds ``a``'s recorded code at ``a.path`` ("" for a file anchor);
        None when it does not hold it."""
        path, fp = a.path or "", a.fingerprint
        if a.symbol is None:
            return "" if fp and self._file_fp(fp, c, path) == fp else None
        t = self.table(c, path) or {}
        n = lookup(t, a.symbol, fingerprint=fp)
        sym = t.get(n) if n else None
        return n if n and sym is not None and fp and (sym.fingerprint == fp or fp in sym.parts) else None

    def _home(self, a: Anchor, base: str) -> tuple[str, str | None]:
        """(commit, name there) where ``a``'s recorded code is: its commit; else the first of the next
        ``MAX_RECORDED_LOOKUP`` commits touching its path that holds it (an anchor made on uncommitted code, or
        by the pre-commit hook following a move, is recorded against the commit before); else its commit."""
        n = self._holds(a, base)
        if n is None:
            for c in self._commits(base, WORKTREE, a.path or "")[:MAX_RECORDED_LOOKUP]:
                n = self._holds(a, c)
                if n is not None:
                    return c, n or None
        if n is None and a.symbol:
            n = lookup(self.table(base, a.path or "") or {}, a.symbol) or a.symbol
        return base, n or None

    def _fork(self, rev: str, home: str) -> str | None:
        """Where ``rev``'s history meets ``home``'s when ``rev`` does not descend from ``home``: ``rev`` itself when
        it is an ancestor of ``home`` (older), else their merge base (``rev`` on another line of history); None
        when ``rev`` is ``home`` or descends from it, or the histories do not meet in this clone. One ``git
        merge-base``, cached; none when ``rev`` is a child of ``home`` (the commit hooks' case)."""
        if rev == home or home in self.repo.parents(rev):
            return None
        key = (rev, home)
        if key not in self._older:
            if len(self._older) >= MAX_FORK_QUESTIONS:  # many anchors' commits: rev's ancestors listed once
                if rev not in self._ancestors:
                    try:
                        self._ancestors[rev] = frozenset(self.repo.topo_order(rev))
                    except GitError:
                        self._ancestors[rev] = frozenset()
                if home in self._ancestors[rev]:
                    self._older[key] = None
                    return None
            met = self.repo.merge_base(rev, home)
            if met is None:
                self._unrelated.add(key)
            self._older[key] = None if met is None or met == home else met
        return self._older[key]

    def _back(self, a: Anchor, home: str, name: str | None, old: str) -> _Then | None:
        """Where ``a``'s code (``a.path``, ``name`` at commit ``home``) was at ``old``, an ancestor of ``home``.

        Per place the code had (its path and name): the commits of ``old..home`` touching the path; when the code
        is not at that place at ``old``, the commit that brought it there is found by bisection over them (the
        code is there from that commit on: a handful of symbol tables, not one per commit), and followed back
        through ``origin`` (a renamed file, a symbol moved from another file or renamed; at most
        ``MAX_TRACE_DEPTH`` moves) or is where it was written. The newest commit that changed the code is found
        walking newest first (at most ``MAX_BLAME_COMMITS`` commits per place). None when git fails.
        """
        path, fp = a.path or "", a.fingerprint
        moves: list[tuple[str, str, str]] = []
        changed: list[str] = []
        ends: list[tuple[Symbol | str | None, Symbol | str | None]] = []
        at = home
        hops = 0
        while len(moves) <= MAX_TRACE_DEPTH and hops <= MAX_MERGE_HOPS:
            try:  # one line of history: what is there is there from one commit on (bisection holds)
                commits = self.repo.commits_touching(old, at, path, first_parent=True)
            except GitError:
                return None
            entry = 0  # commits[entry:] hold the code at this place
            if self._code(old, path, name, fp) is None and commits:
                lo, hi = 0, len(commits) - 1
                while lo < hi:  # the first commit holding it (there in commits[-1]: the code at ``at``)
                    mid = (lo + hi) // 2
                    if self._code(commits[mid], path, name, fp) is None:
                        lo = mid + 1
                    else:
                        hi = mid
                entry = lo
            if not changed:  # the newest change, walking newest first over the commits that hold the code
                held = commits[entry:]
                for i in range(len(held) - 1, max(0, len(held) - 1 - MAX_BLAME_COMMITS), -1):
                    now, before = self._code(held[i], path, name, fp), self._code(held[i - 1], path, name, fp)
                    if not _same_code(before, now):
                        changed.append(held[i])
                        break
            if entry == 0 and self._code(old, path, name, fp) is not None:
                if not changed and commits and not _same_code(self._code(old, path, name, fp),
                                                              self._code(commits[0], path, name, fp)):
                    changed.append(commits[0])
                return _Then(path, name, moves, None, changed, ends)
            if not commits:
                return None
            c = commits[entry]
            if self.repo.cut_short(c):
                return None  # (cannot be: ``old`` is an ancestor in this clone)
            parents = self.repo.parents(c)
            side = next((p for p in parents[1:] if self._code(p, path, name, fp) is not None), None)
            if side is not None:  # a merge brought it from another line: followed there
                hops += 1
                at = side
                continue
            found = self.origin(path, name, c) if parents else None
            if found is None:
                return _Then(None, None, moves, c, changed, ends)
            now = self._code(c, path, name, fp)
            old_path, old_name = found
            was = self._code(parents[0], old_path, old_name, fp)
            if not changed and not _same_code(was, now):
                changed.append(c)
            moves.append((c, _key(old_path, old_name), _key(path, name)))
            ends.append((was, now))
            path, name, at = old_path, old_name, parents[0]
        return None

    def _past_status(self, a: Anchor, base: str, rev: str | None, forward: AnchorStatus) -> AnchorStatus | None:
        """``a``'s status at ``rev`` when ``rev`` is older than the commit that holds its recorded code (an
        ancestor of it): the question is whether the memory was true at ``rev``. The code is followed back
        through the moves and renames after ``rev`` (``_back``; the key the memory was written about,
        ``Anchor.was``, when git's history does not say), then judged where it was:

        * ``fresh``: the same code (at its old place: ``path_now``/``symbol_now`` say where);
        * ``stale``: other code there; the reason names the newest commit after ``rev`` that changed it (``changed
          after R, last in C``: the one that made it what the memory describes);
        * ``unwritten``: not yet written at ``rev`` (the commit that wrote it named).

        ``rev`` on another line of history (a release branch that parted before the anchor's commit): judged at
        the commit where the two lines part, then what ``rev``'s line did to the code since (``_apart``).

        None when ``rev`` descends from the anchor's commit, or the history cannot say (``forward``, the caller's
        answer, stands).
        """
        at = self._head if rev is WORKTREE else rev
        if at is None:
            return None
        label = at[:12] if rev is not WORKTREE else f"HEAD {at[:12]}"
        try:
            home, name = self._home(a, base)
        except MissingObject:  # a partial clone lacks the recorded code: where it is stays the anchor's commit
            home, name = base, a.symbol
        fork = self._fork(at, home)
        if fork is None:
            if (forward.status == Status.DELETED and forward.path_now is None and (at, home) in self._unrelated
                    and not self._shallow()):
                # another history altogether (an orphan branch): the code was never written there, nothing deleted
                return AnchorStatus(a, Status.UNWRITTEN, old_span=a.span,
                                    reason=f"not written at {label}: its history does not meet the anchor's "
                                           f"commit {home[:12]}")
            named = f" in {forward.commit[:12]}" if forward.commit else ""
            if named and forward.reason.endswith(named) and (at, home) in self._unrelated and not self._shallow():
                # another history's commit (its root "adds" every file) did not change the memory's code
                return replace(forward, commit=None, reason=forward.reason[:-len(named)]
                               + f" ({label}'s history does not meet the anchor's commit {home[:12]})")
            return None
        then = self._back(a, home, name, fork)
        if then is None:
            return None
        fp = a.fingerprint
        if then.path is None and a.was:  # not found by git's history: the place the memory was written about
            was_path, _, was_name = a.was.partition("::")
            if self._code(fork, was_path, was_name or None, fp) is not None:
                then = _Then(was_path, was_name or None, then.moves, None, then.changed, [])
        judged = self._judge(a, then, fork, home, name, label)
        if judged is None or fork == rev:
            return judged
        return self._apart(a, judged, rev, fork, forward, label)

    def _judge(self, a: Anchor, then: _Then, at: str, home: str, name: str | None, label: str) -> AnchorStatus | None:
        """``a``'s status at ``at``, an ancestor of ``home``, from where ``_back`` found its code there (``label``:
        how the reasons name ``at``)."""
        fp, r = a.fingerprint, label
        first = then.moves[-1][1] if then.moves else a.key
        if then.path is None:
            assert then.written is not None
            return AnchorStatus(a, Status.UNWRITTEN, commit=then.written, old_span=a.span,
                                reason=f"not yet written at {r}: written in {then.written[:12]}"
                                       + (f" (as {first})" if first != a.key else ""))
        at_rev = self._code(at, then.path, then.name, fp)
        if at_rev is None:
            return None
        where = _key(then.path, then.name)
        moves = "; ".join(f"{'renamed' if old.split('::')[0] == new.split('::')[0] else 'moved'} to {new} in {c[:12]}"
                          for c, old, new in reversed(then.moves))
        if where != a.key and not then.moves:
            moves = "the place the memory was written about"
        place = f"as {where} at {r}" + (f" ({moves})" if moves else "") if where != a.key else ""
        sym = at_rev if isinstance(at_rev, Symbol) else None
        span = (sym.start_line, sym.end_line) if sym else None
        recorded = self._code(home, a.path or "", name, fp)
        renamed = sym is not None and then.name != name
        if fp and (_fp_of(at_rev) == fp or (sym is not None and fp in sym.parts)
                   or renamed and isinstance(recorded, Symbol) and _same_code(sym, recorded)):
            return AnchorStatus(a, Status.FRESH, path_now=then.path, symbol_now=then.name, old_span=a.span,
                                new_span=span, reason=f"the same code, {place}" if place else "")
        if sym is not None:
            # what changed, name by name: at rev up to its first move, between moves, from the last one to now
            chain = [at_rev, *(x for pair in reversed(then.ends) for x in pair), recorded]
            changes = []
            for older, newer in zip(chain[::2], chain[1::2], strict=True):
                if isinstance(older, Symbol) and isinstance(newer, Symbol) and not _same_code(older, newer):
                    changes += [ch for ch in _what_changed(older, newer) if ch not in changes]
            changes = changes or [Change.BODY]
            what = (_in_format_words(then.path, sym.kind, sym.name, "changed")
                    or " and ".join(c.value for c in changes) + " changed")
        else:
            changes, what = [Change.CONTENT], "file content changed"
        if then.path != a.path:
            changes.append(Change.MOVE)
        if then.name is not None and a.symbol is not None and then.name != name:
            changes.append(Change.RENAME)
        newest = then.changed[0] if then.changed else None
        when = f" after {r}, last in {newest[:12]}" if newest else f" after {r}"
        return AnchorStatus(a, Status.STALE, path_now=then.path, symbol_now=then.name, commit=newest,
                            changes=changes, old_span=a.span, new_span=span,
                            reason=what + when + (f"; {place}" if place else ""))

    def _apart(self, a: Anchor, judged: AnchorStatus, rev: str | None, fork: str, forward: AnchorStatus,
               label: str) -> AnchorStatus | None:
        """``a``'s status at ``rev`` (or the work tree on a HEAD older than the anchor, or on another line of
        history): ``judged`` says what the code was at ``fork`` (HEAD itself, or where the two lines part)
        against the anchor; what happened since on ``rev``'s side (its line's commits, the work tree's
        changes) is the status at ``rev`` of an anchor on that code at ``fork``. ``forward``: the status found
        without this (kept when the code was written on the anchor's line only and ``rev`` has code of that
        name anyway: a cherry-pick). ``label``: how reasons name ``rev``."""
        r, f = label, fork[:12]
        older = rev is WORKTREE and fork == self._head  # the work tree on a HEAD older than the anchor
        parted = f"after {f}, where the history of {r} and the anchor's part"
        if judged.status == Status.UNWRITTEN:
            if forward.status != Status.DELETED:
                return None
            if older:
                return judged
            return replace(judged, reason=f"not written at {r}: written in {(judged.commit or '')[:12]} {parted}"
                                          + (judged.reason[judged.reason.index(" (as "):]
                                             if " (as " in judged.reason else ""))
        path, symbol = judged.path_now or "", judged.symbol_now
        at_fork = self._code(fork, path, symbol, a.fingerprint)
        there = Anchor(path=path, symbol=symbol, commit=fork, kind=a.kind, span=judged.new_span,
                       fingerprint=_fp_of(at_fork))
        since = self.status(there, rev)
        if judged.status == Status.FRESH:
            if since.status == Status.FRESH:
                return replace(judged, path_now=since.path_now, symbol_now=since.symbol_now, new_span=since.new_span)
            return replace(since, anchor=a, old_span=a.span)  # what rev's line did to it, its commits named
        what = judged.reason.split(" after ", 1)[0]
        theirs = judged.reason if older else f"{what} in {(judged.commit or '')[:12]} {parted} ({r} does not have it)"
        if since.status == Status.FRESH:
            return replace(judged, path_now=since.path_now, symbol_now=since.symbol_now, new_span=since.new_span,
                           reason=theirs)
        worst = Status.worst([Status.STALE, since.status])
        return replace(since, anchor=a, status=worst, old_span=a.span, reason=f"{since.reason}; also {theirs}")

    # -- naming the commit ------------------------------------------------------------------

    def _commits(self, base: str | None, rev: str | None, path: str, also: str | None = None, *,
                 naming: bool = True) -> list[str]:
        """The commits after ``base`` up to ``rev`` that touched ``path`` (or ``also``), oldest first, the newest
        ``MAX_BLAME_COMMITS``; [] when git cannot say. A partial clone without the trees to tell (a treeless
        clone): [] when ``naming`` (``_unnamed`` says why), else ``MissingObject``."""
        end = self._head if rev is WORKTREE else rev
        if end is None:
            return []
        extra: tuple[str, ...] = (also,) if also and also != path else ()
        # a path through links reads other files: the commits changing those (or retargeting a link) count too
        extra += tuple(sorted(p for p in self._via.get(path, ()) if p not in (path, also)))
        # anchors of one memory share base and often path: one git call
        key: tuple[str | None, ...] = (base, end, path, *extra)
        if key not in self._touching:
            try:
                self._touching[key] = self.repo.commits_touching(base, end, path, *extra)[-MAX_BLAME_COMMITS:]
            except MissingObject as e:
                e = self.repo.missing(e.oid, e.wanted or f"the history of {path}")
                if not naming:
                    raise e from None
                self._unnamed = e
                return []
            except GitError:
                self._touching[key] = []
        return self._touching[key]

    def _commit_changing(self, base: str | None, rev: str | None, path: str,
                         pred: Callable[[str], bool], *, naming: bool = True) -> str | None:
        """The first commit after ``base`` (touching ``path``) from which ``pred(commit)`` holds.

        ``naming``: the answer only names a commit (a verdict made already): code a partial clone lacks makes
        it None (``_unnamed`` says why); else ``MissingObject`` is raised.

        Walks newest to oldest and stops at the first commit where ``pred`` is
        false, so the usual case (the change is recent) parses two blobs, not the history.
        """
        culprit = None
        if naming:
            self._unnamed = None  # only this naming's own lack is said
        for c in reversed(self._commits(base, rev, path, naming=naming)):
            try:
                if not pred(c):
                    return culprit
            except MissingObject as e:  # a partial clone lacks that commit's code: no commit is named
                if not naming:
                    raise
                self._unnamed = e
                return None
            culprit = c
        return None if culprit is not None and self._cut_short(culprit) else culprit

    def _cut_short(self, commit: str) -> bool:
        """Whether ``commit``'s parent is not in this clone (a shallow clone's boundary): a walk that reached it
        without finding the change cannot name the commit that made it (the boundary's diff against its missing
        parent looks like it added every file). Remembers it for the reason (``_why``)."""
        try:
            cut = self.repo.cut_short(commit)
        except GitError:
            cut = True
        if cut:
            self._boundary = commit
        return cut

    def _blame(self, base: str | None, rev: str | None, path: str, fp: str | None,
               fp_at: Callable[[str], str | None], also: str | None = None) -> str | None:
        """The commit that last turned the fingerprint from ``fp`` into something else.

        Walks the commits that touched ``path`` from the newest back to the last
        one where the fingerprint still equalled ``fp``; the commit after it is
        the one. None when the newest commit still matches (the change is only
        in the working tree). When no commit in reach matches (the anchor was
        made on uncommitted code, or this clone's history is cut short), names
        the oldest changing commit only if the history is complete.
        """
        self._unnamed = None  # only this naming's own lack is said
        commits = self._commits(base, rev, path, also)
        culprit: str | None = None
        for c in reversed(commits):
            try:
                if fp_at(c) == fp:
                    return culprit
            except MissingObject as e:  # a partial clone lacks that commit's code: no commit is named
                self._unnamed = e
                return None
            culprit = c
        if culprit is not None and self._cut_short(culprit):
            return None
        if culprit is not None and base is None and not self._from_root:
            return None  # shallow clone: the change may predate the history we have
        if (culprit is not None and base is not None and base not in self.repo.parents(culprit)
                and any(len(self.repo.parents(c)) > 1 for c in commits)):  # a merge changed the path itself
            return self._on_the_anchors_line(base, rev, commits, culprit)
        return culprit

    def _on_the_anchors_line(self, base: str, rev: str | None, commits: list[str], culprit: str) -> str:
        """``culprit`` (the oldest of ``commits`` that does not hold the anchor's code) when it descends from
        ``base``; else the oldest of ``commits`` that does (a merge that rewrote the code: the other line's commit
        never had the anchor's code), or ``culprit`` when none does (a change merged cleanly from the other line
        is its commit's). One or two git calls, only when the culprit is not a child of ``base`` and a merge of
        ``commits`` changed the path itself."""
        end = self._head if rev is WORKTREE else rev
        try:
            if end is None or self.repo.is_ancestor(base, culprit):
                return culprit
            line = set(self.repo.ancestry_path(base, end))
        except GitError:
            return culprit
        return next((c for c in commits if c in line), culprit)

    def _shallow(self) -> bool:
        """Whether this is a shallow clone (one git call, asked only once a walk reached a missing parent)."""
        if self._is_shallow is None:
            try:
                self._is_shallow = self.repo.is_shallow()
            except GitError:
                self._is_shallow = False
        return self._is_shallow

    def _unless_committed(self, rev: str | None, path: str, name: str | None = None) -> str | None:
        """``rev`` when it is the work tree and HEAD does not have ``path`` (or its symbol ``name``): a move found
        there is uncommitted (``_why`` says so: a rename staged with ``git mv`` is no commit's); else "" (a
        commit: ``_why`` names it or says nothing)."""
        if rev is not WORKTREE or self._head is None:
            return ""
        if name is None:
            there = self.source(self._head, path) is not None
        else:
            there = lookup(self.table(self._head, path) or {}, name) is not None
        return "" if there else WORKTREE

    def _why(self, what: str, commit: str | None, rev: str | None) -> str:
        """``what`` plus where it happened: a commit, uncommitted changes, or unknown history."""
        if commit:
            return f"{what} in {commit[:12]}"
        if self._unnamed is not None:
            return (f"{what} (in which commit is unknown: {self._unnamed.message}; "
                    f"{self._unnamed.fetch_command} to name it)")
        if self._boundary is not None:
            return f"{what}; {shallow_note(self._boundary, self._shallow())}"
        if self._history_missing:
            return f"{what} (the anchor's commit is not in this clone: git fetch --unshallow to name the commit)"
        if rev is WORKTREE:
            return f"{what} (uncommitted)"
        return what


def shallow_note(boundary: str, shallow: bool = True) -> str:
    """What to say when the commit that made a change is in history this clone does not have: ``history not
    available before 1a2b3c4d5e6f (shallow clone): git fetch --deepen=N (N more commits) or git fetch --unshallow
    to name the commit``; ``shallow`` false (a commit's parent missing otherwise): ``… (its parent commit is not
    in this clone): git fetch …``."""
    why = "shallow clone" if shallow else "its parent commit is not in this clone"
    how = "git fetch --deepen=N (N more commits) or git fetch --unshallow" if shallow else "git fetch"
    return f"history not available before {boundary[:12]} ({why}): {how} to name the commit"


#: Languages whose symbols are not code but entries of a configuration, document, build or schema file: a reason
#: names such an anchor in its format's words (``key production.pool changed``, ``section Rollback changed``,
#: ``job deploy``, ``target build``, ``stage build``) where code says ``body changed``.
FORMAT_LANGUAGES = frozenset({"yaml", "toml", "json", "markdown", "sql", "dockerfile", "terraform", "hcl", "make"})


def _in_format_words(path: str | None, kind: str, name: str, verb: str) -> str | None:
    """``KIND NAME VERB`` (``key production.pool changed``) for a symbol of a ``FORMAT_LANGUAGES`` file, else
    None (code: the caller says what changed, body or signature)."""
    if not path or not kind or language_for_path(path) not in FORMAT_LANGUAGES:
        return None
    return f"{kind} {name} {verb}"


def _move_languages(path: str) -> frozenset[str]:
    """The languages a symbol of ``path`` may have moved into: its own, or its group in
    ``MOVE_LANGUAGE_GROUPS``; empty when ``path`` has no language."""
    lang = language_for_path(path)
    if lang is None:
        return frozenset()
    return next((g for g in MOVE_LANGUAGE_GROUPS if lang in g), frozenset({lang}))


def _shared_dirs(path: str, home: str) -> int:
    """How many leading directories ``path`` shares with ``home`` (``a/b/x.go`` and ``a/b/c/y.go``: 2)."""
    n = 0
    for x, y in zip(path.split("/")[:-1], home.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def _what_changed(old: Symbol | None, new: Symbol) -> list[Change]:
    if old is None:
        return [Change.BODY]
    out = []
    if old.decorators_fp != new.decorators_fp:
        out.append(Change.DECORATORS)
    if old.signature_fp != new.signature_fp:
        out.append(Change.SIGNATURE)
    if old.body_fp != new.body_fp:
        out.append(Change.BODY)
    return out or [Change.BODY]


def _recorded(fp: str | None, sym: Symbol | None) -> str | None:
    """The fingerprint to compare an anchor with: ``sym``'s own when the anchor recorded one of the
    definitions ``sym`` now holds (an earlier gitmem anchored an ``@overload`` stub, or the
    implementation alone), else ``fp`` as recorded."""
    if sym is not None and fp and fp != sym.fingerprint and fp in sym.parts:
        return sym.fingerprint
    return fp


def _reason(what: str, commit: str | None, rev: str | None = "") -> str:
    if commit:
        return f"{what} in {commit[:12]}"
    if rev is WORKTREE:
        return f"{what} (uncommitted)"
    return what
