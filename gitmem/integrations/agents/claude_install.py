"""``gitmem install claude`` / ``gitmem uninstall claude``: register gitmem with Claude Code.

Writes, merged with what is already there (the user's own hooks and servers are
never dropped or duplicated; gitmem's own entries are replaced, so a second
install changes nothing):

* the hooks, in ``.claude/settings.json`` of the project (``--project``, the
  default) or ``~/.claude/settings.json`` (``--user``): one handler per event, a
  short shell command (``handler_command``) that runs this installation's
  ``gitmem-hook`` by absolute path, else the one on PATH, else nothing — so the
  hooks work whatever PATH Claude Code starts with, and a committed settings file
  neither breaks nor nags a teammate without gitmem;
* the MCP server ``gitmem`` (``gitmem mcp``, same fallback): in ``.mcp.json`` at
  the project root, enabled through ``enabledMcpjsonServers`` in the same
  settings file, or for ``--user`` in ``~/.claude.json``.

gitmem's handlers are recognised by their command's first word, ``: gitmem-hook;``
(a shell no-op). ``uninstall`` removes exactly those (and empty groups it
leaves), and the ``gitmem`` MCP server. A settings file that is not valid JSON
is never rewritten (``ClaudeSettingsError``).

Reference: ``../shared/reference/claude-code-hooks.md`` §2.2–2.5.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import infra, layout
from ...errors import GitmemError

HOOK_COMMAND = "gitmem-hook"
MCP_NAME = "gitmem"

#: (event, matcher or None, extra handler fields). Timeouts in seconds; each is a ceiling far above
#: the handler's own time limit (agents.core.TIME_LIMITS), never a target.
EVENTS: tuple[tuple[str, str | None, dict[str, Any]], ...] = (
    ("SessionStart", "startup|resume|clear|compact", {"timeout": 15}),
    ("UserPromptSubmit", None, {"timeout": 10}),
    ("PreToolUse", "Read|Edit|Write|NotebookEdit", {"timeout": 5}),
    ("PostToolUse", "*", {"timeout": 10, "async": True}),
    ("PostToolUseFailure", "*", {"timeout": 10, "async": True}),
    ("Stop", None, {"timeout": 10, "async": True}),
    ("SessionEnd", None, {}),
)


class ClaudeSettingsError(GitmemError):
    """A Claude Code settings file cannot be read as a JSON object."""


@dataclass
class ClaudeInstall:
    """What an install or uninstall did: files written, and notes for the user."""

    settings: Path
    mcp: Path
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = HOOK_COMMAND


def _dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def locations(root: Path | None, user: bool, home: Path | None = None) -> tuple[Path, Path]:
    """(settings file, MCP file) for project ``root`` or the user."""
    home = home or Path(os.path.expanduser("~"))
    if user:
        return home / ".claude" / "settings.json", home / ".claude.json"
    assert root is not None
    return root / ".claude" / "settings.json", root / ".mcp.json"


#: First word of gitmem's shell-form handler: a no-op that marks it as gitmem's.
MARKER = ": gitmem-hook;"


def installed_script(name: str) -> Path | None:
    """This installation's console script ``name`` (next to the running Python), if it exists."""
    p = Path(sys.executable).parent / name
    return p if p.exists() else None


def shim_command(hook_command: str, event: str, script: Path | None = None) -> str:
    """The one-line shell command of a gitmem agent-hook handler, for every agent's installer.

    It starts with the marker ``: <hook_command>;`` (how an installer knows its own handlers), then
    runs this installation's ``hook_command`` console script by absolute path when that file exists
    (so it works whatever PATH the agent was started with), else the ``hook_command`` on PATH (a
    teammate who shares a committed settings file), else nothing and exits 0 (a machine without
    gitmem: no error notice).
    """
    script = script if script is not None else installed_script(hook_command)
    parts = [marker(hook_command)]
    if script is not None:
        q = shlex.quote(str(script))
        parts.append(f"if [ -x {q} ]; then exec {q} {event}; fi;")
    parts.append(f"if command -v {hook_command} >/dev/null 2>&1; then exec {hook_command} {event}; fi; exit 0")
    return " ".join(parts)


def marker(hook_command: str) -> str:
    """The first words of every handler command ``shim_command`` writes: how an installer knows its own."""
    return f": {hook_command};"


