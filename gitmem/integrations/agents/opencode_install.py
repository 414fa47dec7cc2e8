"""``gitmem install opencode`` / ``gitmem uninstall opencode``: register gitmem with OpenCode.

The plugin: ``<repo>/.opencode/plugins/gitmem.js`` (``--user``: ``~/.config/opencode/plugins/gitmem.js``,
``$XDG_CONFIG_HOME`` honoured) is gitmem's own file: OpenCode 1.18.33 loads every ``*.js`` / ``*.ts`` of a
config folder's ``plugin/`` or ``plugins/`` at startup. ``install`` writes it whole from
``gitmem/resources/opencode-plugin.js`` (for ``--user`` the hook script's absolute path — a project's plugin holds
no machine path and finds the
script through the clone's ``bin-dir``, else PATH —, the events' time limits and the
tools whose calls may get context filled in; see ``opencode``) and ``uninstall`` removes it whole, only
when it starts with gitmem's marker line (a plugin of that name that is not gitmem's is never replaced:
``install`` refuses, writing nothing, nor removed) (then ``plugins/`` and the config folder too when that leaves
them empty; OpenCode itself puts a ``package.json`` and ``node_modules/`` in ``.opencode/``, which stay).
No other plugin is read or touched.

The MCP server: ``"mcp": {"gitmem": {"type": "local", "command": ["sh", "-c", ...], "enabled": true}}``
merged into the project's ``opencode.json`` (``opencode.jsonc`` when only that exists; ``--user``: the
config folder's), other servers and settings kept; a server of that name that is not ``gitmem mcp`` is
left alone, with a note; ``uninstall`` removes only that entry (the file when nothing else is left).
OpenCode accepts comments in these files (JSONC); gitmem does not rewrite a file that is not plain JSON:
it refuses, writing nothing, and says what to add.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from ... import layout
from . import opencode
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
    detect_by,
    install_notes,
    is_our_server,
    json_change,
    mcp_entry,
    read_json,
    read_text,
    record_file,
    same_content,
    user_script,
)

NAME = "opencode"
USER_SCOPE = True
#: The ``gitmem install opencode`` help text.
HELP = """Register gitmem's OpenCode plugin and MCP server in this repository (idempotent; --user: in
~/.config/opencode/).

