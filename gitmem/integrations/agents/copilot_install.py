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

from pathlib import Path
from typing import Any

from .claude import COPILOT_HOOKS_FILE
from .installing import (
    InstallResult,
    SettingsError,
    add_mcp_server,
    detect_by,
    install_notes,
    installed_script,
    marker,
    mcp_servers,
    read_json,
    remove_file,
    remove_mcp_server,
    server_registered,
    shim_command,
    write_json,
)

NAME = "copilot"
USER_SCOPE = False
#: The ``gitmem install copilot`` help text.
HELP = """Register gitmem's GitHub Copilot CLI hooks and MCP server in this repository (idempotent).

\b
Hooks: .github/hooks/gitmem.json, gitmem's own file. sessionStart,
userPromptSubmitted and preToolUse (view, edit, create, bash reads) inject
memories; postToolUse, agentStop and sessionEnd capture the session for
consolidation. MCP server: `gitmem` in .github/mcp.json. With `gitmem install
claude` too, Copilot (which also runs .claude/settings.json's hooks) gets
gitmem once."""
HOOK_COMMAND = "gitmem-copilot-hook"
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


def locations(root: Path) -> tuple[Path, Path]:
    """(gitmem's hooks file, the MCP file) of project ``root``."""
    return root / COPILOT_HOOKS_FILE, root / ".github" / "mcp.json"


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def hooks_document(script: Path | None) -> dict[str, Any]:
    """The whole of ``.github/hooks/gitmem.json``."""
    return {"version": 1, "hooks": {event: [{"type": "command", "bash": handler_command(event, script),
                                             "timeoutSec": timeout}] for event, timeout in EVENTS}}


def _result(hooks_path: Path, mcp_path: Path) -> InstallResult:
    return InstallResult(NAME, {"hooks": str(hooks_path), "mcp_file": str(mcp_path)}, command=HOOK_COMMAND)


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Write gitmem's Copilot hooks file and register the MCP server; see the module docstring.

    Raises:
        SettingsError: ``.github/mcp.json`` is not valid JSON (nothing is written).
    """
    assert root is not None
    hooks_path, mcp_path = locations(root)
    mcp = read_json(mcp_path)
    mcp_servers(mcp_path, mcp)  # refused before anything is written
    script = installed_script(HOOK_COMMAND)
    res = _result(hooks_path, mcp_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    doc = hooks_document(script)
    try:
        current: Any = read_json(hooks_path)
    except SettingsError:
        current = None
    if current != doc:
        write_json(hooks_path, doc)
        res.changed.append(str(hooks_path))
    add_mcp_server(mcp_path, mcp, res)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Copilot hooks file and its MCP entry, leaving everything else as it is (``.github/hooks/``
    and ``.github/`` go too when gitmem left them empty).

    Raises:
        SettingsError: ``.github/mcp.json`` is not valid JSON (nothing is written).
    """
    assert root is not None
    hooks_path, mcp_path = locations(root)
    mcp = read_json(mcp_path)
    mcp_servers(mcp_path, mcp)
    res = _result(hooks_path, mcp_path)
    if hooks_path.is_file():
        remove_file(hooks_path, prune=2)  # .github/hooks/, then .github/, only when empty
        res.changed.append(str(hooks_path))
    remove_mcp_server(mcp_path, mcp, res)
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"hooks", "installed", "mcp"}``: whether gitmem's hooks file is there, and whether the MCP server is
    registered (plus ``"error"`` when ``.github/mcp.json`` cannot be read)."""
    assert root is not None
    hooks_path, mcp_path = locations(root)
    try:
        mcp = read_json(mcp_path)
    except SettingsError as e:
        return {"hooks": str(hooks_path), "installed": hooks_path.is_file(), "mcp": False, "error": e.message}
    return {"hooks": str(hooks_path), "installed": hooks_path.is_file(), "mcp": server_registered(mcp)}


def detect(root: Path | None, home: Path) -> str | None:
    """Why GitHub Copilot CLI is used here: ``.github/hooks/``, ``.github/copilot-instructions.md`` or
    ``.github/mcp.json`` in ``root``, else ``$COPILOT_HOME`` (``~/.copilot``) or ``copilot`` on PATH."""
    import os

    base = Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") else home / ".copilot"
    return detect_by(root, home, project=(".github/hooks", ".github/copilot-instructions.md", ".github/mcp.json"),
                     user=(base,), binary="copilot")
