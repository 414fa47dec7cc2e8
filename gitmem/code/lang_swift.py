"""Swift symbols (``.swift``): the tree-sitter rules of :data:`SWIFT`.

Names and kinds (documented in docs/how-it-works.md, "Swift"):

* ``class`` (also ``actor``), ``struct``, ``enum``, ``protocol``: nested types are ``Outer.Inner``.
* ``method`` (a ``func`` in a type, an extension or a protocol), ``function`` (a top-level ``func``;
  a ``func`` nested in a function is ``outer.inner``), ``constructor`` (``Type.init``),
  ``destructor`` (``Type.deinit``), ``subscript`` (``Type.subscript``), ``property`` (stored and
  computed ``var`` / ``let`` of a type or at top level; ``let a = 1, b = 2`` is two properties),
  ``type`` (``typealias``, ``associatedtype``). Operators are named by their symbol (``Vec.+``);
  an operator containing ``.`` (``...``, ``..<``) is not a symbol (a dot nests names).
* Members of ``extension Foo { ... }`` are ``Foo.member``, as if written in ``Foo``; a generic
  constraint (``extension Array where Element == Int``) is not part of the name (``Array.sum``).
  The extension block itself is a symbol of kind ``extension`` named after the type it extends:
  ``Foo`` when the file declares no type ``Foo`` and this is its first extension, otherwise
  numbered in source order after the declaration: ``Foo#2``, ``Foo#3`` ...
* Several definitions of one name (overloads) are named by their argument labels as Swift people
  write them: ``Foo.move(to:by:)``, ``Foo.init(from:)``, ``Foo.f(_:)``, ``Foo.f()``; overloads in one
  body with the same labels add their parameter types the way DocC links tell them apart:
  ``Foo.f(_:)-(Int)``, ``Foo.f(_:)-(String)`` (no spaces or module prefixes, ``@escaping`` dropped).
  Subscripts likewise (``Foo.subscript(_:)-(Int)``; their arguments are unlabelled unless given an
  external name).
  When that does not tell them apart either (generic constraints, return types, or one in the type
  and one in an extension) the definitions of that name are numbered ``#2``, ``#3`` ... in source
  order. A name written with labels (``Foo.move(to:by:)``) is accepted on input for a
  function that is not overloaded.
* Attributes (``@objc``, ``@discardableResult``) are part of the span; ``//``, ``/* */`` and ``///``
  doc comments are not fingerprinted; a ``;`` is a line break.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .languages import Def, LanguageSpec, make_def, recover_error, text

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

_TYPE_KINDS = {"class": "class", "actor": "class", "struct": "struct", "enum": "enum", "extension": "extension"}
#: ``parent_kind`` of everything directly in a type, an extension or a protocol body.
_MEMBER_SCOPE = "class"
_FUNCTIONS = ("function_declaration", "protocol_function_declaration")
_TYPE_NODES = ("class_declaration", "protocol_declaration")
_LABELS_RE = re.compile(r"\((?:[A-Za-z_]\w*:)*\)\Z")


def _attributes(node: Node) -> list[Node]:
    mods = next((c for c in node.children if c.type == "modifiers"), None)
    return [] if mods is None else [c for c in mods.children if c.type == "attribute"]


def _declaration_kind(node: Node) -> str:
    if node.type == "protocol_declaration":
        return "protocol"
    word = next((c.type for c in node.children if c.type in _TYPE_KINDS), "class")
    return _TYPE_KINDS[word]


def _type_name(node: Node | None, src: bytes) -> str:
    """``Foo.Bar`` for a (possibly qualified, possibly generic) type name node; generic arguments dropped."""
    return re.sub(r"<.*>", "", "".join(text(node, src).split()))


def _extension_labels(root: Node, src: bytes) -> dict[int, str]:
    """Start byte of each extension -> the name of the extension block itself (see the module docstring)."""
    declared: set[str] = set()
    extensions: list[tuple[int, str]] = []
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        for child in node.named_children:
            if child.type not in _TYPE_NODES:
                continue
            name = _type_name(child.child_by_field_name("name"), src)
            if not name:
                continue
            if _declaration_kind(child) == "extension":
                extensions.append((child.start_byte, name))
                qualified = name
            else:
                qualified = prefix + name
                declared.add(qualified)
            body = child.child_by_field_name("body")
            if body is not None:
                stack.append((body, qualified + "."))
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for start, name in sorted(extensions):
        n = seen[name] = seen.get(name, 1 if name in declared else 0) + 1
        out[start] = name if n == 1 else f"{name}#{n}"
    return out


#: The last source's extension names (the source object itself is the key: one analysis passes one object).
_ext_cache: list[tuple[bytes, dict[int, str]]] = []


def _extension_label(node: Node, src: bytes) -> str:
    """The extension block's own name, from an index of the whole file built once per source."""
    entry = _ext_cache[0] if _ext_cache else None  # one read: another thread may replace it
    if entry is None or entry[0] is not src:
        root = node
        while root.parent is not None:
            root = root.parent
        entry = (src, _extension_labels(root, src))
        _ext_cache[:] = [entry]
    return entry[1].get(node.start_byte, "")


