"""Symbol tables and fingerprints for one blob, cached by content.

Owns: parsing a blob with tree-sitter, finding its symbols through the rules in
``gitmem.code.languages``, qualifying their names, hashing their tokens, and
the two caches (an in-process LRU and an optional on-disk JSON cache). Imports
tree-sitter; must not import the index, embeddings or any LLM client.

Canonical token form (fingerprint tag ``ts1``)
----------------------------------------------
A fingerprint is ``"ts1:" + blake2b(digest_size=16).hexdigest()`` over the
leaf tokens of a byte range of the syntax tree, each token encoded as
``b"<len>:" + token`` (so no separator can be forged by a token), with:

* comments, Python docstrings (first string statement of a module, class or
  function body), whitespace and line endings (CRLF == LF; a UTF-8 BOM is
  ignored) left out;
* string literals as one token with their quote style normalised (Python and
  JS/TS: ``'a'`` == ``"a"``; Python prefixes case-folded, ``u`` dropped), number
  literals lower-cased (``0XFF`` == ``0xff``), JSX text whitespace squashed;
* formatting tokens left out: a trailing comma before a closing bracket (but
  not the comma of a one-element tuple ``(1,)``), statement-terminating ``;``
  in Python, JS/TS and Go, the parentheses of a whole ``return (...)`` /
  assignment-value expression (formatters add them when splitting lines), and
  JS ``x => 1`` hashes as ``(x) => 1``;
* Python blocks as marker tokens, since indentation is structure there
  (moving a statement out of an ``if`` changes the fingerprint); likewise
  a Bash word made of pieces (``-F'/'``) is marked as one word;
* text the grammar gives no node of its own (``LanguageSpec.text_gaps``:
  Scala's interpolated strings, a here-document, Kotlin's ``String?``, what
  an ``ERROR`` node skipped) as tokens, one per stretch between children.

``Symbol.fingerprint`` hashes the whole span (decorators included),
``body_fp`` the body, ``decorators_fp`` the decorators / annotations /
attributes ("" if none) and ``signature_fp`` everything else in the span (name,
parameters, return type, modifiers, ``export``, TypeScript overload
signatures). Symbols without a body node (abstract / interface / trait method
signatures, TS overload-only declarations, Rust ``mod m;``) have ``body_fp ==
""``. Type-like symbols use their definition as body (the struct's field list,
the alias's right-hand side, the interface body), so ``signature_fp`` is the
``type X`` / ``interface I<T> extends J`` part.

**Several definitions of one name** (``name_groups``): a symbol holding
several definitions (Python overloads and alternatives, a TypeScript function
with overload signatures) hashes the overload signatures as a *set* (sorted
digests: reordering them changes nothing) and its other definitions in source
order; ``fingerprint`` covers all of them, ``body_fp`` / ``decorators_fp`` the
bodies / decorators of the non-stub definitions, ``signature_fp`` the rest
(so an edited stub is a signature change). A symbol of one plain definition
hashes exactly as before. ``Symbol.parts`` keeps each definition's own
fingerprint and ``Symbol.aliases`` the names extractor ``ts1.2`` gave them
(``f#3``, ``Parser.parse#2``), so anchors recorded before resolve (``lookup``).

**Renames:** ``shape_fp`` hashes the whole span without the symbol's own name
outside its body, ``shape_self_fp`` (only for a body that names the symbol:
recursion) with every token equal to the own name replaced by one marker, in
the body too; so a symbol whose only change is its name keeps the one or the
other (a method delegating to another object's method of its name keeps
``shape_fp``, a recursive function renamed with its calls ``shape_self_fp``).
``anchors`` follows a rename to the unique symbol of the same kind with an
equal non-empty ``shape_fp`` or ``shape_self_fp`` (``same_shape``). ``body_fp`` never contains the symbol's own name
unless the body uses it (recursion), so it finds a plainly renamed symbol too
(``find_by_fingerprint(table, fp, field="body_fp")``).

Versions: ``FINGERPRINT_TAG`` changes when the canonical token form changes
(every stored fingerprint then differs); ``EXTRACTOR_VERSION`` (which starts
with the tag) changes whenever any output changes (names, kinds, spans), and
keys the caches.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .. import infra, lfs
from ..model import Symbol
from ..textsplit import name_base, name_leaf
from .languages import Def, LanguageSpec, language_for_path, redundant_parens
from .specs import ANALYZERS, DIALECT_ANALYZERS, DIALECTS, SPEC_ANALYZERS, SPECS

if TYPE_CHECKING:
    from tree_sitter import Node, Parser
    from tree_sitter_language_pack import SupportedLanguage

#: Algorithm tag of fingerprints: bump when the canonical token form changes.
FINGERPRINT_TAG = "ts1"
#: Version of everything ``extract_symbols`` outputs; keys both caches.
#: ``.5``, ``.6``: issue 22's languages fingerprint text no node carries (Scala interpolated strings, Kotlin ``String?``
#: ...) and keep names through parse errors (Swift, Kotlin); ``Symbol.shape_self_fp`` (a renamed recursive
#: function): tables cached before would be wrong.
EXTRACTOR_VERSION = f"{FINGERPRINT_TAG}.6"
#: Tag of the fallback file fingerprint for non-code and unknown files.
RAW_TAG = "raw1"

#: Symbol tables kept in the in-process LRU (a table is small: ~100 bytes a symbol).
LRU_SIZE = 512
#: Bytes looked at for NUL when deciding that a blob is binary (git's heuristic).
BINARY_SNIFF_BYTES = 8192
#: Largest blob (bytes) of a language issue 22 added (C, C++, Swift, Scala, Bash, Lua, SQL, Markdown,
#: Dockerfile, HCL, Make) analysed for symbols. Measured (2-core machine, a file of nothing but definitions,
#: the worst case): 1 MiB of C, SQL or Make targets took 7-9 s, and the git hooks stop at 10 s; hand-written
#: code reads ~1.3 s a MB (cJSON.c x12). 512 KiB keeps hand-written files (the largest of fmt, cJSON and
#: tinyxml2 are under 250 KB) and leaves generated ones (amalgamations, dumps) to whole-file anchors (``raw1``).
MAX_SOURCE_BYTES = 512 << 10
#: The formats with another cap: JSON is read by the ``json`` module (8 MiB: ~2.5 s, so a 5 MB
#: ``package-lock.json`` keeps its capped keys); YAML and TOML values are built node by node (~3.5 s a MB).
MAX_FORMAT_BYTES = {"json": 8 << 20, "yaml": 1 << 20, "toml": 1 << 20}
#: Languages analysed whatever their size, as before the caps existed: an anchor on a symbol of a large
#: file of theirs made by an earlier gitmem keeps resolving.
UNCAPPED_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust", "java",
                                "ruby", "php", "csharp", "kotlin"})
#: Minimum difflib ratio for ``closest_names`` (difflib's own default).
CLOSE_CUTOFF = 0.6

_LEN_PREFIX = [b"%d:" % n for n in range(256)]
_TOKEN_CLOSERS = frozenset({b"1:)", b"1:]", b"1:}", b"1:>"})
_TOKEN_OPENERS = frozenset({b"1:(", b"1:[", b"1:{", b"1:<", b"1:,"})
_BLOCK_OPEN = "#{"   # marker tokens (str until encoded): never of the form b"<digits>:..."
_BLOCK_CLOSE = "#}"
# _tokens flags on an ancestor, telling how to treat its children:
_STRIP_PARENS = 1     # a redundant parenthesized_expression: drop its ( and )
_KEEP_COMMA = 2       # a one-element tuple: its comma is not formatting
_DOC_SCOPE = 4        # a module / def body: its first statement may be a docstring
_SEEN_STATEMENT = 8   # ... and that first statement has been seen
_BLOCK = 16           # emit a close marker after the children
_BARE_PARAM = 32      # emit ")" after the children (JS `x => ...`)
_GAPS = 64            # emit the text between the children as tokens (spec.text_gaps)


# --------------------------------------------------------------------------- parsing

_local = threading.local()


def _parser(language: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        from tree_sitter_language_pack import get_parser

        parser = parsers[language] = get_parser(cast("SupportedLanguage", language))  # a name from SPECS
    return parser


def _normalise(source: bytes) -> bytes:
    """CRLF -> LF and no UTF-8 BOM: neither changes a line number."""
    if source.startswith(b"\xef\xbb\xbf"):
        source = source[3:]
    return source.replace(b"\r\n", b"\n") if b"\r" in source else source


def is_binary(source: bytes) -> bool:
    """True when ``source`` has a NUL byte in its first 8 KB (git's heuristic)."""
    return b"\x00" in source[:BINARY_SNIFF_BYTES]


# --------------------------------------------------------------------------- tokens


class _Tokens:
    """The canonical tokens of one tree, in source order.

    ``pos[i]``: twice the start byte of token i (sorted), so that block markers
    can sit between bytes: a block's open marker at ``2*start - 1`` belongs to
    its parent but not to its first statement, its close marker at ``2*end``
    not to its last statement (nor to a range ending with the block: a
    trailing close marker says nothing).
    ``enc[i]``: the encoded token (``b"<len>:<text>"`` or a marker).
    """

    __slots__ = ("pos", "enc")

    def __init__(self) -> None:
        self.pos: list[int] = []
        self.enc: list[bytes] = []

    def index(self, start: int, stop: int) -> tuple[int, int]:
        """Token index range [i, j) of the tokens starting in bytes [start, stop)."""
        return bisect.bisect_left(self.pos, 2 * start), bisect.bisect_left(self.pos, 2 * stop)

    def digest(self, ranges: list[tuple[int, int]]) -> str:
        h = hashlib.blake2b(digest_size=16)
        for i, j in ranges:
            h.update(b"".join(self.enc[i:j]))
        return f"{FINGERPRINT_TAG}:{h.hexdigest()}"


def _is_docstring(node: Node) -> bool:
    if node.type in ("string", "concatenated_string"):
        return True
    return (node.type == "expression_statement" and node.named_child_count == 1
            and node.named_children[0].type in ("string", "concatenated_string"))


def _redundant_operand_parens(node: Node, side: str | None, precedence: dict[str, int]) -> bool:
    """Is ``node`` (a parenthesized_expression operand of a binary_expression) redundant?"""
    inner = node.named_children
    if side not in ("left", "right") or len(inner) != 1 or inner[0].type != "binary_expression":
        return False
    outer_op = node.next_sibling if side == "left" else node.prev_sibling
    inner_op = inner[0].child_by_field_name("operator")
    if outer_op is None or inner_op is None:
        return False
    return redundant_parens(outer_op.type, inner_op.type, side, precedence)


def _gap_token(src: bytes, start: int, stop: int, parent_type: str, pos_append: Callable[[int], None],
               raw_append: Callable[[bytes | str], None]) -> None:
    """Append the text ``src[start:stop]`` between two children of a ``text_gaps`` node as one token:
    as written (a string's text), but in an ``ERROR`` node (code the grammar skipped) whitespace runs are
    one space and a gap of only whitespace is nothing: layout stays formatting there too."""
    gap = src[start:stop]
    if parent_type == "ERROR":
        gap = b" ".join(gap.split())
        if not gap:
            return
    pos_append(2 * start)
    raw_append(gap)


def _tokens(root: Node, spec: LanguageSpec, src: bytes) -> _Tokens:
    """Walk the whole tree once and collect its canonical tokens (see the module docstring)."""
    comments, atomic, lowercase, squash = spec.comment_types, spec.atomic, spec.lowercase, spec.squash_ws
    blocks, tuples, drop_semi = spec.block_types, spec.tuple_types, spec.drop_semicolon
    paren_parents, keep_inner, bare_field = spec.paren_parents, spec.paren_keep_inner, spec.bare_param_field
    doc_parents = ("function_definition", "class_definition") if spec.docstrings else ()
    drop_leaves = spec.drop_leaves
    special_leaves = frozenset({";", ",", "(", ")"}) | lowercase | squash | {leaf for _, leaf in drop_leaves}
    precedence, comma_after_block = spec.precedence, spec.comma_after_block
    drop_empty = spec.drop_empty
    drop_empty_types = {child for _, child in drop_empty}
    text_gaps = spec.text_gaps
    gap_from: list[int] = []      # per open text_gaps ancestor: where its next gap starts

    pos: list[int] = []
    raw: list[bytes | str] = []   # source tokens as bytes, block markers as str
    pos_append, raw_append = pos.append, raw.append
    droppable: list[int] = []     # indices of commas that go if a closing bracket follows

    # One cursor walk. ``types`` / ``flags`` describe the ancestors of the
    # current node (innermost last); flags say how to treat their children.
    types: list[str] = ["", ""]
    flags: list[int] = [0]
    cursor = root.walk()
    while True:
        node = cursor.node
        assert node is not None  # a cursor from walk() is always on a node
        ntype = node.type
        descend = False
        if flags[-1] & _GAPS:  # the parent's text before this child is content
            if node.start_byte > gap_from[-1]:
                _gap_token(src, gap_from[-1], node.start_byte, types[-1], pos_append, raw_append)
            gap_from[-1] = max(gap_from[-1], node.end_byte)
        if ntype in comments:
            pass
        elif node.child_count == 0 and ntype not in atomic:
            start, stop = node.start_byte, node.end_byte
            if stop > start:
                token = src[start:stop]
                if ntype in special_leaves:
                    parent_flags = flags[-1]
                    if drop_leaves and ((types[-1], ntype) in drop_leaves or ("*", ntype) in drop_leaves):
                        token = b""
                    elif ntype == ";":
                        if drop_semi(types[-1], types[-2]):
                            token = b""
                    elif ntype == ",":
                        if comma_after_block and types[-1] in comma_after_block and raw and raw[-1] == b"}":
                            token = b""
                        elif not parent_flags & _KEEP_COMMA:
                            droppable.append(len(raw))
                    elif ntype in lowercase:
                        token = token.lower()
                    elif ntype in squash:
                        token = b" ".join(token.split())
                    elif parent_flags & _STRIP_PARENS:  # ( or ) of a redundant parenthesized_expression
                        token = b""
                if flags[-1] & _DOC_SCOPE:
                    flags[-1] |= _SEEN_STATEMENT
                if token and not token.isspace():
                    if bare_field and types[-1] == "arrow_function" and cursor.field_name == bare_field:
                        pos_append(2 * start)
                        raw_append(b"(")
                        pos_append(2 * start)
                        raw_append(token)
                        pos_append(2 * stop)
                        raw_append(b")")
                    else:
                        pos_append(2 * start)
                        raw_append(token)
        else:
            parent_flags = flags[-1]
            if parent_flags & _DOC_SCOPE and not parent_flags & _SEEN_STATEMENT:
                flags[-1] |= _SEEN_STATEMENT
                if _is_docstring(node):
                    ntype = ""  # left out, subtree and all
            if (ntype in drop_empty_types and (types[-1], ntype) in drop_empty
                    and not node.named_child_count):
                ntype = ""  # empty formatting node (Python `class A():`)
            token = None
            if ntype in atomic:
                token = atomic[ntype](node, src)
            if not ntype:
                pass
            elif token is not None:
                pos_append(2 * node.start_byte)
                raw_append(token)
            elif not node.child_count:  # an atomic type the canonicaliser declined, as written
                if node.end_byte > node.start_byte:
                    pos_append(2 * node.start_byte)
                    raw_append(src[node.start_byte:node.end_byte])
            else:
                descend = True
                node_flags = 0
                if ntype in blocks:
                    node_flags |= _BLOCK
                    pos_append(max(2 * node.start_byte - 1, pos[-1] if pos else 0))
                    raw_append(_BLOCK_OPEN)
                if doc_parents and (ntype == "module" or (ntype == "block" and types[-1] in doc_parents)):
                    node_flags |= _DOC_SCOPE
                if ntype in tuples and sum(1 for c in node.children if c.type == ",") == 1:
                    node_flags |= _KEEP_COMMA
                if ntype == "parenthesized_expression":
                    if types[-1] in paren_parents:
                        inner = node.named_children
                        if len(inner) == 1 and inner[0].type not in keep_inner:
                            node_flags |= _STRIP_PARENS
                    elif precedence and types[-1] == "binary_expression" and _redundant_operand_parens(
                            node, cursor.field_name, precedence):
                        node_flags |= _STRIP_PARENS
                if bare_field and types[-1] == "arrow_function" and cursor.field_name == bare_field:
                    node_flags |= _BARE_PARAM
                    pos_append(2 * node.start_byte)
                    raw_append(b"(")
                if ntype in text_gaps:
                    node_flags |= _GAPS
                    gap_from.append(node.start_byte)
        if descend and cursor.goto_first_child():
            types.append(ntype)
            flags.append(node_flags)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                break
            types.pop()
            done = flags.pop()
            if done & (_BLOCK | _BARE_PARAM | _GAPS):
                parent = cursor.node
                assert parent is not None
                if done & _GAPS:
                    start = gap_from.pop()
                    if parent.end_byte > start:
                        _gap_token(src, start, parent.end_byte, parent.type, pos_append, raw_append)
                if done & _BLOCK:
                    pos_append(2 * parent.end_byte)
                    raw_append(_BLOCK_CLOSE)
                if done & _BARE_PARAM:
                    pos_append(2 * parent.end_byte)
                    raw_append(b")")
        else:
            continue
        break

    prefix = _LEN_PREFIX
    enc = [(prefix[len(t)] + t if len(t) < 256 else b"%d:" % len(t) + t) if isinstance(t, bytes) else t.encode()
           for t in raw]
    drop = [i for i in droppable
            if i + 1 < len(enc) and enc[i + 1] in _TOKEN_CLOSERS and (i == 0 or enc[i - 1] not in _TOKEN_OPENERS)]
    if drop:
        gone = set(drop)
        pos = [p for k, p in enumerate(pos) if k not in gone]
        enc = [e for k, e in enumerate(enc) if k not in gone]
    toks = _Tokens()
    toks.pos, toks.enc = pos, enc
    return toks


# --------------------------------------------------------------------------- definitions


def _definitions(root: Node, spec: LanguageSpec, src: bytes) -> list[tuple[int, Def]]:
    """All definitions in pre-order (source order), each with the index of the definition
    (or naming scope) it is nested in, -1 at top level."""
    handlers, descend, barriers = spec.handlers, spec.descend, spec.barriers
    out: list[tuple[int, Def]] = []
    # Stack entries: (tag, node-or-def, enclosing record, parent kind); tag "s" = search
    # inside a scope node, "n" = classify a node, "d" = record a definition.
    # A root that is all ERROR (a file the grammar cannot read) is classified like any ERROR node.
    stack: list[tuple[str, Any, int, str | None]] = [("n" if root.type == "ERROR" else "s", root, -1, None)]
    while stack:
        tag, obj, parent, parent_kind = stack.pop()
        if tag == "d":
            d: Def = obj
            if d.inline:  # recovered from an ERROR node: its members belong to the enclosing scope
                for m in reversed(d.members):
                    stack.append(("d" if isinstance(m, Def) else "n", m, parent, parent_kind))
                continue
            out.append((parent, d))
            if d.scope is not None:
                stack.append(("s", d.scope, len(out) - 1, d.scope_kind or d.kind))
            for m in reversed(d.members):
                stack.append(("d" if isinstance(m, Def) else "n", m, len(out) - 1, d.scope_kind or d.kind))
            continue
        node: Node = obj
        if tag == "n":
            handler = handlers.get(node.type)
            if handler is not None:
                try:
                    defs = handler(node, src, parent_kind)
                except Exception:  # noqa: BLE001 - a strange (error-recovered) tree: not a definition
                    defs = None
                if defs is not None:
                    for d in reversed(defs):
                        stack.append(("d", d, parent, parent_kind))
                    continue
            if node.type in barriers or not descend(node.type):
                continue
        for child in reversed(node.named_children):
            stack.append(("n", child, parent, parent_kind))
    return out


def _legacy_names(recs: list[tuple[int, Def]]) -> list[str]:
    """The names gitmem gave each definition before several definitions of a name were told apart
    (extractor ``ts1.2``): nesting joined with ``.``, every repeat ``#2``, ``#3`` ... in source order."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for parent, d in recs:
        qualified = (names[parent] + "." if parent >= 0 else "") + d.name
        if d.emit:
            count = seen[qualified] = seen.get(qualified, 0) + 1
            if count > 1:
                qualified = f"{qualified}#{count}"
        names.append(qualified)
    return names


def _names(recs: list[tuple[int, Def]], same_name: str) -> list[str]:
    """The qualified name of each definition (see ``name_groups``)."""
    depth: list[int] = []
    for parent, _ in recs:
        depth.append(depth[parent] + 1 if parent >= 0 else 0)
    names = [""] * len(recs)
    levels: dict[int, list[int]] = {}
    for i, k in enumerate(depth):
        levels.setdefault(k, []).append(i)
    for k in sorted(levels):  # a parent's name is final before its children are named
        buckets: dict[str, list[int]] = {}
        for i in levels[k]:
            parent, d = recs[i]
            base = (names[parent] + "." if parent >= 0 else "") + d.name
            names[i] = base
            if d.emit:
                buckets.setdefault(base, []).append(i)
        for base, members in buckets.items():
            if len(members) == 1 or same_name in ("merge", "join"):
                continue
            keys = [recs[i][1].key for i in members]
            if same_name == "key" and len(set(keys)) == len(keys):
                for i, key in zip(members, keys, strict=True):
                    names[i] = base + key
            else:
                for n, i in enumerate(members[1:], start=2):
                    names[i] = f"{base}#{n}"
    if same_name == "join":  # across nesting levels: a class's declaration and its out-of-line definition
        groups: dict[str, list[int]] = {}
        for i, (_, d) in enumerate(recs):
            if d.emit:
                groups.setdefault(names[i], []).append(i)
        for base, members in groups.items():
            if len({recs[i][1].key for i in members}) > 1:
                for i in members:
                    names[i] = base + recs[i][1].key
    return names


def name_groups(recs: list[tuple[int, Def]], same_name: str) -> dict[str, tuple[list[Def], list[str]]]:
    """Qualified name -> (its definitions in source order, the legacy names they had).

    How several definitions of one qualified name are named depends on the
    language (``LanguageSpec.same_name``):

    * ``merge`` (Python): one symbol holds them all (``@overload`` stubs and
      their implementation, ``if`` / ``else`` and ``try`` / ``except``
      alternatives, property accessors, redefinitions): Python binds the name to
      one of them at run time, and a reader of the name means all of them.
      Names nested in any of them nest under the plain name.
    * ``key`` (Java, Rust): separate implementations, each its own symbol named
      by what tells it apart when that is unique: ``Parser.parse(String)``,
      ``open[cfg(unix)]``; a definition without a key keeps the plain name.
      Without unique keys: as ``number``.
    * ``join`` (C, C++): definitions of one qualified name (at any nesting:
      ``void f();`` in class ``A`` and ``void A::f() {}`` at top level) with
      the same ``Def.key`` are one symbol (declarations are ``Def.stub``s:
      signatures of it); when a name has several keys, each symbol is named
      ``name + key`` (``A.f(int)``, ``A.f(double)``), else the plain name.
      Definitions named inside a keyed definition keep the plain prefix.
    * ``number`` (the others): the first keeps the plain name, the next are
      ``#2``, ``#3`` ... in source order.
    """
    names = _names(recs, same_name)
    legacy = _legacy_names(recs)
    out: dict[str, tuple[list[Def], list[str]]] = {}
    for i, (_, d) in enumerate(recs):
        if d.emit:
            defs, old = out.setdefault(names[i], ([], []))
            defs.append(d)
            old.append(legacy[i])
    return out


def _own_start(d: Def) -> int:
    """Where a definition's own code starts: after the overload signatures folded into it."""
    return max(b for _, b in d.stubs) if d.stubs else d.start_byte


def _ranges_without(whole: tuple[int, int], cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token ranges of ``whole`` minus the token ranges ``cut``."""
    out: list[tuple[int, int]] = []
    at, j = whole
    for a, b in sorted(cut):
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if j > at:
        out.append((at, j))
    return out


def _symbol(name: str, d: Def, toks: _Tokens) -> Symbol:
    i, j = toks.index(d.start_byte, d.end_byte)
    cut: list[tuple[int, int]] = []
    body_fp = ""
    if d.body is not None:
        body = toks.index(*d.body)
        body_fp = toks.digest([body])
        cut.append(body)
    dec_ranges = [toks.index(a, b) for a, b in d.decorators]
    decorators_fp = toks.digest(dec_ranges) if dec_ranges else ""
    cut.extend(dec_ranges)
    shape, shape_self = _shape(name, d, toks, i, j)
    return Symbol(
        name=name, kind=d.kind, start_line=d.start_line, end_line=d.end_line,
        fingerprint=toks.digest([(i, j)]), signature_fp=toks.digest(_ranges_without((i, j), cut)),
        body_fp=body_fp, decorators_fp=decorators_fp, shape_fp=shape, shape_self_fp=shape_self,
    )


def _combine(label: bytes, stubs: list[str], members: list[str]) -> str:
    """One ``ts1:`` fingerprint over overload signatures (a set: their order does not count) and the
    definitions of a name (in source order)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(b"group:" + label)
    for fp in sorted(stubs):
        h.update(b"|s" + fp.encode())
    for fp in members:
        h.update(b"|d" + fp.encode())
    return f"{FINGERPRINT_TAG}:{h.hexdigest()}"


def primary(defs: list[Def]) -> Def:
    """The definition a name really is, of several (source order): the last that is neither an
    ``@overload`` stub nor under ``if TYPE_CHECKING:``, else the last one. The last, because Python
    binds a name to the definition run last (a redefinition, a property's setter, the
    ``else`` / ``except ImportError`` fallback)."""
    real = [d for d in defs if not d.stub and not d.typing_only]
    return (real or defs)[-1]


def _group_symbol(name: str, defs: list[Def], toks: _Tokens, *, span_of_definitions: bool = False) -> Symbol:
    """The symbol of several definitions of one name, or of one with folded overload signatures.

    Overload signatures (Python ``@overload`` stubs, code under ``if TYPE_CHECKING:``,
    TypeScript signatures without a body) count as a set: reordering them
    changes nothing, editing one is a signature change. Every other definition
    counts in source order: its body in ``body_fp``, its decorators in
    ``decorators_fp``, the rest in ``signature_fp``. ``shape_fp`` and ``kind``
    are those of ``primary(defs)``; the span covers them all, or with ``span_of_definitions``
    (``same_name="join"``: C/C++ prototypes and in-class declarations, which may stand thousands of lines
    above the definition) only the definitions that are not signatures, when there are any: an edit near a
    prototype is then not an edit "in" the function, and ``gitmem show`` shows the function.
    """
    main = primary(defs)
    real = [d for d in defs if not d.stub and not d.typing_only] or [main]
    stub_ranges = [r for d in defs for r in d.stubs]
    kept = {id(d) for d in real}  # by identity: comparing Defs field by field made many overloads quadratic
    stub_ranges += [(d.start_byte, d.end_byte) for d in defs if id(d) not in kept]
    stub_fps = [toks.digest([toks.index(a, b)]) for a, b in stub_ranges]
    whole_fps, sig_fps, bodies, decorators = [], [], [], []
    for d in real:
        own = toks.index(_own_start(d), d.end_byte)
        whole_fps.append(toks.digest([own]))
        cut = [toks.index(a, b) for a, b in d.decorators]
        decorators.extend(cut)
        if d.body is not None:
            body = toks.index(*d.body)
            bodies.append(body)
            cut = cut + [body]
        sig_fps.append(toks.digest(_ranges_without(own, cut)))
    i, j = toks.index(_own_start(main), main.end_byte)
    spanned = [d for d in defs if not d.stub and not d.typing_only] if span_of_definitions else []
    spanned = spanned or defs
    shape, shape_self = _shape(name, main, toks, i, j)
    return Symbol(
        name=name, kind=main.kind, start_line=min(d.start_line for d in spanned),
        end_line=max(d.end_line for d in spanned),
        fingerprint=_combine(b"fp", stub_fps, whole_fps), signature_fp=_combine(b"sig", stub_fps, sig_fps),
        body_fp=toks.digest(bodies) if bodies else "", decorators_fp=toks.digest(decorators) if decorators else "",
        shape_fp=shape, shape_self_fp=shape_self,
        parts=tuple(toks.digest([toks.index(d.start_byte, d.end_byte)]) for d in defs),
    )


#: A symbol whose body has fewer code tokens than this gets no ``shape_fp``: a
#: body like ``pass``, ``return None`` or only a docstring occurs in too many
#: places to prove that a symbol found elsewhere is the same code.
MIN_SHAPE_BODY_TOKENS = 8


#: What ``shape_self_fp`` hashes in place of each token that is the symbol's own name (a marker: never of
#: the form ``b"<digits>:..."``, so no source token can forge it).
_OWN_NAME = b"#self"


def _shape(name: str, d: Def, toks: _Tokens, i: int, j: int) -> tuple[str, str]:
    """(``shape_fp``, ``shape_self_fp``) of a symbol's token range [i, j); ("", "") for trivial bodies.

    ``shape_fp`` hashes the span without the tokens equal to the symbol's own name (its last name part)
    outside the body: a plain rename keeps it, and so does a method that calls another object's method of
    its own name (``def close(self): self._sock.close()`` renamed ``shutdown``). ``shape_self_fp`` hashes
    the span with every such token, in the body too, replaced by ``_OWN_NAME``: a recursive function renamed
    with its own calls (``depth`` calling ``depth`` -> ``tree_depth`` calling ``tree_depth``) keeps it; ""
    when the body never names the symbol (``shape_fp`` then says all). "" for both when the symbol has no
    body or fewer than ``MIN_SHAPE_BODY_TOKENS`` body tokens.
    """
    if d.body is None:
        return "", ""
    b0, b1 = toks.index(*d.body)
    if sum(1 for t in toks.enc[b0:b1] if t[:1].isdigit()) < MIN_SHAPE_BODY_TOKENS:
        return "", ""
    own = name_leaf(name).encode("utf-8", "replace")
    own_tok = b"%d:%s" % (len(own), own)
    enc = toks.enc
    h = hashlib.blake2b(digest_size=16)
    for k in range(i, j):
        if k >= b0 or enc[k] != own_tok:  # the name only counts outside the body
            h.update(enc[k])
    shape = f"{FINGERPRINT_TAG}:{h.hexdigest()}"
    if own_tok not in enc[b0:b1]:
        return shape, ""
    h = hashlib.blake2b(digest_size=16)
    for k in range(i, j):
        h.update(_OWN_NAME if enc[k] == own_tok else enc[k])
    return shape, f"{FINGERPRINT_TAG}:{h.hexdigest()}"


def same_shape(a: Symbol, b: Symbol) -> bool:
    """Is ``b`` ``a``'s code under another name (same kind; an equal non-empty ``shape_fp`` or
    ``shape_self_fp``, see ``_shape``)? The rename signal of ``anchors``."""
    if a.kind != b.kind:
        return False
    return bool((a.shape_fp and a.shape_fp == b.shape_fp) or (a.shape_self_fp and a.shape_self_fp == b.shape_self_fp))


def _analyze(source: bytes, language: str) -> tuple[dict[str, Symbol], str]:
    """Parse once; return (symbol table, file fingerprint). Uncached.

    A language of ``specs.ANALYZERS`` is analysed by its own analyzer (given the normalised source),
    one of ``specs.SPEC_ANALYZERS`` by its analyzer given the source and ``analyze_with_spec``; the
    others by their ``specs.SPECS`` rules here (``ts1:``).
    """
    src = _normalise(source)
    analyzer = ANALYZERS.get(language) or DIALECT_ANALYZERS.get(language)
    if analyzer is not None:
        return analyzer(src)
    spec_analyzer = SPEC_ANALYZERS.get(language)
    if spec_analyzer is not None:
        return spec_analyzer(src, analyze_with_spec)
    return analyze_with_spec(src, SPECS[language])


def analyze_with_spec(src: bytes, spec: LanguageSpec) -> tuple[dict[str, Symbol], str]:
    """(symbol table, ``ts1:`` file fingerprint) of normalised ``src`` by ``spec``'s rules. Uncached.

    Applies the spec's ``prepare`` (a same-length rewrite of the source) and ``reparse`` (another
    grammar after a failed parse). Public for analyzers that prepare the source before the token
    rules apply (SQL blanks the statements its grammar cannot parse, keeping every byte offset and line).
    """
    if spec.prepare is not None:
        src = spec.prepare(src)
    tree = _parser(spec.name).parse(src)
    other = spec.reparse(src, tree.root_node) if spec.reparse is not None else None
    if other is not None:
        tree = _parser(other).parse(src)
    if spec.repair is not None and tree.root_node.has_error:
        repaired = spec.repair(src, tree.root_node)
        if repaired is not None:
            src, tree = repaired
    root = tree.root_node
    toks = _tokens(root, spec, src)
    file_fp = toks.digest([(0, len(toks.enc))])
    if not src.strip():
        return {}, file_fp
    symbols: list[tuple[str, Symbol]] = []
    for name, (defs, legacy) in name_groups(_definitions(root, spec, src), spec.same_name).items():
        sym = _symbol(name, defs[0], toks) if len(defs) == 1 and not defs[0].stubs else _group_symbol(
            name, defs, toks, span_of_definitions=spec.same_name == "join")
        aliases = tuple(n for n in legacy if n != name)
        if aliases and spec.same_name != "join":  # (no earlier gitmem named a C/C++ symbol)
            sym = dataclasses.replace(sym, aliases=aliases)
        symbols.append((name, sym))
    symbols.sort(key=lambda item: item[1].start_line)  # stable: parents stay before children
    return dict(symbols), file_fp


def extract_symbols(source: bytes, language: str) -> dict[str, Symbol]:
    """The symbols of ``source`` (bytes, any encoding; UTF-8 expected) in ``language``.

    Uncached. Returns qualified name -> Symbol, ordered by start line (an
    enclosing symbol before the ones it contains); {} for an empty file.
    Several definitions of one qualified name are named by the language's rule
    (``name_groups``: one Python symbol, Java ``Parser.parse(String)``, else
    ``#2``, ``#3`` ... in source order).
    Syntax errors do not raise: whatever parses is returned.

    Raises:
        KeyError: ``language`` is not one of ``SUPPORTED_LANGUAGES``.
    """
    return _analyze(source, language)[0]


# --------------------------------------------------------------------------- caches

_lru: OrderedDict[tuple[str, str, str], tuple[dict[str, Symbol], str]] = OrderedDict()
_lru_lock = threading.Lock()
_cache_dir: Path | None = None


def set_cache_dir(path: Path | None) -> None:
    """Keep symbol tables on disk under ``path`` (created on demand); None turns it off.

    Layout: ``<path>/<EXTRACTOR_VERSION>/<key[:2]>/<key>.<language>.json``,
    one small JSON per blob, written atomically. A cache that cannot be read or
    written is ignored, never an error.
    """
    global _cache_dir
    _cache_dir = Path(path) if path is not None else None


def clear_memory_cache() -> None:
    """Empty the in-process LRU (tests, benchmarks)."""
    with _lru_lock:
        _lru.clear()


def _disk_path(key: str, language: str) -> Path | None:
    if _cache_dir is None or not re.fullmatch(r"[0-9A-Za-z_-]{4,128}", key):
        return None
    return _cache_dir / EXTRACTOR_VERSION / key[:2] / f"{key}.{language}.json"


def _disk_read(key: str, language: str) -> tuple[dict[str, Symbol], str] | None:
    try:
        path = _disk_path(key, language)
        if path is None or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != EXTRACTOR_VERSION or data.get("language") != language:
            return None
        table: dict[str, Symbol] = {}
        for row in data["symbols"]:
            name, kind, start, end, fp, sig, body, dec, shape, parts, aliases, shape_self = row
            if not (isinstance(start, int) and isinstance(end, int) and all(
                    isinstance(v, str) for v in (name, kind, fp, sig, body, dec, shape, shape_self, *parts, *aliases))):
                return None
            table[name] = Symbol(name, kind, start, end, fp, sig, body, dec, shape, tuple(parts), tuple(aliases),
                                 shape_self)
        file_fp = data["file_fingerprint"]
        return (table, file_fp) if isinstance(file_fp, str) else None
    except Exception:  # noqa: BLE001 - any cache problem means "no cache"
        return None


def _disk_write(key: str, language: str, table: dict[str, Symbol], file_fp: str) -> None:
    try:
        path = _disk_path(key, language)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "version": EXTRACTOR_VERSION, "language": language, "file_fingerprint": file_fp,
            "symbols": [[s.name, s.kind, s.start_line, s.end_line, s.fingerprint, s.signature_fp,
                         s.body_fp, s.decorators_fp, s.shape_fp, list(s.parts), list(s.aliases), s.shape_self_fp]
                        for s in table.values()],
        }
        infra.atomic_write(path, json.dumps(data, separators=(",", ":")).encode("utf-8"), fsync=False)
    except Exception:  # noqa: BLE001 - any cache problem means "no cache"
        return


def _cached(source: bytes, language: str, blob_sha: str | None) -> tuple[dict[str, Symbol], str]:
    """``_analyze`` through the LRU and the disk cache, keyed by content and version."""
    # git's blob id (as ``git.git_blob_sha``): the working tree's copy of a committed file shares its entry
    key = blob_sha or hashlib.sha1(b"blob %d\0" % len(source) + source).hexdigest()
    lru_key = (key, language, EXTRACTOR_VERSION)
    with _lru_lock:
        hit = _lru.get(lru_key)
        if hit is not None:
            _lru.move_to_end(lru_key)
            return hit
    result = _disk_read(key, language)
    if result is None:
        result = _analyze(source, language)
        _disk_write(key, language, *result)
    with _lru_lock:
        _lru[lru_key] = result
        while len(_lru) > LRU_SIZE:
            _lru.popitem(last=False)
    return result


def too_large(size: int, language: str) -> bool:
    """Is a blob of ``size`` bytes in ``language`` past the cap of what is analysed for symbols
    (``MAX_FORMAT_BYTES`` for its format, else ``MAX_SOURCE_BYTES``; none for ``UNCAPPED_LANGUAGES``)?
    Such a blob has no symbols and no imports, and a ``raw1`` fingerprint."""
    if language in UNCAPPED_LANGUAGES:
        return False
    return size > MAX_FORMAT_BYTES.get(language, MAX_SOURCE_BYTES)


def _code_language(source: bytes, path: str) -> str | None:
    language = language_for_path(path)
    if language is None or is_binary(source) or source[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    if too_large(len(source), language):
        return None
    dialect = DIALECTS.get(language)
    return (dialect(path) or language) if dialect is not None else language


def symbol_table(source: bytes, path: str, *, blob_sha: str | None = None) -> dict[str, Symbol]:
    """The symbols of the blob ``source`` stored at repo-relative POSIX ``path``, cached.

    The language comes from ``path``'s extension. Returns {} for an unknown
    language, a binary blob (NUL in the first 8 KB, UTF-16) or an empty file.
    ``blob_sha`` (git's blob id) saves hashing ``source`` for the cache key.
    Cached in-process (LRU of ``LRU_SIZE``) and on disk when ``set_cache_dir``
    was called. The returned dict may be shared with other callers: do not
    mutate it. Never raises for content problems.
    """
    language = _code_language(source, path)
    if language is None or lfs.parse_pointer(source) is not None:  # an LFS pointer: its file's content is elsewhere
        return {}
    try:
        return _cached(source, language, blob_sha)[0]
    except Exception:  # noqa: BLE001 - a parser failure must not break the caller
        return {}


def _raw_fingerprint(source: bytes) -> str:
    lines = source.replace(b"\r\n", b"\n").split(b"\n")
    normal = b"\n".join(line.rstrip() for line in lines)
    return f"{RAW_TAG}:{hashlib.blake2b(normal, digest_size=16).hexdigest()}"


def file_fingerprint(source: bytes, path: str, *, blob_sha: str | None = None) -> str:
    """Fingerprint of a whole file, for file anchors.

    For a code file (language known from ``path``, not binary): ``ts1:`` hash of
    all its canonical tokens (comments, docstrings incl. the module docstring and
    formatting left out, as for symbols). Otherwise: ``raw1:`` hash of the bytes
    with CRLF -> LF and trailing whitespace of each line stripped. A git-lfs pointer (``gitmem.lfs``):
    ``lfs1:`` and its oid, the SHA-256 of the file's content (the content of an LFS file checked out through
    git-lfs is given ``lfs.content_fingerprint`` by the caller, who knows the path is LFS).
    Shares ``symbol_table``'s caches (pass the same ``blob_sha`` to parse once).
    Never raises for content problems.
    """
    pointer = lfs.parse_pointer(source)
    if pointer is not None:
        return pointer.fingerprint
    language = _code_language(source, path)
    if language is not None:
        try:
            return _cached(source, language, blob_sha)[1]
        except Exception:  # noqa: BLE001
            pass
    return _raw_fingerprint(source)


def file_fingerprint_as(recorded: str | None, source: bytes, path: str, *, blob_sha: str | None = None) -> str:
    """``source``'s whole-file fingerprint by the algorithm that made ``recorded``, so the two compare like with like.

    ``recorded`` is a stored file fingerprint (a whole-file anchor's). Its tag decides: ``raw1:`` (recorded
    before the file type had a language, or for a binary file) hashes the bytes as ``raw1`` does today,
    whatever the file's language now is, so an anchor on a ``.rb`` or ``.yml`` file made by an older gitmem
    stays fresh until the file really changes; ``lfs1:`` (an LFS file) gives the content's SHA-256, read from
    ``source`` when it is a pointer, else hashed from it (``lfs.fingerprint``: the content checked out through
    git-lfs, or the file no longer in LFS); any other tag (``ts1:``, an analyzer's) or None gives
    ``file_fingerprint`` (the current algorithm of the file's language). Never raises for content problems.
    """
    if lfs.is_fingerprint(recorded):
        return lfs.fingerprint(source)
    if recorded is not None and recorded.startswith(RAW_TAG + ":"):
        return _raw_fingerprint(source)
    return file_fingerprint(source, path, blob_sha=blob_sha)


# --------------------------------------------------------------------------- lookups


def _last_component(name: str) -> str:
    return name_leaf(name)


def closest_names(table: dict[str, Symbol], name: str, n: int = 5) -> list[str]:
    """Up to ``n`` names of ``table`` that look like ``name``, best first.

    A candidate scores the best of: difflib ratio of the full names, and of
    their last components (``sign`` finds ``Signer.sign``; an exact last
    component scores just below an exact full name), case-insensitive. Only
    scores >= ``CLOSE_CUTOFF`` count; ties are broken by name. May be empty.
    """
    want, want_last = name.lower(), _last_component(name).lower()
    scored: list[tuple[float, str]] = []
    for cand in table:
        full = difflib.SequenceMatcher(None, want, cand.lower()).ratio()
        last = difflib.SequenceMatcher(None, want_last, _last_component(cand).lower()).ratio() * 0.99
        score = max(full, last)
        if score >= CLOSE_CUTOFF:
            scored.append((-score, cand))
    scored.sort()
    return [cand for _, cand in scored[:n]]


def find_by_fingerprint(table: dict[str, Symbol], fingerprint: str, *, field: str = "fingerprint") -> list[str]:
    """Names (table order) whose ``field`` equals ``fingerprint``; [] for an empty fingerprint.

    ``field`` is ``fingerprint`` (same code, any name: a moved symbol) or
    ``body_fp`` / ``signature_fp`` / ``decorators_fp`` (e.g. ``body_fp`` to
    find a renamed symbol).

    Raises:
        ValueError: ``field`` is not one of the four fingerprint fields.
    """
    if field not in ("fingerprint", "signature_fp", "body_fp", "decorators_fp"):
        raise ValueError(f"not a fingerprint field: {field!r}")
    if not fingerprint:
        return []
    return [name for name, sym in table.items() if getattr(sym, field) == fingerprint]


def lookup(table: dict[str, Symbol], name: str, *, like: Symbol | None = None,
           fingerprint: str | None = None) -> str | None:
    """The name under which ``table`` holds the symbol that an anchor to ``name`` means, or None.

    In order: ``name`` itself; else, among the same-named definitions now told
    apart (``name_base`` equal: ``Parser.parse`` and ``Parser.parse(String)``,
    ``C.x#2`` and ``C.x``), the only one with ``fingerprint`` or with
    ``like``'s fingerprint, signature or body (a sibling was added, removed or
    reordered: the code the anchor meant is followed, not its position); else
    the only symbol that an earlier gitmem called ``name`` (``Symbol.aliases``:
    ``f#3``, the implementation after two ``@overload`` stubs, is now ``f``).
    """
    if name in table:
        return name
    base = name_base(name)
    cands = [n for n in table if n.startswith(base) and name_base(n) == base]
    if cands:
        tests: list[tuple[str, str]] = [("fingerprint", fingerprint or "")]
        if like is not None:
            tests += [("fingerprint", like.fingerprint), ("signature_fp", like.signature_fp),
                      ("body_fp", like.body_fp)]
        for field, value in tests:
            hits = [n for n in cands if value and getattr(table[n], field) == value]
            if len(hits) == 1:
                return hits[0]
    hits = [n for n, s in table.items() if name in s.aliases]
    return hits[0] if len(hits) == 1 else None
