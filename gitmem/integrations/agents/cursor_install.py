"""``gitmem install cursor`` / ``gitmem uninstall cursor``: register gitmem with Cursor's agent.

Writes, merged with what is already there (the user's own hooks and MCP servers are never dropped
or duplicated; gitmem's own entries are replaced, so a second install changes nothing), into the
project's ``<repo>/.cursor/`` (the default) or the user's ``~/.cursor/`` (``--user``):

* ``hooks.json`` (``{"version": 1, "hooks": {<event>: [{"command": ...}]}}``, Cursor 2.4+; flat
  handler entries, no matcher groups): one handler per event of ``EVENTS``, a short shell command
  (``installing.shim_command``) that runs the ``gitmem-cursor-hook EVENT`` of the folder the clone's
  ``bin-dir`` names, else the one on PATH (no machine path; at session start, the one-line notice
  when gitmem is missing; ``--user``: this installation's script by absolute path). No ``timeout`` (Cursor's
  default, 60 s, is far
  above the handler's own limit, ``agents.core.TIME_LIMITS``) and no ``failClosed`` (off: a hook
  that fails never blocks). No ``beforeReadFile`` or ``preToolUse`` hook: they only allow or deny
  (see ``cursor``);
* ``mcp.json``: ``mcpServers.gitmem``, ``gitmem mcp`` (``installing.mcp_entry``).

gitmem's handlers are recognised by their command's first word, ``: gitmem-cursor-hook;`` (a shell
no-op, ``installing.marker``); its MCP server by ``installing.is_our_server``. ``uninstall`` removes
exactly those (and the events they leave empty); a file gets back the bytes it had when nothing else
changed in it, and one gitmem created is deleted when it is left with nothing but ``version`` (hooks)
or as ``{}`` (MCP), with the project's ``.cursor/`` folder when that is then empty
(``installing.apply``). A file that
is not valid JSON, or whose ``hooks`` / ``mcpServers`` is not an object, is never rewritten
(``installing.SettingsError``).

Cursor also runs ``.claude/settings.json``'s hooks: with ``gitmem install claude`` done too, the
Claude Code hooks step aside under Cursor (``cursor.cursor_hooks_installed``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .cursor import HOOK_COMMAND
from .installing import (
    ABSENT_NOTICE,
    FIX_HINT,
    InstallResult,
    Marks,
    Plan,
    SettingsError,
    apply,
    detect_by,
    install_notes,
    is_marked,
    json_change,
    mcp_entry,
    mcp_file_change,
    mcp_servers,
    read_json,
    read_text,
    record_file,
    same_content,
    server_registered,
    shim_command,
    user_script,
)

NAME = "cursor"
USER_SCOPE = True
#: The ``gitmem install cursor`` help text.
HELP = """Register gitmem's Cursor hooks and MCP server in this repository's .cursor/ (--user: ~/.cursor/).

\b
Hooks: .cursor/hooks.json, merged with yours. sessionStart and postToolUse
inject memories (a read, edited or shell-read file's after the tool's output;
the prompt's with the turn's first tool call: Cursor takes no context before a
read or at a prompt); afterFileEdit, afterAgentResponse, stop and sessionEnd
capture the session for consolidation. MCP server: `gitmem` in .cursor/mcp.json.
With `gitmem install claude` too, Cursor (which also runs .claude/settings.json's
hooks) gets gitmem once."""
HOOKS_VERSION = 1
#: Cursor's events gitmem handles (``cursor``'s table), in the order they are written.
EVENTS: tuple[str, ...] = ("sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure",
                           "afterFileEdit", "afterAgentResponse", "stop", "sessionEnd", "preCompact")
RELOAD_NOTE = "Cursor reads hooks.json when it starts: restart Cursor (or open a new agent session)"


def locations(root: Path | None, user: bool = False, home: Path | None = None) -> tuple[Path, Path]:
    """(``hooks.json``, ``mcp.json``) of project ``root`` or of the user (``home``: ``~`` by default)."""
    if user:
        base = (home or Path(os.path.expanduser("~"))) / ".cursor"
    else:
        assert root is not None
        base = root / ".cursor"
    return base / "hooks.json", base / "mcp.json"


#: The event whose handler tells the session, without gitmem, that gitmem is missing (``installing.ABSENT_NOTICE``).
START_EVENT = "sessionStart"


def absent_output() -> str:
    """What the session-start handler prints when gitmem is missing here: the agent's JSON around the notice."""
    return json.dumps({"additional_context": ABSENT_NOTICE})


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``; ``script``: a ``--user``
    install's absolute script, None for the project's portable command)."""
    return shim_command(HOOK_COMMAND, event, script, notice=absent_output() if event == START_EVENT else None)


def _is_ours(handler: Any) -> bool:
    return is_marked(handler, HOOK_COMMAND)


def _refuse(path: Path, what: str) -> SettingsError:
    return SettingsError(f"{path}: {what}", FIX_HINT)


def _read(hooks_path: Path, mcp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both files, checked; raises ``SettingsError`` before anything is written."""
    hooks_doc, mcp_doc = read_json(hooks_path), read_json(mcp_path)
    hooks = hooks_doc.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise _refuse(hooks_path, "\"hooks\" is not an object")
    for event, handlers in (hooks or {}).items():
        if not isinstance(handlers, list):
            raise _refuse(hooks_path, f"hooks.{event} is not a list")
    mcp_servers(mcp_path, mcp_doc)
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


