"""``gitmem install cursor`` / ``gitmem uninstall cursor``: register gitmem with Cursor's agent.

Writes, merged with what is already there (the user's own hooks and MCP servers are never dropped
or duplicated; gitmem's own entries are replaced, so a second install changes nothing), into the
project's ``<repo>/.cursor/`` (the default) or the user's ``~/.cursor/`` (``--user``):

* ``hooks.json`` (``{"version": 1, "hooks": {<event>: [{"command": ...}]}}``, Cursor 2.4+; flat
  handler entries, no matcher groups): one handler per event of ``EVENTS``, a short shell command
  (``claude_install.shim_command``) that runs this installation's ``gitmem-cursor-hook EVENT`` by
  absolute path, else the one on PATH, else nothing. No ``timeout`` (Cursor's default, 60 s, is far
  above the handler's own limit, ``agents.core.TIME_LIMITS``) and no ``failClosed`` (off: a hook
  that fails never blocks). No ``beforeReadFile`` or ``preToolUse`` hook: they only allow or deny
  (see ``cursor``);
* ``mcp.json``: ``mcpServers.gitmem``, ``gitmem mcp`` (``claude_install.mcp_entry``).

gitmem's handlers are recognised by their command's first word, ``: gitmem-cursor-hook;`` (a shell
no-op); its MCP server by ``claude_install``'s rules. ``uninstall`` removes exactly those (and the
events they leave empty); a file left with nothing but ``version`` (hooks) or as ``{}`` (MCP) is
deleted, and the project's ``.cursor/`` folder when that is then empty. A file that is not valid
JSON, or whose ``hooks`` / ``mcpServers`` is not an object, is never rewritten
(``ClaudeSettingsError``).

Written against ``claude_install``'s helpers; ``CursorInstall`` has the fields of the shared
installer result.
"""

from __future__ import annotations

import os
import shutil
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
    mcp_entry,
    read_json,
    shim_command,
)
from .cursor import HOOK_COMMAND

NAME = "cursor"
USER_SCOPE = True
MCP_NAME = "gitmem"
HOOKS_VERSION = 1
#: Cursor's events gitmem handles (``cursor``'s table), in the order they are written.
EVENTS: tuple[str, ...] = ("sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure",
                           "afterFileEdit", "afterAgentResponse", "stop", "sessionEnd", "preCompact")
RELOAD_NOTE = "Cursor reads hooks.json when it starts: restart Cursor (or open a new agent session)"


@dataclass
class CursorInstall:
    """What an install or uninstall did: the files, those written or removed, notes for the user, the hook
    command, whether the MCP server is registered."""

    agent: str
    files: list[str]
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = HOOK_COMMAND
    mcp: bool = False


def locations(root: Path | None, user: bool = False, home: Path | None = None) -> tuple[Path, Path]:
    """(``hooks.json``, ``mcp.json``) of project ``root`` or of the user (``home``: ``~`` by default)."""
    if user:
        base = (home or Path(os.path.expanduser("~"))) / ".cursor"
    else:
        assert root is not None
        base = root / ".cursor"
    return base / "hooks.json", base / "mcp.json"


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``claude_install.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def _is_ours(handler: Any) -> bool:
    return is_marked(handler, HOOK_COMMAND)


def _refuse(path: Path, what: str) -> ClaudeSettingsError:
    return ClaudeSettingsError(f"{path}: {what}", "fix the file, then run again")


def _read(hooks_path: Path, mcp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both files, checked; raises ``ClaudeSettingsError`` before anything is written."""
    hooks_doc, mcp_doc = read_json(hooks_path), read_json(mcp_path)
    hooks = hooks_doc.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise _refuse(hooks_path, "\"hooks\" is not an object")
    for event, handlers in (hooks or {}).items():
        if not isinstance(handlers, list):
            raise _refuse(hooks_path, f"hooks.{event} is not a list")
    if mcp_doc.get("mcpServers") is not None and not isinstance(mcp_doc["mcpServers"], dict):
        raise _refuse(mcp_path, "\"mcpServers\" is not an object")
    return hooks_doc, mcp_doc


def without_ours(hooks: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """``hooks`` without gitmem's handlers, and without the events that leaves empty (a user's ``[]`` stays)."""
    out: dict[str, list[Any]] = {}
    for event, handlers in hooks.items():
        kept = [h for h in handlers if not _is_ours(h)]
        if kept or not handlers:
            out[event] = kept
    return out


def with_ours(hooks: dict[str, list[Any]], script: Path | None) -> dict[str, list[Any]]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones) after the user's."""
    out = without_ours(hooks)
    for event in EVENTS:
        out[event] = [*out.get(event, []), {"command": handler_command(event, script)}]
    return out


