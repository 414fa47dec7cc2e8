"""The personal scope (issue 21): the developer's own memories, in a git repository of their own, given in every
repository within a small budget and never written into a project.

The personal repository (``layout.personal_dir()``: ``$GITMEM_PERSONAL_DIR``, else ``~/.config/gitmem/personal``)
is itself a gitmem store: ``.gitmem/memories/<id>.md`` committed there, its own catalog and LanceDB index in its
own git folder (``layout.of(personal root)``), written through ``memories.write`` like any other. Its memories are
about the person, not the code: they carry no anchors (tags only; ``ops.personal.remember`` refuses anchors), so
their status never goes stale and nothing in them names a file of the project they are given in.

Owns: where the personal repository is and whether it is there (``root``: one ``stat`` when it is absent, the whole
cost of the scope then), the per-prompt reading of ``[personal]`` (``prompt_budget``), and how the hooks order and
pack its memories (``session_order``, ``pack``): headers, ``render.PERSONAL_FRAME``, ``render.PERSONAL`` as each
item's scope. The hook core (``integrations.agents.core``) asks its catalog; the commands (init, push, pull,
status, remember, recall, list) are ``ops.personal``.

Must not import: anything outside the standard library and gitmem's stdlib-only modules (the prompt hook imports
it): not ``org.settings`` (its dataclasses cost a hook ~30 ms to import; ``prompt_budget`` reads the same keys).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

    from .rank import render

#: The default ``[personal] prompt_budget`` (tokens): ``org.settings.DEFAULT_PERSONAL_PROMPT_BUDGET``, repeated here
#: for the hot path (``prompt_budget``; tests/test_personal.py checks the two agree).
DEFAULT_PROMPT_BUDGET = 200
#: At most this many personal memories per prompt, the first ``PROMPT_DETAIL`` in full: they come after the
#: project's own (``core.MAX_PROMPT_MEMORIES``), in a third of its budget.
PROMPT_MEMORIES = 3
PROMPT_DETAIL = 2
#: At session start, the first ``SESSION_DETAIL`` in full, the rest as index lines within ``session_budget``.
SESSION_DETAIL = 3
#: Memories read for the session start's order (newest first): far more than a 300-token budget can list.
SESSION_CANDIDATES = 200
#: Types given first at session start (rules to keep, traps to avoid), then the rest: the project's own newest
#: fallback does the same (``session_start``).
FIRST_TYPES = ("constraint", "gotcha")

#: A line git writes around a conflict (``<<<<<<<``, ``|||||||``, ``>>>>>>>``, then a label or nothing): the lines
#: ``memfile.loads`` refuses a file for (there: a ``<<<<<<<`` then a ``>>>>>>>``; here any one of them, since a
#: half-resolved file keeps some), looked for only while a pull's merge is under way (``merging``), when they are
#: git's and not a memory's own Markdown.
_CONFLICT_LINE = re.compile(r"^(?:<{7}|\|{7}|>{7})(?: |$)", re.M)

PROMPT_HEADER = "# gitmem: the developer's personal memories relevant to this prompt\n"
SESSION_HEADER = "# gitmem: the developer's personal memories (kept for every repository)\n"


def root(project: Path | None = None) -> Path | None:
    """The personal repository's work tree when it holds a gitmem store (``.gitmem/``) and a ``.git`` of its own,
    else None: one ``stat`` when there is none.

    None too when it is ``project`` itself (a session in the personal repository gets its memories as that
    repository's own, not twice; and ``$GITMEM_PERSONAL_DIR`` pointed at a project never makes the hooks write
    the personal scope's state for it). A folder with ``.gitmem/`` but no ``.git`` is not one: git would find the
    enclosing repository (the commands refuse it: ``ops.personal.own_repository``).
    """
    d = layout.personal_dir()
    if not os.path.isdir(d / layout.GITMEM_DIR):
        return None
    if not os.path.exists(d / ".git"):
        return None
    if project is not None and os.path.realpath(d) == os.path.realpath(project):
        return None
    return d


def merging(proot: Path) -> bool:
    """Whether a pull's merge is under way in the personal repository at ``proot``: its git folder holds
    ``MERGE_HEAD`` (one ``stat``; a ``.git`` file's ``gitdir:`` line is followed)."""
    git_dir = proot / ".git"
    if git_dir.is_file():
        try:
            line = git_dir.read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return False
        if not line.startswith("gitdir:"):
            return False
        git_dir = proot / line[len("gitdir:"):].strip()
    return os.path.exists(git_dir / "MERGE_HEAD")


def has_conflict_lines(*texts: str) -> bool:
    """Whether any of ``texts`` (a memory's title, body, facts) holds a line git writes around a conflict."""
    return any(_CONFLICT_LINE.search(t) for t in texts if t)


def unconflicted(proot: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Catalog rows of the personal repository at ``proot`` without the memories an unfinished pull left
    conflict-marker lines in (``has_conflict_lines`` of title, body and facts); ``rows`` itself when no merge is
    under way (``merging``: one ``stat``). What the hooks give: a memory is never given with git's markers."""
    if not rows or not merging(proot):
        return rows
    return [r for r in rows if not has_conflict_lines(str(r.get("title") or ""), str(r.get("body") or ""),
                                                      *(str(f) for f in r.get("facts") or []))]


def prompt_budget(project: dict[str, Any], user: dict[str, Any]) -> int | None:
    """``[personal] prompt_budget`` in tokens for a repository whose config is ``project`` (``config.read_cached``)
    and the user's ``user`` (``config.read_user_cached``); None when ``[personal] enabled = false``.

    The values of ``org.settings.personal_settings(config.scopes(project, user))`` (the user's keys over the
    project's; a missing or invalid budget is the default), read without importing it (see the module docstring).
    """
    from .config import scopes

    section = scopes(project, user)["personal"]
    if section.get("enabled", True) is False:
        return None
    v = section.get("prompt_budget", DEFAULT_PROMPT_BUDGET)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else DEFAULT_PROMPT_BUDGET


def session_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Catalog rows (``catalog.db.rows``) in the session start's order: ``FIRST_TYPES`` first, then text a person
    wrote or reviewed before text nobody read (``provenance.WEIGHT`` of the row's ``level``), then newest first;
    ties by id (deterministic)."""
    from .provenance import WEIGHT

    rank = {t: i for i, t in enumerate(FIRST_TYPES)}
    out = sorted(rows, key=lambda r: str(r.get("id")))
    out.sort(key=lambda r: str(r.get("updated") or ""), reverse=True)
    out.sort(key=lambda r: (rank.get(str(r.get("type")), len(FIRST_TYPES)), -WEIGHT.get(str(r.get("level")), 1.0)))
    return out


def pack(rows: list[dict[str, Any]], budget_tokens: int, *, header: str, detail: int) -> render.Packed:
    """``rows`` (best first) packed by ``rank.render`` as the hooks give memories (``HOOK`` style), under ``header``
    and ``render.PERSONAL_FRAME`` (``render.PERSONAL_FOOTER`` last), each labelled ``render.PERSONAL`` next to its
    trust label; the first ``detail`` in full."""
    from .rank import render

    items = [render.item_from_row(r, scope=render.PERSONAL) for r in rows]
    return render.pack(items, budget_tokens, header=header, detail=detail, detail_among=detail,
                       style=render.HOOK, frame=render.PERSONAL_FRAME, footer=render.PERSONAL_FOOTER)
