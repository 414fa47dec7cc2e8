"""Scala symbols (``.scala``, ``.sc``; Scala 2 and 3, braces and indentation): the rules of :data:`SCALA`.

Names and kinds (documented in docs/how-it-works.md, "Scala"):

* ``class`` (also ``case class``), ``object`` (also ``case object`` and ``package object``),
  ``trait``, ``enum`` (Scala 3): nested definitions are ``Outer.Inner``. The package is not part
  of the name (like Java's).
* A companion object (an ``object Foo`` beside a ``class`` / ``trait`` / ``enum Foo`` in the same
  scope) is itself ``Foo$``, the name Scaladoc and the JVM give it, while its members are ``Foo.m``
  beside the class's, as Scala code calls them (``Foo.apply(...)``): they keep their names when the
  class beside the object comes or goes. A member name both define is told apart by parameter types,
  else numbered. An object without a companion is plain ``Foo``.
* ``method`` (a ``def`` in a class, object, trait or enum, abstract or not), ``function`` (a
  top-level ``def`` of Scala 3 or a script, and a ``def`` nested in a ``def``: ``outer.inner``),
  ``constructor`` (an auxiliary constructor ``def this(...)``: ``Foo.this``), ``type`` (``type``
  members and aliases), ``value`` (``val`` / ``var`` / named ``given`` members of a class, object
  or trait and at top level; ``val a, b = 1`` is two values; a pattern ``val (a, b) = ...`` is none).
* Overloads are named by their parameter types like Java's, parameter lists concatenated,
  without spaces or packages: ``Foo.apply(String)``, ``Foo.apply(Int,List[String]*)``,
  ``O.f(=>Int)(String)``; a ``def`` without same-named siblings keeps its plain name.
* Scala 3 extension methods are named by their receiver's base type like Kotlin's extension
  functions, kind ``method``: ``extension (c: Circle) def area`` is ``Circle.area``,
  ``extension [T](xs: List[T]) def second`` is ``List.second``.
* Backquoted names lose their backquotes (``def `type``` is ``type``). Operators are names
  (``Vec.+``).
* Written forms accepted on input: Scaladoc's ``Foo#bar`` (an instance member) and ``Foo$.bar`` (a
  companion object's member) for ``Foo.bar``.
* Annotations are part of the span; ``//``, ``/* */`` and Scaladoc ``/** */`` comments are not
  fingerprinted; a ``;`` is a line break; a Scala 3 end marker (``end Foo``) is part of the span.
  Optional braces are formatting: a class, object, trait or enum body, a block and a ``match`` written
  with braces or with indentation (and an end marker) hash alike (``scalafmt``'s ``removeOptionalBraces``
  rewrites nothing gitmem sees). Known limit: so do ``{ a }; b`` and ``{ a; b }``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .languages import Def, LanguageSpec, _java_type, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node

_TYPES = {"class_definition": "class", "object_definition": "object", "trait_definition": "trait",
          "enum_definition": "enum", "package_object": "object"}
#: Definitions an object shares its name with when it is their companion.
_COMPANIONS = frozenset({"class_definition", "trait_definition", "enum_definition"})
#: ``parent_kind`` of everything directly in a class, object, trait or enum body.
_MEMBER_SCOPE = "class"
#: Suffix of a companion object's name (Scaladoc and the JVM write the object of ``Foo`` as ``Foo$``).
COMPANION_SUFFIX = "$"


def _annotations(node: Node) -> list[Node]:
    return [c for c in node.children if c.type == "annotation"]


def _name(node: Node, src: bytes) -> str:
    return text(node.child_by_field_name("name"), src).strip("`")


def _last(node: Node) -> Node:
    """``node``, or the end marker right after it (``end Foo``, Scala 3), which closes it."""
    nxt = node.next_sibling
    if nxt is not None and nxt.type == "end":
        after = nxt.next_sibling
        return after if after is not None and after.start_point[0] == nxt.start_point[0] else nxt
    return node


#: (source, a parent node's byte range -> the names of the classes, traits and enums among its children) of the last
#: source read: a file of many objects asks once a scope, not once an object (it was quadratic).
_companion_cache: list[tuple[bytes, dict[tuple[int, int], frozenset[str]]]] = []


def _is_companion(node: Node, name: str, src: bytes) -> bool:
    parent = node.parent
    if parent is None:
        return False
    entry = _companion_cache[0] if _companion_cache else None  # one read: another thread may replace it
    if entry is None or entry[0] is not src:
        entry = (src, {})
        _companion_cache[:] = [entry]
    key = (parent.start_byte, parent.end_byte)  # the same in every tree of this source, unlike a node's id
    names = entry[1].get(key)
    if names is None:
        names = entry[1][key] = frozenset(
            _name(c, src) for c in parent.named_children if c.type in _COMPANIONS)
    return name in names


def _type(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _name(node, src)
    if not name:
        return None
    body = node.child_by_field_name("body")
    if node.type == "object_definition" and _is_companion(node, name, src):
        # The object block is `Foo$`; its members are `Foo.m` beside the class's, as Scala calls them
        # (`Foo.apply(...)`), and keep their names when the class beside the object comes or goes.
        own = make_def(name + COMPANION_SUFFIX, "object", node, _last(node), body=body,
                       decorators=_annotations(node))
        scope = make_def(name, "object", node, _last(node), body=body, scope=body, scope_kind=_MEMBER_SCOPE,
                         emit=False)
        return [own, scope]
    return [make_def(name, _TYPES[node.type], node, _last(node), body=body, decorators=_annotations(node),
                     scope=body, scope_kind=_MEMBER_SCOPE)]


def _param_key(node: Node, src: bytes) -> str:
    """``(Int,List[String]*)(String)``: the parameter types of each parameter list, no spaces or packages."""
    out = []
    for params in node.children_by_field_name("parameters"):
        types = [_java_type(p.child_by_field_name("type"), src) for p in params.named_children
                 if p.type == "parameter"]
        out.append("(" + ",".join(types) + ")")
    return "".join(out)


def _def(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _name(node, src)
    if not name:
        return None
    if name == "this":
        kind = "constructor"
    else:
        kind = "method" if parent_kind == _MEMBER_SCOPE else "function"
    body = node.child_by_field_name("body")
    return [make_def(name, kind, node, _last(node), body=body, decorators=_annotations(node),
                     scope=body, key=_param_key(node, src))]


def _extension(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    """Scala 3 ``extension (c: Circle) def f`` / ``extension [T](xs: List[T]) def g``: a naming scope
    (``Circle.f``, ``List.g``, named by the receiver's base type), not itself a symbol."""
    params = node.child_by_field_name("parameters")
    first = next((p for p in params.named_children if p.type == "parameter"), None) if params else None
    base = re.sub(r"\[.*\]", "", _java_type(first.child_by_field_name("type"), src)) if first else ""
    base = base.lstrip("=>").rsplit(".", 1)[-1]
    if not base:
        return None
    return [make_def(base, "extension", node, node, scope=node, scope_kind=_MEMBER_SCOPE, emit=False)]


def _value(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind not in (None, _MEMBER_SCOPE):  # locals are not symbols
        return []
    body = node.child_by_field_name("value") or node.child_by_field_name("body")
    if node.type == "given_definition":
        name = _name(node, src)
        return [make_def(name, "value", node, node, body=body, decorators=_annotations(node))] if name else []
    pattern = node.child_by_field_name("pattern") or node.child_by_field_name("name")
    if pattern is None:
        return []
    idents = [pattern] if pattern.type == "identifier" else \
        [c for c in pattern.named_children if c.type == "identifier"] if pattern.type == "identifiers" else []
    return [make_def(text(i, src).strip("`"), "value", node, node, body=body, decorators=_annotations(node))
            for i in idents]


def _alias(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = text(node.child_by_field_name("name"), src)
    return [make_def(name, "type", node, node)] if name else None


def _written_name(name: str) -> str:
    """``Foo#bar`` (Scaladoc's instance member) and ``Foo$.bar`` (a companion object's) -> ``Foo.bar``;
    a ``#2`` numbering suffix is kept."""
    return re.sub(r"#(?=[A-Za-z_`])", ".", name).replace("$.", ".")


SCALA = LanguageSpec(
    name="scala",
    handlers={
        **{t: _type for t in _TYPES},
        "function_definition": _def, "function_declaration": _def,
        "val_definition": _value, "var_definition": _value, "val_declaration": _value,
        "var_declaration": _value, "given_definition": _value,
        "type_definition": _alias, "extension_definition": _extension,
    },
    barriers=frozenset({"import_declaration", "package_clause", "string", "interpolated_string_expression",
                        "lambda_expression"}),
    comment_types=frozenset({"comment", "block_comment"}),
    lowercase=frozenset({"integer_literal", "floating_point_literal"}),
    # `a; b` is `a` + line break + `b`.
    drop_semicolon=lambda parent, grandparent: True,
    # Optional braces (Scala 3): `object O { ... }` == `object O:` + indented body (+ `end O`),
    # `= { ... }` == an indented block, `x match { case ... }` == indented cases.
    drop_leaves=frozenset({
        *((parent, brace) for parent in ("template_body", "block", "case_block", "enum_body")
          for brace in ("{", "}")),
        ("template_body", ":"), ("enum_body", ":"), ("*", "end"), ("*", "_end_ident"),
    }),
    same_name="key",
    written_name=_written_name,
    # `s"a $x"`, `ivy"org::lib:0.1"`: the grammar gives the literal text between interpolations no node.
    text_gaps=frozenset({"ERROR", "interpolated_string", "string"}),
)
