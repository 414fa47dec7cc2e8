"""libclang (Debian ``python3-clang``, libclang 14) as the independent oracle for C and C++.

The file is parsed by clang itself with the repository's headers at the same revision on the include path
(:meth:`LibclangOracle.at_revision` extracts ``*.h`` / ``*.hpp`` ... of that commit with ``git archive``), so
macros such as ``CJSON_PUBLIC(type)`` expand as the compiler sees them. Symbols: functions, methods,
constructors, destructors, conversion functions, function and class templates, classes, structs, unions,
enums, namespaces, typedefs and ``using`` aliases, and ``#define`` macros, of the file itself (not of its
headers). A symbol's content is the spelling of the tokens of its extent (clang's tokens: comments are not
tokens), joined by ``SEP``; a declaration and the definition of the same entity in the file (same
qualified name, same ``displayname``, e.g. ``f(int)``, and the same ``const``) are one symbol, their token runs
in source order.

Names follow the issue-22 design and ``gitmem/code/lang_c.py``: ``ns.Class.method`` from the enclosing
scopes; an out-of-line definition by the scopes it is written in plus its written qualifier (``A::f`` under
``using namespace ns;`` is ``A.f``; inside ``namespace ns {`` it is ``ns.A.f``); a namespace opened by a
macro (``FMT_BEGIN_NAMESPACE``: its first token is not ``namespace``), an ``inline`` and an anonymous
namespace add nothing to names (gitmem names what is written, as lang_c.py says); anonymous classes and
unions are not symbols (their members are not mapped). Left out: names with several distinct signatures
(overloads, which gitmem names by parameter types in its own spelling) or several kinds (``typedef struct
X {...} X``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.oracles import ORACLES
from bench.oracles.code import SEP

LIBCLANG = "/usr/lib/x86_64-linux-gnu/libclang-14.so.1"
DIST_PACKAGES = "/usr/lib/python3/dist-packages"
HEADER_GLOBS = ("*.h", "*.hh", "*.hpp", "*.hxx", "*.h++", "*.inc", "*.ipp", "*.tpp")
KEEP_TREES = 4
"""Header trees kept extracted (a pair needs two revisions; the harness reads revisions pair by pair)."""

_SYMBOL_KINDS = {
    "FUNCTION_DECL", "CXX_METHOD", "CONSTRUCTOR", "DESTRUCTOR", "CONVERSION_FUNCTION", "FUNCTION_TEMPLATE",
    "CLASS_DECL", "STRUCT_DECL", "UNION_DECL", "ENUM_DECL", "CLASS_TEMPLATE", "NAMESPACE", "TYPEDEF_DECL",
    "TYPE_ALIAS_DECL", "TYPE_ALIAS_TEMPLATE_DECL", "MACRO_DEFINITION",
}
_SCOPES = {"NAMESPACE", "CLASS_DECL", "STRUCT_DECL", "UNION_DECL", "CLASS_TEMPLATE", "LINKAGE_SPEC"}


def _cindex() -> Any:
    """``clang.cindex`` from Debian's dist-packages (the venv's Python is the same 3.11), or None."""
    try:
        import clang.cindex as ci  # type: ignore[import-not-found]
    except ImportError:
        sys.path.append(DIST_PACKAGES)
        try:
            import clang.cindex as ci
        except ImportError:
            return None
        finally:
            sys.path.remove(DIST_PACKAGES)
    if not ci.Config.loaded:
        ci.Config.set_library_file(LIBCLANG)
    return ci


def qualifier(toks: list[str], name: str) -> list[str]:
    """The written qualifier before ``name`` in a declaration's tokens: ``A :: B :: f (`` -> ``["A", "B"]``.

    Template arguments in the qualifier are dropped under a ``template<...>`` with parameters
    (``template<class T> void A<T>::f()`` -> ``["A"]``) and kept under ``template<>`` or none
    (``A<false>::f`` -> ``["A<false>"]``), as lang_c.py names them; ``~ A`` is ``~A``.
    """
    drop_args = toks[:2] == ["template", "<"] and toks[2:3] != [">"]
    merged: list[str] = []
    for t in toks:
        if merged and merged[-1] == "~" and (t[:1].isalpha() or t[:1] == "_"):
            merged[-1] = "~" + t
        else:
            merged.append(t)
    toks = merged
    for i, t in enumerate(toks):
        if t == name and i >= 2 and toks[i - 1] == "::":
            out: list[str] = []
            j = i - 1
            while j >= 1 and toks[j] == "::":
                k = j - 1
                args = ""
                if toks[k] == ">":  # template arguments
                    depth, close = 0, k
                    while k >= 0:
                        depth += 1 if toks[k] == ">" else -1 if toks[k] == "<" else 0
                        if depth == 0:
                            break
                        k -= 1
                    args = "" if drop_args else "".join(toks[k:close + 1]).replace(",", ",")
                    k -= 1
                if k < 0 or not (toks[k][:1].isalpha() or toks[k][:1] == "_"):
                    break
                out.insert(0, toks[k] + args)
                j = k - 1
            return out
    return []


class LibclangOracle:
    """C and C++ through clang's own parser."""

    name = "libclang"
    languages = frozenset({"c", "cpp"})

    def __init__(self) -> None:
        self._trees: dict[str, Path] = {}
        self._tree: Path | None = None
        self._base = Path(tempfile.gettempdir()) / f"gitmem-bench-clang-{os.getpid()}"

    def available(self) -> str | None:
        if not Path(LIBCLANG).exists() or _cindex() is None:
            return "libclang 14 / python3-clang is not installed (apt-get install python3-clang libclang1-14)"
        return None

    def at_revision(self, git_dir: str, rev: str) -> None:
        """Extract the headers of ``rev`` (for the include path of the next :meth:`symbols` calls)."""
        if rev not in self._trees:
            while len(self._trees) >= KEEP_TREES:
                old = next(iter(self._trees))
                shutil.rmtree(self._trees.pop(old), ignore_errors=True)
            tree = self._base / rev
            tree.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "-C", git_dir, "archive", rev], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tree), "--wildcards", *HEADER_GLOBS], input=archive,
                           capture_output=True)
            self._trees[rev] = tree
        self._tree = self._trees[rev]

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        ci = _cindex()
        tree = self._tree or self._base
        cpp = not path.endswith(".c") and not (path.endswith(".h") and b"class " not in source
                                                and b"namespace " not in source and b"template" not in source)
        name = str(tree / path)
        args = ["-x", "c++" if cpp else "c", "-std=c++20" if cpp else "-std=c11", f"-I{tree}",
                f"-I{tree / 'include'}", f"-I{tree / 'src'}", "-ferror-limit=0"]
        tu = ci.Index.create().parse(name, args, unsaved_files=[(name, source)],
                                     options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
                                     | ci.TranslationUnit.PARSE_INCOMPLETE)
        groups: dict[str, list[tuple[int, str, str, str]]] = {}  # name -> (offset, kind, displayname, content)

        def in_file(c: Any) -> bool:
            return c.location.file is not None and c.location.file.name == name

        def written_namespace(c: Any) -> bool:
            first = next(iter(c.get_tokens()), None)
            return first is not None and first.spelling == "namespace" and bool(c.spelling)

        def own_name(c: Any) -> str:
            """A class template specialisation keeps its arguments (``IntTraits<long>``), as gitmem names it."""
            if c.kind.name in ("STRUCT_DECL", "CLASS_DECL", "UNION_DECL") and "<" in c.displayname:
                return str(c.displayname).replace(", ", ",")
            return str(c.spelling)

        def scope_names(p: Any) -> list[str]:
            """Enclosing scope names, outermost first (macro-opened, inline, anonymous namespaces left out)."""
            names: list[str] = []
            while p is not None and p.kind.name in _SCOPES:
                if p.kind.name != "LINKAGE_SPEC" and not (p.kind.name == "NAMESPACE" and not written_namespace(p)):
                    names.append(own_name(p))
                p = p.semantic_parent
            return names[::-1]

        def walk(cursor: Any) -> None:
            for c in cursor.get_children():
                if not in_file(c):
                    continue
                kind = c.kind.name
                if kind == "LINKAGE_SPEC":
                    walk(c)
                    continue
                if kind == "NAMESPACE" and not written_namespace(c):
                    walk(c)
                    continue
                if kind not in _SYMBOL_KINDS or not c.spelling or "(anonymous" in c.spelling \
                        or "(unnamed" in c.spelling:
                    continue
                toks = [t.spelling for t in c.get_tokens() if t.kind.name != "COMMENT"]
                if kind == "MACRO_DEFINITION":
                    q = c.spelling
                elif c.lexical_parent is not None and c.semantic_parent is not None \
                        and c.lexical_parent != c.semantic_parent:
                    # out of line (``A::f`` under ``using namespace ns;``): named as written, like gitmem
                    outer = scope_names(c.lexical_parent)
                    written = qualifier(toks, c.spelling)
                    if written[:len(outer)] == outer:
                        written = written[len(outer):]
                    q = ".".join([*outer, *written, own_name(c)])
                else:
                    q = ".".join([*scope_names(c.semantic_parent), own_name(c)])
                key = c.displayname + (" const" if kind == "CXX_METHOD" and c.is_const_method() else "")
                groups.setdefault(q, []).append((c.extent.start.offset, kind, key, SEP.join(toks)))
                if kind in _SCOPES:
                    walk(c)

        walk(tu.cursor)
        out: dict[str, str] = {}
        for q, items in groups.items():
            if len({k for _, k, _, _ in items}) > 1 or len({d for _, _, d, _ in items}) > 1:
                continue
            out[q] = "\n".join(content for _, _, _, content in sorted(items))
        return out


ORACLES.append(LibclangOracle())
