"""Oracles for data-file keys (YAML, TOML, JSON), built on parsers that are not tree-sitter.

Each oracle maps a file to ``{gitmem key path: canonical value}``:

* **JSON** with the standard library's ``json``;
* **TOML** with the standard library's ``tomllib``;
* **YAML** with PyYAML's *composer* (``yaml.compose``, the node graph before Python objects are built), so a key
  keeps the text it is written with (``on:`` of a GitHub workflow is the key ``on``, not YAML 1.1's ``True``)
  and a scalar keeps its resolved tag (``3.10`` the float and ``"3.10"`` the string differ, as they do for the
  program that reads the file).

Key paths follow gitmem's naming (docs/how-it-works.md, "YAML, TOML and JSON keys"): the keys from the top
down joined with ``.``; a key that is empty or contains ``.``, ``(``, ``[``, ``#``, ``"``, ``'``, ``::`` or a
space is written in double quotes with ``\\`` and ``"`` escaped (:func:`key_part`). Only mapping keys are
named; keys inside sequence items (``steps: - name: x``) have no path and are left out (the oracle interface
leaves out what it cannot name).

The canonical value of a key is a JSON serialisation with mapping keys sorted and sequence order kept
(:func:`canonical`): comments, indentation, quoting style, flow vs block style and key order do not count;
scalars count by type and value.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from bench.oracles import ORACLES

#: Characters that make a key part need quotes in a gitmem name (the separators of gitmem's names and of
#: ``textsplit.name_base``; source: docs/how-it-works.md on the i22-data branch).
_NEEDS_QUOTES = re.compile(r"""[.()\[\]#"'\s]|::""")


def key_part(key: str) -> str:
    """One key as it appears in a gitmem key path: as written, or ``"..."`` when it needs quoting."""
    if key and not _NEEDS_QUOTES.search(key):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canonical(value: Any) -> str:
    """A JSON text of ``value`` with mapping keys sorted and sequence order kept (dates etc. as ``str``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _walk(value: Any, prefix: str, out: dict[str, str]) -> None:
    """Every key path under the mapping ``value`` -> canonical value, into ``out``."""
    if not isinstance(value, dict):
        return
    for key, child in value.items():
        name = f"{prefix}.{key_part(str(key))}" if prefix else key_part(str(key))
        out[name] = canonical(child)
        _walk(child, name, out)


class JsonOracle:
    """JSON keys through the standard library's ``json`` (duplicate keys: the last one, as ``json`` reads)."""

    name = "json"
    languages = frozenset({"json"})

    def available(self) -> str | None:
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        _walk(json.loads(source.decode("utf-8-sig")), "", out)
        return out


class TomlOracle:
    """TOML keys and tables through the standard library's ``tomllib``. A table's value is everything under
    it (sub-tables included); keys inside an array of tables (``[[tool.mypy.overrides]]``) are left out."""

    name = "tomllib"
    languages = frozenset({"toml"})

    def available(self) -> str | None:
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        _walk(tomllib.loads(source.decode("utf-8-sig")), "", out)
        return out


class YamlOracle:
    """YAML keys through PyYAML's composer (see the module docstring). Only the first document of a
    multi-document stream is named; aliases are followed (``*ref`` counts as the anchored value)."""

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
        root = next(iter(yaml.compose_all(source.decode("utf-8-sig"), Loader=loader)), None)
        out: dict[str, str] = {}
        if root is not None:
            self._walk(root, "", out)
        return out

    def _plain(self, node: Any, depth: int = 0) -> Any:
        """The node as JSON-able data: a scalar as ``[tag, value]``; mapping keys by their text."""
        import yaml

        if depth > 200:
            return "<deep>"
        if isinstance(node, yaml.MappingNode):
            merged: dict[str, Any] = {}
            for k, v in node.value:
                merged[str(k.value) if isinstance(k, yaml.ScalarNode) else canonical(self._plain(k, depth + 1))] = (
                    self._plain(v, depth + 1))
            return merged
        if isinstance(node, yaml.SequenceNode):
            return [self._plain(v, depth + 1) for v in node.value]
        tag = node.tag.rsplit(":", 1)[-1]
        return [tag, node.value] if tag != "str" else node.value

    def _walk(self, node: Any, prefix: str, out: dict[str, str]) -> None:
        import yaml

        if not isinstance(node, yaml.MappingNode):
            return
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                continue
            name = f"{prefix}.{key_part(str(k.value))}" if prefix else key_part(str(k.value))
            out[name] = canonical(self._plain(v))
            self._walk(v, name, out)


ORACLES.extend([JsonOracle(), TomlOracle(), YamlOracle()])
