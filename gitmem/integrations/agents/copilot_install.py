"""``gitmem install copilot`` / ``gitmem uninstall copilot``: register gitmem with GitHub Copilot CLI.

Hooks: ``<repo>/.github/hooks/gitmem.json`` is gitmem's own file (Copilot CLI 1.0.102 loads every
``.github/hooks/*.json``): ``install`` writes it whole (``{"version": 1, "hooks": {<event>:
[{"type": "command", "bash": ..., "timeoutSec": ...}]}}``, one handler per Copilot event, a short
shell command that runs this installation's ``gitmem-copilot-hook EVENT`` by absolute path, else
the one on PATH, else nothing) and ``uninstall`` removes it whole (and ``.github/hooks/`` when
that is then empty). No other file in ``.github/hooks/`` is read or touched.

The MCP server: Copilot CLI reads the project's ``.mcp.json`` and ``.github/mcp.json`` (and no
longer ``.vscode/mcp.json``) besides ``$COPILOT_HOME/mcp-config.json``. gitmem registers
``gitmem`` in ``.github/mcp.json`` (``mcpServers``, merged: other servers stay; a server of that
name that is not ``gitmem mcp`` is left alone, with a note); ``uninstall`` removes only that
entry (the file when it was left empty).

Copilot CLI also runs ``.claude/settings.json``'s hooks: with ``gitmem install claude`` done too,
the Claude Code hooks step aside under Copilot (``claude.copilot_hooks_installed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claude import COPILOT_HOOKS_FILE
from .claude_install import (
    ClaudeSettingsError,
    _is_our_server,
    _write_json,
    install_notes,
    installed_script,
    marker,
    mcp_entry,
    read_json,
    shim_command,
)

HOOK_COMMAND = "gitmem-copilot-hook"
MCP_NAME = "gitmem"
MARKER = marker(HOOK_COMMAND)
#: (Copilot event, timeout in seconds: far above the handler's own limit, agents.core.TIME_LIMITS).
EVENTS: tuple[tuple[str, int], ...] = (
    ("sessionStart", 15),
    ("userPromptSubmitted", 10),
    ("preToolUse", 5),
    ("postToolUse", 10),
    ("agentStop", 10),
    ("sessionEnd", 5),
)


@dataclass
class CopilotInstall:
    """What an install or uninstall did: files written or removed, and notes for the user."""

    hooks: Path
    mcp_file: Path
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = HOOK_COMMAND
    mcp: bool = False


def locations(root: Path) -> tuple[Path, Path]:
    """(gitmem's hooks file, the MCP file) of project ``root``."""
    return root / COPILOT_HOOKS_FILE, root / ".github" / "mcp.json"


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``claude_install.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def hooks_document(script: Path | None) -> dict[str, Any]:
    """The whole of ``.github/hooks/gitmem.json``."""
    return {"version": 1, "hooks": {event: [{"type": "command", "bash": handler_command(event, script),
                                             "timeoutSec": timeout}] for event, timeout in EVENTS}}


def _servers(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ClaudeSettingsError(f"{path}: \"mcpServers\" is not an object", "fix the file, then run again")
    return dict(servers or {})


def install(root: Path) -> CopilotInstall:
    """Write gitmem's Copilot hooks file and register the MCP server; see the module docstring.

    Raises:
        ClaudeSettingsError: ``.github/mcp.json`` is not valid JSON (nothing is written).
    """
    hooks_path, mcp_path = locations(root)
    mcp = read_json(mcp_path)
    servers = _servers(mcp_path, mcp)
    script = installed_script(HOOK_COMMAND)
    res = CopilotInstall(hooks_path, mcp_path, command=str(script or HOOK_COMMAND))
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    doc = hooks_document(script)
    try:
        current: Any = read_json(hooks_path)
    except ClaudeSettingsError:
        current = None
    if current != doc:
        _write_json(hooks_path, doc)
        res.changed.append(str(hooks_path))
    if MCP_NAME in servers and not _is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{mcp_path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
        return res
    res.mcp = True
    new = {**mcp, "mcpServers": {**servers, MCP_NAME: mcp_entry()}}
    if new != mcp:
        _write_json(mcp_path, new)
        res.changed.append(str(mcp_path))
    return res


def uninstall(root: Path) -> CopilotInstall:
    """Remove gitmem's Copilot hooks file and its MCP entry, leaving everything else as it is.

    Raises:
        ClaudeSettingsError: ``.github/mcp.json`` is not valid JSON (nothing is written).
    """
    hooks_path, mcp_path = locations(root)
    mcp = read_json(mcp_path)
    servers = _servers(mcp_path, mcp)
    res = CopilotInstall(hooks_path, mcp_path)
    if hooks_path.is_file():
        hooks_path.unlink()
        res.changed.append(str(hooks_path))
        try:
            hooks_path.parent.rmdir()  # only when empty
        except OSError:
            pass
    if MCP_NAME in servers and _is_our_server(servers[MCP_NAME]):
        del servers[MCP_NAME]
        new = dict(mcp)
        if servers:
            new["mcpServers"] = servers
            _write_json(mcp_path, new)
        else:
            new.pop("mcpServers", None)
            if new:
                _write_json(mcp_path, new)
            else:
                mcp_path.unlink()
        res.changed.append(str(mcp_path))
    for d in (mcp_path.parent,):
        try:
            d.rmdir()  # .github/ only when gitmem left it empty
        except OSError:
            pass
    return res


def status(root: Path) -> dict[str, Any]:
    """Whether gitmem's hooks file is there, and whether the MCP server is registered."""
    hooks_path, mcp_path = locations(root)
    try:
        servers = _servers(mcp_path, read_json(mcp_path))
    except ClaudeSettingsError as e:
        return {"hooks": str(hooks_path), "installed": hooks_path.is_file(), "mcp": False, "error": e.message}
    return {"hooks": str(hooks_path), "installed": hooks_path.is_file(),
            "mcp": MCP_NAME in servers and _is_our_server(servers[MCP_NAME])}
