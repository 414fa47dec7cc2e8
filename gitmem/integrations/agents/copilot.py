"""The GitHub Copilot CLI adapter: its hook JSON in, normalised events to ``core``, its hook JSON out.

Entry point ``gitmem-copilot-hook [EVENT]`` (``main``; also ``python -m
gitmem.integrations.agents.copilot``): one hook event (JSON) on stdin, as Copilot CLI runs a
command hook from ``<repo>/.github/hooks/*.json`` (Copilot CLI 1.0.102; install and uninstall:
``copilot_install``). Copilot's own (camelCase) events; the event name is the ``EVENT`` argument
(the input does not carry it). Common fields ``sessionId``, ``cwd``, ``timestamp`` → ``events``
(as recorded from the real CLI, ``tests/fixtures/copilot/``):

=====================  =================================================================
sessionStart           ``SessionStart`` (``source``: ``new`` → startup, ``resume``)
userPromptSubmitted    ``Prompt`` (``prompt``)
preToolUse             ``toolName`` / ``toolArgs`` (an object): ``view`` → ``BeforeFile``
                       read (``path``); ``edit`` → edit (``old_str``); ``create`` → write;
                       ``bash`` → ``BeforeShell``, then one read per file its command reads
                       (``cat``, ``head``, ``sed -n``, ``rg`` …: ``shell_reads.read_files``); any other tool: nothing
postToolUse            ``AfterTool`` (``toolResult``: ``resultType``, ``textResultForLlm``);
                       ``view`` / ``edit`` / ``create`` get Claude-style input keys
                       (``file_path``, ``old_string``, ``new_string``, ``content``)
agentStop              ``Stop`` with ``consolidate`` (``copilot -p`` exits right after); it
                       carries no final message, only ``transcriptPath``: the consolidation
                       takes the message (and any call whose hook was lost) from that
                       transcript (``copilot_transcript``)
sessionEnd             ``SessionEnd`` (``reason``)
=====================  =================================================================

Copilot gives its hooks no tool-call id: a call is spooled as ``c:<digest>.<n>``, the ``n``-th call of
that tool and input (``capture.content_id``), as the reconciliation numbers the transcript's calls.

Out: the process always exits 0; stdout is empty or one JSON object ``{"additionalContext":
<text under 10,000 characters>}`` (top level: Copilot ignores ``hookSpecificOutput`` in this
file format), only for sessionStart, userPromptSubmitted and preToolUse. Copilot puts
sessionStart's text in the first user message, userPromptSubmitted's in a
``<system_reminder>`` after the prompt, and preToolUse's in a user message right after the
tool's result (checked with the real CLI). The 10,000-character cap is an ASSUMPTION (Claude
Code's). Errors go to ``<logs>/copilot-hooks.log`` (redacted).

Copilot CLI also runs the hooks of ``.claude/settings.json`` (with ``COPILOT_CLI=1`` in their
environment and Claude tool names); ``claude.to_event`` steps aside there when gitmem's Copilot
hooks are installed (``copilot_hooks_installed``), so gitmem acts once per event.

VS Code's agent mode runs these hooks too (it loads ``.github/hooks/*.json`` and maps the camelCase
events to its own), with its own input (``vscode.is_vscode``): they step aside when gitmem's
Claude Code hooks are installed where VS Code reads them (``vscode.claude_hooks_installed``: those
act), else ``vscode`` maps the input and answers in VS Code's form.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import json
import os
import sys

from . import claude, core, vscode
from .events import AfterTool, AfterToolFailure, BeforeFile, BeforeShell, Event, Prompt, SessionEnd, SessionStart, Stop
from .shell_reads import read_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "copilot"
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under 10,000 characters)\n"
#: Events whose answer Copilot reads (all others print nothing, whatever happens).
PRINTING = ("sessionStart", "userPromptSubmitted", "preToolUse")
#: Copilot's tool → ``BeforeFile.kind`` / ``AfterTool.kind``.
FILE_TOOLS = {"view": "read", "edit": "edit", "create": "write"}
TOOL_KINDS = {**FILE_TOOLS, "bash": "shell", "grep": "search", "glob": "search"}
SHELL_TOOL = "bash"

USAGE = """usage: gitmem-copilot-hook EVENT < event.json

GitHub Copilot CLI hook handler of gitmem: reads one hook event (JSON) on stdin and prints
{"additionalContext": ...} for sessionStart, userPromptSubmitted and preToolUse, nothing
otherwise. Always exits 0. Registered by `gitmem install copilot`.
"""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def claude_input(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A file tool's ``toolArgs`` with Claude-style keys added (what capture and consolidation read)."""
    inp = dict(args)
    if isinstance(args.get("path"), str):
        inp["file_path"] = args["path"]
    if tool == "edit":
        inp["old_string"] = _str(args.get("old_str"))
        inp["new_string"] = _str(args.get("new_str"))
    if tool == "create":
        inp["content"] = _str(args.get("file_text"))
    return inp


