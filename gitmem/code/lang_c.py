"""C and C++ symbol rules (tree-sitter ``c`` and ``cpp`` grammars).

Files: ``.c`` is C; ``.h`` is **C++** (tree-sitter-cpp reads almost all C
headers, while the C grammar misreads every C++ header: classes, namespaces,
templates), as are ``.cc .cpp .cxx .c++`` and ``.hpp .hh .hxx .h++ .ipp .tpp
.inl``. A C++ file whose C++ parse has errors and that has no C++ syntax at all
(no ``::``, ``class``, ``namespace``, ``template`` ... outside comments and
strings) is re-read with the C grammar: C headers that wrap declarations in
macros (``CJSON_PUBLIC(cJSON *) cJSON_Parse(...)``). Names come out the same
from both grammars, so a C header and its ``.c`` source share names.

Kinds: ``function``, ``method``, ``constructor`` (``A.A``), ``destructor``
(``A.~A``), ``operator`` (``A.operator==``, ``A.operator()``, ``A.operator bool``,
free ``operator<<``), ``class``, ``struct``, ``union``, ``enum``, ``namespace``,
``type`` (``typedef``, ``using X = ...``), ``macro`` (``#define``, object-like and
function-like; an include guard's empty ``#define`` is not one). A ``template<...>``
header is part of the span. A friend function defined in its class is named under
the class (``A.operator==``, a ``function`` or ``operator``). Variables, enumerators,
fields, friend declarations, forward declarations (``struct X;``) and lambdas are
not symbols; nothing inside a function body is. A function-like macro call that
reads as a definition, gtest's ``TEST(Suite, Name) {...}``, is a function ``TEST``
keyed by its arguments (``TEST(Suite,Name)`` when a file has several).

Names (the rules, exactly):

* Nesting joins with ``.``: a named namespace adds its name (``namespace a::b``
  adds ``a.b``); an anonymous or ``inline`` namespace and ``extern "C"`` add
  nothing; a class, struct or union adds its name.
* An out-of-line definition is named by its qualifier: ``void ns::A::f() {}`` is
  ``ns.A.f`` at top level, and inside ``namespace ns {}`` too (a qualifier that
  starts with the whole enclosing namespace path drops it). It is a ``method``
  unless its qualifier's last part is a namespace declared in the same file
  (then a ``function``); ``A::A`` is a constructor, ``A::~A`` a destructor.
* Template arguments: a class specialisation keeps them (``formatter<bytes>``,
  spaces and qualifiers removed as for parameter types); in an out-of-line
  qualifier they are dropped under a ``template<...>`` with parameters
  (``template<class T> void A<T>::f()`` is ``A.f``) and kept under ``template<>``
  or none. A function template specialisation ``f<int>`` is ``f``.
* ``typedef struct X {...} Y;`` is the struct ``X`` (span: the typedef) and the
  type ``Y``; ``typedef struct {...} Y;`` is the struct ``Y``.
* Class-like declarations written ``class EXPORT_MACRO Name {`` (an all-caps
  word between the keyword and the name) are read with the macro blanked out.

Several definitions of one name (``same_name="join"``): definitions and
declarations with the same qualified name and the same parameter key are **one
symbol** — a method declared in its class and defined out of line below, a
prototype and its definition, ``#ifdef`` alternatives, a reopened namespace. The
declarations count as signatures (``Def.stub``): a change to the declaration or
to the definition changes the symbol's fingerprint; its span is the definitions'
(those with a body), or from the first declaration to the last when there is no
definition in the file. When one name has several parameter keys (overloads), each is named
by its key: ``A.f(int)``, ``A.f(const char*,size_t)``, ``A.get()const``; a name
with one key keeps the plain name. C has no overloads: a C file's keys are empty
(every ``f`` is the one ``f``).

The parameter key (``_param_key``): each parameter's type as written with its
name and default value removed, comments removed, whitespace removed except one
space between two words (``unsigned int``, ``const char*``), qualifiers dropped
(``std::vector<std::string>&`` -> ``vector<string>&``), ``struct`` / ``union`` /
``enum`` / ``class`` / ``typename`` dropped, ``T const`` written ``const T``, a
top-level ``const`` of the parameter itself dropped (``const int`` -> ``int``,
``char* const`` -> ``char*``: it does not change the function's type), one
array dimension ``T[N]`` -> ``T*``, ``(void)`` -> ``()``, ``Args... args`` ->
``Args...``; joined by ``,`` in parentheses, followed by the method's
qualifiers without spaces (``const``, ``volatile``, ``&``, ``&&``).

Written names (``written_name``): ``ns::A::f``, ``::ns::A::f``, ``A::f(const
char *, size_t)`` and gitmem's ``ns.A.f`` are the same; types in brackets are
normalised as above, and a signature copied from the code (``A::f(const char
*xml, size_t n = 0)``) has its parameter names and default values dropped
when the table has no name with them.

Fingerprints: ``//`` and ``/* */`` comments (doc comments too) are left out; a
macro's replacement text is one token of its C tokens (comments, line
continuations and spacing out); a trailing comma before ``}`` is formatting;
adjacent plain string literals are one (``"ab" "c"`` == ``"abc"``: clang-format
splits long ones); ``#  define`` is ``#define``.
Preprocessor conditionals inside a function are part of its body.
In a declaration without a body (a prototype, a method declared in its class,
a function-pointer field) the parameter names are left out (``void f(char
*json);`` == ``void f(char *text);``: a name there changes neither the type nor
any code); their types, qualifiers and C++ default values count. A
definition's parameter names count (its body uses them).
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING

from .languages import Def, Handler, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node

_CLASS_KINDS = {"class_specifier": "class", "struct_specifier": "struct", "union_specifier": "union",
                "enum_specifier": "enum"}
#: Node types that may hold definitions (anything else is pruned: expressions, bodies).
_DESCEND = frozenset({
    "translation_unit", "declaration_list", "field_declaration_list", "linkage_specification",
    "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
    "declaration", "field_declaration", "namespace_definition", "template_declaration",
    "class_specifier", "struct_specifier", "union_specifier", "labeled_statement", "compound_statement",
    "ERROR",
})
#: Declarator wrappers around a function declarator (``int *f()``, ``A& A::f()``).
_WRAPPERS = frozenset({"pointer_declarator", "reference_declarator", "attributed_declarator"})
#: The name node types of a function declarator that make it a function (not a function pointer).
_FUNC_NAMES = frozenset({"identifier", "field_identifier", "qualified_identifier", "destructor_name",
                         "operator_name", "template_function", "operator_cast"})
_METHOD_QUALS = frozenset({"type_qualifier", "ref_qualifier"})

# --------------------------------------------------------------------------- text normalisation

_COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_QUALIFIER_RE = re.compile(r"(?<![\w>])(?:[A-Za-z_]\w*(?:<[^<>]*>)?::)+(?=[~A-Za-z_])|^::|(?<=[(<,])::")
_ELABORATED_RE = re.compile(r"\b(?:struct|union|enum|class|typename) (?=[A-Za-z_])")
_EAST_CONST_RE = re.compile(r"\b([A-Za-z_][\w<>,:]*) const\b")


def _squash(s: str) -> str:
    """Whitespace out, except one space between two word characters."""
    s = re.sub(r"\s+", " ", s).strip()
    return re.sub(r"(?<!\w) | (?!\w)", "", s)


def norm_type(s: str) -> str:
    """A C/C++ parameter type as written -> its key form (the module docstring's rules):
    ``const std::string &`` -> ``const string&``, ``const int`` -> ``int``,
    ``char const * const`` -> ``const char*``."""
    s = _squash(_COMMENT_RE.sub(" ", s))
    s = _ELABORATED_RE.sub("", s)
    s = _QUALIFIER_RE.sub("", s)
    s = _EAST_CONST_RE.sub(r"const \1", s)
    if re.search(r"[*&\[(]", s) is None:
        s = re.sub(r"^(?:const|volatile) ", "", s)
    s = re.sub(r"\*(?:const|volatile)$", "*", s)
    if s.count("[") == 1 and "(" not in s:
        s = re.sub(r"\[[^\]]*\]$", "*", s)
    return s


# --------------------------------------------------------------------------- source preparation

_EXPORT_MACRO_RE = re.compile(
    rb"\b(?:class|struct|union)\s+([A-Z_][A-Z0-9_]*)(?=\s+[A-Za-z_]\w*\s*(?:<[^;{}]*>\s*)?(?:final\b\s*)?[:{])")


_DEFINE_RE = re.compile(rb"^[ \t]*#[ \t]*define\b(?:\\\r?\n|[^\n])*", re.M)
_BLOCK_COMMENT_RE = re.compile(rb"/\*.*?\*/", re.S)


def _blank(m: re.Match[bytes]) -> bytes:
    """The match with every byte but line breaks made a space."""
    return re.sub(rb"[^\n]", b" ", m.group(0))


#: A line that is only an upper-case identifier, indented: a candidate macro statement (``EXPECT_ABORT_BEGIN``,
#: ``Py_BEGIN_ALLOW_THREADS``). Macros are written in capitals by convention; a lower-case word alone on a
#: line is a type or an expression continued on the next line.
_LONE_MACRO_RE = re.compile(rb"^[ \t]+((?:[A-Za-z][a-z]*_)?[A-Z][A-Z0-9_]*)[ \t]*(?=\r?\n)", re.M)
#: What the brace scan of ``_macro_statements`` reads: comments, strings, character literals, preprocessor
#: lines (with their continuations), braces.
_BRACE_SCAN_RE = re.compile(
    rb"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|^[ \t]*#(?:\\\r?\n|[^\n])*|[{}]",
    re.M | re.S)
#: A ``{`` after one of these characters or words (spaces and comments aside) opens a block of statements (a
#: function body, ``if (...) {``, a nested block, ``else {``, ``int A::f() const {``); after anything else it
#: opens a class, an enum, a namespace or an initializer.
_CODE_BRACE_AFTER = frozenset(b"){};:")
_CODE_BRACE_WORD_RE = re.compile(rb"(?<![\w$])(?:else|do|try|const|noexcept|override)\Z")
#: How far back ``_opens_code`` looks before a ``{`` (bytes): past a comment between ``)`` and ``{``.
_BRACE_LOOKBACK = 200


def _opens_code(src: bytes, at: int) -> bool:
    """Does the ``{`` at ``at`` open a block of statements (``_CODE_BRACE_AFTER``)?"""
    before = src[max(0, at - _BRACE_LOOKBACK):at].rstrip()
    while before:
        if before.endswith(b"*/") and b"/*" in before:
            before = before[:before.rfind(b"/*")].rstrip()
            continue
        cut = before.find(b"//", before.rfind(b"\n") + 1)
        if cut < 0:
            break
        before = before[:cut].rstrip()
    return bool(before) and (before[-1] in _CODE_BRACE_AFTER or _CODE_BRACE_WORD_RE.search(before[-9:]) is not None)


#: The previous line of a macro statement ends a statement (or is a label, a block start, a directive).
_STATEMENT_END_RE = re.compile(rb"(?:[;{}:]|^[ \t]*#.*|\*/|//.*|^[ \t]*(?:[A-Za-z][a-z]*_)?[A-Z][A-Z0-9_]*)[ \t]*\Z")
#: The next line of a macro statement starts a statement (not ``(args)``, ``= value``, an operator).
_STATEMENT_START_RE = re.compile(rb"[ \t]*(?:[A-Za-z_}#]|//|/\*)")


def _macro_statements(src: bytes) -> bytes:
    """``EXPECT_ABORT_BEGIN`` alone on a line in a function body (a macro used as a statement without a
    ``;``) followed by ``;``: tree-sitter reads such a word as the return type of a function defined
    by the next statement, and its recovery runs on through the next real definitions (cJSON's Unity
    tests). Only inside a block of statements (a brace scan that skips comments, strings and
    directives), after a line that ends a statement and before one that starts one."""
    cands = [m for m in _LONE_MACRO_RE.finditer(src) if m.group(1) not in _VALUE_WORDS]
    if not cands:
        return src
    code_at: dict[int, bool] = {}
    stack: list[bool] = []
    todo = iter(cands)
    cand = next(todo, None)
    for m in _BRACE_SCAN_RE.finditer(src):
        while cand is not None and cand.start() < m.start():
            code_at[cand.start()] = bool(stack) and stack[-1]
            cand = next(todo, None)
        tok = m.group(0)
        if tok == b"{":
            stack.append(_opens_code(src, m.start()))
        elif tok == b"}" and stack:
            stack.pop()
    out: list[bytes] = []
    at = 0
    for m in cands:
        if not code_at.get(m.start()):
            continue
        prev_end = src.rfind(b"\n", 0, m.start())
        prev = src[src.rfind(b"\n", 0, max(prev_end, 0)) + 1:max(prev_end, 0)].rstrip(b"\r")
        nxt_start = src.find(b"\n", m.end()) + 1
        nxt = src[nxt_start:nxt_start + 80]
        while nxt.strip(b" \t\r").startswith(b"\n"):  # blank lines
            nxt_start = src.find(b"\n", nxt_start) + 1
            nxt = src[nxt_start:nxt_start + 80] if nxt_start else b""
        if prev_end >= 0 and not _STATEMENT_END_RE.search(prev) and prev.strip():
            continue
        if not _STATEMENT_START_RE.match(nxt):
            continue
        out += [src[at:m.end(1)], b";"]
        at = m.end(1)
    return b"".join(out) + src[at:] if out else src


#: Capitalised words that are values, never a statement.
_VALUE_WORDS = frozenset({b"NULL", b"TRUE", b"FALSE", b"EOF"})


def _prepare(src: bytes) -> bytes:
    """The source as parsed and hashed, same lines:

    * ``class API Foo {`` -> ``class     Foo {`` (the export macro expands to an attribute tree-sitter cannot know);
    * ``/* comments */`` inside a ``#define``'s replacement made spaces (tree-sitter's grammars misread the
      rest of such a macro, and comments are not fingerprinted anyway);
    * a macro statement without a ``;`` given one (``_macro_statements``).
    """
    src = _macro_statements(src)
    if b"/*" in src and b"define" in src:
        src = _DEFINE_RE.sub(lambda m: _BLOCK_COMMENT_RE.sub(_blank, m.group(0)) if b"/*" in m.group(0)
                             else m.group(0), src)
    if b"class" not in src and b"struct" not in src and b"union" not in src:
        return src
    return _EXPORT_MACRO_RE.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + b" " * len(m.group(1)), src)


_CPP_MARKER_RE = re.compile(
    rb"::|\b(?:class|namespace|template|typename|public|private|protected|virtual|operator|nullptr|constexpr"
    rb"|decltype|static_cast|reinterpret_cast|const_cast|dynamic_cast|noexcept|explicit|friend|mutable)\b")
_C_NOISE_RE = re.compile(rb'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def _c_fallback(src: bytes, root: Node) -> str | None:
    """``c`` for a source the C++ grammar cannot read (errors in its tree) and that has no C++ syntax outside
    comments and strings: a C header, whose macro-wrapped declarations (``CJSON_PUBLIC(cJSON *)
    cJSON_Parse(...)``) only the C grammar reads; None (keep the C++ tree) otherwise."""
    if not root.has_error or _CPP_MARKER_RE.search(_C_NOISE_RE.sub(b" ", src)):
        return None
    return "c"


# --------------------------------------------------------------------------- helpers

_local = threading.local()
#: One part of a qualified name: an identifier, with template arguments for a specialisation.
_NAME_PART_RE = re.compile(r"[A-Za-z_$][\w$]*(?:<[^{};#]*>)?")


def _file_namespaces(node: Node, src: bytes) -> frozenset[str]:
    """Every namespace name declared in ``node``'s file (cached for the current ``src``)."""
    cached = getattr(_local, "namespaces", None)
    if cached is not None and cached[0] is src:
        return frozenset(cached[1])
    root = node
    while root.parent is not None:
        root = root.parent
    names: set[str] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "namespace_definition":
            names.update(p for p in re.split(r"\W+", text(n.child_by_field_name("name"), src)) if p)
        if n.type in _DESCEND and n.type not in ("declaration", "field_declaration"):
            stack.extend(n.named_children)
    _local.namespaces = (src, names)
    return frozenset(names)


def _enclosing(node: Node, src: bytes) -> tuple[list[str], str]:
    """(the named, non-inline namespaces around ``node``, outermost first; the name of the class
    directly around it, "" when none)."""
    spaces: list[str] = []
    cls = ""
    up = node.parent
    while up is not None:
        if up.type == "namespace_definition" and not any(c.type == "inline" for c in up.children):
            name = text(up.child_by_field_name("name"), src)
            if name:
                spaces[:0] = [p for p in re.split(r"\s*::\s*", name) if p]
        elif not cls and up.type in ("class_specifier", "struct_specifier", "union_specifier"):
            cls = _base_name(up.child_by_field_name("name"), src)
        elif not cls and up.type == "function_definition" and _macro_class(up, src):
            cls = text(up.child_by_field_name("declarator"), src)
        up = up.parent
    return spaces, cls


def _base_name(node: Node | None, src: bytes) -> str:
    """A class name without template arguments (``A<T>`` -> ``A``, ``ns::A`` -> ``A``)."""
    if node is None:
        return ""
    if node.type == "template_type":
        node = node.child_by_field_name("name")
    if node is not None and node.type == "qualified_identifier":
        return _base_name(node.child_by_field_name("name"), src)
    return text(node, src)


def _type_name(node: Node | None, src: bytes, keep_args: bool = True) -> str:
    """A scope or class name: ``A``, ``formatter<bytes>`` (arguments normalised), or ``A`` without them."""
    if node is None:
        return ""
    if node.type == "template_type":
        name = text(node.child_by_field_name("name"), src)
        args = node.child_by_field_name("arguments")
        return name + (norm_type(text(args, src)) if keep_args and args is not None else "")
    return _squash(text(node, src))


def _operator_name(node: Node, src: bytes) -> str:
    """``operator ==`` -> ``operator==``; ``operator new []`` -> ``operator new[]``; ``operator const char *``
    -> ``operator const char*`` (the text before the parameter list)."""
    end = node.end_byte
    if node.type == "operator_cast":
        decl = node.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters") if decl is not None else None
        end = params.start_byte if params is not None else end
        typ = _squash(src[node.start_byte:end].decode("utf-8", "replace"))[len("operator"):]
        return "operator " + norm_type(typ)
    op = _squash(src[node.start_byte:end].decode("utf-8", "replace"))[len("operator"):].replace(" ", "")
    return "operator" + (" " if op[:1].isalpha() or op[:1] == "_" else "") + op


def _leaf(node: Node, src: bytes) -> str:
    if node.type == "destructor_name":
        return "~" + _squash(text(node, src)).lstrip("~")
    if node.type in ("operator_name", "operator_cast"):
        return _operator_name(node, src)
    if node.type == "template_function":
        return text(node.child_by_field_name("name"), src)
    return text(node, src)


def _split_qualified(node: Node, src: bytes, keep_args: bool) -> tuple[list[str], Node]:
    """``ns::A<T>::f`` -> (["ns", "A"], the node of ``f``)."""
    parts: list[str] = []
    while node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is not None:
            parts.append(_type_name(scope, src, keep_args))
        name = node.child_by_field_name("name")
        if name is None:
            break
        node = name
    return parts, node


def _function_parts(node: Node) -> tuple[Node, Node | None, Node | None] | None:
    """(name node, parameter list, the declarator holding the qualifiers) of a function definition or
    declaration's declarator ``node``; None when it declares no function (a variable, a function pointer)."""
    while node.type in _WRAPPERS:
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type not in ("type_qualifier", "attribute_specifier",
                                                                               "ms_pointer_modifier")), None)
        if inner is None:
            return None
        node = inner
    if node.type == "function_declarator":
        name = node.child_by_field_name("declarator")
        if name is None or name.type not in _FUNC_NAMES:
            return None
        return name, node.child_by_field_name("parameters"), node
    cast = node
    if node.type == "qualified_identifier":
        cast = node
        while cast.type == "qualified_identifier":
            nxt = cast.child_by_field_name("name")
            if nxt is None:
                return None
            cast = nxt
    if cast.type == "operator_cast":
        decl = cast.child_by_field_name("declarator")
        return node, decl.child_by_field_name("parameters") if decl is not None else None, decl
    return None


def _param_name(decl: Node | None) -> Node | None:
    """The identifier a parameter declarator names (None for an abstract one)."""
    while decl is not None:
        if decl.type in ("identifier", "field_identifier"):
            return decl
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in reversed(decl.named_children)
                          if c.type not in ("type_qualifier", "attribute_specifier", "parameter_list")), None)
        decl = inner
    return None


