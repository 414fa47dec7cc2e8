"""``gitmem install codex`` / ``gitmem uninstall codex``: register gitmem with the Codex CLI.

Writes, merged with what is already there (the user's own hooks are never dropped or
duplicated; gitmem's own entries are replaced, so a second install changes nothing), the
hooks in ``<repo>/.codex/hooks.json`` (``--project``, the default) or
``$CODEX_HOME/hooks.json`` (``--user``; ``~/.codex`` without ``CODEX_HOME``): one handler
per event, a short shell command (``handler_command``) that runs this installation's
``gitmem-codex-hook`` by absolute path, else the one on PATH, else nothing.

gitmem's handlers are recognised by their command's first word, ``: gitmem-codex-hook;``
(a shell no-op). ``uninstall`` removes exactly those (and the groups and events it leaves
empty); a hooks file left as ``{}`` is deleted, and its ``.codex/`` folder when that is then
empty. A hooks file that is not valid JSON is never rewritten (``SettingsError``, the
same error as for Claude Code's files).

The MCP server: Codex reads ``[mcp_servers.<name>]`` from ``config.toml`` (the project's
``.codex/config.toml`` when the project is trusted, else ``$CODEX_HOME/config.toml``).
gitmem reads that file (``tomllib``) and says whether ``gitmem`` is registered; it does not
write TOML (the standard library has no TOML writer): the note gives the lines to add.

Codex runs no project hook until the user trusts it in ``/hooks``, and says nothing about it
otherwise: ``install`` always notes it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from .installing import (
    MCP_NAME,
    InstallResult,
    SettingsError,
    check_hooks_shape,
    detect_by,
    hook_events_on,
    install_notes,
    installed_script,
    is_marked,
    marker,
    read_json,
    shim_command,
    with_ours,
    without_ours,
    write_or_remove,
)

NAME = "codex"
USER_SCOPE = True
#: The ``gitmem install codex`` help text.
HELP = """Register gitmem's Codex CLI hooks and MCP server (merged with what is there; idempotent).

\b
Hooks: SessionStart, UserPromptSubmit and PreToolUse (Bash reads, apply_patch)
inject memories; PostToolUse, Stop and SessionEnd capture the session for
consolidation. Codex runs them only once you trust them in /hooks.
--project (default): .codex/hooks.json and .codex/config.toml; --user:
$CODEX_HOME/hooks.json and config.toml (~/.codex)."""
HOOK_COMMAND = "gitmem-codex-hook"
#: First word of gitmem's handler: a no-op that marks it as gitmem's.
MARKER = marker(HOOK_COMMAND)

#: (event, matcher or None: every tool / source, extra handler fields). Timeouts in seconds, far above the
#: handler's own limit (agents.core.TIME_LIMITS); Codex cuts SessionEnd's to 3 s whatever is set.
EVENTS: tuple[tuple[str, str | None, dict[str, Any]], ...] = (
    ("SessionStart", "startup|resume|clear", {"timeout": 15}),
    ("UserPromptSubmit", None, {"timeout": 10}),
    ("PreToolUse", "Bash|apply_patch", {"timeout": 5}),
    ("PostToolUse", None, {"timeout": 10}),
    ("Stop", None, {"timeout": 10}),
    ("SessionEnd", None, {"timeout": 3}),
)

TRUST_NOTE = ("Codex runs no project hook until you trust it: start `codex` in this repository, open /hooks and "
              "trust gitmem's hooks (nothing tells you otherwise)")
MCP_LINES = '[mcp_servers.gitmem]\ncommand = "gitmem"\nargs = ["mcp"]'


def codex_home(env: dict[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    env = dict(os.environ) if env is None else env
    return Path(env.get("CODEX_HOME") or os.path.expanduser("~/.codex"))


def locations(root: Path | None, user: bool, home: Path | None = None) -> tuple[Path, Path]:
    """(hooks file, config file) for project ``root`` or the user (``home``: Codex's home folder)."""
    if user:
        base = home or codex_home()
        return base / "hooks.json", base / "config.toml"
    assert root is not None
    return root / ".codex" / "hooks.json", root / ".codex" / "config.toml"


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def is_ours(handler: Any) -> bool:
    """Whether ``handler`` is gitmem's (its command starts with ``MARKER``)."""
    return is_marked(handler, HOOK_COMMAND)


def _result(hooks_path: Path, config_path: Path) -> InstallResult:
    return InstallResult(NAME, {"hooks": str(hooks_path), "config": str(config_path)}, command=HOOK_COMMAND)


def mcp_registered(config: Path) -> bool | None:
    """Whether ``config`` (Codex's config.toml) has ``[mcp_servers.gitmem]``; None when it cannot be read as TOML."""
    try:
        data = tomllib.loads(config.read_text("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and MCP_NAME in servers


def _mcp_note(res: InstallResult, user: bool) -> None:
    config = res.path("config")
    found = mcp_registered(config)
    res.mcp = bool(found)
    if found:
        return
    where = config if user or config.exists() else f"{config} (or $CODEX_HOME/config.toml)"
    why = "cannot be read as TOML; " if found is None else ""
    res.notes.append(f"{why}gitmem does not write TOML: for the MCP server, add to {where}:\n{MCP_LINES}")


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's Codex hooks; see the module docstring.

    Raises:
        SettingsError: the hooks file is not valid JSON (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    check_hooks_shape(hooks_path, data)
    script = installed_script(HOOK_COMMAND)
    res = _result(hooks_path, config_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new = dict(data)
    new["hooks"] = with_ours(data.get("hooks") or {}, EVENTS, lambda e: handler_command(e, script), is_ours)
    write_or_remove(hooks_path, new, data, res)
    _mcp_note(res, user)
    res.notes.append(TRUST_NOTE)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Codex hooks, leaving everything else as it is (a hooks file left empty is deleted).

    Raises:
        SettingsError: the hooks file is not valid JSON (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    check_hooks_shape(hooks_path, data)
    res = _result(hooks_path, config_path)
    if not data.get("hooks"):
        return res
    new = dict(data)
    new["hooks"] = without_ours(data["hooks"], is_ours)
    if not new["hooks"]:
        del new["hooks"]
    if new == data:
        return res
    if mcp_registered(config_path):
        res.notes.append(f"the MCP server stays in {config_path}: remove [mcp_servers.gitmem] there if you added it")
    write_or_remove(hooks_path, new, data, res)  # an emptied file goes, and .codex/ when gitmem made it
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered."""
    hooks_path, config_path = locations(root, user, home)
    try:
        data = read_json(hooks_path)
    except SettingsError as e:
        return {"hooks": str(hooks_path), "error": e.message, "events": {}, "mcp": False}
    events = hook_events_on(data.get("hooks"), (e for e, _, _ in EVENTS), is_ours)
    return {"hooks": str(hooks_path), "events": events, "mcp": bool(mcp_registered(config_path))}


def detect(root: Path | None, home: Path) -> str | None:
    """Why Codex is used here: ``.codex/`` or ``AGENTS.md`` in ``root``, else ``$CODEX_HOME`` (``~/.codex``)
    or ``codex`` on PATH (None when neither)."""
    codex_dir = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    return detect_by(root, home, project=(".codex", "AGENTS.md"), user=(codex_dir,), binary="codex")
