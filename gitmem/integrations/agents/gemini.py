"""The Gemini CLI adapter: its hook JSON in, normalised events to ``core``, its hook JSON out.

Entry point ``gitmem-gemini-hook [EVENT]`` (``main``; also ``python -m
gitmem.integrations.agents.gemini``): one hook event (JSON) on stdin, as Gemini CLI runs a
command hook from ``<repo>/.gemini/settings.json`` (Gemini CLI 0.61.0; install and uninstall:
``gemini_install``).

In: ``hook_event_name`` (else the ``EVENT`` argument); common fields ``session_id``,
``transcript_path``, ``cwd``, ``timestamp`` → ``events``:

====================  =================================================================
SessionStart          ``SessionStart`` (``source``: startup, resume, clear)
BeforeAgent           ``Prompt`` (``prompt``, without the ``<hook_context>`` block of
                      SessionStart's text that Gemini CLI prepends to it under ``-p``)
BeforeTool            nothing: Gemini CLI takes no context there (its output can only deny
                      or rewrite the call), so a file's memories come with AfterTool
AfterTool             ``AfterTool`` (captured), followed by the file's ``BeforeFile`` so
                      its memories are appended to the tool's output: ``read_file`` →
                      a read of ``file_path``; ``replace`` → an edit (``new_string``, now
                      in the file, locates the edited symbol); ``write_file`` → a write;
                      ``run_shell_command`` → ``BeforeShell`` (the command's rules and
                      traps, after it ran: the nearest event) and one read per file its
                      command line reads (``shell_reads``); a ``tool_response.error`` →
                      ``AfterToolFailure`` (the memories matching the failure)
AfterAgent            ``Stop`` (``prompt_response``) with ``consolidate``: SessionEnd is
                      best effort (the CLI does not wait for it) and ``gemini -p`` ends
                      right after the turn, so each turn's spool is consolidated here
SessionEnd            ``SessionEnd`` (``reason``)
PreCompress           ``BeforeCompact`` for ``trigger`` "manual" (``/compress``) only: 0.61.0 fires
                      an "auto" PreCompress on every turn, before its compression service
                      checks the threshold (ChatCompressionService.compress), so "auto" does
                      not mean the history was compressed; forgetting what was given then
                      would give every file's memories again on every turn
====================  =================================================================

``transcript_path`` (the session's chat, ``gemini_transcript``) goes with every event: the
consolidation reconciles the spool with it. Gemini CLI gives its hooks no tool-call id: a call is
spooled as ``c:<digest>.<n>``, the ``n``-th call of that tool and input (``capture.content_id``), as
the reconciliation numbers the transcript's calls.

Out: the process always exits 0; stdout is empty or one JSON object ``{"hookSpecificOutput":
{"hookEventName": <event>, "additionalContext": <text under 10,000 characters>}}``, only for
SessionStart, BeforeAgent and AfterTool. Checked with the real Gemini CLI 0.61.0 under ``gemini
-p``: SessionStart's text reaches the model in ``<hook_context>`` before the prompt, BeforeAgent's
after it, AfterTool's appended to the tool's output (``functionResponse``). The input shapes above
are those it sends (``tests/fixtures/gemini/``; ``tool_response`` is ``{"llmContent",
"returnDisplay"[, "error"]}``; no tool-call id). The 10,000-character cap is an ASSUMPTION
(Claude Code's; Gemini CLI documents none). Bad input (not JSON, not an object, an unknown
event, a ``cwd`` outside any repository, a repository without ``.gitmem/``) prints nothing.
Errors go to ``<logs>/gemini-hooks.log`` (redacted).

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import json
import os
import sys

from . import core
from .codex import context_output
from .events import (
    AfterTool,
    AfterToolFailure,
    BeforeCompact,
    BeforeFile,
    BeforeShell,
    Event,
    Prompt,
    SessionEnd,
    SessionStart,
    Stop,
)
from .shell_reads import read_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "gemini"
#: Events whose answer Gemini CLI reads (all others print nothing, whatever happens).
PRINTING = ("SessionStart", "BeforeAgent", "AfterTool")
SHELL_TOOL = "run_shell_command"
#: File tools: (``BeforeFile.kind`` / ``AfterTool.kind``).
FILE_TOOLS = {"read_file": "read", "replace": "edit", "write_file": "write"}
#: Longest tool output kept in the spool (the file's text is in git; the output is for the summary).
RESPONSE_CHARS = 300
#: The tags around a hook's context in the prompt (Gemini CLI 0.61.0 puts SessionStart's there under ``-p``).
HOOK_CONTEXT = "<hook_context>"
HOOK_CONTEXT_END = "</hook_context>"

USAGE = """usage: gitmem-gemini-hook [EVENT] < event.json

