"""Bash / shell symbols (``.sh``, ``.bash``, ``.zsh``, ``.ksh``, ``.bats``): the rules of :data:`BASH`.

Names and kinds (documented in docs/how-it-works.md, "Bash"):

* ``function``: ``f() { ... }``, ``function f { ... }`` and ``function f() { ... }``, wherever they
  are defined (at top level, under ``if``, inside another function): a shell has one flat
  namespace of functions, so a function defined inside another is ``inner``, not ``outer.inner``.
  Names are kept as written, ``::`` and ``-`` included (``nvm_ls``, ``lib::log``). A function
  defined twice (``if`` / ``else`` variants) is ``f``, ``f#2`` ... in source order. A name
  holding a ``.`` nests like a qualified name (``a.b`` has the leaf ``b``).
* Fingerprints leave out ``#`` comments (the shebang too); a ``;`` is a line break. A quoted
  string is the same token as another quoting of the same characters when neither could expand
  anything: ``'a b'`` == ``"a b"`` unless the text holds ``$``, a backquote, ``\\`` or ``!``
  (inside double quotes those expand or escape; inside single quotes they do not, so ``'$x'``
  and ``"$x"`` stay different). ``$'...'`` (ANSI-C) strings and unquoted words are kept as written.
  Known limit: ``function f {`` and ``f() {`` are different signatures; a ``.bats`` file's
  ``@test "..." { }`` blocks are not symbols (its helper functions are).
* Written forms accepted on input: ``f()``, ``function f`` and ``function f()`` for ``f``.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from .languages import Def, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node

#: Characters that a double-quoted string expands or escapes and a single-quoted one keeps as they are.
_EXPANDING = frozenset(b"$`\\!")


_defs_cache: list[tuple[bytes, list[Node]]] = []
_query: list[object] = []


def _all_functions(node: Node, src: bytes) -> list[Node]:
    """Every function definition of the file holding ``node``, in source order (one query per source)."""
    entry = _defs_cache[0] if _defs_cache else None  # one read: another thread may replace it
    if entry is None or entry[0] is not src:
        from tree_sitter import Query, QueryCursor
        from tree_sitter_language_pack import get_language

        if not _query:
            _query.append(Query(get_language("bash"), "(function_definition) @f"))
        root = node
        while root.parent is not None:
            root = root.parent
        found = QueryCursor(_query[0]).captures(root).get("f", [])  # type: ignore[arg-type]
        entry = (src, sorted(found, key=lambda n: n.start_byte))
        _defs_cache[:] = [entry]
    return entry[1]


def _nested(node: Node, src: bytes) -> list[Node]:
    """Function definitions inside ``node``, at any depth, in source order."""
    start, end = node.start_byte, node.end_byte
    found = _all_functions(node, src)  # sorted by start: those inside are one run (a bisect, not a scan each)
    lo = bisect.bisect_left(found, start, key=lambda n: n.start_byte)
    hi = bisect.bisect_left(found, end, lo, key=lambda n: n.start_byte)
    return [n for n in found[lo:hi] if n.end_byte <= end]


def _function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = text(node.child_by_field_name("name"), src)
    if not name:
        return None
    body = node.child_by_field_name("body")
    out = [make_def(name, "function", node, node, body=body)]
    if body is not None:  # a function defined by running another is global: a flat name, not outer.inner
        for inner in _nested(body, src):
            inner_name = text(inner.child_by_field_name("name"), src)
            if inner_name:
                out.append(make_def(inner_name, "function", inner, inner, body=inner.child_by_field_name("body")))
    return out


def _string(node: Node, src: bytes) -> bytes | None:
    """``'x'`` / ``"x"`` as one token ``S|x`` when the quotes make no difference (see the module docstring)."""
    raw = src[node.start_byte:node.end_byte]
    if len(raw) < 2 or raw[:1] not in (b"'", b'"') or raw[-1:] != raw[:1]:
        return None
    inner = raw[1:-1]
    if any(b in _EXPANDING for b in inner) or b'"' in inner or b"'" in inner:
        return None
    if node.type == "string" and any(c.type not in ("string_content", '"') for c in node.children):
        return None
    return b"S|" + inner


def _written_name(name: str) -> str:
    """``f()`` / ``function f`` / ``function f()`` -> ``f``: how a shell function is written in a script."""
    name = name.strip()
    if name.startswith("function "):
        name = name[len("function "):].strip()
    return name[:-2].rstrip() if name.endswith("()") else name


BASH = LanguageSpec(
    name="bash",
    handlers={"function_definition": _function},
    barriers=frozenset({"heredoc_body", "string", "raw_string", "comment"}),
    comment_types=frozenset({"comment"}),
    atomic={"string": _string, "raw_string": _string},
    # `a; b` is `a` + line break + `b` (`;;` in a case arm is another token).
    drop_semicolon=lambda parent, grandparent: True,
    written_name=_written_name,
    # `-F'/'` is one word (`-F/`), `-F '/'` two: the pieces of a word are marked as one, so the space counts.
    block_types=frozenset({"concatenation"}),
    # A here-document's text before its first expansion has no node of its own.
    text_gaps=frozenset({"ERROR", "heredoc_body"}),
)
