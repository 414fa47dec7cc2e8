"""Dockerfile build stages as symbols (tree-sitter ``dockerfile`` grammar, token fingerprints).

Each ``FROM`` starts a ``stage`` spanning to the instruction before the next
``FROM`` (or the end of the file). A stage ``FROM golang AS build`` is named
by its alias, lower-cased as Docker compares them (``build``); a stage
without ``AS`` is ``stage#N`` with N its 1-based position among all the
file's ``FROM``s (``COPY --from=0`` refers to ``stage#1``). Instructions before
the first ``FROM`` (global ``ARG``s) belong to no stage.

Fingerprints: instruction keywords are case-insensitive (``run`` == ``RUN``),
``#`` comments, line continuations (``\\`` + newline) and whitespace runs
in shell-form commands are formatting (``RUN a && \\`` / ``b`` == ``RUN a && b``).
Everything else counts, including the base image of the ``FROM`` line with
its tag and digest (``golang:1.13-alpine@sha256:…``), and every flag
(``FROM --platform=…``, ``RUN --mount=type=cache,source=…``, ``COPY --from=…``,
``HEALTHCHECK --interval=…``): the grammar keeps part of their text outside
any child node, so such a node counts as its whole written text
(:func:`_written`).
Known limits: whitespace inside quoted arguments of a shell-form ``RUN`` is
collapsed too; heredocs count as written; a global ``ARG``'s default is in no
stage (changing it leaves a stage whose ``FROM`` uses it fresh).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .lang_sql import AtomicBy
from .languages import Def, LanguageSpec, make_def, text

if TYPE_CHECKING:
    from tree_sitter import Node

#: Name prefix of a stage without ``AS`` (numbered ``stage#1``, ``stage#2`` ... by position).
UNNAMED_STAGE = "stage"


def _instructions_after(node: Node) -> list[Node]:
    """The instructions from ``node`` up to (not including) the next ``from_instruction``."""
    out = [node]
    nxt = node.next_named_sibling
    while nxt is not None and nxt.type != "from_instruction":
        if nxt.type != "comment":
            out.append(nxt)
        nxt = nxt.next_named_sibling
    return out


def _stage(node: Node, src: bytes, parent_kind: str | None) -> list[Def] | None:
    alias = next((c for c in node.named_children if c.type == "image_alias"), None)
    if alias is not None:
        name = text(alias, src).lower()
    else:
        position, prev = 1, node.prev_named_sibling
        while prev is not None:
            position += prev.type == "from_instruction"
            prev = prev.prev_named_sibling
        name = f"{UNNAMED_STAGE}#{position}"
    parts = _instructions_after(node)
    body = (node.end_byte, parts[-1].end_byte) if len(parts) > 1 else None
    return [make_def(name, "stage", node, parts[-1], body=body)]


def _keyword(node: Node, src: bytes) -> bytes | None:
    return src[node.start_byte:node.end_byte].upper()


def _shell(node: Node, src: bytes) -> bytes | None:
    """A shell-form command as its words: comments and line continuations out, whitespace runs one space."""
    parts = [src[c.start_byte:c.end_byte] for c in node.children if c.type not in ("line_continuation", "comment")]
    return b" ".join(b" ".join(parts).split())


def _alias(node: Node, src: bytes) -> bytes | None:
    return src[node.start_byte:node.end_byte].lower()


def _written(node: Node, src: bytes) -> bytes | None:
    """A node that holds text outside its children, as written (line continuations out); None otherwise.

    The ``dockerfile`` grammar leaves text in no child node in several places: an image tag (``:1.13-alpine``
    under ``image_tag`` has only the ``:`` child), a digest, a ``--platform=…`` / ``--from=…`` flag (only
    ``--`` and ``=``), a ``--mount`` parameter (``source=/x``: only ``=``), a quoted string, a port. A token
    walk over the leaves would miss that text, so such a node is one token of its written text; a node whose
    children cover its text is walked as usual (None).
    """
    if not node.child_count:
        return None
    pos = node.start_byte
    gapped = False
    for child in node.children:
        if src[pos:child.start_byte].strip():
            gapped = True
        pos = child.end_byte
    if not gapped and not src[pos:node.end_byte].strip():
        return None
    return _CONTINUATION.sub(b"", src[node.start_byte:node.end_byte])


#: A line continuation (``\`` + newline and the next line's indentation): formatting inside a written node.
_CONTINUATION = re.compile(rb"\\\r?\n[ \t]*")


def _canon(node: Node, src: bytes) -> bytes | None:
    """Instruction keywords upper-cased (``run`` == ``RUN``); any other node per :func:`_written`."""
    if node.type.isalpha() and node.type.isupper():
        return _keyword(node, src)
    return _written(node, src)


DOCKERFILE = LanguageSpec(
    name="dockerfile",
    handlers={"from_instruction": _stage},
    descend=lambda t: t == "source_file",
    comment_types=frozenset({"comment", "line_continuation"}),
    atomic=AtomicBy({"shell_command": _shell, "image_alias": _alias},
                    lambda t: t.isalpha() and t.isupper() or t[:1].islower(), _canon),
    # `FROM ubuntu:22.04`, `CMD ["/bin/bash"]`, `LABEL a="b"`: text the grammar gives no node of its own.
    text_gaps=frozenset({"image_tag", "json_string", "double_quoted_string"}),
)
