"""The code graph: which files a file imports, for ranking by import proximity.

Two steps, kept apart so the expensive one can be cached by content:

1. **Extract** (``extract_imports``, cached as ``cached_imports``): parse one
   blob with tree-sitter and list its import *specifiers* as written, one
   string each, in source order, duplicates removed. Per language:

   * python: ``import a.b`` -> ``a.b``; ``from M import n`` -> ``M:n`` (one
     per imported name, aliases dropped, ``M`` may be relative: ``.``,
     ``..pkg.mod``); ``from M import *`` -> ``M``. Imports anywhere in the
     file count (also inside functions); ``from __future__`` does not.
   * javascript, typescript, tsx: the module string of ``import … from 'x'``,
     ``import 'x'``, ``export … from 'x'``, ``require('x')``, dynamic
     ``import('x')`` and TypeScript ``import x = require('x')`` (a template
     literal without substitutions counts as a string).
   * go: the path of each import spec (single and grouped), e.g.
     ``example.com/m/pkg/a``.
   * rust: each path a ``use`` declaration brings in, use-lists expanded
     (``use a::{b, c::d}`` -> ``a::b``, ``a::c::d``; ``{self}`` is the prefix,
     a glob ``a::*`` is ``a``, ``x as y`` is ``x``); ``mod foo;`` -> ``mod foo``.
   * java: ``import a.b.C;`` -> ``a.b.C``; ``import static a.b.C.m;`` ->
     ``a.b.C.m``; ``import a.b.*;`` -> ``a.b.*``.
   * ruby: ``require "a/b"`` -> ``a/b``; ``require_relative "../c"`` ->
     ``./../c`` (a string literal without interpolation only).
   * php: each name a ``use`` brings in, group uses expanded, without the
     leading ``\\``: ``use App\\Models\\{Order, Line}`` -> ``App\\Models\\Order``,
     ``App\\Models\\Line`` (``include`` / ``require`` paths are not followed).
   * kotlin: as java (``import a.b.C as D`` -> ``a.b.C``).
   * csharp: the namespace or type of each ``using`` directive (``using A.B;``,
     ``using static A.B.C;``, ``using X = A.B;`` -> ``A.B``, ``global using``).
   * c, cpp: each ``#include``: ``#include "a/b.h"`` -> ``a/b.h``,
     ``#include <a/b.h>`` -> ``<a/b.h>`` (also inside ``#if`` blocks; a macro
     ``#include NAME`` is not followed).
   * swift: the module of each ``import`` (``import Foundation``, ``import struct
     A.B`` -> ``A.B``, ``@testable import App`` -> ``App``).
   * scala: as java, selectors expanded (``import a.b.{C, D => E}`` -> ``a.b.C``,
     ``a.b.D``; ``import a.b._`` and Scala 3 ``a.b.*`` -> ``a.b.*``; ``given``
     imports as a wildcard).
   * bash: the file of each ``source x`` / ``. x`` / ``\\. x`` as written, quotes removed
     (``"$DIR/lib.sh"`` -> ``$DIR/lib.sh``); a leading command substitution
     that computes the script's directory (``$(dirname "$0")``, ``$(cd
     "$(dirname "$0")" && pwd)``) is written ``$DIR``; a path built by any
     other command is left out.
   * lua: the module of each ``require("a.b")`` / ``require "a.b"``.

2. **Resolve** (``ImportResolver`` / ``resolve_imports``): turn specifiers into
   repo-relative paths of files in a given file list. Bare package names
   (``react``, ``os``, ``std::io``, ``fmt``) resolve to nothing: only the
   repository's own files are part of the graph. Rules per language are in
   ``ImportResolver.resolve``.

``import_neighbours`` combines both for ranking: the import edges between a
few focus files and a bounded set of candidate files.

Imports tree-sitter lazily (through ``gitmem.code.symbols``' per-thread
parsers); must not import lancedb, embeddings or any LLM client.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .. import infra
from .languages import language_for_path
from .symbols import _normalise, _parser, is_binary, too_large

if TYPE_CHECKING:
    from tree_sitter import Node, Query
    from tree_sitter_language_pack import SupportedLanguage

#: Version of ``extract_imports``' output: bump when any specifier changes; keys both caches.
IMPORTS_VERSION = "imp1"
#: Sources larger than this (bytes) are not parsed for imports: a generated or vendored file
#: of that size is rarely what a memory is about, and parsing it costs tens of milliseconds.
#: Same limit as ``gitmem.rank.focus.MAX_SYMBOL_DIFF_BYTES``.
MAX_IMPORT_SOURCE_BYTES = 1_000_000
#: Import lists kept in the in-process LRU (a list is small: ~20 short strings).
LRU_SIZE = 4096

#: Extensions tried, in order, for a JS/TS specifier without one (TypeScript first: in a mixed
#: tree the .ts source is the one people edit, the .js is often its build output).
JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
#: A JS specifier with one of these extensions may name a TypeScript source (TS's ESM convention
#: ``import './x.js'`` for ``x.ts``).
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}

# --------------------------------------------------------------------------- extraction

#: Tree-sitter queries (run in C, so a whole file costs one pass) finding import nodes.
_QUERIES: dict[str, str] = {
    "python": "(import_statement) @import (import_from_statement) @from",
    "javascript": """
        (import_statement source: (string) @s)
        (export_statement source: (string) @s)
        (call_expression function: (identifier) @fn arguments: (arguments . [(string) (template_string)] @s)
                         (#eq? @fn "require"))
        (call_expression function: (import) arguments: (arguments . [(string) (template_string)] @s))
    """,
    "go": "(import_spec path: (_) @s)",
    "rust": "(use_declaration argument: (_) @use) (mod_item name: (identifier) @mod !body)",
    "java": "(import_declaration) @import",
    "ruby": """(call method: (identifier) @fn arguments: (argument_list . (string) @s)
                     (#match? @fn "^require(_relative)?$"))""",
    "php": "(namespace_use_clause) @use",
    "kotlin": "(import_header) @import",
    "csharp": "(using_directive) @using",
    "c": "(preproc_include path: (_) @include)",
    "cpp": "(preproc_include path: (_) @include)",
    "swift": "(import_declaration) @import",
    "scala": "(import_declaration) @import",
    # `\. file` is `. file` that no alias can shadow (nvm's install instructions use it)
    "bash": r'(command name: (command_name) @fn argument: (_) @s (#match? @fn "^(source|\\\\?[.])$"))',
    "lua": """(function_call name: (identifier) @fn arguments: (arguments . (string) @s)
                             (#eq? @fn "require"))""",
    "make": "(include_directive (list (word) @s))",
    "terraform": """(block (identifier) @type (string_lit)
                      (body (attribute (identifier) @key
                                       (expression (literal_value (string_lit (template_literal) @s)))))
                      (#eq? @type "module") (#eq? @key "source"))""",
}
_QUERIES["typescript"] = _QUERIES["tsx"] = _QUERIES["javascript"] + \
    "(import_require_clause source: (string) @s)"

_queries: dict[str, Query] = {}
_queries_lock = threading.Lock()


def _query(language: str) -> Query:
    with _queries_lock:
        q = _queries.get(language)
        if q is None:
            from tree_sitter import Query
            from tree_sitter_language_pack import get_language

            q = _queries[language] = Query(get_language(cast("SupportedLanguage", language)), _QUERIES[language])
        return q


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _squash(node: Node, src: bytes) -> str:
    """Node text without whitespace or comments' line breaks (``a . b`` -> ``a.b``)."""
    return "".join(_text(node, src).split())


def _python(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for tag, node in nodes:
        if tag == "import":
            for child in node.children_by_field_name("name"):
                name = child.child_by_field_name("name") if child.type == "aliased_import" else child
                if name is not None:
                    out.append(_squash(name, src))
            continue
        module = node.child_by_field_name("module_name")
        if module is None:
            continue
        mod = _squash(module, src)
        names = node.children_by_field_name("name")
        if not names:  # from M import *
            out.append(mod)
        for child in names:
            name = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if name is not None:
                out.append(f"{mod}:{_squash(name, src)}")
    return out


def _js(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        if node.type == "template_string" and any(c.type == "template_substitution" for c in node.children):
            continue  # require(`./${x}`): not a static specifier
        raw = _text(node, src)
        if len(raw) >= 2:
            out.append(raw[1:-1])
    return out


def _go(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    return [_text(n, src)[1:-1] for _, n in nodes if len(_text(n, src)) >= 2]


def _rust_paths(node: Node, src: bytes, prefix: str) -> list[str]:
    """The paths one ``use`` argument brings in, ``prefix`` (``a::``) prepended."""
    t = node.type
    if t == "use_as_clause":
        path = node.child_by_field_name("path")
        return _rust_paths(path, src, prefix) if path is not None else []
    if t == "use_wildcard":  # a::* -> a ; bare * -> the prefix itself
        inner = [c for c in node.named_children]
        return _rust_paths(inner[0], src, prefix) if inner else ([prefix[:-2]] if prefix else [])
    if t == "scoped_use_list":
        path = node.child_by_field_name("path")
        lst = node.child_by_field_name("list")
        base = prefix + (_squash(path, src) + "::" if path is not None else "")
        return _rust_paths(lst, src, base) if lst is not None else []
    if t == "use_list":
        out: list[str] = []
        for child in node.named_children:
            out.extend(_rust_paths(child, src, prefix))
        return out
    if t == "self" and prefix:  # use a::{self, b}: `self` is `a`
        return [prefix[:-2]]
    if t in ("identifier", "scoped_identifier", "crate", "self", "super", "metavariable"):
        return [prefix + _squash(node, src)]
    return []


def _rust(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for tag, node in nodes:
        if tag == "mod":
            out.append(f"mod {_text(node, src)}")
        else:
            out.extend(_rust_paths(node, src, ""))
    return out


def _java(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if name is None:
            continue
        spec = _squash(name, src)
        if any(c.type == "asterisk" for c in node.children):
            spec += ".*"
        out.append(spec)
    return out


def _ruby(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        if any(c.type not in ("string_content", '"', "'") for c in node.children):
            continue  # interpolated: not a path we can know
        spec = _text(node, src)[1:-1]
        call = node.parent.parent if node.parent is not None else None
        method = call.child_by_field_name("method") if call is not None else None
        if method is not None and _text(method, src) == "require_relative":
            spec = "./" + spec
        out.append(spec)
    return out


def _php(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        name = next((c for c in node.named_children if c.type in ("qualified_name", "name")), None)
        if name is None:
            continue
        spec = _squash(name, src)
        group = node.parent
        if group is not None and group.type == "namespace_use_group" and group.parent is not None:
            prefix = next((c for c in group.parent.named_children if c.type == "namespace_name"), None)
            if prefix is not None:
                spec = _squash(prefix, src) + "\\" + spec
        out.append(spec.lstrip("\\"))
    return out


def _kotlin(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        name = next((c for c in node.named_children if c.type == "identifier"), None)
        if name is not None:
            out.append(_squash(name, src) + (".*" if any(c.type == "wildcard_import" for c in node.children) else ""))
    return out


def _csharp(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        alias = node.child_by_field_name("name")
        name = next((c for c in node.named_children if c.type in ("qualified_name", "identifier")
                     and (alias is None or c.id != alias.id)), None)
        if name is not None:
            out.append(_squash(name, src))
    return out


def _include(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        raw = _text(node, src).strip()
        if node.type == "string_literal" and len(raw) >= 2 and raw[0] == raw[-1] == '"':
            out.append(raw[1:-1].strip())
        elif node.type == "system_lib_string" and raw.startswith("<") and raw.endswith(">"):
            out.append("<" + raw[1:-1].strip() + ">")
    return out


def _swift(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        name = next((c for c in node.named_children if c.type == "identifier"), None)
        if name is not None:
            out.append(_squash(name, src))
    return out


def _scala_selector(prefix: str, node: Node, src: bytes) -> str | None:
    """The specifier one import selector brings in (``D``, ``E => F``, ``G as H``, ``_``), or None."""
    if node.type in ("namespace_wildcard", "wildcard"):
        return prefix + ".*"
    if node.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
        name = node.child_by_field_name("name")
        return None if name is None else f"{prefix}.{_text(name, src).strip('`')}"
    if node.type == "identifier":
        return f"{prefix}.{_text(node, src).strip('`')}"
    return None


def _scala(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        path: list[str] = []
        done = False  # the current clause already produced its specifiers (a selector or wildcard)
        for i, child in enumerate(node.children):
            if child.type == ",":  # `import a.B, c.D`: clauses in one declaration
                if path and not done:
                    out.append(".".join(path))
                path, done = [], False
            elif child.is_named and node.field_name_for_child(i) == "path":
                path.append(_text(child, src).strip("`"))
            elif child.type == "namespace_selectors" and path:
                prefix = ".".join(path)
                out.extend(s for s in (_scala_selector(prefix, c, src) for c in child.named_children) if s)
                done = True
            elif child.is_named and path:
                spec = _scala_selector(".".join(path[:-1]) if child.type == "identifier" else ".".join(path),
                                       child, src)
                if spec:
                    out.append(spec)
                    done = True
        if path and not done:
            out.append(".".join(path))
    return out


#: A leading shell variable of a sourced path: ``$DIR``, ``${DIR}``, ``${BASH_SOURCE%/*}``.
_BASH_LEAD_RE = re.compile(r"\$(?:\w+|\{[^}]*\})")


def _script_dir_substitution(raw: str) -> int:
    """Length of a leading ``$(...)`` that computes the script's own directory (it mentions ``dirname``,
    ``$0`` or ``BASH_SOURCE``: ``$(dirname "$0")``, ``$(cd "$(dirname "$0")" && pwd)``); 0 otherwise."""
    if not raw.startswith("$("):
        return 0
    depth = 0
    for i, ch in enumerate(raw):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch == ")":
            inner = raw[:i + 1]
            return i + 1 if any(w in inner for w in ("dirname", "$0", "BASH_SOURCE")) else 0
    return 0


def _bash(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for tag, node in nodes:
        if tag != "s" or node.prev_named_sibling is None or node.prev_named_sibling.type != "command_name":
            continue  # only the first argument names the file
        raw = _text(node, src)
        if node.type in ("string", "raw_string") and len(raw) >= 2 and raw[0] == raw[-1]:
            raw = raw[1:-1]
        raw = raw.replace('"', "")
        raw = "$DIR" + raw[cut:] if (cut := _script_dir_substitution(raw)) else raw
        if raw and "$(" not in raw and "`" not in raw:
            out.append(raw)
    return out


def _lua(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    out: list[str] = []
    for _, node in nodes:
        raw = _text(node, src)
        if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] and "\\" not in raw:
            out.append(raw[1:-1])
    return out


def _strings(nodes: list[tuple[str, Node]], src: bytes) -> list[str]:
    """The text of each ``@s`` capture (Makefile ``include`` words, Terraform module ``source`` strings)."""
    return [_text(node, src).strip() for tag, node in nodes if tag == "s"]


_EXTRACTORS: dict[str, Callable[[list[tuple[str, Node]], bytes], list[str]]] = {
    "python": _python, "javascript": _js, "typescript": _js, "tsx": _js, "go": _go, "rust": _rust, "java": _java,
    "ruby": _ruby, "php": _php,
    "kotlin": _kotlin, "csharp": _csharp,
    "c": _include, "cpp": _include,
    "swift": _swift,
    "scala": _scala,
    "bash": _bash,
    "lua": _lua,
    "make": _strings, "terraform": _strings,
}


def _code_language(path: str, source: bytes) -> str | None:
    language = language_for_path(path)
    if language not in _QUERIES:  # None, or a language with symbols but no import rules yet
        return None
    if language is None or is_binary(source) or source[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    if too_large(len(source), language):  # no symbols either: a generated file, not one a person reads
        return None
    return language


def _extract(source: bytes, language: str) -> list[str]:
    src = _normalise(source)
    root = _parser(language).parse(src).root_node
    from tree_sitter import QueryCursor

    captures = QueryCursor(_query(language)).captures(root)
    nodes = sorted(((tag, n) for tag, ns in captures.items() if tag != "fn" for n in ns),
                   key=lambda item: item[1].start_byte)
    return list(dict.fromkeys(s for s in _EXTRACTORS[language](nodes, src) if s))


def extract_imports(path: str, source: bytes) -> list[str]:
    """The import specifiers of ``source`` (a blob stored at repo-relative ``path``), uncached.

    The language comes from ``path``'s extension (``gitmem.code.languages``);
    the specifier forms per language are in the module docstring. Returns them
    in source order without duplicates; [] for an unknown language, a binary or
    UTF-16 blob, or a file without imports. Syntax errors do not raise:
    whatever parses is returned.
    """
    language = _code_language(path, source)
    if language is None:
        return []
    return _extract(source, language)


# --------------------------------------------------------------------------- caches

_lru: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_lru_lock = threading.Lock()


class ImportCache:
    """Import lists by blob content, in one JSON file; any problem means "no cache".

    Keys are ``<language>:<blob sha>`` (and ``to:<sha1>``: the files an importer's specifiers resolve to,
    ``import_neighbours``); the file records ``IMPORTS_VERSION``
    and is ignored when it differs. ``save()`` drops the entries not looked
    up since loading, so the file holds about one entry per file parsed in the
    last run (it does not grow with history). Derived data: deleting it loses
    nothing. Not shared between threads.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, list[str]] = {}
        self.used: set[str] = set()
        self.dirty = False
        if path is None:
            return
        try:
            raw = json.loads(path.read_bytes())
            if raw.get("version") == IMPORTS_VERSION and isinstance(raw.get("entries"), dict):
                self.entries = {k: v for k, v in raw["entries"].items()
                                if isinstance(v, list) and all(isinstance(s, str) for s in v)}
        except (OSError, ValueError, AttributeError):
            pass

    def get(self, key: str) -> list[str] | None:
        """The specifiers cached under ``key`` (``<language>:<blob sha>``), or None; marks it used."""
        hit = self.entries.get(key)
        if hit is not None:
            self.used.add(key)
        return hit

    def put(self, key: str, specifiers: list[str]) -> None:
        """Cache ``specifiers`` under ``key`` (kept by the next ``save``)."""
        self.entries[key] = specifiers
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        """Write the entries used since loading (atomically: temp file + rename); never raises."""
        if self.path is None:
            return
        if set(self.entries) - self.used:
            self.entries = {k: v for k, v in self.entries.items() if k in self.used}
            self.dirty = True
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = json.dumps({"version": IMPORTS_VERSION, "entries": self.entries}, separators=(",", ":"))
            infra.atomic_write(self.path, data.encode("utf-8"), fsync=False)
        except OSError:
            pass  # a read-only clone still works, only slower
        self.dirty = False


def cached_imports(path: str, source: bytes, *, blob_sha: str | None = None,
                   cache: ImportCache | None = None) -> list[str]:
    """``extract_imports(path, source)`` through the in-process LRU and an optional disk cache.

    Keyed by language, ``blob_sha`` (git's blob id; computed as SHA-1 of the
    bytes when None) and ``IMPORTS_VERSION``. The in-process LRU holds
    ``LRU_SIZE`` lists. Never raises for content or parser problems (returns []).
    """
    language = _code_language(path, source)
    if language is None:
        return []
    key = f"{language}:{blob_sha or hashlib.sha1(source).hexdigest()}"
    with _lru_lock:
        hit = _lru.get(key)
        if hit is not None:
            _lru.move_to_end(key)
    if hit is None and cache is not None:
        disk = cache.get(key)
        hit = tuple(disk) if disk is not None else None
    if hit is not None:
        if cache is not None and cache.get(key) is None:
            cache.put(key, list(hit))
        return list(hit)
    try:
        specs = _extract(source, language)
    except Exception:  # noqa: BLE001 - a parser failure must not break the caller
        return []
    if cache is not None:
        cache.put(key, specs)
    with _lru_lock:
        _lru[key] = tuple(specs)
        while len(_lru) > LRU_SIZE:
            _lru.popitem(last=False)
    return specs


def clear_memory_cache() -> None:
    """Empty the in-process LRU (tests, benchmarks)."""
    with _lru_lock:
        _lru.clear()


# --------------------------------------------------------------------------- resolution


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


def _parent(path: str) -> str:
    return posixpath.dirname(path)


def _rules_digest() -> str:
    """SHA-1 of this module's source ("" when it cannot be read: then nothing resolved is cached)."""
    try:
        return hashlib.sha1(Path(__file__).read_bytes()).hexdigest()
    except OSError:
        return ""


#: The resolution rules' identity, for the cache of resolved imports (``import_neighbours``).
_RULES_DIGEST = _rules_digest()

_GO_MODULE_RE = re.compile(rb"^\s*module\s+\"?([^\s\"/][^\s\"]*)\"?", re.M)


class ImportResolver:
    """Resolves import specifiers to files of one file list.

    Build it once per file list (it indexes the list lazily, per language, in
    O(files)), then call ``resolve`` for any number of importing files.

    Args:
        files: repo-relative POSIX paths of the files that exist (tracked, or
            the working tree's files).
        read: ``read(path) -> bytes | None``, the content of a file of
            ``files`` (used for ``go.mod`` only); None disables Go resolution.
    """

    def __init__(self, files: Iterable[str], read: Callable[[str], bytes | None] | None = None) -> None:
        self.files = files if isinstance(files, (set, frozenset)) else set(files)
        self.read = read
        self._py_roots: set[str] | None = None
        self._py_tops: dict[str, set[str]] | None = None
        self._go_modules: list[tuple[str, str]] | None = None
        self._dirs: dict[str, list[str]] | None = None
        self._java_by_name: dict[str, list[str]] | None = None
        self._by_basename: dict[str, list[str]] | None = None
        self._rust_roots: set[str] | None = None
        self._memo: dict[tuple[str, str], list[str]] = {}
        self._py_paths: dict[str, tuple[list[str], bool]] = {}
        self._py_absolute: dict[tuple[str, str], list[str]] = {}
        self._digest: str | None = None

    def digest(self) -> str:
        """SHA-1 (hex) of what ``resolve`` depends on besides its arguments: the file list and the resolution
        rules (this module's source, so any change to a rule makes another digest). Not ``go.mod``'s content,
        which Go resolution reads: see ``resolves_by_list_alone``."""
        if self._digest is None:
            h = hashlib.sha1(_RULES_DIGEST.encode())
            h.update("\0".join(sorted(self.files)).encode("utf-8", "surrogateescape"))
            self._digest = h.hexdigest()
        return self._digest

    @staticmethod
    def resolves_by_list_alone(path: str) -> bool:
        """Whether ``resolve(path, …)`` depends only on ``path``, its specifiers and ``digest()`` (every language
        but Go, whose module paths come from the ``go.mod`` files' content)."""
        return language_for_path(path) != "go"

    # -- entry point ------------------------------------------------------------------------

    def resolve(self, path: str, specifiers: Iterable[str]) -> set[str]:
        """The files of the list that ``path``'s ``specifiers`` name (``path`` itself left out).

        Rules (a specifier that matches no file contributes nothing):

        * python: relative (``.``, ``..pkg``) from the importing file's package;
          absolute from, in order, the root above the importing file's top
          package, the repository root, ``src/``, every other package root
          (a directory holding a top-level package: ``x/`` for ``x/pkg/__init__.py``),
          and last the importing file's own directory when it is not a package
          (scripts, tests). Module ``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``
          (``.pyi`` when no ``.py``); ``a.b:c`` -> ``a/b/c.py`` (a submodule)
          else the module ``a.b``.
        * javascript / typescript: only ``./`` and ``../`` specifiers: the path
          as written, then (TS ESM) ``x.js`` as ``x.ts`` / ``x.tsx``, then with
          each of ``JS_EXTENSIONS``, then ``/index`` with each.
        * go: the module paths of the ``go.mod`` files in the list; the
          package directory under the module whose path is the longest prefix;
          all ``.go`` files directly in it except ``_test.go``.
        * rust: the crate root is the nearest directory above the file holding
          ``lib.rs`` or ``main.rs``; ``crate::a::b`` -> ``a/b.rs``,
          ``a/b/mod.rs``, else the item's module ``a.rs`` / ``a/mod.rs``, else
          the crate root file; ``super::`` / ``self::`` from the file's own
          module; a plain ``a::b`` only when ``a`` is a submodule of the file's
          module; ``mod foo`` -> ``foo.rs`` / ``foo/mod.rs`` in the file's
          module directory.
        * java: ``a.b.C`` -> every listed path ending in ``a/b/C.java``
          (trailing lower-case segments such as a static member are dropped
          first); ``a.b.*`` -> ``a/b.java`` when such a class file exists, else
          every ``.java`` file directly in a directory ending in ``a/b``.
        * ruby: ``./x`` (``require_relative``) -> ``x`` / ``x.rb`` from the
          file's directory; ``a/b`` (``require``) -> ``a/b.rb`` at the root or
          ending in ``lib/a/b.rb`` (gems and load paths outside the list resolve to nothing).
        * php: ``A\\B\\C`` -> every ``.php`` path ending in ``A/B/C.php``, else
          in ``B/C.php`` (PSR-4 maps the first namespace part to a directory
          such as ``src/`` or ``app/``); ``A\\C`` and ``C`` -> ``C.php`` anywhere.
        * kotlin: as java with ``.kt`` files (a Kotlin file is found when it is
          named after the imported class, the usual layout).
        * c, cpp: ``a/b.h`` (a quoted include) -> the file from the including
          file's directory (``..`` allowed), else ``a/b.h`` under a folder named
          ``include`` or at the root, else every listed path ending in ``/a/b.h``
          (any folder where that relative path exists: the project's ``-I``
          folders); ``<a/b.h>`` -> the same from ``include`` folders, the root,
          then by suffix, but never relative to the including file (a system or
          third-party header that is not in the list resolves to nothing).
        * csharp, swift: nothing (a namespace or module names no file).
        * scala: as java with ``.scala`` files; when no path ends in the
          package path (a layout such as mill's ``os/src/Path.scala`` for
          ``os.Path``), leading package segments are dropped one by one, down
          to the class file's own name (``Path.scala`` anywhere).
        * bash: a literal path from the file's directory, then from the
          repository root (``source lib/x.sh`` run from either); a path
          starting with a variable or ``$(dirname ...)`` (``"$DIR/x.sh"``,
          ``"${BASH_SOURCE%/*}/x.sh"``) is what follows its first ``/``, from
          the file's directory then the root. Absolute and ``~`` paths: nothing.
        * lua: ``a.b`` -> ``a/b.lua`` or ``a/b/init.lua`` at the root, else
          every path ending in one of them (``lua/``, ``src/`` search paths).
        * make: ``include x.mk`` -> ``x.mk`` from the Makefile's directory (words with
          ``$(VARIABLES)`` are not followed).
        * terraform: a module ``source = "./modules/vpc"`` (``./`` or ``../``) -> every
          ``.tf`` file directly in that directory; registry and remote sources resolve to nothing.

        Raises nothing for odd specifiers; an unknown language yields set().
        """
        language = language_for_path(path)
        resolve_one = {
            "python": self._python, "javascript": self._js, "typescript": self._js, "tsx": self._js,
            "go": self._go, "rust": self._rust, "java": self._java,
            "ruby": self._ruby, "php": self._php,
            "kotlin": self._kotlin,
            "c": self._include, "cpp": self._include,
            "scala": self._scala,
            "bash": self._bash,
            "lua": self._lua,
            "make": self._make, "terraform": self._terraform,
        }.get(language or "")
        if resolve_one is None:
            return set()
        # Only a Rust file's own module path matters; the others resolve alike from one directory.
        where = path if language == "rust" else _parent(path) + "/"
        out: set[str] = set()
        for spec in specifiers:
            key = (where, spec)
            hit = self._memo.get(key)
            if hit is None:
                hit = self._memo[key] = resolve_one(path, spec)
            out.update(hit)
        out.discard(path)
        return out

    # -- indexes ----------------------------------------------------------------------------

    def _dir_index(self) -> dict[str, list[str]]:
        """Directory -> the files directly in it."""
        if self._dirs is None:
            dirs: dict[str, list[str]] = {}
            for p in self.files:
                dirs.setdefault(_parent(p), []).append(p)
            self._dirs = dirs
        return self._dirs

    # -- python -----------------------------------------------------------------------------

    def _python_index(self) -> tuple[set[str], dict[str, set[str]]]:
        """(package roots, top-level name -> the roots where ``name.py`` / ``name/`` exists)."""
        if self._py_roots is None or self._py_tops is None:
            packages = {_parent(p) for p in self.files if p.endswith(("/__init__.py", "/__init__.pyi"))}
            roots = {_parent(d) for d in packages if _parent(d) not in packages}
            roots.add("")
            if any(p.startswith("src/") for p in self.files):
                roots.add("src")
            tops: dict[str, set[str]] = {}
            for p in self.files:
                if not p.endswith((".py", ".pyi")):
                    continue
                parts = p.split("/")
                for i in range(len(parts)):
                    root = "/".join(parts[:i])
                    if root in roots:
                        top = parts[i]
                        if i == len(parts) - 1:
                            top = top.rsplit(".", 1)[0]
                        tops.setdefault(top, set()).add(root)
            self._py_roots, self._py_tops = roots, tops
        return self._py_roots, self._py_tops

    def _py_module(self, base: str, parts: list[str]) -> str | None:
        stem = _join(base, *parts)
        if not stem:
            candidates: tuple[str, ...] = ("__init__.py", "__init__.pyi")
        else:
            candidates = (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi")
        return next((c for c in candidates if c in self.files), None)

    def _py_in(self, base: str, parts: list[str], name: str | None) -> str | None:
        if name is not None and name != "*":
            hit = self._py_module(base, [*parts, name])
            if hit:
                return hit
        return self._py_module(base, parts) if parts or name is not None else None

    def _python(self, path: str, spec: str) -> list[str]:
        module, _, name = spec.partition(":")
        name_or_none = name or None
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            base = _parent(path)
            for _ in range(dots - 1):
                if not base:
                    return []  # above the repository root
                base = _parent(base)
            parts = [p for p in module[dots:].split(".") if p]
            hit = self._py_in(base, parts, name_or_none)
            return [hit] if hit else []
        parts = [p for p in module.split(".") if p]
        if not parts:
            return []
        here = _parent(path)
        ordered, script_dir = self._py_search_path(here)
        # Every module of one top-level package searches the same roots: resolve once for all.
        key = ("script:" + here if script_dir else ordered[0], spec)
        found = self._py_absolute.get(key)
        if found is None:
            found = self._py_absolute[key] = []
            where = self._python_index()[1].get(parts[0], set())
            hit = next((h for base in ordered if base in where
                        for h in (self._py_in(base, parts, name_or_none),) if h), None)
            if hit is None and script_dir:  # a script or test directory: its own modules are importable
                hit = self._py_in(here, parts, name_or_none)
            if hit:
                found.append(hit)
        return found

    def _py_search_path(self, here: str) -> tuple[list[str], bool]:
        """(roots to search absolute imports from, in order; is ``here`` a non-package directory)."""
        cached = self._py_paths.get(here)
        if cached is None:
            roots = self._python_index()[0]
            ordered: list[str] = []
            top_pkg = here
            while _join(top_pkg, "__init__.py") in self.files or _join(top_pkg, "__init__.pyi") in self.files:
                if not top_pkg:
                    break
                top_pkg = _parent(top_pkg)
            if top_pkg != here:
                ordered.append(top_pkg)
            ordered += [r for r in ("", "src") if r not in ordered]
            ordered += sorted(roots - set(ordered))
            cached = self._py_paths[here] = (ordered, top_pkg == here)
        return cached

    # -- javascript / typescript ------------------------------------------------------------

    def _js(self, path: str, spec: str) -> list[str]:
        spec = spec.split("?", 1)[0].split("#", 1)[0]
        if not (spec.startswith("./") or spec.startswith("../") or spec in (".", "..")):
            return []  # a package name, an alias or an absolute URL: not a file of this list
        base = posixpath.normpath(_join(_parent(path), spec))
        if base == ".." or base.startswith("../") or base.startswith("/"):
            return []
        base = "" if base == "." else base
        candidates: list[str] = [base] if base else []
        stem, ext = posixpath.splitext(base)
        candidates += [stem + e for e in _JS_TO_TS.get(ext, ())]
        candidates += [base + e for e in JS_EXTENSIONS]
        candidates += [_join(base, "index" + e) for e in JS_EXTENSIONS]
        return next(([c] for c in candidates if c in self.files), [])

    # -- go ---------------------------------------------------------------------------------

    def _go_index(self) -> list[tuple[str, str]]:
        """(module path, module directory) per go.mod, longest module path first."""
        if self._go_modules is None:
            mods: list[tuple[str, str]] = []
            for p in self.files:
                if p == "go.mod" or p.endswith("/go.mod"):
                    data = self.read(p) if self.read else None
                    m = _GO_MODULE_RE.search(data or b"")
                    if m:
                        mods.append((m.group(1).decode("utf-8", "replace"), _parent(p)))
            self._go_modules = sorted(mods, key=lambda item: -len(item[0]))
        return self._go_modules

    def _go(self, path: str, spec: str) -> list[str]:
        for module, mod_dir in self._go_index():
            if spec == module or spec.startswith(module + "/"):
                pkg_dir = _join(mod_dir, spec[len(module) + 1:])
                return sorted(p for p in self._dir_index().get(pkg_dir, [])
                              if p.endswith(".go") and not p.endswith("_test.go"))
        return []

    # -- rust -------------------------------------------------------------------------------

    def _rust_crate(self, path: str) -> tuple[str, list[str]] | None:
        """(crate root directory, the module path of ``path`` in it), or None outside a crate."""
        if self._rust_roots is None:
            self._rust_roots = {_parent(p) for p in self.files
                                if p.endswith(("/lib.rs", "/main.rs")) or p in ("lib.rs", "main.rs")}
        d = _parent(path)
        while True:
            if d in self._rust_roots:
                break
            if not d:
                return None
            d = _parent(d)
        rel = path[len(d) + 1:] if d else path
        parts = rel[:-3].split("/") if rel.endswith(".rs") else rel.split("/")
        if rel in ("lib.rs", "main.rs"):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        return d, parts

    def _rust_module_file(self, root: str, segments: list[str], min_len: int) -> str | None:
        """The file of the longest module prefix of ``segments`` (at least ``min_len`` long)."""
        for k in range(len(segments), min_len - 1, -1):
            if k == 0:
                return next((c for c in (_join(root, "lib.rs"), _join(root, "main.rs")) if c in self.files), None)
            stem = _join(root, *segments[:k])
            for cand in (stem + ".rs", stem + "/mod.rs"):
                if cand in self.files:
                    return cand
        return None

    def _rust(self, path: str, spec: str) -> list[str]:
        if spec.startswith("mod "):
            name = spec[4:].strip()
            here = _parent(path)
            base = posixpath.basename(path)
            if base not in ("mod.rs", "lib.rs", "main.rs"):
                here = _join(here, base[:-3] if base.endswith(".rs") else base)
            return [c for c in (_join(here, name + ".rs"), _join(here, name, "mod.rs")) if c in self.files][:1]
        crate = self._rust_crate(path)
        if crate is None:
            return []
        root, module = crate
        segs = [s for s in spec.split("::") if s]
        if not segs:
            return []
        if segs[0] == "crate":
            target, min_len = segs[1:], 0
        elif segs[0] in ("self", "super"):
            at = list(module)
            while segs and segs[0] in ("self", "super"):
                if segs.pop(0) == "super":
                    if not at:
                        return []
                    at.pop()
            target, min_len = at + segs, len(at)
        else:  # 2018 uniform paths: a submodule of this module, or another crate (not ours)
            target, min_len = module + segs, len(module) + 1
        hit = self._rust_module_file(root, target, min_len)
        return [hit] if hit else []

    # -- java -------------------------------------------------------------------------------

    def _java_classes(self, suffix: str) -> list[str]:
        """Listed ``.java`` / ``.kt`` / ``.scala`` paths equal to or ending in ``/`` + ``suffix``."""
        if self._java_by_name is None:
            by_name: dict[str, list[str]] = {}
            for p in self.files:
                if p.endswith((".java", ".kt", ".scala")):
                    by_name.setdefault(posixpath.basename(p), []).append(p)
            self._java_by_name = by_name
        return sorted(p for p in self._java_by_name.get(posixpath.basename(suffix), [])
                      if p == suffix or p.endswith("/" + suffix))

    def _kotlin(self, path: str, spec: str) -> list[str]:
        return self._java(path, spec, ".kt")

    def _java(self, path: str, spec: str, ext: str = ".java") -> list[str]:
        parts = spec.split(".")
        wildcard = parts[-1] == "*"
        if wildcard:
            parts = parts[:-1]
        for k in range(len(parts), 0, -1):
            if k < len(parts) and not parts[k - 1][:1].isupper():
                continue  # a trailing member (static import) or package segment is not a class
            hits = self._java_classes("/".join(parts[:k]) + ext)
            if hits:
                return hits
        if wildcard:
            pkg = "/".join(parts)
            return sorted(p for d, ps in self._dir_index().items() if d == pkg or d.endswith("/" + pkg)
                          for p in ps if p.endswith(ext))
        return []


    def _scala(self, path: str, spec: str) -> list[str]:
        hits = self._java(path, spec, ".scala")
        if hits or spec.endswith(".*"):
            return hits
        parts = spec.split(".")
        while parts and not parts[-1][:1].isupper():  # a member (`a.B.m`) or a package: not a class
            parts.pop()
        for k in range(1, len(parts)):
            hits = self._java_classes("/".join(parts[k:]) + ".scala")
            if hits:
                return hits
        return []

    # -- bash / lua -------------------------------------------------------------------------

    def _bash(self, path: str, spec: str) -> list[str]:
        if spec.startswith("$"):  # `$DIR/x.sh`, `${BASH_SOURCE%/*}/x.sh`: what follows the variable
            lead = _BASH_LEAD_RE.match(spec)
            if lead is None or not spec[lead.end():].startswith("/"):
                return []
            spec = spec[lead.end() + 1:]
        if not spec or spec.startswith(("/", "~", "$")) or "$" in spec:
            return []
        for base in (_parent(path), ""):
            target = posixpath.normpath(_join(base, spec))
            if target in self.files:
                return [target]
        return []

    def _lua(self, path: str, spec: str) -> list[str]:
        module = spec.replace(".", "/")
        targets = (module + ".lua", module + "/init.lua")
        at_root = [t for t in targets if t in self.files]
        if at_root:
            return at_root[:1]
        return sorted({p for t in targets for p in self._by_suffix(t)})

    # -- ruby / php -------------------------------------------------------------------------

    def _by_suffix(self, suffix: str) -> list[str]:
        """Listed paths equal to or ending in ``/`` + ``suffix``, sorted (a basename index, built once)."""
        if self._by_basename is None:
            index: dict[str, list[str]] = {}
            for p in self.files:
                index.setdefault(posixpath.basename(p), []).append(p)
            self._by_basename = index
        return sorted(p for p in self._by_basename.get(posixpath.basename(suffix), [])
                      if p == suffix or p.endswith("/" + suffix))

    def _ruby(self, path: str, spec: str) -> list[str]:
        if spec.startswith("./"):
            target = posixpath.normpath(_join(_parent(path), spec[2:]))
            return [p for p in (target, target + ".rb") if p in self.files and p.endswith(".rb")][:1]
        target = spec if spec.endswith(".rb") else spec + ".rb"
        return [p for p in self._by_suffix(target) if p == target or p == "lib/" + target
                or p.endswith("/lib/" + target)]

    def _make(self, path: str, spec: str) -> list[str]:
        target = posixpath.normpath(_join(_parent(path), spec))
        return [target] if target in self.files else []

    def _terraform(self, path: str, spec: str) -> list[str]:
        if not spec.startswith(("./", "../")):
            return []
        folder = posixpath.normpath(_join(_parent(path), spec))
        return sorted(p for p in self.files if p.endswith(".tf") and _parent(p) == folder)

    def _php(self, path: str, spec: str) -> list[str]:
        parts = [p for p in spec.split("\\") if p]
        for k in range(len(parts), max(len(parts) - 1, 1) - 1, -1):
            hits = self._by_suffix("/".join(parts[-k:]) + ".php")
            if hits:
                return hits
        return []


    # -- c / c++ ----------------------------------------------------------------------------

    def _include(self, path: str, spec: str) -> list[str]:
        angle = spec.startswith("<") and spec.endswith(">")
        inner = spec[1:-1] if angle else spec
        if not angle:
            here = posixpath.normpath(_join(_parent(path), inner))
            if here in self.files:
                return [here]
        rel = posixpath.normpath(inner)
        if rel.startswith(("../", "/")) or rel in (".", ".."):
            return []
        hits = self._by_suffix(rel)
        rooted = [p for p in hits if p == rel or p == "include/" + rel or p.endswith("/include/" + rel)]
        return rooted or hits


def resolve_imports(path: str, specifiers: Iterable[str], files: Iterable[str],
                    read: Callable[[str], bytes | None] | None = None) -> set[str]:
    """The files of ``files`` that ``path``'s import ``specifiers`` name; see ``ImportResolver.resolve``.

    One-off convenience: it indexes ``files`` on every call, so to resolve many
    files against one list build an ``ImportResolver`` once instead.
    """
    return ImportResolver(files, read).resolve(path, specifiers)


def import_neighbours(focus_paths: Iterable[str], candidate_paths: Iterable[str], resolver: ImportResolver,
                      read: Callable[[str], bytes | None], *, cache: ImportCache | None = None,
                      max_bytes: int = MAX_IMPORT_SOURCE_BYTES) -> set[tuple[str, str]]:
    """Import edges ``(importer, imported)`` between the focus files and the candidates.

    Outgoing: every file of ``focus_paths`` that has a code language is parsed
    and its imports resolved (edges ``(focus file, imported file)``).
    Incoming: every file of ``candidate_paths`` is parsed, and an edge
    ``(candidate, focus file)`` is kept when it imports a focus file. Cost is
    one cached parse per file given (``cached_imports``, keyed by blob SHA-1 of
    what ``read`` returns) plus resolution; the caller bounds both iterables.
    Files with no code language are skipped without being read; files that
    ``read`` returns None for, or larger than ``max_bytes`` (bytes), are skipped.
    Never raises for content problems.
    """
    focus = list(dict.fromkeys(focus_paths))
    focus_set = set(focus)
    edges: set[tuple[str, str]] = set()
    imports: dict[str, set[str]] = {}

    def targets(p: str) -> set[str]:
        if p not in imports:
            imports[p] = set()
            if language_for_path(p) is not None:
                data = read(p)
                if data is not None and len(data) <= max_bytes:
                    try:
                        imports[p] = _resolved(p, cached_imports(p, data, cache=cache))
                    except Exception:  # noqa: BLE001 - one odd file must not break ranking
                        pass
        return imports[p]

    def _resolved(p: str, specs: list[str]) -> set[str]:
        """``resolver.resolve(p, specs)``, through ``cache`` when the result depends on the list alone: keyed by
        the resolver's ``digest``, the path and the specifiers (resolving is most of this function's time)."""
        if cache is None or not _RULES_DIGEST or not resolver.resolves_by_list_alone(p):
            return resolver.resolve(p, specs)
        key = "to:" + hashlib.sha1("\0".join([resolver.digest(), p, *specs]).encode("utf-8", "surrogateescape")
                                   ).hexdigest()
        hit = cache.get(key)
        if hit is not None:
            return set(hit)
        found = resolver.resolve(p, specs)
        cache.put(key, sorted(found))
        return found

    for f in focus:
        edges.update((f, t) for t in targets(f))
    for c in dict.fromkeys(candidate_paths):
        edges.update((c, t) for t in targets(c) & focus_set)
    return edges
