"""Independent (non-tree-sitter) oracles for the per-language staleness benchmark.

An oracle parses a file with a parser that shares no code with gitmem (libclang,
Ruby's Ripper, PHP's tokenizer, universal-ctags + Pygments, ``json``, ``tomllib``
...) and returns, for every symbol / key / section it can name the way gitmem
names it, a canonical content string: comments, whitespace and formatting removed
as that parser understands them (for data keys: a canonical serialisation of the
value, mapping order ignored). ``bench/languages.py`` replays a history, anchors
symbols at an older commit O with gitmem and grades gitmem's verdict at a later
commit L against the oracle: ``changed`` iff ``symbols(O)[name] != symbols(L)[name]``,
``missing`` when the name is gone at L.

Modules register their oracles by appending to ``ORACLES`` (imported lazily by
:func:`load_all`, so that one oracle whose module fails to import does not hide
the others).
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable


@runtime_checkable
class Oracle(Protocol):
    """What the harness needs from an independent parser."""

    name: str
    """Short name shown in reports: ``"ripper"``, ``"libclang"``, ``"tomllib"`` ..."""

    languages: frozenset[str]
    """gitmem language names (``language_for_path``) this oracle judges."""

    def available(self) -> str | None:
        """None when usable here, else one line saying why not (``"ruby is not on PATH"``)."""
        ...

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        """Map gitmem-style qualified name -> canonical content of that symbol / key / section.

        ``source`` is the file's bytes at one commit, ``path`` its repository path (for
        the language or a name prefix). Names the oracle cannot map to gitmem's (overloads
        it cannot tell apart, anonymous definitions ...) are left out. Raises any
        exception on input the parser rejects; the harness counts it as ``parse-error``.
        """
        ...


# Optional, beside the protocol: ``at_revision(git_dir: str, rev: str) -> None``, called by the harness before
# ``symbols`` of a file at ``rev`` when the oracle defines it (libclang extracts that commit's headers for its
# include path).

ORACLES: list[Oracle] = []
"""Registry; each ``bench/oracles/<module>.py`` appends its instances on import."""

ORACLE_MODULES = ("bench.oracles.code", "bench.oracles.sss", "bench.oracles.libclang", "bench.oracles.data",
                  "bench.oracles.docs")
"""Modules imported by :func:`load_all` (mdata adds theirs to this tuple)."""


def load_all() -> list[str]:
    """Import every module of ``ORACLE_MODULES`` (each registers into ``ORACLES``).

    Returns one line per module that failed to import (``"bench.oracles.data: ModuleNotFoundError ..."``);
    a module that is absent is skipped silently.
    """
    problems: list[str] = []
    for module in ORACLE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                problems.append(f"{module}: {e}")
        except Exception as e:  # noqa: BLE001 - one broken oracle must not hide the others
            problems.append(f"{module}: {type(e).__name__}: {e}")
    return problems


def oracle_for(language: str) -> Oracle | None:
    """The first registered, available oracle judging ``language`` (call :func:`load_all` first), else None."""
    for oracle in ORACLES:
        if language in oracle.languages and oracle.available() is None:
            return oracle
    return None
