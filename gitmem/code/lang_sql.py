"""SQL definitions as symbols (tree-sitter ``sql`` grammar, token fingerprints).

Symbols and kinds: ``table`` (``CREATE TABLE``), ``column`` (each column of a
``CREATE TABLE`` as ``orders.status``, and ``ALTER TABLE orders ADD COLUMN
total ...`` as ``orders.total``), ``view`` (also materialized), ``function``,
``procedure``, ``index`` (named indexes only), ``trigger``, ``type``.

Names: the object's own name without its schema (``public.orders`` is
``orders``, like a Java package: a file rarely holds two schemas' tables of
one name, and a repeat is numbered ``orders#2``); unquoted identifiers are
lower-cased as PostgreSQL folds them (``Orders`` is ``orders``), quoted ones
keep their case without the quotes (``"Orders"`` is ``Orders``). Functions of
one name are told apart by their argument types: ``area(int)``,
``area(float,float)``. Other ``ALTER TABLE`` clauses (``ALTER COLUMN``,
``DROP COLUMN``, constraints) and other statements (``INSERT``, ``GRANT``) are
not symbols: a migration file is anchored by its created objects and added
columns, or as a whole.

Fingerprints: keywords are case-insensitive (``create table`` ==
``CREATE TABLE``), unquoted identifiers too; ``--`` and ``/* */`` comments and
whitespace are left out. A table's fingerprint covers its columns (a changed
column makes ``orders`` and ``orders.status`` stale, not ``orders.id``).
Known limits: the grammar parses PostgreSQL/MySQL/SQLite's common DDL; a
statement it cannot parse is not a symbol (``CREATE PROCEDURE`` is found by
its first line and spans to the next ``;``); a function body in a
dollar-quoted string is one token.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..textsplit import quote_name_part
from .languages import Canon, Def, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node


class AtomicBy(dict[str, Canon]):
    """An ``atomic`` table (``LanguageSpec.atomic``) that also maps every node type passing ``test`` to
    ``canon``: for grammars with one node type per keyword (``keyword_select`` ...)."""

    def __init__(self, table: dict[str, Canon], test: Callable[[str], bool], canon: Canon) -> None:
        super().__init__(table)
        self._test, self._canon = test, canon

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (isinstance(key, str) and self._test(key))

    def __missing__(self, key: str) -> Canon:
        if self._test(key):
            return self._canon
        raise KeyError(key)


def sql_identifier(raw: str) -> str:
    """An SQL identifier as a name: quotes (``"x"``, `` `x` ``, ``[x]``) dropped with case kept, else lower-cased."""
    raw = raw.strip()
    if len(raw) >= 2 and (raw[0], raw[-1]) in (('"', '"'), ("`", "`"), ("[", "]")):
        return raw[1:-1]
    return raw.lower()


def _object_name(node: Node | None, src: bytes) -> str:
    """The last identifier of an ``object_reference`` (schema dropped), or of a bare identifier."""
    if node is None:
        return ""
    if node.type == "identifier":
        return quote_name_part(sql_identifier(text(node, src)))
    idents = [c for c in node.named_children if c.type == "identifier"]
    return quote_name_part(sql_identifier(text(idents[-1], src))) if idents else ""


def _child(node: Node, *types: str) -> Node | None:
    return next((c for c in node.named_children if c.type in types), None)


_KINDS = {"create_table": "table", "create_view": "view", "create_materialized_view": "view",
          "create_function": "function", "create_type": "type", "create_trigger": "trigger"}


def _create(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    ref = _child(node, "object_reference")
    name = _object_name(ref, src)
    if ref is None or not name:
        return None
    kind = _KINDS[node.type]
    if kind == "table":
        cols = _child(node, "column_definitions")
        return [make_def(name, kind, node, node, body=(ref.end_byte, node.end_byte), scope=cols, scope_kind="table")]
    key = ""
    if kind == "function":
        args = _child(node, "function_arguments")
        if args is not None:
            types = []
            for arg in args.named_children:
                named = arg.named_children
                typ = named[1] if len(named) >= 2 and named[0].type == "identifier" else arg
                types.append(" ".join(text(typ, src).lower().split()))
            key = "(" + ",".join(types) + ")"
    return [make_def(name, kind, node, node, body=(ref.end_byte, node.end_byte), key=key)]


def _index(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    ident = _child(node, "identifier")
    name = _object_name(ident, src)
    return [make_def(name, "index", node, node, body=(ident.end_byte, node.end_byte))] if ident and name else []


def _column(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind != "table":
        return []
    ident = _child(node, "identifier")
    if ident is None:
        return []
    return [make_def(quote_name_part(sql_identifier(text(ident, src))), "column", node, node,
                     body=(ident.end_byte, node.end_byte))]


def _alter(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    table = _object_name(_child(node, "object_reference"), src)
    out: list[Def] = []
    for add in node.named_children:
        col = _child(add, "column_definition") if add.type == "add_column" else None
        ident = _child(col, "identifier") if col is not None else None
        if table and col is not None and ident is not None:
            name = f"{table}.{quote_name_part(sql_identifier(text(ident, src)))}"
            out.append(make_def(name, "column", add, add, body=(ident.end_byte, col.end_byte)))
    return out


_PROCEDURE = re.compile(
    rb'\s*create\s+(?:or\s+replace\s+)?procedure\s+((?:[\w$]+|"[^"]+")(?:\s*\.\s*(?:[\w$]+|"[^"]+"))*)', re.I)


def _error(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    """``CREATE PROCEDURE`` (not in the grammar): found by its first line, spanning to the next ``;``."""
    m = _PROCEDURE.match(src, node.start_byte)
    if m is None or parent_kind is not None:
        return None
    last = node
    while last.next_sibling is not None and last.type != ";":
        last = last.next_sibling
    name = quote_name_part(sql_identifier(re.split(r"\s*\.\s*", m.group(1).decode("utf-8", "replace"))[-1]))
    return [make_def(name, "procedure", node, last, body=(m.end(), last.end_byte))]


def _keyword(node: Node, src: bytes) -> bytes | None:
    return src[node.start_byte:node.end_byte].lower()


def _identifier(node: Node, src: bytes) -> bytes | None:
    raw = src[node.start_byte:node.end_byte]
    return raw if raw[:1] in (b'"', b"`", b"[") else raw.lower()


SQL = LanguageSpec(
    name="sql",
    handlers={"create_table": _create, "create_view": _create, "create_materialized_view": _create,
              "create_function": _create, "create_type": _create, "create_trigger": _create,
              "create_index": _index, "column_definition": _column, "alter_table": _alter, "ERROR": _error},
    descend=lambda t: t in ("program", "statement", "transaction", "block", "ERROR"),
    comment_types=frozenset({"comment", "marginalia"}),
    atomic=AtomicBy({"identifier": _identifier}, lambda t: t.startswith("keyword_"), _keyword),
    same_name="key",
)
