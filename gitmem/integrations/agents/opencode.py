"""The OpenCode adapter: what gitmem's OpenCode plugin sends in, normalised events to ``core``, its answer out.

Entry point ``gitmem-opencode-hook EVENT`` (``main``; also ``python -m
gitmem.integrations.agents.opencode``): one JSON object on stdin, as gitmem's OpenCode plugin
(``gitmem/resources/opencode-plugin.js``, written to ``.opencode/plugins/gitmem.js`` by
``opencode_install``) spawns it from OpenCode's plugin hooks (OpenCode 1.18.33; the hooks'
inputs and outputs are ``Hooks`` of ``@opencode-ai/plugin`` 1.18.33).
The input is ``{"cwd": <the plugin's directory>, "input": <the hook's input>, "output": <the
hook's output, trimmed>}``, OpenCode's own objects (as recorded from the real CLI,
``tests/fixtures/opencode/``):

=====================  =================================================================
session.start          (the plugin's: a session's first message or model call in this
                       process, or the first after ``session.compacted``) ``SessionStart``
                       (``input.source``: ``startup`` for a session created in this
                       process, ``resume``, ``compact``)
chat.message           ``Prompt``: the user message's text parts (``output.parts``, the
                       ``synthetic`` ones left out)
tool.execute.before    ``input.tool`` / ``output.args``: ``read`` → ``BeforeFile`` read
                       (``filePath``); ``edit`` → edit (``oldString``); ``write`` → write;
                       ``apply_patch`` (``patchText``, a Codex-style patch) → one per file;
                       ``bash`` → ``BeforeShell`` (``workdir`` as its folder), then one read
                       per file its command reads (``shell_reads``); other tools: nothing
tool.execute.after     ``AfterTool`` (``output.output``: what the model was given; file tools
                       get Claude-style input keys ``file_path``, ``old_string``,
                       ``new_string``, ``content``)
session.idle           ``Stop`` with ``consolidate`` (the turn ended; ``opencode run`` exits)
session.end            (the plugin's: OpenCode disposes of the plugin, at exit) ``SessionEnd``
=====================  =================================================================

Out: the process always exits 0; stdout is empty or one JSON object ``{"context": <text under
10,000 characters>}``, only for session.start, chat.message and tool.execute.before. The plugin
puts session.start's text in the system prompt (``experimental.chat.system.transform``, so it
survives compaction), chat.message's in a synthetic text part of the user's message, and
tool.execute.before's at the end of that tool's output (``tool.execute.after``), which is what
the model reads next. OpenCode documents no cap on either: the 10,000 characters are gitmem's own,
as for the other agents. Errors go to ``<logs>/opencode-hooks.log`` (redacted).

A tool that fails (throws) never reaches ``tool.execute.after`` in OpenCode 1.18.33: failures are
not captured.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import os
import sys

from . import core
from .events import AfterTool, BeforeFile, BeforeShell, Event, Prompt, SessionEnd, SessionStart, Stop
from .patches import patch_after, patch_before
from .shell_reads import read_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "opencode"
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under 10,000 characters)\n"
#: Events whose answer the plugin reads (all others print nothing, whatever happens).
PRINTING = ("session.start", "chat.message", "tool.execute.before")
#: OpenCode's file tools (1.18.33: ``read``, ``edit``, ``write``) → ``BeforeFile.kind`` / ``AfterTool.kind``.
FILE_TOOLS = {"read": "read", "edit": "edit", "write": "write"}
SHELL_TOOL = "bash"
PATCH_TOOL = "apply_patch"
TOOL_KINDS = {**FILE_TOOLS, SHELL_TOOL: "shell", PATCH_TOOL: "edit", "grep": "search", "glob": "search",
              "list": "search"}
#: The tools whose ``tool.execute.before`` can give context: the plugin spawns the hook for these only.
BEFORE_TOOLS = (*FILE_TOOLS, SHELL_TOOL, PATCH_TOOL)
#: OpenCode's argument keys → the Claude-style keys capture and consolidation read.
CLAUDE_KEYS = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string", "content": "content"}

USAGE = """usage: gitmem-opencode-hook EVENT < hook.json

OpenCode hook handler of gitmem, spawned by gitmem's OpenCode plugin (.opencode/plugins/gitmem.js):
reads one hook call (JSON) on stdin and prints {"context": ...} for session.start, chat.message and
tool.execute.before, nothing otherwise. Always exits 0. Installed by `gitmem install opencode`.
"""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def claude_input(args: dict[str, Any]) -> dict[str, Any]:
    """A file tool's ``args`` with Claude-style keys added (``CLAUDE_KEYS``)."""
    inp = dict(args)
    for k, claude_key in CLAUDE_KEYS.items():
        if isinstance(args.get(k), str):
            inp[claude_key] = args[k]
    return inp