def _type(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _type_name(node.child_by_field_name("name"), src)
    if not name or (node.type != "class_declaration" and node.type != "protocol_declaration"):
        return None
    kind = _declaration_kind(node)
    body = node.child_by_field_name("body")
    attrs = _attributes(node)
    if kind != "extension":
        return [make_def(name, kind, node, node, body=body, decorators=attrs, scope=body, scope_kind=_MEMBER_SCOPE)]
    label = _extension_label(node, src) or name
    # The block itself is a symbol of its own, without nesting ...
    own = make_def(label, kind, node, node, body=body, decorators=attrs)
    # ... and its members are named under the extended type (a naming scope that is not a symbol).
    scope = make_def(name, kind, node, node, body=body, scope=body, scope_kind=_MEMBER_SCOPE, emit=False)
    return [own, scope]


def _labels(node: Node, src: bytes, *, subscript: bool = False) -> str:
    """``(to:by:)``: the argument labels of a function, initializer or subscript as Swift writes them
    (``_`` for an unlabelled argument; a subscript's arguments are unlabelled unless given an external name)."""
    out = []
    for p in node.children:
        if p.type != "parameter":
            continue
        external = p.child_by_field_name("external_name")
        if external is not None:
            out.append(text(external, src))
        elif subscript:
            out.append("_")
        else:
            out.append(text(p.child_by_field_name("name"), src) or "_")
    return "(" + "".join(f"{label}:" for label in out) + ")"


def _types(node: Node, src: bytes) -> str:
    """``(Data,URL)``: the parameter types of a function, without spaces, module prefixes or
    ``@escaping``-style attributes (``inout`` kept)."""
    out = []
    for p in node.children:
        if p.type == "parameter":
            typed = [c for i, c in enumerate(p.children) if p.field_name_for_child(i) == "name"
                     and c.type != "simple_identifier"]
            raw = "".join(text(typed[0], src).split()) if typed else ""
            out.append(re.sub(r"@\w+", "", re.sub(r"\b(?:\w+\.)+(?=[A-Z]\w*)", "", raw)))
    return "(" + ",".join(out) + ")"


#: The last source's label counts per body (keyed by the body's byte span: the same in any parse of it).
_label_cache: list[tuple[bytes, dict[tuple[int, int], dict[tuple[str, str], int]]]] = []


def _same_labels(node: Node, label: str, labels: str, src: bytes) -> int:
    """How many functions in ``node``'s parent share its name and argument labels (itself included)."""
    parent = node.parent
    if parent is None:
        return 1
    entry = _label_cache[0] if _label_cache else None  # one read: another thread may replace it
    if entry is None or entry[0] is not src:
        entry = (src, {})
        _label_cache[:] = [entry]
    span = (parent.start_byte, parent.end_byte)
    counts = entry[1].get(span)
    if counts is None:
        counts = entry[1][span] = {}
        for sib in parent.named_children:
            if sib.type in _FUNCTIONS:
                key = (text(sib.child_by_field_name("name"), src).strip("`"), _labels(sib, src))
            elif sib.type == "init_declaration":
                key = ("init", _labels(sib, src))
            elif sib.type == "subscript_declaration":
                key = ("subscript", _labels(sib, src, subscript=True))
            else:
                continue
            counts[key] = counts.get(key, 0) + 1
    return counts.get((label, labels), 1)


def _function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    body = node.child_by_field_name("body")
    if node.type == "init_declaration":
        label, kind = "init", "constructor"
    elif node.type == "deinit_declaration":
        label, kind = "deinit", "destructor"
    elif node.type == "subscript_declaration":
        label, kind = "subscript", "subscript"
        body = next((c for c in node.children if c.type == "computed_property"), None)
    else:
        name = node.child_by_field_name("name")
        label = text(name, src).strip("`")
        if not label or "." in label:
            return [] if label else None
        kind = "method" if parent_kind == _MEMBER_SCOPE else "function"
    key = "" if node.type == "deinit_declaration" else _labels(node, src, subscript=kind == "subscript")
    if key and _same_labels(node, label, key, src) > 1:
        key += "-" + _types(node, src)  # DocC's disambiguation by type signature: f(_:)-(Int)
    return [make_def(label, kind, node, node, body=body, decorators=_attributes(node),
                     scope=body if kind != "subscript" else None, key=key)]


def _property(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind not in (None, _MEMBER_SCOPE):  # locals are not symbols
        return []
    body = (node.child_by_field_name("computed_value") or node.child_by_field_name("value")
            or next((c for c in node.children if c.type == "protocol_property_requirements"), None))
    out = []
    for pattern in node.children_by_field_name("name"):
        ident = pattern.child_by_field_name("bound_identifier")
        if ident is not None:
            out.append(make_def(text(ident, src).strip("`"), "property", node, node, body=body,
                                decorators=_attributes(node)))
    return out


def _alias(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name") or next(
        (c for c in node.named_children if c.type in ("type_identifier", "simple_identifier")), None)
    return None if name is None else [make_def(text(name, src), "type", node, node)]


def _written_name(name: str) -> str:
    """``Foo.move(to:by:)`` -> ``Foo.move``: labels written for a function that is not overloaded."""
    return _LABELS_RE.sub("", name) if _LABELS_RE.search(name) else name


_ERROR_HEADS = {"class": "class", "actor": "class", "struct": "struct", "enum": "enum", "extension": "extension",
                "protocol": "protocol"}


def _error(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    """Types and functions that tree-sitter-swift could read only as an ``ERROR`` keep their nesting
    (``Foo.test`` stays ``Foo.test``, not a top-level ``test``): see ``languages.recover_error``."""
    return recover_error(node, src, parent_kind, types=_ERROR_HEADS, functions=frozenset({"func"}),
                         names=frozenset({"simple_identifier", "type_identifier", "user_type"}),
                         prefixes=frozenset({"modifiers", "attribute"}), member_scope=_MEMBER_SCOPE)


#: A compiler-directive line: ``#if X``, ``#elseif X``, ``#else``, ``#endif``.
_DIRECTIVE_RE = re.compile(rb"^[ \t]*#(?:if|elseif|else|endif)\b[^\n]*", re.M)


def _error_bytes(root: Node) -> int:
    """Bytes of the source under ``ERROR`` nodes (outermost ones)."""
    total, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            total += node.end_byte - node.start_byte
        elif node.has_error:
            stack.extend(node.children)
    return total


def _repair(src: bytes, root: Node) -> tuple[bytes, Tree] | None:
    """The source to read instead of ``src``, whose parse ``root`` has an error, and its tree; or None.

    tree-sitter-swift reads ``#if`` / ``#else`` / ``#endif`` in statements and at top level but not between
    the members of a type, where one turns the whole type into an ``ERROR`` and its methods into top-level
    functions. Then the directive lines become spaces (same length, same lines: every branch's members are
    read, as for C's ``#if``) when that leaves less of the file unread. Their conditions are then not
    fingerprinted (known limit); a file that parses is never changed."""
    if b"#if" not in src:
        return None
    from tree_sitter_language_pack import get_parser  # lazily: this module is imported on light paths

    blanked = _DIRECTIVE_RE.sub(lambda m: b" " * len(m.group(0)), src)
    tree = get_parser("swift").parse(blanked)
    return (blanked, tree) if _error_bytes(tree.root_node) < _error_bytes(root) else None


SWIFT = LanguageSpec(
    name="swift",
    handlers={
        "class_declaration": _type, "protocol_declaration": _type,
        **{t: _function for t in (*_FUNCTIONS, "init_declaration", "deinit_declaration", "subscript_declaration")},
        "property_declaration": _property, "protocol_property_declaration": _property,
        "typealias_declaration": _alias, "associatedtype_declaration": _alias, "ERROR": _error,
    },
    barriers=frozenset({"import_declaration", "line_string_literal", "multi_line_string_literal",
                        "raw_string_literal", "lambda_literal"}),
    comment_types=frozenset({"comment", "multiline_comment"}),
    lowercase=frozenset({"hex_literal"}),
    # `;` only separates statements on one line: it is a line break.
    drop_semicolon=lambda parent, grandparent: True,
    same_name="key",
    written_name=_written_name,
    # `#error("...")` / `#warning("...")`: the message has no node of its own.
    text_gaps=frozenset({"ERROR", "diagnostic"}),
    repair=_repair,
)
