"""``gitmem install gemini`` / ``gitmem uninstall gemini``: register gitmem with the Gemini CLI.

Writes, merged with what is already there (the user's own hooks, MCP servers and other settings
are never dropped or duplicated; gitmem's own entries are replaced, so a second install changes
nothing), into ``<repo>/.gemini/settings.json`` (``--project``, the default) or
``~/.gemini/settings.json`` (``--user``):

* ``hooks``: one handler per event (``EVENTS``), a short shell command (``handler_command``)
  that runs this installation's ``gitmem-gemini-hook`` by absolute path, else the one on PATH,
  else nothing; timeouts in **milliseconds** (Gemini CLI's unit);
* ``mcpServers.gitmem``: ``gitmem mcp`` (``claude_install.mcp_entry``'s command, without the
  ``type`` field Gemini CLI does not use).

gitmem's handlers are recognised by their command's first word, ``: gitmem-gemini-hook;`` (a
shell no-op); its MCP server by ``claude_install``'s rules. ``uninstall`` removes exactly those
(and the groups and events it leaves empty); a settings file left as ``{}`` is deleted, and its
``.gemini/`` folder when that is then empty (a user's ``~/.gemini/settings.json`` is kept). A
settings file that is not valid JSON is never rewritten (``ClaudeSettingsError``).

No BeforeTool hook: Gemini CLI takes no context there; the file's memories come with AfterTool.
Gemini CLI loads a project's settings only in a trusted folder (``GEMINI_CLI_TRUST_WORKSPACE=true``
or the trust prompt) and warns about project hooks it has not seen before: ``install`` notes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claude_install import (
    ClaudeSettingsError,
    _is_our_server,
    _write_json,
    install_notes,
    installed_script,
    is_marked,
    marker,
    mcp_entry,
    read_json,
    shim_command,
)
from .claude_install import without_ours as _without

HOOK_COMMAND = "gitmem-gemini-hook"
MCP_NAME = "gitmem"
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


@dataclass
class GeminiInstall:
    """What an install or uninstall did: files written or removed, and notes for the user."""

    settings: Path
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = HOOK_COMMAND
    mcp: bool = False


def location(root: Path | None, user: bool, home: Path | None = None) -> Path:
    """The settings file of project ``root`` or of the user (``home``: the home folder, ``~`` by default)."""
    if user:
        return (home or Path(os.path.expanduser("~"))) / ".gemini" / "settings.json"
    assert root is not None
    return root / ".gemini" / "settings.json"


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``claude_install.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def _is_ours(handler: Any) -> bool:
    return is_marked(handler, HOOK_COMMAND)


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    for key in ("hooks", "mcpServers"):
        value = data.get(key)
        if value is not None and not isinstance(value, dict):
            raise ClaudeSettingsError(f"{path}: \"{key}\" is not an object", "fix the file, then run again")
    for event, groups in (data.get("hooks") or {}).items():
        if event != "enabled" and not isinstance(groups, list):  # hooks.enabled: Gemini CLI's own switch
            raise ClaudeSettingsError(f"{path}: hooks.{event} is not a list", "fix the file, then run again")


def _hooks_without_ours(hooks: dict[str, Any]) -> dict[str, Any]:
    lists = {k: v for k, v in hooks.items() if isinstance(v, list)}
    others = {k: v for k, v in hooks.items() if not isinstance(v, list)}
    return {**others, **_without(lists, _is_ours)}


def with_ours(hooks: dict[str, Any], script: Path | None) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones) appended after the user's."""
    out = _hooks_without_ours(hooks)
    for event, matcher, timeout in EVENTS:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "name": "gitmem", "command": handler_command(event, script),
                           "timeout": timeout}]
        if not isinstance(out.get(event), list):
            out[event] = []
        out[event].append(group)
    return out


def server_entry() -> dict[str, Any]:
    """``mcpServers.gitmem``: ``gitmem mcp`` (this installation's, else the one on PATH)."""
    return {k: v for k, v in mcp_entry().items() if k != "type"}


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> GeminiInstall:
    """Register gitmem's Gemini CLI hooks and MCP server; see the module docstring.

    Raises:
        ClaudeSettingsError: the settings file is not valid JSON (nothing is written).
    """
    path = location(root, user, home)
    data = read_json(path)
    _check_shape(path, data)
    script = installed_script(HOOK_COMMAND)
    res = GeminiInstall(path, command=str(script or HOOK_COMMAND))
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new = dict(data)
    new["hooks"] = with_ours(data.get("hooks") or {}, script)
    servers = dict(data.get("mcpServers") or {})
    if MCP_NAME in servers and not _is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: left as it is")
    else:
        servers[MCP_NAME] = server_entry()
        new["mcpServers"] = servers
        res.mcp = True
    if new != data:
        _write_json(path, new)
        res.changed.append(str(path))
    if not user:
        res.notes.append(TRUST_NOTE)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> GeminiInstall:
    """Remove gitmem's Gemini CLI hooks and MCP server, leaving everything else as it is (a project settings
    file left empty is deleted, and its ``.gemini/`` folder when then empty).

    Raises:
        ClaudeSettingsError: the settings file is not valid JSON (nothing is written).
    """
    path = location(root, user, home)
    data = read_json(path)
    _check_shape(path, data)
    res = GeminiInstall(path)
    new = dict(data)
    if isinstance(data.get("hooks"), dict):
        new["hooks"] = _hooks_without_ours(data["hooks"])
        if not new["hooks"]:
            del new["hooks"]
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and _is_our_server(servers.get(MCP_NAME)):
        new["mcpServers"] = {k: v for k, v in servers.items() if k != MCP_NAME}
        if not new["mcpServers"]:
            del new["mcpServers"]
    if new == data:
        return res
    res.changed.append(str(path))
    if new or user:
        _write_json(path, new)
        return res
    path.unlink()
    try:
        path.parent.rmdir()  # only when empty: gitmem made it for the settings file
    except OSError:
        pass
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered."""
    path = location(root, user, home)
    try:
        data = read_json(path)
    except ClaudeSettingsError as e:
        return {"settings": str(path), "error": e.message, "events": {}, "mcp": False}
    hooks = data.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    events = {event: any(_is_ours(h) for g in (hooks.get(event) or []) if isinstance(g, dict)
                         and isinstance(g.get("hooks"), list) for h in g["hooks"])
              for event, _, _ in EVENTS}
    servers = data.get("mcpServers")
    return {"settings": str(path), "events": events,
            "mcp": isinstance(servers, dict) and _is_our_server(servers.get(MCP_NAME))}
