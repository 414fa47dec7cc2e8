"""Oracles for code languages, none of them tree-sitter (see ``bench/oracles/__init__.py`` for the interface).

* ``ripper`` (Ruby): Ruby's own parser, ``Ripper.sexp``, through ``ruby bench/oracles/ripper.rb``; a symbol's
  content is its s-expression with positions removed.
* ``token_get_all`` (PHP): PHP's own tokenizer through ``php -r``; classes / interfaces / traits / enums and
  functions / methods are found by keyword and brace matching here, a symbol's content is its tokens (modifiers
  and ``#[...]`` attributes before it included) without whitespace and comments.
* ``ctags+pygments`` (C#, Kotlin): universal-ctags gives names, scopes and start lines (and end lines for C#),
  Pygments' lexer the comment-free token stream; a symbol runs from its start line (annotation / attribute
  lines right above it included) to where :func:`layout_end` says (brackets balanced, layout back left).
* ``libclang`` (C, C++): Debian's ``python3-clang`` (libclang 14), tokens of each cursor's extent minus comments.
* ``bash`` (Bash): ``declare -f`` prints a function in bash's own canonical form (comments and layout gone).

Every content string is a token sequence joined with ``SEP`` (Ruby: a JSON s-expression), so the harness can
blank a symbol's own name token for the moved check.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.oracles import ORACLES

HERE = Path(__file__).resolve().parent
SEP = "\x1f"
TIMEOUT_S = 60
"""A parser that takes longer than this on one file is stuck (the largest files here parse in under 2 s)."""


def _numbered(names: list[str]) -> list[str]:
    """gitmem's rule for a name defined several times in a file (not told apart otherwise): ``f``, ``f#2`` ..."""
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


# --------------------------------------------------------------------------- Ruby


class RipperOracle:
    """Ruby through ``Ripper.sexp`` (``bench/oracles/ripper.rb`` holds the naming rules)."""

    name = "ripper"
    languages = frozenset({"ruby"})

    def available(self) -> str | None:
        return None if shutil.which("ruby") else "ruby is not on PATH (apt-get install ruby)"

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        out = subprocess.run(["ruby", str(HERE / "ripper.rb")], input=source, capture_output=True,
                             timeout=TIMEOUT_S)
        if out.returncode != 0:
            raise ValueError(f"ripper: {out.stderr.decode(errors='replace').strip()[:200]}")
        result: dict[str, str] = json.loads(out.stdout)
        return result


# --------------------------------------------------------------------------- PHP

_PHP_TOKENS = ("$t=[];foreach(token_get_all(file_get_contents('php://stdin')) as $x){"
               "$t[]=is_array($x)?[token_name($x[0]),$x[1]]:[null,$x];}"
               "echo json_encode($t, JSON_INVALID_UTF8_SUBSTITUTE);")
_PHP_SKIP = {"T_WHITESPACE", "T_COMMENT", "T_DOC_COMMENT"}
_PHP_TYPES = {"T_CLASS", "T_INTERFACE", "T_TRAIT", "T_ENUM"}
_PHP_MODIFIERS = {"T_PUBLIC", "T_PRIVATE", "T_PROTECTED", "T_STATIC", "T_ABSTRACT", "T_FINAL", "T_READONLY"}
_PHP_OPEN = {"{", "T_CURLY_OPEN", "T_DOLLAR_OPEN_CURLY_BRACES"}
_IDENT = re.compile(r"[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*")


