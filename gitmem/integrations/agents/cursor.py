"""The Cursor adapter: its hook JSON in, normalised events to ``core``, its hook JSON out.

Entry point ``gitmem-cursor-hook [EVENT]`` (``main``; also ``python -m
gitmem.integrations.agents.cursor``): one hook event (JSON) on stdin, as Cursor's agent (the
editor's and the ``cursor-agent`` CLI's) runs a command hook from ``<repo>/.cursor/hooks.json`` or
``~/.cursor/hooks.json`` (``{"version": 1, "hooks": {<event>: [{"command": ...}]}}``; install
and uninstall: ``cursor_install``).

The protocol, as documented for Cursor 2.4+ (cursor.com/docs/hooks, read as quoted on 2026-07-06
in Mathews-Tom/archex#445 and on 2026-09-17 in OthmanAdi/planning-with-files#262) and as the
cursor-agent 2026.07.23-e383d2b bundle builds it (postToolUse's payload, quoted in
cursor/cookbook#50). Not checked against a running Cursor: neither the editor nor ``cursor-agent``
can be installed from a package registry (the npm package ``cursor-agent`` is someone else's),
so the tests replay the documented JSON (``tests/fixtures/cursor/``).

In: ``hook_event_name`` (else the ``EVENT`` argument); common fields ``conversation_id`` (the
session), ``generation_id``, ``model``, ``cursor_version``, ``workspace_roots`` (the first one is
the working folder), ``user_email``, ``transcript_path`` → ``events``:

=====================  ===================================================================
sessionStart           ``SessionStart`` (startup)
beforeSubmitPrompt     ``Prompt`` (``prompt``): its memories are held (``core.hold``) and
                       given with the next postToolUse, see below
postToolUse            ``tool_name`` / ``tool_input`` / ``tool_output`` / ``tool_use_id``:
                       ``AfterTool`` (captured; not the file-editing tools, captured from
                       afterFileEdit), then the file's ``BeforeFile`` so its memories come
                       after the tool's output: ``Read`` → a read of ``file_path`` (or
                       ``path``, ``target_file``); ``Write`` / ``Edit`` / ``StrReplace`` /
                       ``MultiEdit`` → an edit (``new_string``, now in the file, locates the
                       edited symbol) or a write; ``Shell`` → ``BeforeShell`` (the
                       command's rules and traps, after it ran: the nearest event) and
                       one read per file its command line reads (``shell_reads``)
postToolUseFailure     ``AfterToolFailure`` (``error_message``): the memories matching the
                       failure are held and given with the next postToolUse
afterFileEdit          ``AfterTool`` edit of ``file_path`` (its first ``edits`` item's
                       ``old_string`` / ``new_string``): what consolidation reads
afterAgentResponse     ``Stop`` (``text``: the agent's message, spooled for consolidation)
stop                   ``Stop`` with ``consolidate``: sessionEnd is not sent by every
                       Cursor and ``cursor-agent -p`` ends right after the turn
sessionEnd             ``SessionEnd`` (``reason``)
preCompact             ``BeforeCompact`` (``trigger``)
=====================  ===================================================================

Out: the process always exits 0 and never denies, blocks or asks: stdout is empty or one JSON
object ``{"additional_context": <text under 10,000 characters>}``, only for sessionStart (added to
the conversation's initial context) and postToolUse (added after the tool's result), the two
events Cursor documents as taking context. Where Cursor takes none, gitmem gives it at the nearest
event that does:

* before a file is read or edited: ``beforeReadFile`` and ``preToolUse`` answer only with a
  permission (``preToolUse``'s context is undocumented; the 2026.07.23 bundle reads one, older
  Cursors do not), so they are not registered; a file's memories come with the postToolUse of
  the Read, Write or Shell call, right after the tool's output (as with Gemini CLI);
* at a prompt: ``beforeSubmitPrompt`` answers only ``continue`` / ``user_message``, so the
  prompt's memories are held and given with the turn's first postToolUse (a turn with no tool
  call never gets them; the MCP server's ``recall`` remains);
* after an edit: ``afterFileEdit`` output is ignored; it only feeds capture.

The 10,000-character cap is an ASSUMPTION (Claude Code's; Cursor documents none). Bad input (not
JSON, not an object, an unknown event, a folder outside any repository, a repository without
``.gitmem/``) prints nothing. Errors go to ``<logs>/cursor-hooks.log`` (redacted).

Cursor also runs the hooks of ``.claude/settings.json`` (its "third-party hooks"); the Claude
adapter steps aside there when gitmem's Cursor hooks are installed (``cursor_hooks_installed``),
so gitmem acts once per event.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import json
import os
import sys

from . import core
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

AGENT = "cursor"
#: Longest additional_context gitmem prints (assumed like Claude Code's 10,000-character cap, with room).
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under 10,000 characters)\n"
#: Events whose ``additional_context`` Cursor documents (all others print nothing, whatever happens).
PRINTING = ("sessionStart", "postToolUse")
#: The prompt event, whose context is held for the next postToolUse (``core.hold``).
PROMPT_EVENT = "beforeSubmitPrompt"
SHELL_TOOL = "Shell"
READ_TOOL = "Read"
#: Cursor's file-editing tools (``Write`` with ``old_string`` is an edit) and the keys their input may name a file by.
EDIT_TOOLS = ("Write", "Edit", "StrReplace", "MultiEdit")
PATH_KEYS = ("file_path", "path", "target_file")
TOOL_KINDS = {READ_TOOL: "read", SHELL_TOOL: "shell", "Grep": "search", "Glob": "search"}
#: Longest tool output kept in the spool (a file's text is in git; the output is for the summary).
RESPONSE_CHARS = 300
#: What this adapter's hooks run (``cursor_install`` writes it; ``cursor_hooks_installed`` looks for it).
HOOK_COMMAND = "gitmem-cursor-hook"
HOOKS_FILE = os.path.join(".cursor", "hooks.json")

USAGE = """usage: gitmem-cursor-hook [EVENT] < event.json

