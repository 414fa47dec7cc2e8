"""Text renderings the CLI's commands share (statuses and where anchored code lives now) or that are long
(``stats``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import AnchorStatus, MemoryStatus
from ..rank.render import age

if TYPE_CHECKING:
    from ..ops.stats import MemoryUse, Stats


def where_now(a: AnchorStatus) -> str:
    """`` → path::Name`` when the anchored code now lives elsewhere, else ""."""
    if a.path_now and (a.path_now != a.anchor.path or (a.symbol_now and a.symbol_now != a.anchor.symbol)):
        return f" → {a.path_now}" + (f"::{a.symbol_now}" if a.symbol_now else "")
    return ""


def render_statuses(rows: list[MemoryStatus], show_all: bool, unreadable: int = 0) -> str:
    """``status id  title`` per memory, then ``status anchor → where now  — reason`` per anchor. ``unreadable``:
    memory files that could not be read (then nothing is called fresh as a whole)."""
    if not rows and unreadable:
        files = "file" if unreadable == 1 else "files"
        return (f"gitmem: no readable memory is stale, but {unreadable} memory {files} could not be read "
                "(see the warnings; gitmem doctor)")
    if not rows:
        return "gitmem: all memories are fresh" if not show_all else "no memories"
    lines = []
    for s in rows:
        lines.append(f"{s.status.value:8} {s.memory.id}  {s.memory.title}")
        for a in s.anchors:
            lines.append(f"    {a.status.value:8} {a.anchor.key}{where_now(a)}"
                         + (f"  — {a.reason}" if a.reason else ""))
    return "\n".join(lines)


def _use_line(u: MemoryUse) -> str:
    ago = age(u.last_used) if u.last_used else ""
    last = "never used" if not ago else "last used just now" if ago == "now" else f"last used {ago} ago"
    return (f"  {u.id}  given {u.given} · searched {u.searched} · opened {u.opened} · {last}  "
            f"[{u.type}] {u.title}")


def render_stats(st: Stats) -> str:
    """``gitmem stats`` as text: totals, per type and status, most and least used, what fades."""
    if not st.total:
        return "gitmem: no memories yet (gitmem remember …)"
    u = st.uses
    lines = [f"{st.total} memories; in this clone given {u['given']} times, found by search {u['searched']}, "
             f"opened {u['opened']}; {st.never_used} never used",
             "by type: " + " · ".join(f"{t} {sum(c.values())} (" + ", ".join(f"{s} {n}" for s, n in c.items()) + ")"
                                      for t, c in st.by_type.items())]
    if st.most_used:
        lines += ["", "most used:", *(_use_line(m) for m in st.most_used)]
    lines += ["", "least used:", *(_use_line(m) for m in st.least_used)]
    if st.half_life_days is None:
        lines += ["", "fading: decay is off ([ranking] decay = false)"]
    else:
        days = f"{st.half_life_days:g}"
        lines += ["", f"fading ({st.fading_total}: never used, idle for more than the {days}-day half-life; "
                      "they rank lower):"]
        lines += [f"  {m.id}  fade {m.fade:.2f} · idle {m.idle_days or 0:.0f} d  [{m.type}] {m.title}"
                  for m in st.fading] or ["  none"]
    return "\n".join(lines)
