"""Helpers of the symbol tests (``tests/test_symbols.py`` and the per-language ``tests/test_lang_*.py``): the
code fixtures, symbol tables of inline sources, kinds, the staleness story of an anchor on a real repository."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.anchors import Resolver
from gitmem.code.symbols import extract_symbols, symbol_table
from gitmem.git import Repo
from gitmem.model import Status
from testing.repos import commit, git, make_repo

if TYPE_CHECKING:
    from collections.abc import Callable

    from gitmem.model import Anchor, Symbol

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


def assert_staleness_story(root: Path, path: str, new_path: str, src: str, symbol: str,
                           body_edit: tuple[str, str], other_edit: tuple[str, str], *,
                           reformat: Callable[[str], str] | None = None) -> Anchor:
    """The staleness story of one symbol anchor on a real repository made at ``root`` holding ``path`` = ``src``:
    an edit elsewhere (``other_edit``, a ``str.replace`` pair) leaves it fresh, and so does ``reformat`` (a
    function of the source) when given; ``git mv path new_path`` makes it moved, with its name; an edit of its
    body (``body_edit``) then makes it stale with that commit. Returns the anchor (raises AssertionError)."""
    repo = Repo(make_repo(root, {path: src}))
    a = Resolver(repo).make(path, symbol)

    c = commit(root, "other code", {path: src.replace(*other_edit)})
    assert Resolver(repo).status(a, c).status == Status.FRESH

    if reformat is not None:
        c = commit(root, "reformat", {path: reformat(src.replace(*other_edit))})
        assert Resolver(repo).status(a, c).status == Status.FRESH

    (root / new_path).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", path, new_path)
    git(root, "commit", "-q", "-m", "rename file")
    st = Resolver(repo).status(a, repo.head())
    assert st.status == Status.MOVED and st.path_now == new_path and st.symbol_now == a.symbol

    c = commit(root, "body", {new_path: src.replace(*other_edit).replace(*body_edit)})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c
    return a