def is_marked(handler: Any, hook_command: str) -> bool:
    """Whether ``handler`` (a hook entry of an agent's settings) is a command ``shim_command`` wrote."""
    return (isinstance(handler, dict) and handler.get("type", "command") == "command"
            and isinstance(handler.get("command"), str) and handler["command"].startswith(marker(hook_command)))


def install_notes(hook_command: str, script: Path | None, root: Path | None) -> list[str]:
    """The notes every installer gives: the hook script is only on PATH; the repository has no ``.gitmem/``."""
    notes = []
    if script is None:
        notes.append(f"{hook_command} is not installed next to {sys.executable}: the hooks will run the "
                     f"{hook_command} on PATH")
    if root is not None and not (root / layout.GITMEM_DIR).is_dir():
        notes.append("this repository has no .gitmem/ yet: the hooks do nothing until `gitmem init`")
    return notes


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's Claude Code handler for ``event`` (``shim_command``)."""
    return shim_command(HOOK_COMMAND, event, script)


_OUR_EVENTS = {e for e, _, _ in EVENTS}


def _is_ours(handler: Any) -> bool:
    """gitmem's handler: the shell form starting with ``MARKER``, or the exec form of earlier versions
    (a command whose file name is exactly ``gitmem-hook`` with one event as argument)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    cmd, args = handler.get("command"), handler.get("args")
    if isinstance(cmd, str) and cmd.startswith(MARKER):
        return True
    return (isinstance(cmd, str) and Path(cmd).name == HOOK_COMMAND and isinstance(args, list)
            and len(args) == 1 and args[0] in _OUR_EVENTS)


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    if Path(entry["command"]).name == "gitmem" and args == ["mcp"]:
        return True
    return (entry["command"] == "sh" and isinstance(args, list) and len(args) == 2 and args[0] == "-c"
            and isinstance(args[1], str) and args[1].startswith(": gitmem-mcp;"))


def _check_shape(path: Path, settings: dict[str, Any]) -> None:
    """Refuse (rather than drop or mangle) settings whose ``hooks`` or server list has an unexpected shape."""
    hooks = settings.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ClaudeSettingsError(f"{path}: \"hooks\" is not an object", "fix the file, then run again")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise ClaudeSettingsError(f"{path}: hooks.{event} is not a list", "fix the file, then run again")
    enabled = settings.get("enabledMcpjsonServers")
    if enabled is not None and not isinstance(enabled, list):
        raise ClaudeSettingsError(f"{path}: \"enabledMcpjsonServers\" is not a list", "fix the file, then run again")


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file ({} when missing).

    Raises:
        ClaudeSettingsError: not valid JSON, or not an object.
    """
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ClaudeSettingsError(f"cannot read {path}: {e}", "fix or move the file, then run again") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ClaudeSettingsError(f"{path} is not valid JSON ({e})", "fix the file, then run again") from None
    if not isinstance(data, dict):
        raise ClaudeSettingsError(f"{path} is not a JSON object", "fix the file, then run again")
    return data


def _write_json(path: Path, data: dict[str, Any], *, private: bool = False) -> None:
    """Write ``data`` atomically to ``path``, or to the file it links to, keeping that file's mode.

    A new file gets 0600 when ``private`` (``~/.claude.json`` holds credentials), else 0666 minus the umask.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600 if private else None
    target.parent.mkdir(parents=True, exist_ok=True)
    infra.atomic_write(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode=mode)


def without_ours(hooks: dict[str, Any], is_ours: Callable[[Any], bool] | None = None) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (``is_ours``, by default Claude Code's) removed, and the groups and
    events left empty by that (the same hooks layout serves Codex's ``hooks.json``)."""
    ours = is_ours or _is_ours
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not ours(h)]
                if handlers:
                    kept.append({**g, "hooks": handlers})
                elif not any(ours(h) for h in g["hooks"]):
                    kept.append(g)
            else:
                kept.append(g)
        if kept or not groups:  # an event left empty by removing gitmem's handlers goes; the user's [] stays
            out[event] = kept
    return out


def with_ours(hooks: dict[str, Any], script: Path | None) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones) appended after the user's."""
    out = without_ours(hooks)
    for event, matcher, extra in EVENTS:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": handler_command(event, script), **extra}]
        out.setdefault(event, [])
        if not isinstance(out[event], list):
            out[event] = []
        out[event].append(group)
    return out


