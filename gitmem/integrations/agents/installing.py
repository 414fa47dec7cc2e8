"""What every agent's installer shares: the result, the JSON settings files, the handler shim, the MCP entry.

Each ``<agent>_install.py`` module writes its agent's files with these (one owner per job):

* ``InstallResult``: what an install or uninstall did, the same for every agent (``shapes.install_json``);
* ``read_json`` / ``write_json``: a settings file read as a JSON object (never rewritten when it is not one:
  ``SettingsError``), written atomically through a symlink, keeping its mode and its indentation;
  ``write_or_remove``: the same, but a file gitmem's removal left as ``{}`` is deleted (and its folder when
  that is then empty) so an uninstall leaves no trace of what the install created;
* ``shim_command`` / ``marker`` / ``is_marked``: the one-line shell command of a hook handler, which runs
  this installation's hook script by absolute path, else the one on PATH, else nothing (exit 0), and starts
  with a no-op marker (``: gitmem-hook;``) by which gitmem knows its own handlers;
* ``with_ours`` / ``without_ours`` / ``check_hooks_shape``: gitmem's handlers merged into, or removed from,
  the Claude-style hooks layout (``{event: [{"matcher"?, "hooks": [handler]}]}``) that Claude Code, Codex
  and Gemini CLI share;
* ``mcp_entry`` / ``is_our_server`` / ``add_mcp_server`` / ``remove_mcp_server``: the ``gitmem mcp`` server
  in a JSON ``mcpServers`` object (Claude Code's ``.mcp.json`` and ``~/.claude.json``, Gemini CLI's
  settings, Copilot CLI's ``.github/mcp.json`` and ``mcp-config.json``): merged, a foreign server of the
  same name left alone with a note, removed only when it is gitmem's;
* ``install_notes``: the notes every install gives.

Standard library only (and gitmem's stdlib-only ``infra``, ``layout``, ``errors``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import infra, layout
from ...errors import GitmemError

MCP_NAME = "gitmem"
#: First word of the shell command of gitmem's MCP server entry (``mcp_entry``): how it is recognised.
MCP_MARKER = ": gitmem-mcp;"
FIX_HINT = "fix the file, then run again"


class SettingsError(GitmemError):
    """An agent's settings file cannot be read as a JSON object, or part of it has an unexpected shape."""


@dataclass
class InstallResult:
    """What an install or uninstall did for one agent.

    ``files``: role → path of each file the agent's installer owns or merges into (``"hooks"``,
    ``"settings"``, ``"mcp"``, ``"config"``…); ``changed``: the files written or removed; ``notes``: lines
    for the user; ``command``: the hook script the handlers run (absolute path, or the name on PATH);
    ``mcp``: whether the ``gitmem`` MCP server is registered for the agent afterwards.
    """

    agent: str
    files: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = ""
    mcp: bool = False

    def path(self, role: str) -> Path:
        """``files[role]`` as a path."""
        return Path(self.files[role])


