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
empty. A hooks file that is not valid JSON is never rewritten (``ClaudeSettingsError``, the
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claude_install import (
    ClaudeSettingsError,
    _write_json,
    install_notes,
    installed_script,
    is_marked,
    marker,
    read_json,
    shim_command,
    without_ours,
)

HOOK_COMMAND = "gitmem-codex-hook"
MCP_NAME = "gitmem"
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


@dataclass
class CodexInstall:
    """What an install or uninstall did: files written or removed, and notes for the user."""

    hooks: Path
    config: Path
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = HOOK_COMMAND
    mcp: bool = False


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
    """The shell command of gitmem's handler for ``event`` (``claude_install.shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


def _is_ours(handler: Any) -> bool:
    return is_marked(handler, HOOK_COMMAND)


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ClaudeSettingsError(f"{path}: \"hooks\" is not an object", "fix the file, then run again")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise ClaudeSettingsError(f"{path}: hooks.{event} is not a list", "fix the file, then run again")


def with_ours(hooks: dict[str, Any], script: Path | None) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones) appended after the user's."""
    out = without_ours(hooks, _is_ours)
    for event, matcher, extra in EVENTS:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": handler_command(event, script), **extra}]
        if not isinstance(out.get(event), list):
            out[event] = []
        out[event].append(group)
    return out


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


def _mcp_note(res: CodexInstall, user: bool) -> None:
    found = mcp_registered(res.config)
    res.mcp = bool(found)
    if found:
        return
    where = res.config if user or res.config.exists() else f"{res.config} (or $CODEX_HOME/config.toml)"
    why = "cannot be read as TOML; " if found is None else ""
    res.notes.append(f"{why}gitmem does not write TOML: for the MCP server, add to {where}:\n{MCP_LINES}")


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> CodexInstall:
    """Register gitmem's Codex hooks; see the module docstring.

    Raises:
        ClaudeSettingsError: the hooks file is not valid JSON (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    _check_shape(hooks_path, data)
    script = installed_script(HOOK_COMMAND)
    res = CodexInstall(hooks_path, config_path, command=str(script or HOOK_COMMAND))
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new = dict(data)
    new["hooks"] = with_ours(data.get("hooks") or {}, script)
    if new != data:
        _write_json(hooks_path, new)
        res.changed.append(str(hooks_path))
    _mcp_note(res, user)
    res.notes.append(TRUST_NOTE)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> CodexInstall:
    """Remove gitmem's Codex hooks, leaving everything else as it is (a hooks file left empty is deleted).

    Raises:
        ClaudeSettingsError: the hooks file is not valid JSON (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    _check_shape(hooks_path, data)
    res = CodexInstall(hooks_path, config_path)
    if not data.get("hooks"):
        return res
    new = dict(data)
    new["hooks"] = without_ours(data["hooks"], _is_ours)
    if not new["hooks"]:
        del new["hooks"]
    if new == data:
        return res
    res.changed.append(str(hooks_path))
    if mcp_registered(config_path):
        res.notes.append(f"the MCP server stays in {config_path}: remove [mcp_servers.gitmem] there if you added it")
    if new:
        _write_json(hooks_path, new)
        return res
    hooks_path.unlink()
    try:
        hooks_path.parent.rmdir()  # only when empty: gitmem made it for the hooks file
    except OSError:
        pass
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered."""
    hooks_path, config_path = locations(root, user, home)
    try:
        data = read_json(hooks_path)
    except ClaudeSettingsError as e:
        return {"hooks": str(hooks_path), "error": e.message, "events": {}, "mcp": False}
    hooks = data.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    events = {event: any(_is_ours(h) for g in (hooks.get(event) or []) if isinstance(g, dict)
                         and isinstance(g.get("hooks"), list) for h in g["hooks"])
              for event, _, _ in EVENTS}
    return {"hooks": str(hooks_path), "events": events, "mcp": bool(mcp_registered(config_path))}