def _remove_if_empty(path: Path, data: dict[str, Any], empty: dict[str, Any]) -> bool:
    """Delete ``path`` when ``data`` holds nothing but ``empty``; whether it did."""
    if data != empty and data:
        return False
    path.unlink(missing_ok=True)
    return True


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> CursorInstall:
    """Register gitmem's Cursor hooks and MCP server; see the module docstring.

    Raises:
        ClaudeSettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape
            (nothing is written).
    """
    hooks_path, mcp_path = locations(root, user, home)
    hooks_doc, mcp_doc = _read(hooks_path, mcp_path)
    script = installed_script(HOOK_COMMAND)
    res = CursorInstall(NAME, [str(hooks_path), str(mcp_path)], command=str(script or HOOK_COMMAND))
    res.notes.extend(install_notes(HOOK_COMMAND, script, None if user else root))
    new = {"version": HOOKS_VERSION, **hooks_doc, "hooks": with_ours(hooks_doc.get("hooks") or {}, script)}
    if new != hooks_doc:
        _write_json(hooks_path, new)
        res.changed.append(str(hooks_path))
    servers = dict(mcp_doc.get("mcpServers") or {})
    if MCP_NAME in servers and not _is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{mcp_path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
    else:
        res.mcp = True
        new_mcp = {**mcp_doc, "mcpServers": {**servers, MCP_NAME: mcp_entry()}}
        if new_mcp != mcp_doc:
            _write_json(mcp_path, new_mcp)
            res.changed.append(str(mcp_path))
    if res.changed:
        res.notes.append(RELOAD_NOTE)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> CursorInstall:
    """Remove gitmem's Cursor hooks and MCP server, leaving everything else as it is (a file left empty is
    deleted, and the project's ``.cursor/`` folder when then empty).

    Raises:
        ClaudeSettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape
            (nothing is written).
    """
    hooks_path, mcp_path = locations(root, user, home)
    hooks_doc, mcp_doc = _read(hooks_path, mcp_path)
    res = CursorInstall(NAME, [str(hooks_path), str(mcp_path)])
    if isinstance(hooks_doc.get("hooks"), dict):
        new = dict(hooks_doc)
        new["hooks"] = without_ours(hooks_doc["hooks"])
        if not new["hooks"]:
            del new["hooks"]
        if new != hooks_doc:
            if not _remove_if_empty(hooks_path, new, {"version": HOOKS_VERSION}):
                _write_json(hooks_path, new)
            res.changed.append(str(hooks_path))
    servers = mcp_doc.get("mcpServers")
    if isinstance(servers, dict) and _is_our_server(servers.get(MCP_NAME)):
        new_mcp = {**mcp_doc, "mcpServers": {k: v for k, v in servers.items() if k != MCP_NAME}}
        if not new_mcp["mcpServers"]:
            del new_mcp["mcpServers"]
        if not _remove_if_empty(mcp_path, new_mcp, {}):
            _write_json(mcp_path, new_mcp)
        res.changed.append(str(mcp_path))
    if res.changed and not user:
        try:
            hooks_path.parent.rmdir()  # the project's .cursor/ only when empty: gitmem made it for these files
        except OSError:
            pass
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered (``error`` when a file
    cannot be read)."""
    hooks_path, mcp_path = locations(root, user, home)
    out: dict[str, Any] = {"hooks": str(hooks_path), "mcp_file": str(mcp_path), "events": {}, "mcp": False}
    try:
        hooks_doc, mcp_doc = _read(hooks_path, mcp_path)
    except ClaudeSettingsError as e:
        return {**out, "error": e.message}
    hooks = hooks_doc.get("hooks") or {}
    out["events"] = {event: any(_is_ours(h) for h in hooks.get(event) or []) for event in EVENTS}
    servers = mcp_doc.get("mcpServers") or {}
    out["mcp"] = _is_our_server(servers.get(MCP_NAME))
    return out


def detect(root: Path | None, home: Path | None = None) -> str | None:
    """Why Cursor looks used here (a project or user ``.cursor/`` folder, ``cursor-agent`` or ``cursor`` on
    PATH), or None."""
    for base, what in ((root, "this project has a .cursor/ folder"),
                       (home or Path(os.path.expanduser("~")), "~/.cursor/ exists")):
        if base is not None and (base / ".cursor").is_dir():
            return what
    for exe in ("cursor-agent", "cursor"):
        if shutil.which(exe):
            return f"{exe} is on PATH"
    return None
