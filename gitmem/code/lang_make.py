"""Makefile targets as symbols (tree-sitter ``make`` grammar, token fingerprints).

Each target of a rule is a ``target`` named as written and as ``make TARGET``
takes it (``build``, ``docker-build``, ``bin/app``); a rule of several targets
(``test lint: deps``) gives each its own symbol over the same span (the rule:
targets, prerequisites, recipe). Names holding a ``.`` or brackets are quoted
by :func:`gitmem.textsplit.quote_name_part`: the pattern rule ``%.o: %.c`` is
``(%.o)``, ``$(BIN)`` is ``(${BIN})``. A target with several rules is numbered
(``build``, ``build#2``). A target list ``$(VAR)`` (or ``${VAR}``) whose
variable the file assigns once to a fixed list of plain words
(``BAKE_TARGETS := binaries lint``, see :func:`gitmem.shellwords.make_word_lists`)
also gives each of those words as a target, as make expands it (the rule is
still ``(${BAKE_TARGETS})`` too). Special targets (``.PHONY``, ``.DEFAULT``,
``.SUFFIXES`` ... any name of ``.`` and capitals) are not symbols; nor are
variables (``VERSION ?= 1``: anchor the file), ``define`` blocks or
``include``s. Rules inside ``ifeq`` / ``ifdef`` blocks are found.

Fingerprints: ``#`` comments (including ``## help`` text after a rule) are
left out; in a recipe line, line continuations and whitespace runs are
formatting (the tab that starts a recipe line is structure: it is what makes
the line part of the recipe). Known limits: whitespace inside quoted strings of
a recipe line is collapsed too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from ..shellwords import expand_make_word, make_word_lists
from ..textsplit import quote_name_part
from .languages import Def, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node

#: GNU make's special built-in targets (``.PHONY``, ``.SUFFIXES`` ...) are a dot and capitals.
_SPECIAL_TARGET = re.compile(r"\.[A-Z_]+")


def _rule(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    targets = next((c for c in node.named_children if c.type == "targets"), None)
    if targets is None:
        return []
    out: list[Def] = []
    for word in targets.named_children:
        name = " ".join(text(word, src).split())
        expanded = expand_make_word(name, _variables(src)) if name.startswith("$") else [name]
        for n in [name] + [e for e in expanded if e != name]:
            if n and not _SPECIAL_TARGET.fullmatch(n):
                out.append(make_def(quote_name_part(n), "target", node, node, body=(targets.end_byte, node.end_byte)))
    return out


@lru_cache(maxsize=8)
def _variables(src: bytes) -> dict[str, list[str]]:
    """The file's fixed word-list variables (:func:`gitmem.shellwords.make_word_lists`), once per file."""
    return make_word_lists(src.decode("utf-8", "replace"))


def _recipe_line(node: Node, src: bytes) -> bytes | None:
    """A recipe line as its words: ``\\`` + newline continuations out, whitespace runs one space."""
    raw = src[node.start_byte:node.end_byte].replace(b"\\\n", b" ")
    return b" ".join(raw.split())


MAKE = LanguageSpec(
    name="make",
    handlers={"rule": _rule},
    barriers=frozenset({"recipe", "variable_assignment", "define_directive", "shell_assignment"}),
    atomic={"recipe_line": _recipe_line},
)
