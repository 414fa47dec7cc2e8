"""``gitmem install gemini`` / ``gitmem uninstall gemini``: register gitmem with the Gemini CLI.

Writes, merged with what is already there (the user's own hooks, MCP servers and other settings
are never dropped or duplicated; gitmem's own entries are replaced, so a second install changes
nothing), into ``<repo>/.gemini/settings.json`` (``--project``, the default) or
``~/.gemini/settings.json`` (``--user``):

* ``hooks``: one handler per event (``EVENTS``), a short shell command (``handler_command``)
  (``installing.shim_command``) that runs the ``gitmem-gemini-hook`` of the folder the clone's
  ``bin-dir`` names, else the one on PATH (no machine path; at session start, the one-line notice
  when gitmem is missing; ``--user``: this installation's script by absolute path); timeouts in **milliseconds**
  (Gemini CLI's unit);
* ``mcpServers.gitmem``: ``gitmem mcp`` (``installing.mcp_entry``'s command, without the
  ``type`` field Gemini CLI does not use).

gitmem's handlers are recognised by their command's first word, ``: gitmem-gemini-hook;`` (a
shell no-op); its MCP server by ``installing.is_our_server``. ``uninstall`` removes exactly those
(and the groups and events it leaves empty); the file gets back the bytes it had when nothing else
changed in it, and a file gitmem created is deleted when nothing else is left in it, with the project's
``.gemini/`` folder when that is then empty (``installing.apply``). A
settings file that is not valid JSON is never rewritten (``SettingsError``).

No BeforeTool hook: Gemini CLI takes no context there; the file's memories come with AfterTool.
Gemini CLI loads a project's settings only in a trusted folder (``GEMINI_CLI_TRUST_WORKSPACE=true``
or the trust prompt) and warns about project hooks it has not seen before: ``install`` notes it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .installing import (
    ABSENT_NOTICE,
    InstallResult,
    Marks,
    Plan,
    SettingsError,
    apply,
    check_hooks_shape,
    detect_by,
    hook_events_on,
    install_notes,
    is_marked,
    json_change,
    marker,
    mcp_entry,
    mcp_servers,
    read_json,
    read_json_file,
    record_file,
    same_content,
    server_registered,
    shim_command,
    user_script,
    with_mcp_server,
    with_ours,
    without_mcp_server,
    without_ours,
)

NAME = "gemini"
USER_SCOPE = True
#: The ``gitmem install gemini`` help text.
HELP = """Register gitmem's Gemini CLI hooks and MCP server (merged with what is there; idempotent).

\b
Hooks: SessionStart and BeforeAgent inject memories; AfterTool appends a file's
memories to read_file, replace, write_file and shell reads (cat, head, sed -n, rg)
and captures the call; AfterAgent and SessionEnd hand the session to consolidation.
The MCP server goes in mcpServers.gitmem. --project (default):
.gemini/settings.json; --user: ~/.gemini/settings.json."""
HOOK_COMMAND = "gitmem-gemini-hook"
#: First word of gitmem's handler: a no-op that marks it as gitmem's.
MARKER = marker(HOOK_COMMAND)

#: (event, matcher or None: every tool / source, timeout in ms). Far above the handler's own limit
#: (agents.core.TIME_LIMITS); SessionEnd is not awaited by Gemini CLI whatever is set.
EVENTS: tuple[tuple[str, str | None, int], ...] = (
    ("SessionStart", None, 15_000),
    ("BeforeAgent", None, 10_000),
    ("AfterTool", None, 10_000),
    ("AfterAgent", None, 10_000),
    ("SessionEnd", None, 5_000),
    ("PreCompress", None, 5_000),
)

TRUST_NOTE = ("Gemini CLI loads a project's .gemini/settings.json only in a trusted folder (trust it when asked, "
              "or set GEMINI_CLI_TRUST_WORKSPACE=true), and warns about its hooks the first time")


def location(root: Path | None, user: bool, home: Path | None = None) -> Path:
    """The settings file of project ``root`` or of the user (``home``: the home folder, ``~`` by default)."""
    if user:
        return (home or Path(os.path.expanduser("~"))) / ".gemini" / "settings.json"
    assert root is not None
    return root / ".gemini" / "settings.json"


#: The event whose handler tells the session, without gitmem, that gitmem is missing (``installing.ABSENT_NOTICE``).
START_EVENT = "SessionStart"


def absent_output(event: str = START_EVENT) -> str:
    """What the handler of ``event`` prints when gitmem is missing here: Gemini CLI's hookSpecificOutput JSON."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": ABSENT_NOTICE}})


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``; ``script``: a ``--user``
    install's absolute script, None for the project's portable command)."""
    return shim_command(HOOK_COMMAND, event, script, notice=absent_output(event) if event == START_EVENT else None)


def is_ours(handler: Any) -> bool:
    """Whether ``handler`` is gitmem's (its command starts with ``MARKER``)."""
    return is_marked(handler, HOOK_COMMAND)


