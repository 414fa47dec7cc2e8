"""``gitmem install claude`` / ``gitmem uninstall claude``: register gitmem with Claude Code.

Writes, merged with what is already there (the user's own hooks and servers are
never dropped or duplicated; gitmem's own entries are replaced, so a second
install changes nothing):

* the hooks, in ``.claude/settings.json`` of the project (``--project``, the
  default) or ``~/.claude/settings.json`` (``--user``): one handler per event,
  all running ``gitmem-hook`` in exec form (``command`` + ``args``, no shell);
* the MCP server ``gitmem`` (``gitmem mcp``): in ``.mcp.json`` at the project
  root, enabled through ``enabledMcpjsonServers`` in the same settings file, or
  for ``--user`` in ``~/.claude.json``.

gitmem's handlers are recognised by their command: a path whose last part is
``gitmem-hook``. ``uninstall`` removes exactly those (and empty groups it
leaves), and the ``gitmem`` MCP server. A settings file that is not valid JSON
is never rewritten (``ClaudeSettingsError``).

Reference: ``../shared/reference/claude-code-hooks.md`` §2.2–2.5.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GitmemError
from ..memfile import write_atomic

HOOK_COMMAND = "gitmem-hook"
MCP_NAME = "gitmem"

#: (event, matcher or None, extra handler fields). Timeouts in seconds; each is a ceiling far above
#: the handler's own time limit (claude_hooks.TIME_LIMITS), never a target.
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


def locations(root: Path | None, user: bool, home: Path | None = None) -> tuple[Path, Path]:
    """(settings file, MCP file) for project ``root`` or the user."""
    home = home or Path(os.path.expanduser("~"))
    if user:
        return home / ".claude" / "settings.json", home / ".claude.json"
    assert root is not None
    return root / ".claude" / "settings.json", root / ".mcp.json"


def hook_command() -> tuple[str, str | None]:
    """The command to register, and a note when it is not the bare name on PATH.

    The bare ``gitmem-hook`` keeps a committed settings file valid for the whole
    team; when PATH does not lead to this installation's script, its absolute
    path is used instead.
    """
    mine = Path(sys.executable).parent / HOOK_COMMAND
    found = shutil.which(HOOK_COMMAND)
    if found and (not mine.exists() or Path(found).resolve() == mine.resolve()):
        return HOOK_COMMAND, None
    if mine.exists():
        return str(mine), (f"{HOOK_COMMAND} is not on PATH: registered {mine} "
                           "(activate the environment gitmem is installed in, then install again for a portable entry)")
    return HOOK_COMMAND, f"{HOOK_COMMAND} was not found; install gitmem so that it is on PATH"


_OUR_EVENTS = {e for e, _, _ in EVENTS}


def _is_ours(handler: Any) -> bool:
    """gitmem's handler: exec form, a command whose file name is exactly ``gitmem-hook``, an event as argument."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    cmd, args = handler.get("command"), handler.get("args")
    return (isinstance(cmd, str) and Path(cmd).name == HOOK_COMMAND and isinstance(args, list)
            and len(args) == 1 and args[0] in _OUR_EVENTS)


def _is_our_server(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("command"), str)
            and Path(entry["command"]).name == "gitmem" and entry.get("args") == ["mcp"])


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
    write_atomic(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode=mode)


def without_ours(hooks: dict[str, Any]) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers removed, and the groups and events left empty by that."""
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not _is_ours(h)]
                if handlers:
                    kept.append({**g, "hooks": handlers})
                elif not any(_is_ours(h) for h in g["hooks"]):
                    kept.append(g)
            else:
                kept.append(g)
        if kept or not groups:  # an event left empty by removing gitmem's handlers goes; the user's [] stays
            out[event] = kept
    return out


def with_ours(hooks: dict[str, Any], command: str) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones) appended after the user's."""
    out = without_ours(hooks)
    for event, matcher, extra in EVENTS:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": command, "args": [event], **extra}]
        out.setdefault(event, [])
        if not isinstance(out[event], list):
            out[event] = []
        out[event].append(group)
    return out


def mcp_entry() -> dict[str, Any]:
    cmd = shutil.which("gitmem") or str(Path(sys.executable).parent / "gitmem")
    portable = shutil.which("gitmem") is not None
    return {"type": "stdio", "command": "gitmem" if portable else cmd, "args": ["mcp"]}


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> ClaudeInstall:
    """Register gitmem's hooks and MCP server; see the module docstring.

    Raises:
        ClaudeSettingsError: a settings file is not valid JSON (nothing is written).
    """
    settings_path, mcp_path = locations(root, user, home)
    settings = read_json(settings_path)
    mcp = read_json(mcp_path)
    _check_shape(settings_path, settings)
    command, note = hook_command()
    res = ClaudeInstall(settings_path, mcp_path, command=command)
    if note:
        res.notes.append(note)
    new_settings = dict(settings)
    new_settings["hooks"] = with_ours(settings.get("hooks") or {}, command)
    if not user:
        enabled = list(settings.get("enabledMcpjsonServers") or [])
        if MCP_NAME not in enabled:
            new_settings["enabledMcpjsonServers"] = enabled + [MCP_NAME]
    if new_settings != settings:
        _write_json(settings_path, new_settings)
        res.changed.append(str(settings_path))
    servers = mcp.get("mcpServers") if isinstance(mcp.get("mcpServers"), dict) else {}
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
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    events = {}
    for event, _, _ in EVENTS:
        groups = hooks.get(event) if isinstance(hooks.get(event), list) else []
        events[event] = any(_is_ours(h) for g in groups if isinstance(g, dict)
                            for h in (g.get("hooks") or []) if isinstance(g.get("hooks"), list))
    servers = mcp.get("mcpServers") if isinstance(mcp.get("mcpServers"), dict) else {}
    return {"settings": str(settings_path), "events": events, "mcp": MCP_NAME in servers}
