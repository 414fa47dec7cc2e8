"""Text renderings the CLI's commands share (statuses and where anchored code lives now)."""

from __future__ import annotations

from ..model import AnchorStatus, MemoryStatus


def where_now(a: AnchorStatus) -> str:
    """`` → path::Name`` when the anchored code now lives elsewhere, else ""."""
    if a.path_now and (a.path_now != a.anchor.path or (a.symbol_now and a.symbol_now != a.anchor.symbol)):
        return f" → {a.path_now}" + (f"::{a.symbol_now}" if a.symbol_now else "")
    return ""


def render_statuses(rows: list[MemoryStatus], show_all: bool) -> str:
    """``status id  title`` per memory, then ``status anchor → where now  — reason`` per anchor."""
    if not rows:
        return "gitmem: all memories are fresh" if not show_all else "no memories"
    lines = []
    for s in rows:
        lines.append(f"{s.status.value:8} {s.memory.id}  {s.memory.title}")
        for a in s.anchors:
            lines.append(f"    {a.status.value:8} {a.anchor.key}{where_now(a)}"
                         + (f"  — {a.reason}" if a.reason else ""))
    return "\n".join(lines)
