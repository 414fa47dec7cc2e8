"""Per-language symbol rules: which syntax nodes are symbols, how they are named.

Owns the extension map (``language_for_path``) and one :class:`LanguageSpec`
per supported language: the token rules the fingerprint uses (comment node
types, string canonicalisation, which ``;`` and ``(...)`` are formatting) and a
table of *handlers*, node type -> function returning the :class:`Def` records
that node defines. ``gitmem.code.symbols`` walks the tree, calls the handlers,
qualifies the names and computes the fingerprints; nothing here hashes or
caches.

Must not import tree-sitter at module level (``language_for_path`` is used on
light paths); nodes are only duck-typed ``tree_sitter.Node`` objects.

Symbols and kinds per language (names nest with ``.``; several definitions of
one qualified name are named by ``LanguageSpec.same_name``, see
``symbols.name_groups``: Python merges them into one symbol, Java and Rust name
separate implementations by their ``Def.key`` (Ruby too), the others number repeats ``#2``,
``#3`` ... in source order; anonymous code that is not listed, such as callbacks
passed as arguments, object literals and anonymous classes, is not a symbol):

* python: ``function``, ``method`` (a function directly in a class body, also
  under ``if`` / ``try`` there), ``class``. Decorators are part of the span.
  Definitions under ``if`` / ``try`` / ``with`` / loops keep the enclosing name.
  ``@overload`` stubs (``Def.stub``) and definitions under ``if TYPE_CHECKING:``
  (``Def.typing_only``) are marked: they count as signatures of the name.
* javascript, typescript, tsx: ``function`` (declarations, generators,
  ``const f = () => ...`` / function / class expressions as ``f``,
  ``exports.f`` / ``module.exports.f`` / ``module.exports = {f() {}}`` members
  as ``module.exports.f``, ``Foo.bar = function``, anonymous ``export default``
  as ``default``), ``class``, ``method`` (class members incl. accessors and
  fields holding a function; ``A.prototype.m = function`` as ``A.m``),
  ``constructor`` (``Class.constructor``). TypeScript adds ``interface``,
  ``type``, ``enum``, ``namespace`` (``NS.f``; ``declare module "x"`` as
  ``x``); overload signatures fold into their implementation's span.
  Functions nested in functions are ``outer.inner``; named functions inside
  anonymous callbacks keep the enclosing name.
* go: ``function``, ``method`` (``Recv.M``, pointer and generic receivers
  reduced to the type name), ``struct``, ``interface``, ``type``.
* rust: ``function``, ``method`` (in ``impl T`` / ``impl Trait for T`` as
  ``T.m``, in a trait as ``Trait.m``), ``struct``, ``enum``, ``union``,
  ``trait``, ``type``, ``module`` (``m.f``), ``macro`` (``macro_rules!``).
  Outer attributes (``#[...]``) are part of the span. Items of one name told
  apart by their ``cfg`` attributes are ``open[cfg(unix)]``, ``open[cfg(windows)]``.
* java: ``class``, ``interface``, ``enum``, ``record``, ``annotation``,
  ``method``, ``constructor`` (``Class.Class``). Annotations are part of the
  span. Local classes in methods are ``Class.method.Local``. Overloads are
  named by their parameter types, without packages or spaces:
  ``Parser.parse(String)``, ``Parser.parse(List<String>,int...)``,
  ``Sample.Sample()``; a method without same-named siblings keeps the plain name.
* ruby: ``module``, ``class`` (``class A::B`` is ``A.B``, as is ``class B``
  nested in ``module A``), ``method`` (``def`` in a class or module, and
  singleton methods: ``def self.x`` and ``def x`` under ``class << self`` are
  ``C.x`` like instance methods; when ``C`` also has an instance method ``x``
  the singleton one is ``C.x[self]``; ``def Other.x`` is ``Other.x``),
  ``function`` (a top-level ``def``). A class reopened at the same nesting is
  ``C``, ``C#2`` ... with its methods under that name (``C#2.m``); reopened by
  its full path at another nesting (``class A::B`` after ``module A; class B``)
  it is one symbol holding both. ``=begin``/``=end`` and ``#`` comments are not
  fingerprinted; ``'a'`` == ``"a"`` when neither escapes nor interpolates; a
  ``;`` is a line break.
* php: ``class``, ``interface``, ``trait``, ``enum``, ``method`` (static or
  not: ``Class.m``), ``function``. Namespaces are not part of names (like Java
  packages; ``Ctl::show`` is ``Ctl.show``); braced namespace blocks
  are searched. ``#[...]`` attributes are part of the span; doc comments are
  comments. ``'a'`` == ``"a"`` without escapes or ``$`` interpolation.
* csharp: ``class``, ``struct``, ``interface``, ``record``, ``enum``,
  ``method``, ``constructor`` (``Class.Class``), ``destructor`` (``Class.~Class``),
  ``property``, ``indexer`` (``Class.this``), ``operator`` (``Class.operator+``,
  ``Class.implicit operator int``), ``delegate``, local ``function``
  (``Class.Method.local``). Namespaces are not part of the name (like Java's
  packages): ``Acme.Tools.Parser.Parse`` is ``Parser.Parse``. Attributes
  (``[...]``) are part of the span. Overloads are named by their parameter
  types as Java's are: ``Parser.Parse(string)``, ``Parser.Parse(ref int,List<T>,object[])``.
* kotlin: ``class``, ``interface``, ``enum``, ``object`` (companion objects
  as ``Class.Companion`` or their own name), ``method``, ``function``
  (top-level and local), ``constructor`` (secondary constructors as
  ``Class.constructor``), ``property`` (top-level and members, with their
  accessors), ``type`` (``typealias``). The package is not part of the name.
  Extension functions and properties are named by their receiver's base type:
  ``fun List<T>.second()`` is ``List.second``. Annotations are part of the
  span; overloads are named by parameter types like Java's: ``Sample.add(Int,Int)``.
* c, cpp (``lang_c``): ``function``, ``method``, ``constructor``, ``destructor``,
  ``operator``, ``class``, ``struct``, ``union``, ``enum``, ``namespace``,
  ``type``, ``macro``; namespaces are part of names (``fmt.detail.write``); a
  declaration and its definition in one file are one symbol, C++ overloads
  are named by parameter types (``A.f(const char*,size_t)``). The rules are
  in ``lang_c``'s docstring.
* Go names cannot repeat in a file; build-tag variants live in separate files
  and are separate anchors already.

Handler contract: ``handler(node, src, parent_kind) -> list[Def] | None`` where
``src`` is the (CRLF-normalised) source bytes and ``parent_kind`` the kind of
the innermost enclosing symbol or scope (``"class"``, ``"impl"``, ``None`` at
top level). ``None`` means "not a definition, keep searching inside it";
``[]`` means "handled, nothing to emit and nothing to search inside".
"""

from __future__ import annotations

import functools  # already loaded by ``re``
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

# Patterns of one language's rules are functions compiled on first use (``functools.cache``), not module-level
# ``re.compile`` calls: those are paid by every process that imports this module (the git hooks, the session
# start), whatever languages its files are in (C#/Kotlin brace recovery, Kotlin constructors, JavaScript and
# Ruby written names: ~0.5 ms together).

# --------------------------------------------------------------------------- extensions

_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".cs": "csharp",
    ".kt": "kotlin", ".kts": "kotlin",
    ".c": "c",
    ".h": "cpp", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".tpp": "cpp", ".inl": "cpp",
    ".swift": "swift",
    ".scala": "scala", ".sc": "scala",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".ksh": "bash", ".bats": "bash",
    ".lua": "lua",
    ".yml": "yaml", ".yaml": "yaml",
    ".toml": "toml",
    ".json": "json", ".jsonc": "json",
    ".md": "markdown", ".markdown": "markdown",
    ".sql": "sql",
    ".dockerfile": "dockerfile",
    ".tf": "terraform", ".tfvars": "terraform",
    ".hcl": "hcl",
    ".mk": "make",
}

#: Languages with symbol rules, in a stable order (the values of the extension map).
SUPPORTED_LANGUAGES: tuple[str, ...] = (
    "python", "javascript", "typescript", "tsx", "go", "rust", "java",
    "ruby", "php", "csharp", "kotlin",
    "c", "cpp",
    "swift",
    "scala",
    "bash",
    "lua",
    "yaml", "toml", "json",
    "markdown", "sql", "dockerfile", "terraform", "hcl", "make",
)


#: Whole file names (lower-cased) with a language, for files known by name rather than extension.
_FILENAMES: dict[str, str] = {
    "dockerfile": "dockerfile", "containerfile": "dockerfile",
    "makefile": "make", "gnumakefile": "make",
}

