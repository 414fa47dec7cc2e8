"""The registry of agent installers: which agents ``gitmem install`` knows, and the protocol each installer follows.

Adding an agent is one line in ``AGENTS`` (its name → its ``<agent>_install`` module); the CLI builds
``gitmem install <agent>`` / ``gitmem uninstall <agent>`` from it, and ``gitmem install`` with no agent
detects and installs for every agent of the registry (``detect_report``: each agent found by its own marks —
its command on PATH or its project files, never a user-level folder alone — or skipped, with why).

Each installer module follows ``Installer``: ``NAME``, ``USER_SCOPE``, ``plan_install``, ``plan_uninstall``,
``install``, ``uninstall``, ``status``, ``marks``, ``detect``, and optionally ``HELP`` (the ``gitmem install <agent>``
help text; default: the first paragraph of the module docstring) and ``NO_USER_SCOPE`` (the one-line reason
``--user`` is refused when ``USER_SCOPE`` is false).

Standard library only; the installer modules are imported when asked for.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from .installing import InstallResult, Marks, Plan

#: Agent name → installer module (relative to this package). The order is the order of ``gitmem install``'s
#: output and of its detection.
AGENTS: dict[str, str] = {
    "claude": ".claude_install",
    "codex": ".codex_install",
    "gemini": ".gemini_install",
    "copilot": ".copilot_install",
    "cursor": ".cursor_install",
    "opencode": ".opencode_install",
    # after claude: both write .claude/settings.json's hooks, and the first plan of a file wins (``plan_all``)
    "vscode": ".vscode_install",
}


class Installer(Protocol):
    """What every ``<agent>_install`` module exposes.

    ``root``: the repository's top folder (None for ``user``-scope calls); ``user``: the user-level files
    instead of the project's; ``home``: where the user-level files are looked for instead of the default
    (the home folder; for Codex, ``$CODEX_HOME``). ``install`` and ``uninstall`` are idempotent, never drop
    the user's own entries, and raise ``installing.SettingsError`` (writing nothing) for a file they cannot
    read or must not change; ``uninstall`` gives a file gitmem changed back its bytes when nothing else
    changed in it, and deletes the files (and folders) an install created when nothing else is left in
    them (``installing.apply``). ``plan_install`` / ``plan_uninstall`` read and check every file and say
    what ``install`` / ``uninstall`` would write, writing nothing: they raise what those would raise.
    """

    NAME: str
    #: Whether the agent has user-level settings gitmem can install into (``--user``).
    USER_SCOPE: bool

    def plan_install(self, root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
        """What ``install`` would write (``installing.apply`` writes it)."""

    def plan_uninstall(self, root: Path | None, *, user: bool = False, home: Path | None = None) -> Plan:
        """What ``uninstall`` would write or remove."""

    def install(self, root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
        """Register gitmem's hooks and MCP server for the agent."""

    def uninstall(self, root: Path | None, *, user: bool = False, home: Path | None = None) -> InstallResult:
        """Remove what ``install`` registered, leaving everything else as it is."""

    def status(self, root: Path | None, *, user: bool = False, home: Path | None = None) -> dict[str, Any]:
        """What is installed: a JSON object whose ``"mcp"`` says whether the MCP server is registered."""

    def marks(self, home: Path) -> Marks:
        """What says the agent is used here: its project files, its commands (``installing.Marks``)."""

    def detect(self, root: Path | None, home: Path) -> str | None:
        """A one-line reason why the agent is used in ``root`` or on this machine (``home``), else None."""


@dataclass
class AgentPlan:
    """One agent of ``gitmem install`` / ``uninstall`` with no agent: why it was chosen (``reason``), whether
    gitmem was installed for it before (``installed``), what it would write (``plan``; None when refused),
    what was done (``result``; None in a dry run or when nothing was written), and why it was refused or
    failed (``error``, ``hint``)."""

    agent: str
    reason: str
    installed: bool
    plan: Plan | None = None
    result: InstallResult | None = None
    error: str = ""
    hint: str = ""


