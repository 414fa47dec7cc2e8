"""Text helpers shared by the LanceDB index and the hook index: identifier splitting, query terms.

Standard library only (the hook index imports it on hot paths).
"""

from __future__ import annotations

import functools  # already loaded by ``re``
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

#: Most distinct terms kept from a query for the full-text search (a whole prompt
#: may be passed as the query).
MAX_QUERY_TERMS = 64

_NON_SPACE = re.compile(r"\S+")
_SEPARATORS = re.compile(r"[\W_]+")
_TERM = re.compile(r"[^\W_]+")
# ASCII fast path of _camel_parts: acronym before a capitalised word | (Capital)lower run | acronym | digits
_ASCII_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _camel_parts(piece: str) -> list[str]:
    """Split a run of letters and digits at case and digit boundaries (Unicode-aware).

    Boundaries: lower → upper (``parseConfig``), letter ↔ digit (``v2``), and the
    last capital of an acronym followed by a lowercase letter (``HTTPServer`` →
    ``HTTP``, ``Server``).
    """
    if piece.isascii():
        return _ASCII_CAMEL.findall(piece)
    out: list[str] = []
    start = 0
    for i in range(1, len(piece)):
        a, b = piece[i - 1], piece[i]
        if ((a.islower() and b.isupper()) or (a.isdigit() != b.isdigit())
                or (a.isupper() and b.isupper() and i + 1 < len(piece) and piece[i + 1].islower())):
            out.append(piece[start:i])
            start = i
    out.append(piece[start:])
    return out


def _identifier_parts(word: str) -> list[str]:
    """Distinct parts of one whitespace-free word (path, dotted, snake and camel parts), not the word itself."""
    parts: list[str] = []
    for piece in _SEPARATORS.split(word):
        if not piece:
            continue
        parts.append(piece)
        sub = _camel_parts(piece)
        if len(sub) > 1:
            parts.extend(sub)
    return [p for p in dict.fromkeys(parts) if p != word]


def split_identifiers(text: str) -> str:
    """Append the parts of identifiers and paths after each word, keeping the originals.

    Each whitespace-separated word that splits into two or more parts is followed
    by its distinct parts: path and dotted components, snake_case pieces, and
    camelCase / PascalCase words (acronyms kept whole: ``HTTPServer`` → ``HTTP
    Server``; digits apart: ``parseV2`` → ``parse V 2``). Plain words, also when
    wrapped in punctuation (``(parse)``), are left alone. Used to build the full-text column, because LanceDB's
    ``simple`` tokenizer splits on punctuation but not on case changes.

    >>> split_identifiers("see parseConfig in src/cfg_loader.py")
    'see parseConfig parse Config in src/cfg_loader.py src cfg loader py'
    """

    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        if word.isalpha() and (word.islower() or word.isupper() or word[1:].islower()):
            return word  # fast path: a plain word (most of the text) never splits
        parts = _identifier_parts(word)
        return word + " " + " ".join(parts) if len(parts) > 1 else word

    return _NON_SPACE.sub(repl, text)


def query_terms(query: str) -> list[str]:
    """The plain terms of a free-text query, for the full-text search.

    Identifiers are split (``split_identifiers``), then only runs of letters and
    digits are kept, so quotes, slashes, dashes, operators (``AND``, ``+``,
    ``:``, parentheses, ``*``), SQL fragments and emoji never reach a parser.
    Terms are lower-cased and deduplicated, first occurrence first, at most
    ``MAX_QUERY_TERMS``.
    """
    seen: set[str] = set()
    out: list[str] = []
    for term in _TERM.findall(split_identifiers(query)):
        t = term.lower()
        if t not in seen:
            seen.add(t)
            out.append(t)
            if len(out) >= MAX_QUERY_TERMS:
                break
    return out


# --------------------------------------------------------------------------- qualified symbol names

_NAME_SUFFIX = re.compile(r"#\d+$")
#: A C++ operator whose own name has brackets (``operator()``, ``operator[]``, ``operator new[]``): they are not
#: a key (``A.operator()(int)`` is ``operator()`` with the key ``(int)``).
_BRACKET_OPERATOR = re.compile(r"operator(?:\(\)|\[\]| (?:new|delete)\[\])")


def name_parts(name: str) -> list[str]:
    """A qualified symbol name split at its nesting dots, not at dots inside brackets or inside a
    double-quoted part (a configuration key written as a JSON string, ``exports."./a.json"``):
    ``Parser.parse(Object...).Local`` -> ``["Parser", "parse(Object...)", "Local"]``."""
    if '"' not in name and "(" not in name and "[" not in name and "<" not in name:
        return name.split(".")
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in _unquoted(name):
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0:
            parts.append(name[start:i])
            start = i + 1
    parts.append(name[start:])
    return parts


