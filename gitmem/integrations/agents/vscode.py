"""VS Code's agent mode running gitmem's hooks: its hook input → ``events``, the core's answer → its output.

VS Code (agent hooks, Preview since 1.110; GitHub Copilot Chat's local agent) runs the hooks of
Claude Code's settings files (``.claude/settings.json``, ``.claude/settings.local.json``,
``~/.claude/settings.json``; also ``.github/hooks/*.json``, so gitmem's Copilot CLI hooks too),
ignoring their matchers. It has no entry point of its own here: ``claude.to_event`` (and
``copilot.to_event``) hand it VS Code's input (``is_vscode``). Sources: the docs
(code.visualstudio.com/docs/agent-customization/hooks and …/agents/reference/hooks-reference, 2026)
and the code that builds the input and reads the output: microsoft/vscode-copilot-chat 0.42.0
(31acd00a, 2026-03-29: ``chatHookService.ts``, ``toolCalling.tsx``, ``hookExecutor.ts``,
``toolNames.ts``, ``package.json``'s tool schemas) and microsoft/vscode's ``hookClaudeCompat.ts``;
examples in ``tests/fixtures/vscode/``.

In: ``hook_event_name``, ``session_id``, ``transcript_path`` (``hookEventName``, ``sessionId``
from 10 to 25 February 2026 and in the docs), ``timestamp`` (an ISO string), ``cwd`` (the
workspace folder); the tool's input keys are camelCase and its names VS Code's:

====================  =================================================================
SessionStart          ``SessionStart`` (``source``: ``new`` → startup); it fires with the
                      first prompt of a session
UserPromptSubmit      ``Prompt`` (``prompt``)
PreToolUse            ``read_file`` → ``BeforeFile`` read; ``replace_string_in_file`` → edit
                      (``oldString``); ``multi_replace_string_in_file`` → one edit per
                      replacement's file; ``insert_edit_into_file``, ``edit_notebook_file``,
                      ``editFiles`` (``files``) → edit; ``create_file`` → write;
                      ``apply_patch`` (``input``: a patch, ``patches``) → one edit or write
                      per file; ``run_in_terminal`` → ``BeforeShell``, then one read per
                      file its command reads (``shell_reads``); the same
                      tools' contributed ids (``copilot_readFile`` …) and reference names
                      (``readFile`` …) too; a path is absolute, relative to ``cwd`` or a
                      ``file://`` URI; any other tool: nothing
PostToolUse           ``AfterTool`` (VS Code runs it only after a tool succeeded), one per file
                      of a multi-file edit, with Claude-style input keys (``file_path``,
                      ``old_string``, ``new_string``, ``content``); ``tool_response`` is the
                      tool's text result
Stop                  ``Stop`` with ``consolidate``: VS Code runs no SessionEnd hook (0.42.0
                      never executes one), so each turn's spool is consolidated from Stop
====================  =================================================================

Out: ``{"hookSpecificOutput": {"hookEventName": <event>, "additionalContext": <text>}}`` (the
same as Claude Code's; VS Code drops a ``hookSpecificOutput`` whose ``hookEventName`` is not the
event's) for SessionStart (added to the conversation), UserPromptSubmit (added to the
request; the docs say "common output only", the code reads it) and PreToolUse (appended to the
tool's result as ``<PreToolUse-context>``); nothing for PostToolUse and Stop (Stop takes no
context). VS Code documents no size cap; gitmem keeps Claude Code's (``CONTEXT_CHAR_LIMIT``).
VS Code's transcript is not reconciled (``reconcile`` has no reader for it). Errors go to
``<logs>/vscode-hooks.log``.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import os

from . import core
from .events import AfterTool, BeforeFile, BeforeShell, Event, Prompt, SessionStart, Stop

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "vscode"
#: VS Code documents no cap; Claude Code's (``claude.MAX_CONTEXT_CHARS``) with the same room.
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under 10,000 characters)\n"
#: Events whose answer gitmem gives VS Code (PostToolUse could take context; gitmem gives none there).
PRINTING = ("SessionStart", "UserPromptSubmit", "PreToolUse")


def _names(*names: str) -> frozenset[str]:
    return frozenset(names)


#: Each tool under its three names: the model's (``toolNames.ts`` ``ToolName``), the contributed id
#: (``ContributedToolName``) and the reference name (``package.json``'s ``toolReferenceName``; the docs').
READ = _names("read_file", "copilot_readFile", "readFile")
REPLACE = _names("replace_string_in_file", "copilot_replaceString", "replaceString", "replaceStringInFile")
MULTI_REPLACE = _names("multi_replace_string_in_file", "copilot_multiReplaceString", "multiReplaceString")
INSERT = _names("insert_edit_into_file", "copilot_insertEdit", "insertEdit")
NOTEBOOK = _names("edit_notebook_file", "copilot_editNotebook", "editNotebook")
EDIT_FILES = _names("editFiles", "edit_files", "copilot_editFiles")
CREATE = _names("create_file", "copilot_createFile", "createFile")
PATCH = _names("apply_patch", "copilot_applyPatch", "applyPatch")
SHELL = _names("run_in_terminal", "runInTerminal", "runTerminalCommand")
SEARCH = _names("grep_search", "file_search", "semantic_search", "copilot_findTextInFiles", "copilot_findFiles",
                "copilot_searchCodebase", "textSearch", "fileSearch", "codebase", "list_dir", "copilot_listDirectory",
                "listDirectory")
FILE_TOOLS = READ | REPLACE | MULTI_REPLACE | INSERT | NOTEBOOK | EDIT_FILES | CREATE | PATCH
#: gitmem's Claude Code handler command starts with this (``claude_install.MARKER``).
CLAUDE_HOOK_MARKER = ": gitmem-hook;"
#: Claude Code settings files VS Code reads hooks from (``chat.hookFilesLocations``' defaults).
CLAUDE_SETTINGS = (os.path.join(".claude", "settings.json"), os.path.join(".claude", "settings.local.json"))


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def is_vscode(raw: Any) -> bool:
    """Whether hook input ``raw`` is VS Code's: ``hookEventName`` (VS Code only), or an event name with an ISO
    ``timestamp`` (Claude Code sends none; Copilot CLI a number; Gemini CLI's input has one too, but reaches only
    its own entry point), or one of VS Code's tool names."""
    if not isinstance(raw, dict):
        return False
    if "hookEventName" in raw:
        return True
    if "hook_event_name" in raw and isinstance(raw.get("timestamp"), str):
        return True
    tool = raw.get("tool_name")
    return isinstance(tool, str) and (tool in FILE_TOOLS or tool in SHELL)