def _param_key(params: Node | None, quals: Node | None, src: bytes) -> str:
    """The parameter key of a C++ function (module docstring): ``(const char*,size_t)const``."""
    if params is None:
        return ""
    types: list[str] = []
    for p in params.children:
        if p.type in ("...", "variadic_parameter"):
            types.append("...")
            continue
        if not p.type.endswith("parameter_declaration"):
            continue
        end = p.end_byte
        default = p.child_by_field_name("default_value")
        if default is not None:
            eq = next((c for c in p.children if c.type == "="), None)
            end = eq.start_byte if eq is not None else default.start_byte
        name = _param_name(p.child_by_field_name("declarator"))
        raw = src[p.start_byte:end]
        if name is not None and name.end_byte <= end:
            raw = src[p.start_byte:name.start_byte] + b" " + src[name.end_byte:end]
        types.append(norm_type(raw.decode("utf-8", "replace")))
    if types == ["void"]:
        types = []
    suffix = ""
    if quals is not None:
        seen = False
        for c in quals.children:
            if c == params:
                seen = True
            elif seen and c.type in _METHOD_QUALS:
                suffix += _squash(text(c, src))
    return "(" + ",".join(types) + ")" + suffix


def _under_template(node: Node) -> Node | None:
    """The ``template<...>`` declaration directly around ``node`` (through nested ones), if any."""
    first = None
    up = node.parent
    while up is not None and up.type == "template_declaration":
        first = up
        up = up.parent
    return first


