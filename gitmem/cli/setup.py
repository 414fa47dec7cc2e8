"""Setting gitmem up: ``init``, ``hooks install|uninstall|status``, ``install|uninstall [AGENT]`` (one command
per agent of ``integrations.agents.installers``; with no agent, every agent detected or installed), ``doctor``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import shapes
from ..errors import GitmemError
from .base import EXIT_ERROR, State, _note, _out, _store, cli, json_option

if TYPE_CHECKING:
    from ..integrations.agents.installers import AgentPlan, Detection
    from ..integrations.agents.installing import InstallResult


@cli.command()
@click.option("--no-hooks", is_flag=True, help="Create .gitmem/ only; install no git hooks.")
@json_option
def init(no_hooks: bool) -> None:
    """Create .gitmem/ (config, memories, ignore file) and install the git hooks.

    Idempotent. Existing hooks are kept and chained (they still run first).
    Undo the hooks with `gitmem hooks uninstall`.

    \b
    Example usage:
      gitmem init
    """
    from ..ops.setup import init as do_init

    res = do_init(os.getcwd(), hooks=not no_hooks)
    report = res.hooks

    def text() -> str:
        lines = [f"gitmem: initialised {res.root}" if res.created else f"gitmem: already initialised in {res.root}"]
        lines += [f"  created {c}" for c in res.created]
        if report is not None:
            if report.installed:
                lines.append(f"  hooks installed in {report.hooks_dir}: {', '.join(report.installed)}")
            if report.chained:
                lines.append(f"  existing hooks kept and chained: {', '.join(report.chained)}")
            if report.already and not report.installed:
                lines.append(f"  hooks already installed in {report.hooks_dir}")
            lines += [f"  note: {n}" for n in report.notes]
        lines += [f"warning: {w}" for w in res.warnings]
        lines.append("Next: gitmem remember \"what to remember\" --anchor path/to/file.py::Symbol")
        lines.append("With your agents: gitmem install   (memories at session start, per prompt, per file)")
        return "\n".join(lines)

    _out(shapes.init_json(res.root, res.created, report, res.warnings), text)


@cli.group()
def hooks() -> None:
    """Install, remove or inspect gitmem's git hooks."""


@hooks.command("install")
@json_option
def hooks_install() -> None:
    """Install the git hooks where git runs them (chaining existing ones).

    \b
    Example usage:
      gitmem hooks install
    """
    from ..ops.setup import install_hooks

    r = install_hooks(os.getcwd())
    _out(shapes.hooks_report_json(r),
         lambda: "\n".join([f"hooks dir: {r.hooks_dir}", f"installed: {', '.join(r.installed) or '-'}",
                            f"already: {', '.join(r.already) or '-'}", f"chained: {', '.join(r.chained) or '-'}"]
                           + [f"note: {n}" for n in r.notes]))


@hooks.command("uninstall")
@json_option
def hooks_uninstall() -> None:
    """Remove gitmem's git hooks; restore the hooks they had chained.

    \b
    Example usage:
      gitmem hooks uninstall
    """
    from ..ops.setup import uninstall_hooks

    removed = uninstall_hooks(os.getcwd())
    _out(shapes.hooks_removed_json(removed), f"removed: {', '.join(removed) or 'nothing (no gitmem hooks found)'}")


@hooks.command("status")
@json_option
def hooks_status() -> None:
    """Show each hook: installed, chained, and whether git will run it."""
    from ..ops.setup import hooks_status as do_status

    states = do_status(os.getcwd())
    _out([shapes.hook_state_json(h) for h in states],
         lambda: "\n".join(f"{h.name:14} {'runs' if h.will_run and h.installed else 'NOT RUN'}  {h.path}"
                           + (f"  ({h.problem})" if h.problem else "") + (f"  [{h.note}]" if h.note else "")
                           for h in states))


