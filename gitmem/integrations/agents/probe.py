"""Whether the hook and MCP commands registered for gitmem in a project's agent files reach gitmem on this machine.

Owns, for ``gitmem doctor``: finding every command gitmem's installers registered in the project files of each
agent (``registered``: the hook handlers, the MCP server; OpenCode's plugin, resolved as the plugin resolves it)
and running each in a harmless way (``run``) — only a command that is exactly what this gitmem writes there
(``Probe.ours``): doctor never runs what a commit put in a settings file; another is checked for paths that do
not exist here, and said to be unchecked:

* a hook command runs as the agent runs it (``sh -c`` for the shell form), in the repository, with
  ``core.PROBE_ENV`` set: a handler that starts answers ``core.PROBE_ANSWER`` at once and reads nothing; a
  command that does not reach gitmem prints nothing (or, at session start, the one-line notice);
* the MCP command gets one ``initialize`` request and end of input: it answers and exits.

Also says which commands name a path of one machine (``installing.machine_paths``: an earlier gitmem's committed
settings). Reads the files; writes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import layout
from . import core, installing

#: Seconds one probe may take: a hook handler answers the probe in well under a second, ``gitmem mcp`` answers
#: ``initialize`` in about one (issue 13's start-up budget); far above both, for a loaded machine.
PROBE_TIMEOUT_S = 30.0
#: Probes run at once (each is a process start; more would only compete for the cores).
PROBE_WORKERS = 4


def _hook_commands() -> set[str]:
    """Every agent's hook command (its installer's ``HOOK_COMMAND``)."""
    from . import installers

    return {str(getattr(installers.get(n), "HOOK_COMMAND", "")) for n in installers.names()} - {""}


@dataclass
class Probe:
    """One registered command: its ``agent``, ``kind`` (``"hook"`` or ``"mcp"``), ``label`` (the event, or
    ``"MCP server"``), the ``file`` it is registered in, the ``argv`` that runs it; after ``run``: ``ok`` (it
    reached gitmem) and ``detail`` (why not, one line)."""

    agent: str
    kind: str
    label: str
    file: Path
    argv: list[str]
    command: str
    ok: bool = False
    detail: str = ""
    #: Whether the command is exactly what this gitmem writes there: only such a command is run (a committed
    #: file is anyone's to edit; doctor must not run what a pull request put in it).
    ours: bool = False

    @property
    def portable(self) -> bool:
        """Whether the command holds no path of one machine."""
        return not installing.machine_paths(self.command)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):  # a committed file nested deeper than the parser goes
        return {}
    return data if isinstance(data, dict) else {}


def _expected_hook(agent: str, event: str) -> str | None:
    """The command this gitmem writes for ``agent``'s ``event`` in a project (its installer's ``handler_command``)."""
    from . import installers

    make = getattr(installers.get(agent), "handler_command", None)
    return str(make(event)) if callable(make) else None


def _hook_probes(agent: str, path: Path) -> list[Probe]:
    """gitmem's handlers in the hooks layout of ``path`` (``{"hooks": {event: [group or handler]}}``)."""
    hooks = _json(path).get("hooks")
    names = _hook_commands()
    markers = tuple(installing.marker(c) for c in names)
    out: list[Probe] = []
    for event, entries in (hooks.items() if isinstance(hooks, dict) else ()):
        for entry in entries if isinstance(entries, list) else ():
            handlers = entry.get("hooks") if isinstance(entry, dict) and "hooks" in entry else [entry]
            for h in handlers if isinstance(handlers, list) else ():
                if not isinstance(h, dict):
                    continue
                cmd = h.get("command") if isinstance(h.get("command"), str) else h.get("bash")
                args = h.get("args")
                if isinstance(cmd, str) and cmd.startswith(markers):
                    out.append(Probe(agent, "hook", event, path, ["sh", "-c", cmd], cmd,
                                     ours=cmd == _expected_hook(agent, event)))
                elif (isinstance(cmd, str) and Path(cmd).name in names and isinstance(args, list)
                      and all(isinstance(a, str) for a in args)):
                    out.append(Probe(agent, "hook", event, path, [cmd, *args], " ".join([cmd, *args])))
    return out


def _mcp_probe(agent: str, path: Path, entry: Any) -> list[Probe]:
    if isinstance(entry, dict) and isinstance(entry.get("command"), list):  # OpenCode: one array
        argv = entry["command"]
    elif isinstance(entry, dict) and isinstance(entry.get("command"), str):
        argv = [entry["command"], *(entry.get("args") or [])]
    else:
        return []
    if not argv or not all(isinstance(a, str) for a in argv) or not installing.is_our_server(
            {"command": argv[0], "args": argv[1:]}):
        return []
    entry = installing.mcp_entry()
    expected = [entry["command"], *entry["args"]]
    return [Probe(agent, "mcp", "MCP server", path, list(argv), " ".join(argv), ours=list(argv) == expected)]


