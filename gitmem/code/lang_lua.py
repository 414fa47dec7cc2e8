"""Lua symbols (``.lua``): the rules of :data:`LUA`.

Names and kinds (documented in docs/how-it-works.md, "Lua"):

* ``function``: ``function f()``, ``local function f()``, ``function M.f()`` (``M.f``,
  ``a.b.c`` for ``function a.b.c()``), ``M.f = function() end`` and ``local f = function() end``.
* ``method``: ``function M:m()`` is ``M.m`` (the ``:`` only adds ``self``).
* A function nested in a function is ``outer.inner``; functions in table constructors
  (``{ f = function() end }``) and passed as arguments are not symbols. A name defined twice is
  ``f``, ``f#2`` ... in source order.
* Written forms accepted on input: ``M:m`` for ``M.m``.
* ``--`` and ``--[[ ]]`` comments are not fingerprinted; a ``;`` is formatting; ``'a'`` == ``"a"``
  when neither holds a ``\\`` escape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .languages import Def, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node


def _dotted(node: Node | None, src: bytes) -> tuple[str, bool]:
    """(``M.f``, is a method) for a function name node (``M.f``, ``M:m``, ``f``); ("", False) otherwise."""
    if node is None:
        return "", False
    if node.type == "identifier":
        return text(node, src), False
    if node.type in ("dot_index_expression", "method_index_expression"):
        table, _ = _dotted(node.child_by_field_name("table"), src)
        field = node.child_by_field_name("field") or node.child_by_field_name("method")
        if table and field is not None:
            return f"{table}.{text(field, src)}", node.type == "method_index_expression"
    return "", False


def _function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name, method = _dotted(node.child_by_field_name("name"), src)
    if not name:
        return None
    body = node.child_by_field_name("body")
    first = node.parent if node.parent is not None and node.parent.type == "local_declaration" else node
    return [make_def(name, "method" if method else "function", first, node, body=body, scope=body,
                     scope_kind="function")]


def _assignment(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    """``M.f = function() end`` / ``local f = function() end``: a function under the assigned name."""
    targets = next((c for c in node.named_children if c.type == "variable_list"), None)
    values = next((c for c in node.named_children if c.type == "expression_list"), None)
    if targets is None or values is None:
        return None
    names = targets.children_by_field_name("name")
    exprs = values.children_by_field_name("value")
    out = []
    for target, value in zip(names, exprs, strict=False):
        if value.type != "function_definition":
            continue
        name, _ = _dotted(target, src)
        if name:
            body = value.child_by_field_name("body")
            first = node.parent if node.parent is not None and node.parent.type == "variable_declaration" else node
            out.append(make_def(name, "function", first, node, body=body, scope=body, scope_kind="function"))
    return out or None


def _string(node: Node, src: bytes) -> bytes | None:
    """``'a'`` / ``"a"`` without escapes as one token ``S|a``; long strings and escapes as written."""
    raw = src[node.start_byte:node.end_byte]
    if len(raw) < 2 or raw[:1] not in (b"'", b'"') or raw[-1:] != raw[:1] or b"\\" in raw:
        return None
    return b"S|" + raw[1:-1]


def _written_name(name: str) -> str:
    """``M:greet`` (a method as Lua calls it) -> ``M.greet``."""
    return name.replace(":", ".")


LUA = LanguageSpec(
    name="lua",
    handlers={"function_declaration": _function, "assignment_statement": _assignment},
    barriers=frozenset({"string", "table_constructor", "arguments", "comment"}),
    comment_types=frozenset({"comment"}),
    atomic={"string": _string},
    drop_semicolon=lambda parent, grandparent: True,
    written_name=_written_name,
)
