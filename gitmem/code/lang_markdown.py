"""Markdown headings as symbols: an analyzer (``specs.ANALYZERS["markdown"]``).

Every ATX (``## Rollback``) and setext (``Rollback`` over ``----``) heading that
is not inside a list item or a block quote is a ``section``. Its span runs from
the heading to the line before the next heading of the same or a higher level
(fewer ``#``), or to the end of the file; so a section *contains* its
sub-sections, and a change in a sub-section changes its parent too.

Names nest like code: ``Deploy.Rollback`` is the ``Rollback`` section under
``# Deploy``. A document title is not part of the names under it: when the
first heading is of level 1 and no other heading is, the sections under it
are named without it (``# Runbook`` / ``## Deploy`` / ``### Rollback`` gives
``Runbook``, ``Deploy``, ``Deploy.Rollback``); the names with the title in front stay accepted
on input (``Runbook.Deploy.Rollback``, kept as ``Symbol.aliases``). A name part is the
heading's plain text: inline code, emphasis, strike-through and HTML tags are dropped with their text kept (`` `x` `` ->
``x``), a link or image is its text, backslash escapes are resolved, ATX
closing ``#``s are dropped and whitespace is collapsed. Text holding a ``.``,
a bracket or ending in ``#<digits>`` is quoted by
:func:`gitmem.textsplit.quote_name_part`: ``(v1.2 {beta})`` for
``## v1.2 (beta)``. A repeated name is numbered in source order (``FAQ``,
``FAQ#2``); an empty heading is ``untitled``.

Fingerprints (tag ``md1``) hash the section's *words*, not its bytes:
paragraph text is split into words (reflowing a paragraph, hard-break spaces,
blank lines and indentation are formatting), ``_a_`` == ``*a*`` and
``__a__`` == ``**a**``, bullet markers (``-``, ``*``, ``+``) are one token and
ordered markers (``1.``, ``3)``) another, code fences ``~~~`` == ````` ``` `````,
thematic breaks are one token, ATX and setext headings of one level are equal.
Content does count: every word, link targets, code (the lines of a code block,
trailing spaces aside, indentation kept), the heading level, HTML blocks.
``body_fp`` hashes everything after the heading (so a heading renamed over the
same body keeps it, and ``shape_fp``, the body when it has at least
``symbols.MIN_SHAPE_BODY_TOKENS`` words, lets ``anchors`` report it ``moved``);
``signature_fp`` hashes the heading. Known limits: a paragraph's words are
compared as words (``a*b*`` emphasis inside a word is kept as written); HTML
comments (``<!-- ... -->``) are comments; headings in lists and block quotes and
YAML front matter are not sections (front matter is in the file fingerprint).

Imports tree-sitter only inside :func:`analyze`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import Symbol
from ..textsplit import quote_name_part

if TYPE_CHECKING:
    from tree_sitter import Node

#: Fingerprint tag of Markdown symbols and files (word hashes, not tree-sitter tokens).
MD_TAG = "md1"
#: Fewest body words that identify a section when looking for it under another heading (the same bar
#: as code's ``symbols.MIN_SHAPE_BODY_TOKENS``: a two-word body occurs in too many places).
MIN_SHAPE_WORDS = 8
#: Name of a heading with no text.
UNTITLED = "untitled"

_HEADINGS = frozenset({"atx_heading", "setext_heading"})
#: Containers a section heading may sit in (headings inside lists and quotes are not sections).
_OUTER = frozenset({"document", "section"})
_SKIP = frozenset({"block_continuation"})
_BULLETS = frozenset({"list_marker_minus", "list_marker_star", "list_marker_plus"})
_ORDERED = frozenset({"list_marker_dot", "list_marker_parenthesis"})
_CODE = frozenset({"code_fence_content", "indented_code_block", "html_block", "minus_metadata", "plus_metadata"})

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_STRONG_US = re.compile(r"(?<![\w\\])__(?=\S)(.+?)(?<=\S)__(?!\w)", re.S)
_EM_US = re.compile(r"(?<![\w\\_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])", re.S)
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])?")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]*)>")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_EMPHASIS = re.compile(r"(\*\*|\*|~~)(?=\S)(.+?)(?<=\S)\1|(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\3(?!\w)", re.S)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _text(node: Node, src: bytes) -> str:
    """The node's text with its ``block_continuation`` children (``> `` prefixes, list indentation) cut out."""
    start, parts = node.start_byte, []
    for child in node.children:
        if child.type == "block_continuation":
            parts.append(src[start:child.start_byte])
            start = child.end_byte
    parts.append(src[start:node.end_byte])
    return b"".join(parts).decode("utf-8", errors="replace")


