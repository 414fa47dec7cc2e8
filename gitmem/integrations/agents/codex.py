"""The Codex CLI adapter: its hook JSON in, normalised events to ``core``, its hook JSON out.

Entry point ``gitmem-codex-hook [EVENT]`` (``main``; also ``python -m
gitmem.integrations.agents.codex``): one hook event (JSON) on stdin, as Codex runs a command
hook from ``<repo>/.codex/hooks.json`` (codex-cli 0.169.0; install and uninstall:
``codex_install``). Codex runs no project hook until the user trusts it in ``/hooks``.

In: ``hook_event_name`` (else the ``EVENT`` argument); common fields ``session_id``, ``cwd``,
``transcript_path``, ``model`` → ``events``:

====================  =================================================================
SessionStart          ``SessionStart`` (``source``: startup, resume, clear, compact)
UserPromptSubmit      ``Prompt`` (``prompt``)
PreToolUse            ``Bash`` → ``BeforeShell`` (its rules and traps), then, when the
                      command line reads files (``cat``, ``head``, ``tail``, ``less``,
                      ``more``, ``nl``, ``sed -n``, ``rg`` / ``grep`` with file arguments;
                      parsed with ``shlex``, only arguments that are files), one
                      ``BeforeFile`` read per file; ``apply_patch`` (the patch in
                      ``tool_input.command``) → one ``BeforeFile`` edit per file the patch
                      updates, moves or deletes (its first hunk's old text as
                      ``old_text``), ``write`` per file it adds; any other tool: nothing
PostToolUse           ``AfterTool``: ``Bash`` → shell; ``apply_patch`` → one edit (or
                      write) per file, ``{file_path, old_string, new_string}`` (or
                      ``content``) of its first hunk, so consolidation sees every file
Stop                  ``Stop`` (``last_assistant_message``) with ``consolidate``: Codex
                      cuts SessionEnd hooks to 3 s and ``codex exec`` may end right after
                      the turn, so each turn's spool is consolidated from Stop (a later
                      batch of the same session updates its memory)
SessionEnd            ``SessionEnd`` (``reason``)
====================  =================================================================

``transcript_path`` (the session's rollout, ``codex_transcript``) goes with every event: the
consolidation reconciles the spool with it, by ``tool_use_id``.

Out: the process always exits 0; stdout is empty or one JSON object ``{"hookSpecificOutput":
{"hookEventName": <event>, "additionalContext": <text under 10,000 characters>}}``, only for
SessionStart, UserPromptSubmit and PreToolUse; Codex adds that text to the conversation as a
``developer`` message (checked with the real codex-cli 0.169.0: the model's requests carry it
after the instructions, after the prompt, and after the tool call). The input shapes above are
those it sends (``tests/fixtures/codex/``: ``Bash`` with ``{"command": str}`` also when the model
called ``exec_command``; ``apply_patch`` with ``{"command": patch}``; ``tool_response`` a
string). The 10,000-character cap is an ASSUMPTION (Claude Code's; Codex documents none).
Several files' memories of one tool call are joined into one text. Bad input (not JSON, not an
object, an unknown event, a ``cwd`` outside any repository, a repository without ``.gitmem/``)
prints nothing. Errors go to ``<logs>/codex-hooks.log`` (redacted).

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import shlex
import sys

from . import core
from .events import AfterTool, BeforeFile, BeforeShell, Event, Prompt, SessionEnd, SessionStart, Stop
from .patches import patch_after, patch_before, patch_text
from .shell_reads import read_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "codex"
#: Longest additionalContext gitmem prints (assumed like Claude Code's 10,000-character cap, with room).
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under 10,000 characters)\n"
#: Events whose answer Codex reads (all others print nothing, whatever happens).
PRINTING = ("SessionStart", "UserPromptSubmit", "PreToolUse")
SHELL_TOOL = "Bash"
PATCH_TOOL = "apply_patch"
USAGE = """usage: gitmem-codex-hook [EVENT] < event.json