@cli.command()
@json_option
def doctor() -> None:
    """Check hooks (will git run them?), memory files, config and the index.

    Exits 1 when something is wrong.

    \b
    Example usage:
      gitmem doctor
    """
    from ..ops.doctor import diagnose

    report = diagnose(_store())
    _out(shapes.doctor_json(report),
         lambda: "\n".join(f"{c.level:5} {c.message}" + (f"\n      hint: {c.hint}" if c.hint and c.level != 'ok'
                                                         else "") for c in report.checks))
    if not report.ok:
        sys.exit(EXIT_ERROR)


def _install_root(user: bool) -> Path | None:
    """The repository's top folder for a project-scope install (None for ``--user``)."""
    return None if user else _store(require=False).repo.root


def _render(res: InstallResult, verb: str = "updated") -> str:
    lines = [f"{('created' if p in res.created else verb) if Path(p).exists() else 'removed'} {p}"
             for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


def _no_agent_error(detected: bool) -> GitmemError:
    """The one-line error of ``install`` / ``uninstall`` with no agent when there is none to act on."""
    from ..integrations.agents import installers

    choices = ", ".join(installers.names())
    if detected:
        return GitmemError(f"no agent detected in this repository or on this machine: name one with "
                           f"`gitmem install AGENT` (AGENT: {choices})",
                           "an agent counts when its command is on PATH or its project files are here "
                           "(`gitmem install --json` says why each was skipped)")
    return GitmemError(f"gitmem is installed for no agent in this repository (`gitmem uninstall AGENT` "
                       f"for the user-level settings; AGENT: {choices})")


def _plan_root(plans: list[AgentPlan]) -> Path | None:
    """The repository the plans' paths are shown relative to (None for user-level plans)."""
    try:
        return _store(require=False).repo.root
    except GitmemError:
        return None


def _render_plans(plans: list[AgentPlan], install: bool, dry_run: bool,
                  skipped: list[Detection] | None = None) -> str:
    from ..integrations.agents.installing import outcome

    lines = []
    refused = any(p.plan is None for p in plans)
    root = _plan_root(plans) if dry_run else None
    for p in plans:
        if p.error:
            lines.append(f"{p.agent}: {'refused' if p.plan is None else 'failed'}: {p.error}")
            lines += [f"  hint: {p.hint}"] if p.hint else []
            if p.result is not None and p.result.changed:
                lines += ["  " + line for line in _render(p.result, "wrote").splitlines()]
            continue
        if p.result is None:
            assert p.plan is not None
            shown = [o for o in outcome(p.plan) if o.action != "keep"] if dry_run else []
            if dry_run:
                verb = "would uninstall" if not install else "would install" if not p.installed else \
                    "already installed, would refresh" if shown else "already installed and current"
            else:
                verb = f"not {'installed' if install else 'uninstalled'}: another agent's file was refused"
            lines.append(f"{p.agent}: {verb} ({p.reason})")
            if dry_run:
                lines += [f"  would {o.action} {o.path}" for o in shown] or ["  nothing to change"]
                lines += [f"  note: {n}" for n in p.plan.result.notes]
                lines += [o.diff(root).rstrip("\n") for o in shown]  # the exact bytes, as a diff `git apply` takes
            continue
        lines.append(f"{p.agent}: {'installed' if install else 'uninstalled'} ({p.reason})")
        lines += ["  " + line for line in _render(p.result).splitlines()]
    lines += [f"{d.agent}: skipped ({d.reason})" for d in skipped or []]
    if refused and not dry_run:
        verb = "install" if install else "uninstall"
        lines.append(f"nothing was written: fix the refused files and run again, or `gitmem {verb} AGENT` "
                     "for one agent")
    return "\n".join(lines)


def _run_all(plans: list[AgentPlan], install: bool, dry_run: bool, skipped: list[Detection] | None = None) -> None:
    """Write ``plans`` (none of them when an agent was refused, or in a dry run), print the report (with the agents
    ``skipped`` by detection, and why), and exit 1 when an agent was refused or failed to write."""
    from ..integrations.agents import installers

    if not dry_run and all(p.plan is not None for p in plans):
        installers.apply_all(plans)
    root = _plan_root(plans) if dry_run else None
    if dry_run and not State.json and not sys.stdout.isatty():
        # piped (`gitmem install claude --dry-run | git apply`): the diffs' exact bytes, a CR of a CRLF file too; on a
        # terminal `_out` shows control characters as marks (a settings file is anyone's text)
        click.echo(_render_plans(plans, install, dry_run, skipped))
    else:
        _out(shapes.install_all_json(plans, install=install, dry_run=dry_run, skipped=skipped, root=root),
             lambda: _render_plans(plans, install, dry_run, skipped))
    if any(p.error for p in plans):
        sys.exit(EXIT_ERROR)


def install_options(dry_run_help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options of ``gitmem install`` / ``uninstall`` and of each agent's subcommand, the same on both so that
    they work on either side of the agent's name (``gitmem install --dry-run claude`` and ``gitmem install claude
    --dry-run``): the subcommand takes what it was not given from the group (``_given``)."""
    def deco(f: Callable[..., None]) -> Callable[..., None]:
        f = json_option(f)
        f = click.option("--dry-run", is_flag=True, help=dry_run_help)(f)
        f = click.option("--user", "scope", flag_value="user",
                         help="The agent's user-level settings (needs an AGENT).")(f)
        return click.option("--project", "scope", flag_value="project", default=True,
                            help="This repository's settings (default).")(f)
    return deco


def _given(name: str) -> object:
    """Option ``name``'s value for an agent's subcommand: its own when given there, else the group's (given before
    the agent's name), else the default."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    source = ctx.get_parameter_source(name)
    if source in (None, ParameterSource.DEFAULT) and ctx.parent is not None and name in ctx.parent.params:
        return ctx.parent.params[name]
    return ctx.params.get(name)


def _group_scope(scope: str) -> None:
    """``gitmem install --user`` / ``uninstall --user`` with no agent: refused (the user-level settings are one
    agent's at a time)."""
    if scope == "user":
        raise click.UsageError("--user needs an agent: gitmem install AGENT --user")


class _AgentGroup(click.Group):
    """``gitmem install`` / ``uninstall``: one subcommand per agent of the installers registry, each built when
    named (``get_command``), so no installer module is imported (~0.1-0.2 s: their regexes, the hook core) by a
    command that does not run or list them (every other ``gitmem`` command)."""

    def __init__(self, *args: object, install: bool, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._install = install

    def list_commands(self, ctx: click.Context) -> list[str]:
        from ..integrations.agents import installers

        return sorted(set(self.commands) | set(installers.names()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from ..integrations.agents import installers

        if cmd_name not in self.commands and cmd_name in installers.names():
            inst, uninst = _agent_commands(cmd_name)
            self.add_command(inst if self._install else uninst)
        return self.commands.get(cmd_name)


@cli.group("install", cls=_AgentGroup, install=True, invoke_without_command=True,
           subcommand_metavar="[AGENT] [OPTIONS]")
@install_options("Show the exact bytes each file would have (a diff), write nothing.")
@click.pass_context
def install_group(ctx: click.Context, scope: str, dry_run: bool) -> None:
    """Register gitmem with an agent, or with no AGENT every agent used here.

    With no AGENT: an agent is used here when its command is on PATH (claude,
    codex, gemini, copilot, cursor-agent or cursor, opencode, code) or its project
    files are in this repository (.claude/ or CLAUDE.md, .codex/config.toml,
    .gemini/settings.json or GEMINI.md, .github/hooks/ or
    .github/copilot-instructions.md, .cursor/, .opencode/ or opencode.json,
    .vscode/); a user-level folder alone (~/.codex, ~/.gemini ...) does not count.
    It installs for each in this repository and says why each agent was chosen or
    skipped. Every agent's files are read and checked first: when one is refused
    (not valid JSON, not gitmem's ...), nothing is written, and the command says
    which and why and exits 1 (so does --dry-run). Exits 1 when no agent is
    detected. Options go before or after AGENT.

    \b
    Example usage:
      gitmem install
      gitmem install --dry-run
      gitmem install claude
      gitmem install vscode --dry-run
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..integrations.agents import installers

    _group_scope(scope)
    root = _store(require=False).repo.root
    report = installers.detect_report(root, Path(os.path.expanduser("~")))
    found = [(d.agent, d.reason) for d in report if d.found]
    skipped = [d for d in report if not d.found]
    if not found:
        if not State.json:
            for d in skipped:
                _note(f"{d.agent}: skipped ({d.reason})")
        raise _no_agent_error(True)
    _run_all(installers.plan_all(found, root), True, dry_run, skipped)


@cli.group("uninstall", cls=_AgentGroup, install=False, invoke_without_command=True,
           subcommand_metavar="[AGENT] [OPTIONS]")
@install_options("Show the exact bytes each file would have (a diff), write nothing.")
@click.pass_context
def uninstall_group(ctx: click.Context, scope: str, dry_run: bool) -> None:
    """Remove what `gitmem install` registered; with no AGENT, from every agent it is installed for here.

    Every agent's files are read and checked first: when one is refused,
    nothing is written (exit 1). Options go before or after AGENT.

    \b
    Example usage:
      gitmem uninstall
      gitmem uninstall codex
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..integrations.agents import installers

    _group_scope(scope)
    root = _store(require=False).repo.root
    names = installers.installed(root)
    if not names:
        raise _no_agent_error(False)
    _run_all(installers.plan_all([(n, "gitmem is installed for it here") for n in names], root, uninstall=True),
             False, dry_run)


def _scope(name: str, user: bool) -> Path | None:
    """The root to install into for ``--project`` / ``--user``; a usage error for ``--user`` without a user scope."""
    from ..integrations.agents import installers

    if user and not installers.get(name).USER_SCOPE:
        raise click.UsageError(installers.no_user_scope(name))
    return _install_root(user)


def _agent_commands(name: str) -> tuple[click.Command, click.Command]:
    """``gitmem install <name>`` and ``gitmem uninstall <name>``, from the registry's installer ``name``."""
    from ..integrations.agents import installers

    def run(install: bool) -> None:
        user = _given("scope") == "user"
        root = _scope(name, user)
        if _given("dry_run"):  # the plan, each file's exact new bytes; nothing written
            _run_all(installers.plan_all([(name, "named on the command line")], root, uninstall=not install,
                                         user=user), install, True)
            return
        mod = installers.get(name)
        if root is not None and not user:  # as ``plan_all`` checks: no write through a link leading out of the repo
            from ..integrations.agents.installing import SettingsError

            plan = mod.plan_install(root, user=False) if install else mod.plan_uninstall(root, user=False)
            outside = installers.outside(plan, root)
            if outside is not None:
                raise SettingsError(outside, installers.OUTSIDE_HINT)
        res = mod.install(root, user=user) if install else mod.uninstall(root, user=user)
        _out(shapes.install_json(res) if install else shapes.uninstall_json(res), lambda: _render(res))

    @click.command(name, help=installers.help_text(name) + f"\n\nUndo with `gitmem uninstall {name}`.")
    @install_options("Show the exact bytes each file would have (a diff), write nothing.")
    def install_cmd(scope: str, dry_run: bool) -> None:
        run(True)

    @click.command(name, help=f"Remove what `gitmem install {name}` registered; everything else stays as it is.")
    @install_options("Show the exact bytes each file would have (a diff), write nothing.")
    def uninstall_cmd(scope: str, dry_run: bool) -> None:
        run(False)

    return install_cmd, uninstall_cmd