def php_structure(tokens: list[tuple[str | None, str]]) -> dict[str, str]:
    """gitmem name -> content from PHP tokens ``(token name or None, text)``, whitespace and comments included.

    Names (docs/how-it-works.md): classes, interfaces, traits, enums by their name (namespaces left out), methods
    ``Class.method`` (static or not), functions by their name; a second definition of one name ``NAME#2``.
    Anonymous classes (``new class``), closures (``function (``) and arrow functions are part of their
    enclosing symbol.
    """
    toks = [(k, t) for k, t in tokens if k not in _PHP_SKIP]
    kinds = [k or t for k, t in toks]
    n = len(toks)

    def close_of(i: int) -> int:
        """Index of the ``}`` matching the opener at ``i``."""
        depth = 0
        for j in range(i, n):
            if kinds[j] in _PHP_OPEN:
                depth += 1
            elif kinds[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return n - 1

    def start_of(i: int) -> int:
        """Back over modifiers and ``#[...]`` attributes before the keyword at ``i``."""
        while i > 0:
            if kinds[i - 1] in _PHP_MODIFIERS:
                i -= 1
            elif kinds[i - 1] == "]":
                depth, j = 0, i - 1
                while j >= 0:
                    if kinds[j] == "]":
                        depth += 1
                    elif kinds[j] in ("[", "T_ATTRIBUTE"):
                        depth -= 1
                        if depth == 0:
                            break
                    j -= 1
                if j < 0 or kinds[j] != "T_ATTRIBUTE":
                    return i
                i = j
            else:
                return i
        return i

    found: list[tuple[str, int, int]] = []

    def walk(lo: int, hi: int, prefix: str) -> None:
        i = lo
        while i < hi:
            k = kinds[i]
            prev = kinds[i - 1] if i > 0 else ""
            if k in _PHP_TYPES and prev not in ("T_NEW", "T_DOUBLE_COLON", "T_OBJECT_OPERATOR") \
                    and i + 1 < hi and _IDENT.fullmatch(toks[i + 1][1]):
                j = i + 1
                while j < hi and kinds[j] not in _PHP_OPEN:
                    j += 1
                end = close_of(j) if j < hi else hi - 1
                name = toks[i + 1][1]
                found.append((name, start_of(i), end))
                walk(j + 1, end, name + ".")
                i = end + 1
                continue
            if k == "T_FUNCTION":
                j = i + 1
                if j < hi and toks[j][1] == "&":
                    j += 1
                if j < hi and toks[j][1] != "(" and _IDENT.fullmatch(toks[j][1]):
                    name = toks[j][1]
                    depth, m = 0, j + 1
                    while m < hi:
                        if kinds[m] == "(":
                            depth += 1
                        elif kinds[m] == ")":
                            depth -= 1
                        elif depth == 0 and (kinds[m] in _PHP_OPEN or kinds[m] == ";"):
                            break
                        m += 1
                    end = close_of(m) if m < hi and kinds[m] in _PHP_OPEN else m
                    found.append((prefix + name, start_of(i), end))
                    i = end + 1
                    continue
            i += 1

    walk(0, n, "")
    names = _numbered([f for f, _, _ in found])
    return {name: SEP.join(t for _, t in toks[a:b + 1]) for name, (_, a, b) in zip(names, found, strict=True)}


class PhpOracle:
    """PHP through its own ``token_get_all``."""

    name = "token_get_all"
    languages = frozenset({"php"})

    def available(self) -> str | None:
        return None if shutil.which("php") else "php is not on PATH (apt-get install php-cli)"

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        out = subprocess.run(["php", "-r", _PHP_TOKENS], input=source, capture_output=True, timeout=TIMEOUT_S)
        if out.returncode != 0:
            raise ValueError(f"php: {out.stderr.decode(errors='replace').strip()[:200]}")
        return php_structure([(k, t) for k, t in json.loads(out.stdout)])


ORACLES.extend([RipperOracle(), PhpOracle()])


# --------------------------------------------------------------------------- tokens with positions


@dataclass
class Tok:
    line: int
    col: int
    text: str
    string: bool = False  # a piece of a string literal (not an interpolation): never a bracket


def lex(source: str, language: str) -> list[Tok]:
    """Tokens (line, column, text) that are neither whitespace nor comments, from Pygments' lexer."""
    from pygments.lexers import get_lexer_by_name
    from pygments.token import Comment, String

    out: list[Tok] = []
    line, col = 1, 0
    for kind, value in get_lexer_by_name(language, stripnl=False, ensurenl=False).get_tokens(source):
        stripped = value.strip()
        if stripped and kind not in Comment:
            lead = len(value) - len(value.lstrip())
            nl = value[:lead].count("\n")
            tcol = (lead - value[:lead].rfind("\n") - 1) if nl else col + lead
            out.append(Tok(line + nl, tcol, stripped, kind in String and kind not in String.Interpol))
        nls = value.count("\n")
        if nls:
            line += nls
            col = len(value) - value.rfind("\n") - 1
        else:
            col += len(value)
    return out


_OPEN, _CLOSE = {"(", "[", "{", "\\(", "${"}, {")", "]", "}"}  # string interpolations open too


CONTINUATIONS = frozenset({"extends", "with", "where", "derives", "throws", "rethrows", ":", "->", "=>", "=", "."})
"""Tokens that continue a declaration's head even at the start of a line at its column (``class A(x)`` then
``extends B`` on the next line at column 0; a body's ``{`` on a line of its own, Allman style, too)."""


def layout_end(toks: list[Tok], brackets: list[str], kw: int, start: int, hi: int) -> int:
    """Index of a declaration's last token: brackets balanced again and the next token on a line after the
    keyword's (token ``kw``) at or left of the column of its first token (``start``) ends it, unless it is the
    ``{`` of a body or one of ``CONTINUATIONS``; a closing bracket at
    that column ends it (the ``}`` of a body) when nothing follows it on its line. ``hi``: the enclosing end."""
    col, line = toks[start].col, toks[kw].line
    depth = 0
    for j in range(kw + 1, hi):
        t = toks[j]
        b = brackets[j]
        if depth == 0 and t.line > line and t.col <= col and b not in _CLOSE and b != "{" \
                and t.text not in CONTINUATIONS:
            return j - 1
        if b in _OPEN:
            depth += 1
        elif b in _CLOSE:
            depth -= 1
            if depth < 0:
                return j - 1
            if depth == 0 and t.col <= col and t.line > line:
                # a closing brace at the declaration's column ends it, unless more follows on its line
                if j + 1 >= hi or toks[j + 1].line > t.line:
                    return j
    return hi - 1


# --------------------------------------------------------------------------- C#, Kotlin: ctags + Pygments

_CTAGS_KINDS = {
    "csharp": {"class", "struct", "interface", "enum", "method", "record"},
    "kotlin": {"class", "object", "interface", "method", "typealias"},
}
_CTAGS_LANG = {"csharp": "C#", "kotlin": "Kotlin"}
_CTAGS_SCOPE_DROP = {"namespace", "package"}


class CtagsOracle:
    """C# and Kotlin: universal-ctags for names, scopes and start lines, Pygments for the tokens.

    A declaration ends by :func:`layout_end`. Left out: overloads (one name defined twice in a scope: gitmem
    names them by parameter types), extension functions (ctags does not name the receiver), locals.
    """

    name = "ctags+pygments"
    languages = frozenset(_CTAGS_KINDS)

    def available(self) -> str | None:
        if not shutil.which("ctags"):
            return "ctags is not on PATH (apt-get install universal-ctags)"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        language = "csharp" if path.endswith(".cs") else "kotlin"
        with tempfile.NamedTemporaryFile(suffix=Path(path).suffix) as f:
            f.write(source)
            f.flush()
            out = subprocess.run(["ctags", "--output-format=json", "--fields=+neKZS",
                                  f"--languages={_CTAGS_LANG[language]}", "-o", "-", f.name],
                                 capture_output=True, timeout=TIMEOUT_S)
        if out.returncode != 0:
            raise ValueError(f"ctags: {out.stderr.decode(errors='replace').strip()[:200]}")
        tags = [json.loads(line) for line in out.stdout.splitlines() if line.startswith(b"{")]
        spaces = {(t.get("scope") + "." if t.get("scope") else "") + t["name"]
                  for t in tags if t.get("kind") in _CTAGS_SCOPE_DROP}
        kinds = _CTAGS_KINDS[language]
        text = source.decode("utf-8", errors="replace")
        toks = lex(text, language)
        brackets = ["" if t.string else t.text for t in toks]
        lines = text.split("\n")
        named: dict[str, list[tuple[int, str]]] = {}
        for t in tags:
            if t.get("kind") not in kinds or t["name"].startswith("<") or t.get("scopeKind") in ("method", "function"):
                continue
            scope = t.get("scope", "")
            for ns in sorted(spaces, key=len, reverse=True):
                if scope == ns or scope.startswith(ns + "."):
                    scope = scope[len(ns) + 1:]
                    break
            named.setdefault((scope + "." if scope else "") + t["name"], []).append((t["line"], t["kind"]))
        result: dict[str, str] = {}
        for name, places in named.items():
            if len(places) != 1:
                continue  # overloads / repeats: gitmem names them by parameter types
            line = start = places[0][0]
            while start > 1 and lines[start - 2].strip()[:1] in ("@", "["):
                start -= 1  # annotations and attributes belong to the declaration
            first = next((i for i, t in enumerate(toks) if t.line >= start), None)
            kw = next((i for i, t in enumerate(toks) if t.line >= line), None)
            if first is not None and kw is not None:
                end = layout_end(toks, brackets, kw, first, len(toks))
                result[name] = SEP.join(t.text for t in toks[first:end + 1])
        return result


ORACLES.append(CtagsOracle())
