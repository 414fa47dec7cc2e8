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

Tokens = list[bytes]


def _leaf(node: Node, src: bytes) -> Tokens:
    raw = src[node.start_byte:node.end_byte].strip()
    return [raw] if raw and raw != b"," else []


def _canon(node: Node, src: bytes) -> Tokens:
    """Canonical tokens of ``node``: comments and commas out, attribute / object element order sorted away."""
    t = node.type
    if t == "comment":
        return []
    if node.child_count == 0:
        return _leaf(node, src)
    if t == "body":
        groups = [_canon(c, src) for c in node.named_children if c.type == "attribute"]
        blocks = [tok for c in node.named_children if c.type == "block" for tok in _canon(c, src)]
        return [tok for g in sorted(groups, key=_encode) for tok in g] + blocks
    if t == "object":
        elems = [_canon(c, src) for c in node.named_children if c.type == "object_elem"]
        return [b"{"] + [tok for g in sorted(elems, key=_encode) for tok in g] + [b"}"]
    return [tok for c in node.children for tok in _canon(c, src)]


def _encode(tokens: Tokens) -> bytes:
    return b"".join(b"%d:" % len(tok) + tok for tok in tokens)


def _digest(tokens: Tokens) -> str:
    return f"{HCL_TAG}:{hashlib.blake2b(_encode(tokens), digest_size=16).hexdigest()}"


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

    def add(self, base: str, kind: str, node: Node, head: Tokens, body: Tokens) -> str:
        count = self.seen[base] = self.seen.get(base, 0) + 1
        name = base if count == 1 else f"{base}#{count}"
        self.out[name] = Symbol(
            name=name, kind=kind, start_line=_line(node), end_line=_end_line(node),
            fingerprint=_digest(head + body), signature_fp=_digest(head), body_fp=_digest(body) if body else "",
            shape_fp=_digest(body) if len(body) >= MIN_SHAPE_TOKENS else "",
        )
        return name


def _top_level(src: bytes, language: str) -> tuple[list[Node], str]:
    from tree_sitter_language_pack import get_parser

    root = get_parser(language).parse(src).root_node  # type: ignore[arg-type]  # "hcl" / "terraform"
    body = next((c for c in root.named_children if c.type == "body"), None)
    items = [c for c in body.named_children if c.type in ("block", "attribute")] if body is not None else []
    groups = sorted((_canon(c, src) for c in items), key=_encode)  # top-level order is no meaning either
    return items, _digest([tok for g in groups for tok in g])


def _attribute(table: _Table, base: str, kind: str, node: Node, src: bytes) -> None:
    kids = node.named_children
    value = [tok for c in kids[1:] for tok in _canon(c, src)]
    table.add(base, kind, node, _canon(kids[0], src) if kids else [], value)


def analyze_terraform(src: bytes) -> tuple[dict[str, Symbol], str]:
    """Terraform symbols of a ``.tf`` / ``.tfvars`` file (normalised source), see the module docstring.

    Returns (address -> Symbol in source order, file fingerprint ``hcl1:<hex>``).
    """
    items, file_fp = _top_level(src, "terraform")
    table = _Table()
    for node in items:
        if node.type == "attribute":
            name = node.named_children[0] if node.named_children else None
            if name is not None:
                _attribute(table, "var." + quote_name_part(_label(name, src)), "variable", node, src)
            continue
        btype, labels, body = _header(node, src)
        if btype == "locals":
            for attr in body.named_children if body is not None else []:
                if attr.type == "attribute" and attr.named_children:
                    _attribute(table, "local." + quote_name_part(_label(attr.named_children[0], src)), "locals",
                               attr, src)
            continue
        kind, prefix, used = _TF_BLOCKS.get(btype, ("block", btype + ".", 9))
        parts = [quote_name_part(label) for label in labels[:used]]
        base = prefix + ".".join(parts) if parts else btype
        body_tokens = _canon(body, src) if body is not None else []
        head = [tok for c in node.children if c.type not in ("body", "block_start", "block_end", "comment")
                for tok in _canon(c, src)]
        table.add(base, kind, node, head, body_tokens)
    return table.out, file_fp


def analyze_hcl(src: bytes) -> tuple[dict[str, Symbol], str]:
    """Blocks of a plain HCL file (normalised source), nested by type and labels; see the module docstring.

    Returns (dotted name -> Symbol in source order, file fingerprint ``hcl1:<hex>``).
    """
    items, file_fp = _top_level(src, "hcl")
    table = _Table()

    def walk(node: Node, prefix: str) -> None:
        btype, labels, body = _header(node, src)
        base = prefix + ".".join(quote_name_part(p) for p in [btype, *labels])
        head = [tok for c in node.children if c.type not in ("body", "block_start", "block_end", "comment")
                for tok in _canon(c, src)]
        name = table.add(base, "block", node, head, _canon(body, src) if body is not None else [])
        for child in body.named_children if body is not None else []:
            if child.type == "block":
                walk(child, name + ".")

    for node in items:
        if node.type == "block":
            walk(node, "")
    return table.out, file_fp


def written_terraform_name(name: str) -> str:
    """A Terraform name as people also write it (``resource.aws_vpc.this``, ``variable.x``, ``locals.x``)
    -> gitmem's address (``aws_vpc.this``, ``var.x``, ``local.x``); other names unchanged."""
    for written, ours in _WRITTEN_PREFIXES:
        if name.startswith(written):
            return ours + name[len(written):]
    return name


WRITTEN: dict[str, Callable[[str], str]] = {"terraform": written_terraform_name}
