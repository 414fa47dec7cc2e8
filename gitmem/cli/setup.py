"""Setting gitmem up: ``init``, ``hooks install|uninstall|status``, ``install|uninstall <agent>``, ``doctor``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import shapes
from .base import EXIT_ERROR, _out, _store, cli, json_option

if TYPE_CHECKING:
    from ..integrations.agents.claude_install import ClaudeInstall
    from ..integrations.agents.codex_install import CodexInstall
    from ..integrations.agents.copilot_install import CopilotInstall
    from ..integrations.agents.gemini_install import GeminiInstall


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
        lines.append("With Claude Code: gitmem install claude   (memories at session start, per prompt, per file)")
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


@cli.group("install")
def install_group() -> None:
    """Register gitmem with an agent."""


@cli.group("uninstall")
def uninstall_group() -> None:
    """Remove what `gitmem install` registered."""


def _claude_target(user: bool) -> Path | None:
    return None if user else _store(require=False).repo.root


def _render_claude(res: ClaudeInstall, verb: str) -> str:
    lines = [f"{verb if Path(p).exists() else 'removed'} {p}" for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


@install_group.command("claude")
@click.option("--project", "scope", flag_value="project", default=True,
              help="The project's .claude/settings.json and .mcp.json (default).")
@click.option("--user", "scope", flag_value="user", help="~/.claude/settings.json and ~/.claude.json.")
@json_option
def install_claude(scope: str) -> None:
    """Register gitmem's Claude Code hooks and MCP server (merged with what is there; idempotent).

    \b
    Hooks: SessionStart, UserPromptSubmit and PreToolUse (Read|Edit|Write) inject
    memories; PostToolUse, Stop and SessionEnd capture the session for consolidation.
    Undo with `gitmem uninstall claude`.
    """
    from ..integrations.agents.claude_install import install

    user = scope == "user"
    res = install(_claude_target(user), user=user)
    _out(shapes.claude_install_json(res), lambda: _render_claude(res, "updated"))


@uninstall_group.command("claude")
@click.option("--project", "scope", flag_value="project", default=True, help="The project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="The user's settings.")
@json_option
def uninstall_claude(scope: str) -> None:
    """Remove gitmem's Claude Code hooks and MCP server; everything else stays as it is."""
    from ..integrations.agents.claude_install import uninstall

    user = scope == "user"
    res = uninstall(_claude_target(user), user=user)
    _out(shapes.claude_uninstall_json(res), lambda: _render_claude(res, "updated"))


def _render_codex(res: CodexInstall) -> str:
    lines = [f"{'updated' if Path(p).exists() else 'removed'} {p}" for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


@install_group.command("codex")
@click.option("--project", "scope", flag_value="project", default=True,
              help="The project's .codex/hooks.json (default).")
@click.option("--user", "scope", flag_value="user", help="$CODEX_HOME/hooks.json (~/.codex/hooks.json).")
@json_option
def install_codex(scope: str) -> None:
    """Register gitmem's Codex CLI hooks (merged with what is there; idempotent).

    \b
    Hooks: SessionStart, UserPromptSubmit and PreToolUse (Bash reads, apply_patch)
    inject memories; PostToolUse, Stop and SessionEnd capture the session for
    consolidation. Codex runs them only once you trust them in /hooks. The MCP
    server is not written (no TOML writer): the output says what to add to config.toml.
    Undo with `gitmem uninstall codex`.
    """
    from ..integrations.agents.codex_install import install

    user = scope == "user"
    res = install(_claude_target(user), user=user)
    _out(shapes.codex_install_json(res), lambda: _render_codex(res))


@uninstall_group.command("codex")
@click.option("--project", "scope", flag_value="project", default=True, help="The project's hooks (default).")
@click.option("--user", "scope", flag_value="user", help="The user's hooks.")
@json_option
def uninstall_codex(scope: str) -> None:
    """Remove gitmem's Codex CLI hooks; everything else stays as it is."""
    from ..integrations.agents.codex_install import uninstall

    user = scope == "user"
    res = uninstall(_claude_target(user), user=user)
    _out(shapes.codex_uninstall_json(res), lambda: _render_codex(res))


def _render_gemini(res: GeminiInstall) -> str:
    lines = [f"{'updated' if Path(p).exists() else 'removed'} {p}" for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


@install_group.command("gemini")
@click.option("--project", "scope", flag_value="project", default=True,
              help="The project's .gemini/settings.json (default).")
@click.option("--user", "scope", flag_value="user", help="~/.gemini/settings.json.")
@json_option
def install_gemini(scope: str) -> None:
    """Register gitmem's Gemini CLI hooks and MCP server (merged with what is there; idempotent).

    \b
    Hooks: SessionStart and BeforeAgent inject memories; AfterTool appends a file's
    memories to read_file, replace, write_file and shell reads (cat, head, sed -n, rg)
    and captures the call; AfterAgent and SessionEnd hand the session to consolidation.
    The MCP server goes in mcpServers.gitmem. Undo with `gitmem uninstall gemini`.
    """
    from ..integrations.agents.gemini_install import install

    user = scope == "user"
    res = install(_claude_target(user), user=user)
    _out(shapes.gemini_install_json(res), lambda: _render_gemini(res))


@uninstall_group.command("gemini")
@click.option("--project", "scope", flag_value="project", default=True, help="The project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="The user's settings.")
@json_option
def uninstall_gemini(scope: str) -> None:
    """Remove gitmem's Gemini CLI hooks and MCP server; everything else stays as it is."""
    from ..integrations.agents.gemini_install import uninstall

    user = scope == "user"
    res = uninstall(_claude_target(user), user=user)
    _out(shapes.gemini_uninstall_json(res), lambda: _render_gemini(res))


def _render_copilot(res: CopilotInstall) -> str:
    lines = [f"{'updated' if Path(p).exists() else 'removed'} {p}" for p in res.changed] or ["nothing to change"]
    return "\n".join(lines + [f"note: {n}" for n in res.notes])


@install_group.command("copilot")
@json_option
def install_copilot() -> None:
    """Register gitmem's GitHub Copilot CLI hooks and MCP server in this repository (idempotent).

    \b
    Hooks: .github/hooks/gitmem.json, gitmem's own file. sessionStart,
    userPromptSubmitted and preToolUse (view, edit, create, bash reads) inject
    memories; postToolUse, agentStop and sessionEnd capture the session for
    consolidation. MCP server: `gitmem` in .github/mcp.json. With `gitmem install
    claude` too, Copilot (which also runs .claude/settings.json's hooks) gets
    gitmem once. Undo with `gitmem uninstall copilot`.
    """
    from ..integrations.agents.copilot_install import install

    res = install(_store(require=False).repo.root)
    _out(shapes.copilot_install_json(res), lambda: _render_copilot(res))


@uninstall_group.command("copilot")
@json_option
def uninstall_copilot() -> None:
    """Remove gitmem's GitHub Copilot CLI hooks file and MCP entry; everything else stays as it is."""
    from ..integrations.agents.copilot_install import uninstall

    res = uninstall(_store(require=False).repo.root)
    _out(shapes.copilot_uninstall_json(res), lambda: _render_copilot(res))
