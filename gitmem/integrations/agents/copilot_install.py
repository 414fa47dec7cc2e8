"""``gitmem install copilot`` / ``gitmem uninstall copilot``: register gitmem with GitHub Copilot CLI.

Hooks: ``<repo>/.github/hooks/gitmem.json`` is gitmem's own file (Copilot CLI 1.0.102 loads every
``.github/hooks/*.json``): ``install`` writes it whole (``{"version": 1, "hooks": {<event>:
[{"type": "command", "bash": ..., "timeoutSec": ...}]}}``, one handler per Copilot event, a short
shell command, ``installing.shim_command``, that runs the ``gitmem-copilot-hook EVENT`` of the folder
the clone's ``bin-dir`` names, else the one on PATH: no machine path; at session start, the one-line
notice when gitmem is missing; ``--user``: this installation's script by absolute path) and ``uninstall`` removes
it whole (and ``.github/hooks/`` when
that is then empty). The file is gitmem's when every handler in it is gitmem's (``is_our_document``):
a ``gitmem.json`` of the user's is never overwritten (``install`` refuses, writing nothing) nor
removed. No other file in ``.github/hooks/`` is read or touched.

The MCP server: Copilot CLI reads the project's ``.mcp.json`` and ``.github/mcp.json`` (and no
longer ``.vscode/mcp.json``) besides ``$COPILOT_HOME/mcp-config.json``. gitmem registers
``gitmem`` in ``.github/mcp.json`` (``mcpServers``, merged: other servers stay; a server of that
name that is not ``gitmem mcp`` is left alone, with a note); ``uninstall`` removes only that
entry (the file when it was left empty).

``--user``: the same hooks file in ``$COPILOT_HOME/hooks/gitmem.json`` (``~/.copilot``; Copilot CLI
1.0.102 runs every ``$COPILOT_HOME/hooks/*.json``, checked with the real CLI; not ``config.json``,
whose ``hooks`` the CLI drops) and the server in ``$COPILOT_HOME/mcp-config.json`` (listed by
``copilot mcp list`` as a user server). Its handlers carry ``env: {"GITMEM_COPILOT_SCOPE": "user"}``
and step aside in a project that has gitmem's own Copilot hooks, so gitmem acts once per event.

Copilot CLI also runs ``.claude/settings.json``'s hooks: with ``gitmem install claude`` done too,
the Claude Code hooks step aside under Copilot when gitmem's Copilot hooks are installed, in the
project or for the user (``claude.copilot_hooks_installed``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .claude import COPILOT_HOOKS_FILE, COPILOT_SCOPE_VAR, COPILOT_USER_HOOKS_FILE
from .installing import (
    ABSENT_NOTICE,
    Change,
    InstallResult,
    Marks,
    Plan,
    SettingsError,
    apply,
    detect_by,
    install_notes,
    json_change,
    marker,
    mcp_entry,
    mcp_file_change,
    parse_json,
    read_json,
    read_text,
    record_file,
    server_registered,
    shim_command,
    user_script,
)

NAME = "copilot"
USER_SCOPE = True
#: The ``gitmem install copilot`` help text.
HELP = """Register gitmem's GitHub Copilot CLI hooks and MCP server in this repository (idempotent).

