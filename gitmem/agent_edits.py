"""Team memory files an agent wrote or edited with its own file tools, until gitmem marks them as the agent's text.

A memory file is text: an agent's Write, Edit or ``apply_patch`` of ``.gitmem/memories/<id>.md`` can claim
anything (``source: user``, a review). The per-tool-call agent hooks see those calls (``core.on_after_tool``)
and ``note`` each such file with the agent's name, here; then

* the catalog (``catalog.files.memory_row``) gives a noted memory the agent's level at once (the hooks never
  show it as a rule), and
* gitmem's pre-commit hook (``ops.agent_edits.mark_agents_text``) rewrites the file as the agent's text
  (``source: agent``, ``origin: <agent>``, no review), stages it into the same commit, so the truth travels
  to teammates, and marks the note ``done``;
* a person's ``gitmem review ID`` marks it ``done`` too (a person has read the text as it is).

Records, in ``Layout.agent_edits_log`` (per clone, JSON Lines, one ``O_APPEND`` write each: hooks running at
once never tear one): ``{"at", "id", "agent"}`` (noted) or ``{"at", "id", "done": true}``; an id is pending
while its last record is a note. Two short lines per memory an agent edits; never cut (cutting it could drop a
note appended meanwhile).

Standard library only (the per-tool-call hooks import it).
"""

from __future__ import annotations

import json

from . import infra, layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: The file name ending of a memory file (``memfile.FILE_SUFFIX``; not imported: ``memfile`` needs YAML).
_SUFFIX = ".md"

#: Characters kept of an agent's name (the adapter's name: ``claude``, ``codex``).
MAX_AGENT_CHARS = 40


def memory_id(rel: str | None) -> str | None:
    """The memory id of a repo-relative POSIX path when it is a team memory file (``.gitmem/memories/<id>.md``),
    else None."""
    if not rel or not rel.startswith(layout.TEAM_MEMORIES + "/") or not rel.endswith(_SUFFIX):
        return None
    name = rel[len(layout.TEAM_MEMORIES) + 1:-len(_SUFFIX)]
    return name if name and "/" not in name and not name.startswith(".") else None


def note(lay: layout.Layout, ids: Iterable[str], agent: str) -> None:
    """Record that ``agent`` wrote or edited the team memory files of ``ids``.

    Raises:
        OSError: the record cannot be written.
    """
    who = " ".join(agent.split())[:MAX_AGENT_CHARS] or "agent"
    now = infra.utc_now()
    infra.append_records(lay.agent_edits_log, [json.dumps({"at": now, "id": i, "agent": who}) for i in ids])


def pending(lay: layout.Layout) -> dict[str, str]:
    """id → the agent that last wrote it, for the memory files noted and not yet done ({} when none or unreadable).
    One read of a small file; lines that do not parse are skipped."""
    try:
        data = lay.agent_edits_log.read_bytes()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
            mid = rec["id"]
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(mid, str):
            continue
        if rec.get("done"):
            out.pop(mid, None)
        elif isinstance(rec.get("agent"), str):
            out[mid] = rec["agent"]
    return out


def done(lay: layout.Layout, ids: Iterable[str]) -> None:
    """Record that the memories of ``ids`` no longer need marking (marked as the agent's text, or reviewed by a
    person). Never raises."""
    ids = list(ids)
    if not ids:
        return
    try:
        now = infra.utc_now()
        infra.append_records(lay.agent_edits_log, [json.dumps({"at": now, "id": i, "done": True}) for i in ids])
    except OSError:
        pass