def _template_has_params(node: Node) -> bool:
    up = node.parent
    while up is not None and up.type == "template_declaration":
        params = up.child_by_field_name("parameters")
        if params is not None and params.named_child_count:
            return True
        up = up.parent
    return False


def _macro_class(node: Node, src: bytes) -> bool:
    """A ``class MACRO Name {...}`` tree-sitter read as a function definition (a fallback to the
    blanking of ``_prepare``)."""
    typ = node.child_by_field_name("type")
    decl = node.child_by_field_name("declarator")
    return (typ is not None and typ.type in ("class_specifier", "struct_specifier", "union_specifier")
            and typ.child_by_field_name("body") is None and decl is not None and decl.type == "identifier"
            and node.child_by_field_name("body") is not None)


# --------------------------------------------------------------------------- handlers


def _function(node: Node, src: bytes, parent_kind: str | None, *, c_lang: bool) -> list[Def] | None:
    """A function definition (``body`` set) or declaration (a prototype, a method declared in its class)."""
    if node.type == "function_definition" and _macro_class(node, src):
        typ = node.child_by_field_name("type")
        assert typ is not None
        block = node.child_by_field_name("body")
        first = _under_template(node) or node
        return [make_def(text(node.child_by_field_name("declarator"), src), _CLASS_KINDS[typ.type], first, node,
                         body=block, scope=block, scope_kind="class")]
    declarators = node.children_by_field_name("declarator")
    out: list[Def] = []
    for decl in declarators:
        parts = _function_parts(decl)
        if parts is None:
            continue
        name_node, params, quals = parts
        keep_args = not _template_has_params(node)
        if name_node.type == "qualified_identifier":
            scopes, leaf_node = _split_qualified(name_node, src, keep_args)
        else:
            scopes, leaf_node = [], name_node
        leaf = _leaf(leaf_node, src)
        if not leaf:
            continue
        if not all(_NAME_PART_RE.fullmatch(p) for p in scopes):
            continue  # a qualifier tree-sitter recovered from code it could not read
        spaces, cls = _enclosing(node, src)
        if scopes and spaces and scopes[:len(spaces)] == spaces:
            scopes = scopes[len(spaces):]
        if leaf.startswith("~"):
            kind = "destructor"
        elif leaf.startswith("operator") and leaf_node.type in ("operator_name", "operator_cast"):
            kind = "operator"
        elif parent_kind == "class" and not scopes:
            kind = "constructor" if leaf == cls else "method"
        elif scopes:
            last = re.sub(r"<.*", "", scopes[-1])
            kind = "constructor" if leaf == last else (
                "function" if last in _file_namespaces(node, src) else "method")
        else:
            kind = "function"
        name = ".".join([*scopes, leaf])
        is_def = node.type == "function_definition"
        body: tuple[int, int] | None = None
        if is_def:
            body_node = node.child_by_field_name("body")
            inits = next((c for c in node.children if c.type == "field_initializer_list"), None)
            start = inits or body_node
            if start is not None and body_node is not None:
                body = (start.start_byte, body_node.end_byte)
        first = _under_template(node) or node
        key = "" if c_lang else _param_key(params, quals, src)
        d = make_def(name, kind, first, node, body=body, key=key)
        d.stub = not is_def
        out.append(d)
    if not out:
        return None if node.type != "function_definition" else []
    return out