\b
Hooks: .github/hooks/gitmem.json, gitmem's own file. sessionStart,
userPromptSubmitted and preToolUse (view, edit, create, bash reads) inject
memories; postToolUse, agentStop and sessionEnd capture the session for
consolidation. MCP server: `gitmem` in .github/mcp.json. With `gitmem install
claude` too, Copilot (which also runs .claude/settings.json's hooks) gets
gitmem once. --user: $COPILOT_HOME/hooks/gitmem.json and $COPILOT_HOME/mcp-config.json
(~/.copilot), for every repository (a project's own gitmem hooks take precedence)."""
HOOK_COMMAND = "gitmem-copilot-hook"
MARKER = marker(HOOK_COMMAND)
#: (Copilot event, timeout in seconds: far above the handler's own limit, agents.core.TIME_LIMITS).
EVENTS: tuple[tuple[str, int], ...] = (
    ("sessionStart", 15),
    ("userPromptSubmitted", 10),
    ("preToolUse", 5),
    ("postToolUse", 10),
    ("agentStop", 10),
    ("sessionEnd", 5),
)


def copilot_home() -> Path:
    """``$COPILOT_HOME``, else ``~/.copilot`` (Copilot CLI's user-level folder)."""
    return Path(os.environ.get("COPILOT_HOME") or os.path.expanduser("~/.copilot"))


def locations(root: Path | None, user: bool = False, home: Path | None = None) -> tuple[Path, Path]:
    """(gitmem's hooks file, the MCP file) of project ``root``, or of the user (``home``: Copilot CLI's
    user-level folder, ``copilot_home()`` by default)."""
    if user:
        base = home or copilot_home()
        return base / COPILOT_USER_HOOKS_FILE, base / "mcp-config.json"
    assert root is not None
    return root / COPILOT_HOOKS_FILE, root / ".github" / "mcp.json"


#: The event whose handler tells the session, without gitmem, that gitmem is missing (``installing.ABSENT_NOTICE``).
START_EVENT = "sessionStart"


def absent_output() -> str:
    """What the session-start handler prints when gitmem is missing here: the agent's JSON around the notice."""
    return json.dumps({"additionalContext": ABSENT_NOTICE})


def handler_command(event: str, script: Path | None = None) -> str:
    """The shell command of gitmem's handler for ``event`` (``installing.shim_command``; ``script``: a ``--user``
    install's absolute script, None for the project's portable command)."""
    return shim_command(HOOK_COMMAND, event, script, notice=absent_output() if event == START_EVENT else None)


def hooks_document(script: Path | None, user: bool = False) -> dict[str, Any]:
    """The whole of gitmem's hooks file; the user-level one's handlers run with ``GITMEM_COPILOT_SCOPE=user``
    (so they step aside in a project that has gitmem's own hooks: ``copilot.to_event``)."""
    extra: dict[str, Any] = {"env": {COPILOT_SCOPE_VAR: "user"}} if user else {}
    return {"version": 1, "hooks": {event: [{"type": "command", "bash": handler_command(event, script),
                                             "timeoutSec": timeout, **extra}] for event, timeout in EVENTS}}


def _result(hooks_path: Path, mcp_path: Path) -> InstallResult:
    return InstallResult(NAME, {"hooks": str(hooks_path), "mcp_file": str(mcp_path)}, command=HOOK_COMMAND)


def is_our_document(data: Any) -> bool:
    """Whether a hooks file's object is gitmem's: it has handlers, and every one is gitmem's (``MARKER``)."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        return False
    handlers = [h for v in hooks.values() for h in v]
    return bool(handlers) and all(isinstance(h, dict) and isinstance(h.get("bash"), str)
                                  and h["bash"].startswith(MARKER) for h in handlers)


def hooks_file(path: Path) -> tuple[str | None, bool]:
    """(the text of the hooks file at ``path`` or None when missing, whether it is gitmem's: ``is_our_document``;
    a file that cannot be read as JSON is not)."""
    try:
        text = read_text(path)
        return text, text is not None and is_our_document(parse_json(text, path))
    except SettingsError:
        return "", False


def plan_install(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``install`` writes, every file read and checked first (``installing.apply`` writes it).

    Raises:
        SettingsError: the MCP file is not valid JSON, or the hooks file exists and is not gitmem's.
    """
    hooks_path, mcp_path = locations(root, user, home)
    before, ours = hooks_file(hooks_path)
    if before is not None and not ours:
        raise SettingsError(f"{hooks_path} is not gitmem's (it holds hooks that are not gitmem's, or is not JSON): "
                            "gitmem does not overwrite it",
                            f"rename it (Copilot CLI runs every *.json in {hooks_path.parent}), then run again")
    script = user_script(HOOK_COMMAND, user)
    res = _result(hooks_path, mcp_path)
    res.command = str(script or HOOK_COMMAND)
    res.notes.extend(install_notes(HOOK_COMMAND, script, root))
    if not user:
        res.notes.append("Copilot CLI reads a project's MCP servers (and runs its hooks) only in a folder you trust: "
                         "start `copilot` here and trust the folder, or add it to \"trusted_folders\" in "
                         "$COPILOT_HOME/config.json (~/.copilot)")
    doc = hooks_document(script, user)
    changes = [json_change(hooks_path, before, parse_json(before or "", hooks_path), doc, had_ours=ours),
               mcp_file_change(mcp_path, res, uninstall=False,
                                           entry=mcp_entry(script=user_script("gitmem", user)))]
    return Plan(res, [c for c in changes if c], False, record_file(None if user else root))


def install(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Write gitmem's Copilot hooks file and register the MCP server; see the module docstring.

    Raises:
        SettingsError: see ``plan_install`` (nothing is written).
    """
    return apply(plan_install(root, user=user, home=home))


def plan_uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
    """What ``uninstall`` removes or writes, every file read and checked first.

    Raises:
        SettingsError: the MCP file is not valid JSON.
    """
    hooks_path, mcp_path = locations(root, user, home)
    res = _result(hooks_path, mcp_path)
    mcp_change = mcp_file_change(mcp_path, res, uninstall=True, prune=0 if user else 1)
    before, ours = hooks_file(hooks_path)
    changes = []
    if ours and hooks_path.is_symlink():
        res.notes.append(f"{hooks_path} is a symlink: left as it is (remove it yourself)")
    elif ours:  # hooks/ (and .github/), only when empty
        changes.append(Change(hooks_path, before, "", empty=True, owned=True, prune=1 if user else 2))
    elif before is not None:
        res.notes.append(f"{hooks_path} is not gitmem's: left as it is")
    return Plan(res, changes + ([mcp_change] if mcp_change else []), True, record_file(None if user else root))


def uninstall(root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
    """Remove gitmem's Copilot hooks file (only when it is gitmem's: ``is_our_document``) and its MCP entry,
    leaving everything else as it is (``.github/hooks/`` and ``.github/`` go too when gitmem left them empty).

    Raises:
        SettingsError: the MCP file is not valid JSON (nothing is written).
    """
    return apply(plan_uninstall(root, user=user, home=home))


def status(root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
    """``{"hooks", "installed", "mcp"}``: whether gitmem's own hooks file is there (``is_our_document``), and
    whether the MCP server is registered (plus ``"error"`` when the MCP file cannot be read)."""
    hooks_path, mcp_path = locations(root, user, home)
    installed = hooks_file(hooks_path)[1]
    try:
        mcp = read_json(mcp_path)
    except SettingsError as e:
        return {"hooks": str(hooks_path), "installed": installed, "mcp": False, "error": e.message}
    return {"hooks": str(hooks_path), "installed": installed, "mcp": server_registered(mcp)}


def marks(home: Path) -> Marks:
    """What says GitHub Copilot CLI is used here: ``.github/hooks/``, ``.github/copilot-instructions.md`` or
    ``.github/mcp.json`` in the repository, or ``copilot`` on PATH (``$COPILOT_HOME`` or ``~/.copilot`` alone does
    not count)."""
    base = Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") else home / ".copilot"
    return Marks(project=(".github/hooks", ".github/copilot-instructions.md", ".github/mcp.json"),
                 binaries=("copilot",), folders=(base,))


def detect(root: Path | None, home: Path) -> str | None:
    """Why GitHub Copilot CLI is used here (``marks``), None when nothing says so."""
    return detect_by(root, marks(home))
