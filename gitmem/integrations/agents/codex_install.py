"""``gitmem install codex`` / ``gitmem uninstall codex``: register gitmem with the Codex CLI.

Writes, merged with what is already there (the user's own hooks are never dropped or
duplicated; gitmem's own entries are replaced, so a second install changes nothing), the
hooks in ``<repo>/.codex/hooks.json`` (``--project``, the default) or
``$CODEX_HOME/hooks.json`` (``--user``; ``~/.codex`` without ``CODEX_HOME``): one handler
per event, a short shell command (``handler_command``, ``installing.shim_command``) that runs the
``gitmem-codex-hook`` of the folder the clone's ``bin-dir`` names, else the one on PATH (no machine
path; at session start, the one-line notice when gitmem is missing; ``--user``: this installation's
script by absolute path).

gitmem's handlers are recognised by their command's first word, ``: gitmem-codex-hook;``
(a shell no-op). ``uninstall`` removes exactly those (and the groups and events it leaves
empty); a hooks file gitmem created and left as ``{}`` is deleted, and its ``.codex/`` folder when
that is then empty. A hooks file that is not valid JSON is never rewritten (``SettingsError``, the
same error as for Claude Code's files).

The MCP server: Codex reads ``[mcp_servers.<name>]`` from ``config.toml``: the project's
``.codex/config.toml`` (only in a project the user trusts: ``[projects."<path>"] trust_level =
"trusted"`` in ``$CODEX_HOME/config.toml``, which Codex's first-start prompt writes) and
``$CODEX_HOME/config.toml``. ``install`` writes ``[mcp_servers.gitmem]`` (``command = "sh"``, ``args``:
``installing.mcp_entry``'s shell command) into the first for ``--project``, the second for ``--user``,
with ``tomlkit`` so the user's comments, order and formatting stay as they are; a ``gitmem`` server that
is not ``gitmem mcp`` is left alone (with a note). ``uninstall`` removes only that table (and
``[mcp_servers]`` when it held nothing else), and the file when gitmem created it and nothing is left in it
(``installing.apply``). An inline ``mcp_servers = {...}`` gets the server inline; a layout ``tomlkit``
cannot edit without changing anything else is refused (``SettingsError``, nothing written). A config file that
is not valid TOML is never rewritten (``SettingsError``). Verified with codex-cli 0.169.0
(``codex mcp list`` lists a trusted project's server; tests/test_codex_install.py).

Codex runs no project hook until the user trusts it in ``/hooks``, and says nothing about it
otherwise: ``install`` always notes it.
"""

from __future__ import annotations

import json
import os
import tomllib
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
    is_marked,
    is_our_server,
    json_change,
    marker,
    mcp_entry,
    read_json,
    read_json_file,
    read_text,
    record_file,
    same_content,
    shim_command,
    user_script,
    with_ours,
    without_ours,
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
    # compact: codex-cli 0.169.0 starts the session again after compacting it (its session-start input schema)
    ("SessionStart", "startup|resume|clear|compact", {"timeout": 15}),
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


#: The event whose handler tells the session, without gitmem, that gitmem is missing (``installing.ABSENT_NOTICE``).
START_EVENT = "SessionStart"


def absent_output(event: str = START_EVENT) -> str:
    """What the handler of ``event`` prints when gitmem is missing here: Codex's hookSpecificOutput JSON."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": ABSENT_NOTICE}})


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``; ``script``: a ``--user``
    install's absolute script, None for the project's portable command)."""
    return shim_command(HOOK_COMMAND, event, script, notice=absent_output(event) if event == START_EVENT else None)


def is_ours(handler: Any) -> bool:
    """Whether ``handler`` is gitmem's (its command starts with ``MARKER``)."""
    return is_marked(handler, HOOK_COMMAND)


def _result(hooks_path: Path, config_path: Path) -> InstallResult:
    return InstallResult(NAME, {"hooks": str(hooks_path), "config": str(config_path)}, command=HOOK_COMMAND)


HEADER = f"[mcp_servers.{MCP_NAME}]"


