"""Configuration files: the keys of YAML, TOML and JSON documents as symbols whose fingerprints hash values.

Owns the analyzers of ``yaml``, ``toml`` and ``json`` (registered in ``specs.ANALYZERS``) and of their
dialects known by path (``specs.DIALECTS``: GitHub Actions workflows, GitLab CI, ``package.json``). Structure
and spans come from tree-sitter's grammars; scalars are decoded by the format's own reader where that is not
trivial (``json`` for JSON, ``tomllib`` for TOML, PyYAML's C loader for YAML block and escaped scalars).

Names (see docs/how-it-works.md, "Configuration files"):

* a key is named by its dotted path: ``production.pool``, ``tool.ruff.line-length``, ``scripts.test``;
* a key that is empty or holds whitespace, ``.``, ``"``, ``\\``, ``#``, a bracket ``()[]<>`` or ``::`` is
  written as a JSON string: ``exports."./package.json"``, ``"a b".c`` (``textsplit.quote_key``);
* an item of a sequence that is a mapping with a ``name`` (else ``id``) key is ``steps[Run tests]``; a
  label holding ``"``, ``\\``, a bracket or a control character is a JSON string: ``steps["a[1]"]``;
  other items (scalars, unnamed mappings) are not symbols (they are part of their key's value);
* several keys of one name (duplicate keys) are ``k``, ``k#2`` ...; the keys of the 2nd, 3rd ... document
  of a YAML stream are ``#2.kind``, ``#3.spec.replicas`` (the first document's have no prefix);
* YAML aliases stand for their anchor's value, merge keys (``<<: *base``) merge as YAML says (explicit keys
  win) and are not symbols themselves; anchor names are not part of any value.

Kinds: ``key``; ``table`` (a TOML ``[table]``, a ``[[array]]`` of tables, a table created by a header of a
sub-table); ``job`` (a key under the top-level ``jobs`` of ``.github/workflows/*.yml|yaml``, a top-level key of
``.gitlab-ci.yml`` that is not a GitLab keyword nor hidden ``.x``); ``script`` (``scripts.X`` of ``package.json``).

Fingerprints (tag ``kv1``): ``body_fp`` hashes the value in a canonical form (``canonical``: mapping order,
formatting, quoting style, flow or block style, comments and anchor names left out; sequence order kept;
scalars typed: ``5`` and ``"5"`` differ; YAML plain scalars as the YAML 1.2 core schema reads them, so
``yes`` and ``on`` are strings); for an item its mapping without the key that names it; ``signature_fp`` the
key (or label) itself; ``fingerprint`` both; ``shape_fp`` equals ``body_fp`` (the same value under another
name is a rename), tagged ``SHORT_VALUE_TAG`` instead of ``kv1`` when the canonical value has fewer than
``MIN_SHAPE_VALUE_BYTES`` bytes (:func:`short_value`): a short value such as ``Checkout``, ``true`` or ``"3.11"``
is found under many keys of many files, so ``anchors.Resolver`` follows such a key only within its own file
(renamed, or moved under another parent there), never into another file;
``decorators_fp`` is empty. The file fingerprint is the canonical form of every document.

Cost is bounded: symbols are made level by level (top-level keys first) while the total stays within
``MAX_SYMBOLS`` and the depth within ``MAX_DEPTH``: a level that would pass the limit is left out whole (so
which keys are symbols never depends on the order of siblings). The whole file stays anchorable.

Never raises on content: a malformed file gives what tree-sitter recovers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from ..model import Symbol
from ..textsplit import escape_invisible, name_parts, quote_key, unquote_key

if TYPE_CHECKING:
    from tree_sitter import Node

#: Tag of the fingerprints of configuration keys and files (bump when the canonical form changes).
FINGERPRINT_TAG = "kv1"
#: Most symbols made from one file. A ~200-byte row each in the on-disk cache: 2000 keeps a lock file's
#: cache entry under ~0.5 MB while every hand-written configuration file keeps all its keys.
MAX_SYMBOLS = 2000
#: The languages this module analyzes: their symbols are keys identified by their values.
KEY_LANGUAGES = frozenset({"yaml", "toml", "json"})
#: Fewest bytes of a value's canonical form that identify its key under another name (``shape_fp``), as code's
#: ``symbols.MIN_SHAPE_BODY_TOKENS``: below it a deleted key whose value shows up once among a commit's changed
#: keys (buildx's step name ``Checkout``, a ``true``, a version ``"3.11"``) is not reported renamed to it.
#: 40 bytes is about a short command line or a small mapping of two or three keys.
MIN_SHAPE_VALUE_BYTES = 40
#: Tag of the ``shape_fp`` of a key whose value is shorter than ``MIN_SHAPE_VALUE_BYTES``.
SHORT_VALUE_TAG = "kv1s"
#: Deepest name made (components; an item ``[x]`` counts as one): a Kubernetes container's
#: ``spec.template.spec.containers[app].resources.limits.memory`` is 7.
MAX_DEPTH = 10
#: Most YAML nodes that aliases may stand for in one file: past it an alias counts as its name
#: (a "billion laughs" document must not expand exponentially).
MAX_ALIAS_EXPANSION = 200_000
#: Keys that name an item of a sequence, in order of preference (GitHub steps, Kubernetes containers and env).
LABEL_KEYS = ("name", "id")
#: GitLab CI's top-level keywords (https://docs.gitlab.com/ci/yaml/: global keywords, the deprecated global
#: defaults, and ``spec``, a component's header): every other top-level key that is not hidden is a job.
GITLAB_KEYWORDS = frozenset({
    "default", "include", "stages", "variables", "workflow", "spec",
    "image", "services", "cache", "before_script", "after_script", "types",
})

_BARE_LABEL = re.compile(r'[^"\\()\[\]<>\x00-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]+')
_MERGE = "<<"


# --------------------------------------------------------------------------- names


def _quote_label(label: str) -> str:
    if _BARE_LABEL.fullmatch(label) and label == label.strip() and "  " not in label:
        return label
    return escape_invisible(json.dumps(label, ensure_ascii=False))


def written_name(name: str) -> str:
    """A key path as a person may type it, in gitmem's form: a JSON Pointer (``/scripts/test``) or a dotted
    path with needless or missing quotes (``"scripts"."test"``, ``exports.'./a'`` stays as typed)."""
    if name.startswith("/"):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in name[1:].split("/")]
        return ".".join(quote_key(p) for p in parts)
    out = []
    for part in name_parts(name):
        if part.startswith('"') and part.endswith('"'):
            part = quote_key(unquote_key(part))
        out.append(part)
    return ".".join(out)


# --------------------------------------------------------------------------- canonical form


def _default(obj: Any) -> Any:
    if type(obj).__module__ == "datetime" and hasattr(obj, "isoformat"):  # TOML dates and times (no import here)
        return {"\x00" + type(obj).__name__: obj.isoformat()}
    if isinstance(obj, _Tagged):
        return {"\x00tag": obj.tag, "v": obj.value}
    return {"\x00repr": repr(obj)}


def canonical(value: Any) -> bytes:
    """The canonical bytes of a decoded value: JSON with sorted keys, no spaces, UTF-8; dates and times
    tagged with their type; YAML tags kept (``{"\\u0000tag": tag, "v": value}``); non-string YAML keys as
    ``"\\u0000" + canonical(key)``. Equal for equal values whatever the formatting."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=_default).encode("utf-8", "surrogatepass")