# -- JSON files -----------------------------------------------------------------------------------


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file ({} when missing or blank).

    Raises:
        SettingsError: unreadable, not valid JSON, or not an object.
    """
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {e}", "fix or move the file, then run again") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SettingsError(f"{path} is not valid JSON ({e})", FIX_HINT) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} is not a JSON object", FIX_HINT)
    return data


def _indent_of(text: str) -> int | str:
    """The indentation of a pretty-printed JSON text (its first indented line), 2 when there is none."""
    m = re.search(r"\n([ \t]+)\S", text)
    if not m:
        return 2
    ws = m.group(1)
    return len(ws) if set(ws) == {" "} else ws


def write_json(path: Path, data: dict[str, Any], *, private: bool = False) -> None:
    """Write ``data`` atomically to ``path``, or to the file it links to, keeping that file's mode and indentation.

    A new file gets 0600 when ``private`` (``~/.claude.json`` holds credentials), else 0666 minus the umask,
    and an indentation of 2. Non-ASCII is written as is; the text ends with a newline.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode & 0o7777
        indent = _indent_of(target.read_text("utf-8", "replace"))
    except FileNotFoundError:
        mode, indent = (0o600 if private else None), 2
    target.parent.mkdir(parents=True, exist_ok=True)
    infra.atomic_write(target, (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8"),
                       mode=mode)


def remove_file(path: Path, prune: int = 1) -> None:
    """Delete ``path``, then up to ``prune`` of its parent folders while they are empty (gitmem made them)."""
    path.unlink(missing_ok=True)
    d = path.parent
    for _ in range(prune):
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


def write_or_remove(path: Path, new: dict[str, Any], before: dict[str, Any], res: InstallResult, *,
                    keep_empty: bool = False, private: bool = False, prune: int = 1) -> None:
    """Write ``new`` to ``path`` when it differs from ``before`` (the file's content), recording it in ``res``.

    A ``new`` left empty ({}) is deleted instead, with up to ``prune`` empty parent folders, unless
    ``keep_empty`` (a user-level file the agent itself made, such as ``~/.claude/settings.json``).
    """
    if new == before:
        return
    if new or keep_empty:
        write_json(path, new, private=private)
    else:
        remove_file(path, prune)
    res.changed.append(str(path))


# -- the handler shim -----------------------------------------------------------------------------


def installed_script(name: str) -> Path | None:
    """This installation's console script ``name`` (next to the running Python), if it exists."""
    p = Path(sys.executable).parent / name
    return p if p.exists() else None


def marker(hook_command: str) -> str:
    """The first words of every handler command ``shim_command`` writes: how an installer knows its own."""
    return f": {hook_command};"


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


# -- the Claude-style hooks layout ----------------------------------------------------------------

#: One row of an agent's hook table: (event, matcher or None for every tool/source, extra handler fields).
HookRow = tuple[str, str | None, dict[str, Any]]


def check_hooks_shape(path: Path, data: dict[str, Any], *, skip: Iterable[str] = ()) -> None:
    """Refuse (rather than drop or mangle) a settings object whose ``hooks`` is not ``{event: [group]}``.

    ``skip``: keys of ``hooks`` that are not events (Gemini CLI's ``hooks.enabled`` switch).

    Raises:
        SettingsError: ``hooks`` is not an object, or an event's value is not a list.
    """
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f"{path}: \"hooks\" is not an object", FIX_HINT)
    skipped = set(skip)
    for event, groups in (hooks or {}).items():
        if event not in skipped and not isinstance(groups, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list", FIX_HINT)


def without_ours(hooks: dict[str, Any], is_ours: Callable[[Any], bool]) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (``is_ours``) removed, and the groups and events left empty by that.

    A group or event the user left empty stays; a value that is not a list (not an event) stays as it is.
    """
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not is_ours(h)]
                if handlers:
                    kept.append({**g, "hooks": handlers})
                elif not any(is_ours(h) for h in g["hooks"]):
                    kept.append(g)
            else:
                kept.append(g)
        if kept or not groups:  # an event left empty by removing gitmem's handlers goes; the user's [] stays
            out[event] = kept
    return out


def with_ours(hooks: dict[str, Any], events: Iterable[HookRow], handler_command: Callable[[str], str],
              is_ours: Callable[[Any], bool]) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones, ``is_ours``) appended after the user's.

    ``events``: (event, matcher or None, extra handler fields such as the timeout); ``handler_command(event)``:
    the handler's shell command. One group per event: ``{"matcher"?, "hooks": [{"type": "command",
    "command", **extra}]}``.
    """
    out = without_ours(hooks, is_ours)
    for event, matcher, extra in events:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": handler_command(event), **extra}]
        if not isinstance(out.get(event), list):
            out[event] = []
        out[event].append(group)
    return out


def hook_events_on(hooks: Any, events: Iterable[str], is_ours: Callable[[Any], bool]) -> dict[str, bool]:
    """For each of ``events``: whether ``hooks`` (the Claude-style layout) has one of gitmem's handlers there."""
    hooks = hooks if isinstance(hooks, dict) else {}
    return {e: any(is_ours(h) for g in (hooks.get(e) or []) if isinstance(g, dict)
                   and isinstance(g.get("hooks"), list) for h in g["hooks"])
            for e in events}


# -- the MCP server -------------------------------------------------------------------------------


def mcp_entry(*, with_type: bool = True) -> dict[str, Any]:
    """The ``mcpServers`` entry of ``gitmem mcp``: a ``sh -c`` command that runs this installation's script by
    absolute path if it exists, else ``gitmem`` on PATH (same reasoning as ``shim_command``).

    ``with_type``: include ``"type": "stdio"`` (Claude Code and Copilot CLI read it; Gemini CLI has no such field).
    """
    script = installed_script("gitmem")
    parts = [MCP_MARKER]
    if script is not None:
        q = shlex.quote(str(script))
        parts.append(f"if [ -x {q} ]; then exec {q} mcp; fi;")
    parts.append("exec gitmem mcp")
    entry: dict[str, Any] = {"type": "stdio"} if with_type else {}
    return {**entry, "command": "sh", "args": ["-c", " ".join(parts)]}


def is_our_server(entry: Any) -> bool:
    """Whether an ``mcpServers`` entry is gitmem's: ``mcp_entry``'s shell form, or ``gitmem mcp`` by path or name."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    if Path(entry["command"]).name == "gitmem" and args == ["mcp"]:
        return True
    return (entry["command"] == "sh" and isinstance(args, list) and len(args) == 2 and args[0] == "-c"
            and isinstance(args[1], str) and args[1].startswith(MCP_MARKER))


def mcp_servers(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data["mcpServers"]`` ({} when absent).

    Raises:
        SettingsError: ``mcpServers`` is not an object.
    """
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise SettingsError(f"{path}: \"mcpServers\" is not an object", FIX_HINT)
    return dict(servers or {})


def server_registered(data: dict[str, Any]) -> bool:
    """Whether ``data["mcpServers"]["gitmem"]`` is gitmem's server."""
    servers = data.get("mcpServers")
    return isinstance(servers, dict) and is_our_server(servers.get(MCP_NAME))


def add_mcp_server(path: Path, data: dict[str, Any], res: InstallResult, *, entry: dict[str, Any] | None = None,
                   before: dict[str, Any] | None = None, private: bool = False) -> None:
    """Register ``gitmem`` in ``data["mcpServers"]`` and write ``path`` when that changes its content.

    ``data``: the object to write (it may carry the caller's other changes, e.g. Gemini CLI's hooks in the
    same file); ``before``: the file's content as read (default ``data``); ``entry``: the server entry
    (default ``mcp_entry()``). A server named ``gitmem`` that is not gitmem's is left alone, with a note.
    Sets ``res.mcp``; adds ``path`` to ``res.changed`` when written.

    Raises:
        SettingsError: ``mcpServers`` is not an object (nothing is written).
    """
    before = data if before is None else before
    servers = mcp_servers(path, data)
    new = dict(data)
    if MCP_NAME in servers and not is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
    else:
        new["mcpServers"] = {**servers, MCP_NAME: entry if entry is not None else mcp_entry()}
        res.mcp = True
    if new != before:
        write_json(path, new, private=private)
        res.changed.append(str(path))


def without_mcp_server(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without gitmem's ``mcpServers.gitmem`` (and without ``mcpServers`` when that leaves it empty).

    Raises:
        SettingsError: ``mcpServers`` is not an object.
    """
    servers = mcp_servers(path, data)
    if not is_our_server(servers.get(MCP_NAME)):
        return dict(data)
    del servers[MCP_NAME]
    new = dict(data)
    if servers:
        new["mcpServers"] = servers
    else:
        new.pop("mcpServers", None)
    return new


def remove_mcp_server(path: Path, data: dict[str, Any], res: InstallResult, *,
                      before: dict[str, Any] | None = None, keep_empty: bool = False, private: bool = False,
                      prune: int = 1) -> None:
    """Remove gitmem's server from ``data["mcpServers"]`` and write ``path`` when that changes its content
    (``write_or_remove``: a file left as ``{}`` is deleted unless ``keep_empty``).

    Raises:
        SettingsError: ``mcpServers`` is not an object (nothing is written).
    """
    before = data if before is None else before
    write_or_remove(path, without_mcp_server(path, data), before, res, keep_empty=keep_empty, private=private,
                    prune=prune)


# -- detection ------------------------------------------------------------------------------------


def _shown(path: Path, home: Path) -> str:
    """``path`` with ``home`` written ``~``."""
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def detect_by(root: Path | None, home: Path, *, project: Iterable[str] = (), user: Iterable[Path] = (),
              binary: str | None = None) -> str | None:
    """A one-line reason why an agent is used here, from the first of its marks found, or None.

    ``project``: paths relative to the repository ``root`` (a folder or file the agent reads, e.g.
    ``.claude`` or ``CLAUDE.md``); ``user``: the agent's user-level folders (absolute, shown with ``~`` for
    ``home``); ``binary``: the agent's command, looked up on ``$PATH``.
    """
    if root is not None:
        for rel in project:
            if (root / rel).exists():
                return f"{rel} in this repository"
    for p in user:
        if p.exists():
            return f"{_shown(p, home)} on this machine"
    if binary:
        found = shutil.which(binary)
        if found:
            return f"{binary} on PATH ({found})"
    return None
