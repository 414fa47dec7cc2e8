"""Every string in a JSON document: what an agent hook answered or a model was sent, wherever each agent puts it."""

from __future__ import annotations

from typing import Any


def strings(doc: Any) -> list[str]:
    """The strings of ``doc`` (parsed JSON: dicts, lists, scalars), depth first in document order; dict keys out."""
    out: list[str] = []
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, list):
            stack.extend(reversed(x))
    return out