def _words(text: str) -> list[str]:
    """Canonical words of paragraph text: whitespace-split, underscore emphasis written with ``*``, HTML
    comments out."""
    if "<!--" in text:
        text = _HTML_COMMENT.sub(" ", text)
    out: list[str] = []
    at = 0
    for m in _CODE_SPAN.finditer(text):
        out.extend(_prose_words(text[at:m.start()]))
        out.append("`" + " ".join(m.group(2).split()) + "`")
        at = m.end()
    out.extend(_prose_words(text[at:]))
    return out


def _prose_words(text: str) -> list[str]:
    text = _STRONG_US.sub(r"**\1**", text)
    text = _EM_US.sub(r"*\1*", text)
    return text.split()


def heading_text(raw: str, atx: bool) -> str:
    """The plain text of a heading's inline content (see the module docstring), whitespace collapsed."""
    text = _ATX_CLOSE.sub("", raw.strip()) if atx else raw
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    for _ in range(4):  # nested emphasis: ***a*** , **_a_**
        stripped = _EMPHASIS.sub(lambda m: m.group(2) if m.group(1) else m.group(4), text)
        if stripped == text:
            break
        text = stripped
    text = _ESCAPE.sub(r"\1", text)
    return " ".join(text.split())


def _heading(node: Node, src: bytes) -> tuple[int, str]:
    """(level, plain text) of an ``atx_heading`` / ``setext_heading``."""
    if node.type == "atx_heading":
        marker = node.children[0].type if node.children else "atx_h1_marker"
        level = int(marker[5]) if marker.startswith("atx_h") and marker[5:6].isdigit() else 1
        inline = next((c for c in node.children if c.type == "inline"), None)
        return level, heading_text(_text(inline, src), atx=True) if inline is not None else ""
    level = 2 if any(c.type == "setext_h2_underline" for c in node.children) else 1
    para = next((c for c in node.children if c.type == "paragraph"), None)
    return level, heading_text(_text(para, src), atx=False) if para is not None else ""


def _outer(node: Node) -> bool:
    """Is ``node`` outside lists and block quotes (only sections and the document around it)?"""
    parent = node.parent
    while parent is not None:
        if parent.type not in _OUTER:
            return False
        parent = parent.parent
    return True