def mcp_entry() -> dict[str, Any]:
    """The ``.mcp.json`` entry of ``gitmem mcp``: this installation's script by absolute path if it
    exists, else ``gitmem`` on PATH (same reasoning as ``handler_command``)."""
    script = installed_script("gitmem")
    parts = [": gitmem-mcp;"]
    if script is not None:
        q = shlex.quote(str(script))
        parts.append(f"if [ -x {q} ]; then exec {q} mcp; fi;")
    parts.append("exec gitmem mcp")
    return {"type": "stdio", "command": "sh", "args": ["-c", " ".join(parts)]}


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> ClaudeInstall:
    """Register gitmem's hooks and MCP server; see the module docstring.

    Raises:
        ClaudeSettingsError: a settings file is not valid JSON (nothing is written).
    """
    settings_path, mcp_path = locations(root, user, home)
    settings = read_json(settings_path)
    mcp = read_json(mcp_path)
    _check_shape(settings_path, settings)
    script = installed_script(HOOK_COMMAND)
    res = ClaudeInstall(settings_path, mcp_path, command=str(script or HOOK_COMMAND))
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new_settings = dict(settings)
    new_settings["hooks"] = with_ours(settings.get("hooks") or {}, script)
    if not user:
        enabled = list(settings.get("enabledMcpjsonServers") or [])
        if MCP_NAME not in enabled:
            new_settings["enabledMcpjsonServers"] = enabled + [MCP_NAME]
    if new_settings != settings:
        _write_json(settings_path, new_settings)
        res.changed.append(str(settings_path))
    servers = _dict(mcp.get("mcpServers"))
    if MCP_NAME in servers and not _is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{mcp_path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
        return res
    new_mcp = dict(mcp)
    new_mcp["mcpServers"] = {**servers, MCP_NAME: mcp_entry()}
    if new_mcp != mcp:
        _write_json(mcp_path, new_mcp, private=user)
        res.changed.append(str(mcp_path))
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> ClaudeInstall:
    """Remove gitmem's hooks and MCP server, leaving everything else as it is.

    Raises:
        ClaudeSettingsError: a settings file is not valid JSON (nothing is written).
    """
    settings_path, mcp_path = locations(root, user, home)
    settings = read_json(settings_path)
    mcp = read_json(mcp_path)
    _check_shape(settings_path, settings)
    res = ClaudeInstall(settings_path, mcp_path)
    new = dict(settings)
    if settings.get("hooks"):
        new["hooks"] = without_ours(settings["hooks"])
        if not new["hooks"]:
            del new["hooks"]
    if MCP_NAME in (settings.get("enabledMcpjsonServers") or []):
        new["enabledMcpjsonServers"] = [s for s in settings["enabledMcpjsonServers"] if s != MCP_NAME]
        if not new["enabledMcpjsonServers"]:
            del new["enabledMcpjsonServers"]
    if new != settings:
        _write_json(settings_path, new)
        res.changed.append(str(settings_path))
    servers = mcp.get("mcpServers")
    if isinstance(servers, dict) and _is_our_server(servers.get(MCP_NAME)):
        new_mcp = dict(mcp)
        new_mcp["mcpServers"] = {k: v for k, v in servers.items() if k != MCP_NAME}
        if not new_mcp["mcpServers"]:
            del new_mcp["mcpServers"]
        if not new_mcp and not user:
            mcp_path.unlink()
        else:
            _write_json(mcp_path, new_mcp, private=user)
        res.changed.append(str(mcp_path))
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered."""
    settings_path, mcp_path = locations(root, user, home)
    try:
        settings, mcp = read_json(settings_path), read_json(mcp_path)
    except ClaudeSettingsError as e:
        return {"settings": str(settings_path), "error": e.message, "events": {}, "mcp": False}
    hooks = _dict(settings.get("hooks"))
    events = {}
    for event, _, _ in EVENTS:
        groups = _list(hooks.get(event))
        events[event] = any(_is_ours(h) for g in groups if isinstance(g, dict)
                            for h in (g.get("hooks") or []) if isinstance(g.get("hooks"), list))
    servers = _dict(mcp.get("mcpServers"))
    commands = [h.get("command", "") for groups in hooks.values() if isinstance(groups, list) for g in groups
                if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"] if _is_ours(h)]
    return {"settings": str(settings_path), "events": events, "mcp": MCP_NAME in servers,
            "path_only": bool(commands) and not any(c.startswith(MARKER) for c in commands)}