Cursor hook handler of gitmem: reads one hook event (JSON) on stdin and prints
{"additional_context": ...} for sessionStart and postToolUse, nothing otherwise (never a
denial). Always exits 0. Registered by `gitmem install cursor`.
"""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: object) -> dict[str, Any]:
    """A tool input as an object (Cursor sends some as a JSON string)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def cursor_hooks_installed(cwd: str, env: dict[str, str] | None = None) -> bool:
    """Whether this process is a hook Cursor runs (it sets ``CURSOR_VERSION``; it also runs
    ``.claude/settings.json``'s hooks) with gitmem's Cursor hooks in the project's (``cwd``, else this
    process's folder) or the user's ``.cursor/hooks.json``: then those act, and the Claude Code hooks
    step aside, so gitmem acts once per event. Never raises."""
    e = os.environ if env is None else env
    if not e.get("CURSOR_VERSION"):
        return False
    for base in (cwd or os.getcwd(), e.get("HOME") or os.path.expanduser("~")):
        try:
            with open(os.path.join(base, HOOKS_FILE), encoding="utf-8") as f:
                if HOOK_COMMAND in f.read():
                    return True
        except (OSError, ValueError):
            continue
    return False


def tool_path(ti: dict[str, Any]) -> str:
    """The file a tool input names ("" for none)."""
    return next((v for k in PATH_KEYS if isinstance(v := ti.get(k), str) and v), "")


def response_summary(tool: str, out: Any) -> Any:
    """What capture keeps of Cursor's ``tool_output`` for ``tool`` (unredacted; JSON-like)."""
    text = out if isinstance(out, str) else json.dumps(out) if out is not None else ""
    if tool == SHELL_TOOL:
        return {"stdout": text}
    if tool == READ_TOOL:
        return {"chars": len(text)} if text else None
    return {"output": text[:RESPONSE_CHARS]} if text else None