def _result(hooks_path: Path, mcp_path: Path) -> InstallResult:
    return InstallResult(NAME, {"hooks": str(hooks_path), "mcp_file": str(mcp_path)}, command=HOOK_COMMAND)


def _cleaned(hooks_doc: dict[str, Any]) -> dict[str, Any]:
    """``hooks.json``'s object without gitmem's handlers (and the ``hooks`` they leave empty)."""
    new = dict(hooks_doc)
    if isinstance(hooks_doc.get("hooks"), dict):
        new["hooks"] = without_ours(hooks_doc["hooks"])
        if not new["hooks"]:
            del new["hooks"]
    return new


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, both files read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape.
    """
    hooks_path, mcp_path = locations(root, user, home)
    hooks_text = read_text(hooks_path)
    hooks_doc, _ = _read(hooks_path, mcp_path)
    script = user_script(HOOK_COMMAND, user)
    res = _result(hooks_path, mcp_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, None if user else root))
    new = {"version": HOOKS_VERSION, **hooks_doc, "hooks": with_ours(hooks_doc.get("hooks") or {}, script)}
    had_ours = not same_content(hooks_doc, _cleaned(hooks_doc))
    changes = [c for c in (json_change(hooks_path, hooks_text, hooks_doc, new, had_ours=had_ours),
                           mcp_file_change(mcp_path, res, uninstall=False,
                                           entry=mcp_entry(script=user_script("gitmem", user)))) if c]
    if changes:
        res.notes.append(RELOAD_NOTE)
    return Plan(res, changes, False, record_file(None if user else root))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's Cursor hooks and MCP server; see the module docstring.

    Raises:
        SettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape (nothing
            is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` writes or removes, both files read and checked first.

    Raises:
        SettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape.
    """
    hooks_path, mcp_path = locations(root, user, home)
    hooks_text = read_text(hooks_path)
    hooks_doc, _ = _read(hooks_path, mcp_path)
    res = _result(hooks_path, mcp_path)
    prune = 0 if user else 1  # the project's .cursor/ goes when emptied; ~/.cursor/ is Cursor's own
    new = _cleaned(hooks_doc)
    empty = not new or new == {"version": HOOKS_VERSION}  # nothing but what the install put there
    changes = [json_change(hooks_path, hooks_text, hooks_doc, new, empty=empty, prune=prune,
                           scaffold={"version": HOOKS_VERSION}),
               mcp_file_change(mcp_path, res, uninstall=True, prune=prune)]
    return Plan(res, [c for c in changes if c], True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Cursor hooks and MCP server, leaving everything else as it is (``installing.apply``: a
    file's bytes back when nothing else changed in it; a file gitmem created deleted when nothing else is
    left in it, and the project's ``.cursor/`` folder when then empty).

    Raises:
        SettingsError: ``hooks.json`` or ``mcp.json`` is not valid JSON or has an unexpected shape (nothing
            is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """Which events have gitmem's handler, and whether the MCP server is registered (``error`` when a file
    cannot be read)."""
    hooks_path, mcp_path = locations(root, user, home)
    out: dict[str, Any] = {"hooks": str(hooks_path), "mcp_file": str(mcp_path), "events": {}, "mcp": False}
    try:
        hooks_doc, mcp_doc = _read(hooks_path, mcp_path)
    except SettingsError as e:
        return {**out, "error": e.message}
    hooks = hooks_doc.get("hooks") or {}
    out["events"] = {event: any(_is_ours(h) for h in hooks.get(event) or []) for event in EVENTS}
    out["mcp"] = server_registered(mcp_doc)
    return out


def marks(home: Path) -> Marks:
    """What says Cursor is used here: ``.cursor/`` in the repository, or ``cursor-agent`` or ``cursor`` on PATH
    (``~/.cursor`` alone does not count)."""
    return Marks(project=(".cursor",), binaries=("cursor-agent", "cursor"), folders=(home / ".cursor",))


def detect(root: Path | None, home: Path) -> str | None:
    """Why Cursor is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