\b
Plugin: .opencode/plugins/gitmem.js, gitmem's own file. It gives the model the
session's memories (system prompt), the prompt's (next to the message) and a
file's when it is read or edited (after the tool's output), and hands tool calls
and the end of each turn to capture. MCP server: `gitmem` in opencode.json."""
HOOK_COMMAND = "gitmem-opencode-hook"
#: The first line of gitmem's plugin file: how ``uninstall`` and ``status`` know it is gitmem's.
MARKER = "// gitmem-opencode-hook:"
PLUGIN_NAME = "gitmem.js"
#: What the template's ``__GITMEM_CONFIG__`` is replaced with.
CONFIG_PLACEHOLDER = "__GITMEM_CONFIG__"
#: Time limit of each hook call in milliseconds: far above the handler's own (agents.core.TIME_LIMITS),
#: like the other agents' hook timeouts.
TIMEOUTS_MS = {"session.start": 15_000, "chat.message": 10_000, "tool.execute.before": 5_000,
               "tool.execute.after": 10_000, "session.idle": 10_000, "session.end": 5_000}
#: A tool's output is sent to the hook cut to this many characters (capture keeps far less).
MAX_OUTPUT_CHARS = 64_000


def config_dir(root: Path | None, user: bool, home: Path | None = None) -> Path:
    """The OpenCode config folder gitmem installs into: ``<root>/.opencode``, or (``user``) ``$XDG_CONFIG_HOME/
    opencode`` (``~/.config/opencode``; ``home`` given: ``<home>/.config/opencode``)."""
    if not user:
        assert root is not None
        return root / ".opencode"
    if home is None and os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / "opencode"
    return (home or Path.home()) / ".config" / "opencode"


def locations(root: Path | None, user: bool = False, home: Path | None = None) -> tuple[Path, Path]:
    """(gitmem's plugin file, the config file holding the MCP server): ``opencode.json``, or ``opencode.jsonc``
    when only that exists (the project's at its top, the user's in the config folder)."""
    folder = config_dir(root, user, home)
    base = folder if user else root
    assert base is not None
    config = base / "opencode.json"
    if not config.exists() and (base / "opencode.jsonc").exists():
        config = base / "opencode.jsonc"
    return folder / "plugins" / PLUGIN_NAME, config


def plugin_source(script: Path | None, *, command: str = HOOK_COMMAND,
                  timeouts_ms: dict[str, int] | None = None) -> str:
    """The whole of gitmem's plugin file: the template with this installation's settings filled in.

    ``script``: a ``--user`` install's hook script, run when it exists (None for a project's plugin, which holds
    no machine path: it runs the script of the folder the clone's ``bin-dir`` names), else ``command`` on PATH;
    when none starts and the repository has memories, the session start gets ``installing.ABSENT_NOTICE``;
    ``timeouts_ms``: each event's
    time limit (default ``TIMEOUTS_MS``).
    """
    template = (resources.files("gitmem") / "resources" / "opencode-plugin.js").read_text(encoding="utf-8")
    settings = {"script": str(script) if script else "", "command": command,
                "timeouts": timeouts_ms or TIMEOUTS_MS,
                "beforeTools": list(opencode.BEFORE_TOOLS), "maxOutput": MAX_OUTPUT_CHARS, "notice": ABSENT_NOTICE,
                "pointer": f"{layout.STATE_DIR}/{layout.BIN_POINTER}", "memories": layout.TEAM_MEMORIES}
    return template.replace(CONFIG_PLACEHOLDER, json.dumps(settings, indent=2))


def is_our_plugin(path: Path) -> bool:
    """Whether ``path`` is a plugin file gitmem wrote (its first line is ``MARKER``)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return f.readline().startswith(MARKER)
    except OSError:
        return False


def server_entry(user: bool = False) -> dict[str, Any]:
    """OpenCode's ``mcp.gitmem`` entry: ``installing.mcp_entry``'s command as one array, a ``local`` server
    (``user``: a ``--user`` install's, this installation's ``gitmem`` by absolute path)."""
    entry = mcp_entry(with_type=False, script=user_script("gitmem", user))
    return {"type": "local", "command": [entry["command"], *entry["args"]], "enabled": True}


def is_our_entry(entry: Any) -> bool:
    """Whether an ``mcp`` entry of opencode.json is gitmem's server."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), list) or not entry["command"]:
        return False
    cmd = entry["command"]
    return is_our_server({"command": cmd[0], "args": cmd[1:]})


def snippet() -> str:
    """What to add to a config file gitmem will not rewrite, as one line."""
    return json.dumps({"mcp": {MCP_NAME: server_entry()}})


def read_config(path: Path) -> dict[str, Any]:
    """``path`` as a JSON object ({} when missing); its ``mcp`` checked.

    Raises:
        SettingsError: not plain JSON (comments, a syntax error), not an object, or its ``mcp`` is not an object.
    """
    try:
        data = read_json(path)
    except SettingsError as e:
        if "not valid JSON" not in e.message:
            raise
        raise SettingsError(f"{path} is not plain JSON (comments or a syntax error): gitmem does not rewrite it",
                            f"add this to it yourself: {snippet()}") from None
    if data.get("mcp") is not None and not isinstance(data["mcp"], dict):
        raise SettingsError(f"{path}: \"mcp\" is not an object", FIX_HINT)
    return data


def _result(plugin: Path, config: Path) -> InstallResult:
    return InstallResult(NAME, {"plugin": str(plugin), "config": str(config)}, command=HOOK_COMMAND)


def _config_cleaned(data: dict[str, Any]) -> dict[str, Any]:
    """The config without gitmem's ``mcp.gitmem`` (and without ``mcp`` when that leaves it empty)."""
    servers = dict(data.get("mcp") or {})
    if not is_our_entry(servers.get(MCP_NAME)):
        return dict(data)
    del servers[MCP_NAME]
    return {**data, "mcp": servers} if servers else {k: v for k, v in data.items() if k != "mcp"}


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, every file read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: the config file is not plain JSON or its ``mcp`` is not an object; or a plugin file of
            gitmem's name is there and is not gitmem's.
    """
    plugin, config = locations(root, user, home)
    text = read_text(config)
    data = read_config(config)
    script = user_script(HOOK_COMMAND, user)
    res = _result(plugin, config)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, None if user else root))
    source = plugin_source(script)
    try:
        current = read_text(plugin)
    except SettingsError:
        current = ""
    if current is not None and not is_our_plugin(plugin):
        raise SettingsError(f"{plugin} is not gitmem's (its first line is not {MARKER!r}): gitmem does not "
                            "replace it", f"rename it (OpenCode loads every plugin in {plugin.parent}), "
                            "then run again")
    changes: list[Change] = []
    if current != source:
        changes.append(Change(plugin, current, source, had_ours=current is not None))
    servers = dict(data.get("mcp") or {})
    if MCP_NAME in servers and not is_our_entry(servers[MCP_NAME]):
        res.notes.append(f"{config} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
    else:
        res.mcp = True
        new = {**data, "mcp": {**servers, MCP_NAME: server_entry(user)}}
        change = json_change(config, text, data, new, had_ours=not same_content(data, _config_cleaned(data)))
        changes += [change] if change else []
    return Plan(res, changes, False, record_file(None if user else root))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Write gitmem's OpenCode plugin and register the MCP server; see the module docstring.

    Raises:
        SettingsError: see ``plan_install`` (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` removes or writes, every file read and checked first.

    Raises:
        SettingsError: the config file is not plain JSON, or its ``mcp`` is not an object.
    """
    plugin, config = locations(root, user, home)
    text = read_text(config)
    data = read_config(config)
    res = _result(plugin, config)
    changes: list[Change] = []
    if is_our_plugin(plugin) and plugin.is_symlink():
        res.notes.append(f"{plugin} is a symlink: left as it is (remove it yourself)")
    elif is_our_plugin(plugin):  # plugins/, then the config folder, only when empty
        changes.append(Change(plugin, read_text(plugin), "", empty=True, owned=True, prune=2))
    elif plugin.exists():
        res.notes.append(f"{plugin} is not gitmem's: left as it is")
    new = _config_cleaned(data)
    change = json_change(config, text, data, new, empty=not new)
    return Plan(res, changes + ([change] if change else []), True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's plugin file and its MCP entry, leaving everything else as it is (``installing.apply``).

    Raises:
        SettingsError: the config file is not plain JSON, or its ``mcp`` is not an object (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"plugin", "installed", "config", "mcp"}``: whether gitmem's plugin file is there, and whether the MCP
    server is registered (plus ``"error"`` when the config file cannot be read)."""
    plugin, config = locations(root, user, home)
    out: dict[str, Any] = {"plugin": str(plugin), "installed": is_our_plugin(plugin), "config": str(config)}
    try:
        data = read_config(config)
    except SettingsError as e:
        return {**out, "mcp": False, "error": e.message}
    return {**out, "mcp": is_our_entry((data.get("mcp") or {}).get(MCP_NAME))}


def marks(home: Path) -> Marks:
    """What says OpenCode is used here: ``.opencode/``, ``opencode.json`` or ``opencode.jsonc`` in the repository,
    or ``opencode`` on PATH (its user config folder, ``~/.config/opencode``, alone does not count)."""
    return Marks(project=(".opencode", "opencode.json", "opencode.jsonc"), binaries=("opencode",),
                 folders=(config_dir(None, True, home),))


def detect(root: Path | None, home: Path) -> str | None:
    """Why OpenCode is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