def _tokens(root: Node, src: bytes) -> tuple[list[int], list[str], list[tuple[int, int, int, str]]]:
    """(token start bytes, tokens, headings as (start byte, end byte, level, text)) in source order."""
    pos: list[int] = []
    toks: list[str] = []
    heads: list[tuple[int, int, int, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        t = node.type
        at = node.start_byte
        if t in _SKIP:
            continue
        if t in _HEADINGS:
            level, title = _heading(node, src)
            if _outer(node):
                heads.append((node.start_byte, node.end_byte, level, title))
            pos.append(at)
            toks.append(f"h{level} {title}")
        elif t == "inline":
            for w in _words(_text(node, src)):
                pos.append(at)
                toks.append(w)
        elif t in _BULLETS:
            pos.append(at)
            toks.append("-")
        elif t in _ORDERED:
            pos.append(at)
            toks.append("1.")
        elif t == "fenced_code_block_delimiter":
            pos.append(at)
            toks.append("```")
        elif t == "thematic_break":
            pos.append(at)
            toks.append("---")
        elif t == "html_block" and _HTML_COMMENT.fullmatch(_text(node, src).strip()):
            pass  # an HTML comment block (<!-- toc -->) is a comment
        elif t in _CODE:
            lines = [line.rstrip() for line in _text(node, src).split("\n")]
            if t == "indented_code_block":
                lines = [line[4:] if line.startswith("    ") else line.lstrip("\t") for line in lines]
            body = "\n".join(lines).strip("\n")
            if body:
                pos.append(at)
                toks.append(body)
        elif node.child_count == 0:
            word = src[node.start_byte:node.end_byte].decode("utf-8", errors="replace").strip()
            if t == "pipe_table_delimiter_cell":
                word = re.sub(r"-+", "-", word.replace(" ", ""))
            if word:
                pos.append(at)
                toks.append(word)
        else:
            stack.extend(reversed(node.children))
    return pos, toks, heads


def _encode(tokens: list[str]) -> list[bytes]:
    """Each token as ``b"<len>:<utf-8>"`` (no separator can be forged by a token)."""
    out = []
    for tok in tokens:
        b = tok.encode("utf-8", errors="replace")
        out.append(b"%d:" % len(b) + b)
    return out


def _digest(encoded: list[bytes]) -> str:
    return f"{MD_TAG}:{hashlib.blake2b(b''.join(encoded), digest_size=16).hexdigest()}"


def _last_line(src: bytes, start: int, end: int, line_of: Callable[[int], int]) -> int:
    """1-based line of the last non-whitespace byte in ``src[start:end]`` (the line of ``start`` if none);
    ``line_of(offset)`` is the 1-based line of a byte offset."""
    while end > start and src[end - 1] in b" \t\r\n":
        end -= 1
    return line_of(max(start, end - 1))


def analyze(src: bytes) -> tuple[dict[str, Symbol], str]:
    """Sections of a Markdown document (normalised source: LF line ends, no BOM).

    Returns (qualified name -> Symbol of kind ``section``, in source order; the
    file fingerprint ``md1:<hex>`` over all words). Never raises for content.
    """
    from bisect import bisect_left

    from tree_sitter_language_pack import get_parser

    root = get_parser("markdown").parse(src).root_node
    pos, words, heads = _tokens(root, src)
    toks = _encode(words)
    file_fp = _digest(toks)
    out: dict[str, Symbol] = {}
    stack: list[tuple[int, str]] = []  # (level, prefix for the headings under it) of the enclosing headings
    titled = bool(heads) and heads[0][2] == 1 and sum(1 for h in heads if h[2] == 1) == 1
    title_prefix = quote_name_part(heads[0][3] or UNTITLED) + "." if titled else ""
    seen: dict[str, int] = {}
    newlines = [m.start() for m in re.finditer(b"\n", src)]

    def line_of(offset: int) -> int:
        return bisect_left(newlines, offset) + 1

    # each section ends where the next heading of its level or higher starts (one pass, not one scan each)
    ends = [len(src)] * len(heads)
    open_: list[int] = []
    for k, (start, _, level, _) in enumerate(heads):
        while open_ and heads[open_[-1]][2] >= level:
            ends[open_.pop()] = start
        open_.append(k)
    for k, (start, head_end, level, title) in enumerate(heads):
        end = ends[k]
        while stack and stack[-1][0] >= level:
            stack.pop()
        base = (stack[-1][1] if stack else "") + quote_name_part(title or UNTITLED)
        count = seen[base] = seen.get(base, 0) + 1
        name = base if count == 1 else f"{base}#{count}"
        stack.append((level, "" if titled and k == 0 else name + "."))
        i, h, j = bisect_left(pos, start), bisect_left(pos, head_end), bisect_left(pos, end)
        body = toks[h:j]
        # the title's name stays accepted before the names under it (`Deploy.Rollback` under `# Deploy`)
        aliases = (title_prefix + name,) if titled and k > 0 else ()
        out[name] = Symbol(
            name=name, kind="section", start_line=line_of(start),
            end_line=max(_last_line(src, start, end, line_of), line_of(start)),
            fingerprint=_digest(toks[i:j]), signature_fp=_digest(toks[i:h]),
            body_fp=_digest(body) if body else "",
            shape_fp=_digest(body) if len(body) >= MIN_SHAPE_WORDS else "",
            aliases=aliases,
        )
    return out, file_fp