def _digest(*chunks: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for c in chunks:
        h.update(b"%d:" % len(c))
        h.update(c)
    return f"{FINGERPRINT_TAG}:{h.hexdigest()}"


@dataclass(frozen=True)
class _Tagged:
    tag: str
    value: Any


# --------------------------------------------------------------------------- entries


@dataclass
class _Entry:
    """A key (or a named item) found in the tree: its own name part, lines and how to get its value."""

    key: str
    item: bool
    start: int
    end: int
    value: Callable[[], Any]
    children: Callable[[], list[_Entry]]
    label_key: str = ""
    kind: str = "key"


def _lines(node: Node) -> tuple[int, int]:
    end = node.end_point[0] + (0 if node.end_point[1] else -1)
    start = node.start_point[0]
    return start + 1, max(start, end) + 1


def _label(value: Any) -> tuple[str, str] | None:
    """(label key, label) of a sequence item that names itself, else None."""
    if isinstance(value, dict):
        for k in LABEL_KEYS:
            v = value.get(k)
            if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip():
                return k, str(v)
    return None


def _const(v: Any) -> Callable[[], Any]:
    return lambda: v


def _clist(v: list[_Entry]) -> Callable[[], list[_Entry]]:
    return lambda: v


# --------------------------------------------------------------------------- symbols from entries

KindRule = Callable[[tuple[str, ...], _Entry], str]


def _plain_kind(parents: tuple[str, ...], e: _Entry) -> str:
    return e.kind


def _symbols(docs: list[list[_Entry]], kind_of: KindRule) -> dict[str, Symbol]:
    """Symbols of the entries of each document, level by level within ``MAX_SYMBOLS`` / ``MAX_DEPTH``."""
    level: list[tuple[str, tuple[str, ...], _Entry]] = []
    for i, roots in enumerate(docs):
        prefix = f"#{i + 1}" if i else ""
        level += [(prefix, (), e) for e in roots]
    made: list[tuple[str, Symbol]] = []
    seen: dict[str, int] = {}
    total, depth = 0, 1
    while level and depth <= MAX_DEPTH and total + len(level) <= MAX_SYMBOLS:
        total += len(level)
        nxt: list[tuple[str, tuple[str, ...], _Entry]] = []
        for prefix, parents, e in level:
            if e.item:
                name = f"{prefix}[{_quote_label(e.key)}]"
            else:
                name = f"{prefix}.{quote_key(e.key)}" if prefix else quote_key(e.key)
            count = seen.get(name, 0) + 1
            seen[name] = count
            if count > 1:
                name = f"{name}#{count}"
            made.append((name, _symbol(name, e, kind_of(parents, e))))
            if depth < MAX_DEPTH:
                own = (*parents, f"[{e.key}]" if e.item else e.key)
                nxt += [(name, own, c) for c in e.children()]
        level = nxt
        depth += 1
    made.sort(key=lambda item: item[1].start_line)  # stable: parents before their children
    return dict(made)


def _symbol(name: str, e: _Entry, kind: str) -> Symbol:
    value = e.value()
    if e.item and isinstance(value, dict):
        body = {k: v for k, v in value.items() if k != e.label_key}
        sig = _digest(b"i", e.key.encode("utf-8", "surrogatepass"))
    else:
        body = value
        sig = _digest(b"k", e.key.encode("utf-8", "surrogatepass"))
    value_bytes = canonical(body)
    body_fp = _digest(b"v", value_bytes)
    return Symbol(name=name, kind=kind, start_line=e.start, end_line=e.end,
                  fingerprint=_digest(b"s", sig.encode(), body_fp.encode()), signature_fp=sig,
                  body_fp=body_fp, decorators_fp="",
                  shape_fp=body_fp if len(value_bytes) >= MIN_SHAPE_VALUE_BYTES
                  else SHORT_VALUE_TAG + body_fp[len(FINGERPRINT_TAG):])


def short_value(sym: Symbol) -> bool:
    """Whether the key ``sym`` holds a value too short to identify it in another file (``MIN_SHAPE_VALUE_BYTES``)."""
    return sym.shape_fp.startswith(SHORT_VALUE_TAG + ":")


def _file_fp(values: list[Any]) -> str:
    return _digest(b"f", canonical(values[0] if len(values) == 1 else values))


def _raw_fp(src: bytes) -> str:
    """The file fingerprint of a file that does not parse whole: its bytes, trailing spaces aside (a part
    tree-sitter could not read must still count)."""
    return _digest(b"raw", b"\n".join(line.rstrip() for line in src.split(b"\n")))


_parsers: dict[str, Any] = {}


def _parse(language: Literal["json", "toml", "yaml"], src: bytes) -> Node:
    parser = _parsers.get(language)
    if parser is None:
        from tree_sitter_language_pack import get_parser

        parser = _parsers[language] = get_parser(language)
    root: Node = parser.parse(src).root_node
    return root


# --------------------------------------------------------------------------- JSON


def _json_text(src: bytes, node: Node) -> bytes:
    return src[node.start_byte:node.end_byte]


def _json_value(src: bytes, node: Node) -> Any:
    """A JSON node's value: the ``json`` module's reading of its text, or built from the tree when the
    text has comments or errors (JSON with comments, a malformed file)."""
    try:
        return json.loads(_json_text(src, node))
    except ValueError:
        pass
    t = node.type
    if t == "object":
        out: dict[str, Any] = {}
        for pair in node.named_children:
            if pair.type != "pair":
                continue
            k, v = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            key = _json_key(src, k)
            if key is not None:
                out[key] = _json_value(src, v) if v is not None else None
        return out
    if t == "array":
        return [_json_value(src, c) for c in node.named_children if c.type not in ("comment", "ERROR")]
    if t in ("true", "false"):
        return t == "true"
    if t == "null":
        return None
    text = _json_text(src, node).decode("utf-8", "replace")
    return {"\x00text": text}


def _json_key(src: bytes, node: Node | None) -> str | None:
    if node is None:
        return None
    text = _json_text(src, node)
    if len(text) >= 2 and text[0] == text[-1] == 34 and b"\\" not in text:  # "plain": its content as is
        return text[1:-1].decode("utf-8", "replace")
    try:
        key = json.loads(text)
    except ValueError:
        return _json_text(src, node).decode("utf-8", "replace").strip('"')
    return key if isinstance(key, str) else str(key)


def _json_children(src: bytes, node: Node | None) -> list[_Entry]:
    if node is None:
        return []
    out: list[_Entry] = []
    if node.type == "object":
        for pair in node.named_children:
            if pair.type != "pair":
                continue
            k, v = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            key = _json_key(src, k)
            if key is None:
                continue
            start, end = _lines(pair)
            out.append(_Entry(key, False, start, end, _lazy_json(src, v), _lazy_json_children(src, v)))
    elif node.type == "array":
        for c in node.named_children:
            if c.type != "object":
                continue
            value = _json_value(src, c)
            named = _label(value)
            if named is None:
                continue
            start, end = _lines(c)
            out.append(_Entry(named[1], True, start, end, _const(value), _lazy_json_children(src, c),
                              label_key=named[0]))
    return out


def _lazy_json(src: bytes, node: Node | None) -> Callable[[], Any]:
    return lambda: _json_value(src, node) if node is not None else None


def _lazy_json_children(src: bytes, node: Node | None) -> Callable[[], list[_Entry]]:
    return lambda: _json_children(src, node)


def _real_errors(src: bytes, root: Node) -> bool:
    """Does the tree have an error other than a trailing comma (JSON with comments allows them)?"""
    if not root.has_error:
        return False
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing or n.type == "ERROR" and src[n.start_byte:n.end_byte].strip() != b",":
            return True
        stack.extend(c for c in n.children if c.has_error or c.is_missing)
    return False


def _json_root(root: Node) -> Node | None:
    return next((c for c in root.named_children if c.type not in ("comment", "ERROR")), None)


def _analyze_json(src: bytes, kind_of: KindRule) -> tuple[dict[str, Symbol], str]:
    root = _parse("json", src)
    top = _json_root(root)
    if top is None:
        return {}, _file_fp([None])
    try:
        fp = _file_fp([json.loads(src)])
    except ValueError:  # comments (tsconfig.json, .jsonc) or errors
        fp = _raw_fp(src) if _real_errors(src, root) else _file_fp([_json_value(src, top)])
    return _symbols([_json_children(src, top)], kind_of), fp


# --------------------------------------------------------------------------- TOML

_TOML_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")


def _toml_value(src: bytes, node: Node) -> Any:
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    t = node.type
    if t == "string" and len(text) >= 2 and not text.startswith(('"""', "'''")):
        if text[0] == "'":
            return text[1:-1]
        if "\\" not in text:
            return text[1:-1]
    elif t == "integer" and _TOML_INT.fullmatch(text):
        return int(text)
    elif t == "boolean":
        return text == "true"
    import tomllib  # here: importing it costs ~12 ms, and a commit that touches no TOML file never needs it

    try:
        return tomllib.loads("v = " + text)["v"]
    except (tomllib.TOMLDecodeError, KeyError, RecursionError):
        return {"\x00text": text}


def _toml_keys(src: bytes, node: Node) -> list[str]:
    if node.type == "dotted_key":
        return [k for c in node.named_children for k in _toml_keys(src, c)]
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if node.type == "quoted_key":
        if text.startswith("'"):
            return [text[1:-1]]
        import tomllib

        try:
            key = tomllib.loads(text + " = 1")
            return [next(iter(key))]
        except (tomllib.TOMLDecodeError, StopIteration):
            return [text.strip('"')]
    return [text]


@dataclass
class _TomlNode:
    """A key path of a TOML document: its lines (the union of all its pieces), kind and sub-keys."""

    start: int = 0
    end: int = 0
    kind: str = "key"
    keys: dict[str, _TomlNode] = field(default_factory=dict)
    items: list[_TomlNode] = field(default_factory=list)
    value: Any = None
    is_array: bool = False

    def extend(self, start: int, end: int) -> None:
        self.start = min(self.start, start) if self.start else start
        self.end = max(self.end, end)


def _analyze_toml(src: bytes, kind_of: KindRule) -> tuple[dict[str, Symbol], str]:
    root_node = _parse("toml", src)
    data: dict[str, Any] = {}
    tree = _TomlNode()

    def walk(keys: list[str], start: int, end: int, kind: str, array: bool = False
             ) -> tuple[dict[str, Any], _TomlNode]:
        """Descend to ``keys`` (creating tables), extending spans; returns (its dict, its node)."""
        d, n = data, tree
        for i, k in enumerate(keys):
            last = i == len(keys) - 1
            child = n.keys.get(k)
            if child is None:
                child = n.keys[k] = _TomlNode(kind=kind if last else ("table" if kind == "table" else "key"))
            child.extend(start, end)
            n = child
            v = d.get(k)
            if last and array:
                if not isinstance(v, list):
                    v = d[k] = []
                n.is_array, n.kind = True, "table"
                v.append({})
                n.items.append(_TomlNode(start=start, end=end, kind="table"))
                return v[-1], n.items[-1]
            if isinstance(v, list) and v and isinstance(v[-1], dict) and n.items:
                d, n = v[-1], n.items[-1]
                n.extend(start, end)
                continue
            if not isinstance(v, dict):
                v = d[k] = {}
            d = v
        return d, n

    def pairs(parent: Node, d: dict[str, Any], n: _TomlNode) -> None:
        for pair in parent.named_children:
            if pair.type != "pair" or pair.named_child_count < 2:
                continue
            key_node, value_node = pair.named_children[0], pair.named_children[-1]
            if value_node.type == "comment":
                value_node = pair.named_children[-2]
            keys = _toml_keys(src, key_node)
            if not keys:
                continue
            start, end = _lines(pair)
            dd, nn = d, n
            for k in keys[:-1]:
                child = nn.keys.setdefault(k, _TomlNode())
                child.extend(start, end)
                nn = child
                v = dd.get(k)
                if not isinstance(v, dict):
                    v = dd[k] = {}
                dd = v
            leaf = nn.keys[keys[-1]] = _TomlNode(start=start, end=end)
            value = dd[keys[-1]] = _toml_value(src, value_node)
            inline(value_node, value, leaf)

    def inline(node: Node, value: Any, n: _TomlNode) -> None:
        """Sub-keys of an inline table, named items of an array of inline tables."""
        if node.type == "inline_table" and isinstance(value, dict):
            for pair in node.named_children:
                if pair.type == "pair" and pair.named_child_count >= 2:
                    keys = _toml_keys(src, pair.named_children[0])
                    start, end = _lines(pair)
                    nn, vv = n, cast(Any, value)
                    for k in keys:
                        nn = nn.keys.setdefault(k, _TomlNode())
                        nn.extend(start, end)
                        vv = vv.get(k) if isinstance(vv, dict) else None
                    inline(pair.named_children[-1], vv, nn)
        elif node.type == "array" and isinstance(value, list):
            elems = [c for c in node.named_children if c.type != "comment"]
            if len(elems) == len(value):
                n.is_array = True
                for c, v in zip(elems, value, strict=True):
                    start, end = _lines(c)
                    item = _TomlNode(start=start, end=end)
                    n.items.append(item)
                    inline(c, v, item)

    pairs(root_node, data, tree)
    for top in root_node.named_children:
        if top.type not in ("table", "table_array_element"):
            continue
        key_node = next((c for c in top.named_children if c.type in ("bare_key", "quoted_key", "dotted_key")), None)
        if key_node is None:
            continue
        start, end = _lines(top)
        end = max([start] + [_lines(c)[1] for c in top.named_children if c.type == "pair"])  # not the blank lines
        d, n = walk(_toml_keys(src, key_node), start, end, "table", array=top.type == "table_array_element")
        pairs(top, d, n)

    def entries(n: _TomlNode, value: Any) -> list[_Entry]:
        out: list[_Entry] = []
        if n.is_array and isinstance(value, list):
            for item, v in zip(n.items, value, strict=False):
                named = _label(v)
                if named is not None:
                    out.append(_Entry(named[1], True, item.start, item.end, _const(v),
                                      _clist(entries(item, v)), label_key=named[0], kind=item.kind))
            return out
        if not isinstance(value, dict):
            return out
        for k, child in n.keys.items():
            if k in value:
                v = value[k]
                out.append(_Entry(k, False, child.start, child.end, _const(v), _lazy_toml(entries, child, v),
                                  kind=child.kind))
        return out

    return _symbols([entries(tree, data)], kind_of), _raw_fp(src) if root_node.has_error else _file_fp([data])


def _lazy_toml(fn: Callable[[_TomlNode, Any], list[_Entry]], n: _TomlNode, v: Any) -> Callable[[], list[_Entry]]:
    return lambda: fn(n, v)


# --------------------------------------------------------------------------- YAML


def _fold(text: str) -> str:
    """YAML line folding of a multi-line flow scalar: a line break between text is a space, each empty
    line a newline."""
    lines = text.split("\n")
    out = [lines[0].rstrip()]
    empties = 0
    for line in lines[1:]:
        s = line.strip()
        if not s:
            empties += 1
            continue
        out.append("\n" * empties if empties else " ")
        out.append(s)
        empties = 0
    return "".join(out)


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # a safe loader


class _Yaml:
    """One YAML stream's values and entries, built from tree-sitter's tree in one walk."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.expanded = 0
        self.count = 0

    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def documents(self, root: Node) -> Iterator[tuple[Any, list[_Entry]]]:
        for doc in root.named_children:
            if doc.type != "document":
                continue
            body = next((c for c in doc.named_children if c.type in ("block_node", "flow_node")), None)
            yield self.node(body) if body is not None else (None, [])

    def node(self, n: Node) -> tuple[Any, list[_Entry]]:
        """(value, entries) of a block_node / flow_node / bare content node."""
        anchor = tag = None
        content: Node | None = n
        if n.type in ("block_node", "flow_node"):
            content = None
            for c in n.named_children:
                if c.type == "anchor":
                    anchor = self.text(c).lstrip("&")
                elif c.type == "tag":
                    tag = self.text(c)
                elif c.type not in ("comment",):
                    content = c
        before = self.count
        value, entries = self.content(content) if content is not None else (None, [])
        if tag is not None:
            value = self.tagged(tag, value, content)
        if anchor is not None:
            self.anchors[anchor] = (value, self.count - before + 1)
        return value, entries

    def tagged(self, tag: str, value: Any, content: Node | None) -> Any:
        if tag in ("!!map", "!!seq", "!!omap", "!!set") or tag == "!":
            return value
        if tag == "!!str":
            if content is not None and content.type == "plain_scalar":
                return _fold(self.text(content))
            return value if isinstance(value, str) else str(value)
        return _Tagged(tag, value)

    def content(self, n: Node) -> tuple[Any, list[_Entry]]:
        self.count += 1
        t = n.type
        if t in ("block_mapping", "flow_mapping"):
            return self.mapping(n)
        if t in ("block_sequence", "flow_sequence"):
            return self.sequence(n)
        if t == "alias":
            name = self.text(n).lstrip("*")
            hit = self.anchors.get(name)
            if hit is None or self.expanded + hit[1] > MAX_ALIAS_EXPANSION:
                return {"\x00alias": name}, []
            self.expanded += hit[1]
            self.count += hit[1]  # the anchor's size counts again: an alias of an alias of ... grows
            return hit[0], []
        if t in ("block_node", "flow_node"):
            return self.node(n)
        return self.scalar(n), []

    def scalar(self, n: Node) -> Any:
        t = n.type
        text = self.text(n)
        if t == "plain_scalar":
            inner = n.named_children[0].type if n.named_child_count else "string_scalar"
            if "\n" in text:
                return _fold(text)
            try:
                if inner == "integer_scalar":
                    if text[:2] in ("0x", "0X"):
                        return int(text, 16)
                    if text[:2] in ("0o", "0O"):
                        return int(text[2:], 8)
                    return int(text)
                if inner == "float_scalar":
                    low = text.lower()
                    if low.endswith((".inf", ".nan")):
                        return float(low.replace(".", ""))
                    return float(text)
            except ValueError:
                return text
            if inner == "boolean_scalar":
                return text.lower() == "true"
            if inner == "null_scalar":
                return None
            return text
        if t == "single_quote_scalar":
            inner_text = text[1:-1].replace("''", "'")
            return _fold(inner_text) if "\n" in inner_text else inner_text
        if t == "double_quote_scalar" and "\\" not in text and "\n" not in text:
            return text[1:-1]
        if t in ("double_quote_scalar", "block_scalar"):
            try:
                value = _yaml_load(text + "\n")
            except Exception:  # noqa: BLE001 - PyYAML raises several types; the text as written then
                return text
            return value if isinstance(value, str) else text
        return {"\x00text": text}

    def key_of(self, key: Any, node: Node | None) -> tuple[str, str | None]:
        """(the key in the canonical dict, its name part or None when it has none)."""
        if isinstance(key, str):
            return key, key
        canon = "\x00" + canonical(key).decode("utf-8", "surrogatepass")
        if key is None or isinstance(key, bool | int | float) and node is not None:
            return canon, self.text(node).strip() if node is not None else "null"
        return canon, None

    def mapping(self, n: Node) -> tuple[dict[Any, Any], list[_Entry]]:
        out: dict[str, Any] = {}
        entries: list[_Entry] = []
        merges: list[Any] = []
        for pair in n.named_children:
            if pair.type not in ("block_mapping_pair", "flow_pair", "flow_node"):
                continue
            k_node: Node | None
            v_node: Node | None
            if pair.type == "flow_node":  # `{a, b}`: keys without values
                k_node, v_node = pair, None
            else:
                k_node, v_node = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            key = self.node(k_node)[0] if k_node is not None else None
            if (key == _MERGE and k_node is not None and self.text(k_node) == _MERGE
                    and v_node is not None):
                merges.append(self.node(v_node)[0])
                continue
            value, children = self.node(v_node) if v_node is not None else (None, [])
            dict_key, name = self.key_of(key, k_node)
            out[dict_key] = value
            if name is not None:
                start, end = _lines(pair)
                entries.append(_Entry(name, False, start, end, _const(value), _clist(children)))
        for m in merges:
            for source in (m if isinstance(m, list) else [m]):
                if isinstance(source, dict):
                    for k, v in source.items():
                        out.setdefault(k, v)
        return out, entries

    def sequence(self, n: Node) -> tuple[list[Any], list[_Entry]]:
        out: list[Any] = []
        entries: list[_Entry] = []
        for item in n.named_children:
            if item.type == "block_sequence_item":
                inner = next((c for c in item.named_children if c.type != "comment"), None)
            elif item.type in ("flow_node", "flow_pair"):
                inner = item
            else:
                continue
            children: list[_Entry]
            if inner is None:
                value, children = None, []
            elif inner.type == "flow_pair":
                value, children = self.mapping_of_pair(inner)
            else:
                value, children = self.node(inner)
            out.append(value)
            named = _label(value)
            if named is not None:
                start, end = _lines(item)
                entries.append(_Entry(named[1], True, start, end, _const(value), _clist(children),
                                      label_key=named[0]))
        return out, entries

    def mapping_of_pair(self, pair: Node) -> tuple[dict[str, Any], list[_Entry]]:
        k_node, v_node = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        key = self.node(k_node)[0] if k_node is not None else None
        value, children = self.node(v_node) if v_node is not None else (None, [])
        dict_key, name = self.key_of(key, k_node)
        entries = []
        if name is not None:
            start, end = _lines(pair)
            entries.append(_Entry(name, False, start, end, _const(value), _clist(children)))
        return {dict_key: value}, entries


def _analyze_yaml(src: bytes, kind_of: KindRule) -> tuple[dict[str, Symbol], str]:
    walker = _Yaml(src)
    root = _parse("yaml", src)
    if root.type == "ERROR":  # tree-sitter-yaml gives up on the whole stream (e.g. past ~32k lines)
        value, entries = walker.mapping(root)
        return _symbols([entries], kind_of), _raw_fp(src)
    docs = list(walker.documents(root))
    if not docs:
        return {}, _file_fp([None])
    symbols = _symbols([entries for _, entries in docs], kind_of)
    return symbols, _raw_fp(src) if root.has_error else _file_fp([v for v, _ in docs])


# --------------------------------------------------------------------------- dialects and registration


def _github_kind(parents: tuple[str, ...], e: _Entry) -> str:
    return "job" if parents == ("jobs",) and not e.item else e.kind


def _gitlab_kind(parents: tuple[str, ...], e: _Entry) -> str:
    if not parents and not e.item and e.key not in GITLAB_KEYWORDS and not e.key.startswith("."):
        return "job"
    return e.kind


def _package_kind(parents: tuple[str, ...], e: _Entry) -> str:
    return "script" if parents == ("scripts",) and not e.item else e.kind


_GITHUB_WORKFLOW = re.compile(r"(?:^|/)\.github/workflows/[^/]+\.ya?ml$", re.IGNORECASE)


def dialect(path: str) -> str | None:
    """The dialect of a configuration file known by its path, as a ``specs.DIALECT_ANALYZERS`` key:
    ``yaml+github-actions`` (``.github/workflows/*.yml|yaml``), ``yaml+gitlab-ci`` (``.gitlab-ci.yml``,
    ``*.gitlab-ci.yml``), ``json+package`` (``package.json``); None for any other file."""
    base = path.rsplit("/", 1)[-1].lower()
    if base == "package.json":
        return "json+package"
    if _GITHUB_WORKFLOW.search(path):
        return "yaml+github-actions"
    if base.endswith(".gitlab-ci.yml") or base == ".gitlab-ci.yaml":
        return "yaml+gitlab-ci"
    return None


#: Where a byte that is not UTF-8 goes (``_valid_utf8``): ``U+F700 + byte``, in the Private Use Area, so
#: each such byte stays distinct (a change to it is a change) and means nothing to any grammar.
_STRAY_BYTE_BASE = 0xF700


def _valid_utf8(src: bytes) -> bytes:
    """``src`` with each byte that is not part of valid UTF-8 (a Latin-1 ``é`` in a config) as the character
    ``_STRAY_BYTE_BASE + byte``: tree-sitter's YAML and TOML grammars stop reading at such a byte, losing
    every key after it. Line numbers are unchanged; valid UTF-8 is returned as is."""
    try:
        src.decode("utf-8")
        return src
    except UnicodeDecodeError:
        text = src.decode("utf-8", "surrogateescape")
        return re.sub("[\udc80-\udcff]", lambda m: chr(_STRAY_BYTE_BASE + ord(m.group()) - 0xDC00),
                      text).encode("utf-8")


def _safe(fn: Callable[[bytes, KindRule], tuple[dict[str, Symbol], str]], kind_of: KindRule
          ) -> Callable[[bytes], tuple[dict[str, Symbol], str]]:
    def analyze(src: bytes) -> tuple[dict[str, Symbol], str]:
        src = _valid_utf8(src)
        try:
            return fn(src, kind_of)
        except RecursionError:  # a pathologically deep document: anchorable as a whole file only
            return {}, _raw_fp(src)
    return analyze


analyze_yaml = _safe(_analyze_yaml, _plain_kind)
analyze_toml = _safe(_analyze_toml, _plain_kind)
analyze_json = _safe(_analyze_json, _plain_kind)

#: Analyzers of the dialects, by ``dialect``'s names.
DIALECT_ANALYZERS = {
    "yaml+github-actions": _safe(_analyze_yaml, _github_kind),
    "yaml+gitlab-ci": _safe(_analyze_yaml, _gitlab_kind),
    "json+package": _safe(_analyze_json, _package_kind),
}
