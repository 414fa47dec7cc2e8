"""``gitmem install claude`` / ``gitmem uninstall claude``: register gitmem with Claude Code.

Writes, merged with what is already there (the user's own hooks and servers are
never dropped or duplicated; gitmem's own entries are replaced, so a second
install changes nothing):

* the hooks, in ``.claude/settings.json`` of the project (``--project``, the
  default) or ``~/.claude/settings.json`` (``--user``): one handler per event, a
  short shell command (``handler_command``, ``installing.shim_command``) that runs
  the ``gitmem-hook`` of the folder the clone's ``bin-dir`` names, else the one on
  PATH — no machine path: every teammate's install writes the same bytes, the hooks
  work whatever PATH Claude Code starts with, and a teammate without gitmem gets one
  line at session start (``installing.ABSENT_NOTICE``) and nothing else (``--user``:
  this installation's script by absolute path);
* the MCP server ``gitmem`` (``gitmem mcp``, same fallback): in ``.mcp.json`` at
  the project root, enabled through ``enabledMcpjsonServers`` in the same
  settings file, or for ``--user`` in ``~/.claude.json``.

gitmem's handlers are recognised by their command's first word, ``: gitmem-hook;``
(a shell no-op). ``uninstall`` removes exactly those (and empty groups it
leaves), and the ``gitmem`` MCP server; a file gitmem changed gets back the bytes
it had when nothing else changed in it, and a file gitmem created is deleted when
nothing else is left in it (and ``.claude/`` when then empty; ``installing.apply``
and its install record). A settings file that is not valid JSON is
never rewritten (``installing.SettingsError``). The shared parts (JSON files,
the handler shim, the hooks layout, ``mcpServers``) are ``installing``'s.

Reference: ``../shared/reference/claude-code-hooks.md`` §2.2–2.5.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .installing import (
    ABSENT_NOTICE,
    FIX_HINT,
    MCP_NAME,
    Change,
    InstallResult,
    Marks,
    Plan,
    SettingsError,
    apply,
    check_hooks_shape,
    detect_by,
    hook_events_on,
    install_notes,
    json_change,
    marker,
    mcp_entry,
    mcp_file_change,
    read_json,
    read_json_file,
    record_file,
    same_content,
    server_registered,
    shim_command,
    user_script,
    vscode_registered,
    with_ours,
    without_ours,
)

NAME = "claude"
USER_SCOPE = True
#: The ``gitmem install claude`` help text.
HELP = """Register gitmem's Claude Code hooks and MCP server (merged with what is there; idempotent).

\b
Hooks: SessionStart, UserPromptSubmit, PreToolUse (Read|Edit|Write|Bash) and
PostToolUseFailure inject memories; PostToolUse, Stop and SessionEnd capture the
session for consolidation.
--project (default): .claude/settings.json and .mcp.json; --user:
~/.claude/settings.json and ~/.claude.json."""
HOOK_COMMAND = "gitmem-hook"

#: (event, matcher or None, extra handler fields). Timeouts in seconds; each is a ceiling far above
#: the handler's own time limit (agents.core.TIME_LIMITS), never a target.
EVENTS: tuple[tuple[str, str | None, dict[str, Any]], ...] = (
    ("SessionStart", "startup|resume|clear|compact", {"timeout": 15}),
    ("UserPromptSubmit", None, {"timeout": 10}),
    ("PreToolUse", "Read|Edit|Write|NotebookEdit|Bash", {"timeout": 5}),
    ("PostToolUse", "*", {"timeout": 10, "async": True}),
    # not async: Claude Code reads its additionalContext (the memories matching the failure) only when it waits
    ("PostToolUseFailure", "*", {"timeout": 10}),
    ("Stop", None, {"timeout": 10, "async": True}),
    ("SessionEnd", None, {}),
)

#: First word of gitmem's shell-form handler: a no-op that marks it as gitmem's.
MARKER = marker(HOOK_COMMAND)


def locations(root: Path | None, user: bool, home: Path | None = None) -> tuple[Path, Path]:
    """(settings file, MCP file) for project ``root`` or the user (``home``: the home folder, ``~`` by default)."""
    home = home or Path(os.path.expanduser("~"))
    if user:
        return home / ".claude" / "settings.json", home / ".claude.json"
    assert root is not None
    return root / ".claude" / "settings.json", root / ".mcp.json"


#: The event whose handler tells the session, without gitmem, that gitmem is missing (``installing.ABSENT_NOTICE``).
START_EVENT = "SessionStart"


def absent_output(event: str = START_EVENT) -> str:
    """What the handler of ``event`` prints when gitmem is missing here: Claude Code's hookSpecificOutput JSON."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": ABSENT_NOTICE}})


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's Claude Code handler for ``event`` (``installing.shim_command``; ``script``:
    a ``--user`` install's absolute script, None for the project's portable command)."""
    return shim_command(HOOK_COMMAND, event, script, notice=absent_output(event) if event == START_EVENT else None)


_OUR_EVENTS = {e for e, _, _ in EVENTS}


def is_ours(handler: Any) -> bool:
    """gitmem's handler: the shell form starting with ``MARKER``, or the exec form of earlier versions
    (a command whose file name is exactly ``gitmem-hook`` with one event as argument)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    cmd, args = handler.get("command"), handler.get("args")
    if isinstance(cmd, str) and cmd.startswith(MARKER):
        return True
    return (isinstance(cmd, str) and Path(cmd).name == HOOK_COMMAND and isinstance(args, list)
            and len(args) == 1 and args[0] in _OUR_EVENTS)