Gemini CLI hook handler of gitmem: reads one hook event (JSON) on stdin and prints the
hookSpecificOutput JSON for SessionStart, BeforeAgent and AfterTool, nothing otherwise.
Always exits 0. Registered by `gitmem install gemini`.
"""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def user_prompt(prompt: str) -> str:
    """``prompt`` without the ``<hook_context>…</hook_context>`` blocks Gemini CLI prepends to it under ``-p``
    (SessionStart's context: it is not what the user asked)."""
    while prompt.lstrip().startswith(HOOK_CONTEXT):
        end = prompt.find(HOOK_CONTEXT_END)
        if end < 0:
            return prompt
        prompt = prompt[end + len(HOOK_CONTEXT_END):]
    return prompt.strip()


def response_summary(tool: str, tr: Any) -> Any:
    """What capture keeps of Gemini's ``tool_response`` for ``tool`` (unredacted; JSON-like)."""
    if not isinstance(tr, dict):
        return {"output": _str(tr)[:RESPONSE_CHARS]} if tr else None
    content = tr.get("llmContent")
    display = tr.get("returnDisplay")
    if tool == SHELL_TOOL:
        out = display if isinstance(display, str) and display else _str(content)
        return {"stdout": out}
    if tool == "read_file":
        return {"chars": len(content)} if isinstance(content, str) else None
    if isinstance(content, str) and content:
        return {"output": content[:RESPONSE_CHARS]}
    return None


def _after_tool(raw: dict[str, Any], common: dict[str, Any]) -> Event | list[Event] | None:
    tool = str(raw.get("tool_name") or "")
    ti = raw.get("tool_input")
    ti = ti if isinstance(ti, dict) else {}
    tr = raw.get("tool_response")
    error = tr.get("error") if isinstance(tr, dict) else None
    response = response_summary(tool, tr)
    kind = FILE_TOOLS.get(tool)
    path = _str(ti.get("file_path"))
    fields: dict[str, Any] = {"tool": tool, "tool_use_id": "", "response": response, **common}
    if kind and path:
        if kind == "read":
            inp: dict[str, Any] = {k: ti[k] for k in ("file_path", "start_line", "end_line") if k in ti}
        elif kind == "edit":
            inp = {"file_path": path, "old_string": _str(ti.get("old_string")),
                   "new_string": _str(ti.get("new_string"))}
        else:
            inp = {"file_path": path, "content": _str(ti.get("content"))}
        fields.update(kind=kind, input=inp, path_keys=("file_path",), content_key="content" if kind == "write" else "",
                      paths=(path,))
        if error:
            return AfterToolFailure(error=json.dumps(error) if not isinstance(error, str) else error, **fields)
        after = AfterTool(**fields)
        old = (_str(ti.get("new_string")) or None) if kind == "edit" else None
        return [after, BeforeFile(kind=kind, path=path, old_text=old, **{**common, "paths": (path,)})]
    if tool == SHELL_TOOL:
        line = _str(ti.get("command"))
        fields.update(kind="shell", input={"command": line})
        where = _str(ti.get("dir_path"))
        cwd = common["cwd"]
        base = os.path.join(cwd, where) if where and cwd else where or cwd
        # no context before a tool: the command's rules and traps come with its output (the nearest event)
        shell = BeforeShell(command=line, **{**common, "cwd": base})
        if error:
            return [AfterToolFailure(error=json.dumps(error) if not isinstance(error, str) else error, **fields), shell]
        files = read_files(line, base)
        files = [f if os.path.isabs(f) or not where else os.path.join(where, f) for f in files]
        return [AfterTool(**fields), shell, *(BeforeFile(kind="read", path=f, **{**common, "paths": (f,)})
                                             for f in files)]
    fields.update(kind="other", input=ti)
    if error:
        return AfterToolFailure(error=json.dumps(error) if not isinstance(error, str) else error, **fields)
    return AfterTool(**fields)


def to_event(raw: Any, argv_event: str | None = None) -> Event | list[Event] | None:
    """The normalised event(s) of Gemini CLI hook input ``raw`` (decoded JSON): a list for a tool call whose output
    gets a file's memories (the capture first, then one ``BeforeFile`` per file); None when gitmem has nothing to do
    with it."""
    if not isinstance(raw, dict):
        return None
    name = raw.get("hook_event_name")
    name = name if isinstance(name, str) else argv_event
    common: dict[str, Any] = {"agent": AGENT, "name": name or "", "session_id": _str(raw.get("session_id")),
                              "cwd": _str(raw.get("cwd")), "raw": raw, "transcript": _str(raw.get("transcript_path"))}
    if name == "SessionStart":
        return SessionStart(source=str(raw.get("source") or ""), **common)
    if name == "BeforeAgent":
        return Prompt(prompt=user_prompt(_str(raw.get("prompt"))), **common)
    if name == "AfterTool":
        return _after_tool(raw, common)
    if name == "AfterAgent":
        return Stop(last_message=_str(raw.get("prompt_response")), consolidate=True, **common)
    if name == "SessionEnd":
        return SessionEnd(reason=str(raw.get("reason") or ""), **common)
    if name == "PreCompress":
        trigger = str(raw.get("trigger") or "")
        return BeforeCompact(trigger=trigger, **common) if trigger == "manual" else None
    return None


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: None for the events that print nothing."""
    if event.name not in PRINTING:
        return None
    return context_output(event.name, text)


def main(argv: list[str] | None = None) -> int:
    """``gitmem-gemini-hook [EVENT]``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output)


if __name__ == "__main__":
    sys.exit(main())
