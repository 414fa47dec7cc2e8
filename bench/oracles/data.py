"""Oracles for data-file keys (YAML, TOML, JSON), built on parsers that are not tree-sitter.

Each oracle maps a file to ``{gitmem key path: canonical value}``:

* **JSON** with the standard library's ``json`` (``object_pairs_hook``, so duplicate keys are seen);
* **TOML** with the standard library's ``tomllib``;
* **YAML** with PyYAML's *composer* (``yaml.compose_all``, the node graph before Python objects are built), so a
  key keeps the text it is written with (``on:`` of a GitHub workflow is the key ``on``, not YAML 1.1's
  ``True``), aliases stand for their anchor's node and merge keys (``<<: *base``) merge, explicit keys winning.

Names follow gitmem's (docs/how-it-works.md, "Configuration files", on the i22-data branch), re-implemented
here from that description: keys joined with ``.`` from the top down; a key that is empty or holds whitespace,
``.``, ``"``, ``\\``, ``#``, a bracket ``()[]<>`` or ``::`` written as a JSON string
(``exports."./package.json"``); an item of a sequence that is a mapping with a ``name`` (else ``id``) key as
``steps[Run tests]`` (a label holding ``"``, ``\\``, a bracket or a control character, or with outer or double
spaces, as a JSON string); other sequence items are not named; a repeated name gets ``#2``, ``#3`` ...; the
keys of a YAML stream's 2nd, 3rd ... document are ``#2.kind`` ...

The canonical value of a key is a JSON serialisation with mapping keys sorted and sequence order kept
(:func:`canonical`): comments, indentation, quoting style, flow vs block style and key order do not count;
scalars count by type and value. A labelled item's value is its mapping without the label key (the label is
its name). What the ground truth reads differently from gitmem on purpose: YAML scalars are typed by PyYAML's
YAML 1.1 resolver (``yes`` / ``on`` are booleans there, strings in gitmem's YAML 1.2 core schema), and a
non-string scalar keeps its written form (``1.0`` and ``1.00`` differ here).
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from bench.oracles import ORACLES

#: A key written bare in a name (anything else is a JSON string); the rule of i22-data's ``quote_key``.
_BARE_KEY = re.compile(r'[^\s."\\#()\[\]<>]+')
#: A sequence item's label written bare (anything else is a JSON string); i22-data's ``_quote_label``.
_BARE_LABEL = re.compile(r'[^"\\()\[\]<>\x00-\x1f\x7f]+')
#: Keys whose value names a sequence item, in order of preference (gitmem's ``LABEL_KEYS``).
LABEL_KEYS = ("name", "id")


def key_part(key: str) -> str:
    """One key as it appears in a gitmem key path: as written, or a JSON string when it needs quoting."""
    if _BARE_KEY.fullmatch(key) and "::" not in key:
        return key
    return json.dumps(key, ensure_ascii=False)


def label_part(label: str) -> str:
    """A sequence item's label as written between ``[]`` in a name."""
    if _BARE_LABEL.fullmatch(label) and label == label.strip() and "  " not in label:
        return label
    return json.dumps(label, ensure_ascii=False)


def canonical(value: Any) -> str:
    """A JSON text of ``value`` with mapping keys sorted and sequence order kept (dates etc. as ``str``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


class Pairs(list[tuple[str, Any]]):
    """A mapping as its (key, value) pairs in source order (duplicates kept)."""


def _plain(value: Any) -> Any:
    """A tree of :class:`Pairs`, lists and scalars as JSON-able data (the last of duplicate keys wins)."""
    if isinstance(value, Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _label(value: Any) -> tuple[str, str] | None:
    """(label key, label) of a sequence item that names itself, else None."""
    if isinstance(value, Pairs):
        found = dict(value)
        for k in LABEL_KEYS:
            v = found.get(k)
            if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip():
                return k, str(v)
    return None


def names(root: Any, prefix: str = "") -> dict[str, str]:
    """Every name under ``root`` (a tree of :class:`Pairs` / lists / scalars) -> canonical value."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}

    def number(name: str) -> str:
        seen[name] = seen.get(name, 0) + 1
        return name if seen[name] == 1 else f"{name}#{seen[name]}"

    def walk(value: Any, at: str) -> None:
        if isinstance(value, Pairs):
            for k, v in value:
                name = number(f"{at}.{key_part(k)}" if at else key_part(k))
                out[name] = canonical(_plain(v))
                walk(v, name)
        elif isinstance(value, list) and at:
            for item in value:
                got = _label(item)
                if got is None:
                    continue
                name = number(f"{at}[{label_part(got[1])}]")
                out[name] = canonical({k: _plain(v) for k, v in item if k != got[0]})
                walk(item, name)

    walk(root, prefix)
    return out


def _pairs_hook(pairs: list[tuple[str, Any]]) -> Pairs:
    return Pairs(pairs)


def _toml_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return Pairs((k, _toml_tree(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_toml_tree(v) for v in value]
    return value


class JsonOracle:
    """JSON keys through the standard library's ``json``."""

    name = "json"
    languages = frozenset({"json"})

    def available(self) -> str | None:
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        return names(json.loads(source.decode("utf-8-sig"), object_pairs_hook=_pairs_hook))


class TomlOracle:
    """TOML keys and tables through the standard library's ``tomllib``. A table's value is everything under
    it (sub-tables included); an array of tables is a sequence (its items named only by a ``name``/``id``)."""

    name = "tomllib"
    languages = frozenset({"toml"})

    def available(self) -> str | None:
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        return names(_toml_tree(tomllib.loads(source.decode("utf-8-sig"))))


class YamlOracle:
    """YAML keys through PyYAML's composer (see the module docstring)."""

    name = "pyyaml"
    languages = frozenset({"yaml"})

    def available(self) -> str | None:
        try:
            import yaml  # noqa: F401
        except ImportError:
            return "PyYAML is not installed (pip install pyyaml)"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        out: dict[str, str] = {}
        for i, root in enumerate(yaml.compose_all(source.decode("utf-8-sig"), Loader=loader)):
            if root is not None:
                out.update(names(self._tree(root, 0), f"#{i + 1}" if i else ""))
        return out

    def _tree(self, node: Any, depth: int) -> Any:
        """The node graph as :class:`Pairs` / lists / scalars (a scalar: its text, or ``[tag, text]``)."""
        import yaml

        if depth > 100:  # an alias cycle or a pathological nesting: cut (never in the measured files)
            return "<deep>"
        if isinstance(node, yaml.MappingNode):
            explicit: list[tuple[str, Any]] = []
            merged: list[tuple[str, Any]] = []
            for k, v in node.value:
                if k.tag == "tag:yaml.org,2002:merge":
                    sources = v.value if isinstance(v, yaml.SequenceNode) else [v]
                    for src in sources:
                        sub = self._tree(src, depth + 1)
                        if isinstance(sub, Pairs):
                            merged += [p for p in sub if p[0] not in {m[0] for m in merged}]
                    continue
                key = str(k.value) if isinstance(k, yaml.ScalarNode) else canonical(_plain(self._tree(k, depth + 1)))
                explicit.append((key, self._tree(v, depth + 1)))
            own = {k for k, _ in explicit}
            return Pairs(explicit + [p for p in merged if p[0] not in own])
        if isinstance(node, yaml.SequenceNode):
            return [self._tree(v, depth + 1) for v in node.value]
        tag = str(node.tag).rsplit(":", 1)[-1]
        return node.value if tag == "str" else [tag, node.value]


ORACLES.extend([JsonOracle(), TomlOracle(), YamlOracle()])
