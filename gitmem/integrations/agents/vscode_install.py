"""``gitmem install vscode`` / ``gitmem uninstall vscode``: register gitmem with VS Code's agent mode.

Writes, merged with what is already there (the user's own servers and hooks are never dropped or duplicated;
gitmem's own entries are replaced, so a second install changes nothing), into the project:

* ``.vscode/mcp.json``: the MCP server ``gitmem`` in VS Code's own format, a ``servers`` table (not
  ``mcpServers``): ``{"servers": {"gitmem": {"type": "stdio", "command": "sh", "args": ["-c", ...]}}}``
  (``installing.mcp_entry``: the ``gitmem`` of the folder the clone's ``bin-dir`` names, else the one on PATH; no
  machine path). The user's other servers and ``inputs`` stay as they are. A file with comments (VS Code
  accepts JSONC there) is refused, never rewritten without them (``installing.SettingsError``);
* the hooks: VS Code's agent mode (agent hooks, Preview since VS Code 1.110) runs the hooks of Claude Code's
  settings files and of ``.github/hooks/*.json``, and has no hook file of its own. gitmem's hooks for it are
  therefore Claude Code's, in ``.claude/settings.json`` (``claude_install.hooks_change``, the very handlers
  ``gitmem install claude`` writes; ``gitmem-hook`` tells VS Code's input from Claude Code's, ``vscode``); not
  the Claude Code MCP server (``.mcp.json``), which is Claude Code's.

``uninstall`` removes gitmem's server from ``.vscode/mcp.json`` (the file goes when gitmem created it and
nothing else is left, with ``.vscode/`` when then empty) and the hooks from ``.claude/settings.json`` unless
gitmem is installed for Claude Code too (its MCP server in ``.mcp.json``): those hooks are then Claude Code's
as well, and stay; ``gitmem uninstall claude`` likewise keeps them while VS Code has gitmem's server.

Sources: code.visualstudio.com/docs/agents/reference/mcp-configuration (the ``servers`` format),
…/docs/agent-customization/hooks (the hook files VS Code reads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import claude_install
from .installing import (
    MCP_NAME,
    Change,
    InstallResult,
    Marks,
    Plan,
    SettingsError,
    apply,
    detect_by,
    install_notes,
    mcp_entry,
    mcp_file_change,
    read_json,
    record_file,
    server_registered,
    vscode_mcp_file,
)

NAME = "vscode"
USER_SCOPE = False
#: Why ``gitmem install vscode --user`` is refused.
NO_USER_SCOPE = ("VS Code keeps its user-level MCP servers in its profile (MCP: Open User Configuration): "
                 "gitmem installs into this repository's .vscode/mcp.json only")
#: The ``gitmem install vscode`` help text.
HELP = """Register gitmem's MCP server and hooks with VS Code's agent mode in this repository (idempotent).

\b
MCP server: `gitmem` in .vscode/mcp.json (VS Code's "servers" format), merged
with your servers. Hooks: VS Code runs Claude Code's hooks, so gitmem's go in
.claude/settings.json (the same handlers `gitmem install claude` writes)."""
#: The hook script the handlers run (Claude Code's: VS Code runs that file's hooks).
HOOK_COMMAND = claude_install.HOOK_COMMAND
#: VS Code's server table.
SERVERS_KEY = "servers"


def location(root: Path) -> Path:
    """The project's ``.vscode/mcp.json`` (``installing.vscode_mcp_file``)."""
    return vscode_mcp_file(root)


def _result(root: Path) -> InstallResult:
    settings, _ = claude_install.locations(root, False)
    return InstallResult(NAME, {"mcp_file": str(location(root)), "settings": str(settings)}, command=HOOK_COMMAND)


def _project(root: Path | None, user: bool) -> Path:
    if user or root is None:
        raise SettingsError(NO_USER_SCOPE, "run `gitmem install vscode` in the repository")
    return root


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes: ``.vscode/mcp.json``'s server and ``.claude/settings.json``'s hooks, every file read
    and checked first.

    Raises:
        SettingsError: a file is not valid JSON (comments included), or its ``servers`` / ``hooks`` has an
            unexpected shape; ``user`` (no user scope).
    """
    root = _project(root, user)
    res = _result(root)
    res.notes.extend(install_notes(HOOK_COMMAND, None, root))
    changes = [_mcp_change(root, res, uninstall=False), claude_install.hooks_change(root)]
    return Plan(res, [c for c in changes if c], False, record_file(root))


def snippet() -> str:
    """The ``servers`` member to add to ``.vscode/mcp.json`` by hand (one line of JSON)."""
    return json.dumps({SERVERS_KEY: {MCP_NAME: mcp_entry()}})


def _mcp_change(root: Path, res: InstallResult, *, uninstall: bool) -> Change | None:
    """``.vscode/mcp.json``'s change (``installing.mcp_file_change`` on its ``servers``).

    Raises:
        SettingsError: the file is not plain JSON (VS Code accepts comments there; gitmem does not rewrite such a
            file: the hint gives the entry to add by hand), or its ``servers`` is not an object.
    """
    path = location(root)
    try:
        if uninstall:
            return mcp_file_change(path, res, uninstall=True, prune=1, key=SERVERS_KEY)
        return mcp_file_change(path, res, uninstall=False, entry=mcp_entry(), key=SERVERS_KEY)
    except SettingsError as e:
        if "not valid JSON" not in e.message:
            raise
        raise SettingsError(f"{path} is not plain JSON (comments or a syntax error): gitmem does not rewrite it",
                            f"add this to it yourself: {snippet()}") from None


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's MCP server and hooks for VS Code; see the module docstring.

    Raises:
        SettingsError: see ``plan_install`` (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` writes or removes; the hooks stay when gitmem is installed for Claude Code too.

    Raises:
        SettingsError: see ``plan_install``.
    """
    root = _project(root, user)
    res = _result(root)
    changes = [_mcp_change(root, res, uninstall=True)]
    if claude_install.status(root).get("mcp"):
        res.notes.append(f"{claude_install.locations(root, False)[0]}: gitmem's hooks kept (Claude Code's too: "
                         "`gitmem uninstall claude` removes them)")
    else:
        changes.append(claude_install.hooks_change(root, uninstall=True))
    return Plan(res, [c for c in changes if c], True, record_file(root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's MCP server and (unless Claude Code's too) hooks, leaving everything else as it is.

    Raises:
        SettingsError: see ``plan_install`` (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"mcp_file", "mcp", "hooks"}``: whether ``.vscode/mcp.json`` has gitmem's server and whether
    ``.claude/settings.json`` has gitmem's hooks (``{"mcp_file", "error", "mcp": false}`` when unreadable). The
    hooks alone do not make gitmem installed for VS Code (they may be Claude Code's)."""
    if root is None or user:
        return {"mcp": False, "hooks": False}
    path = location(root)
    try:
        data = read_json(path)
    except SettingsError as e:
        return {"mcp_file": str(path), "error": e.message, "mcp": False}
    events = claude_install.status(root).get("events") or {}
    return {"mcp_file": str(path), "mcp": server_registered(data, SERVERS_KEY), "hooks": any(events.values())}


def marks(home: Path) -> Marks:
    """What says VS Code is used here: ``.vscode/`` in the repository, or ``code`` on PATH."""
    return Marks(project=(".vscode",), binaries=("code",))


def detect(root: Path | None, home: Path) -> str | None:
    """Why VS Code is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))


def handler_command(event: str, script: Path | None = None) -> str:
    """The hook command gitmem writes for VS Code's ``event``: Claude Code's (``claude_install.handler_command``)."""
    return claude_install.handler_command(event, script)

