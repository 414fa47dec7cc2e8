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

The MCP server: Codex reads ``[mcp_servers.<name>]`` from ``config.toml``: the project's
``.codex/config.toml`` (only in a project the user trusts: ``[projects."<path>"] trust_level =
"trusted"`` in ``$CODEX_HOME/config.toml``, which Codex's first-start prompt writes) and
``$CODEX_HOME/config.toml``. ``install`` writes ``[mcp_servers.gitmem]`` (``command = "sh"``, ``args``:
``installing.mcp_entry``'s shell command) into the first for ``--project``, the second for ``--user``,
with ``tomlkit`` so the user's comments, order and formatting stay as they are; a ``gitmem`` server that
is not ``gitmem mcp`` is left alone (with a note). ``uninstall`` removes only that table (and
``[mcp_servers]`` when it held nothing else), and the file when nothing is left in it. A config file that
is not valid TOML is never rewritten (``SettingsError``). Verified with codex-cli 0.169.0
(``codex mcp list`` lists a trusted project's server; tests/test_codex_install.py).

Codex runs no project hook until the user trusts it in ``/hooks``, and says nothing about it
otherwise: ``install`` always notes it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from ... import infra
from .installing import (
    FIX_HINT,
    MCP_NAME,
    InstallResult,
    SettingsError,
    check_hooks_shape,
    detect_by,
    hook_events_on,
    install_notes,
    installed_script,
    is_marked,
    is_our_server,
    marker,
    mcp_entry,
    read_json,
    remove_file,
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
MCP_TRUST_NOTE = ("Codex reads the MCP server in .codex/config.toml only in a trusted project: answer yes when "
                  "`codex` asks whether to trust this folder")


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


HEADER = f"[mcp_servers.{MCP_NAME}]"


def _read_toml(path: Path) -> tuple[str, Any]:
    """``path``'s text and its ``tomlkit`` document (``""`` and an empty one when missing).

    Raises:
        SettingsError: unreadable, or not valid TOML.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {e}", "fix or move the file, then run again") from None
    try:
        return text, tomlkit.parse(text)
    except TOMLKitError as e:
        raise SettingsError(f"{path} is not valid TOML ({e})", FIX_HINT) from None


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically to ``path`` (or the file it links to), keeping that file's mode."""
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    infra.atomic_write(target, text.encode("utf-8"), mode=mode)


def _servers_of(path: Path, doc: Any) -> Any:
    """``doc["mcp_servers"]`` (None when absent).

    Raises:
        SettingsError: ``mcp_servers`` is not a table.
    """
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise SettingsError(f"{path}: mcp_servers is not a table", FIX_HINT)
    return servers


def _ours_in(servers: Any) -> bool:
    """Whether ``servers`` (``mcp_servers``, or None) holds gitmem's server."""
    return servers is not None and MCP_NAME in servers and is_our_server(servers[MCP_NAME].unwrap())


def _server_entry() -> dict[str, Any]:
    """``[mcp_servers.gitmem]``: ``installing.mcp_entry``'s command and args (Codex has no ``type`` field)."""
    return mcp_entry(with_type=False)


def mcp_registered(config: Path) -> bool | None:
    """Whether ``config`` (Codex's config.toml) has gitmem's ``[mcp_servers.gitmem]``; None when it cannot be
    read as TOML."""
    try:
        data = tomllib.loads(config.read_text("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and is_our_server(servers.get(MCP_NAME))


def add_mcp_server(path: Path, res: InstallResult) -> None:
    """Write ``[mcp_servers.gitmem]`` into Codex's ``config.toml`` at ``path`` (see the module docstring).

    Without an ``mcp_servers`` table the new table is appended after one blank line, as text (so that
    ``remove_mcp_server`` gives back the same bytes); else ``tomlkit`` puts it beside the user's servers.

    Raises:
        SettingsError: the file is not valid TOML, or its ``mcp_servers`` is not a table (nothing is written).
    """
    import tomlkit

    text, doc = _read_toml(path)
    servers = _servers_of(path, doc)
    if servers is not None and MCP_NAME in servers and not _ours_in(servers):
        res.notes.append(f"{path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
        return
    res.mcp = True
    entry = _server_entry()
    if servers is not None and MCP_NAME in servers and servers[MCP_NAME].unwrap() == entry:
        return
    if servers is None:
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        new = text + sep + tomlkit.dumps({"mcp_servers": {MCP_NAME: entry}})
    else:
        table = tomlkit.table()
        for key, value in entry.items():
            table[key] = value
        table.add(tomlkit.nl())  # a blank line before whatever table comes next
        servers[MCP_NAME] = table
        new = doc.as_string()
    _write_text(path, new)
    res.changed.append(str(path))


def remove_mcp_server(path: Path, res: InstallResult, *, prune: int = 1) -> None:
    """Remove gitmem's ``[mcp_servers.gitmem]`` from Codex's ``config.toml`` at ``path`` (and ``[mcp_servers]``
    when it holds nothing else; the file, and up to ``prune`` empty folders, when nothing is left).

    The file's last table goes as text, with the blank line ``add_mcp_server`` put before it; one amid others
    through ``tomlkit``.

    Raises:
        SettingsError: the file is not valid TOML, or its ``mcp_servers`` is not a table (nothing is written).
    """
    text, doc = _read_toml(path)
    servers = _servers_of(path, doc)
    if not _ours_in(servers):
        return
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    rest = lines[starts[-1] + 1:] if len(starts) == 1 else ["["]
    if not any(line.lstrip().startswith("[") for line in rest):
        new = "".join(lines[:starts[0]])  # the last table of the file, as add_mcp_server appended it
        if new.endswith("\n\n"):
            new = new[:-1]
    else:
        del servers[MCP_NAME]
        if not servers:
            del doc["mcp_servers"]
        new = doc.as_string()
    if new.strip():
        _write_text(path, new)
    else:
        remove_file(path, prune)
    res.changed.append(str(path))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's Codex hooks and MCP server; see the module docstring.

    Raises:
        SettingsError: the hooks file is not valid JSON, or the config file not valid TOML (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    check_hooks_shape(hooks_path, data)
    _servers_of(config_path, _read_toml(config_path)[1])  # refused before anything is written
    script = installed_script(HOOK_COMMAND)
    res = _result(hooks_path, config_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new = dict(data)
    new["hooks"] = with_ours(data.get("hooks") or {}, EVENTS, lambda e: handler_command(e, script), is_ours)
    write_or_remove(hooks_path, new, data, res)
    add_mcp_server(config_path, res)
    res.notes.append(TRUST_NOTE)
    if res.mcp and not user:
        res.notes.append(MCP_TRUST_NOTE)
    return res


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Codex hooks and MCP server, leaving everything else as it is (a file left empty is
    deleted, and the project's ``.codex/`` when that is then empty).

    Raises:
        SettingsError: the hooks file is not valid JSON, or the config file not valid TOML (nothing is written).
    """
    hooks_path, config_path = locations(root, user, home)
    data = read_json(hooks_path)
    check_hooks_shape(hooks_path, data)
    _servers_of(config_path, _read_toml(config_path)[1])
    res = _result(hooks_path, config_path)
    prune = 0 if user else 1
    remove_mcp_server(config_path, res, prune=prune)
    if not data.get("hooks"):
        return res
    new = dict(data)
    new["hooks"] = without_ours(data["hooks"], is_ours)
    if not new["hooks"]:
        del new["hooks"]
    write_or_remove(hooks_path, new, data, res, prune=prune)
    return res


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"hooks", "events": {event: bool}, "mcp"}``: which events have gitmem's handler, and whether gitmem's
    MCP server is in the config file (plus ``"error"`` when the hooks file cannot be read)."""
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