def _post_tool(raw: dict[str, Any], common: dict[str, Any], failed: bool) -> Event | list[Event] | None:
    tool = _str(raw.get("tool_name"))
    ti = _obj(raw.get("tool_input"))
    path = tool_path(ti)
    cwd = common["cwd"]
    fields: dict[str, Any] = {"tool": tool, "tool_use_id": _str(raw.get("tool_use_id")), **common}
    if tool in EDIT_TOOLS and path:
        old = _str(ti.get("old_string"))
        kind = "edit" if old else "write"
        if failed:
            return AfterToolFailure(error=_str(raw.get("error_message"))[:500], kind=kind,
                                    input={"file_path": path}, response=None, path_keys=("file_path",),
                                    **{**fields, "paths": (path,)})
        # captured from afterFileEdit (its documented edits); here only the file's memories, after the tool
        new = _str(ti.get("new_string")) or None
        return BeforeFile(kind=kind, path=path, old_text=new if kind == "edit" else None,
                          **{**common, "paths": (path,)})
    if tool == READ_TOOL and path:
        inp: dict[str, Any] = {"file_path": path, **{k: ti[k] for k in ("offset", "limit") if k in ti}}
        fields.update(kind="read", input=inp, path_keys=("file_path",), paths=(path,))
        if failed:
            return AfterToolFailure(error=_str(raw.get("error_message"))[:500], response=None, **fields)
        return [AfterTool(response=response_summary(tool, raw.get("tool_output")), **fields),
                BeforeFile(kind="read", path=path, **{**common, "paths": (path,)})]
    if tool == SHELL_TOOL:
        line = _str(ti.get("command"))
        fields.update(kind="shell", input={"command": line})
        if failed:
            return AfterToolFailure(error=_str(raw.get("error_message"))[:500], response=None, **fields)
        where = _str(ti.get("working_directory")) or _str(ti.get("cwd")) or cwd
        files = read_files(line, where)
        files = [f if os.path.isabs(f) or not where else os.path.join(where, f) for f in files]
        # no context before a tool: the command's rules and traps come with its output (the nearest event)
        return [AfterTool(response=response_summary(tool, raw.get("tool_output")), **fields),
                BeforeShell(command=line, **{**common, "cwd": where}),
                *(BeforeFile(kind="read", path=f, **{**common, "paths": (f,)}) for f in files)]
    fields.update(kind=TOOL_KINDS.get(tool, "other"), input=ti)
    if failed:
        return AfterToolFailure(error=_str(raw.get("error_message"))[:500], response=None, **fields)
    return AfterTool(response=response_summary(tool, raw.get("tool_output")), **fields)


def _file_edit(raw: dict[str, Any], common: dict[str, Any]) -> Event | None:
    path = _str(raw.get("file_path"))
    if not path:
        return None
    edits = raw.get("edits")
    first = edits[0] if isinstance(edits, list) and edits and isinstance(edits[0], dict) else {}
    old, new = _str(first.get("old_string")), _str(first.get("new_string"))
    inp = {"file_path": path, "old_string": old, "new_string": new} if old else {"file_path": path, "content": new}
    return AfterTool(tool="afterFileEdit", kind="edit" if old else "write", tool_use_id="", input=inp, response=None,
                     path_keys=("file_path",), content_key="" if old else "content", **{**common, "paths": (path,)})


def to_event(raw: Any, argv_event: str | None = None) -> Event | list[Event] | None:
    """The normalised event(s) of Cursor hook input ``raw`` (decoded JSON): a list for a tool call whose output
    gets files' memories (the capture first, then one ``BeforeFile`` per file); None when gitmem has nothing to
    do with it."""
    if not isinstance(raw, dict):
        return None
    name = raw.get("hook_event_name")
    name = name if isinstance(name, str) else argv_event
    roots = raw.get("workspace_roots")
    cwd = _str(roots[0]) if isinstance(roots, list) and roots else ""
    session = _str(raw.get("conversation_id")) or _str(raw.get("session_id"))
    common: dict[str, Any] = {"agent": AGENT, "name": name or "", "session_id": session, "cwd": cwd, "raw": raw}
    if name == "sessionStart":
        return SessionStart(source="startup", **common)
    if name == PROMPT_EVENT:
        return Prompt(prompt=_str(raw.get("prompt")), **common)
    if name in ("postToolUse", "postToolUseFailure"):
        return _post_tool(raw, common, name == "postToolUseFailure")
    if name == "afterFileEdit":
        return _file_edit(raw, common)
    if name == "afterAgentResponse":
        return Stop(last_message=_str(raw.get("text")), **common)
    if name == "stop":
        return Stop(last_message="", consolidate=True, **common)
    if name == "sessionEnd":
        return SessionEnd(reason=_str(raw.get("reason")), **common)
    if name == "preCompact":
        return BeforeCompact(trigger=_str(raw.get("trigger")), **common)
    return None


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: the prompt's text is held for the next postToolUse
    (``core.hold``), which prints it before its own; None for the events that print nothing."""
    if event.name in (PROMPT_EVENT, "postToolUseFailure"):
        core.hold(event, text)  # its prompt hook takes no context; nor (undocumented) its failure hook
        return None
    if event.name not in PRINTING:
        return None
    if event.name == "postToolUse":
        held = core.take_held(event)
        text = "\n\n".join(t for t in (held, (text or "").strip()) if t) or None
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    return None if text is None else {"additional_context": text}


def main(argv: list[str] | None = None) -> int:
    """``gitmem-cursor-hook [EVENT]``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output)


if __name__ == "__main__":
    sys.exit(main())
