"""SQL definitions as symbols: an analyzer (``specs.SPEC_ANALYZERS["sql"]``) running token rules on the ``sql`` grammar.

Symbols and kinds: ``table`` (``CREATE TABLE``), ``column`` (each column of a
``CREATE TABLE`` as ``orders.status``, and ``ALTER TABLE orders ADD COLUMN
total ...`` as ``orders.total``), ``view`` (also materialized), ``function``,
``procedure``, ``index`` (named indexes only: ``CREATE INDEX ON t (a)`` names
none, and the name PostgreSQL would choose, ``t_a_idx`` numbered on a clash,
depends on the indexes already in the database, so an unnamed index is not a
symbol), ``trigger``, ``type``.

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

Statements the grammar cannot parse (``CREATE CAST``, ``CREATE AGGREGATE``,
``CREATE PROCEDURE``, a column of an extension's type such as ``vector(3)``,
psql's ``\\echo``) do not hide the rest of the file: each is set aside (see
:func:`analyze`), and one that creates a table, view, function, procedure,
index, trigger or type is still a symbol, found by its first words, with
its columns for a table, hashed by its lexical tokens (tag ``sql1``).
Known limits: a lexically found function's argument types are read without
a grammar (a parameter name is told from a type by the first word being a
known type word); unnamed indexes, ``CREATE OPERATOR`` / ``CAST`` /
``AGGREGATE`` are not symbols; a function body in a dollar-quoted string is
one token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import Symbol
from ..textsplit import name_base, quote_name_part
from .languages import Canon, Def, LanguageSpec, make_def, text

#: Runs a spec's token rules on a normalised source: (symbol table, file fingerprint).
SpecRunner = Callable[[bytes, LanguageSpec], "tuple[dict[str, Symbol], str]"]

if TYPE_CHECKING:
    from tree_sitter import Node

#: Fewest body tokens that identify a lexically found statement under another name (as
#: ``symbols.MIN_SHAPE_BODY_TOKENS``).
MIN_SHAPE_TOKENS = 8


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


def _body(src: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The byte range ``start``..``end`` as a body, or None when nothing but whitespace and ``;`` is there."""
    return (start, end) if src[start:end].strip(b" \t\r\n;") else None


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
        return [make_def(name, kind, node, node, body=_body(src, ref.end_byte, node.end_byte), scope=cols,
                         scope_kind="table")]
    key = ""
    if kind == "function":
        args = _child(node, "function_arguments")
        if args is not None:
            key = _lexical_key(src[args.start_byte + 1:args.end_byte - 1])
    return [make_def(name, kind, node, node, body=_body(src, ref.end_byte, node.end_byte), key=key)]