#: Whole-name prefixes (lower-cased) with a language: ``Dockerfile.dev``, ``Containerfile.prod``.
_NAME_PREFIXES: tuple[tuple[str, str], ...] = (
    ("dockerfile.", "dockerfile"), ("containerfile.", "dockerfile"),
)


def symbol_file_types() -> list[str]:
    """The file types gitmem finds symbols in, for a person: the extensions (``.py``), the whole file names
    (``dockerfile``, lower-cased as ``_FILENAMES`` holds them) and the name prefixes (``dockerfile.*``), each
    sorted. The list per language, with its names and kinds, is ``docs/how-it-works.md``'s."""
    return sorted(_EXTENSIONS) + sorted(_FILENAMES) + sorted(prefix + "*" for prefix, _ in _NAME_PREFIXES)


def language_for_path(path: str) -> str | None:
    """The language of a repo-relative POSIX path, by file name or else extension (case-insensitive),
    else a name prefix (``Dockerfile.dev``; ``Dockerfile.md`` is Markdown).

    Returns one of :data:`SUPPORTED_LANGUAGES`, or None for any other file
    (no extension, unknown extension, ``.d.ts`` is TypeScript).
    """
    base = posixpath.basename(path).lower()
    by_name = _FILENAMES.get(base)
    if by_name is not None:
        return by_name
    by_ext = _EXTENSIONS.get(posixpath.splitext(base)[1])
    if by_ext is not None:
        return by_ext
    return next((language for prefix, language in _NAME_PREFIXES if base.startswith(prefix)), None)


# --------------------------------------------------------------------------- records


@dataclass
class Def:
    """One definition found by a handler (before qualification and hashing).

    Byte offsets index the CRLF-normalised source; lines are 1-based inclusive.

    Attributes:
        name: name relative to the enclosing scope; may contain dots
            (``A.m`` for ``A.prototype.m = ...``, ``module.exports.f``).
        kind: symbol kind (``function``, ``method``, ``class`` ...).
        start_byte, end_byte: the span, decorators / attributes / leading
            overload signatures included.
        start_line, end_line: the same span in lines.
        body: byte range of the body, or None when the definition has none.
        decorators: byte ranges of decorators / annotations / attributes.
        scope: node whose descendants are searched for nested definitions
            (named ``<this name>.<inner>``); None for no nesting.
        scope_kind: ``parent_kind`` for definitions inside ``scope``
            (defaults to ``kind``).
        emit: False for a naming scope that is not itself a symbol (a Rust
            ``impl`` block contributes ``Type.`` to its methods' names).
        key: what tells this definition apart from same-named siblings that
            are separate implementations: Java parameter types ``(String,int)``,
            Rust ``cfg`` attributes ``[cfg(unix)]``; "" when nothing does.
        stub: a Python ``@overload`` signature: it belongs to the
            implementation of the same name (see ``symbols``).
        typing_only: defined under ``if TYPE_CHECKING:``: never runs.
        stubs: byte ranges of TypeScript overload signatures folded into
            this definition (they lie inside its span, before its own code).
        members: nodes (classified as in ``scope``) and definitions nested in
            this one that no single node holds: the members of a class that
            the grammar could only read as an ``ERROR`` (``recover_error``).
        inline: record nothing; classify ``members`` in the enclosing scope.
    """

    name: str
    kind: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    body: tuple[int, int] | None = None
    decorators: list[tuple[int, int]] = field(default_factory=list)
    scope: Node | None = None
    scope_kind: str | None = None
    emit: bool = True
    key: str = ""
    stub: bool = False
    typing_only: bool = False
    stubs: list[tuple[int, int]] = field(default_factory=list)
    members: list[Node | Def] = field(default_factory=list)
    inline: bool = False


Handler = Callable[["Node", bytes, "str | None"], "list[Def] | None"]
Canon = Callable[["Node", bytes], "bytes | None"]


@dataclass(frozen=True)
class LanguageSpec:
    """Everything language-specific that ``symbols`` needs.

    Attributes:
        name: gitmem's language name (also the tree-sitter-language-pack name).
        handlers: node type -> handler (see the module docstring).
        descend: predicate on a node type: may definitions hide inside a
            non-definition node of this type? (pure speed: False prunes).
        barriers: node types never searched for definitions (anonymous
            classes, object literals).
        comment_types: node types left out of fingerprints, subtree and all.
        atomic: node type -> canonicaliser returning the node's one token
            (e.g. a string literal with its quote style normalised), or None to
            fall back to the node's children.
        lowercase: leaf types whose token is lower-cased (number literals).
        squash_ws: leaf types whose inner whitespace runs become one space (JSX text).
        block_types: node types that emit open/close marker tokens, for
            languages whose block structure is whitespace (Python).
        tuple_types: node types where a lone comma is significant (``(1,)``).
        drop_semicolon: predicate (parent type, grandparent type) -> True when a
            ``;`` leaf there is formatting (statement terminators under ASI).
        paren_parents: parent types under which a ``parenthesized_expression``
            child's own parentheses are formatting (``return (x)``).
        paren_keep_inner: inner node types for which those parentheses are
            kept anyway (``() => ({})``, ``(a, b)``).
        bare_param_field: field name of an unparenthesised single arrow
            parameter (JS ``x => 1`` hashes as ``(x) => 1``), or "".
        precedence: binary operator -> binding strength (higher binds
            tighter); parentheses around a ``binary_expression`` operand that
            the precedence makes redundant are formatting (prettier writes
            ``(a && b) || c``). Empty: keep all such parentheses.
        drop_empty: (parent type, node type) pairs whose node is formatting
            when it has no named children (Python ``class A():``).
        comma_after_block: parent types where a ``,`` right after ``}`` is
            formatting (Rust match arms: rustfmt drops ``{ ... },``'s comma).
        drop_leaves: (parent type, leaf type) pairs whose leaf is formatting,
            ``"*"`` as the parent for any (Scala's optional braces: ``{`` / ``}``
            of a template body or block, the ``:`` that opens an indented body,
            ``end`` markers).
        docstrings: drop Python-style docstrings (first string statement of a
            module, class or function body).
        same_name: what several definitions of one qualified name are:
            ``"merge"`` (Python: one name, one symbol holding them all),
            ``"key"`` (separate implementations named by their ``Def.key``,
            Java overloads, Rust ``cfg`` variants), ``"join"`` (C/C++: one
            symbol per name and key, declarations as signatures; the key only
            in the name when one name has several) or ``"number"`` (``#2``,
            ``#3`` ... in source order).
        written_name: a symbol name as a person writes it in this language
            (``A::B#m``) -> gitmem's name (``A.B.m``); identity by default.
        written_choices: a typed name -> the gitmem names it may mean, in tiers: the first tier with a
            name in the table decides, and two names of one tier found are ambiguous (Ruby ``A.m`` when
            both ``A.m`` and ``A.m[self]`` exist); None: the name as typed, then ``written_name``'s.
        prepare: the source -> the source parsed and hashed, same length and
            same line breaks (C/C++ blank ``class EXPORT_MACRO Name``'s macro);
            None: the source as it is.
        reparse: (the source, the root of its parse by the grammar ``name``)
            -> another grammar to parse it with instead, or None (C++: a header
            that the C++ grammar cannot read and that has no C++ syntax is C).
        repair: (the source, the root of its parse) -> (another source, its
            tree) to use instead, or None; called only when the tree has an
            error (Swift: ``#if`` lines between a type's members read as
            blank). The other source has the same length and line breaks.
        text_gaps: node types whose source text *between* their children is
            content the grammar gives no node (Scala's interpolated string
            ``s"a $x"``: the ``a `` lies between the quote and the
            interpolation): each such stretch is one token, whitespace included.
    """

    name: str
    handlers: dict[str, Handler]
    descend: Callable[[str], bool] = lambda t: True
    barriers: frozenset[str] = frozenset()
    comment_types: frozenset[str] = frozenset({"comment"})
    atomic: dict[str, Canon] = field(default_factory=dict)
    lowercase: frozenset[str] = frozenset()
    squash_ws: frozenset[str] = frozenset()
    block_types: frozenset[str] = frozenset()
    tuple_types: frozenset[str] = frozenset()
    drop_semicolon: Callable[[str, str], bool] = lambda parent, grandparent: False
    paren_parents: frozenset[str] = frozenset()
    paren_keep_inner: frozenset[str] = frozenset()
    bare_param_field: str = ""
    precedence: dict[str, int] = field(default_factory=dict)
    drop_empty: frozenset[tuple[str, str]] = frozenset()
    comma_after_block: frozenset[str] = frozenset()
    drop_leaves: frozenset[tuple[str, str]] = frozenset()
    docstrings: bool = False
    same_name: str = "number"
    written_name: Callable[[str], str] = lambda name: name
    written_choices: Callable[[str], list[list[str]]] | None = None
    prepare: Callable[[bytes], bytes] | None = None
    reparse: Callable[[bytes, Node], str | None] | None = None
    repair: Callable[[bytes, Node], tuple[bytes, Tree] | None] | None = None
    text_gaps: frozenset[str] = frozenset()