def _unquoted(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of ``text`` outside its double-quoted parts (JSON strings, with
    ``\\`` escapes; the quotes themselves left out)."""
    quoted, escaped = False, False
    for i, ch in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        else:
            yield i, ch


def _first_bracket(part: str, start: int = 0) -> int:
    """Index (> 0, >= ``start``) of the first ``(`` or ``[`` of ``part`` outside double quotes, else ``len(part)``."""
    for i, ch in _unquoted(part):
        if ch in "([" and i > 0 and i >= start:
            return i
    return len(part)


@functools.lru_cache(maxsize=1 << 16)
def name_base(name: str) -> str:
    """``name`` without what tells same-named definitions apart in its last part: a ``#2`` number,
    Java parameter types ``(String)``, Rust ``[cfg(unix)]`` (``Parser.parse(String)`` -> ``Parser.parse``),
    a sequence item's label (``steps[Run tests]`` -> ``steps``); brackets inside a double-quoted key
    (``"a[1]"``) are part of the key, and a C++ ``operator()`` / ``operator[]`` keeps its brackets
    (``A.operator()(int)`` -> ``A.operator()``)."""
    parts = name_parts(name)
    last = _NAME_SUFFIX.sub("", parts[-1])
    own = _BRACKET_OPERATOR.match(last)
    parts[-1] = last[:_first_bracket(last, own.end() if own else 0)]
    return ".".join(parts)


@functools.lru_cache(maxsize=1 << 16)
def name_leaf(name: str) -> str:
    """The own name of a symbol: its last part without number or key (``Parser.parse(String)`` -> ``parse``).
    ``name_base`` and this are pure and called per anchor per ranking: cached (65,536 names, a few MB at most)."""
    return name_parts(name_base(name))[-1]


#: Characters that give a name part structure (nesting dots, keys in brackets) and so cannot appear bare in a
#: name made from free text (a Markdown heading, a Makefile target ``%.o``).
_NAME_SPECIAL = re.compile(r"[.()\[\]<>]|#\d+$")
_NAME_BRACKETS = str.maketrans("([<)]>", "{{{}}}")


def quote_name_part(text: str) -> str:
    """Free text (a heading, a target) as one part of a qualified name that ``name_parts`` / ``name_base``
    / ``name_leaf`` keep whole.

    Text without ``.``, brackets (``()[]<>``) or a trailing ``#<digits>`` is returned unchanged
    (``Rollback``); other text is wrapped in parentheses, its own brackets written as braces
    (``v1.2 (beta)`` -> ``(v1.2 {beta})``, ``%.o`` -> ``(%.o)``, ``Issue #12`` -> ``(Issue #12)``).
    A part that starts with ``(`` is neither split at its dots nor cut by ``name_base``.
    """
    if not _NAME_SPECIAL.search(text):
        return text
    return "(" + text.translate(_NAME_BRACKETS) + ")"


# The two patterns below are compiled on first use: their non-ASCII ranges cost ~0.5 ms to compile, which every
# process importing this module (the per-tool-call hooks among them) would pay, and only key names use them.


@functools.cache
def _bare_key() -> re.Pattern[str]:
    """A configuration key written bare in a key path (``quote_key``); any other key is a JSON string."""
    return re.compile(r'[^\s."\\#()\[\]<>\x00-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]+')


@functools.cache
def _invisible() -> re.Pattern[str]:
    """Characters a name never carries bare (C0 controls, DEL, zero-width and bidi controls): a terminal or an
    agent would read text that is not there (Trojan Source, CVE-2021-42574); written as ``\\uXXXX``."""
    return re.compile("[\x7f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def escape_invisible(text: str) -> str:
    """``text`` with each invisible character (DEL, zero-width and bidi controls; C0 controls are already
    escaped by ``json.dumps``) written as ``\\uXXXX``."""
    return _invisible().sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def quote_key(key: str) -> str:
    """A configuration file's key (YAML, TOML, JSON) as one part of a symbol name: bare, or a JSON string
    when it is empty or holds whitespace, ``.``, ``"``, ``\\``, ``#``, a bracket, ``::`` or an invisible
    character (a control, DEL, a zero-width or bidi control: escaped as ``\\uXXXX``)
    (``./package.json`` -> ``"./package.json"``, ``lint:fix`` stays bare). The one owner of the rule: the
    configuration analyzer (``code.lang_data``) names keys with it and the shell hook (``shellwords``) the
    ``package.json`` scripts a command runs."""
    if _bare_key().fullmatch(key) and "::" not in key:
        return key
    import json

    return escape_invisible(json.dumps(key, ensure_ascii=False))


def unquote_key(part: str) -> str:
    """The key a name part written by ``quote_key`` stands for: a JSON string's value (``"a b"`` -> ``a b``);
    any other part (bare, or not a valid JSON string) as it is."""
    if len(part) >= 2 and part[0] == part[-1] == '"':
        import json

        try:
            value = json.loads(part)
        except ValueError:
            return part
        return value if isinstance(value, str) else part
    return part


_UNBRACE = str.maketrans("{}", "()")


def plain_name(name: str) -> str:
    """``name`` as a person writes it, its quoting taken off part by part: a key written as a JSON string
    (``scripts."build.all"`` -> ``scripts.build.all``), free text wrapped by ``quote_name_part``
    (``Notes.(v1.2 {beta})`` -> ``Notes.v1.2 (beta)``, ``(build/app.o)`` -> ``build/app.o``; its braces read as
    parentheses). Other parts are kept. Many names may share a plain form: it is for matching what a person
    typed, when exactly one name has it."""
    out = []
    for part in name_parts(name):
        if len(part) >= 2 and part[0] == part[-1] == '"':
            part = unquote_key(part)
        elif len(part) >= 2 and part[0] == "(" and part[-1] == ")":
            part = part[1:-1].translate(_UNBRACE)
        out.append(part)
    return ".".join(out)
