"""The registry of per-language rules: language name -> how its symbols are found.

Owns :data:`SPECS` (languages whose symbols come from tree-sitter handlers and
whose fingerprints are token hashes, see ``languages`` and ``symbols``),
:data:`ANALYZERS` (formats with their own analyzer, e.g. configuration files
whose keys are symbols and whose fingerprints hash values, not tokens),
:func:`written_symbol` and :func:`written_choices`. Every language of ``languages.SUPPORTED_LANGUAGES`` is
in exactly one of the three tables (``tests/test_symbols.py`` checks it).

A new language lives in its own module (``gitmem/code/lang_<name>.py``) that
builds a :class:`~gitmem.code.languages.LanguageSpec` from the helpers in
``languages`` and is listed here (``SPEC_ANALYZERS``: a format that prepares its source before a spec's
token rules run, such as SQL) by its module and attribute name: the tables import a later language's module
on first use only (:class:`_Registry`). Must not import tree-sitter at module level.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .languages import (
    CSHARP,
    GO,
    JAVA,
    JAVASCRIPT,
    KOTLIN,
    PHP,
    PYTHON,
    RUBY,
    RUST,
    TSX,
    TYPESCRIPT,
    LanguageSpec,
    language_for_path,
)

if TYPE_CHECKING:
    from ..model import Symbol
    from .lang_sql import SpecRunner

_V = TypeVar("_V")


class _Registry(Mapping[str, _V]):
    """A read-only table whose later languages' entries are imported on first use.

    The modules of the languages added in issue 22 cost ~7 ms to import together; a process that reads no
    file of theirs (a post-commit hook on a commit of Python files, a per-file hook on a ``.py``) never pays
    it. Keys are all known up front (iteration, ``in``, ``len`` import nothing); ``[key]`` / ``get`` imports
    the entry's module once (``gitmem.code.<module>``) and keeps the value."""

    def __init__(self, eager: dict[str, _V], lazy: dict[str, tuple[str, str, str]] | None = None) -> None:
        self._values = dict(eager)
        self._lazy = dict(lazy or {})  # key -> (module in gitmem.code, attribute, key in that attribute or "")

    def __getitem__(self, key: str) -> _V:
        try:
            return self._values[key]
        except KeyError:
            module, attr, item = self._lazy[key]  # KeyError: not a key of this table
        value: Any = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        if item:
            value = value[item]
        self._values[key] = value
        return value  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._values, *self._lazy]))

    def __len__(self) -> int:
        return len(set(self._values) | set(self._lazy))

    def __contains__(self, key: object) -> bool:
        return key in self._values or key in self._lazy


#: Language name -> its tree-sitter rules.
SPECS: Mapping[str, LanguageSpec] = _Registry(
    {s.name: s for s in (PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA, RUBY, PHP, CSHARP, KOTLIN)},
    {"dockerfile": ("lang_dockerfile", "DOCKERFILE", ""), "make": ("lang_make", "MAKE", ""),
     "c": ("lang_c", "C", ""), "cpp": ("lang_c", "CPP", ""),
     "swift": ("lang_swift", "SWIFT", ""), "scala": ("lang_scala", "SCALA", ""),
     "bash": ("lang_bash", "BASH", ""), "lua": ("lang_lua", "LUA", "")})

#: Analyzer of one blob: normalised source bytes -> (qualified name -> Symbol, file fingerprint).
Analyzer = Callable[[bytes], "tuple[dict[str, Symbol], str]"]

#: Language name -> its own analyzer, for formats that are not token-hashed code.
ANALYZERS: Mapping[str, Analyzer] = _Registry({}, {
    "yaml": ("lang_data", "analyze_yaml", ""), "toml": ("lang_data", "analyze_toml", ""),
    "json": ("lang_data", "analyze_json", ""), "markdown": ("lang_markdown", "analyze", ""),
    "terraform": ("lang_hcl", "analyze_terraform", ""), "hcl": ("lang_hcl", "analyze_hcl", "")})

#: Language name -> an analyzer that prepares the source and runs a spec's token rules through the runner it
#: is given (``symbols.analyze_with_spec``; SQL blanks the statements its grammar cannot read).
SPEC_ANALYZERS: Mapping[str, Callable[[bytes, SpecRunner], tuple[dict[str, Symbol], str]]] = _Registry(
    {}, {"sql": ("lang_sql", "analyze", "")})

#: Language name -> written-name converter of an analyzer language (identity when absent).
ANALYZER_WRITTEN_NAMES: Mapping[str, Callable[[str], str]] = _Registry({}, {
    "yaml": ("lang_data", "written_name", ""), "toml": ("lang_data", "written_name", ""),
    "json": ("lang_data", "written_name", ""), "terraform": ("lang_hcl", "written_terraform_name", ""),
    "sql": ("lang_sql", "written_name", "")})

#: Language name -> fn(repo-relative path) -> the path's dialect (a key of ``DIALECT_ANALYZERS``) or None:
#: files of one format whose kinds depend on where they are (a GitHub workflow's jobs, package.json's
#: scripts). The dialect, not the language, keys the symbol caches.
DIALECTS: Mapping[str, Callable[[str], str | None]] = _Registry(
    {}, {"yaml": ("lang_data", "dialect", ""), "json": ("lang_data", "dialect", "")})

#: Dialect name -> its analyzer (``lang_data.DIALECT_ANALYZERS``, whose keys a test keeps equal to these).
DIALECT_ANALYZERS: Mapping[str, Analyzer] = _Registry({}, {
    d: ("lang_data", "DIALECT_ANALYZERS", d) for d in ("yaml+github-actions", "yaml+gitlab-ci", "json+package")})


def written_symbol(path: str, name: str) -> str:
    """A symbol name typed by a person for the file at ``path``, in gitmem's dotted form.

    Each language's own separators are accepted (Ruby ``Billing::Invoice#total``,
    PHP ``App\\Http\\Ctl::show``); names of other files are returned unchanged.
    """
    language = language_for_path(path) or ""
    if language in SPECS:
        return SPECS[language].written_name(name)
    convert = ANALYZER_WRITTEN_NAMES.get(language)
    return convert(name) if convert is not None else name


def written_choices(path: str, name: str) -> list[list[str]]:
    """The gitmem names a typed ``name`` may mean in the file at ``path``, in tiers (``LanguageSpec.written_choices``):
    the first tier with a name in the file's table decides; two found in one tier are ambiguous.

    Default: the name as typed, then :func:`written_symbol`'s form. Ruby: ``A#m`` the instance method first,
    ``A::m`` the class method (``A.m[self]``) first, ``A.m`` both in one tier. C++: also without parameter
    names and default values.
    """
    spec = SPECS.get(language_for_path(path) or "")
    if spec is not None and spec.written_choices is not None:
        tiers = spec.written_choices(name)
    else:
        tiers = [[name], [written_symbol(path, name)]]
    out: list[list[str]] = []
    seen: set[str] = set()
    for tier in tiers:
        fresh = [n for n in dict.fromkeys(tier) if n not in seen]
        seen.update(fresh)
        if fresh:
            out.append(fresh)
    return out