def _index(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    ident = _child(node, "identifier")
    name = _object_name(ident, src)
    if ident is None or not name:
        return []
    return [make_def(name, "index", node, node, body=_body(src, ident.end_byte, node.end_byte))]


def _column(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind != "table":
        return []
    ident = _column_name(node, src)
    if ident is None:
        return []
    return [make_def(quote_name_part(sql_identifier(text(ident, src))), "column", node, node,
                     body=_body(src, ident.end_byte, node.end_byte))]


def _column_name(col: Node, src: bytes) -> Node | None:
    """The name node of a ``column_definition``: an identifier, or a quoted name the grammar reads as a literal."""
    first = col.named_children[0] if col.named_child_count else None
    if first is not None and (first.type == "identifier" or (
            first.type == "literal" and src[first.start_byte:first.start_byte + 1] in (b'"', b"`"))):
        return first
    return None


def _alter(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    table = _object_name(_child(node, "object_reference"), src)
    out: list[Def] = []
    for add in node.named_children:
        col = _child(add, "column_definition") if add.type == "add_column" else None
        ident = _column_name(col, src) if col is not None else None
        if table and col is not None and ident is not None:
            name = f"{table}.{quote_name_part(sql_identifier(text(ident, src)))}"
            out.append(make_def(name, "column", add, add, body=_body(src, ident.end_byte, col.end_byte)))
    return out


def _keyword(node: Node, src: bytes) -> bytes | None:
    return src[node.start_byte:node.end_byte].lower()


def _identifier(node: Node, src: bytes) -> bytes | None:
    raw = src[node.start_byte:node.end_byte]
    return raw if raw[:1] in (b'"', b"`", b"[") else raw.lower()


SQL = LanguageSpec(
    name="sql",
    handlers={"create_table": _create, "create_view": _create, "create_materialized_view": _create,
              "create_function": _create, "create_type": _create, "create_trigger": _create,
              "create_index": _index, "column_definition": _column, "alter_table": _alter},
    descend=lambda t: t in ("program", "statement", "transaction", "block", "ERROR"),
    comment_types=frozenset({"comment", "marginalia"}),
    atomic=AtomicBy({"identifier": _identifier}, lambda t: t.startswith("keyword_"), _keyword),
    same_name="key",
)


# --------------------------------------------------------------------------- statements the grammar cannot parse

#: One lexical SQL token: a string, quoted identifier, dollar-quoted body, comment, word, or other character.
_LEX = re.compile(rb"""'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\$(\w*)\$.*?(?:\$\1\$|\Z)|--[^\n]*|/\*.*?(?:\*/|\Z)"""
                  rb"""|\\[^\n]*|[\w$]+|[^\s\w]""", re.S)
#: A statement that creates a kind of symbol, found lexically when the grammar cannot parse it.
_CREATE = re.compile(
    rb"(?:\s|--[^\n]*|/\*.*?\*/)*(?P<at>create)\s+(?:or\s+replace\s+)?(?:(?:temp|temporary|unlogged|materialized|unique|recursive)\s+)*"
    rb"(table|view|function|procedure|index|trigger|type)\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?"
    rb'((?:[\w$]+|"[^"]+"|`[^`]+`)(?:\s*\.\s*(?:[\w$]+|"[^"]+"|`[^`]+`))*)\s*(?P<args>\()?', re.I | re.S)
#: First words of multi-word type names: an argument starting with one is all type, no parameter name.
_TYPE_STARTS = frozenset({"double", "character", "char", "varchar", "timestamp", "time", "bit", "interval",
                          "national", "int", "integer", "text", "numeric", "real", "float", "bigint", "smallint",
                          "boolean", "bool", "date", "json", "jsonb", "uuid", "bytea", "decimal", "serial"})
_ARG_MODES = frozenset({"in", "out", "inout", "variadic"})


def _balanced(chunk: bytes, at: int) -> bytes:
    """The text inside the parentheses opening at ``chunk[at]`` (to the end if unbalanced)."""
    depth = 0
    for i in range(at, len(chunk)):
        c = chunk[i:i + 1]
        depth += c == b"("
        depth -= c == b")"
        if depth == 0:
            return chunk[at + 1:i]
    return chunk[at + 1:]


def _lexical_key(args: bytes) -> str:
    """Argument types of a function's argument list, as the tree rules write them: ``(int,double precision[])``."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(args):
        depth += c == 0x28
        depth -= c == 0x29
        if c == 0x2C and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    parts.append(args[start:])
    types = []
    for part in parts:
        words = re.split(r"\s+(?:default\b|=).*", part.decode("utf-8", "replace").strip(), flags=re.I | re.S)[0].split()
        while words and words[0].lower() in _ARG_MODES:
            words = words[1:]
        if len(words) >= 2 and words[0].lower().rstrip("[]") not in _TYPE_STARTS:
            words = words[1:]
        if words:
            types.append(" ".join(words).lower())
    return "(" + ",".join(types) + ")"


#: A typed SQL name: its parts (before any argument list) and the argument list.
_WRITTEN_RE = re.compile(r"\A(?P<head>[^(]*)(?P<args>\(.*\))?\s*\Z", re.S)


def written_name(name: str) -> str:
    """A typed SQL name -> gitmem's: unquoted identifiers lower-cased as PostgreSQL folds them
    (``L2_Distance`` is ``l2_distance``), an argument list written as the rules write it
    (``l2_distance(vector, vector)`` / ``(a vector, b vector)`` -> ``l2_distance(vector,vector)``).
    Quoted identifiers and gitmem's own quoted parts (``(v1.2)``) keep their case."""
    m = _WRITTEN_RE.match(name.strip())
    if m is None or name.strip().startswith("("):
        return name
    parts = [p.strip() for p in re.findall(r'"[^"]*"|`[^`]*`|\[[^\]]*\]|\([^()]*\)|[^."`\[(]+', m.group("head"))]
    head = ".".join(p if p.startswith("(") else quote_name_part(sql_identifier(p)) for p in parts if p)
    args = m.group("args")
    return head + (_lexical_key(args[1:-1].encode()) if args else "")


def split_statements(src: bytes) -> list[tuple[int, int]]:
    """Byte ranges of the statements of ``src``: each up to and including its ``;`` (outside strings,
    quoted names, dollar quotes and comments), a psql meta-command line (``\\echo``) on its own."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _LEX.finditer(src):
        tok = m.group(0)
        if tok == b";" or tok[:1] == b"\\":
            out.append((start, m.end()))
            start = m.end()
    if src[start:].strip():
        out.append((start, len(src)))
    return out


def _lexical(chunk: bytes) -> list[bytes]:
    """Canonical tokens of a statement read lexically: comments out, unquoted words lower-cased."""
    toks = []
    for m in _LEX.finditer(chunk):
        tok = m.group(0)
        if tok.startswith((b"--", b"/*")):
            continue
        toks.append(tok if tok[:1] in (b"'", b'"', b"`", b"$") and not tok[1:2].isalnum() else tok.lower())
    return toks


def _digest(tokens: list[bytes]) -> str:
    return "sql1:" + hashlib.blake2b(b"".join(b"%d:" % len(t) + t for t in tokens), digest_size=16).hexdigest()


_LEXICAL_KINDS = {b"table": "table", b"view": "view", b"function": "function", b"procedure": "procedure",
                  b"index": "index", b"trigger": "trigger", b"type": "type"}


def analyze(src: bytes, analyze_with_spec: SpecRunner) -> tuple[dict[str, Symbol], str]:
    """SQL symbols of normalised ``src`` (see the module docstring).

    ``analyze_with_spec`` runs a spec's token rules on a source (``symbols.analyze_with_spec``,
    passed in by ``symbols``: this module cannot import it, ``symbols`` imports it through ``specs``).

    The tree-sitter grammar gives up on statements it does not know (``CREATE CAST``,
    ``CREATE AGGREGATE``, psql's ``\\echo``) and often on everything after them; so when the whole
    file does not parse, each statement is parsed on its own, and the ones that fail are blanked
    (offsets and lines kept) before the token rules run. A blanked ``CREATE TABLE / VIEW /
    FUNCTION / PROCEDURE / INDEX / TRIGGER / TYPE`` is still a symbol, found lexically, its
    fingerprint (``sql1:``) over its lexical tokens (comments out, unquoted words lower-cased).
    The file fingerprint covers the blanked statements' lexical tokens too.
    """
    from tree_sitter_language_pack import get_parser

    parser = get_parser("sql")
    root = parser.parse(src).root_node
    if not root.has_error:
        return analyze_with_spec(src, SQL)
    clean_until = _first_error(root)  # statements ending before the first error parsed well
    masked = bytearray(src)
    blanked: list[tuple[int, int]] = []
    for a, b in split_statements(src):
        chunk = src[a:b]
        if b > clean_until and _lexical(chunk) and parser.parse(chunk).root_node.has_error:
            masked[a:b] = re.sub(rb"[^\n]", b" ", chunk)
            blanked.append((a, b))
    table, file_fp = analyze_with_spec(bytes(masked), SQL)
    if not blanked:
        return table, file_fp
    out = dict(table)
    lexical: list[bytes] = []
    keys: dict[str, list[tuple[int, str]]] = defaultdict(list)  # function name -> (start line, argument types)
    for a, b in blanked:
        chunk = src[a:b]
        toks = _lexical(chunk)
        lexical.extend(toks)
        m = _CREATE.match(chunk)
        if m is None:
            continue
        lead = m.start("at")
        kind = _LEXICAL_KINDS[m.group(2).lower()]
        base = quote_name_part(sql_identifier(re.split(r"\s*\.\s*", m.group(3).decode("utf-8", "replace"))[-1]))
        if kind == "index" and base == "on":
            continue  # an unnamed index (``CREATE INDEX ON t ...``: ON is reserved, never a name): not a symbol
        if kind == "function" and m.group("args"):
            keys[base].append((src.count(b"\n", 0, a + lead) + 1, _lexical_key(_balanced(chunk, m.start("args")))))
        name, n = base, 1
        while name in out:
            n += 1
            name = f"{base}#{n}"
        body = _lexical(chunk[m.end():])
        first = src.count(b"\n", 0, a + lead) + 1
        out[name] = Symbol(
            name=name, kind=kind, start_line=first,
            end_line=max(first, src.count(b"\n", 0, a + len(chunk.rstrip())) + 1),
            fingerprint=_digest(toks), signature_fp=_digest(toks[:len(toks) - len(body)]),
            body_fp=_digest(body) if body else "", shape_fp=_digest(body) if len(body) >= MIN_SHAPE_TOKENS else "",
        )
        if kind == "table" and m.group("args"):
            _lexical_columns(out, name, src, a + m.start("args"))
    _name_overloads(out, keys, src)
    ordered = sorted(out.items(), key=lambda item: item[1].start_line)
    return dict(ordered), _digest([file_fp.encode(), *lexical])


def _first_error(root: Node) -> int:
    """Byte offset where the first ERROR or MISSING node of the tree starts."""
    node = root
    while True:
        bad = next((c for c in node.children if c.has_error or c.is_error or c.is_missing), None)
        if bad is None or bad.is_error or bad.is_missing:
            return bad.start_byte if bad is not None else node.start_byte
        node = bad


def _name_overloads(table: dict[str, Symbol], keys: dict[str, list[tuple[int, str]]], src: bytes) -> None:
    """Functions of one name found partly by the grammar and partly lexically: all named by argument types
    (``area(int)``, ``area(int,int)``) when those tell them apart, as the grammar's own rule does."""
    for base, found in keys.items():
        members = [n for n, s in table.items() if s.kind == "function" and name_base(n) == base]
        if len(members) < 2:
            continue
        lines = dict(found)
        for n in members:
            if n == base or n.startswith(base + "#"):
                at = table[n].start_line
                if at not in lines:
                    m = _CREATE.match(src, _line_start(src, at))
                    if m is not None and m.group("args"):
                        lines[at] = _lexical_key(_balanced(src, m.start("args")))
        named = {n: base + lines[table[n].start_line] if n == base or n.startswith(base + "#") else n
                 for n in members if table[n].start_line in lines or "(" in n}
        if len(named) == len(members) and len(set(named.values())) == len(members):
            for old, new in named.items():
                if old != new:
                    table[new] = dataclasses.replace(table.pop(old), name=new)


_LEADING = re.compile(rb"(?:\s|--[^\n]*|/\*.*?\*/)*", re.S)
#: First words of a table element that is a constraint, not a column.
_CONSTRAINT_WORDS = frozenset({"constraint", "primary", "foreign", "unique", "check", "exclude", "like", "index",
                               "key", "fulltext", "spatial", "period"})


def _lexical_columns(out: dict[str, Symbol], table_name: str, src: bytes, at: int) -> None:
    """The columns of a table found lexically (``src[at]`` is its ``(``): ``table.column`` symbols."""
    inner = _balanced(src, at)
    start, depth = at + 1, 0
    pieces: list[tuple[int, int]] = []
    for m in _LEX.finditer(inner):
        tok = m.group(0)
        depth += tok == b"("
        depth -= tok == b")"
        if tok == b"," and depth == 0:
            pieces.append((start, at + 1 + m.start()))
            start = at + 1 + m.end()
    pieces.append((start, at + 1 + len(inner)))
    for a, b in pieces:
        toks = _lexical(src[a:b])
        if not toks or toks[0].decode("utf-8", "replace") in _CONSTRAINT_WORDS:
            continue
        col = quote_name_part(sql_identifier(toks[0].decode("utf-8", "replace")))
        skip = _LEADING.match(src, a)  # always matches (possibly empty)
        lead = skip.end() - a if skip is not None else 0
        first = src.count(b"\n", 0, a + lead) + 1
        out[f"{table_name}.{col}"] = Symbol(
            name=f"{table_name}.{col}", kind="column", start_line=first,
            end_line=max(first, src.count(b"\n", 0, a + len(src[a:b].rstrip())) + 1),
            fingerprint=_digest(toks), signature_fp=_digest(toks[:1]), body_fp=_digest(toks[1:]) if toks[1:] else "",
            shape_fp=_digest(toks[1:]) if len(toks) > MIN_SHAPE_TOKENS else "",
        )


def _line_start(src: bytes, line: int) -> int:
    """Byte offset of 1-based ``line``."""
    at = 0
    for _ in range(line - 1):
        at = src.index(b"\n", at) + 1
    return at