def response_summary(tool: str, tr: Any) -> Any:
    """What capture keeps of Copilot's ``toolResult`` for ``tool`` (unredacted; JSON-like)."""
    if not isinstance(tr, dict):
        return None
    text = _str(tr.get("textResultForLlm"))
    out: dict[str, Any] = {"resultType": tr.get("resultType")}
    if tool == SHELL_TOOL:
        out["stdout"] = text
    elif tool not in FILE_TOOLS:
        out["output"] = text[:300]
    return out


def to_event(raw: Any, name: str | None) -> Event | list[Event] | None:
    """The normalised event(s) of Copilot hook input ``raw`` (decoded JSON) for event ``name`` (the hook's
    argument); None when gitmem has nothing to do with it."""
    if not isinstance(raw, dict) or not name:
        return None
    if vscode.is_vscode(raw):  # VS Code runs .github/hooks/ too
        return None if vscode.claude_hooks_installed(_str(raw.get("cwd"))) else vscode.to_event(raw, None)
    cwd = _str(raw.get("cwd"))
    if os.environ.get(claude.COPILOT_SCOPE_VAR) == "user" and claude.copilot_project_hooks(cwd, os.environ):
        return None  # the project's own gitmem hooks act; the user-level ones step aside (once per event)
    common: dict[str, Any] = {"agent": AGENT, "name": name, "session_id": _str(raw.get("sessionId")),
                              "cwd": cwd, "raw": raw, "transcript": _str(raw.get("transcriptPath"))}
    if name == "sessionStart":
        source = _str(raw.get("source"))
        return SessionStart(source="startup" if source == "new" else source, **common)
    if name == "userPromptSubmitted":
        return Prompt(prompt=_str(raw.get("prompt")), **common)
    if name == "agentStop":
        return Stop(last_message="", consolidate=True, **common)
    if name == "sessionEnd":
        return SessionEnd(reason=_str(raw.get("reason")), **common)
    if name not in ("preToolUse", "postToolUse"):
        return None
    tool = _str(raw.get("toolName"))
    args = raw.get("toolArgs")
    if isinstance(args, str):  # older releases sent a JSON string
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            args = {}
    args = args if isinstance(args, dict) else {}
    path = _str(args.get("path"))
    paths = (path,) if path and tool in FILE_TOOLS else ()
    if name == "preToolUse":
        if tool in FILE_TOOLS and path:
            old = args.get("old_str") if tool == "edit" else None
            return BeforeFile(kind=FILE_TOOLS[tool], path=path, old_text=old if isinstance(old, str) else None,
                              **{**common, "paths": paths})
        if tool == SHELL_TOOL:
            line = _str(args.get("command"))
            files = read_files(line, cwd)  # the command's rules and traps first, then the files it reads
            shell = BeforeShell(command=line, **common)
            reads = [BeforeFile(kind="read", path=f, **{**common, "paths": (f,)}) for f in files]
            return [shell, *reads] if reads else shell
        return None
    tr = raw.get("toolResult")
    inp = claude_input(tool, args) if tool in FILE_TOOLS else ({"command": _str(args.get("command"))}
                                                                if tool == SHELL_TOOL else args)
    fields: dict[str, Any] = {
        "tool": tool, "kind": TOOL_KINDS.get(tool, "other"), "input": inp, "tool_use_id": "",
        "response": response_summary(tool, tr), "path_keys": ("file_path",),
        "content_key": "content" if tool == "create" else "", **{**common, "paths": paths}}
    if isinstance(tr, dict) and tr.get("resultType") not in (None, "success"):
        return AfterToolFailure(error=_str(tr.get("textResultForLlm"))[:500], **fields)
    return AfterTool(**fields)


def context_output(text: str | None) -> dict[str, Any] | None:
    """The JSON Copilot reads, or None for no text; ``text`` is cut under ``CONTEXT_CHAR_LIMIT``."""
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    if text is None:
        return None
    return {"additionalContext": text}


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: None for the events that print nothing (VS Code's
    events: ``vscode.output``)."""
    if event.agent == vscode.AGENT:
        return vscode.output(event, text)
    if event.name not in PRINTING:
        return None
    return context_output(text)


def main(argv: list[str] | None = None) -> int:
    """``gitmem-copilot-hook EVENT``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output, need_event_arg=True)


if __name__ == "__main__":
    sys.exit(main())
