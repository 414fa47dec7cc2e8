"""One JSON shape per object, shared by every ``--json`` command (and later MCP).

Shapes are a stable interface: changes are additive. Lists of things print as
JSON arrays, single things as objects. Strings are valid UTF-8 (lone
surrogates are replaced before anything is written).
"""

from __future__ import annotations

import json
from typing import Any

from .analyzer import anchor_status_json
from .memfile import without_surrogates
from .model import Anchor, Memory, MemoryStatus
from .rank.score import Scored, age


def anchor_json(a: Anchor) -> dict[str, Any]:
    """``{"anchor", "path", "symbol", "kind", "commit", "span", "fingerprint"}``."""
    return {"anchor": a.key, "path": a.path, "symbol": a.symbol, "kind": a.kind, "commit": a.commit,
            "span": list(a.span) if a.span else None, "fingerprint": a.fingerprint}


def memory_json(m: Memory) -> dict[str, Any]:
    """Every field of a memory; anchors as ``anchor_json``."""
    return {"id": m.id, "type": m.type, "title": m.title, "body": m.body, "facts": m.facts,
            "tags": m.tags, "anchors": [anchor_json(a) for a in m.anchors], "author": m.author,
            "source": m.source, "session": m.session, "model": m.model, "confidence": m.confidence,
            "created": m.created, "updated": m.updated, "supersedes": m.supersedes,
            "superseded_by": m.superseded_by, "retired": m.retired, "invariant": m.invariant, "scope": m.scope}


def memory_status_json(ms: MemoryStatus) -> dict[str, Any]:
    """``{"id", "title", "type", "status", "anchors": [anchor status...]}`` (the ``stale`` shape)."""
    return {"id": ms.memory.id, "title": ms.memory.title, "type": ms.memory.type,
            "status": ms.status.value, "anchors": [anchor_status_json(a) for a in ms.anchors]}


def scored_json(s: Scored) -> dict[str, Any]:
    """A ranked memory: id, title, type, score, proximity, why, text rank, status, age."""
    d = {"id": s.memory.id, "title": s.memory.title, "type": s.memory.type,
         "score": round(s.score, 6), "proximity": round(s.proximity, 4), "near": s.near,
         "text_rank": s.text_rank, "status": s.status.value, "age": age(s.memory),
         "anchors": [a.key for a in s.memory.anchors]}
    if s.status_detail is not None:
        d["anchor_statuses"] = [anchor_status_json(a) for a in s.status_detail.anchors]
    return d


def dumps(obj: Any) -> str:
    """JSON text with non-ASCII kept readable, surrogates made safe, keys in insertion order."""
    return without_surrogates(json.dumps(obj, ensure_ascii=False, indent=2))
