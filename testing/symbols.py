"""Helpers of the symbol tests (``tests/test_symbols.py`` and the per-language ``tests/test_lang_*.py``): the
code fixtures, symbol tables of inline sources, kinds."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.code.symbols import extract_symbols, symbol_table

if TYPE_CHECKING:
    from gitmem.model import Symbol

#: The folder of the code fixtures (``tests/fixtures/code/<language>/...``).
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "code"


def table(src: str, language: str) -> dict[str, Symbol]:
    """The symbols of ``src`` (dedented) in ``language``, uncached."""
    return extract_symbols(textwrap.dedent(src).encode(), language)


def fixture(name: str) -> dict[str, Symbol]:
    """The symbol table of the code fixture ``name`` (``c/list.h``), its language from its path."""
    return symbol_table((FIXTURES / name).read_bytes(), name)


def kinds(tab: dict[str, Symbol]) -> dict[str, str]:
    """Name -> kind of a symbol table."""
    return {name: s.kind for name, s in tab.items()}