def _read_toml(path: Path) -> tuple[str | None, Any]:
    """``path``'s text (None when missing) and its ``tomlkit`` document (an empty one when missing).

    Raises:
        SettingsError: unreadable, or not valid TOML.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = read_text(path)
    try:
        return text, tomlkit.parse(text or "")
    except (TOMLKitError, ValueError) as e:
        raise SettingsError(f"{path} is not valid TOML ({e})", FIX_HINT) from None


def _toml_data(text: str) -> dict[str, Any] | None:
    """``text`` parsed by the standard library's TOML reader (None when it is not valid TOML)."""
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


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


def _server_entry(user: bool = False) -> dict[str, Any]:
    """``[mcp_servers.gitmem]``: ``installing.mcp_entry``'s command and args (Codex has no ``type`` field);
    ``user``: a ``--user`` install's (this installation's ``gitmem`` by absolute path)."""
    return mcp_entry(with_type=False, script=user_script("gitmem", user))


def mcp_registered(config: Path) -> bool | None:
    """Whether ``config`` (Codex's config.toml) has gitmem's ``[mcp_servers.gitmem]``; None when it cannot be
    read as TOML."""
    try:
        data = tomllib.loads(config.read_text("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and is_our_server(servers.get(MCP_NAME))


def _config_change(path: Path, res: InstallResult, *, uninstall: bool, prune: int = 0,
                   user: bool = False) -> Change | None:
    """The change of Codex's ``config.toml`` at ``path``: ``[mcp_servers.gitmem]`` added or removed (see the
    module docstring), None when nothing changes.

    Added: without an ``mcp_servers`` table the new table is appended after one blank line, as text (so
    that removing it gives back the same bytes); into an inline ``mcp_servers = {...}`` as an inline table;
    else ``tomlkit`` puts it beside the user's servers. Removed: the file's last table as text, with the
    blank line the install put before it; one amid others through ``tomlkit``. Every new text is read back
    with ``tomllib`` and must hold exactly the user's content plus (or minus) gitmem's server (but for
    empty tables: ``installing.same_content``).

    Raises:
        SettingsError: the file is not valid TOML, its ``mcp_servers`` is not a table, or gitmem's server
            cannot be added or removed without changing anything else.
    """
    from tomlkit.exceptions import TOMLKitError

    text, doc = _read_toml(path)
    old = _toml_data(text or "") or {}
    servers = _servers_of(path, doc)
    ours = _ours_in(servers)
    if uninstall:
        if not ours:
            return None
        expected = {k: v for k, v in old.items() if k != "mcp_servers"}
        rest = {k: v for k, v in old["mcp_servers"].items() if k != MCP_NAME}
        if rest:
            expected["mcp_servers"] = rest
    else:
        if servers is not None and MCP_NAME in servers and not ours:
            res.notes.append(f"{path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                             "left as it is")
            return None
        res.mcp = True
        entry = _server_entry(user)
        if ours and servers[MCP_NAME].unwrap() == entry:
            return None
        expected = {**old, "mcp_servers": {**old.get("mcp_servers", {}), MCP_NAME: entry}}
    try:
        new = (_without_server(text or "", doc, servers) if uninstall
               else _with_server(text or "", doc, servers, _server_entry(user)))
    except (TOMLKitError, ValueError, TypeError, KeyError) as e:  # tomlkit refuses some layouts: say so
        new, why = None, f"{type(e).__name__}: {e}"
    else:
        why = "the result would read differently"
    if new is None or not same_content(_toml_data(new), expected):
        verb = "remove gitmem's server from" if uninstall else "add gitmem's server to"
        hint = (f"remove the [mcp_servers.{MCP_NAME}] table yourself" if uninstall else
                f"add it yourself: [mcp_servers.{MCP_NAME}] with {json.dumps(_server_entry(user))}")
        raise SettingsError(f"{path}: gitmem cannot {verb} mcp_servers as it is laid out ({why})", hint)
    return Change(path, text, new, had_ours=ours, empty=not new.strip(), prune=prune,
                  same=lambda original: same_content(_toml_data(original), expected))


def _with_server(text: str, doc: Any, servers: Any, entry: dict[str, Any]) -> str:
    """``text`` (parsed: ``doc``, its ``mcp_servers``: ``servers``) with gitmem's server ``entry``."""
    import tomlkit
    from tomlkit.items import InlineTable

    if servers is None:
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return text + sep + tomlkit.dumps({"mcp_servers": {MCP_NAME: entry}})
    if isinstance(servers, InlineTable):
        inline = tomlkit.inline_table()
        inline.update(entry)
        servers[MCP_NAME] = inline
        return str(doc.as_string())
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = value
    table.add(tomlkit.nl())  # a blank line before whatever table comes next
    servers[MCP_NAME] = table
    return str(doc.as_string())


def _without_server(text: str, doc: Any, servers: Any) -> str:
    """``text`` (parsed: ``doc``, its ``mcp_servers``: ``servers``) without gitmem's server (and without
    ``mcp_servers`` when it held nothing else)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    rest = lines[starts[-1] + 1:] if len(starts) == 1 else ["["]
    if not any(line.lstrip().startswith("[") for line in rest):
        new = "".join(lines[:starts[0]])  # the last table of the file, as _with_server appended it
        return new[:-1] if new.endswith("\n\n") else new
    del servers[MCP_NAME]
    if not servers:
        del doc["mcp_servers"]
    return str(doc.as_string())


def _hooks_cleaned(data: dict[str, Any]) -> dict[str, Any]:
    """The hooks file's object without gitmem's handlers (and what they leave empty)."""
    if not isinstance(data.get("hooks"), dict) or not data["hooks"]:
        return dict(data)
    new = {**data, "hooks": without_ours(data["hooks"], is_ours)}
    if not new["hooks"]:
        del new["hooks"]
    return new


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, both files read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: the hooks file is not valid JSON, or the config file not valid TOML or laid out so that
            gitmem cannot add its server.
    """
    hooks_path, config_path = locations(root, user, home)
    text, data = read_json_file(hooks_path)
    check_hooks_shape(hooks_path, data)
    script = user_script(HOOK_COMMAND, user)
    res = _result(hooks_path, config_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    new = dict(data)
    new["hooks"] = with_ours(data.get("hooks") or {}, EVENTS, lambda e: handler_command(e, script), is_ours)
    changes = [json_change(hooks_path, text, data, new, had_ours=not same_content(data, _hooks_cleaned(data))),
               _config_change(config_path, res, uninstall=False, user=user)]
    res.notes.append(TRUST_NOTE)
    if res.mcp and not user:
        res.notes.append(MCP_TRUST_NOTE)
    return Plan(res, [c for c in changes if c], False, record_file(None if user else root))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Register gitmem's Codex hooks and MCP server; see the module docstring.

    Raises:
        SettingsError: see ``plan_install`` (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` writes or removes, both files read and checked first.

    Raises:
        SettingsError: the hooks file is not valid JSON, or the config file not valid TOML or laid out so that
            gitmem cannot remove its server.
    """
    hooks_path, config_path = locations(root, user, home)
    text, data = read_json_file(hooks_path)
    check_hooks_shape(hooks_path, data)
    res = _result(hooks_path, config_path)
    prune = 0 if user else 1
    new = _hooks_cleaned(data)
    changes = [_config_change(config_path, res, uninstall=True, prune=prune),
               json_change(hooks_path, text, data, new, empty=not new, prune=prune)]
    return Plan(res, [c for c in changes if c], True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Codex hooks and MCP server, leaving everything else as it is (``installing.apply``: a
    file gitmem changed gets back its bytes when nothing else changed in it; a file gitmem created is
    deleted when nothing else is left in it, and the project's ``.codex/`` when that is then empty).

    Raises:
        SettingsError: see ``plan_uninstall`` (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


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


def marks(home: Path) -> Marks:
    """What says Codex is used here: its project config (``.codex/config.toml`` or ``.codex/hooks.json``) or
    ``codex`` on PATH (``$CODEX_HOME`` or ``~/.codex`` alone does not count; nor does ``AGENTS.md``, which many
    agents read)."""
    codex_dir = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    return Marks(project=(".codex/config.toml", ".codex/hooks.json"), binaries=("codex",), folders=(codex_dir,))


def detect(root: Path | None, home: Path) -> str | None:
    """Why Codex is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