def plan_all(names_reasons: list[tuple[str, str]], root: Path | None, *, uninstall: bool = False,
             user: bool = False) -> list[AgentPlan]:
    """The plan of each agent of ``names_reasons`` (agent, reason) in project ``root`` (``user``: in the user-level
    files instead), every agent's files read and checked, nothing written: an agent whose file is refused gets its
    ``error`` and ``hint``. A file two agents would write (``.claude/settings.json``: Claude Code's hooks, which
    VS Code runs too) is written by the first agent's plan only, the later one saying so in a note (their entries
    in it are the same handlers)."""
    from .installing import SettingsError

    plans = []
    written: dict[str, str] = {}
    for name, reason in names_reasons:
        mod = get(name)
        where = None if user else root
        p = AgentPlan(name, reason, True if uninstall else is_installed(mod.status(where, user=user)))
        try:
            if uninstall and name == "claude" and any(n == "vscode" for n, _ in names_reasons):
                # VS Code runs Claude Code's hooks: both leaving in one run, the hooks go with Claude Code's plan
                from . import claude_install

                p.plan = claude_install.plan_uninstall(where, user=user, shared=False)
            else:
                p.plan = mod.plan_uninstall(where, user=user) if uninstall else mod.plan_install(where, user=user)
        except SettingsError as e:
            p.error, p.hint = e.message, e.hint
        outside_why = outside(p.plan, where) if p.plan is not None and where is not None else None
        if outside_why is not None:  # a link the repository holds must not send gitmem's writes elsewhere
            p.plan, p.error, p.hint = None, outside_why, OUTSIDE_HINT
        if p.plan is not None:
            kept = []
            for c in p.plan.changes:
                first = written.setdefault(str(c.path), name)
                if first == name:
                    kept.append(c)
                else:
                    p.plan.result.notes.append(f"{c.path}: written with {first}'s (the same handlers)")
            p.plan.changes = kept
        plans.append(p)
    return plans


#: The hint of a project file leading outside the repository (``outside``).
OUTSIDE_HINT = "replace the link with the file itself (or remove it), then run again"


def outside(plan: Any, root: Path) -> str | None:
    """Why ``plan`` (a project install's) would write outside the work tree ``root`` — a file of it that is, or
    lies beyond, a link leading out of the repository (one a repository commits, or a dangling one: its target
    would be created wherever it points) — or None."""
    import os

    top = os.path.realpath(root)
    for c in plan.changes:
        target = os.path.realpath(c.path)
        if os.path.commonpath([top, target]) != top:
            return f"{c.path} leads outside the repository (to {target}): gitmem does not write there"
    return None


def apply_all(plans: list[AgentPlan]) -> None:
    """Write every plan (``installing.apply``), each agent on its own: one that fails to write (``OSError``)
    gets its ``error`` and keeps in ``result`` what was written before; the others go on."""
    from .installing import apply

    for p in plans:
        if p.plan is None:
            continue
        try:
            p.result = apply(p.plan)
        except OSError as e:
            p.result, p.error = p.plan.result, f"cannot write: {e}"


def names() -> list[str]:
    """The agents' names, in registry order."""
    return list(AGENTS)


def get(name: str) -> Installer:
    """The installer module of agent ``name``.

    Raises:
        KeyError: no such agent.
    """
    return cast("Installer", importlib.import_module(AGENTS[name], __package__))


def help_text(name: str) -> str:
    """The ``gitmem install <name>`` help: the module's ``HELP``, else its docstring's first paragraph."""
    mod = get(name)
    text = getattr(mod, "HELP", None) or (getattr(mod, "__doc__", None) or "").split("\n\n", 1)[0]
    return str(text).strip()


def no_user_scope(name: str) -> str:
    """Why ``gitmem install <name> --user`` is refused (agents whose ``USER_SCOPE`` is false)."""
    return str(getattr(get(name), "NO_USER_SCOPE", "") or f"{name} has no user-level settings gitmem installs into")


@dataclass
class Detection:
    """One agent of ``gitmem install`` with no agent: whether it was ``found`` and why, or why it was skipped
    (``reason``, one line)."""

    agent: str
    found: bool
    reason: str


def detect_report(root: Path | None, home: Path) -> list[Detection]:
    """Every agent of the registry, in registry order: found in ``root`` or on this machine (its project files, its
    command on PATH: ``installing.detect_by``) or skipped, with the reason (``installing.not_detected``)."""
    from .installing import not_detected

    out = []
    for name in AGENTS:
        mod = get(name)
        reason = mod.detect(root, home)
        out.append(Detection(name, True, reason) if reason else Detection(name, False, not_detected(mod.marks(home),
                                                                                                   home)))
    return out


def detect_all(root: Path | None, home: Path) -> list[tuple[str, str]]:
    """(agent, reason) for each agent of the registry detected in ``root`` or on this machine, in registry order."""
    return [(d.agent, d.reason) for d in detect_report(root, home) if d.found]


def installed(root: Path) -> list[str]:
    """The agents gitmem is installed for in project ``root`` (anything of gitmem's in their project files)."""
    out = []
    for name in AGENTS:
        if is_installed(get(name).status(root)):
            out.append(name)
    return out


def is_installed(status: dict[str, Any]) -> bool:
    """Whether an installer's ``status`` shows anything of gitmem's (a hook handler, a hooks file, the MCP server)."""
    events = status.get("events")
    return bool(status.get("mcp") or status.get("installed") or (isinstance(events, dict) and any(events.values())))