def prompt_text(parts: Any) -> str:
    """The user's own text of a message's ``parts`` (text parts that are not ``synthetic`` or ``ignored``)."""
    if not isinstance(parts, list):
        return ""
    return "\n".join(_str(p.get("text")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
                     and not p.get("synthetic") and not p.get("ignored") and _str(p.get("text")))


def response_summary(tool: str, out: dict[str, Any]) -> Any:
    """What capture keeps of a tool's output for ``tool`` (unredacted; JSON-like)."""
    text = _str(out.get("output"))
    meta = _dict(out.get("metadata"))
    if tool == SHELL_TOOL:
        return {"stdout": text, "exit_code": meta.get("exit")}
    if tool in FILE_TOOLS or tool == PATCH_TOOL:
        return {"title": _str(out.get("title"))[:300]}
    return {"output": text[:300]}


def _before_tool(tool: str, args: dict[str, Any], common: dict[str, Any]) -> Event | list[Event] | None:
    cwd = common["cwd"]
    if tool in FILE_TOOLS:
        path = _str(args.get("filePath"))
        if not path:
            return None
        old = args.get("oldString") if tool == "edit" else None
        return BeforeFile(kind=FILE_TOOLS[tool], path=path, old_text=old if isinstance(old, str) else None,
                          **{**common, "paths": (path,)})
    if tool == PATCH_TOOL:
        return patch_before(_str(args.get("patchText")), common) or None
    if tool == SHELL_TOOL:
        line = _str(args.get("command"))
        workdir = _str(args.get("workdir"))
        folder = os.path.join(cwd, workdir) if workdir and cwd else workdir or cwd
        files = read_files(line, folder)  # the command's rules and traps first, then the files it reads
        shell = BeforeShell(command=line, **{**common, "cwd": folder or cwd})
        reads = [BeforeFile(kind="read", path=f, **{**common, "paths": (f,)}) for f in files]
        return [shell, *reads] if reads else shell
    return None


def _after_tool(tool: str, args: dict[str, Any], out: dict[str, Any], call_id: str,
                common: dict[str, Any]) -> Event | list[Event] | None:
    response = response_summary(tool, out)
    if tool == PATCH_TOOL:
        return patch_after(tool, _str(args.get("patchText")), call_id, response, common) or None
    path = _str(args.get("filePath")) if tool in FILE_TOOLS else ""
    inp = claude_input(args) if tool in FILE_TOOLS else ({"command": _str(args.get("command"))}
                                                          if tool == SHELL_TOOL else args)
    return AfterTool(tool=tool, kind=TOOL_KINDS.get(tool, "other"), input=inp, tool_use_id=call_id,
                     response=response, path_keys=("file_path",), content_key="content" if tool == "write" else "",
                     **{**common, "paths": (path,) if path else ()})


def to_event(raw: Any, name: str | None) -> Event | list[Event] | None:
    """The normalised event(s) of the plugin's hook call ``raw`` (decoded JSON) for event ``name`` (the hook's
    argument); None when gitmem has nothing to do with it."""
    if not isinstance(raw, dict) or not name:
        return None
    inp, out = _dict(raw.get("input")), _dict(raw.get("output"))
    common: dict[str, Any] = {"agent": AGENT, "name": name, "session_id": _str(inp.get("sessionID")),
                              "cwd": _str(raw.get("cwd")), "raw": raw}
    if name == "session.start":
        return SessionStart(source=_str(inp.get("source")), **common)
    if name == "chat.message":
        return Prompt(prompt=prompt_text(out.get("parts")), **common)
    if name == "session.idle":
        return Stop(last_message="", consolidate=True, **common)
    if name == "session.end":
        return SessionEnd(reason="exit", **common)
    tool = _str(inp.get("tool"))
    if name == "tool.execute.before":
        return _before_tool(tool, _dict(out.get("args")), common)
    if name == "tool.execute.after":
        return _after_tool(tool, _dict(inp.get("args")), out, _str(inp.get("callID")), common)
    return None


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: ``{"context": text}`` cut under
    ``CONTEXT_CHAR_LIMIT``, or None (no text, or an event that prints nothing)."""
    if event.name not in PRINTING:
        return None
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    return None if text is None else {"context": text}


def main(argv: list[str] | None = None) -> int:
    """``gitmem-opencode-hook EVENT``: handle the hook call on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output, need_event_arg=True)


if __name__ == "__main__":
    sys.exit(main())
