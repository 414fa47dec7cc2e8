"""What a prompt names: anchored paths (whole, as a suffix, or by a unique base name) and identifier-like words.

Owns the reading of a prompt for the agent hooks (``prompt_mentions``). ``gitmem context
--prompt`` reads a prompt in ``focus._add_prompt_mentions`` against the files tracked at HEAD
(it also takes ``path::Symbol`` and any word of ``focus.MIN_SYMBOL_MENTION`` characters as a
name); the two differ on purpose in what counts as a name (see ``prompt_mentions``), not yet
in one place because ``focus`` imports git.

Guarantees: deterministic; no file or database access.
Must not import: anything outside the standard library (the prompt hook imports it).
"""

from __future__ import annotations

import re

_IDENT_LIKE = re.compile(r"`([^`\s]{3,})`|\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$]*_[\w$]+|"
                         r"[a-z][a-z0-9]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z_$][\w$]{2,}(?=\())")
_PATHISH = re.compile(r"[\w.$@-]+(?:/[\w.$@-]+)+|[\w-]+\.[A-Za-z]{1,5}\b")


def prompt_mentions(prompt: str, anchored: set[str]) -> tuple[set[str], set[str]]:
    """(anchored paths a prompt names, identifier-like words it holds).

    Paths: repo-relative POSIX paths of ``anchored`` the prompt names whole, as a suffix
    (``auth/jwt.py``) or by a base name only one of them has. Names: leaf names
    (``a::b`` gives ``b``), never a path or a named file.

    Plain words (``run``, ``config``) are not taken as symbol names: only
    ``snake_case``, ``camelCase``, ``dotted.names``, ``name(`` and back-quoted words.
    """
    paths: set[str] = set()
    by_base: dict[str, list[str]] = {}
    for p in anchored:
        by_base.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    for m in _PATHISH.finditer(prompt):
        tok = m.group(0).strip("./")
        if tok in anchored:
            paths.add(tok)
        elif "/" in tok:
            hits = [p for p in anchored if p.endswith("/" + tok)]
            if len(hits) == 1:
                paths.add(hits[0])
        elif len(by_base.get(tok, [])) == 1:
            paths.add(by_base[tok][0])
    names: set[str] = set()
    for m in _IDENT_LIKE.finditer(prompt):
        tok = (m.group(1) or m.group(2) or "").strip("`()")
        if "/" in tok or tok in paths:
            continue
        names.add(tok.split("::")[-1])
    return paths, names
