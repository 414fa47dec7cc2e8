"""Oracles for Swift, Scala (Pygments tokens + bracket matching) and Bash (bash's own ``declare -f``).

No Swift or Scala parser runs here (universal-ctags 5.9 has none, swiftc / scalac are not installed), so the
Swift and Scala oracle is a small structure finder over Pygments' lexer tokens, sharing no code with gitmem's
tree-sitter rules: a declaration starts at its keyword (``class`` / ``struct`` / ``enum`` / ``protocol`` /
``actor`` / ``func`` / ``init`` / ``deinit`` / ``subscript`` / ``var`` / ``let`` in Swift; ``class`` /
``object`` / ``trait`` / ``enum`` / ``def`` / ``val`` / ``var`` / ``type`` in Scala), modifiers and
``@annotations`` before it included, and ends where its brackets are balanced again and a token on a later
line starts at or left of the declaration's column (its closing ``}`` included). That end rule reads the
layout (as Scala 3's indentation syntax does); on code laid out as these repositories are it matches the
syntax. Names follow the gitmem docs of ``gitmem/code/lang_swift.py`` / ``lang_scala.py``: nesting with
``.``, members of ``extension Foo`` as ``Foo.member``, ``Type.init``, a Scala companion object ``Foo$``
(its members ``Foo.x``, beside the class's), ``Foo.this``. Left out (not mapped): names defined more than
once in a file (overloads: gitmem names them by argument labels / parameter types), extension blocks
themselves, ``let (a, b)`` / ``val a, b`` patterns.

Bash: bash itself parses the file as the body of one wrapper function (``eval "wrap() { <file> }"``, which
defines the wrapper and runs nothing of the file) and prints it with ``declare -f``: comments gone, layout
bash's own; every function definition inside that printout (at any depth) is a symbol, its content the
printed text. Names are flat (a function defined inside another is ``inner``), a second definition ``f#2``,
as gitmem names them.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from bench.oracles import ORACLES
from bench.oracles.code import SEP, TIMEOUT_S, _numbered, layout_end, lex

_SPEC = {
    "swift": {
        "types": {"class", "struct", "enum", "protocol", "actor", "extension"},
        "funcs": {"func", "init", "deinit", "subscript"},
        "values": {"var", "let", "typealias", "associatedtype"},
        "modifiers": {"public", "private", "fileprivate", "internal", "open", "final", "static", "class", "override",
                      "mutating", "nonmutating", "convenience", "required", "dynamic", "lazy", "weak", "unowned",
                      "indirect", "optional", "nonisolated", "isolated", "async", "package", "consuming",
                      "borrowing", "(", ")", "set", "unsafe"},
    },
    "scala": {
        "types": {"class", "object", "trait", "enum"},
        "funcs": {"def"},
        "values": {"val", "var", "type"},
        "modifiers": {"private", "protected", "final", "sealed", "abstract", "implicit", "lazy", "override",
                      "case", "inline", "transparent", "open", "opaque", "infix", "given"},
    },
}


def _ident(t: str) -> bool:
    return bool(t) and (t[0].isalpha() or t[0] in "_`$") and t not in ("(", "{")


def structure(source: str, language: str) -> dict[str, str]:
    """gitmem name -> content (tokens joined by ``SEP``) of every declaration found (see the module docstring)."""
    spec = _SPEC[language]
    toks = lex(source, language)
    n = len(toks)
    texts = [t.text for t in toks]
    brackets = ["" if t.string else t.text for t in toks]

    def start_of(i: int) -> int:
        while i > 0:
            p = texts[i - 1]
            if p in spec["modifiers"] and p not in "()":
                i -= 1
            elif p.startswith("@") and len(p) > 1:
                i -= 1
            elif i > 1 and texts[i - 2] == "@" and _ident(p):
                i -= 2
            elif p in (")", "]"):
                depth, j = 0, i - 1
                while j >= 0:
                    depth += 1 if brackets[j] in (")", "]") else -1 if brackets[j] in ("(", "[") else 0
                    if depth == 0:
                        break
                    j -= 1
                if j <= 0:
                    return i
                before = texts[j - 1]
                if before.startswith("@") or before in ("private", "protected", "set") or (
                        j > 1 and texts[j - 2] == "@"):
                    i = j
                else:
                    return i
            else:
                return i
        return i

    found: list[tuple[str, str, int, int]] = []  # name, kind, first token, last token

    def walk(lo: int, hi: int, prefix: str, container: str) -> None:
        i = lo
        while i < hi:
            t = texts[i]
            prev = texts[i - 1] if i > 0 else ""
            if prev == ".":
                i += 1
                continue
            if t in spec["types"] and container != "func" and i + 1 < hi and _ident(texts[i + 1]) \
                    and not (language == "swift" and t == "class" and texts[i + 1] in ("func", "var", "let")):
                j = i + 1
                name = texts[j].strip("`")
                while language == "swift" and j + 2 < hi and texts[j + 1] == "." and _ident(texts[j + 2]):
                    j += 2
                    name += "." + texts[j]
                start = start_of(i)
                end = layout_end(toks, brackets, i, start, hi)
                q = prefix + name
                if t != "extension":
                    found.append((q, t, start, end))
                walk(j + 1, end + 1, q + ".", "type")
                i = end + 1
                continue
            if t in spec["funcs"]:
                if t in ("init", "deinit", "subscript"):
                    name, j = t, i
                elif i + 1 < hi:
                    name, j = texts[i + 1].strip("`"), i + 1
                else:
                    break
                if language == "swift" and t == "init" and container == "func":
                    i += 1
                    continue
                start = start_of(i)
                end = layout_end(toks, brackets, i, start, hi)
                found.append((prefix + name, "func", start, end))
                walk(j + 1, end + 1, prefix + name + ".", "func")
                i = end + 1
                continue
            if t in spec["values"] and container in ("type", "top") and i + 1 < hi and _ident(texts[i + 1]) \
                    and texts[i + 1].strip("`"):
                start = start_of(i)
                end = layout_end(toks, brackets, i, start, hi)
                if "," not in texts[i + 2:i + 3]:
                    found.append((prefix + texts[i + 1].strip("`"), "value", start, end))
                i = end + 1
                continue
            i += 1

    walk(0, n, "", "top")
    if language == "scala":  # a companion object is Foo$ itself; its members stay Foo.x beside the class's
        types = {q for q, k, _, _ in found if k in ("class", "trait", "enum")}
        found = [(q + "$" if k == "object" and q in types else q, k, a, b) for q, k, a, b in found]
    counts: dict[str, int] = {}
    for q, _, _, _ in found:
        counts[q] = counts.get(q, 0) + 1
    return {q: SEP.join(texts[a:b + 1]) for q, _, a, b in found if counts[q] == 1}


class PygmentsStructureOracle:
    """Swift and Scala: Pygments tokens, declarations by keyword, ends by brackets and layout."""

    name = "pygments-structure"
    languages = frozenset({"swift", "scala"})

    def available(self) -> str | None:
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        language = "swift" if path.endswith(".swift") else "scala"
        return structure(source.decode("utf-8", errors="replace"), language)


_WRAP = "__gitmem_oracle_wrap"
_BASH_DEF = re.compile(r"^(?P<indent> *)(?:function )?(?P<name>\S+) \(\) $")


def bash_canonical(canonical: str) -> dict[str, str]:
    """gitmem name -> ``declare -f`` text of every function inside bash's printout of the wrapped file.

    bash prints a nested definition as ``<indent>name () `` then ``<indent>{ `` ... ``<indent>}`` (a ``;`` may
    follow); the text is kept with that indent removed.
    """
    lines = canonical.split("\n")
    found: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        m = _BASH_DEF.match(line)
        if not m or m["name"] == _WRAP or i + 1 >= len(lines) or lines[i + 1].rstrip() != m["indent"] + "{":
            continue
        ind = m["indent"]
        for k in range(i + 2, len(lines)):
            if lines[k].rstrip().rstrip(";") == ind + "}":
                found.append((m["name"], "\n".join(x[len(ind):] for x in lines[i:k + 1])))
                break
    names = _numbered([n for n, _ in found])
    return {name: text for name, (_, text) in zip(names, found, strict=True)}


class BashOracle:
    """Bash functions, parsed and printed by bash itself (see the module docstring)."""

    name = "bash-declare-f"
    languages = frozenset({"bash"})

    def available(self) -> str | None:
        return None if shutil.which("bash") else "bash is not on PATH"

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        # the file becomes the body of one function: bash parses all of it and runs none of it
        script = f'eval "{_WRAP}() {{\n$(cat)\n}}" && declare -f {_WRAP}'
        out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], input=source, capture_output=True,
                             timeout=TIMEOUT_S, env={"PATH": "/usr/bin:/bin"})
        if out.returncode != 0:
            raise ValueError(f"bash: {out.stderr.decode(errors='replace').strip()[:200]}")
        return bash_canonical(out.stdout.decode(errors="replace"))


ORACLES.extend([PygmentsStructureOracle(), BashOracle()])
