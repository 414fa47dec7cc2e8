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
token rules run, such as SQL). Must not import tree-sitter at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import lang_data
from .lang_bash import BASH
from .lang_c import CPP, C
from .lang_dockerfile import DOCKERFILE
from .lang_hcl import analyze_hcl, analyze_terraform, written_terraform_name
from .lang_lua import LUA
from .lang_make import MAKE
from .lang_markdown import analyze as analyze_markdown
from .lang_scala import SCALA
from .lang_sql import SpecRunner
from .lang_sql import analyze as analyze_sql
from .lang_sql import written_name as written_sql_name
from .lang_swift import SWIFT
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

#: Language name -> its tree-sitter rules.
SPECS: dict[str, LanguageSpec] = {s.name: s for s in (PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA,
                                                             RUBY, PHP, CSHARP, KOTLIN)}
SPECS["dockerfile"] = DOCKERFILE
SPECS["make"] = MAKE
SPECS.update({s.name: s for s in (C, CPP)})
SPECS.update({s.name: s for s in (SWIFT, SCALA, BASH, LUA)})

#: Analyzer of one blob: normalised source bytes -> (qualified name -> Symbol, file fingerprint).
Analyzer = Callable[[bytes], "tuple[dict[str, Symbol], str]"]

#: Language name -> its own analyzer, for formats that are not token-hashed code.
ANALYZERS: dict[str, Analyzer] = {}
ANALYZERS["yaml"] = lang_data.analyze_yaml
ANALYZERS["toml"] = lang_data.analyze_toml
ANALYZERS["json"] = lang_data.analyze_json
ANALYZERS["markdown"] = analyze_markdown
ANALYZERS["terraform"] = analyze_terraform
ANALYZERS["hcl"] = analyze_hcl

#: Language name -> an analyzer that prepares the source and runs a spec's token rules through the runner it
#: is given (``symbols.analyze_with_spec``; SQL blanks the statements its grammar cannot read).
SPEC_ANALYZERS: dict[str, Callable[[bytes, SpecRunner], tuple[dict[str, Symbol], str]]] = {}
SPEC_ANALYZERS["sql"] = analyze_sql

#: Language name -> written-name converter of an analyzer language (identity when absent).
ANALYZER_WRITTEN_NAMES: dict[str, Callable[[str], str]] = {}
ANALYZER_WRITTEN_NAMES["yaml"] = lang_data.written_name
ANALYZER_WRITTEN_NAMES["toml"] = lang_data.written_name
ANALYZER_WRITTEN_NAMES["json"] = lang_data.written_name
ANALYZER_WRITTEN_NAMES["terraform"] = written_terraform_name
ANALYZER_WRITTEN_NAMES["sql"] = written_sql_name

#: Language name -> fn(repo-relative path) -> the path's dialect (a key of ``DIALECT_ANALYZERS``) or None:
#: files of one format whose kinds depend on where they are (a GitHub workflow's jobs, package.json's
#: scripts). The dialect, not the language, keys the symbol caches.
DIALECTS: dict[str, Callable[[str], str | None]] = {}
DIALECTS["yaml"] = lang_data.dialect
DIALECTS["json"] = lang_data.dialect

#: Dialect name -> its analyzer.
DIALECT_ANALYZERS: dict[str, Analyzer] = {}
DIALECT_ANALYZERS.update(lang_data.DIALECT_ANALYZERS)


def written_symbol(path: str, name: str) -> str:
    """A symbol name typed by a person for the file at ``path``, in gitmem's dotted form.

    Each language's own separators are accepted (Ruby ``Billing::Invoice#total``,
    PHP ``App\\Http\\Ctl::show``); names of other files are returned unchanged.
    """
    language = language_for_path(path)
    if language in SPECS:
        return SPECS[language].written_name(name)
    convert = ANALYZER_WRITTEN_NAMES.get(language or "")
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