def _c_function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    return _function(node, src, parent_kind, c_lang=True)


def _cpp_function(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    return _function(node, src, parent_kind, c_lang=False)


def _friend(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    """A friend function defined in its class (``friend bool operator==(A, A) {...}``): a ``function`` or
    ``operator`` named under the class (``A.operator==``); a friend only declared is not a symbol."""
    inner = next((c for c in node.named_children if c.type == "function_definition"), None)
    defs = _cpp_function(inner, src, "friend") if inner is not None else None
    first = _under_template(node) or node
    for d in defs or []:
        d.start_byte, d.start_line = first.start_byte, first.start_point[0] + 1
    return defs or []


def _class(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    body = node.child_by_field_name("body")
    name_node = node.child_by_field_name("name")
    if body is None:
        return []  # a forward declaration or an elaborated type: not a definition
    if name_node is None:
        return None  # anonymous: its members belong to the enclosing scope
    if name_node.type == "qualified_identifier":
        scopes, leaf = _split_qualified(name_node, src, True)
        name = ".".join([*scopes, _type_name(leaf, src)])
    else:
        name = _type_name(name_node, src)
    if not name or not all(_NAME_PART_RE.fullmatch(p) for p in name.split(".")):
        return None
    kind = _CLASS_KINDS[node.type]
    first = _under_template(node) or node
    if kind == "enum":
        return [make_def(name, kind, first, node, body=body)]
    return [make_def(name, kind, first, node, body=body, scope=body, scope_kind="class")]


def _typedef_names(node: Node, src: bytes) -> list[str]:
    names = []
    for decl in node.children_by_field_name("declarator"):
        n: Node | None = decl
        while n is not None and n.type != "type_identifier":
            inner = n.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in n.named_children if c.type not in ("type_qualifier", "parameter_list")),
                             None)
            n = inner
        if n is not None:
            names.append(text(n, src))
    return names


def _typedef(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    names = _typedef_names(node, src)
    typ = node.child_by_field_name("type")
    first = _under_template(node) or node
    if typ is not None and typ.type in _CLASS_KINDS and typ.child_by_field_name("body") is not None:
        body = typ.child_by_field_name("body")
        tag = typ.child_by_field_name("name")
        tag_name = _type_name(tag, src) if tag is not None else (names.pop(0) if names else "")
        out: list[Def] = []
        kind = _CLASS_KINDS[typ.type]
        if tag_name:
            scope = body if kind != "enum" else None
            out.append(make_def(tag_name, kind, first, node, body=body, scope=scope, scope_kind="class"))
        out += [make_def(n, "type", first, node, body=body) for n in names if n != tag_name]
        return out
    return [make_def(n, "type", first, node, body=typ) for n in names] or []


def _alias(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return []
    return [make_def(text(name, src), "type", _under_template(node) or node, node,
                     body=node.child_by_field_name("type"))]


def _namespace(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None or any(c.type == "inline" for c in node.children):
        return None  # anonymous or inline: adds nothing to the names inside
    label = ".".join(p for p in re.split(r"\s*::\s*", text(name, src).strip()) if p)
    body = node.child_by_field_name("body")
    return [make_def(label, "namespace", node, node, body=body, scope=body, scope_kind="namespace")]


def _macro(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    name = node.child_by_field_name("name")
    if name is None:
        return []
    value = node.child_by_field_name("value")
    label = text(name, src)
    if value is None and node.type == "preproc_def":
        guard = node.parent
        if guard is not None and guard.type == "preproc_ifdef" and text(guard.child_by_field_name("name"),
                                                                           src) == label:
            return []  # an include guard
    return [make_def(label, "macro", node, node, body=value)]


# --------------------------------------------------------------------------- tokens and names

_PP_TOKEN_RE = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*|\\\n|\w+|\S', re.S)


_PLAIN_STRING_RE = re.compile(rb'"((?:[^"\\\n]|\\.)*)"\Z', re.S)


def _string(node: Node, src: bytes) -> bytes | None:
    """A plain string literal, or adjacent ones (``"ab" "c"``), as one token of their joined contents:
    clang-format splits a long literal in two (``BreakStringLiterals``). Prefixed, raw, or joined with
    a macro (``"%" PRId64``): None, the literal's own tokens."""
    parts = [node] if node.type == "string_literal" else node.named_children
    out = []
    for part in parts:
        if part.type == "comment":
            continue
        m = _PLAIN_STRING_RE.match(src[part.start_byte:part.end_byte]) if part.type == "string_literal" else None
        if m is None:
            return None
        out.append(m.group(1))
    return b"S|" + b"".join(out)


def _preproc_arg(node: Node, src: bytes) -> bytes | None:
    """A macro's replacement text as one token: its C tokens joined by one space, comments and line
    continuations out (clang-format realigns the ``\\`` of a multi-line macro)."""
    raw = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    toks = [t for t in _PP_TOKEN_RE.findall(raw) if not t.startswith(("/*", "//", "\\\n"))]
    return b"M|" + " ".join(toks).encode("utf-8")


#: Declarator wrappers between a declared function's ``function_declarator`` and its declaration.
_DECL_WRAPPERS = _WRAPPERS | {"parenthesized_declarator"}
#: Declarations without a body, whose parameter names are not part of the function's type.
_BODYLESS = frozenset({"declaration", "field_declaration"})
#: What a declaration's parameter list hashes in place of a parameter's name (a marker, never
#: length-prefixed like a source token, so ``int (a)`` and ``int ()`` stay apart).
_NAME_MARK = b"#p"


def _bodyless_params(node: Node, src: bytes) -> bytes | None:
    """The parameter list of a function declared without a body (a prototype, a method declared in its
    class) as one token, its parameter names left out: they do not change the function's type, and no
    body uses them. Types, qualifiers and default values (C++) count; comments do not. None (the
    ordinary tokens) for any other parameter list: a definition's, whose body uses the names."""
    up = node.parent
    if up is None or up.type != "function_declarator":
        return None
    while up is not None and (up.type == "function_declarator" or up.type in _DECL_WRAPPERS):
        up = up.parent
    if up is None or up.type not in _BODYLESS:
        return None
    names: set[tuple[int, int]] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type.endswith("parameter_declaration"):
            named = _param_name(n.child_by_field_name("declarator"))
            if named is not None:
                names.add((named.start_byte, named.end_byte))
        stack.extend(n.named_children)
    out: list[bytes] = [b"P|"]
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if (n.start_byte, n.end_byte) in names and n.type in ("identifier", "field_identifier"):
            out.append(_NAME_MARK)
        elif n.child_count == 0 or n.type in ("string_literal", "concatenated_string", "char_literal",
                                              "raw_string_literal"):
            tok = src[n.start_byte:n.end_byte]
            if n.type == "number_literal":
                tok = tok.lower()
            elif n.type in ("string_literal", "concatenated_string"):
                tok = _string(n, src) or tok  # as outside a parameter list
            out.append(b"%d:%s" % (len(tok), tok))
        else:
            stack.extend(reversed(n.children))
    return b"".join(out)


#: Preprocessor directive tokens: ``#  define`` (indented after the ``#``) is ``#define``.
_DIRECTIVES = ("#define", "#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef", "#else", "#endif",
               "#include", "preproc_directive")


def _directive(node: Node, src: bytes) -> bytes | None:
    """A preprocessor directive token without its inner whitespace (clang-format's ``IndentPPDirectives``)."""
    return b"".join(src[node.start_byte:node.end_byte].split())


def _split_top(s: str, sep: str) -> list[str]:
    """``s`` split at ``sep`` outside brackets."""
    out, depth, start = [], 0, 0
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth = max(0, depth - 1)
        elif depth == 0 and s.startswith(sep, i):
            out.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(s[start:])
    return out


_OPERATOR_HEAD_RE = re.compile(r"operator\s*(?:\(\s*\)|\[\s*\]|(?:new|delete)\s*\[\s*\])?")


def _written_name(name: str) -> str:
    """``ns::A::f`` / ``::ns::A::f`` / ``A::f(const char *, size_t) const`` -> ``ns.A.f`` /
    ``A.f(const char*,size_t)const``; gitmem's dotted form is returned as it is."""
    name = name.strip()
    # where the key starts: the first "(" that is not part of an operator's own name
    head_end = len(name)
    i = 0
    while i < len(name):
        m = _OPERATOR_HEAD_RE.match(name, i) if name.startswith("operator", i) else None
        if m is not None and (i == 0 or not (name[i - 1].isalnum() or name[i - 1] == "_")):
            i = m.end()
            continue
        if name[i] == "(":
            head_end = i
            break
        i += 1
    head, key = name[:head_end], name[head_end:]
    if "::" in head or " " in head.strip():
        parts = [p.strip() for p in _split_top(head.replace(" :: ", "::"), "::") if p.strip()]
        head = ".".join(parts)
    out_parts = []
    for part in _split_top(head, "."):
        part = part.strip()
        if part.startswith("operator"):
            rest = part[len("operator"):].strip()
            if rest[:1].isalpha() or rest[:1] == "_":
                part = "operator " + (norm_type(rest) if not rest.startswith(("new", "delete")) else
                                      rest.replace(" ", ""))
                part = re.sub(r"^operator (new|delete)", r"operator \1", part)
            else:
                part = "operator" + rest.replace(" ", "")
        elif "<" in part:
            lt = part.index("<")
            part = part[:lt].strip() + norm_type(part[lt:])
        out_parts.append(part)
    head = ".".join(out_parts)
    if key:
        close = key.rfind(")")
        inner, suffix = (key[1:close], key[close + 1:]) if close > 0 else (key[1:], "")
        params = [norm_type(p) for p in _split_top(inner, ",") if p.strip()]
        if params == ["void"]:
            params = []
        key = "(" + ",".join(params) + ")" + _squash(suffix).replace(" ", "")
    return head + key


#: Words that end a parameter's type, never a parameter name (``unsigned int``, ``long long``).
_TYPE_WORDS = frozenset({"int", "char", "short", "long", "signed", "unsigned", "float", "double", "bool", "void",
                         "wchar_t", "char8_t", "char16_t", "char32_t", "auto", "const", "volatile", "_Bool"})
#: A parameter's own name (with an array dimension) at the end of a parameter, after its type.
_PARAM_NAME_RE = re.compile(r"(?<=[\s*&>])([A-Za-z_]\w*)\s*((?:\[[^\]]*\])*)\s*\Z")


def _without_param_names(name: str) -> str | None:
    """``A::f(const char *xml, size_t n = 0)`` -> ``A::f(const char *, size_t)``: a signature copied from the
    code with its parameter names and default values; None when nothing was dropped."""
    open_at, close_at = name.find("("), name.rfind(")")
    if open_at < 0 or close_at < open_at or name.startswith("operator", max(0, open_at - 8)):
        return None
    params = []
    for param in _split_top(name[open_at + 1:close_at], ","):
        param = _split_top(param, "=")[0].strip()
        m = _PARAM_NAME_RE.search(param)
        if m is not None and m.group(1) not in _TYPE_WORDS and param[:m.start(1)].strip() not in ("", "const"):
            param = param[:m.start(1)].rstrip() + m.group(2)
        params.append(param)
    out = name[:open_at + 1] + ", ".join(params) + name[close_at:]
    return out if _written_name(out) != _written_name(name) else None


def _written_choices(name: str) -> list[list[str]]:
    """A C++ name as typed, in gitmem's form, and without its parameter names (a signature copied as written)."""
    out = [[name], [_written_name(name)]]
    bare = _without_param_names(name)
    if bare is not None:
        out.append([_written_name(bare)])
    return out


def _c_written_name(name: str) -> str:
    """C names carry no key: ``f(int)`` is ``f``."""
    return re.sub(r"\(.*\)\s*$", "", _written_name(name)) if "(" in name else _written_name(name)


def _misread_macro_statement(node: Node, src: bytes) -> bool:
    """Is ``node`` a function definition or prototype tree-sitter's error recovery made of a macro statement in a
    function body (``EXPECT_ABORT_BEGIN`` / ``TEST_ASSERT_EQUAL(...);`` read as the return type and the
    declarator of a function ``TEST_ASSERT_EQUAL``) that ``_macro_statements`` did not mend? Its parent is
    an ``ERROR`` node, more ``{`` than ``}`` of that node's own tokens stand before it (the ``{`` of the body
    tree-sitter could not read), and its "return type" is a capitalised word alone on its line."""
    parent = node.parent
    if node.type not in ("function_definition", "declaration") or parent is None or parent.type != "ERROR":
        return False
    typ = node.child_by_field_name("type")
    decl = node.child_by_field_name("declarator")
    if (typ is None or decl is None or typ.type != "type_identifier" or typ.end_point[0] >= decl.start_point[0]
            or _LONE_MACRO_RE.match(src, src.rfind(b"\n", 0, typ.start_byte) + 1) is None):
        return False
    cached = getattr(_local, "error_depths", None)
    if cached is None or cached[0] is not src or cached[1] != parent.id:
        depths: dict[int, int] = {}
        depth = 0
        for c in parent.children:
            if c.type == "{":
                depth += 1
            elif c.type == "}":
                depth = max(0, depth - 1)
            depths[c.start_byte] = depth
        cached = _local.error_depths = (src, parent.id, depths)
    return cached[2].get(node.start_byte, 0) > 0


def _guarded(handler: Handler) -> Handler:
    """``handler``, except that a misread macro statement (``_misread_macro_statement``) is no definition
    and is not searched."""
    def run(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
        return [] if _misread_macro_statement(node, src) else handler(node, src, parent_kind)
    return run


def _handlers(c_lang: bool) -> dict[str, Handler]:
    function = _c_function if c_lang else _cpp_function
    handlers: dict[str, Handler] = {
        "function_definition": function, "declaration": function, "field_declaration": function,
        "struct_specifier": _class, "union_specifier": _class, "enum_specifier": _class,
        "type_definition": _typedef, "preproc_def": _macro, "preproc_function_def": _macro,
    }
    if not c_lang:
        handlers.update({"class_specifier": _class, "alias_declaration": _alias,
                         "namespace_definition": _namespace,
                         "friend_declaration": _friend})
    return {t: _guarded(h) for t, h in handlers.items()}


def _spec(name: str, c_lang: bool) -> LanguageSpec:
    return LanguageSpec(
        name=name,
        handlers=_handlers(c_lang),
        descend=lambda t: t in _DESCEND,
        comment_types=frozenset({"comment"}),
        atomic={"preproc_arg": _preproc_arg, "string_literal": _string, "concatenated_string": _string,
                "parameter_list": _bodyless_params, **{d: _directive for d in _DIRECTIVES}},
        lowercase=frozenset({"number_literal"}),
        same_name="join",
        written_name=_c_written_name if c_lang else _written_name,
        written_choices=None if c_lang else _written_choices,
        prepare=_prepare,
        reparse=None if c_lang else _c_fallback,
    )


C = _spec("c", c_lang=True)
CPP = _spec("cpp", c_lang=False)


# --------------------------------------------------------------------------- header <-> source partners

#: Extensions of C/C++ headers and of the sources that define what they declare.
HEADER_EXTENSIONS = frozenset({".h", ".hh", ".hpp", ".hxx", ".h++"})
SOURCE_EXTENSIONS = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++"})
#: Kinds whose declaration and definition live in a header and a source file.
PARTNER_KINDS = frozenset({"function", "method", "constructor", "destructor", "operator"})


def _stem_ext(path: str) -> tuple[str, str]:
    base = path.rsplit("/", 1)[-1].lower()
    stem, dot, ext = base.rpartition(".")
    return (stem, "." + ext) if dot else (base, "")


def partner_files(path: str, files: list[str] | set[str], includes: set[str]) -> list[str]:
    """The files that may hold the other half of a C/C++ function declared or defined in ``path``, sorted.

    A header's candidates are the source files of the same stem anywhere in ``files``
    (``include/x/a.hpp`` -> ``src/a.cpp``); a source file's are the headers it includes
    (``includes``: resolved ``#include`` paths) and the headers of the same stem. [] for
    any other file.
    """
    stem, ext = _stem_ext(path)
    if ext in HEADER_EXTENSIONS:
        want = SOURCE_EXTENSIONS
    elif ext in SOURCE_EXTENSIONS:
        want = HEADER_EXTENSIONS
    else:
        return []
    out = {p for p in files if p != path and _stem_ext(p) == (stem, _stem_ext(p)[1]) and _stem_ext(p)[1] in want}
    out |= {p for p in includes if _stem_ext(p)[1] in want}
    return sorted(out)


def same_stem(a: str, b: str) -> bool:
    """Do the files ``a`` and ``b`` have the same base name without extension (case-insensitive)?"""
    return _stem_ext(a)[0] == _stem_ext(b)[0]
