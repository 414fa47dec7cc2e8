"""Terraform and HCL blocks as symbols: analyzers (``specs.ANALYZERS["terraform"]`` / ``["hcl"]``).

Terraform (``.tf``, ``.tfvars``; language ``terraform``): top-level blocks
named by their Terraform address: ``aws_vpc.this`` (kind ``resource``),
``data.aws_ami.ubuntu`` (``data``), ``module.vpc`` (``module``),
``var.region`` (``variable``), ``output.vpc_id`` (``output``),
``provider.aws`` (``provider``; a second ``provider "aws"`` with an alias is
``provider.aws#2``), each attribute of a ``locals`` block as ``local.name``
(``locals``), and ``terraform``, ``moved``, ``import``, ``check`` ... blocks
by their type and labels (``block``). A top-level attribute (a ``.tfvars``
file: ``region = "eu-west-1"``) is ``var.region`` (``variable``): the value
it gives the variable. Written names ``resource.aws_vpc.this``,
``variable.x`` and ``locals.x`` are accepted for ``aws_vpc.this``, ``var.x``,
``local.x``.

Plain HCL (``.hcl``: Packer, Nomad, Terragrunt; language ``hcl``): every
block is a ``block`` named by its type and labels, nested blocks under their
parent: ``job.docs.group.web.task.server``, ``source.amazon-ebs.ubuntu``.

Labels holding a ``.`` or brackets are quoted by
:func:`gitmem.textsplit.quote_name_part`; repeats are numbered (``#2``).

Fingerprints (tag ``hcl1``): the block's tokens with comments, whitespace and
commas left out, where **the order of attributes in a block body and of the
elements of an object ``{ a = 1, b = 2 }`` does not count** (HCL gives it no
meaning); the order of nested blocks does (``ingress`` blocks, ``dynamic``
blocks, provisioners run in order). ``body_fp`` hashes the block body (a
resource renamed over the same body is ``moved``), ``signature_fp`` the type
and labels. Known limits: list elements keep their order (a set-typed
attribute reordered is stale); ``"a"`` and ``<<EOT`` heredocs holding the same
text differ; in plain HCL a block's own tokens include its nested blocks.

Imports tree-sitter only inside the analyzers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import Symbol
from ..textsplit import quote_name_part

if TYPE_CHECKING:
    from tree_sitter import Node

#: Fingerprint tag of Terraform / HCL symbols and files (canonical tokens with attribute order ignored).
HCL_TAG = "hcl1"
#: Fewest body tokens that identify a block under another name (as ``symbols.MIN_SHAPE_BODY_TOKENS``).
MIN_SHAPE_TOKENS = 8

#: Terraform block type -> (kind, address prefix, labels used).
_TF_BLOCKS: dict[str, tuple[str, str, int]] = {
    "resource": ("resource", "", 2), "data": ("data", "data.", 2), "module": ("module", "module.", 1),
    "variable": ("variable", "var.", 1), "output": ("output", "output.", 1),
    "provider": ("provider", "provider.", 1),
}
_WRITTEN_PREFIXES = (("resource.", ""), ("variable.", "var."), ("locals.", "local."))

#: Canonical tokens of a subtree, already encoded (``b"<len>:<token>"`` each), and how many.
Canon = tuple[bytes, int]
_EMPTY: Canon = (b"", 0)


def _join(parts: list[Canon]) -> Canon:
    return b"".join(p[0] for p in parts), sum(p[1] for p in parts)


def _canon(node: Node, src: bytes) -> Canon:
    """Canonical tokens of ``node``: comments and commas out, attribute / object element order sorted away."""
    t = node.type
    if t == "body":
        kids = node.named_children
        groups = sorted(_canon(c, src) for c in kids if c.type == "attribute")
        return _join(groups + [_canon(c, src) for c in kids if c.type == "block"])
    if t == "object":
        elems = sorted(_canon(c, src) for c in node.named_children if c.type == "object_elem")
        return _join([(b"1:{", 1), *elems, (b"1:}", 1)])
    # anything else: its leaves in order (one cursor walk), bodies and objects inside canonicalised
    out: list[bytes] = []
    count = 0
    cursor = node.walk()
    while True:
        cur = cursor.node
        assert cur is not None  # a cursor from walk() is always on a node
        ctype = cur.type
        descend = False
        if ctype == "comment":
            pass
        elif ctype in ("body", "object") and cur != node:
            inner = _canon(cur, src)
            out.append(inner[0])
            count += inner[1]
        elif cur.child_count == 0:
            raw = src[cur.start_byte:cur.end_byte].strip()
            if raw and raw != b",":
                out.append(b"%d:" % len(raw) + raw)
                count += 1
        else:
            descend = True
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return b"".join(out), count


def _digest(tokens: Canon) -> str:
    return f"{HCL_TAG}:{hashlib.blake2b(tokens[0], digest_size=16).hexdigest()}"


def _label(node: Node, src: bytes) -> str:
    if node.type == "string_lit":
        return "".join(src[c.start_byte:c.end_byte].decode("utf-8", "replace")
                       for c in node.children if c.type == "template_literal")
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _header(block: Node, src: bytes) -> tuple[str, list[str], Node | None]:
    """(block type, labels, body node or None) of a ``block``."""
    kids = block.named_children
    btype = _label(kids[0], src) if kids else ""
    labels = [_label(c, src) for c in kids[1:] if c.type in ("string_lit", "identifier")]
    body = next((c for c in kids if c.type == "body"), None)
    return btype, labels, body


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _end_line(node: Node) -> int:
    row, col = node.end_point
    return row if col == 0 and row > node.start_point[0] else row + 1


class _Table:
    """Symbols in source order, repeats numbered ``#2`` ..."""

    def __init__(self) -> None:
        self.out: dict[str, Symbol] = {}
        self.seen: dict[str, int] = {}

    def add(self, base: str, kind: str, node: Node, head: Canon, body: Canon) -> str:
        count = self.seen[base] = self.seen.get(base, 0) + 1
        name = base if count == 1 else f"{base}#{count}"
        self.out[name] = Symbol(
            name=name, kind=kind, start_line=_line(node), end_line=_end_line(node),
            fingerprint=_digest(_join([head, body])), signature_fp=_digest(head),
            body_fp=_digest(body) if body[1] else "", shape_fp=_digest(body) if body[1] >= MIN_SHAPE_TOKENS else "",
        )
        return name


