"""What encloses what, per language: a type and its members, as the symbol tables name and place them.

Owns: which symbols of a table are the members of a container (``members``), whether a container changed
only through its members (``changed_through_members``: its own code, without its members' lines, is the
same), and where a language declares a type's members apart from the type (``members_apart``, ``apart_near``).
Used by ``rank.focus.changed_symbols`` (what counts as changed for a container) and
``rank.score.anchor_proximity`` (what encloses an anchor). Stdlib only (and ``code.languages``, which imports
no tree-sitter at module level): the ranker imports it.

The facts, as gitmem's tables give them (checked on real parses: tests/test_containment.py):

* **Members inside the type** — Python, Java, TypeScript / JavaScript, C#, Ruby, Kotlin, Swift, Scala, PHP, a
  C++ method defined in its class: a member is qualified ``Type.member`` (``Mux.get``, Java's nested
  ``Mux.Inner.run``, Ruby's ``M.Mux.get``) and its span lies inside the type's span, so the type's
  fingerprint covers its members' tokens: **a one-method edit changes the type's fingerprint too** (the type
  and the method both "changed"). ``changed_through_members`` tells that case from an edit of the type's own
  code (a field, a base class, a decorator, a class attribute).
* **Members apart** (``MEMBERS_APART``) — Go: a method is declared at the top level, ``func (m *Mux) Get`` →
  ``Mux.Get``, in any file of the type's package (a package is a directory: the Go spec, "Method declarations"
  and "Packages"), so editing it never changes the struct's fingerprint; Rust: ``impl Mux`` / ``impl Trait for
  Mux`` → ``Mux.get`` (the ``impl`` block is no symbol), in any module of the crate; C / C++: an out-of-line
  definition ``int Mux::get()`` → ``ns.Mux.get`` (its namespace's name included), in the source file paired
  with the header declaring the class (``lang_c.same_stem``). For these a member may sit in another file than
  its type; ``apart_near`` says when two files are close enough for the names to mean the same type (the same
  directory for Go, where it is exact, and for Rust, where it is an approximation of "the same crate"; the
  same directory and stem for C / C++).

A memory on a type is near a change to one of its members (the ranker's enclosing tier, below the member's
own memories), and a type changed only through its members is not "changed" for its other members.
"""

from __future__ import annotations

import bisect
import functools
import posixpath

from ..model import Symbol
from .languages import language_for_path

#: Languages whose members may be declared outside the type's span, even in another file (module docstring):
#: language → how near the other file must be: "package" (the same directory: a Go package), "crate" (the same
#: directory: an approximation of a Rust crate's module tree), "pair" (the same directory and file stem: a C/C++
#: header and its source file).
MEMBERS_APART = {"go": "package", "rust": "crate", "c": "pair", "cpp": "pair"}

_C_COMMENTS = (b"//", b"/*", b"*", b"*/")
#: The starts of a comment line per language: a container's own lines (``own_lines``) leave such lines out, as
#: its fingerprint leaves comments out (``code.symbols``: a method's doc comment above it is the class's line,
#: not the method's span). Languages not listed compare every line (the safe side).
LINE_COMMENTS: dict[str, tuple[bytes, ...]] = {
    **dict.fromkeys(("python", "ruby", "bash"), (b"#",)),
    **dict.fromkeys(("java", "javascript", "typescript", "tsx", "go", "rust", "c", "cpp", "csharp", "kotlin",
                     "swift", "scala"), _C_COMMENTS),
    "php": (*_C_COMMENTS, b"#"),
    "lua": (b"--",),
}


def members(table: dict[str, Symbol], name: str) -> list[Symbol]:
    """The symbols of ``table`` named under ``name`` (``name.x``, nested ones too) and inside its span, in table
    order. [] when ``name`` is not in ``table`` or encloses nothing.

    By name and span both, as the ranker relates an anchor to the focus by name (``rank.score``): what a
    container holds without naming it under itself (a Swift extension ``Mux#2`` holding ``Mux.more``, a Scala
    companion ``Mux$`` holding ``Mux.make``, a Markdown section ``A`` holding the section ``B`` below it) is no
    member here, so such a container still counts as changed with it (no memory on it loses its nearness).
    """
    outer = table.get(name)
    if outer is None:
        return []
    prefix = name + "."
    return [s for s in (table[n] for n in _named_under(table, prefix)) if outer.start_line <= s.start_line
            and s.end_line <= outer.end_line and (s.start_line, s.end_line) != (outer.start_line, outer.end_line)]


#: Tables above this many symbols get a sorted index of their names (``_named_under``); smaller ones are scanned.
INDEX_MIN_SYMBOLS = 64
#: Sorted indexes kept (the tables a ranking compares: a file's two versions, a few files).
INDEXES_KEPT = 8
_INDEXES: dict[int, tuple[dict[str, Symbol], list[str], dict[str, int]]] = {}