def _opencode_probes(root: Path) -> list[Probe]:
    from . import opencode_install

    plugin, config = opencode_install.locations(root)
    out = _mcp_probe("opencode", config, (_json(config).get("mcp") or {}).get(installing.MCP_NAME))
    if not opencode_install.is_our_plugin(plugin):
        return out
    try:
        text = plugin.read_text("utf-8")
        settings, _ = json.JSONDecoder().raw_decode(text, text.index("const CONFIG = ") + len("const CONFIG = "))
    except (OSError, ValueError):
        text, settings = "", {}
    script = settings.get("script") if isinstance(settings, dict) else ""
    command = settings.get("command") if isinstance(settings, dict) else ""
    command = command if isinstance(command, str) and command else opencode_install.HOOK_COMMAND
    found = script if isinstance(script, str) and script and os.path.exists(script) else None
    if found is None:  # as the plugin does: the clone's bin-dir file, else PATH
        try:
            folder = layout.of(root).bin_pointer.read_text("utf-8").split("\n")[0]
        except OSError:
            folder = ""
        candidate = os.path.join(folder, command) if folder else ""
        found = candidate if candidate and os.path.exists(candidate) else shutil.which(command)
    probe = Probe("opencode", "hook", "plugin", plugin, [found or command, "session.start"],
                  script if isinstance(script, str) and script else command,
                  ours=text == opencode_install.plugin_source(None))
    if found is None:
        probe.detail = f"finds no {command} on this machine (no bin-dir file in the clone, none on PATH)"
        probe.argv = []
    return [*out, probe]


def registered(root: Path) -> list[Probe]:
    """Every hook and MCP command registered for gitmem in the project files of each agent in ``root``, in the
    registry's order (``installers.AGENTS``)."""
    from . import claude_install, codex_install, copilot_install, cursor_install, gemini_install, vscode_install

    out: list[Probe] = []
    settings, mcp = claude_install.locations(root, False)
    out += _hook_probes("claude", settings)
    out += _mcp_probe("claude", mcp, (_json(mcp).get("mcpServers") or {}).get(installing.MCP_NAME))
    hooks, config = codex_install.locations(root, False)
    out += _hook_probes("codex", hooks)
    try:
        servers = tomllib.loads(config.read_text("utf-8")).get("mcp_servers") or {}
    except (OSError, ValueError, RecursionError):
        servers = {}
    out += _mcp_probe("codex", config, servers.get(installing.MCP_NAME) if isinstance(servers, dict) else None)
    path = gemini_install.location(root, False)
    out += _hook_probes("gemini", path)
    out += _mcp_probe("gemini", path, (_json(path).get("mcpServers") or {}).get(installing.MCP_NAME))
    for agent, mod in (("copilot", copilot_install), ("cursor", cursor_install)):
        hooks, mcp = mod.locations(root)
        out += _hook_probes(agent, hooks)
        out += _mcp_probe(agent, mcp, (_json(mcp).get("mcpServers") or {}).get(installing.MCP_NAME))
    out += _opencode_probes(root)
    vscode = vscode_install.location(root)  # its hooks are Claude Code's, probed above
    return out + _mcp_probe("vscode", vscode, (_json(vscode).get(vscode_install.SERVERS_KEY) or {}).get(
        installing.MCP_NAME))


_INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "gitmem-doctor", "version": "1"}}}) + "\n"


def _run_one(p: Probe, root: Path, timeout_s: float) -> None:
    if not p.argv:
        return
    if not p.ours:
        missing = [w for w in re.findall(r"(?:^|[\s'=])(/[^\s'\";]+)", p.command) if not os.path.exists(w)]
        p.detail = ("not run: not the command this gitmem writes there (an earlier or newer gitmem's, or edited by "
                    "hand)" + (f"; it names {missing[0]}, which does not exist on this machine" if missing else ""))
        return
    env = {**os.environ, core.PROBE_ENV: "1"}
    stdin = _INITIALIZE.encode() if p.kind == "mcp" else b""
    try:
        proc = subprocess.run(p.argv, input=stdin, capture_output=True, cwd=root, env=env, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        p.detail = f"no answer within {timeout_s:.0f} s"
        return
    except OSError as e:
        p.detail = f"cannot run: {e.strerror or e}"
        return
    out = proc.stdout.decode("utf-8", "replace")
    err = next((ln.strip() for ln in reversed(proc.stderr.decode("utf-8", "replace").splitlines()) if ln.strip()), "")
    if p.kind == "mcp":
        for line in out.splitlines():
            try:
                info = json.loads(line).get("result", {}).get("serverInfo", {})
            except (ValueError, AttributeError):
                continue
            if isinstance(info, dict) and info.get("name") == installing.MCP_NAME:
                p.ok = True
                return
        p.detail = f"gave no MCP answer (exit {proc.returncode}{': ' + err[:200] if err else ''})"
        return
    if core.PROBE_ANSWER in out:
        p.ok = True
    elif installing.ABSENT_NOTICE in out:
        p.detail = "finds no working gitmem on this machine (the session is told so)"
    else:
        p.detail = (f"does not reach gitmem on this machine (exit {proc.returncode}, "
                    f"{'prints nothing' if not out.strip() else 'prints something else'}"
                    f"{': ' + err[:200] if err else ''})")


def run(probes: list[Probe], root: Path, *, timeout_s: float = PROBE_TIMEOUT_S) -> list[Probe]:
    """Run every probe in ``root`` (``PROBE_WORKERS`` at a time), setting ``ok`` and ``detail``; returns them."""
    with ThreadPoolExecutor(max_workers=PROBE_WORKERS) as pool:
        list(pool.map(lambda p: _run_one(p, root, timeout_s), probes))
    return probes