def claude_hooks_installed(cwd: str, home: str | None = None) -> bool:
    """Whether gitmem's Claude Code hooks are in a settings file VS Code reads (the project's ``.claude/`` under
    ``cwd``, or ``~/.claude/settings.json``): then VS Code runs them, and gitmem's Copilot CLI hooks (which
    VS Code runs too, from ``.github/hooks/``) step aside, so gitmem acts once per event."""
    home = home if home is not None else os.path.expanduser("~")
    files = [os.path.join(cwd, f) for f in CLAUDE_SETTINGS] if cwd else []
    files.append(os.path.join(home, CLAUDE_SETTINGS[0]))
    for f in files:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                if CLAUDE_HOOK_MARKER in fh.read():
                    return True
        except OSError:
            continue
    return False


def file_path(value: object) -> str:
    """A path as VS Code's tools take it: absolute, relative, or a ``file://`` URI (→ its path); "" if none."""
    p = _str(value).strip()
    if p.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        p = unquote(urlsplit(p).path)
        if len(p) > 2 and p[0] == "/" and p[2] == ":":  # file:///c:/… on Windows
            p = p[1:]
    return p


class FileOp:
    """What a tool call does to one file: ``kind`` (read, edit, write), ``path``, and for capture the
    Claude-style ``input`` (``file_path``, ``old_string``, ``new_string``, ``content``)."""

    __slots__ = ("kind", "path", "old", "input")

    def __init__(self, kind: str, path: str, old: str | None = None, inp: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.path = path
        self.old = old
        self.input = {"file_path": path, **(inp or {})}


def file_ops(tool: str, ti: dict[str, Any]) -> list[FileOp]:
    """The files a VS Code file tool's input ``ti`` reads or changes, in order ([] for another tool or no path)."""
    if tool in MULTI_REPLACE:
        ops = []
        for r in ti.get("replacements") or []:
            if isinstance(r, dict) and (p := file_path(r.get("filePath"))):
                old, new = _str(r.get("oldString")), _str(r.get("newString"))
                ops.append(FileOp("edit", p, old or None, {"old_string": old, "new_string": new}))
        return ops
    if tool in EDIT_FILES:
        files = ti.get("files")
        return [FileOp("edit", p) for f in (files if isinstance(files, list) else []) if (p := file_path(f))]
    if tool in PATCH:
        from .patches import joined, parse_patch

        ops = []
        for pf in parse_patch(_str(ti.get("input")) or _str(ti.get("patch"))):
            path = file_path(pf.move_to or pf.path)
            if pf.action == "add":
                ops.append(FileOp("write", path, None, {"content": joined(pf.new)}))
                continue
            before = joined(pf.old) if pf.old else None
            inp: dict[str, Any] = {"old_string": before or "", "new_string": joined(pf.new)}
            if pf.move_to:
                inp["moved_from"] = file_path(pf.path)
            if pf.action == "delete":
                inp["deleted"] = True
            ops.append(FileOp("edit", path, before if pf.action == "update" else None, inp))
        return ops
    path = file_path(ti.get("filePath") or ti.get("path"))
    if not path or tool not in FILE_TOOLS:
        return []
    if tool in READ:
        return [FileOp("read", path)]
    if tool in CREATE:
        return [FileOp("write", path, None, {"content": _str(ti.get("content"))})]
    if tool in REPLACE:
        old = _str(ti.get("oldString"))
        return [FileOp("edit", path, old or None, {"old_string": old, "new_string": _str(ti.get("newString"))})]
    if tool in INSERT:
        return [FileOp("edit", path, None, {"new_string": _str(ti.get("code"))})]
    return [FileOp("edit", path)]  # a notebook edit


def _kind(tool: str) -> str:
    if tool in SHELL:
        return "shell"
    return "search" if tool in SEARCH else "other"


def to_event(raw: Any, argv_event: str | None = None) -> Event | list[Event] | None:
    """The normalised event(s) of VS Code hook input ``raw`` (decoded JSON): a list when one tool call touches
    several files; None when gitmem has nothing to do with it. The event is the input's (``argv_event`` when
    it names none)."""
    if not isinstance(raw, dict):
        return None
    name = _str(raw.get("hook_event_name")) or _str(raw.get("hookEventName")) or argv_event or ""
    cwd = _str(raw.get("cwd"))
    common: dict[str, Any] = {"agent": AGENT, "name": name, "cwd": cwd, "raw": raw,
                              "session_id": _str(raw.get("session_id")) or _str(raw.get("sessionId")),
                              "transcript": _str(raw.get("transcript_path")) or _str(raw.get("transcriptPath"))}
    if name == "SessionStart":
        source = _str(raw.get("source"))
        return SessionStart(source="startup" if source in ("new", "") else source, **common)
    if name == "UserPromptSubmit":
        return Prompt(prompt=_str(raw.get("prompt")), **common)
    if name == "Stop":
        return Stop(last_message="", consolidate=True, **common)
    if name not in ("PreToolUse", "PostToolUse"):
        return None
    tool = _str(raw.get("tool_name"))
    ti = raw.get("tool_input")
    ti = ti if isinstance(ti, dict) else {}
    ops = file_ops(tool, ti)
    if name == "PreToolUse":
        if ops:
            return [BeforeFile(kind=op.kind, path=op.path, old_text=op.old, **{**common, "paths": (op.path,)})
                    for op in ops]
        if tool in SHELL:
            from .shell_reads import read_files  # shlex: only for a terminal command

            line = _str(ti.get("command"))
            files = read_files(line, cwd)  # the command's rules and traps first, then the files it reads
            shell = BeforeShell(command=line, **common)
            reads = [BeforeFile(kind="read", path=f, **{**common, "paths": (f,)}) for f in files]
            return [shell, *reads] if reads else shell
        return None
    tool_use_id = _str(raw.get("tool_use_id"))
    tr = _str(raw.get("tool_response"))
    if ops:
        response = None if ops[0].kind == "read" else {"output": tr[:300]}  # never a file's content
        return [AfterTool(tool=tool, kind=op.kind, input=op.input, response=response,
                          tool_use_id=f"{tool_use_id}:{i}" if tool_use_id and len(ops) > 1 else tool_use_id,
                          path_keys=("file_path", "moved_from"), content_key="content" if op.kind == "write" else "",
                          **{**common, "paths": (op.path,)})
                for i, op in enumerate(ops)]
    if tool in SHELL:
        return AfterTool(tool=tool, kind="shell", input={"command": _str(ti.get("command"))}, response={"stdout": tr},
                         tool_use_id=tool_use_id, **common)
    return AfterTool(tool=tool, kind=_kind(tool), input=ti, response={"output": tr[:300]}, tool_use_id=tool_use_id,
                     **common)


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: the ``hookSpecificOutput`` VS Code reads, cut under
    ``CONTEXT_CHAR_LIMIT``; None for no text and for the events that take none."""
    if event.name not in PRINTING:
        return None
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}}