def _check_shape(path: Path, settings: dict[str, Any]) -> None:
    """Refuse (rather than drop or mangle) settings whose ``hooks`` or server list has an unexpected shape."""
    check_hooks_shape(path, settings)
    enabled = settings.get("enabledMcpjsonServers")
    if enabled is not None and not isinstance(enabled, list):
        raise SettingsError(f"{path}: \"enabledMcpjsonServers\" is not a list", FIX_HINT)


def _result(settings_path: Path, mcp_path: Path) -> InstallResult:
    return InstallResult(NAME, {"settings": str(settings_path), "mcp_file": str(mcp_path)}, command=HOOK_COMMAND)


def _cleaned(settings: dict[str, Any], *, hooks: bool = True) -> dict[str, Any]:
    """``settings`` without gitmem's handlers (``hooks``) and its entry of ``enabledMcpjsonServers`` (and what they
    leave empty)."""
    new = dict(settings)
    if hooks and isinstance(settings.get("hooks"), dict) and settings["hooks"]:
        new["hooks"] = without_ours(settings["hooks"], is_ours)
        if not new["hooks"]:
            del new["hooks"]
    if MCP_NAME in (settings.get("enabledMcpjsonServers") or []):
        new["enabledMcpjsonServers"] = [s for s in settings["enabledMcpjsonServers"] if s != MCP_NAME]
        if not new["enabledMcpjsonServers"]:
            del new["enabledMcpjsonServers"]
    return new


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, every file read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: a settings file is not valid JSON, or has an unexpected shape.
    """
    settings_path, mcp_path = locations(root, user, home)
    text, settings = read_json_file(settings_path)
    _check_shape(settings_path, settings)
    script = user_script(HOOK_COMMAND, user)
    res = _result(settings_path, mcp_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new_settings = dict(settings)
    new_settings["hooks"] = with_ours(settings.get("hooks") or {}, EVENTS,
                                      lambda e: handler_command(e, script), is_ours)
    if not user:
        enabled = list(settings.get("enabledMcpjsonServers") or [])
        if MCP_NAME not in enabled:
            new_settings["enabledMcpjsonServers"] = enabled + [MCP_NAME]
    had_ours = not same_content(settings, _cleaned(settings))
    changes = [json_change(settings_path, text, settings, new_settings, had_ours=had_ours),
               mcp_file_change(mcp_path, res, uninstall=False, private=user,
                               entry=mcp_entry(script=user_script("gitmem", user)))]
    return Plan(res, [c for c in changes if c], False, record_file(None if user else root))


def hooks_change(root: Path, *, uninstall: bool = False) -> Change | None:
    """The change of the project's ``.claude/settings.json`` for gitmem's hooks alone (no MCP server, no
    ``enabledMcpjsonServers``): added, or removed (``uninstall``); None when nothing changes. What ``gitmem install
    vscode`` writes: VS Code's agent mode runs this file's hooks (``vscode``), and ``install`` writes the same
    handlers here, so the two never disagree about this file's hooks.

    Raises:
        SettingsError: the file is not valid JSON, or its ``hooks`` has an unexpected shape.
    """
    settings_path, _ = locations(root, False)
    text, settings = read_json_file(settings_path)
    _check_shape(settings_path, settings)
    new = dict(settings)
    if uninstall:
        if isinstance(settings.get("hooks"), dict) and settings["hooks"]:
            new["hooks"] = without_ours(settings["hooks"], is_ours)
            if not new["hooks"]:
                del new["hooks"]
        return json_change(settings_path, text, settings, new, empty=not new, prune=1)
    new["hooks"] = with_ours(settings.get("hooks") or {}, EVENTS, handler_command, is_ours)
    had_ours = any(hook_events_on(settings.get("hooks"), _OUR_EVENTS, is_ours).values())
    return json_change(settings_path, text, settings, new, had_ours=had_ours)


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's hooks and MCP server; see the module docstring.

    Raises:
        SettingsError: a settings file is not valid JSON, or has an unexpected shape (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None,
                   shared: bool = True) -> Plan:
    """What ``uninstall`` writes or removes, every file read and checked first. The hooks stay while VS Code uses
    them (``installing.vscode_registered``) unless ``shared`` is False (VS Code is uninstalled in the same run).

    Raises:
        SettingsError: a settings file is not valid JSON, or has an unexpected shape.
    """
    settings_path, mcp_path = locations(root, user, home)
    text, settings = read_json_file(settings_path)
    _check_shape(settings_path, settings)
    res = _result(settings_path, mcp_path)
    keep = shared and not user and vscode_registered(root)  # VS Code runs these very hooks (`install vscode`)
    if keep:
        res.notes.append(f"{settings_path}: gitmem's hooks kept (VS Code's too: `gitmem uninstall vscode` "
                         "removes them)")
    new = _cleaned(settings, hooks=not keep)
    changes = [json_change(settings_path, text, settings, new, empty=not new, prune=0 if user else 1),
               mcp_file_change(mcp_path, res, uninstall=True, private=user)]
    return Plan(res, [c for c in changes if c], True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's hooks and MCP server, leaving everything else as it is: a file gitmem changed gets
    back the bytes it had when nothing else changed in it; one gitmem created is deleted when nothing else
    is left in it (and the project's ``.claude/`` when that is then empty).

    Raises:
        SettingsError: a settings file is not valid JSON, or has an unexpected shape (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"settings", "events": {event: bool}, "mcp", "path_only"}``: which events have gitmem's handler,
    whether the MCP server is registered, and whether the handlers are an earlier version's PATH-only form
    (``{"settings", "error", "events": {}, "mcp": false}`` when a file cannot be read)."""
    settings_path, mcp_path = locations(root, user, home)
    try:
        settings, mcp = read_json(settings_path), read_json(mcp_path)
    except SettingsError as e:
        return {"settings": str(settings_path), "error": e.message, "events": {}, "mcp": False}
    hooks = settings.get("hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    events = hook_events_on(hooks, (e for e, _, _ in EVENTS), is_ours)
    commands = [h.get("command", "") for groups in hooks.values() if isinstance(groups, list) for g in groups
                if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"] if is_ours(h)]
    return {"settings": str(settings_path), "events": events, "mcp": server_registered(mcp),
            "path_only": bool(commands) and not any(c.startswith(MARKER) for c in commands)}


def marks(home: Path) -> Marks:
    """What says Claude Code is used here: ``.claude/`` or ``CLAUDE.md`` in the repository, or ``claude`` on PATH
    (``~/.claude`` alone does not count)."""
    return Marks(project=(".claude", "CLAUDE.md"), binaries=("claude",), folders=(home / ".claude",))


def detect(root: Path | None, home: Path) -> str | None:
    """Why Claude Code is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