def _named_under(table: dict[str, Symbol], prefix: str) -> list[str]:
    """The names of ``table`` starting with ``prefix``, in table order. A large table is searched in its sorted
    names (kept per table object, ``INDEXES_KEPT``): a scan per container made a file of 10,000 symbols all
    changed cost 10,000 × 10,000 comparisons (minutes)."""
    if len(table) < INDEX_MIN_SYMBOLS:
        return [n for n in table if n.startswith(prefix)]
    held = _INDEXES.get(id(table))
    if held is None or held[0] is not table or len(held[1]) != len(table):
        if len(_INDEXES) >= INDEXES_KEPT:
            _INDEXES.pop(next(iter(_INDEXES)))
        held = _INDEXES[id(table)] = (table, sorted(table), {n: i for i, n in enumerate(table)})
    _, names, order = held
    out = []
    for i in range(bisect.bisect_left(names, prefix), len(names)):
        if not names[i].startswith(prefix):
            break
        out.append(names[i])
    return sorted(out, key=order.__getitem__)


def own_lines(lines: list[bytes], table: dict[str, Symbol], name: str, comments: tuple[bytes, ...] = ()
              ) -> list[bytes]:
    """The lines of ``name``'s span outside its members' spans, each stripped, blank ones and those starting
    with one of ``comments`` (``line_comments``) left out.

    ``lines``: the file's lines (the normalised source the table was made from, split on ``\\n``). The type's
    first line is always its own (a one-line ``class A { void f() {} }`` then counts as its own code: the
    safe side, the old behaviour). [] when ``name`` is not in ``table``.
    """
    outer = table.get(name)
    if outer is None:
        return []
    inside: set[int] = set()
    for s in members(table, name):
        inside.update(range(s.start_line, s.end_line + 1))
    inside.discard(outer.start_line)
    out = []
    for n in range(outer.start_line, min(outer.end_line, len(lines)) + 1):
        if n not in inside:
            text = lines[n - 1].strip()
            if text and not text.startswith(comments or (b"\0",)):
                out.append(text)
    return out


@functools.lru_cache(maxsize=4)
def source_lines(source: bytes) -> list[bytes]:
    """``source``'s lines as the symbol tables number them (a UTF-8 BOM and CRs dropped: ``symbols._normalise``).
    Cached (the last few sources: each container of a file asks for its lines); do not modify the list."""
    if source.startswith(b"\xef\xbb\xbf"):
        source = source[3:]
    return source.replace(b"\r\n", b"\n").split(b"\n")


def line_comments(path: str) -> tuple[bytes, ...]:
    """The comment-line starts of ``path``'s language (``LINE_COMMENTS``; () when unknown)."""
    lang = language_for_path(path)
    return LINE_COMMENTS.get(lang, ()) if lang else ()


def has_members_apart_from_value(path: str) -> bool:
    """Is ``path`` in a programming language (``LINE_COMMENTS``' languages), where a type's members are
    definitions of their own? In a data or document format (YAML / TOML / JSON keys, Markdown sections, HCL
    blocks) a key's value *is* its nested keys: a changed ``jobs.test.steps`` changes ``jobs`` itself, so there
    a container keeps counting as changed with its content."""
    lang = language_for_path(path)
    return lang in LINE_COMMENTS if lang else False


def changed_through_members(name: str, before: dict[str, Symbol], old: bytes, after: dict[str, Symbol],
                            new: bytes, comments: tuple[bytes, ...] = ()) -> bool:
    """Did container ``name`` change only through its members (a member edited, added or removed)?

    ``before`` / ``after``: the file's symbol tables at the two revisions, ``old`` / ``new`` its bytes. True
    when ``name`` has members at either revision and its own lines (``own_lines``: its span without its
    members', whitespace stripped, comment lines starting with one of ``comments`` left out) are the same at
    both; False for a symbol with no members, a new or gone one, or one whose own code changed (a field, a base
    class, a decorator). Line-based: a trailing comment, or a docstring, edited in the container's own lines
    counts as its own change (the old behaviour: the safe side).
    """
    if name not in before or name not in after:
        return False
    if not members(before, name) and not members(after, name):
        return False
    return (own_lines(source_lines(old), before, name, comments)
            == own_lines(source_lines(new), after, name, comments))


def members_apart(path: str) -> str | None:
    """How near another file must be to hold members of ``path``'s types (``MEMBERS_APART``), or None when its
    language keeps members inside the type (or ``path`` is no code gitmem parses)."""
    lang = language_for_path(path)
    return MEMBERS_APART.get(lang) if lang else None


def apart_near(a: str, b: str) -> bool:
    """May files ``a`` and ``b`` (repo-relative, different) hold one type and its members? (module docstring)

    The same directory and a language of ``MEMBERS_APART`` for both (C and C++ count as one: a C++ class may be
    declared in a ``.h``); for "pair" languages the same file stem too (``mux.hpp`` / ``mux.cpp``).
    """
    if a == b or posixpath.dirname(a) != posixpath.dirname(b):
        return False
    rule, other = members_apart(a), members_apart(b)
    if rule is None or other is None or (rule != other):
        return False
    if rule == "pair":
        return posixpath.splitext(posixpath.basename(a))[0].lower() == \
            posixpath.splitext(posixpath.basename(b))[0].lower()
    return language_for_path(a) == language_for_path(b)