#: ``EVENTS`` as ``installing.with_ours`` rows: each handler named ``gitmem``, with its timeout in ms.
_ROWS = tuple((event, matcher, {"name": "gitmem", "timeout": timeout}) for event, matcher, timeout in EVENTS)


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    check_hooks_shape(path, data, skip=("enabled",))  # hooks.enabled: Gemini CLI's own switch
    mcp_servers(path, data)


def _hooks_without_ours(hooks: dict[str, Any]) -> dict[str, Any]:
    """``hooks`` without gitmem's handlers; its keys that are not event lists (``enabled``) kept."""
    lists = {k: v for k, v in hooks.items() if isinstance(v, list)}
    others = {k: v for k, v in hooks.items() if not isinstance(v, list)}
    return {**others, **without_ours(lists, is_ours)}


def server_entry(user: bool = False) -> dict[str, Any]:
    """``mcpServers.gitmem``: ``gitmem mcp`` (the clone's ``bin-dir``, else the one on PATH; ``user``: this
    installation's by absolute path), no ``type`` field."""
    return mcp_entry(with_type=False, script=user_script("gitmem", user))


def _result(path: Path) -> InstallResult:
    return InstallResult(NAME, {"settings": str(path)}, command=HOOK_COMMAND)


def _cleaned(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The settings without gitmem's handlers and MCP server (and the ``hooks`` they leave empty)."""
    new = without_mcp_server(path, data)
    if isinstance(data.get("hooks"), dict):
        new["hooks"] = _hooks_without_ours(data["hooks"])
        if not new["hooks"]:
            del new["hooks"]
    return new


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, the settings file read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: the settings file is not valid JSON, or has an unexpected shape.
    """
    path = location(root, user, home)
    text, data = read_json_file(path)
    _check_shape(path, data)
    script = user_script(HOOK_COMMAND, user)
    res = _result(path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    hooks = data.get("hooks") or {}
    lists = with_ours({k: v for k, v in hooks.items() if isinstance(v, list)}, _ROWS,
                      lambda e: handler_command(e, script), is_ours)
    new = {**data, "hooks": {**{k: v for k, v in hooks.items() if not isinstance(v, list)}, **lists}}
    new = with_mcp_server(path, new, res, entry=server_entry(user))
    if not user:
        res.notes.append(TRUST_NOTE)
    change = json_change(path, text, data, new, had_ours=not same_content(data, _cleaned(path, data)))
    return Plan(res, [change] if change else [], False, record_file(None if user else root))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's Gemini CLI hooks and MCP server; see the module docstring.

    Raises:
        SettingsError: the settings file is not valid JSON, or has an unexpected shape (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` writes or removes, the settings file read and checked first.

    Raises:
        SettingsError: the settings file is not valid JSON, or has an unexpected shape.
    """
    path = location(root, user, home)
    text, data = read_json_file(path)
    _check_shape(path, data)
    res = _result(path)
    new = _cleaned(path, data)
    change = json_change(path, text, data, new, empty=not new, prune=0 if user else 1)
    return Plan(res, [change] if change else [], True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Gemini CLI hooks and MCP server, leaving everything else as it is (``installing.apply``:
    the file's bytes back when nothing else changed in it; deleted, with the project's ``.gemini/`` when then
    empty, only when gitmem created it and nothing else is left in it).

    Raises:
        SettingsError: the settings file is not valid JSON, or has an unexpected shape (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered."""
    path = location(root, user, home)
    try:
        data = read_json(path)
    except SettingsError as e:
        return {"settings": str(path), "error": e.message, "events": {}, "mcp": False}
    events = hook_events_on(data.get("hooks"), (e for e, _, _ in EVENTS), is_ours)
    return {"settings": str(path), "events": events, "mcp": server_registered(data)}


def marks(home: Path) -> Marks:
    """What says Gemini CLI is used here: ``.gemini/settings.json`` or ``GEMINI.md`` in the repository, or
    ``gemini`` on PATH (``~/.gemini`` alone does not count)."""
    return Marks(project=(".gemini/settings.json", "GEMINI.md"), binaries=("gemini",), folders=(home / ".gemini",))


def detect(root: Path | None, home: Path) -> str | None:
    """Why Gemini CLI is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