def _top_level(src: bytes, language: str) -> list[Node]:
    """The top-level blocks and attributes of a file."""
    from tree_sitter_language_pack import get_parser

    root = get_parser(language).parse(src).root_node  # type: ignore[arg-type]  # "hcl" / "terraform"
    body = next((c for c in root.named_children if c.type == "body"), None)
    return [c for c in body.named_children if c.type in ("block", "attribute")] if body is not None else []


def _file_fp(items: list[Canon]) -> str:
    """The file fingerprint: its top-level items' tokens, in no order (top-level order has no meaning either)."""
    return _digest(_join(sorted(items)))


def _head(block: Node, src: bytes) -> Canon:
    """Tokens of a block's type and labels."""
    return _join([_canon(c, src) for c in block.children if c.type not in ("body", "block_start", "block_end",
                                                                            "comment")])


def _attribute(table: _Table, base: str, kind: str, node: Node, src: bytes) -> Canon:
    kids = node.named_children
    head = _canon(kids[0], src) if kids else _EMPTY
    value = _join([_canon(c, src) for c in kids[1:]])
    table.add(base, kind, node, head, value)
    return _join([head, (b"1:=", 1), value])


def analyze_terraform(src: bytes) -> tuple[dict[str, Symbol], str]:
    """Terraform symbols of a ``.tf`` / ``.tfvars`` file (normalised source), see the module docstring.

    Returns (address -> Symbol in source order, file fingerprint ``hcl1:<hex>``).
    """
    table = _Table()
    whole: list[Canon] = []
    for node in _top_level(src, "terraform"):
        if node.type == "attribute":
            name = node.named_children[0] if node.named_children else None
            if name is not None:
                whole.append(_attribute(table, "var." + quote_name_part(_label(name, src)), "variable", node, src))
            continue
        btype, labels, body = _header(node, src)
        if btype == "locals":
            attrs = [a for a in (body.named_children if body is not None else [])
                     if a.type == "attribute" and a.named_children]
            done = [_attribute(table, "local." + quote_name_part(_label(a.named_children[0], src)), "locals", a, src)
                    for a in attrs]
            whole.append(_join([(b"6:locals", 1), *sorted(done)]))
            continue
        kind, prefix, used = _TF_BLOCKS.get(btype, ("block", btype + ".", 9))
        parts = [quote_name_part(label) for label in labels[:used]]
        base = prefix + ".".join(parts) if parts else btype
        head, body_tokens = _head(node, src), _canon(body, src) if body is not None else _EMPTY
        table.add(base, kind, node, head, body_tokens)
        whole.append(_join([head, body_tokens]))
    return table.out, _file_fp(whole)


def analyze_hcl(src: bytes) -> tuple[dict[str, Symbol], str]:
    """Blocks of a plain HCL file (normalised source), nested by type and labels; see the module docstring.

    Returns (dotted name -> Symbol in source order, file fingerprint ``hcl1:<hex>``).
    """
    table = _Table()
    whole: list[Canon] = []

    def walk(node: Node, prefix: str) -> Canon:
        btype, labels, body = _header(node, src)
        base = prefix + ".".join(quote_name_part(p) for p in [btype, *labels])
        head, body_tokens = _head(node, src), _canon(body, src) if body is not None else _EMPTY
        name = table.add(base, "block", node, head, body_tokens)
        for child in body.named_children if body is not None else []:
            if child.type == "block":
                walk(child, name + ".")
        return _join([head, body_tokens])

    for node in _top_level(src, "hcl"):
        whole.append(walk(node, "") if node.type == "block" else _canon(node, src))
    return table.out, _file_fp(whole)


def written_terraform_name(name: str) -> str:
    """A Terraform name as people also write it (``resource.aws_vpc.this``, ``variable.x``, ``locals.x``)
    -> gitmem's address (``aws_vpc.this``, ``var.x``, ``local.x``); other names unchanged."""
    for written, ours in _WRITTEN_PREFIXES:
        if name.startswith(written):
            return ours + name[len(written):]
    return name


WRITTEN: dict[str, Callable[[str], str]] = {"terraform": written_terraform_name}