# --------------------------------------------------------------------------- helpers


def text(node: Node | None, src: bytes) -> str:
    """The source text of ``node`` decoded as UTF-8 (bad bytes replaced); "" for None."""
    if node is None:
        return ""
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _end_line(node: Node) -> int:
    """1-based inclusive last line of ``node`` (a node ending at column 0 ends on the line before)."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return row
    return row + 1


_ANY_COMMENT = frozenset({"comment", "line_comment", "block_comment", "html_comment"})


def _content_end_line(node: Node) -> int:
    """Last line of ``node`` without trailing comments (tree-sitter-python puts a
    comment after a block's last statement inside the block)."""
    last = node
    while last.child_count:
        children = last.children
        k = len(children) - 1
        while k >= 0 and children[k].type in _ANY_COMMENT:
            k -= 1
        if k < 0:
            break
        last = children[k]
    return max(_end_line(last), node.start_point[0] + 1)


def _rng(node: Node | None) -> tuple[int, int] | None:
    return None if node is None else (node.start_byte, node.end_byte)


def _named_prev(node: Node, comments: frozenset[str]) -> Node | None:
    prev = node.prev_named_sibling
    while prev is not None and prev.type in comments:
        prev = prev.prev_named_sibling
    return prev


def _named_next(node: Node, comments: frozenset[str]) -> Node | None:
    nxt = node.next_named_sibling
    while nxt is not None and nxt.type in comments:
        nxt = nxt.next_named_sibling
    return nxt


def _leading(node: Node, types: frozenset[str], comments: frozenset[str]) -> list[Node]:
    """Consecutive preceding named siblings of ``types`` (comments skipped), in source order."""
    out: list[Node] = []
    prev = _named_prev(node, comments)
    while prev is not None and prev.type in types:
        out.append(prev)
        prev = _named_prev(prev, comments)
    out.reverse()
    return out


def make_def(name: str, kind: str, first: Node, last: Node, *, body: Node | tuple[int, int] | None = None,
             decorators: list[Node] | None = None, scope: Node | None = None,
             scope_kind: str | None = None, emit: bool = True, key: str = "",
             stubs: list[Node] | None = None) -> Def:
    """Build a :class:`Def` spanning ``first`` .. ``last`` (nodes, source order)."""
    body_rng = body if isinstance(body, tuple) or body is None else _rng(body)
    return Def(
        name=name, kind=kind,
        start_byte=first.start_byte, end_byte=last.end_byte,
        start_line=first.start_point[0] + 1, end_line=_content_end_line(last),
        body=body_rng,
        decorators=[(d.start_byte, d.end_byte) for d in decorators or []],
        scope=scope, scope_kind=scope_kind, emit=emit, key=key,
        stubs=[(n.start_byte, n.end_byte) for n in stubs or []],
    )


def _error_items(node: Node) -> list[Node]:
    """The children of an ``ERROR`` node in source order, those of nested ``ERROR`` nodes spliced in."""
    out: list[Node] = []
    for child in node.children:
        if child.type == "ERROR":
            out.extend(_error_items(child))
        else:
            out.append(child)
    return out


def recover_error(node: Node, src: bytes, parent_kind: str | None, *, types: dict[str, str],
                  functions: frozenset[str], names: frozenset[str], prefixes: frozenset[str],
                  member_scope: str) -> list[Def] | None:
    """Definitions in an ``ERROR`` node, nested as the braces say, so that a parse error does not rename them.

    tree-sitter reads code it cannot parse as an ``ERROR`` node whose children are what it could read: whole
    declarations, and the loose tokens of a head (``class``, ``Foo``, ``:``, ``Base``, ``{``) whose body it could
    not close. Walked in order, a type keyword (a key of ``types``) then a name (a node of a type in ``names``)
    then ``{`` opens that type: declarations up to the matching ``}`` (or the end of the node) are its members,
    named ``Foo.member``. A function keyword (in ``functions``) then a name then ``{`` opens a function whose
    contents are its own (locals, not members): it is a symbol of kind ``method`` in a type, else ``function``.
    Any other ``{`` is matched and its contents skipped. A ``modifiers`` / attribute node right before the keyword
    (types in ``prefixes``) starts the span; what follows a head up to its ``{`` is the head's (a complete
    declaration there drops the head).

    Returns None when the node holds no such head (it is searched as before), else one ``inline`` Def whose
    ``members`` are the nodes to classify in the enclosing scope and the recovered definitions, in source order.
    An ``extension`` kind is a naming scope only (its members are ``Foo.member``; the block is no symbol).
    """
    items = _error_items(node)
    if not any(i.type in types or i.type in functions for i in items):
        return None
    # A frame: [kind ("root" / "type" / "function" / "brace"), name, first node, "{" node, members, def kind,
    #           where the "{" closes by the text (or None)]
    frames: list[list[Any]] = [["root", "", node, node, [], "", None]]
    head: list[Any] | None = None  # [kind word, name, first node]
    prev: Node | None = None
    for item in items:
        t = item.type
        while len(frames) > 1 and frames[-1][6] is not None and item.start_byte >= frames[-1][6]:
            _close_frame(frames, frames[-1][6], src, parent_kind, member_scope)  # its "}" is hidden deeper
        if t in types or t in functions:
            first = prev if prev is not None and prev.type in prefixes else item
            head = [t, "", first]
        elif head is not None and not head[1] and t in names:
            head[1] = text(item, src).strip("`")
        elif t == "{":
            close = _brace_end(src, item.start_byte)
            if head is not None and head[1]:
                kind = "function" if head[0] in functions else "type"
                frames.append([kind, head[1], head[2], item, [], types.get(head[0], ""), close])
            else:
                frames.append(["brace", "", item, item, [], "", close])
            head = None
        elif t == "}":
            if len(frames) > 1:
                _close_frame(frames, item.end_byte, src, parent_kind, member_scope)
            head = None
        elif head is not None and not t.endswith("declaration"):
            pass  # the rest of a head: `: Base`, parameters, `where ...`
        elif frames[-1][0] in ("root", "type") and item.is_named:
            frames[-1][4].append(item)
            head = None
        prev = item
    while len(frames) > 1:
        _close_frame(frames, frames[-1][6] or node.end_byte, src, parent_kind, member_scope)
    return [Def(name="", kind="", start_byte=node.start_byte, end_byte=node.end_byte,
                start_line=node.start_point[0] + 1, end_line=_end_line(node), members=frames[0][4], inline=True)]


#: What ``_brace_end`` skips: a ``//`` or ``/* */`` comment, a ``"""`` or ``"`` string (escapes kept whole).
@functools.cache
def _brace_noise_re() -> re.Pattern[bytes]:
    """The pattern, compiled on first use (see the note after the imports)."""
    return re.compile(rb'//[^\n]*|/\*.*?\*/|"""(?:\\.|[^\\])*?"""|"(?:\\.|[^"\\\n])*"|[{}]', re.S)


def _brace_end(src: bytes, open_byte: int) -> int | None:
    """The byte after the ``}`` that closes the ``{`` at ``open_byte``, by the text (comments and strings
    skipped), or None when it never closes. Used where the parse lost the structure (``recover_error``)."""
    depth = 0
    for m in _brace_noise_re().finditer(src, open_byte):
        tok = m.group(0)
        if tok == b"{":
            depth += 1
        elif tok == b"}":
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def _close_frame(frames: list[list[Any]], end: int, src: bytes, parent_kind: str | None,
                 member_scope: str) -> None:
    """Pop the innermost frame of ``recover_error``, ending at byte ``end``; a type or function becomes a
    member Def of the frame around it."""
    kind, name, first, brace, members, def_kind, _ = frames.pop()
    if kind == "brace" or frames[-1][0] == "brace":
        return
    outer = frames[-1]
    span = {"start_byte": first.start_byte, "end_byte": end, "start_line": first.start_point[0] + 1,
            "end_line": src.count(b"\n", 0, max(end - 1, 0)) + 1, "body": (brace.start_byte, end)}
    if kind == "type":
        outer[4].append(Def(name=name, kind=def_kind, **span, scope_kind=member_scope, members=members,
                            emit=def_kind != "extension"))
    elif kind == "function":
        in_type = outer[0] == "type" or (outer[0] == "root" and parent_kind == member_scope)
        outer[4].append(Def(name=name, kind="method" if in_type else "function", **span))


def redundant_parens(outer_op: str, inner_op: str, side: str, precedence: dict[str, int]) -> bool:
    """Are the parentheses of ``(x inner_op y)`` as the ``side`` operand of
    ``outer_op`` redundant (same tree without them)?"""
    outer, inner = precedence.get(outer_op), precedence.get(inner_op)
    if outer is None or inner is None or ("??" in (outer_op, inner_op) and outer_op != inner_op):
        return False
    if inner != outer:
        return inner > outer
    if outer_op == "**":  # right-associative
        return side == "right" and inner_op == "**"
    return side == "left"


def _unescape_quotes(inner: bytes) -> bytes:
    r"""``\'`` -> ``'`` and ``\"`` -> ``"`` (other escapes kept): quote style is formatting."""
    if b"\\" not in inner:
        return inner
    return re.sub(rb"\\(.)", lambda m: m.group(1) if m.group(1) in b"'\"" else m.group(0), inner, flags=re.S)


# --------------------------------------------------------------------------- Python

_PY_DEFS = ("function_definition", "class_definition")
_PY_STRING_RE = re.compile(rb"([A-Za-z]*)('''|\"\"\"|'|\")(.*)\2\Z", re.S)


def _py_def(node: Node, src: bytes, parent_kind: str | None, first: Node,
            decorators: list[Node]) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    if node.type == "class_definition":
        kind = "class"
    else:
        kind = "method" if parent_kind == "class" else "function"
    d = make_def(text(name, src), kind, first, node, body=body, decorators=decorators, scope=body)
    d.stub = node.type == "function_definition" and any(_py_is_overload(dec, src) for dec in decorators)
    d.typing_only = _py_under_type_checking(first)
    return [d]


def _py_is_overload(decorator: Node, src: bytes) -> bool:
    """``@overload``, ``@typing.overload``, ``@t.overload``, ``@typing_extensions.overload``."""
    expr = decorator.named_children[0] if decorator.named_child_count else None
    return expr is not None and text(expr, src).rsplit(".", 1)[-1].strip() == "overload"


def _py_under_type_checking(node: Node) -> bool:
    """True when ``node`` sits in the ``if`` branch of ``if TYPE_CHECKING:`` (``typing.TYPE_CHECKING``,
    ``t.TYPE_CHECKING``) within its own scope: code a type checker reads and Python never runs."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in ("module", "function_definition", "class_definition"):
        if parent.type == "if_statement" and child == parent.child_by_field_name("consequence"):
            cond = parent.child_by_field_name("condition")
            if cond is not None and cond.type in ("identifier", "attribute") and (
                    cond.text or b"").rsplit(b".", 1)[-1] == b"TYPE_CHECKING":
                return True
        child, parent = parent, parent.parent
    return False


def _py_decorated(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    inner = node.child_by_field_name("definition")
    if inner is None or inner.type not in _PY_DEFS:
        return None
    decorators = [c for c in node.named_children if c.type == "decorator"]
    return _py_def(inner, src, parent_kind, node, decorators)


def _py_plain(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    return _py_def(node, src, parent_kind, node, [])


def _py_string(node: Node, src: bytes) -> bytes | None:
    """A Python string literal without interpolation as one quote-style-free token.

    ``'a'``, ``"a"``, ``'''a'''`` and ``u"a"`` all become ``S|a``; prefixes are
    lower-cased and sorted (``Rb`` == ``br``); ``\\'`` == ``'`` outside raw strings.
    """
    for child in node.children:
        if child.type == "interpolation":
            return None
    m = _PY_STRING_RE.match(src[node.start_byte:node.end_byte])
    if m is None:
        return None
    prefix = bytes(sorted(m.group(1).lower().replace(b"u", b"")))
    inner = m.group(3)
    if b"r" not in prefix:
        inner = _unescape_quotes(inner)
    return b"S" + prefix + b"|" + inner


def _py_descend(node_type: str) -> bool:
    # Python definitions are statements: only statement containers can hold them.
    return (node_type in ("module", "block", "ERROR")
            or node_type.endswith("_statement") or node_type.endswith("_clause"))


PYTHON = LanguageSpec(
    name="python",
    handlers={"decorated_definition": _py_decorated, "function_definition": _py_plain,
              "class_definition": _py_plain},
    descend=_py_descend,
    comment_types=frozenset({"comment", "line_continuation"}),
    atomic={"string": _py_string},
    lowercase=frozenset({"integer", "float"}),
    block_types=frozenset({"block"}),
    tuple_types=frozenset({"tuple", "tuple_pattern", "subscript", "pattern_list", "expression_list",
                           "lambda_parameters"}),
    drop_semicolon=lambda parent, grandparent: True,
    paren_parents=frozenset({"return_statement", "assignment", "augmented_assignment", "if_statement",
                             "elif_clause", "while_statement", "for_statement", "delete_statement",
                             "assert_statement", "raise_statement", "yield"}),
    drop_empty=frozenset({("class_definition", "argument_list")}),
    docstrings=True,
    same_name="merge",
)


# --------------------------------------------------------------------------- JavaScript / TypeScript

_JS_COMMENTS = frozenset({"comment", "html_comment"})
# ("function" is the older grammars' name for a function expression.)
_JS_FUNC_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_CLASS_VALUES = frozenset({"class"})
_JS_METHOD_SIGS = frozenset({"method_signature"})
_JS_FUNC_SIGS = frozenset({"function_signature"})


def _js_unit(node: Node) -> Node:
    """The statement a declaration stands in: its ``export`` / ``declare`` wrapper, if any."""
    parent = node.parent
    if parent is not None and parent.type in ("export_statement", "ambient_declaration"):
        return parent
    return node


def _js_unit_decl(unit: Node) -> Node:
    """Inverse of ``_js_unit``: the declaration inside an export / declare wrapper."""
    if unit.type == "export_statement":
        decl = unit.child_by_field_name("declaration")
        return decl if decl is not None else unit
    if unit.type == "ambient_declaration":
        for child in unit.named_children:
            if child.type not in _JS_COMMENTS:
                return child
    return unit


def _js_decorators(node: Node) -> list[Node]:
    return [c for c in node.children if c.type == "decorator"]


def _js_overloads(unit: Node, name: str, sig_types: frozenset[str], src: bytes) -> list[Node]:
    """Preceding overload signatures of ``name`` (TypeScript), in source order."""
    out: list[Node] = []
    prev = _named_prev(unit, _JS_COMMENTS)
    while prev is not None:
        decl = _js_unit_decl(prev)
        if decl.type not in sig_types or text(decl.child_by_field_name("name"), src) != name:
            break
        out.append(prev)
        prev = _named_prev(prev, _JS_COMMENTS)
    out.reverse()
    return out


def _js_is_overload(unit: Node, name: str, impl_types: frozenset[str], src: bytes) -> bool:
    """True when the next sibling declares ``name`` again (this signature folds into it)."""
    nxt = _named_next(unit, _JS_COMMENTS)
    while nxt is not None and nxt.type == "decorator":
        nxt = _named_next(nxt, _JS_COMMENTS)
    if nxt is None:
        return False
    decl = _js_unit_decl(nxt)
    return decl.type in impl_types and text(decl.child_by_field_name("name"), src) == name


def _js_value_def(name: str, value: Node, first: Node, last: Node, decorators: list[Node],
                  func_kind: str) -> Def | None:
    """A definition whose code is a function / class *value* (``x = () => ...``)."""
    if value.type in _JS_FUNC_VALUES:
        body = value.child_by_field_name("body")
        return make_def(name, func_kind, first, last, body=body, decorators=decorators, scope=body)
    if value.type in _JS_CLASS_VALUES:
        body = value.child_by_field_name("body")
        decorators = decorators + _js_decorators(value)
        return make_def(name, "class", first, last, body=body, decorators=decorators, scope=body,
                        scope_kind="class")
    return None


def _js_function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    unit = _js_unit(node)
    leading = _js_overloads(unit, text(name, src), _JS_FUNC_SIGS, src)
    first = leading[0] if leading else unit
    body = node.child_by_field_name("body")
    return [make_def(text(name, src), "function", first, unit, body=body, scope=body, stubs=leading)]


def _js_function_signature(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    unit = _js_unit(node)
    impls = frozenset({"function_declaration", "generator_function_declaration", "function_signature"})
    if _js_is_overload(unit, text(name, src), impls, src):
        return []
    leading = _js_overloads(unit, text(name, src), _JS_FUNC_SIGS, src)
    return [make_def(text(name, src), "function", leading[0] if leading else unit, unit, stubs=leading)]


def _js_class(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    unit = _js_unit(node)
    body = node.child_by_field_name("body")
    decorators = (_js_decorators(unit) if unit is not node else []) + _js_decorators(node)
    return [make_def(text(name, src), "class", unit, unit, body=body, decorators=decorators, scope=body,
                     scope_kind="class")]


def _js_member_name(node: Node | None, src: bytes) -> str:
    """Name of a class member / object key: identifiers as written, string keys unquoted."""
    if node is None:
        return ""
    if node.type == "string":
        return text(node, src)[1:-1]
    return " ".join(text(node, src).split())


def _js_method(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind != "class":
        return None
    name = _js_member_name(node.child_by_field_name("name"), src)
    if not name:
        return None
    leading = _leading(node, frozenset({"decorator"}), _JS_COMMENTS)
    decorators = leading + _js_decorators(node)
    overloads = _js_overloads(leading[0] if leading else node, name, _JS_METHOD_SIGS, src)
    first = (overloads or leading or [node])[0]
    body = node.child_by_field_name("body")
    kind = "constructor" if name == "constructor" else "method"
    return [make_def(name, kind, first, node, body=body, decorators=decorators, scope=body, stubs=overloads)]


def _js_method_signature(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind != "class":
        return None
    name = _js_member_name(node.child_by_field_name("name"), src)
    if not name:
        return None
    impls = frozenset({"method_definition", "method_signature"})
    if node.type == "method_signature" and _js_is_overload(node, name, impls, src):
        return []
    leading = _leading(node, frozenset({"decorator"}), _JS_COMMENTS)
    decorators = leading + _js_decorators(node)
    overloads = _js_overloads(leading[0] if leading else node, name, _JS_METHOD_SIGS, src)
    first = (overloads or leading or [node])[0]
    return [make_def(name, "method", first, node, decorators=decorators, stubs=overloads)]


def _js_field(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if parent_kind != "class":
        return None
    name = _js_member_name(node.child_by_field_name("property") or node.child_by_field_name("name"), src)
    value = node.child_by_field_name("value")
    if not name or value is None:
        return []  # a declared field (`x: T;`): its type is not a member
    decorators = _leading(node, frozenset({"decorator"}), _JS_COMMENTS) + _js_decorators(node)
    first = (decorators[:1] or [node])[0]
    d = _js_value_def(name, value, first, node, decorators, "method")
    return [d] if d is not None else []  # a data field: nothing inside is a member


def _js_variables(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    unit = _js_unit(node)
    out: list[Def] = []
    for decl in declarators:
        name = decl.child_by_field_name("name")
        value = decl.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            continue
        first, last = (unit, unit) if len(declarators) == 1 else (decl, decl)
        decorators = _js_decorators(unit) if first is unit and unit is not node else []
        d = _js_value_def(text(name, src), value, first, last, decorators, "function")
        if d is not None:
            out.append(d)
    return out or None


def _js_member_path(node: Node, src: bytes) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything but plain identifiers and dots."""
    parts: list[str] = []
    while node.type == "member_expression":
        prop = node.child_by_field_name("property")
        obj = node.child_by_field_name("object")
        if prop is None or obj is None or prop.type != "property_identifier":
            return None
        parts.append(text(prop, src))
        node = obj
    if node.type != "identifier":
        return None
    parts.append(text(node, src))
    parts.reverse()
    return parts


def _js_object_members(obj: Node, prefix: str, kind: str, src: bytes) -> list[Def]:
    """Function-valued members of an object literal (``{ a() {}, b: () => {} }``)."""
    out: list[Def] = []
    for member in obj.named_children:
        if member.type == "method_definition":
            name = _js_member_name(member.child_by_field_name("name"), src)
            body = member.child_by_field_name("body")
            if name:
                out.append(make_def(f"{prefix}.{name}", kind, member, member, body=body, scope=body))
        elif member.type == "pair":
            name = _js_member_name(member.child_by_field_name("key"), src)
            value = member.child_by_field_name("value")
            if name and value is not None:
                d = _js_value_def(f"{prefix}.{name}", value, member, member, [], kind)
                if d is not None:
                    out.append(d)
    return out


def _js_expression_statement(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    inner = node.named_children[0] if node.named_child_count else None
    if inner is None:
        return None
    if inner.type in ("internal_module", "module"):
        return _ts_namespace(inner, src, parent_kind, unit=node)
    if inner.type != "assignment_expression":
        return None
    left = inner.child_by_field_name("left")
    right = inner.child_by_field_name("right")
    if left is None or right is None:
        return None
    path = _js_member_path(left, src)
    if path is None or len(path) < 2 or path[0] == "this":
        return None
    if path[-1] == "prototype":
        if right.type == "object":  # A.prototype = { m() {} }  ->  A.m
            return _js_object_members(right, ".".join(path[:-1]), "method", src) or None
        return None
    if path == ["module", "exports"] and right.type == "object":
        return _js_object_members(right, "module.exports", "function", src) or None
    kind = "function"
    if len(path) >= 3 and path[-2] == "prototype":
        path = path[:-2] + path[-1:]
        kind = "method"
    d = _js_value_def(".".join(path), right, node, node, [], kind)
    return [d] if d is not None else None


def _js_export(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if node.child_by_field_name("declaration") is not None:
        return None  # the declaration's own handler widens its span to this statement
    value = node.child_by_field_name("value")
    is_default = any(c.type == "default" for c in node.children)
    if value is None or not is_default:
        return None
    d = _js_value_def("default", value, node, node, _js_decorators(node), "function")
    return [d] if d is not None else None


def _ts_named(kind: str, body_field: str) -> Handler:
    def handler(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        unit = _js_unit(node)
        return [make_def(text(name, src), kind, unit, unit, body=node.child_by_field_name(body_field))]
    return handler


def _ts_namespace(node: Node, src: bytes, parent_kind: str | None, unit: Node | None = None
                  ) -> list[Def] | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, src)
    if name_node.type == "string":
        name = name[1:-1]
    unit = unit if unit is not None else _js_unit(node)
    if unit.type == "expression_statement" and _js_unit(unit) is not unit:
        unit = _js_unit(unit)
    body = node.child_by_field_name("body")
    return [make_def(name, "namespace", unit, unit, body=body, scope=body)]


def _js_handlers(typescript: bool) -> dict[str, Handler]:
    handlers: dict[str, Handler] = {
        "function_declaration": _js_function,
        "generator_function_declaration": _js_function,
        "class_declaration": _js_class,
        "method_definition": _js_method,
        "field_definition": _js_field,
        "lexical_declaration": _js_variables,
        "variable_declaration": _js_variables,
        "expression_statement": _js_expression_statement,
        "export_statement": _js_export,
    }
    if typescript:
        handlers.update({
            "abstract_class_declaration": _js_class,
            "public_field_definition": _js_field,
            "abstract_method_signature": _js_method_signature,
            "method_signature": _js_method_signature,
            "function_signature": _js_function_signature,
            "interface_declaration": _ts_named("interface", "body"),
            "type_alias_declaration": _ts_named("type", "value"),
            "enum_declaration": _ts_named("enum", "body"),
            "internal_module": _ts_namespace,
            "module": _ts_namespace,
        })
    return handlers


def _js_string(node: Node, src: bytes) -> bytes | None:
    """A JS string literal as one token, its quote style normalised (``'a'`` == ``"a"``)."""
    raw = src[node.start_byte:node.end_byte]
    if len(raw) < 2 or raw[:1] not in (b"'", b'"') or raw[-1:] != raw[:1]:
        return None
    return b"S|" + _unescape_quotes(raw[1:-1])


def _js_drop_semicolon(parent: str, grandparent: str) -> bool:
    # Statement terminators are optional under ASI; the ones inside `for (;;)` and
    # the empty statement `;` are not.
    return parent != "empty_statement" and grandparent not in ("for_statement", "for_in_statement")


#: JS binary operators by binding strength (MDN's table). ``??`` never mixes
#: with ``||`` / ``&&`` without parentheses; ``**`` is right-associative.
_JS_PRECEDENCE: dict[str, int] = {
    "??": 1, "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
    "==": 6, "!=": 6, "===": 6, "!==": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "instanceof": 7, "in": 7,
    "<<": 8, ">>": 8, ">>>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11,
}


def _js_spec(name: str, typescript: bool) -> LanguageSpec:
    return LanguageSpec(
        name=name,
        handlers=_js_handlers(typescript),
        barriers=frozenset({"object", "class", "class_body", "object_type", "interface_body", "string",
                            "template_string", "regex", "jsx_text"}),
        comment_types=_JS_COMMENTS,
        atomic={"string": _js_string},
        lowercase=frozenset({"number"}),
        squash_ws=frozenset({"jsx_text"}),
        drop_semicolon=_js_drop_semicolon,
        paren_parents=frozenset({"return_statement", "variable_declarator", "assignment_expression",
                                 "arrow_function", "throw_statement"}),
        paren_keep_inner=frozenset({"object", "sequence_expression", "object_pattern"}),
        bare_param_field="parameter",
        precedence=_JS_PRECEDENCE,
        written_name=_js_written_name,
    )


#: ``Axios#request`` (the JSDoc / MDN form of an instance member) and ``Axios.prototype.request``.
@functools.cache
def _js_instance_sep() -> re.Pattern[str]:
    """The pattern, compiled on first use (see the note after the imports)."""
    return re.compile(r"(?<=[\w$])#(?=[A-Za-z_$])|\.prototype\.")


def _js_written_name(name: str) -> str:
    """``Axios#request`` / ``Axios.prototype.request`` -> ``Axios.request`` (a private ``A.#x`` is kept)."""
    return _js_instance_sep().sub(".", name)


JAVASCRIPT = _js_spec("javascript", typescript=False)
TYPESCRIPT = _js_spec("typescript", typescript=True)
TSX = _js_spec("tsx", typescript=True)


# --------------------------------------------------------------------------- Go


def _go_type_name(node: Node | None, src: bytes) -> str:
    """Base name of a Go receiver type: ``*List[T]`` -> ``List``."""
    while node is not None and node.type in ("pointer_type", "parenthesized_type", "generic_type"):
        if node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:
            node = node.named_children[0] if node.named_child_count else None
    if node is None:
        return ""
    return re.sub(r"[\s*()]|\[.*", "", text(node, src))


def _go_function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    qualified = text(name, src)
    kind = "function"
    if node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        params = [c for c in receiver.named_children if c.type == "parameter_declaration"] if receiver else []
        recv = _go_type_name(params[0].child_by_field_name("type"), src) if params else ""
        if recv:
            qualified = f"{recv}.{qualified}"
        kind = "method"
    body = node.child_by_field_name("body")
    return [make_def(qualified, kind, node, node, body=body, scope=body)]


_GO_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _go_types(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    out: list[Def] = []
    for spec in specs:
        name = spec.child_by_field_name("name")
        typ = spec.child_by_field_name("type")
        if name is None:
            continue
        kind = "type" if spec.type == "type_alias" or typ is None else _GO_TYPE_KINDS.get(typ.type, "type")
        span = node if len(specs) == 1 else spec
        out.append(make_def(text(name, src), kind, span, span, body=typ))
    return out


GO = LanguageSpec(
    name="go",
    handlers={"function_declaration": _go_function, "method_declaration": _go_function,
              "type_declaration": _go_types},
    barriers=frozenset({"interpreted_string_literal", "raw_string_literal", "import_declaration"}),
    # gofmt turns `a; b` into two lines; the `;` in for / if / switch headers stay.
    drop_semicolon=lambda parent, grandparent: parent not in (
        "for_clause", "if_statement", "expression_switch_statement", "type_switch_statement"),
)


# --------------------------------------------------------------------------- Rust

_RUST_COMMENTS = frozenset({"line_comment", "block_comment"})
_RUST_ATTRS = frozenset({"attribute_item"})


def _rust_type_name(node: Node | None, src: bytes) -> str:
    """Base name of an ``impl`` target: ``Foo<T>`` -> ``Foo``, ``&mut a::Foo`` -> ``Foo``,
    ``dyn Foo`` -> ``Foo``; other types (tuples, arrays) as written without spaces."""
    while node is not None:
        if node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        elif node.type == "dynamic_type":
            node = node.child_by_field_name("trait")
        elif node.type == "bounded_type":  # dyn A + Send: the first bound names it
            node = node.named_children[0] if node.named_child_count else None
        elif node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            break
    return "".join(text(node, src).split())


def _rust_item(kind: str, body_field: str | None = "body", scope_kind: str | None = None) -> Handler:
    def handler(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        attrs = _leading(node, _RUST_ATTRS, _RUST_COMMENTS)
        item_kind = kind
        if kind == "function" and parent_kind in ("impl", "trait"):
            item_kind = "method"
        body: Node | tuple[int, int] | None = node.child_by_field_name(body_field) if body_field else None
        if node.type == "macro_definition":  # macro_rules! name { rules }: the rules are the body
            rules = [c for c in node.children if c.start_byte >= name.end_byte]
            body = (rules[0].start_byte, rules[-1].end_byte) if rules else None
        scope = body if scope_kind is not None or kind in ("function", "module") else None
        return [make_def(text(name, src), item_kind, (attrs or [node])[0], node, body=body, decorators=attrs,
                         scope=scope if not isinstance(scope, tuple) else None, scope_kind=scope_kind,
                         key=_rust_cfg_key(attrs, src))]
    return handler


def _rust_cfg_key(attrs: list[Node], src: bytes) -> str:
    """The ``cfg`` attributes of an item, without spaces: ``[cfg(unix)]``, ``[cfg(test)][cfg(feature="x")]``;
    "" when it has none."""
    out = []
    for attr in attrs:
        inner = "".join(text(attr, src).split())
        if inner.startswith("#[cfg(") and inner.endswith("]"):
            out.append(inner[1:])
    return "".join(out)


def _rust_impl(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _rust_type_name(node.child_by_field_name("type"), src)
    body = node.child_by_field_name("body")
    if not name or body is None:
        return None
    return [make_def(name, "impl", node, node, scope=body, scope_kind="impl", emit=False)]


RUST = LanguageSpec(
    name="rust",
    handlers={
        "function_item": _rust_item("function"),
        "function_signature_item": _rust_item("function", body_field=None),
        "struct_item": _rust_item("struct"),
        "union_item": _rust_item("union"),
        "enum_item": _rust_item("enum"),
        "trait_item": _rust_item("trait", scope_kind="trait"),
        "type_item": _rust_item("type", body_field="type"),
        "mod_item": _rust_item("module"),
        "macro_definition": _rust_item("macro", body_field=None),
        "impl_item": _rust_impl,
    },
    barriers=frozenset({"string_literal", "raw_string_literal", "token_tree", "use_declaration"}),
    comment_types=_RUST_COMMENTS,
    tuple_types=frozenset({"tuple_expression", "tuple_type", "tuple_pattern"}),
    comma_after_block=frozenset({"match_arm"}),
    same_name="key",
)


# --------------------------------------------------------------------------- Java

_JAVA_COMMENTS = frozenset({"line_comment", "block_comment"})
_JAVA_TYPES = {
    "class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
    "record_declaration": "record", "annotation_type_declaration": "annotation",
}


def _java_annotations(node: Node) -> list[Node]:
    for child in node.children:
        if child.type == "modifiers":
            return [c for c in child.children if c.type in ("annotation", "marker_annotation")]
    return []


def _java_decl(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    if node.type in _JAVA_TYPES:
        return [make_def(text(name, src), _JAVA_TYPES[node.type], node, node, body=body,
                         decorators=_java_annotations(node), scope=body, scope_kind="class")]
    kind = "method" if node.type == "method_declaration" else "constructor"
    return [make_def(text(name, src), kind, node, node, body=body, decorators=_java_annotations(node),
                     scope=body, key=_java_param_key(node, src))]


def _java_type(node: Node | None, src: bytes) -> str:
    """A parameter type as a person reads it: no spaces, no package (``java.util.List<String>`` ->
    ``List<String>``)."""
    return re.sub(r"(?:\w+\.)+(?=\w)", "", "".join(text(node, src).split()))


def _java_param_key(node: Node, src: bytes) -> str:
    """``(String,int[],Object...)``: the parameter types of a method or constructor (``""`` for a
    record's compact constructor, which has no parameter list)."""
    params = node.child_by_field_name("parameters")
    if params is None:
        return ""
    types = []
    for p in params.named_children:
        if p.type == "formal_parameter":
            dims = p.child_by_field_name("dimensions")
            types.append(_java_type(p.child_by_field_name("type"), src) + "".join(text(dims, src).split()))
        elif p.type == "spread_parameter":
            typ = next((c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None)
            types.append(_java_type(typ, src) + "...")
    return "(" + ",".join(types) + ")"


JAVA = LanguageSpec(
    name="java",
    handlers={t: _java_decl for t in (*_JAVA_TYPES, "method_declaration", "constructor_declaration",
                                      "compact_constructor_declaration")},
    barriers=frozenset({"class_body", "string_literal", "import_declaration"}),
    comment_types=_JAVA_COMMENTS,
    same_name="key",
)

# --------------------------------------------------------------------------- C#

_CS_TYPES = {
    "class_declaration": "class", "struct_declaration": "struct", "interface_declaration": "interface",
    "record_declaration": "record", "record_struct_declaration": "record", "enum_declaration": "enum",
}
_CS_MEMBERS = {
    "method_declaration": "method", "constructor_declaration": "constructor",
    "destructor_declaration": "destructor", "property_declaration": "property",
    "local_function_statement": "function", "indexer_declaration": "indexer",
    "operator_declaration": "operator", "conversion_operator_declaration": "operator",
    "delegate_declaration": "delegate",
}


_CS_BY_REF = frozenset({"ref", "out", "in"})


def _cs_attributes(node: Node) -> list[Node]:
    return [c for c in node.children if c.type == "attribute_list"]


def _cs_name(node: Node, src: bytes) -> str:
    """The member's name as C# writes it: ``~G`` (destructor), ``this`` (indexer), ``operator+``,
    ``implicit operator int``; "" when it has none."""
    if node.type == "indexer_declaration":
        return "this"
    if node.type == "operator_declaration":
        return "operator" + text(node.child_by_field_name("operator"), src)
    if node.type == "conversion_operator_declaration":
        way = next((c.type for c in node.children if c.type in ("implicit", "explicit")), "")
        return f"{way} operator {_java_type(node.child_by_field_name('type'), src)}".strip()
    name = text(node.child_by_field_name("name"), src)
    return "~" + name if node.type == "destructor_declaration" and name else name


def _cs_decl(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    label = _cs_name(node, src)
    if not label:
        return None
    attrs = _cs_attributes(node)
    if node.type in _CS_TYPES:
        body = node.child_by_field_name("body")
        return [make_def(label, _CS_TYPES[node.type], node, node, body=body, decorators=attrs,
                         scope=body, scope_kind="class")]
    kind = _CS_MEMBERS[node.type]
    body = node.child_by_field_name("body") or node.child_by_field_name("accessors") \
        or node.child_by_field_name("value")
    key = "" if kind == "property" else _cs_param_key(node, src)
    return [make_def(label, kind, node, node, body=body, decorators=attrs, scope=body, key=key)]


def _cs_param_key(node: Node, src: bytes) -> str:
    """``(int,List<T>,object[])``: the parameter types of a C# method or constructor, without spaces or
    namespaces (``params object[] rest`` -> ``object[]``, ``this string s`` -> ``string``)."""
    params = node.child_by_field_name("parameters")
    if params is None:
        return ""
    types = []
    for i, p in enumerate(params.children):
        if p.type == "parameter":  # ``ref`` / ``out`` / ``in`` tell overloads apart: ``F(ref int)``
            mods = [text(m, src) for m in p.children if m.type == "modifier" and text(m, src) in _CS_BY_REF]
            types.append(" ".join([*mods, _java_type(p.child_by_field_name("type"), src)]))
        elif params.field_name_for_child(i) == "type":  # the grammar inlines a ``params T[] x`` parameter
            types.append(_java_type(p, src))
    return "(" + ",".join(types) + ")"


CSHARP = LanguageSpec(
    name="csharp",
    handlers={t: _cs_decl for t in (*_CS_TYPES, *_CS_MEMBERS)},
    barriers=frozenset({"using_directive", "string_literal", "verbatim_string_literal", "raw_string_literal",
                        "interpolated_string_expression", "anonymous_object_creation_expression"}),
    comment_types=frozenset({"comment"}),
    same_name="key",
    # `$"{t:HH:mm}"`: the format after the `:` has no node of its own.
    text_gaps=frozenset({"interpolation_format_clause"}),
)

# --------------------------------------------------------------------------- Kotlin

_KT_COMMENTS = frozenset({"line_comment", "multiline_comment"})
_KT_ACCESSORS = frozenset({"getter", "setter"})


def _kt_child(node: Node, *types: str) -> Node | None:
    return next((c for c in node.children if c.type in types), None)


def _kt_annotations(node: Node) -> list[Node]:
    mods = _kt_child(node, "modifiers")
    return [] if mods is None else [c for c in mods.children if c.type == "annotation"]


def _kt_receiver(node: Node, src: bytes) -> str:
    """``Receiver.`` for an extension (``fun List<T>.second()`` -> ``List.``, ``Sample?`` -> ``Sample.``,
    ``a.b.C`` -> ``C.``); "" for a plain declaration."""
    recv = _kt_child(node, "receiver_type")
    if recv is None:
        return ""
    base = re.sub(r"<.*>", "", "".join(text(recv, src).split())).rstrip("?").strip("()")
    return base.rsplit(".", 1)[-1] + "." if base else ""


def _kt_class(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _kt_child(node, "type_identifier")
    if node.type == "companion_object":
        kind, label = "object", text(name, src) if name is not None else "Companion"
    elif name is None:
        return None
    else:
        keywords = {c.type for c in node.children}
        kind = ("object" if node.type == "object_declaration" else "interface" if "interface" in keywords
                else "enum" if "enum" in keywords else "class")
        label = text(name, src)
    body = _kt_child(node, "class_body", "enum_class_body")
    return [make_def(label, kind, node, node, body=body, decorators=_kt_annotations(node), scope=body,
                     scope_kind="class")]


def _kt_function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    if node.type == "secondary_constructor":
        label, kind = "constructor", "constructor"
    else:
        name = _kt_child(node, "simple_identifier")
        if name is None:
            return None
        label = _kt_receiver(node, src) + text(name, src)
        kind = "method" if parent_kind == "class" else "function"
    body: Node | tuple[int, int] | None = _kt_child(node, "function_body")
    if node.type == "secondary_constructor":  # its block is not wrapped in a node: what follows the header
        head = [c for c in node.children if c.type in ("function_value_parameters", "constructor_delegation_call")]
        rest = [c for c in node.children if head and c.start_byte >= head[-1].end_byte]
        body = (rest[0].start_byte, node.end_byte) if rest else None
    return [make_def(label, kind, node, node, body=body, decorators=_kt_annotations(node),
                     scope=body if not isinstance(body, tuple) else None, key=_kt_param_key(node, src))]


def _kt_param_key(node: Node, src: bytes) -> str:
    """``(Int,List<String>,String...)``: parameter types without spaces or packages (``vararg`` as ``...``)."""
    params = _kt_child(node, "function_value_parameters")
    if params is None:
        return ""
    types, vararg = [], False
    for p in params.named_children:
        if p.type == "parameter_modifiers":
            vararg = "vararg" in text(p, src).split()
        elif p.type == "parameter":
            typ = p.named_children[-1] if p.named_child_count > 1 else None
            types.append(_java_type(typ, src) + ("..." if vararg else ""))
            vararg = False
    return "(" + ",".join(types) + ")"


def _kt_property(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    var = _kt_child(node, "variable_declaration")
    name = _kt_child(var, "simple_identifier") if var is not None else None
    if name is None or parent_kind not in (None, "class"):  # destructuring and locals are not symbols
        return None
    last = node
    nxt = _named_next(node, _KT_COMMENTS)
    while nxt is not None and nxt.type in _KT_ACCESSORS:  # the grammar puts a getter on its own line beside it
        last, nxt = nxt, _named_next(nxt, _KT_COMMENTS)
    after = [c for c in node.children if c.start_byte >= var.end_byte and c.type != "="] if var else []
    first_body = after[0] if after else (last if last is not node else None)
    body = (first_body.start_byte, last.end_byte) if first_body is not None else None
    return [make_def(_kt_receiver(node, src) + text(name, src), "property", node, last, body=body,
                     decorators=_kt_annotations(node))]


def _kt_alias(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _kt_child(node, "type_identifier")
    return None if name is None else [make_def(text(name, src), "type", node, node)]


#: ``class Name`` (type parameters too) then a line break before its primary constructor's modifiers and
#: ``constructor(``: group 1 is the stretch between (comments included), group 2 the modifiers.
@functools.cache
def _kt_ctor_on_next_line_re() -> re.Pattern[bytes]:
    """The pattern, compiled on first use (see the note after the imports)."""
    return re.compile(
        rb"\b(?:class|object)[ \t]+[A-Za-z_]\w*(?:<[^{}()\n]*>)?((?:[ \t]*(?://[^\n]*)?\n)+[ \t]*)"
        rb"((?:@\w+(?:\([^()]*\))?[ \t]+|(?:public|private|internal|protected)[ \t]+)*)constructor[ \t]*\(")


#: Line comments in the stretch ``_kt_ctor_on_next_line_re`` finds.
@functools.cache
def _kt_noise_re() -> re.Pattern[bytes]:
    """The pattern, compiled on first use (see the note after the imports)."""
    return re.compile(rb"//[^\n]*")


def _kt_prepare(src: bytes) -> bytes:
    """The source as parsed: tree-sitter-kotlin cannot read a primary constructor on the line after the
    class name (``open class ByteString`` / ``internal constructor(...) : Base {``, legal Kotlin), and then
    reads the class's members as top-level functions. There the line breaks (and line comments) between the
    name and the constructor become spaces, and as many spaces of the indentation right after the body's ``{``
    become line breaks: same length, and every member on its own line as before (the head's lines shift).
    Left as it is when the body's ``{`` is not found or has too little indentation after it."""
    if b"constructor" not in src:
        return src
    out = bytearray(src)
    for m in _kt_ctor_on_next_line_re().finditer(src):
        breaks = m.group(1).count(b"\n")
        # The constructor's parameters, then up to the body's `{` (no blank line, no `fun` / `class` between).
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {40: 1, 41: -1}.get(src[i], 0)
            i += 1
        brace = src.find(b"{", i)
        if depth or brace < 0 or b"\n\n" in src[i:brace] or re.search(rb"\b(?:fun|class|val|var)\b", src[i:brace]):
            continue
        ws = re.match(rb"[ \t\n]*", src[brace + 1:])
        run = bytearray(ws.group(0) if ws else b"")
        spaces = [k for k, c in enumerate(run) if c in b" \t"]
        if len(spaces) < breaks:
            continue
        for k in spaces[:breaks]:
            run[k] = 10
        out[brace + 1:brace + 1 + len(run)] = run
        gap = _kt_noise_re().sub(lambda c: b" " * len(c.group(0)), m.group(1)).replace(b"\n", b" ")
        out[m.start(1):m.end(1)] = gap
    return bytes(out)


KOTLIN = LanguageSpec(
    name="kotlin",
    handlers={
        "class_declaration": _kt_class, "object_declaration": _kt_class, "companion_object": _kt_class,
        "function_declaration": _kt_function, "secondary_constructor": _kt_function,
        "property_declaration": _kt_property, "type_alias": _kt_alias,
    },
    barriers=frozenset({"package_header", "import_list", "string_literal", "object_literal",
                        "anonymous_initializer"}),  # an init block's vals are locals, not properties
    comment_types=_KT_COMMENTS,
    same_name="key",
    # Text the grammar gives no node: the `?` of `String?`, the character of `'a'`, the `u` of `1u`,
    # the digits of `\u00e9`.
    text_gaps=frozenset({"ERROR", "nullable_type", "character_literal", "unsigned_literal",
                         "character_escape_seq"}),
    prepare=_kt_prepare,
)


# --------------------------------------------------------------------------- Ruby

_RUBY_SINGLETON_KEY = "[self]"  # names `def self.x` apart from an instance method `x` of the same class


def _ruby_const_path(node: Node | None, src: bytes) -> str:
    """``Outer::Inner`` / ``::Top`` as gitmem's dotted name (``Outer.Inner``, ``Top``)."""
    return ".".join(p for p in re.split(r"\s*::\s*", text(node, src).strip()) if p)


def _ruby_module(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = _ruby_const_path(node.child_by_field_name("name"), src)
    if not name:
        return None
    body = node.child_by_field_name("body")
    kind = "module" if node.type == "module" else "class"
    return [make_def(name, kind, node, node, body=body, scope=body, scope_kind=kind)]


def _ruby_in_singleton_class(node: Node) -> bool:
    """Is ``node`` (a ``def``) directly in a ``class << self`` block?"""
    up = node.parent
    if up is not None and up.type == "body_statement":
        up = up.parent
    if up is None or up.type != "singleton_class":
        return False
    value = up.child_by_field_name("value")
    return value is not None and value.type == "self"


def _ruby_method(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, src)
    body = node.child_by_field_name("body")
    key = ""
    if node.type == "singleton_method":
        obj = node.child_by_field_name("object")
        if obj is not None and obj.type == "self":
            key = _RUBY_SINGLETON_KEY
        else:  # def Foo.bar / def obj.bar: named by its receiver
            name = f"{_ruby_const_path(obj, src)}.{name}"
    elif _ruby_in_singleton_class(node):
        key = _RUBY_SINGLETON_KEY
    kind = "method" if parent_kind in ("class", "module") or node.type == "singleton_method" else "function"
    return [make_def(name, kind, node, node, body=body, scope=body, key=key)]


def _ruby_string(node: Node, src: bytes) -> bytes | None:
    """A Ruby string without interpolation or escapes as one token, quote style normalised
    (``'a'`` == ``"a"``); anything else falls back to its children."""
    raw = src[node.start_byte:node.end_byte]
    if len(raw) < 2 or raw[:1] not in (b"'", b'"') or raw[-1:] != raw[:1]:
        return None
    if any(c.type not in ("string_content", '"', "'") for c in node.children) or b"\\" in raw:
        return None
    return b"S|" + raw[1:-1]


def _ruby_written_name(name: str) -> str:
    """``A::B#m`` / ``A::B::m`` / ``::A.m`` -> ``A.B.m``; a ``#2`` numbering suffix is kept."""
    name = re.sub(r"#(?=[^\d])", ".", name)
    return ".".join(p for p in name.split("::") if p).replace("..", ".")


#: The last separator of a typed Ruby name and the method after it (``Invoice#total``, ``Invoice::total``).
@functools.cache
def _ruby_last_sep() -> re.Pattern[str]:
    """The pattern, compiled on first use (see the note after the imports)."""
    return re.compile(r"(#|::|\.)\s*([^#:.\[\]]+)\Z")


def _ruby_written_choices(name: str) -> list[list[str]]:
    """What a typed Ruby method name means when a class has both ``def self.m`` (gitmem's ``A.m[self]``) and
    ``def m`` (``A.m``): ``A#m`` the instance method, ``A::m`` the class method (each finds the other when
    it is the only one), ``A.m`` and a bare ``m`` either (both: ambiguous). Constants (``A::B``), numbered
    (``A.m#2``) and keyed (``A.m[self]``) names mean themselves."""
    dotted = _ruby_written_name(name)
    m = _ruby_last_sep().search(name.strip())
    if m is None and re.fullmatch(r"[a-z_]\w*[?!=]?", name.strip()):  # a bare method name: either
        return [[name.strip(), name.strip() + _RUBY_SINGLETON_KEY]]
    if m is None or m.group(2)[:1].isupper() or m.group(2).isdigit() or m.start() == 0:
        return [[name], [dotted]] if dotted != name else [[name]]
    instance, singleton = dotted, dotted + _RUBY_SINGLETON_KEY
    if m.group(1) == "#":
        return [[instance], [singleton]]
    if m.group(1) == "::":
        return [[singleton], [instance]]
    return [[instance, singleton]]


RUBY = LanguageSpec(
    name="ruby",
    handlers={"class": _ruby_module, "module": _ruby_module,
              "method": _ruby_method, "singleton_method": _ruby_method},
    barriers=frozenset({"string", "heredoc_body", "regex"}),
    atomic={"string": _ruby_string},
    lowercase=frozenset({"integer", "float"}),
    # `def f; end` is `def f` + newline + `end`: a `;` only separates statements.
    drop_semicolon=lambda parent, grandparent: True,
    # `def f()` is `def f`: empty parameter parentheses are formatting (RuboCop removes them).
    drop_empty=frozenset({("method", "method_parameters"), ("singleton_method", "method_parameters")}),
    same_name="key",
    written_name=_ruby_written_name,
    written_choices=_ruby_written_choices,
)


# --------------------------------------------------------------------------- PHP

_PHP_TYPES = {
    "class_declaration": "class", "interface_declaration": "interface",
    "trait_declaration": "trait", "enum_declaration": "enum",
}


def _php_attributes(node: Node) -> list[Node]:
    attrs = node.child_by_field_name("attributes")
    return [attrs] if attrs is not None else []


def _php_decl(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    if node.type in _PHP_TYPES:
        return [make_def(text(name, src), _PHP_TYPES[node.type], node, node, body=body,
                         decorators=_php_attributes(node), scope=body, scope_kind="class")]
    kind = "method" if node.type == "method_declaration" else "function"
    return [make_def(text(name, src), kind, node, node, body=body, decorators=_php_attributes(node), scope=body)]


def _php_string(node: Node, src: bytes) -> bytes | None:
    """A PHP string without interpolation or escapes as one token, quote style normalised
    (``'a'`` == ``"a"``); anything else falls back to its children."""
    raw = src[node.start_byte:node.end_byte]
    if len(raw) < 2 or raw[:1] not in (b"'", b'"') or raw[-1:] != raw[:1] or b"\\" in raw:
        return None
    if any(c.type not in ("string_content", '"', "'") for c in node.children):
        return None
    return b"S|" + raw[1:-1]


def _php_written_name(name: str) -> str:
    r"""``\App\Http\Ctl::show`` / ``Ctl->show`` -> ``Ctl.show`` (namespaces are not part of names)."""
    name = name.replace("->", ".").replace("::", ".")
    return name.rsplit("\\", 1)[-1]


PHP = LanguageSpec(
    name="php",
    handlers={t: _php_decl for t in (*_PHP_TYPES, "method_declaration", "function_definition")},
    barriers=frozenset({"string", "encapsed_string", "heredoc", "nowdoc", "namespace_use_declaration"}),
    atomic={"string": _php_string, "encapsed_string": _php_string},
    lowercase=frozenset({"integer", "float"}),
    written_name=_php_written_name,
)