Codex CLI hook handler of gitmem: reads one hook event (JSON) on stdin and prints the
hookSpecificOutput JSON for SessionStart, UserPromptSubmit and PreToolUse, nothing otherwise.
Always exits 0. Registered by `gitmem install codex`.
"""


# -- in: command lines -------------------------------------------------------------------------------


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def command_line(ti: dict[str, Any]) -> str:
    """The shell command of a ``Bash`` call's ``tool_input``: a string, or an argv whose last item is the
    script of ``bash -lc SCRIPT`` (else the argv joined)."""
    cmd = ti.get("command")
    if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
        if len(cmd) >= 3 and cmd[-2] in ("-c", "-lc"):
            return str(cmd[-1])
        return shlex.join(cmd)
    return _str(cmd)


def response_summary(tool: str, tr: Any) -> Any:
    """What capture keeps of Codex's ``tool_response`` for ``tool`` (unredacted; JSON-like)."""
    if isinstance(tr, str):
        return {"stdout": tr} if tool == SHELL_TOOL else {"output": tr[:300]}
    if isinstance(tr, dict):
        keys = ("stdout", "stderr", "output", "exit_code", "exitCode", "success")
        return {k: tr.get(k) for k in keys if tr.get(k) not in (None, "")}
    return tr


# -- in: events ----------------------------------------------------------------------------------


def to_event(raw: Any, argv_event: str | None = None) -> Event | list[Event] | None:
    """The normalised event(s) of Codex hook input ``raw`` (decoded JSON): a list when one tool call stands for
    several (a patch of several files, a command reading several); None when gitmem has nothing to do with it."""
    if not isinstance(raw, dict):
        return None
    name = raw.get("hook_event_name")
    name = name if isinstance(name, str) else argv_event
    cwd = _str(raw.get("cwd"))
    common: dict[str, Any] = {"agent": AGENT, "name": name or "", "session_id": _str(raw.get("session_id")),
                              "cwd": cwd, "raw": raw, "transcript": _str(raw.get("transcript_path"))}
    if name == "SessionStart":
        return SessionStart(source=str(raw.get("source") or ""), **common)
    if name == "UserPromptSubmit":
        return Prompt(prompt=_str(raw.get("prompt")), **common)
    if name == "Stop":
        return Stop(last_message=_str(raw.get("last_assistant_message")), consolidate=True, **common)
    if name == "SessionEnd":
        return SessionEnd(reason=str(raw.get("reason") or ""), **common)
    if name not in ("PreToolUse", "PostToolUse"):
        return None
    tool = str(raw.get("tool_name") or "")
    ti = raw.get("tool_input")
    ti = ti if isinstance(ti, dict) else {}
    if name == "PreToolUse":
        if tool == SHELL_TOOL:
            line = command_line(ti)
            files = read_files(line, cwd)  # the command's rules and traps first, then the files it reads
            shell = BeforeShell(command=line, **{**common, "paths": ()})
            reads = [BeforeFile(kind="read", path=f, **{**common, "paths": (f,)}) for f in files]
            return [shell, *reads] if reads else shell
        if tool == PATCH_TOOL:
            return patch_before(patch_text(ti), common) or None
        return None
    tool_use_id = str(raw["tool_use_id"]) if raw.get("tool_use_id") else ""
    response = response_summary(tool, raw.get("tool_response"))
    if tool == PATCH_TOOL:
        return patch_after(tool, patch_text(ti), tool_use_id, response, common) or None
    kind = "shell" if tool == SHELL_TOOL else "other"
    inp = {"command": command_line(ti)} if tool == SHELL_TOOL else ti
    return AfterTool(tool=tool, kind=kind, input=inp, tool_use_id=tool_use_id, response=response, **common)


# -- out -----------------------------------------------------------------------------------------


def context_output(event_name: str, text: str | None) -> dict[str, Any] | None:
    """The JSON Codex reads, or None for no text; ``text`` is cut under ``CONTEXT_CHAR_LIMIT``."""
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: None for the events that print nothing."""
    if event.name not in PRINTING:
        return None
    return context_output(event.name, text)


def main(argv: list[str] | None = None) -> int:
    """``gitmem-codex-hook [EVENT]``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output)


if __name__ == "__main__":
    sys.exit(main())
